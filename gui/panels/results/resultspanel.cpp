#include "panels/results/resultspanel.h"

#include "workbench/workbench.h"

#include "panels/results/timelineview.h"

#include "plots/comparechart.h"
#include "plots/timingchart.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace Kp {

namespace {

/** Size of charts exported from the menu: large enough to print, small enough to mail. */
constexpr QSize kExportSize(1200, 700);

} // namespace

ResultsPanel::ResultsPanel(QWidget *parent)
    : ResultsPanel(nullptr, parent)
{
}

ResultsPanel::ResultsPanel(Workbench &wb, QWidget *parent)
    : ResultsPanel(&wb.history(), parent)
{
    connect(&wb, &Workbench::historyRecord, this, [this](const RunRecord &, int row) { showAdded(row); });
    connect(this, &ResultsPanel::compareRequested, &wb, &Workbench::requestCompare);
}

ResultsPanel::ResultsPanel(RunHistoryModel *model, QWidget *parent)
    : QWidget(parent)
    , m_model(model ? model : new RunHistoryModel(this))
{
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(RunHistoryModel::SortRole);

    m_table = new QTableView;
    m_table->setObjectName(QStringLiteral("runHistory"));
    m_table->setModel(m_proxy);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(RunHistoryModel::NumberColumn, Qt::AscendingOrder);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);

    m_samples = new TimingChart;
    m_samples->setObjectName(QStringLiteral("samplesChart"));
    m_histogram = new TimingChart;
    m_histogram->setObjectName(QStringLiteral("histogramChart"));
    m_compare = new CompareChart;
    m_compare->setObjectName(QStringLiteral("compareChart"));
    m_tabs = new QTabWidget;
    m_tabs->setObjectName(QStringLiteral("chartTabs"));
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(m_samples, tr("Samples"));
    m_tabs->addTab(m_histogram, tr("Histogram"));
    m_tabs->addTab(m_compare, tr("Compare"));
    m_timeline = new TimelineView;
    m_tabs->addTab(m_timeline, tr("Timeline"));

    auto *menu = new QMenu(this);
    menu->addAction(tr("History as CSV..."), this, [this] { exportWithDialog(ExportKind::Csv); });
    menu->addAction(tr("History as JSON (all samples)..."), this, [this] { exportWithDialog(ExportKind::Json); });
    menu->addSeparator();
    menu->addAction(tr("Chart as PNG..."), this, [this] { exportWithDialog(ExportKind::Png); });
    menu->addAction(tr("Chart as SVG..."), this, [this] { exportWithDialog(ExportKind::Svg); });
    m_exportButton = new QToolButton;
    m_exportButton->setObjectName(QStringLiteral("exportButton"));
    m_exportButton->setText(tr("Export"));
    m_exportButton->setMenu(menu);
    m_exportButton->setPopupMode(QToolButton::InstantPopup);
    auto *clearButton = new QToolButton;
    clearButton->setObjectName(QStringLiteral("clearButton"));
    clearButton->setText(tr("Clear"));
    clearButton->setToolTip(tr("Forget every run in the history"));
    connect(clearButton, &QToolButton::clicked, this, &ResultsPanel::clearHistory);

    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(0, 0, 0, 0);
    auto *heading = new QLabel(tr("Run history"));
    heading->setToolTip(tr("Select one run for its samples, several to compare them"));
    bar->addWidget(heading);
    bar->addStretch(1);
    bar->addWidget(clearButton);
    bar->addWidget(m_exportButton);

    // Side by side: the panel lives in a wide, short bottom dock, where a
    // history above the charts would leave each too few pixels. The buttons
    // sit above the history only, so the charts get the dock's full height.
    auto *history = new QWidget;
    auto *historyLayout = new QVBoxLayout(history);
    historyLayout->setContentsMargins(0, 0, 0, 0);
    historyLayout->setSpacing(2);
    historyLayout->addLayout(bar);
    historyLayout->addWidget(m_table, 1);
    auto *splitter = new QSplitter(Qt::Horizontal);
    splitter->addWidget(history);
    splitter->addWidget(m_tabs);
    // The charts need the width more than the table, which scrolls.
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);
    splitter->setChildrenCollapsible(false);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(splitter, 1);

    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QWidget::customContextMenuRequested, this, [this](const QPoint &at) {
        QList<int> rows = selectedRows();
        const QModelIndex under = m_table->indexAt(at);
        if (under.isValid() && !rows.contains(m_proxy->mapToSource(under).row())) {
            rows = {m_proxy->mapToSource(under).row()};
        }
        if (QMenu *menu = contextMenuFor(rows)) {
            menu->exec(m_table->viewport()->mapToGlobal(at));
            menu->deleteLater();
        }
    });
    connect(m_tabs, &QTabWidget::currentChanged, this, [this](int index) { refreshChart(Tab(index)); });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &ResultsPanel::updateCharts);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &ResultsPanel::updateCharts);
    updateCharts();
}

ResultsPanel::~ResultsPanel() = default;

void ResultsPanel::addRun(RunRecord record)
{
    showAdded(m_model->append(std::move(record)));
}

void ResultsPanel::showAdded(int row)
{
    QList<int> before = selectedRows();
    before.removeAll(row);
    QList<int> rows{row};
    if (before.size() > 1) {
        rows = before;
        rows << row;
    }
    selectRows(rows);
    m_table->scrollTo(m_proxy->mapFromSource(m_model->index(row, 0)));
}

void ResultsPanel::clearHistory()
{
    m_model->clear();
    updateCharts();
}

QMenu *ResultsPanel::contextMenuFor(const QList<int> &rows)
{
    if (rows.isEmpty()) {
        return nullptr;
    }
    auto *menu = new QMenu(this);
    if (rows.size() == 2) {
        const RunRecord &a = m_model->record(rows[0]);
        const RunRecord &b = m_model->record(rows[1]);
        menu->addAction(tr("Compare #%1 with #%2").arg(b.number).arg(a.number), this,
                        [this, rows] { Q_EMIT compareRequested(rows[0], rows[1]); });
    }
    // The run clicked (the last of the selection) against any other: it is the candidate.
    const int row = rows.last();
    QMenu *with = menu->addMenu(tr("Compare #%1 with...").arg(m_model->record(row).number));
    for (int other = 0; other < m_model->rowCount(); ++other) {
        if (other == row) {
            continue;
        }
        const RunRecord &r = m_model->record(other);
        with->addAction(QStringLiteral("#%1 %2 (%3)").arg(r.number).arg(r.kernel, r.displayLabel()), this,
                        [this, other, row] { Q_EMIT compareRequested(other, row); });
    }
    with->setEnabled(m_model->rowCount() > 1);
    return menu;
}

ResultsPanel::Tab ResultsPanel::currentTab() const
{
    return Tab(m_tabs->currentIndex());
}

void ResultsPanel::setCurrentTab(Tab tab)
{
    m_tabs->setCurrentIndex(int(tab));
}

void ResultsPanel::selectRows(const QList<int> &rows)
{
    QItemSelection selection;
    for (int row : rows) {
        const QModelIndex index = m_proxy->mapFromSource(m_model->index(row, 0));
        selection.select(index, index);
    }
    QItemSelectionModel *sm = m_table->selectionModel();
    // One chart update for the whole change, not one per signal.
    m_selecting = true;
    if (!rows.isEmpty()) {
        sm->setCurrentIndex(m_proxy->mapFromSource(m_model->index(rows.last(), 0)), QItemSelectionModel::NoUpdate);
    }
    sm->select(selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_selecting = false;
    updateCharts();
}

QList<int> ResultsPanel::selectedRows() const
{
    QModelIndexList indexes = m_table->selectionModel()->selectedRows();
    std::sort(indexes.begin(), indexes.end(),
              [](const QModelIndex &a, const QModelIndex &b) { return a.row() < b.row(); });
    QList<int> rows;
    for (const QModelIndex &index : indexes) {
        rows << m_proxy->mapToSource(index).row();
    }
    return rows;
}

void ResultsPanel::updateCharts()
{
    if (m_selecting) {
        return;
    }
    const QList<int> rows = selectedRows();
    // The current row is the one last clicked; when it is not selected, the last selected one.
    const QModelIndex current = m_proxy->mapToSource(m_table->selectionModel()->currentIndex());
    int shown = -1;
    if (!rows.isEmpty()) {
        shown = current.isValid() && rows.contains(current.row()) ? current.row() : rows.last();
    }
    if (rows == m_shownRows && shown == m_shownCurrent && m_model->rowCount() == m_shownRowCount) {
        return;
    }
    m_shownRows = rows;
    m_shownCurrent = shown;
    m_shownRowCount = m_model->rowCount();
    // Only the chart in view is drawn now; the others when their tab is
    // chosen (a run of 100,000 samples costs each chart its own pass).
    m_stale.fill(true);
    // Switch tabs only when the selection crosses between one run and several,
    // so a tab the user picked stays while they refine the selection.
    if (rows.size() > 1 && m_lastSelectionSize <= 1) {
        setCurrentTab(Tab::Compare);
    } else if (rows.size() == 1 && m_lastSelectionSize != 1 && currentTab() == Tab::Compare) {
        setCurrentTab(Tab::Samples);
    }
    m_lastSelectionSize = rows.size();
    refreshChart(currentTab());
    Q_EMIT selectionChanged();
}

void ResultsPanel::refreshChart(Tab tab)
{
    if (!m_stale[size_t(tab)]) {
        return;
    }
    m_stale[size_t(tab)] = false;
    const QList<int> &rows = m_shownRows;
    if (rows.isEmpty()) {
        const QString hint = m_model->rowCount() == 0 ? tr("No runs yet: run a kernel to see its timing here")
                                                      : tr("Select a run in the history to see its samples");
        switch (tab) {
        case Tab::Samples: m_samples->clear(hint); break;
        case Tab::Histogram: m_histogram->clear(hint); break;
        case Tab::Compare: m_compare->clear(tr("Select several runs (Ctrl+click, Shift+click) to compare them")); break;
        case Tab::Timeline: m_timeline->clear(hint); break;
        }
        return;
    }
    switch (tab) {
    case Tab::Samples: m_samples->showSamples(m_model->record(m_shownCurrent)); break;
    case Tab::Histogram: m_histogram->showHistogram(m_model->record(m_shownCurrent)); break;
    case Tab::Compare: {
        QList<RunRecord> records;
        for (int row : rows) {
            records << m_model->record(row);
        }
        m_compare->showRuns(records);
        break;
    }
    case Tab::Timeline: {
        const RunRecord &record = m_model->record(m_shownCurrent);
        m_timeline->showRun(record.result, record.displayLabel());
        break;
    }
    }
}

ChartWidget *ResultsPanel::currentChart() const
{
    return qobject_cast<ChartWidget *>(m_tabs->currentWidget());
}

Status ResultsPanel::exportHistoryCsv(const QString &path) const
{
    return m_model->exportCsv(path);
}

Status ResultsPanel::exportHistoryJson(const QString &path) const
{
    return m_model->exportJson(path);
}

Status ResultsPanel::exportChartPng(const QString &path, QSize size)
{
    if (currentTab() == Tab::Timeline) {
        return m_timeline->exportPng(path, size);
    }
    return currentChart()->exportPng(path, size);
}

Status ResultsPanel::exportChartSvg(const QString &path, QSize size)
{
    if (currentTab() == Tab::Timeline) {
        return m_timeline->exportSvg(path, size);
    }
    return currentChart()->exportSvg(path, size);
}

void ResultsPanel::exportWithDialog(ExportKind kind)
{
    QString caption;
    QString name;
    QString filter;
    switch (kind) {
    case ExportKind::Csv:
        caption = tr("Export run history as CSV");
        name = QStringLiteral("runs.csv");
        filter = tr("CSV files (*.csv)");
        break;
    case ExportKind::Json:
        caption = tr("Export run history as JSON");
        name = QStringLiteral("runs.json");
        filter = tr("JSON files (*.json)");
        break;
    case ExportKind::Png:
        caption = tr("Export chart as PNG");
        name = QStringLiteral("chart.png");
        filter = tr("PNG images (*.png)");
        break;
    case ExportKind::Svg:
        caption = tr("Export chart as SVG");
        name = QStringLiteral("chart.svg");
        filter = tr("SVG images (*.svg)");
        break;
    }
    const QString path = QFileDialog::getSaveFileName(this, caption, name, filter);
    if (path.isEmpty()) {
        return;
    }
    Status s = Unit{};
    switch (kind) {
    case ExportKind::Csv: s = exportHistoryCsv(path); break;
    case ExportKind::Json: s = exportHistoryJson(path); break;
    case ExportKind::Png: s = exportChartPng(path, kExportSize); break;
    case ExportKind::Svg: s = exportChartSvg(path, kExportSize); break;
    }
    if (!s.ok()) {
        QMessageBox::warning(this, caption, s.error().message);
    }
}

} // namespace Kp
