#pragma once

#include "compile/compiletypes.h"
#include "core/result.h"
#include "project/project.h"
#include "run/runner.h"
#include "workbench/memorycheck.h"
#include "workbench/workbench.h"

#include <QMainWindow>
#include <QString>

class QAction;
class QDialog;
class QMenu;
class QPlainTextEdit;
class QTableWidget;
class QTreeWidget;
class QVBoxLayout;

namespace Kp {

class BufferInspector;
class BuffersPanel;
class CheckRunner;
class ChecksPanel;
class CodeEditor;
class CompileController;
class DescriptionView;
class Docks;
class EngineClient;
class FindBar;
class LaunchPanel;
class MemoryPanel;
class ProjectDocument;
class PtxView;
class RunController;
class StartPage;
class StatusLine;
class SweepPanel;

/**
 * The shell: the editor in the middle, the docks of the dock table around it
 * (shell/docks), the menus (shell/menus.cpp), the file actions
 * (shell/fileactions.cpp) and the status bar (shell/statusbar). Everything a
 * run, a compile or a check changes is the panels' business through the
 * Workbench; the window only builds and navigates (the editor's lines, the
 * docks' raise policy). The getters serve the tests and the command line's
 * screenshot mode (shell/main.cpp). GUI thread only.
 */
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    /** engine is GPU 0's worker, not owned, and must outlive the window. */
    explicit MainWindow(EngineClient *engine, QWidget *parent = nullptr);
    ~MainWindow() override;

    Workbench &workbench() { return *m_wb; }
    ProjectDocument *document() const { return &m_wb->document(); }
    CompileController *compileController() const { return &m_wb->compile(); }
    RunController *runController() const { return &m_wb->runs(); }
    CheckRunner *checkRunner() const { return &m_wb->checks(); }
    CodeEditor *editor() const { return m_editor; }
    /** The find bar below the editor, made at the first call. */
    FindBar *findBar();
    /** The start page: the central widget while no project is open. */
    StartPage *startPage() const { return m_startPage; }
    Docks &docks() const { return *m_docks; }

    // The panels of the dock table.
    SweepPanel *sweepPanel() const;
    MemoryPanel *memoryPanel() const;
    LaunchPanel *launchPanel() const;
    ChecksPanel *checksPanel() const;
    DescriptionView *descriptionView() const;
    BufferInspector *inspector() const;
    BuffersPanel *buffersPanel() const;
    QPlainTextEdit *logView() const;
    PtxView *ptxView() const;
    PtxView *sassView() const;
    QTreeWidget *problems() const;
    QTableWidget *kernelsTable() const;

    /**
     * Loads a kernel source or, for a .kpg path, a whole project (a file or a
     * ":/presets/..." resource). A plain .cu gets a project with no buffers
     * and no launch steps yet.
     */
    Status openSource(const QString &path);
    /** Loads a .kpg project: source, buffers, launch steps, timing. */
    Status openProject(const QString &path);
    /** Saves the project (and its .cu) to path; the project then lives there. Overwrites without asking. */
    Status saveProjectTo(const QString &path);
    const Project &project() const;
    bool isProjectModified() const;
    /** Where File > Open starts: the project's folder, else the last folder opened from or saved to. */
    QString openDialogFolder() const;
    /** File > New from Preset: the gallery in a dialog; opens the chosen preset. */
    void newFromPreset();

    /** Runs the project's launch steps now (Ctrl+Enter); the result lands in the Results panel. */
    void runNow();
    /** Stops the run in flight (Esc). */
    void abortRun();
    /** Build > Check Memory: the project once under compute-sanitizer with tool (memorycheck.h). */
    void checkMemory(Sanitizer::Tool tool, bool hazards = false);
    bool isRunning() const;
    HostBuffers &hostBuffers();
    const QList<RunResult> &runs() const;

    /**
     * Shows a buffer in the inspector, in view "grid", "image" or "diff"
     * (against its contents before the last run), and brings the inspector
     * forward.
     */
    void inspectBuffer(const QString &name, const QString &view = QStringLiteral("grid"));
    /** Moves the pointer over pixel (x, y) of the image view, as a hover would (screenshots, tests). */
    void hoverPixel(int x, int y);

    /** The GPU runs go to (0 = the first); each GPU gets its own worker. */
    int deviceOrdinal() const;
    void setDeviceOrdinal(int ordinal);
    /** Asks the worker for the GPU; the status line says what it found. */
    void refreshDeviceStatus();
    /** True once the device status is known (found, or why not). */
    bool deviceStatusKnown() const;
    QString deviceStatusText() const;

    /** Compiles the editor's text now (typing schedules this after a pause). */
    void compileNow();
    /** The result for the editor's current text, once it has arrived. */
    const CompileResult &lastCompile() const;

    /** Every menu action with its keys, for Help > Keyboard Shortcuts. */
    QList<QPair<QString, QString>> shortcutList() const;
    /** The About box's text: the program's, Qt's, NVRTC's and the driver's versions. */
    QString aboutText() const;
    /** The documentation's README: the installed copy, else the source tree's; empty when none is found. */
    static QString documentationPath();
    /** Where documentationPath() looks, in order. */
    static QStringList documentationCandidates();
    /** What Help > Documentation says when no README is found: where it looked. */
    static QString documentationMissingText();
    /** The shortcut list while it is shown (tests). */
    QDialog *shortcutsDialog() const { return m_shortcutsDialog; }

    /** Pause after the last keystroke before compiling. */
    static constexpr int kCompileDelayMs = 250;

Q_SIGNALS:
    /**
     * Once, after the editor's first paint has reached the screen (or in the
     * event loop's first turn for a window not shown): the panels, NVRTC's
     * opening and the first compile wait for it, so the window paints
     * without them (docs/ARCHITECTURE.md, "Start").
     */
    void firstPainted();
    void deviceStatusChanged();
    /** A compile of the current text finished and is shown, and the launch revalidated against it. */
    void compileFinished();
    /** The SASS view was filled (or says why it cannot be). */
    void sassFinished();
    /** A run finished (its result is the last of runs()), or failed before reaching the GPU; panels show it. */
    void runFinished();
    /** After a Run: its checks are judged, or it has none, or it failed (screenshots wait for this). */
    void checksSettled();
    /** A Check Memory finished and its findings are shown. */
    void memoryCheckFinished();
    /** The project changed (an edit in a panel was accepted, undone or redone). */
    void projectChanged();

protected:
    void closeEvent(QCloseEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;
    void showEvent(QShowEvent *event) override;

private:
    /** The editor with its find bar, in a stack with the start page until a project is open. */
    void buildCentral();
    /** The editor follows the workbench: its text, diagnostics, and the lines navigation asks for. */
    void followWorkbench();
    void buildMenus();
    /** Sizes the first window to the screen it opens on. */
    void fitToScreen();
    /** Brings a restored geometry saved on a larger screen back onto this one. */
    void keepOnScreen();
    /** Resizes and moves the window to g (the frame to its corner), unless it is there. */
    void place(const QRect &g);
    /** Moves the window, at its size, inside the screen where it fits (else its top-left corner onto it). */
    void moveOnScreen();
    /** Gives the side and bottom docks their share of the shown window (unless a saved layout was restored). */
    void sizeDocks();
    /** The start's second half, at the first paint: see firstPainted(). */
    void settleStart();
    /** Asks Save/Discard/Cancel when there are unsaved changes; false when the user cancelled. */
    bool maybeSave(const QString &title);
    void showShortcuts();
    void goToLine();
    void openFileDialog();
    void saveProject();
    void saveProjectAs();
    /** Asks before a Save As would overwrite another project's kernel; false when the user declined. */
    bool confirmSourceOverwrite(const QString &kpgPath);
    void newProject();
    void rebuildRecentMenu();
    void updateTitle();
    /** Keeps the editor's text and the document in step when another project is loaded. */
    void takeSourceFromDocument();

    Workbench *m_wb = nullptr;
    Docks *m_docks = nullptr;
    StatusLine *m_status = nullptr;
    CodeEditor *m_editor = nullptr;
    FindBar *m_findBar = nullptr;
    bool m_settled = false;                ///< settleStart() ran: the first paint is done
    QVBoxLayout *m_editorLayout = nullptr; ///< the editor, then the find bar
    StartPage *m_startPage = nullptr;
    QMenu *m_recentMenu = nullptr;
    bool m_docksSized = false;
    bool m_placed = false; ///< shown once and brought inside the screen
    bool m_restoredLayout = false;
    QDialog *m_shortcutsDialog = nullptr;
    /** Actions whose keys the editor must not take as typing (zoom, find, go to line, redo). */
};

} // namespace Kp
