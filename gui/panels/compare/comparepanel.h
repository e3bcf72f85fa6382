#pragma once

#include "compare/verdict.h"
#include "workbench/runhistory.h"

#include <QStringList>
#include <QWidget>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QTableWidget;
class QTabWidget;

namespace Kp {

class Workbench;

class DistributionChart;

/**
 * Two runs of the history side by side: the verdict on B against A
 * (engine/compare/verdict.h, nvbench's robust comparison, the rule in the
 * verdict's tooltip), both sample distributions overlaid, the diff of their
 * sources and compile options, and their kernels' registers, spills and
 * shared memory. GUI thread only.
 */
class ComparePanel : public QWidget
{
    Q_OBJECT
public:
    /** model is not owned and must outlive the panel. */
    explicit ComparePanel(RunHistoryModel *model, QWidget *parent = nullptr);
    /** The dock's panel: compares runs of wb's history, and the pairs asked for elsewhere (Results). */
    ComparePanel(Workbench &wb, QWidget *parent = nullptr);

    /** Compares the runs in these model rows: a the baseline, b the candidate (invokable: the shell calls it by name).
     */
    Q_INVOKABLE void compareRows(int a, int b);

    /** "FASTER: B is 1.18x as fast as A" and the like; empty with no pair chosen. */
    QString verdictText() const;
    Comparison comparison() const { return m_comparison; }
    /** The source diff as unified-diff text; empty when the sources are the same. */
    QString sourceDiff() const { return m_sourceDiff; }
    /** Lines of the compile options that differ ("- -DN=16", "+ -DN=32"). */
    QStringList optionDiff() const { return m_optionDiff; }
    /** One line per kernel: "name: registers 32 -> 40, spills 0 -> 8 B, shared 0 -> 4096 B". */
    QStringList resourceLines() const { return m_resourceLines; }
    QTableWidget *resourcesTable() const { return m_resources; }
    DistributionChart *distributionChart() const { return m_chart; }
    QComboBox *baselineChooser() const { return m_a; }
    QComboBox *candidateChooser() const { return m_b; }
    QLabel *verdictLabel() const { return m_verdict; }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void refillChoosers();
    void update();
    /** Shows text beside the verdict, cut to the label's width (the whole text in its tooltip when cut). */
    void setReason(const QString &text);
    void fitReason();

    RunHistoryModel *m_model;
    QComboBox *m_a = nullptr;
    QComboBox *m_b = nullptr;
    QLabel *m_verdict = nullptr;
    QLabel *m_reason = nullptr;
    QString m_reasonText; ///< what m_reason shows, whole
    QTabWidget *m_tabs = nullptr;
    DistributionChart *m_chart = nullptr;
    QPlainTextEdit *m_diff = nullptr;
    QTableWidget *m_resources = nullptr;
    Comparison m_comparison;
    bool m_compared = false;
    QString m_sourceDiff;
    QStringList m_optionDiff;
    QStringList m_resourceLines;
    bool m_filling = false;
    bool m_chosen = false; ///< the user (or compareRows) picked A and B; until then the last two runs
};

} // namespace Kp
