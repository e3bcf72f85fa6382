#pragma once

#include "compile/compiletypes.h"
#include "core/result.h"

#include <QMainWindow>
#include <QString>

class QLabel;
class QTableWidget;
class QTimer;
class QTreeWidget;

namespace Kp {

class CodeEditor;
class CompileService;
class EngineClient;
class PtxView;

/** The main window: the kernel editor and the machine's status. GUI thread only. */
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    /** engine is not owned and must outlive the window. */
    explicit MainWindow(EngineClient *engine, QWidget *parent = nullptr);
    ~MainWindow() override;

    CodeEditor *editor() const { return m_editor; }

    /** Loads a kernel source (a file path or a ":/presets/..." resource). */
    Status openSource(const QString &path);

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

private:
    void openFileDialog();
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
    bool m_deviceStatusKnown = false;
    int m_ccMajor = 0;
    int m_ccMinor = 0;
};

} // namespace Kp
