#pragma once

#include <QObject>

class QComboBox;
class QLabel;
class QStatusBar;
class QToolButton;
class QWidget;

namespace Kp {

class Devices;

/**
 * The GPU part of the status bar, a view of the Workbench's Devices: the
 * target chooser (this machine, the recent remote targets, "Add Target…"),
 * what the worker found (or why it found nothing: compile-only mode), with
 * the devices query's time and a remote target's round trip in the tooltip,
 * and, with more than one GPU, a chooser of the GPU runs go to. GUI thread
 * only.
 */
class DeviceStatus : public QObject
{
    Q_OBJECT
public:
    /** Adds its widgets to bar. devices is not owned and must outlive this object. */
    DeviceStatus(Devices &devices, QStatusBar *bar, QObject *parent = nullptr);

    QString text() const;
    QLabel *label() const { return m_label; }
    QComboBox *deviceChooser() const { return m_chooser; }
    QToolButton *targetButton() const { return m_target; }

    /** Opens the Target dialog (Settings > Target; adding: "Add Target…", an empty URL to type). */
    void showTargetDialog(bool adding = false);

private:
    void update();
    void fillTargetMenu();

    Devices &m_devices;
    QWidget *m_window = nullptr; ///< the dialog's parent
    QToolButton *m_target = nullptr;
    QLabel *m_label = nullptr;
    QComboBox *m_chooser = nullptr;
};

} // namespace Kp
