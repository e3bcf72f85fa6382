#include "sweeppanel.h"

#include "workbench/compilecontroller.h"
#include "workbench/devices.h"
#include "workbench/workbench.h"

#include "client/engineclient.h"
#include "core/safefile.h"
#include "sweep/sweepplot.h"
#include "sweepmodel.h"
#include "sweepplotview.h"
#include "workbench/projectdocument.h"

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

namespace Kp {

SweepPanel::SweepPanel(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("sweepPanel"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);

    // The axes: a name (editable combo of what can be swept) and its values.
    m_axes = new QTableWidget(0, 2, this);
    m_axes->setObjectName(QStringLiteral("sweepAxes"));
    m_axes->setHorizontalHeaderLabels({tr("Axis"), tr("Values (list, or A:B[:STEP|:pow2])")});
    m_axes->horizontalHeader()->setStretchLastSection(true);
    m_axes->verticalHeader()->hide();
    auto *axesButtons = new QHBoxLayout;
    auto *add = new QPushButton(tr("Add Axis"), this);
    add->setObjectName(QStringLiteral("sweepAddAxis"));
    auto *remove = new QPushButton(tr("Remove"), this);
    connect(add, &QPushButton::clicked, this,
            [this] { addAxisRow(QStringLiteral("block.x"), QStringLiteral("32:1024:pow2")); });
    connect(remove, &QPushButton::clicked, this, [this] {
        if (m_axes->currentRow() >= 0) {
            m_axes->removeRow(m_axes->currentRow());
        }
    });
    m_mode = new QComboBox(this);
    m_mode->setObjectName(QStringLiteral("sweepMode"));
    m_mode->addItems({tr("every combination"), tr("zip (i-th values together)")});
    m_run = new QPushButton(tr("Run Sweep"), this);
    m_run->setObjectName(QStringLiteral("sweepRun"));
    m_abort = new QPushButton(tr("Abort"), this);
    m_abort->setObjectName(QStringLiteral("sweepAbort"));
    m_csv = new QPushButton(tr("CSV…"), this);
    m_csv->setObjectName(QStringLiteral("sweepCsv"));
    m_json = new QPushButton(tr("JSON…"), this);
    m_json->setObjectName(QStringLiteral("sweepJson"));
    add->setToolTip(tr("Add an axis: block.x/y/z, grid.x/y/z, define.NAME, template.I or a scalar, with its "
                       "values as a list (64,128,256) or a range (32:1024:pow2, 1:8:1)"));
    m_mode->setToolTip(tr("Every combination of the axes' values, or the i-th values of all axes together"));
    m_run->setToolTip(tr("Run the project once per point, timed and checked, on every GPU of the same model"));
    m_abort->setToolTip(tr("Stop the runs in flight; the points that finished stay in the table"));
    m_csv->setToolTip(tr("Save the table as CSV, as kpg sweep --csv writes it"));
    m_json->setToolTip(tr("Save the sweep as JSON, as kpg sweep --json writes it"));
    axesButtons->addWidget(add);
    axesButtons->addWidget(remove);
    axesButtons->addWidget(m_mode);
    axesButtons->addStretch();
    // The actions start the row of the progress: one row of every button was
    // wider than the dock beside the launch panel at 1024 px, behind a scroll bar.
    auto *actions = new QHBoxLayout;
    actions->addWidget(m_run);
    actions->addWidget(m_abort);
    actions->addWidget(m_csv);
    actions->addWidget(m_json);
    m_measure = new QPushButton(tr("Ceilings"), this);
    m_measure->setObjectName(QStringLiteral("sweepCeilings"));
    m_measure->setToolTip(tr("Measure GPU 0's copy bandwidth and FP32/FP64 rates (once; cached), drawn on the "
                             "throughput plot and the roofline"));
    connect(m_measure, &QPushButton::clicked, this, [this] { measureCeilings(false); });
    actions->addWidget(m_measure);
    connect(m_run, &QPushButton::clicked, this, [this] { (void)start(); });
    connect(m_abort, &QPushButton::clicked, this, &SweepPanel::abort);
    connect(m_csv, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Export Sweep as CSV"), QString(), tr("CSV (*.csv)"));
        if (!path.isEmpty()) {
            const Status s = exportCsv(path);
            m_status->setText(s ? tr("Wrote %1").arg(path) : s.error().message);
        }
    });
    connect(m_json, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Export Sweep as JSON"), QString(), tr("JSON (*.json)"));
        if (!path.isEmpty()) {
            const Status s = exportJson(path);
            m_status->setText(s ? tr("Wrote %1").arg(path) : s.error().message);
        }
    });

    auto *progressRow = new QHBoxLayout;
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("sweepProgress"));
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_progress->setTextVisible(true);
    m_status = new QLabel(tr("Add axes and press Run Sweep."), this);
    m_status->setObjectName(QStringLiteral("sweepStatus"));
    m_status->setWordWrap(true);
    progressRow->addLayout(actions);
    progressRow->addWidget(m_progress, 1);
    progressRow->addWidget(m_status, 2);

    m_model = new SweepResultsModel(this);
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(Qt::UserRole);
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("sweepTable"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder); // the order points land in, until a header is clicked
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    // Fixed-width columns: a row landing never measures every cell again.
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_table->horizontalHeader()->setDefaultSectionSize(
        m_table->fontMetrics().horizontalAdvance(QStringLiteral("check-failed")) + 16);
    m_table->horizontalHeader()->setStretchLastSection(true);
    // ...but each as wide as its header ("median (us)" was cut), set when the columns change.
    const auto fitHeaders = [this] {
        QHeaderView *h = m_table->horizontalHeader();
        for (int c = 0; c < h->count(); ++c) {
            h->resizeSection(c, qMax(h->defaultSectionSize(), h->sectionSizeHint(c)));
        }
    };
    connect(m_proxy, &QAbstractItemModel::modelReset, this, fitHeaders);
    connect(m_proxy, &QAbstractItemModel::columnsInserted, this, fitHeaders);
    connect(m_proxy, &QAbstractItemModel::headerDataChanged, this, fitHeaders);
    fitHeaders();

    auto *plotBox = new QWidget(this);
    auto *plotLayout = new QVBoxLayout(plotBox);
    plotLayout->setContentsMargins(0, 0, 0, 0);
    auto *plotControls = new QHBoxLayout;
    m_plotKind = new QComboBox(plotBox);
    m_plotKind->setObjectName(QStringLiteral("sweepPlotKind"));
    m_plotKind->addItem(tr("median time"), QStringLiteral("time"));
    m_plotKind->addItem(tr("throughput"), QStringLiteral("throughput"));
    m_plotKind->addItem(tr("heatmap"), QStringLiteral("heatmap"));
    m_plotKind->addItem(tr("roofline"), QStringLiteral("roofline"));
    m_xAxis = new QComboBox(plotBox);
    m_xAxis->setObjectName(QStringLiteral("sweepPlotX"));
    m_series = new QComboBox(plotBox);
    m_series->setObjectName(QStringLiteral("sweepPlotSeries"));
    plotControls->addWidget(new QLabel(tr("Plot"), plotBox));
    plotControls->addWidget(m_plotKind);
    plotControls->addWidget(new QLabel(tr("x"), plotBox));
    plotControls->addWidget(m_xAxis);
    plotControls->addWidget(new QLabel(tr("lines per"), plotBox));
    plotControls->addWidget(m_series);
    plotControls->addStretch();
    m_plot = new SweepPlotView(plotBox);
    plotLayout->addLayout(plotControls);
    plotLayout->addWidget(m_plot, 1);
    for (QComboBox *c : {m_plotKind, m_xAxis, m_series}) {
        connect(c, &QComboBox::currentIndexChanged, this, &SweepPanel::refreshPlot);
    }

    auto *split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_table);
    split->addWidget(plotBox);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    // The axes over the results, in a splitter: in the short bottom dock the
    // results (table and plot) get what the axes do not need, and the user
    // can move the line.
    m_axes->setMinimumHeight(50);
    auto *results = new QSplitter(Qt::Vertical, this);
    results->setObjectName(QStringLiteral("sweepSplit"));
    results->setChildrenCollapsible(false);
    results->addWidget(m_axes);
    results->addWidget(split);
    results->setStretchFactor(0, 0);
    results->setStretchFactor(1, 1);
    results->setSizes({70, 400});
    layout->addLayout(axesButtons);
    layout->addLayout(progressRow);
    layout->addWidget(results, 1);

    m_plotTimer = new QTimer(this);
    m_plotTimer->setSingleShot(true);
    m_plotTimer->setInterval(150);
    connect(m_plotTimer, &QTimer::timeout, this, &SweepPanel::refreshPlot);
    updateButtons();
}

SweepPanel::~SweepPanel()
{
    if (m_measuring) {
        m_measuring->join();
    }
}

void SweepPanel::measureCeilings(bool remeasure)
{
    if (m_measuring) {
        m_measuring->join();
        m_measuring.reset();
    }
    m_measure->setEnabled(false);
    m_status->setText(tr("Measuring the device ceilings…"));
    withDevices([this, remeasure](const Result<DeviceList> &list) {
        if (!list || list->devices.isEmpty()) {
            m_status->setText(tr("No ceilings: %1").arg(list ? tr("no GPU") : list.error().message));
            m_measure->setEnabled(true);
            return;
        }
        const DeviceInfo device = list->devices.first();
        const int driver = list->driverVersion;
        // Blocking (a compile and a worker request): its own thread and worker.
        QPointer<SweepPanel> self(this);
        m_measuring = std::make_unique<std::thread>([self, device, driver, remeasure] {
            EngineClient engine;
            const Result<DeviceCeilings> c = deviceCeilings(engine, device, driver, remeasure);
            if (!self) {
                return;
            }
            QMetaObject::invokeMethod(
                self.data(),
                [self, c] {
                    if (!self) {
                        return;
                    }
                    self->m_measure->setEnabled(true);
                    if (!c) {
                        self->m_status->setText(tr("No ceilings: %1").arg(c.error().message));
                        return;
                    }
                    self->setCeilings(*c);
                    self->m_status->setText(tr("%1: copy %2 TB/s, FP32 %3 TFLOP/s, FP64 %4 TFLOP/s")
                                                .arg(c->deviceName)
                                                .arg(c->bytesPerSecond / 1e12, 0, 'f', 2)
                                                .arg(c->fp32FlopsPerSecond / 1e12, 0, 'f', 1)
                                                .arg(c->fp64FlopsPerSecond / 1e12, 0, 'f', 1));
                },
                Qt::QueuedConnection);
        });
    });
}

void SweepPanel::setDocument(ProjectDocument *document)
{
    m_doc = document;
    auto fill = [this] {
        if (m_doc && m_doc->project().sweep && m_axes->rowCount() == 0) {
            setAxes(m_doc->project().sweep->axes, m_doc->project().sweep->zip);
        }
    };
    connect(document, &ProjectDocument::loaded, this, [this, fill] {
        m_axes->setRowCount(0);
        fill();
    });
    fill();
}

QStringList SweepPanel::axisNames() const
{
    QStringList names{"block.x", "block.y", "block.z", "grid.x", "grid.y", "grid.z"};
    if (m_doc) {
        const Project &p = m_doc->project();
        for (const QString &d : p.compile.defines) {
            names << QStringLiteral("define.") + d.section(QLatin1Char('='), 0, 0);
        }
        for (const LaunchStep &l : p.launches) {
            const int args = int(l.kernel.count(QLatin1Char(',')) + (l.kernel.contains(QLatin1Char('<')) ? 1 : 0));
            for (int i = 0; i < args; ++i) {
                if (!names.contains(QStringLiteral("template.%1").arg(i))) {
                    names << QStringLiteral("template.%1").arg(i);
                }
            }
        }
        for (const ScalarSpec &s : p.scalars) {
            names << s.name;
        }
    }
    return names;
}

void SweepPanel::addAxisRow(const QString &name, const QString &values)
{
    const int row = m_axes->rowCount();
    m_axes->insertRow(row);
    auto *combo = new QComboBox(m_axes);
    combo->setEditable(true); // any define.NAME or template.I, not only the listed ones
    combo->addItems(axisNames());
    combo->setCurrentText(name);
    m_axes->setCellWidget(row, 0, combo);
    m_axes->setItem(row, 1, new QTableWidgetItem(values));
}

void SweepPanel::setAxes(const QStringList &specs, bool zip)
{
    m_axes->setRowCount(0);
    for (const QString &s : specs) {
        addAxisRow(s.section(QLatin1Char('='), 0, 0).trimmed(), s.section(QLatin1Char('='), 1));
    }
    m_mode->setCurrentIndex(zip ? 1 : 0);
}

QStringList SweepPanel::axesText() const
{
    QStringList specs;
    for (int r = 0; r < m_axes->rowCount(); ++r) {
        const auto *combo = qobject_cast<QComboBox *>(m_axes->cellWidget(r, 0));
        const QTableWidgetItem *values = m_axes->item(r, 1);
        specs << (combo ? combo->currentText().trimmed() : QString()) + QLatin1Char('=') +
                     (values ? values->text().trimmed() : QString());
    }
    return specs;
}

bool SweepPanel::zip() const
{
    return m_mode->currentIndex() == 1;
}

bool SweepPanel::isRunning() const
{
    return m_starting || (m_runner && m_runner->isRunning());
}

Status SweepPanel::start()
{
    const auto refuse = [this](const QString &message) -> Status {
        m_status->setText(message);
        return Error{QStringLiteral("sweep"), Error::Code::Usage, {}, message};
    };
    if (isRunning()) {
        return refuse(tr("a sweep is running already"));
    }
    if (!m_doc) {
        return refuse(tr("no project to sweep"));
    }
    if (m_workbench) {
        // The text in the editor, as Run and Check Memory take it: not the
        // document's copy from before the last keystrokes' compile pause.
        m_workbench->compile().syncSource();
    }
    const QStringList specs = axesText();
    if (specs.isEmpty()) {
        return refuse(tr("add an axis first (e.g. block.x = 32:1024:pow2)"));
    }
    QList<SweepAxis> axes;
    for (int i = 0; i < specs.size(); ++i) {
        const Result<SweepAxis> a = parseSweepAxis(specs[i]);
        if (!a) {
            // parseSweepAxis speaks of "--axis NAME"; here the row is the axis.
            QString message = a.error().message;
            if (message.startsWith(QLatin1String("--axis "))) {
                message.remove(0, 7);
            }
            return refuse(tr("axis %1: %2").arg(i + 1).arg(message));
        }
        axes << *a;
    }
    const Project project = m_doc->project();
    for (const SweepAxis &a : axes) {
        if (Status s = checkSweepAxis(a, project); !s) {
            return refuse(s.error().message);
        }
    }
    const Result<QList<SweepPoint>> points = expandSweep(axes, zip());
    if (!points) {
        return refuse(points.error().message);
    }
    m_project = project;
    m_zip = zip();
    showSweep(axes, int(points->size()));
    m_status->setText(tr("Looking for GPUs…"));
    m_starting = true;
    updateButtons();
    // The GPUs first (every one of GPU 0's model); without a driver the
    // sweep still starts, so the first point says what is wrong.
    withDevices([this](const Result<DeviceList> &list) {
        if (!m_starting) {
            return; // aborted meanwhile
        }
        if (!list) {
            startOnDevices({0}, std::nullopt, 0);
            return;
        }
        const Result<QList<int>> devices = sweepDevices(*list, std::nullopt);
        startOnDevices(devices ? *devices : QList<int>{0}, list->devices.value(0), list->driverVersion);
    });
    return Unit{};
}

void SweepPanel::startOnDevices(const QList<int> &devices, const std::optional<DeviceInfo> &first, int driverVersion)
{
    m_starting = false;
    if (first && !m_ceilings) {
        setCeilings(readCachedCeilings(ceilingsCachePath(), *first, driverVersion));
    }
    m_runner = std::make_unique<SweepRunner>();
    connect(m_runner.get(), &SweepRunner::pointFinished, this, &SweepPanel::addResult);
    connect(m_runner.get(), &SweepRunner::progress, this, [this](int done, int total, double left) {
        m_progress->setValue(done);
        m_status->setText(left >= 0 ? tr("%1 of %2 points, about %3 s left").arg(done).arg(total).arg(qRound(left))
                                    : tr("%1 of %2 points").arg(done).arg(total));
    });
    connect(m_runner.get(), &SweepRunner::finished, this, &SweepPanel::onFinished);
    SweepRunner::Options options;
    options.devices = devices;
    QList<SweepAxis> axes = m_model->axes();
    if (Status s = m_runner->start(m_project, axes, m_zip, options); !s) {
        m_status->setText(s.error().message);
        m_runner.reset();
        updateButtons();
        return;
    }
    m_status->setText(devices.size() > 1 ? tr("Running on %1 GPUs…").arg(devices.size()) : tr("Running…"));
    updateButtons();
}

void SweepPanel::abort()
{
    if (m_starting) {
        m_starting = false;
        onFinished(true);
        return;
    }
    if (m_runner && m_runner->isRunning()) {
        m_runner->abort();
    }
}

void SweepPanel::onFinished(bool aborted)
{
    const int done = int(m_model->results().size());
    if (m_runner && m_runner->fatalError()) {
        m_status->setText(tr("Stopped: %1").arg(m_runner->fatalError()->message));
    } else if (aborted) {
        m_status->setText(tr("Aborted after %1 of %2 points (kept)").arg(done).arg(m_planned));
    } else {
        m_status->setText(
            tr("Done: %1 points in %2 s").arg(done).arg(m_runner ? m_runner->wallSeconds() : 0, 0, 'f', 1));
    }
    refreshPlot();
    updateButtons();
    Q_EMIT sweepFinished(aborted);
}

void SweepPanel::updateButtons()
{
    const bool running = isRunning();
    // In the window, compile-only mode says so on the buttons that would need a GPU.
    const bool gpu = !m_workbench || !m_workbench->devices().known() || m_workbench->devices().canRun();
    m_run->setEnabled(!running && gpu);
    m_abort->setEnabled(running);
    const bool any = !m_model->results().isEmpty();
    m_csv->setEnabled(any);
    m_json->setEnabled(any);
}

void SweepPanel::showSweep(const QList<SweepAxis> &axes, int planned)
{
    m_model->setAxes(axes);
    m_planned = planned;
    m_progress->setRange(0, std::max(1, planned));
    m_progress->setValue(0);
    const QSignalBlocker bx(m_xAxis);
    const QSignalBlocker bs(m_series);
    m_xAxis->clear();
    m_series->clear();
    for (const SweepAxis &a : axes) {
        m_xAxis->addItem(a.name);
    }
    m_xAxis->setCurrentIndex(0);
    updateSeriesChoices();
    refreshPlot();
    updateButtons();
}

void SweepPanel::updateSeriesChoices()
{
    m_series->clear();
    m_series->addItem(tr("none"), -1);
    for (int i = 0; i < m_model->axes().size(); ++i) {
        m_series->addItem(m_model->axes()[i].name, i);
    }
    m_series->setCurrentIndex(m_model->axes().size() > 1 ? 2 : 0);
}

void SweepPanel::addResult(const SweepPointResult &result)
{
    m_model->append(result);
    if (m_runner == nullptr || !m_runner->isRunning()) {
        m_progress->setValue(int(m_model->results().size()));
    }
    if (m_model->results().size() == 1) {
        updateButtons();
    }
    if (!m_plotTimer->isActive()) {
        m_plotTimer->start();
    }
}

const QList<SweepPointResult> &SweepPanel::results() const
{
    return m_model->results();
}

Status SweepPanel::exportCsv(const QString &path) const
{
    QList<SweepPointResult> sorted = m_model->results();
    std::sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) { return a.index < b.index; });
    return writeOutput(path, sweepCsv(m_model->axes(), sorted), QStringLiteral("the sweep CSV"));
}

Status SweepPanel::exportJson(const QString &path) const
{
    QList<SweepPointResult> sorted = m_model->results();
    std::sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) { return a.index < b.index; });
    const bool aborted = m_runner && m_runner->wasAborted();
    const QJsonObject o = sweepJson(m_project, m_model->axes(), m_zip, m_planned, sorted,
                                    m_runner ? m_runner->wallSeconds() : 0, aborted);
    return writeOutput(path, QJsonDocument(o).toJson(QJsonDocument::Indented), QStringLiteral("the sweep JSON"));
}

void SweepPanel::setCeilings(const std::optional<DeviceCeilings> &ceilings)
{
    m_ceilings = ceilings;
    refreshPlot();
}

void SweepPanel::setCurrentRun(const RunResult &run)
{
    m_currentRun = run;
    if (plotKind() == QLatin1String("roofline")) {
        refreshPlot();
    }
}

void SweepPanel::setPlotKind(const QString &kind)
{
    const int i = m_plotKind->findData(kind);
    if (i >= 0) {
        m_plotKind->setCurrentIndex(i);
    }
}

QString SweepPanel::plotKind() const
{
    return m_plotKind->currentData().toString();
}

QString SweepPanel::statusText() const
{
    return m_status->text();
}

void SweepPanel::refreshPlot()
{
    const QList<SweepAxis> &axes = m_model->axes();
    const QString title = m_project.title;
    const QString kind = plotKind();
    if (kind == QLatin1String("roofline")) {
        if (!m_ceilings) {
            Plot::Figure empty;
            empty.title = tr("roofline: the device ceilings are not measured yet (kpg devices --ceilings)");
            m_plot->setFigure(empty);
            return;
        }
        QList<SweepPointResult> points = m_model->results();
        if (m_currentRun) {
            SweepPointResult current;
            current.status = QStringLiteral("ok");
            current.label = tr("current run");
            current.run.ran = true;
            current.run.run = *m_currentRun;
            points.prepend(current);
        }
        m_plot->setFigure(rooflineFigure(title, points, *m_ceilings));
        return;
    }
    if (axes.isEmpty()) {
        m_plot->setFigure(Plot::Figure{});
        return;
    }
    SweepPlotOptions o;
    o.y = kind == QLatin1String("throughput") ? SweepPlotOptions::Y::Throughput : SweepPlotOptions::Y::Time;
    o.heatmap = kind == QLatin1String("heatmap");
    o.xAxis = std::max(0, m_xAxis->currentIndex());
    o.seriesAxis = m_series->currentData().isValid() ? m_series->currentData().toInt() : -2;
    if (o.heatmap && o.seriesAxis < 0) {
        o.seriesAxis = -2;
    }
    o.ceilings = m_ceilings;
    const Result<Plot::Figure> f = sweepFigure(title, axes, m_model->results(), o);
    if (f) {
        m_plot->setFigure(*f);
    } else {
        Plot::Figure empty;
        empty.title = f.error().message;
        m_plot->setFigure(empty);
    }
}

SweepPanel::SweepPanel(Workbench &wb, QWidget *parent)
    : SweepPanel(parent)
{
    m_workbench = &wb;
    setDocument(&wb.document());
    const auto devicesKnown = [this, &wb] {
        const bool gpu = wb.devices().canRun();
        const QString why = wb.devices().whyNoRun();
        m_run->setToolTip(gpu ? tr("Run the project once per point, timed and checked, on every GPU of the same model")
                              : why);
        if (!gpu) {
            m_measure->setEnabled(false);
            m_measure->setToolTip(why);
        }
        updateButtons();
    };
    connect(&wb.devices(), &Devices::changed, this, devicesKnown);
    if (wb.devices().known()) {
        devicesKnown(); // built after the answer (shell/docks.h)
    }
    connect(&wb, &Workbench::runFinished, this, [this](const RunResult &r) { setCurrentRun(r); });
}

void SweepPanel::withDevices(std::function<void(const Result<DeviceList> &)> then)
{
    if (m_workbench && m_workbench->devices().known()) {
        then(m_workbench->devices().answer()); // asked once for the whole window
        return;
    }
    if (!m_engine) {
        m_engine = std::make_unique<EngineClient>();
    }
    m_engine->listDevices(this, std::move(then));
}

} // namespace Kp
