#pragma once

#include <QObject>

class QLabel;
class QProgressBar;
class QStatusBar;
class QWidget;

namespace Kp {

class CodeEditor;
class DeviceStatus;
class Workbench;

/**
 * The status bar's contents and what they follow: the GPU (DeviceStatus),
 * NVRTC's version, whether compiles are sandboxed, the cursor, compile and
 * run state, a run's progress with Abort, and Check Memory's outcome.
 * GUI thread only.
 */
class StatusLine : public QObject
{
    Q_OBJECT
public:
    StatusLine(Workbench &wb, QStatusBar *bar, CodeEditor *editor, QObject *parent = nullptr);

    DeviceStatus *device() const { return m_device; }
    /** Opens NVRTC on a pool thread and names its version (once; the window calls it after its first paint). */
    void openNvrtc();

private:
    DeviceStatus *m_device = nullptr;
    QLabel *m_compileLabel = nullptr;
    QLabel *m_nvrtcLabel = nullptr;
    bool m_nvrtcOpening = false;
    QWidget *m_busy = nullptr;          ///< shown for runs longer than half a second
    QProgressBar *m_transfer = nullptr; ///< a remote target's buffer transfer, inside m_busy
};

} // namespace Kp
