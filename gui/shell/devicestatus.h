#pragma once

#include <QObject>

class QComboBox;
class QLabel;
class QStatusBar;

namespace Kp {

class Devices;

/**
 * The GPU part of the status bar, a view of the Workbench's Devices: what the
 * worker found (or why it found nothing: compile-only mode), and, with more
 * than one GPU, a chooser of the GPU runs go to. GUI thread only.
 */
class DeviceStatus : public QObject
{
    Q_OBJECT
public:
    /** Adds its widgets to bar. devices is not owned and must outlive this object. */
    DeviceStatus(Devices &devices, QStatusBar *bar, QObject *parent = nullptr);

    QString text() const;

private:
    void update();

    Devices &m_devices;
    QLabel *m_label = nullptr;
    QComboBox *m_chooser = nullptr;
};

} // namespace Kp
