#pragma once

#include "core/result.h"

#include <QMainWindow>
#include <QString>

class QLabel;

namespace Kp {

class CodeEditor;
class EngineClient;

/** The main window: the kernel editor and the machine's status. GUI thread only. */
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    /** engine is not owned and must outlive the window. */
    explicit MainWindow(EngineClient *engine, QWidget *parent = nullptr);

    CodeEditor *editor() const { return m_editor; }

    /** Loads a kernel source (a file path or a ":/presets/..." resource). */
    Status openSource(const QString &path);

    /** Asks the worker for the GPU; the status line says what it found. */
    void refreshDeviceStatus();

    /** True once the device status is known (found, or why not). */
    bool deviceStatusKnown() const { return m_deviceStatusKnown; }
    QString deviceStatusText() const;

Q_SIGNALS:
    void deviceStatusChanged();

private:
    void openFileDialog();
    void updateTitle();

    EngineClient *m_engine;
    CodeEditor *m_editor = nullptr;
    QLabel *m_deviceLabel = nullptr;
    QLabel *m_nvrtcLabel = nullptr;
    QLabel *m_positionLabel = nullptr;
    QString m_path;
    bool m_deviceStatusKnown = false;
};

} // namespace Kp
