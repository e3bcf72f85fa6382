#pragma once

#include "compile/compiletypes.h"
#include "core/result.h"
#include "project/project.h"
#include "run/runner.h"

#include <QMainWindow>
#include <QString>
#include <QThreadPool>

#include <functional>
#include <map>
#include <memory>

class QComboBox;
class QLabel;
class QJsonObject;
class QMenu;
class QPlainTextEdit;
class QTableWidget;
class QTimer;
class QTreeWidget;

namespace Kp {

class CodeEditor;
class CompileService;
class EngineClient;
class PtxView;
class LaunchPanel;
class BuffersPanel;
class BufferInspector;
class ResultsPanel;

/** The main window: the kernel editor and the machine's status. GUI thread only. */
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    /** engine is not owned and must outlive the window. */
    explicit MainWindow(EngineClient *engine, QWidget *parent = nullptr);
    ~MainWindow() override;

    CodeEditor *editor() const { return m_editor; }

    /**
     * Loads a kernel source or, for a .kpg path, a whole project (a file or a
     * ":/presets/..." resource). A plain .cu gets a project with no buffers
     * and no launch steps yet.
     */
    Status openSource(const QString &path);
    /** Loads a .kpg project: source, buffers, launch steps, timing. */
    Status openProject(const QString &path);
    /** Saves the project (and its .cu) to path; the project then lives there. */
    Status saveProjectTo(const QString &path);
    const Project &project() const { return m_project; }
    bool isProjectModified() const;

    /** Runs the project's launch steps now (Ctrl+Enter); the result lands in the Results panel. */
    void runNow();
    /** Stops the run in flight (Esc). */
    void abortRun();
    bool isRunning() const { return m_running; }
    HostBuffers &hostBuffers() { return m_host; }
    const QList<RunResult> &runs() const { return m_runs; }

    /**
     * Shows a buffer in the inspector, in view "grid", "image" or "diff"
     * (against its contents before the last run), and brings the inspector
     * forward.
     */
    void inspectBuffer(const QString &name, const QString &view = QStringLiteral("grid"));
    /** Moves the pointer over pixel (x, y) of the image view, as a hover would (screenshots, tests). */
    void hoverPixel(int x, int y);

    /** The GPU runs go to (0 = the first); each GPU gets its own worker. */
    int deviceOrdinal() const { return m_deviceOrdinal; }
    void setDeviceOrdinal(int ordinal);

    LaunchPanel *launchPanel() const { return m_launch; }
    BuffersPanel *buffersPanel() const { return m_buffersPanel; }
    QPlainTextEdit *logView() const { return m_log; }

    /** Asks the worker for the GPU; the status line says what it found. */
    void refreshDeviceStatus();

    /** True once the device status is known (found, or why not). */
    bool deviceStatusKnown() const { return m_deviceStatusKnown; }
    QString deviceStatusText() const;

    /** Compiles the editor's text now (typing schedules this after a pause). */
    void compileNow();
    /** The result for the editor's current text, once it has arrived. */
    const CompileResult &lastCompile() const { return m_lastCompile; }
    PtxView *ptxView() const { return m_ptx; }
    PtxView *sassView() const { return m_sass; }
    QTreeWidget *problems() const { return m_problems; }
    QTableWidget *kernelsTable() const { return m_kernels; }
    /** Pause after the last keystroke before compiling. */
    static constexpr int kCompileDelayMs = 250;

Q_SIGNALS:
    void deviceStatusChanged();
    /** A compile of the current text finished and is shown. */
    void compileFinished();
    /** The SASS view was filled (or says why it cannot be). */
    void sassFinished();
    /** A run finished (its result is the last of runs()). */
    void runFinished();
    /** The project changed (an edit in a panel was accepted). */
    void projectChanged();

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void openFileDialog();
    void saveProject();
    void saveProjectAs();
    void newProject();
    void addRecent(const QString &path);
    void rebuildRecentMenu();
    /** Applies an edit to the project's JSON; the project's own validation decides. Returns the error, if any. */
    QString applyEdit(const std::function<void(QJsonObject &)> &edit);
    /** Checks the launch without running it and shows the verdict on the panels. */
    void revalidate();
    void startRun(bool play);
    void finishRun(const RunResult &result, bool play);
    void log(const QString &text);
    /** The runner for a GPU: device 0 uses the window's engine, others get their own worker. */
    Runner *runnerFor(int ordinal);
    CompileOptions editorOptions() const;
    void updateTitle();
    void showCompile(const CompileResult &result);
    void syncPtxToSelection();
    void disassemble(const CompileResult &result);
    QString sourceFileName() const;

    EngineClient *m_engine;
    CodeEditor *m_editor = nullptr;
    QLabel *m_deviceLabel = nullptr;
    QLabel *m_nvrtcLabel = nullptr;
    QLabel *m_positionLabel = nullptr;
    QLabel *m_compileLabel = nullptr;
    QTreeWidget *m_problems = nullptr;
    QTableWidget *m_kernels = nullptr;
    PtxView *m_ptx = nullptr;
    PtxView *m_sass = nullptr;
    CompileService *m_compiler = nullptr;
    QTimer *m_compileTimer = nullptr;
    CompileResult m_lastCompile;
    quint64 m_revision = 0;
    QString m_path;
    Project m_project;
    QString m_projectPath;     ///< the .kpg; empty for an unsaved project
    QByteArray m_savedProject; ///< serialized form at the last load or save, to tell unsaved changes
    HostBuffers m_host;
    Runner *m_runner = nullptr;
    std::map<int, std::unique_ptr<EngineClient>> m_deviceEngines; ///< workers for GPUs 1, 2, ...
    std::map<int, Runner *> m_deviceRunners;
    int m_deviceOrdinal = 0;
    QComboBox *m_deviceChooser = nullptr;
    LaunchPanel *m_launch = nullptr;
    BuffersPanel *m_buffersPanel = nullptr;
    BufferInspector *m_inspector = nullptr;
    ResultsPanel *m_results = nullptr;
    QPlainTextEdit *m_log = nullptr;
    QWidget *m_busy = nullptr; ///< status-bar progress, shown for runs longer than half a second
    QMenu *m_recentMenu = nullptr;
    QList<RunResult> m_runs;
    /**
     * Fills host buffers off the GUI thread. Declared after m_host, so it is
     * destroyed (and waits for a fill in progress) before the buffers are.
     */
    QThreadPool m_fillPool;
    bool m_running = false;
    bool m_playing = false;
    qint64 m_playFrames = 0;
    qint64 m_playStartMs = 0;
    bool m_deviceStatusKnown = false;
    int m_ccMajor = 0;
    int m_ccMinor = 0;
};

} // namespace Kp
