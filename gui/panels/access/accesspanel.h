#pragma once

#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
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
 * buffer in that launch (also what the Inspector's "Who touched this cell?"
 * asks for, through Workbench::requestTouches). The step chooser lists the
 * project's launch steps (only kernel steps can be recorded) and follows the
 * Launch panel's selected step; "Show in editor" turns the editor's heat
 * margin on and off. It shows the AccessMap's current report. GUI thread
 * only.
 */
class AccessPanel : public QWidget
{
    Q_OBJECT
public:
    explicit AccessPanel(Workbench &workbench, QWidget *parent = nullptr);
    ~AccessPanel() override;

    /** Shows a report (the AccessMap's current one; tests call it with a recorded one). */
    void showReport(std::shared_ptr<const AccessReport> report);

    /** The launch step (0-based) Analyze records: the chooser's; -1 when the project has no kernel step. */
    int chosenStep() const;
    /** Lists the threads that touched element of buffer in the current report (Workbench::requestTouches). */
    void showTouches(const QString &buffer, qint64 element);

private:
    void analyze();
    void finished(const AccessOutcome &outcome);
    void refreshControls();
    void refreshSteps();
    void chooseStep(int step);
    void findTouches();
    /** Selects the rows of source line and comes forward (a click on the editor's heat margin). */
    void showLine(int line);

    Workbench *m_wb;
    std::shared_ptr<const AccessReport> m_report;
    QComboBox *m_step = nullptr;
    QPushButton *m_analyze = nullptr;
    QCheckBox *m_inEditor = nullptr;
    QLabel *m_summary = nullptr;
    QTableWidget *m_table = nullptr;
    QComboBox *m_buffer = nullptr;
    QLineEdit *m_element = nullptr;
    QPushButton *m_find = nullptr;
    QTreeWidget *m_touches = nullptr;
};

} // namespace Kp
