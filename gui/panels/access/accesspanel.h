#pragma once

#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTreeWidget;

namespace Kp {

class Workbench;
struct AccessOutcome;
struct AccessReport;

/**
 * The Memory Access dock (docs/memory-access.md): Analyze records one launch
 * step; the table lists each memory instruction by source line with its
 * requests, sectors per request against the ideal, shared wavefronts against
 * the ideal and a reading, costliest first; double-clicking a row goes to the
 * line. "Who touched" lists the threads that read or wrote one cell of a
 * buffer in that launch. GUI thread only.
 */
class AccessPanel : public QWidget
{
    Q_OBJECT
public:
    explicit AccessPanel(Workbench &workbench, QWidget *parent = nullptr);
    ~AccessPanel() override;

    /** Shows a report (what accessFinished brings; tests call it with a recorded one). */
    void showReport(std::shared_ptr<const AccessReport> report);

private:
    void analyze();
    void finished(const AccessOutcome &outcome);
    void refreshControls();
    void findTouches();

    Workbench *m_wb;
    std::shared_ptr<const AccessReport> m_report;
    QSpinBox *m_step = nullptr;
    QPushButton *m_analyze = nullptr;
    QLabel *m_summary = nullptr;
    QTableWidget *m_table = nullptr;
    QComboBox *m_buffer = nullptr;
    QLineEdit *m_element = nullptr;
    QPushButton *m_find = nullptr;
    QTreeWidget *m_touches = nullptr;
};

} // namespace Kp
