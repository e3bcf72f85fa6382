#pragma once

#include "memorycheck.h"

#include "compile/compiletypes.h"
#include "core/result.h"
#include "project/project.h"
#include "run/runner.h"

#include <QMainWindow>
#include <QString>

class QAction;
class QDialog;
class QDockWidget;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QTableWidget;
class QTreeWidget;

namespace Kp {

class BufferInspector;
class BuffersPanel;
class CheckRunner;
class ChecksPanel;
class DescriptionView;
class StartPage;
class CodeEditor;
class FindBar;
class CompileController;
class DeviceStatus;
class Disassembler;
class EngineClient;
class KernelsTable;
class LaunchPanel;
class LogPanel;
class MemoryPanel;
class ProblemsPanel;
class ProjectDocument;
class PtxView;
class ResultsPanel;
class SweepPanel;
class RunController;

/**
 * The main window: builds the docks and menus and wires the panels to the
 * document (ProjectDocument) and the controllers (CompileController,
 * RunController); it holds no project state of its own. GUI thread only.
 */
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    /** engine is not owned and must outlive the window. */
    explicit MainWindow(EngineClient *engine, QWidget *parent = nullptr);
    ~MainWindow() override;

    ProjectDocument *document() const { return m_doc; }
    SweepPanel *sweepPanel() const { return m_sweep; }
    CompileController *compileController() const { return m_compile; }
    RunController *runController() const { return m_run; }
    CodeEditor *editor() const { return m_editor; }

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

    /** Runs the project's launch steps now (Ctrl+Enter); the result lands in the Results panel. */
    void runNow();
    /** Stops the run in flight (Esc). */
    void abortRun();
    /** Run > Check memory: the project once under compute-sanitizer with tool (memorycheck.h). */
    void checkMemory(Sanitizer::Tool tool, bool hazards = false);
    /** Shows a memory check's findings in the editor, Problems and the Log. */
    void showMemoryCheck(const SanitizedRun &run, Sanitizer::Tool tool);
    MemoryPanel *memoryPanel() const { return m_memory; }
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

    LaunchPanel *launchPanel() const { return m_launch; }
    // Checks, presets and the description (issue 11).
    CheckRunner *checkRunner() const { return m_checkRunner; }
    ChecksPanel *checksPanel() const { return m_checks; }
    DescriptionView *descriptionView() const { return m_description; }
    /** The start page: the central widget while no project is open. */
    StartPage *startPage() const { return m_startPage; }
    BufferInspector *inspector() const { return m_inspector; }
    /** File > New from Preset: the gallery in a dialog; opens the chosen preset. */
    void newFromPreset();
    BuffersPanel *buffersPanel() const { return m_buffersPanel; }
    QPlainTextEdit *logView() const;

    /** Asks the worker for the GPU; the status line says what it found. */
    void refreshDeviceStatus();
    /** True once the device status is known (found, or why not). */
    bool deviceStatusKnown() const;
    QString deviceStatusText() const;

    /** Compiles the editor's text now (typing schedules this after a pause). */
    void compileNow();
    /** The result for the editor's current text, once it has arrived. */
    const CompileResult &lastCompile() const;
    PtxView *ptxView() const { return m_ptx; }
    PtxView *sassView() const { return m_sass; }
    QTreeWidget *problems() const;
    QTableWidget *kernelsTable() const;
    FindBar *findBar() const { return m_findBar; }
    /** Every menu action with its keys, for Help > Keyboard Shortcuts. */
    QList<QPair<QString, QString>> shortcutList() const;
    /** The About box's text: the program's, Qt's, NVRTC's and the driver's versions. */
    QString aboutText() const;
    /** The installed documentation's README, or empty. */
    static QString documentationPath();
    /** The shortcut list while it is shown (tests). */
    QDialog *shortcutsDialog() const { return m_shortcutsDialog; }

    /** The first window's size on a screen with this available geometry: at most 90 % of it, at most 1600 x 960. */
    static QSize initialSize(const QRect &available);

    /** Pause after the last keystroke before compiling. */
    static constexpr int kCompileDelayMs = 250;

Q_SIGNALS:
    void deviceStatusChanged();
    /** A compile of the current text finished and is shown, and the launch revalidated against it. */
    void compileFinished();
    /** The SASS view was filled (or says why it cannot be). */
    void sassFinished();
    /** A run finished (its result is the last of runs()), or failed before reaching the GPU. */
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
    QDockWidget *addDock(const QString &title, const QString &name, QWidget *widget, Qt::DockWidgetArea area);
    void buildMenus();
    /** Sizes the first window to the screen it opens on and gives the docks their share. */
    void fitToScreen();
    /** Gives the side and bottom docks their share of the shown window (unless a saved layout was restored). */
    void sizeDocks();
    /** Asks Save/Discard/Cancel when there are unsaved changes; false when the user cancelled. */
    bool maybeSave(const QString &title);
    void showShortcuts();
    void goToLine();
    /** The Checks and Description docks, the start page, and their wiring (issue 11). */
    void buildChecksAndPresets();
    /** The Sweep dock (gui/sweep). */
    void buildSweep();
    /** The Occupancy and Compare docks and the run history file (gui/analysis/analysisdocks.cpp). */
    void buildAnalysis();
    /** The Memory dock: guard-zone hits of each run and Check Memory's findings (gui/analysis/analysisdocks.cpp). */
    void buildMemory();
    void wireCompile();
    void wireRun();
    void openFileDialog();
    void saveProject();
    void saveProjectAs();
    /** Asks before a Save As would overwrite another project's kernel; false when the user declined. */
    bool confirmSourceOverwrite(const QString &kpgPath);
    void newProject();
    void rebuildRecentMenu();
    void updateTitle();
    void showCompile(const CompileResult &result);
    void syncPtxToSelection();
    void log(const QString &text);
    /** Keeps the editor's text and the document in step when another project is loaded or saved. */
    void takeSourceFromDocument();

    EngineClient *m_engine;
    ProjectDocument *m_doc = nullptr;
    CompileController *m_compile = nullptr;
    RunController *m_run = nullptr;
    MemoryCheck *m_memoryCheck = nullptr;
    DeviceStatus *m_device = nullptr;
    Disassembler *m_disassembler = nullptr;
    CodeEditor *m_editor = nullptr;
    ProblemsPanel *m_problems = nullptr;
    KernelsTable *m_kernels = nullptr;
    PtxView *m_ptx = nullptr;
    PtxView *m_sass = nullptr;
    LaunchPanel *m_launch = nullptr;
    BuffersPanel *m_buffersPanel = nullptr;
    BufferInspector *m_inspector = nullptr;
    ResultsPanel *m_results = nullptr;
    SweepPanel *m_sweep = nullptr;
    MemoryPanel *m_memory = nullptr;
    LogPanel *m_log = nullptr;
    QWidget *m_busy = nullptr; ///< status-bar progress, shown for runs longer than half a second
    QMenu *m_recentMenu = nullptr;
    QLabel *m_compileLabel = nullptr;
    FindBar *m_findBar = nullptr;
    bool m_docksSized = false;
    bool m_restoredLayout = false;
    QDialog *m_shortcutsDialog = nullptr;
    /** Actions whose keys the editor must not take as typing (zoom, find, go to line, redo). */
    QList<QAction *> m_editorOverrides;
    CheckRunner *m_checkRunner = nullptr;
    ChecksPanel *m_checks = nullptr;
    DescriptionView *m_description = nullptr;
    StartPage *m_startPage = nullptr;
};

} // namespace Kp
