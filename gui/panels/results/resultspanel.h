#pragma once

#include "core/result.h"
#include "workbench/runhistory.h"

#include <QList>
#include <QSize>
#include <QString>
#include <QWidget>

#include <array>

class QSortFilterProxyModel;
class QTabWidget;
class QTableView;
class QToolButton;
class QMenu;

namespace Kp {

class Workbench;

class ChartWidget;
class CompareChart;
class TimingChart;
class TimelineView;

/**
 * The run history and its charts: a sortable table of every run, and below
 * it the samples and histogram of the current run, or the comparison of the
 * selected runs. GUI thread only.
 */
class ResultsPanel : public QWidget
{
    Q_OBJECT
public:
    /** The chart tabs, in order. */
    enum class Tab {
        Samples,
        Histogram,
        Compare,
        Timeline, ///< the current run's steps on their streams (results/timelineview)
    };

    /** With a history of its own (tests, benchmarks). */
    explicit ResultsPanel(QWidget *parent = nullptr);
    /** The dock's panel: wb's run history; new runs join it, "Compare" goes to the Compare panel. */
    ResultsPanel(Workbench &wb, QWidget *parent = nullptr);
    ~ResultsPanel() override;

    /**
     * Adds a run to the history and selects it; while several runs are
     * selected it joins the selection, so a comparison grows run by run.
     */
    void addRun(RunRecord record);
    /** Selects the run just added at model row (as addRun() does after its append). */
    void showAdded(int row);
    /** Forgets every run. */
    void clearHistory();

    RunHistoryModel *model() const { return m_model; }
    QTableView *table() const { return m_table; }
    QTabWidget *chartTabs() const { return m_tabs; }
    /** The Samples tab. */
    TimingChart *timingChart() const { return m_samples; }
    /** The Histogram tab. */
    TimingChart *histogramChart() const { return m_histogram; }
    /** The Compare tab. */
    CompareChart *compareChart() const { return m_compare; }
    /** The Timeline tab. */
    TimelineView *timelineView() const { return m_timeline; }
    Tab currentTab() const;
    void setCurrentTab(Tab tab);
    /** setCurrentTab(Tab::Timeline), invokable: the shell calls it by name (shell/chartpanels.h). */
    Q_INVOKABLE void showTimeline() { setCurrentTab(Tab::Timeline); }

    /** Selects the runs in these model rows; the last one becomes the current run. */
    void selectRows(const QList<int> &rows);
    /** The selected runs' model rows, in the table's (sorted) order. */
    QList<int> selectedRows() const;

    /** Writes the whole history (RunHistoryModel::exportCsv()). */
    Status exportHistoryCsv(const QString &path) const;
    /** Writes the whole history with every sample (RunHistoryModel::exportJson()). */
    Status exportHistoryJson(const QString &path) const;
    /** Writes the chart of the current tab as PNG at size (its size on screen when empty). */
    Status exportChartPng(const QString &path, QSize size = {});
    /** Writes the chart of the current tab as SVG at size (its size on screen when empty). */
    Status exportChartSvg(const QString &path, QSize size = {});

    /** The table's context menu for these model rows: "Compare with..." (each other run) and, for two rows, "Compare #a
     * with #b". */
    QMenu *contextMenuFor(const QList<int> &rows);

Q_SIGNALS:
    /** The selected runs changed and the charts show them. */
    void selectionChanged();
    /** Compare the runs in these model rows: a the baseline, b the candidate (the Compare panel). */
    void compareRequested(int a, int b);

private:
    /** model: the history shown, not owned (a new one owned by the panel when null). */
    ResultsPanel(RunHistoryModel *model, QWidget *parent);

    enum class ExportKind {
        Csv,
        Json,
        Png,
        Svg,
    };
    void updateCharts();
    /** Draws the chart of tab if what it shows changed since it was last drawn. */
    void refreshChart(Tab tab);
    void exportWithDialog(ExportKind kind);
    ChartWidget *currentChart() const;

    RunHistoryModel *m_model = nullptr;
    QSortFilterProxyModel *m_proxy = nullptr;
    QTableView *m_table = nullptr;
    QTabWidget *m_tabs = nullptr;
    TimingChart *m_samples = nullptr;
    TimingChart *m_histogram = nullptr;
    CompareChart *m_compare = nullptr;
    TimelineView *m_timeline = nullptr;
    QToolButton *m_exportButton = nullptr;
    qsizetype m_lastSelectionSize = 0;
    /** What the charts show: selected rows, the current one, the history's size (a click signals twice). */
    QList<int> m_shownRows;
    int m_shownCurrent = -1;
    int m_shownRowCount = -1;
    bool m_selecting = false; ///< selectRows() at work: update the charts once, at its end
    std::array<bool, 4> m_stale{true, true, true,
                                true}; ///< per Tab: not drawn since the selection or the history changed
};

} // namespace Kp
