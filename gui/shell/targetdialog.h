#pragma once

#include <QDialog>

class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;

namespace Kp {

class Devices;

/**
 * Settings > Target and the status bar's "Add Target…": where kernels run
 * (docs/remote.md). Lists this machine and the recent targets, takes a
 * target URL, tests it with the devices query `kpg devices --target URL`
 * runs (Devices::probe: a worker of its own, the window's are not touched)
 * and shows its answer or its one-message failure, and on "Use Target"
 * moves the window's workers there (Devices::setTarget). GUI thread only.
 */
class TargetDialog : public QDialog
{
    Q_OBJECT
public:
    /** devices must outlive the dialog. adding: start with an empty URL to type a new target. */
    TargetDialog(Devices &devices, QWidget *parent = nullptr, bool adding = false);

    QLineEdit *urlField() const { return m_url; }
    QListWidget *targetList() const { return m_list; }
    QPushButton *testButton() const { return m_test; }
    QPushButton *useButton() const { return m_use; }
    /** The test's answer, or why the URL is wrong. */
    QLabel *resultLabel() const { return m_result; }

    void accept() override;

Q_SIGNALS:
    /** A test's answer is shown in resultLabel(). */
    void tested();

private:
    void test();

    Devices &m_devices;
    QListWidget *m_list = nullptr;
    QLineEdit *m_url = nullptr;
    QPushButton *m_test = nullptr;
    QPushButton *m_use = nullptr;
    QLabel *m_result = nullptr;
    quint64 m_testTicket = 0; ///< a newer test (or URL) makes an older answer stale
};

} // namespace Kp
