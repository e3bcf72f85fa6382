#include "bufferinspector.h"

#include "diffview.h"
#include "imageview.h"
#include "run/runner.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleValidator>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QThreadPool>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <climits>
#include <cmath>

namespace Kp {

namespace {

QString number(double v)
{
    return std::isnan(v) ? QStringLiteral("-") : QString::number(v, 'g', 6);
}

QString shapeText(const QList<qint64> &shape)
{
    QStringList parts;
    for (qint64 e : shape) {
        parts << QString::number(e);
    }
    return QStringLiteral("[") + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

QString bytesText(qint64 bytes)
{
    if (bytes < 1024) {
        return QStringLiteral("%1 B").arg(bytes);
    }
    if (bytes < 1024 * 1024) {
        return QStringLiteral("%1 KiB").arg(double(bytes) / 1024, 0, 'g', 4);
    }
    if (bytes < 1024ll * 1024 * 1024) {
        return QStringLiteral("%1 MiB").arg(double(bytes) / (1024 * 1024), 0, 'g', 4);
    }
    return QStringLiteral("%1 GiB").arg(double(bytes) / (1024.0 * 1024 * 1024), 0, 'g', 4);
}

QList<QAction *> addGroup(QToolBar *bar, const QString &label, const QList<QWidget *> &widgets)
{
    QList<QAction *> actions;
    if (!label.isEmpty()) {
        actions << bar->addWidget(new QLabel(label, bar));
    }
    for (QWidget *w : widgets) {
        actions << bar->addWidget(w);
    }
    return actions;
}

void showActions(const QList<QAction *> &actions, bool on)
{
    for (QAction *a : actions) {
        a->setVisible(on);
    }
}

} // namespace

BufferInspector::BufferInspector(QWidget *parent)
    : QWidget(parent)
    , m_model(new BufferGridModel(this))
{
    buildUi();
    updateInfo();
    updateControls();
    updateStats();
}

BufferInspector::~BufferInspector() = default;

void BufferInspector::buildUi()
{
    m_chooser = new QComboBox(this);
    m_chooser->setObjectName(QStringLiteral("bufferChooser"));
    m_chooser->setMinimumContentsLength(12);
    m_chooser->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_info = new QLabel(this);
    m_info->setObjectName(QStringLiteral("bufferInfo"));
    // Wraps in a narrow dock rather than widening it.
    m_info->setWordWrap(true);
    m_info->setMinimumWidth(1);

    m_tools = new QToolBar(this);
    m_tools->setObjectName(QStringLiteral("inspectorTools"));
    m_tools->setIconSize(QSize(16, 16));

    m_format = new QComboBox(m_tools);
    m_format->setObjectName(QStringLiteral("format"));
    m_format->addItems({tr("General"), tr("Fixed"), tr("Scientific"), tr("Hex")});
    m_format->setToolTip(tr("Number format (Hex: integers only, two's complement)"));
    m_precision = new QSpinBox(m_tools);
    m_precision->setObjectName(QStringLiteral("precision"));
    m_precision->setRange(0, 17);
    m_precision->setValue(m_model->precision());
    m_precision->setToolTip(tr("Significant digits (General) or decimals (Fixed, Scientific)"));
    m_highlight = new QCheckBox(tr("Changes"), m_tools);
    m_highlight->setObjectName(QStringLiteral("highlightChanges"));
    m_highlight->setChecked(true);
    m_highlight->setToolTip(tr("Keep a copy of the buffers before each run and highlight what the run changed"));
    m_gridActions = addGroup(m_tools, QString(), {m_format, m_precision, m_highlight});

    m_columns = new QSpinBox(m_tools);
    m_columns->setObjectName(QStringLiteral("columns"));
    m_columns->setRange(1, 4096);
    m_columns->setValue(m_model->columns1D());
    m_columnsActions = addGroup(m_tools, tr("Columns"), {m_columns});

    m_width = new QSpinBox(m_tools);
    m_width->setObjectName(QStringLiteral("imageWidth"));
    m_width->setRange(0, INT_MAX);
    m_width->setSpecialValueText(tr("auto"));
    m_width->setToolTip(tr("Pixels per row of a 1-D buffer's image (auto: near square)"));
    m_widthActions = addGroup(m_tools, tr("Width"), {m_width});

    m_slice = new QSpinBox(m_tools);
    m_slice->setObjectName(QStringLiteral("slice"));
    m_slice->setRange(0, 0);
    m_sliceActions = addGroup(m_tools, tr("Slice"), {m_slice});

    m_goTo = new QLineEdit(m_tools);
    m_goTo->setObjectName(QStringLiteral("goTo"));
    m_goTo->setPlaceholderText(tr("Go to index"));
    m_goTo->setToolTip(tr("A flat index (1234) or coordinates, outermost first (3, 4)"));
    m_goTo->setMaximumWidth(120);
    m_goToActions = addGroup(m_tools, QString(), {m_goTo});

    m_colormap = new QComboBox(m_tools);
    m_colormap->setObjectName(QStringLiteral("colormap"));
    for (Colormap c : allColormaps()) {
        m_colormap->addItem(colormapName(c), int(c));
    }
    m_colormap->setCurrentIndex(int(Colormap::Viridis));
    m_colorActions = addGroup(m_tools, QString(), {m_colormap});

    m_rangeMode = new QComboBox(m_tools);
    m_rangeMode->setObjectName(QStringLiteral("rangeMode"));
    m_rangeMode->addItems({tr("Auto range"), tr("Manual range")});
    m_rangeLow = new QLineEdit(m_tools);
    m_rangeLow->setObjectName(QStringLiteral("rangeLow"));
    m_rangeHigh = new QLineEdit(m_tools);
    m_rangeHigh->setObjectName(QStringLiteral("rangeHigh"));
    for (QLineEdit *e : {m_rangeLow, m_rangeHigh}) {
        auto *v = new QDoubleValidator(e);
        v->setNotation(QDoubleValidator::ScientificNotation);
        v->setLocale(QLocale::c());
        e->setValidator(v);
        e->setMaximumWidth(80);
        e->setEnabled(false);
    }
    m_rangeActions = addGroup(m_tools, QString(), {m_rangeMode, m_rangeLow, m_rangeHigh});

    const char *channelNames[4] = {"R", "G", "B", "A"};
    QList<QWidget *> channelWidgets;
    for (int c = 0; c < 4; ++c) {
        auto *b = new QToolButton(m_tools);
        b->setText(QString::fromLatin1(channelNames[c]));
        b->setObjectName(QStringLiteral("channel") + QString::fromLatin1(channelNames[c]));
        b->setCheckable(true);
        b->setChecked(true);
        m_channelButtons[c] = b;
        channelWidgets << b;
    }
    m_channelActions = addGroup(m_tools, QString(), channelWidgets);

    m_gridView = new QTableView(this);
    m_gridView->setObjectName(QStringLiteral("grid"));
    m_gridView->setModel(m_model);
    m_gridView->setItemDelegate(new BufferGridDelegate(m_gridView));
    const QFont fixed = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    m_gridView->setFont(fixed);
    m_gridView->setWordWrap(false);
    const QFontMetrics fm(fixed);
    // Fixed section sizes: a header that measures its contents would visit
    // every row of a buffer with millions of them.
    m_gridView->horizontalHeader()->setDefaultSectionSize(fm.horizontalAdvance(QStringLiteral("-1.23457e+06")) + 12);
    m_gridView->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_gridView->verticalHeader()->setDefaultSectionSize(fm.height() + 6);
    m_gridView->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_gridView->verticalHeader()->setDefaultAlignment(Qt::AlignRight | Qt::AlignVCenter);

    m_image = new ImageView(this);
    m_image->setObjectName(QStringLiteral("image"));
    m_image->setColormap(Colormap::Viridis);

    auto *diffPage = new QWidget(this);
    m_against = new QComboBox(diffPage);
    m_against->setObjectName(QStringLiteral("against"));
    m_diff = new DiffView(diffPage);
    m_diff->setObjectName(QStringLiteral("diff"));
    m_diff->heatmap()->setColormap(Colormap::Viridis);
    auto *againstRow = new QHBoxLayout;
    againstRow->addWidget(new QLabel(tr("Compare with"), diffPage));
    againstRow->addWidget(m_against, 1);
    auto *diffLayout = new QVBoxLayout(diffPage);
    diffLayout->setContentsMargins(2, 2, 2, 2);
    diffLayout->addLayout(againstRow);
    diffLayout->addWidget(m_diff, 1);

    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("tabs"));
    m_tabs->addTab(m_gridView, tr("Grid"));
    m_tabs->addTab(m_image, tr("Image"));
    m_tabs->addTab(diffPage, tr("Diff"));

    m_stats = new QLabel(this);
    m_stats->setObjectName(QStringLiteral("stats"));
    m_stats->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Wraps between its five figures in a narrow dock (1024 pixels: "Inf 0" was cut off), never inside one.
    m_stats->setWordWrap(true);
    m_hover = new QLabel(this);
    m_hover->setObjectName(QStringLiteral("hover"));
    m_hover->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_hover->setMinimumWidth(1); // long hover lines must not widen the dock

    auto *top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Buffer"), this));
    top->addWidget(m_chooser, 1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(2);
    layout->addLayout(top);
    // Under the chooser, the dock's whole width: beside it the line was cut
    // at the edge of a narrow dock (a box layout gives a wrapped label no height).
    layout->addWidget(m_info);
    layout->addWidget(m_tools);
    layout->addWidget(m_tabs, 1);
    layout->addWidget(m_stats);
    layout->addWidget(m_hover);

    connect(m_chooser, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0 && i < m_buffers.size()) {
            setCurrent(m_buffers[i]);
        }
    });
    connect(m_format, &QComboBox::currentIndexChanged, this,
            [this](int i) { m_model->setNumberFormat(NumberFormat(std::clamp(i, 0, 3))); });
    connect(m_precision, &QSpinBox::valueChanged, m_model, &BufferGridModel::setPrecision);
    connect(m_highlight, &QCheckBox::toggled, this, &BufferInspector::setSnapshotsEnabled);
    connect(m_columns, &QSpinBox::valueChanged, m_model, &BufferGridModel::setColumns1D);
    connect(m_width, &QSpinBox::valueChanged, this, [this](int w) {
        m_image->setWidth1D(w);
        m_diff->setWidth1D(w);
    });
    connect(m_slice, &QSpinBox::valueChanged, this, [this](int z) {
        m_model->setSlice(z);
        m_image->setSlice(z);
        m_diff->setSlice(z);
    });
    connect(m_goTo, &QLineEdit::returnPressed, this, [this] { goTo(m_goTo->text()); });
    connect(m_colormap, &QComboBox::currentIndexChanged, this, [this] {
        const auto map = Colormap(m_colormap->currentData().toInt());
        m_image->setColormap(map);
        m_diff->heatmap()->setColormap(map);
    });
    connect(m_rangeMode, &QComboBox::currentIndexChanged, this, [this](int mode) {
        if (mode == 1 && m_rangeLow->text().isEmpty()) {
            // Start the manual range where the automatic one was.
            const auto [lo, hi] = m_image->range();
            m_rangeLow->setText(QString::number(lo, 'g', 6));
            m_rangeHigh->setText(QString::number(hi, 'g', 6));
        }
        m_rangeLow->setEnabled(mode == 1);
        m_rangeHigh->setEnabled(mode == 1);
        applyRange();
    });
    connect(m_rangeLow, &QLineEdit::editingFinished, this, &BufferInspector::applyRange);
    connect(m_rangeHigh, &QLineEdit::editingFinished, this, &BufferInspector::applyRange);
    for (QToolButton *b : m_channelButtons) {
        connect(b, &QToolButton::toggled, this, &BufferInspector::applyChannels);
    }
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        if (currentTab() == Tab::Diff && m_diffStale) {
            updateDiff();
        }
        updateControls();
    });
    connect(m_against, &QComboBox::currentIndexChanged, this, [this] { updateDiff(); });
    connect(m_image, &ImageView::hovered, m_hover, &QLabel::setText);
    connect(m_diff->heatmap(), &ImageView::hovered, m_hover, &QLabel::setText);
    connect(m_diff, &DiffView::elementActivated, this, [this](qint64 flat) {
        setCurrentTab(Tab::Grid);
        goTo(QString::number(flat));
    });
    connect(m_gridView->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex &current) {
                QString tip = m_model->data(current, Qt::ToolTipRole).toString();
                m_hover->setText(tip.replace(QLatin1Char('\n'), QStringLiteral("  ")));
            });
}

void BufferInspector::setBuffers(QList<std::shared_ptr<HostBuffer>> buffers)
{
    QList<std::shared_ptr<const HostBuffer>> list;
    QStringList names;
    for (const std::shared_ptr<HostBuffer> &b : buffers) {
        if (b) {
            list << b;
            names << b->spec.name;
        }
    }
    const QString shown = currentBufferName();
    m_buffers = list;
    for (auto it = m_snapshots.begin(); it != m_snapshots.end();) {
        it = names.contains(it.key()) ? std::next(it) : m_snapshots.erase(it);
    }
    QStringList before;
    for (int i = 0; i < m_chooser->count(); ++i) {
        before << m_chooser->itemText(i);
    }
    qsizetype at = names.indexOf(shown);
    if (at < 0 && !names.isEmpty()) {
        at = 0;
    }
    {
        const QSignalBlocker block(m_chooser);
        if (before != names) {
            m_chooser->clear();
            m_chooser->addItems(names);
        }
        m_chooser->setCurrentIndex(int(at));
    }
    const std::shared_ptr<const HostBuffer> next = at >= 0 ? m_buffers[at] : nullptr;
    if (next != m_current) {
        setCurrent(next);
        return;
    }
    if (before != names) {
        rebuildAgainst();
    }
    if (m_current && m_current->generation != m_shownGeneration) {
        scheduleRefresh();
    }
}

void BufferInspector::showBuffer(const QString &name)
{
    for (qsizetype i = 0; i < m_buffers.size(); ++i) {
        if (m_buffers[i]->spec.name == name) {
            m_chooser->setCurrentIndex(int(i)); // setCurrent() through the signal
            if (m_current != m_buffers[i]) {
                setCurrent(m_buffers[i]);
            }
            return;
        }
    }
}

void BufferInspector::showImage(bool image)
{
    setCurrentTab(image ? Tab::Image : Tab::Grid);
}

void BufferInspector::setLaunch(Dim3 grid, Dim3 block)
{
    m_image->setLaunch(grid, block);
    m_diff->heatmap()->setLaunch(grid, block);
}

void BufferInspector::setSnapshotsEnabled(bool on)
{
    m_snapshotsEnabled = on;
    if (m_highlight->isChecked() != on) {
        const QSignalBlocker block(m_highlight);
        m_highlight->setChecked(on);
    }
    if (!on) {
        m_snapshots.clear();
    }
    m_model->setHighlightChanges(on);
    if (on && m_current) {
        m_model->setSnapshot(m_snapshots.value(m_current->spec.name));
    }
}

void BufferInspector::beforeRun()
{
    m_snapshots.clear();
    if (!m_snapshotsEnabled) {
        return;
    }
    // The shown buffer first: it is the one whose changes are on screen.
    QList<std::shared_ptr<const HostBuffer>> order;
    if (m_current) {
        order << m_current;
    }
    for (const auto &b : m_buffers) {
        if (b != m_current) {
            order << b;
        }
    }
    qint64 used = 0;
    for (const auto &b : order) {
        const qint64 bytes = b->byteSize();
        if (bytes <= 0 || !b->memory.isValid() || b->memory.size() < bytes || used + bytes > m_snapshotBudget) {
            continue;
        }
        m_snapshots.insert(b->spec.name, std::make_shared<const QByteArray>(static_cast<const char *>(b->memory.data()),
                                                                            qsizetype(bytes)));
        used += bytes;
    }
    if (m_current) {
        m_model->setSnapshot(m_snapshots.value(m_current->spec.name));
    }
}

void BufferInspector::afterRun()
{
    m_afterRunPending = false;
    if (m_current) {
        m_model->setSnapshot(m_snapshots.value(m_current->spec.name));
    }
    refreshViews();
}

void BufferInspector::afterRunLater()
{
    m_afterRunPending = true;
    scheduleRefresh();
}

void BufferInspector::scheduleRefresh()
{
    if (m_refreshPending) {
        return;
    }
    m_refreshPending = true;
    // Coalesced: the main window calls setBuffers() right before afterRun(),
    // and the contents should be read once.
    QMetaObject::invokeMethod(
        this,
        [this] {
            if (m_afterRunPending) {
                afterRun(); // the snapshot first, then the one refresh
            } else if (m_refreshPending) {
                refreshViews();
            }
        },
        Qt::QueuedConnection);
}

void BufferInspector::refreshViews()
{
    m_refreshPending = false;
    m_shownGeneration = m_current ? m_current->generation : 0;
    m_model->refresh();
    m_image->refresh();
    refreshDerived();
}

void BufferInspector::setCurrent(std::shared_ptr<const HostBuffer> buffer)
{
    m_current = std::move(buffer);
    m_refreshPending = false;
    m_shownGeneration = m_current ? m_current->generation : 0;
    m_model->setBuffer(m_current);
    if (m_current) {
        m_model->setSnapshot(m_snapshots.value(m_current->spec.name));
    }
    applyFailedToGrid();
    {
        const QSignalBlocker block(m_slice);
        m_slice->setValue(0);
    }
    m_image->setSlice(0);
    m_diff->setSlice(0);
    m_image->setBuffer(m_current);
    rebuildAgainst();
    refreshDerived();
}

void BufferInspector::refreshDerived()
{
    // The diff is costly: only for the tab in view; the others are marked stale.
    if (currentTab() == Tab::Diff) {
        updateDiff();
    } else {
        m_diffStale = true;
    }
    updateInfo();
    updateControls();
    updateStats();
}

void BufferInspector::rebuildAgainst()
{
    const QString was = m_against->currentText();
    const QSignalBlocker block(m_against);
    m_against->clear();
    m_against->addItem(tr("itself before the run"));
    if (m_current) {
        const int comps = dtypeInfo(m_current->spec.dtype).components;
        for (const auto &b : m_buffers) {
            if (b != m_current && b->shape == m_current->shape && dtypeInfo(b->spec.dtype).components == comps) {
                m_against->addItem(b->spec.name);
            }
        }
    }
    if (m_current) {
        for (const FailedCells &f : m_failed) {
            if (f.buffer == m_current->spec.name) {
                m_against->addItem(tr("failing cells of check %1").arg(f.check), f.check);
            }
        }
    }
    const int i = m_against->findText(was);
    m_against->setCurrentIndex(i >= 0 ? i : 0);
}

void BufferInspector::setFailedCells(const QString &buffer, const QString &check,
                                     std::shared_ptr<const QByteArray> mask)
{
    m_failed.removeIf([&](const FailedCells &f) { return f.check == check; });
    if (mask) {
        m_failed.append({buffer, check, std::move(mask)});
    }
    applyFailedToGrid();
    rebuildAgainst();
}

void BufferInspector::clearFailedCells()
{
    if (m_failed.isEmpty()) {
        return;
    }
    m_failed.clear();
    m_failedShown.clear();
    applyFailedToGrid();
    rebuildAgainst();
    if (m_diff->showsFailedCells()) {
        updateDiff();
    }
}

bool BufferInspector::showFailedCells(const QString &check)
{
    for (const FailedCells &f : m_failed) {
        if (f.check != check) {
            continue;
        }
        m_failedShown = check;
        showBuffer(f.buffer);
        if (currentBufferName() != f.buffer) {
            return false;
        }
        applyFailedToGrid();
        const int i = m_against->findData(check);
        m_against->setCurrentIndex(i); // updateDiff() through the signal
        setCurrentTab(Tab::Diff);
        updateDiff();
        return i >= 0;
    }
    return false;
}

void BufferInspector::applyFailedToGrid()
{
    std::shared_ptr<const QByteArray> mask;
    QString what;
    if (m_current) {
        for (const FailedCells &f : m_failed) {
            if (f.buffer == m_current->spec.name && (!mask || f.check == m_failedShown)) {
                mask = f.mask;
                what = f.check;
            }
        }
    }
    if (mask != m_model->failedMask()) {
        m_model->setFailedMask(mask, what);
    }
}

void BufferInspector::updateDiff()
{
    m_diffStale = false;
    if (!m_current) {
        m_diff->clear(tr("No buffer"));
        return;
    }
    if (const QString check = m_against->currentData().toString(); !check.isEmpty()) {
        for (const FailedCells &f : m_failed) {
            if (f.check == check && f.buffer == m_current->spec.name) {
                m_diff->showFailedCells(m_current, f.mask, f.check);
                return;
            }
        }
    }
    if (m_against->currentIndex() <= 0) {
        m_diff->compareWithSnapshot(m_current, m_snapshots.value(m_current->spec.name));
        return;
    }
    for (const auto &b : m_buffers) {
        if (b->spec.name == m_against->currentText()) {
            m_diff->compare(m_current, b);
            return;
        }
    }
    m_diff->clear(tr("No buffer %1").arg(m_against->currentText()));
}

void BufferInspector::updateInfo()
{
    if (!m_current) {
        m_info->setText(tr("No buffers"));
        return;
    }
    QString text =
        QStringLiteral("%1 %2, %3")
            .arg(dtypeName(m_current->spec.dtype), shapeText(m_current->shape), bytesText(m_current->byteSize()));
    if (!m_current->spec.symbol.isEmpty()) {
        // A buffer that fills a __constant__ or __device__ variable: say which, as the project does.
        text += tr(", fills %1").arg(m_current->spec.symbol);
    }
    m_info->setText(text);
    m_info->setToolTip(m_current->spec.symbol.isEmpty()
                           ? text
                           : tr("%1: copied into the kernel's device variable %2 before the steps run, and read "
                                "back from it after the run")
                                 .arg(text, m_current->spec.symbol));
}

void BufferInspector::updateControls()
{
    const Tab tab = currentTab();
    const int dims = m_current ? int(m_current->shape.size()) : 0;
    const ImageGeometry g = m_current ? ImageGeometry::of(*m_current, 0, 0) : ImageGeometry();
    const bool pictures = tab == Tab::Image || tab == Tab::Diff;
    showActions(m_gridActions, tab == Tab::Grid);
    showActions(m_columnsActions, tab == Tab::Grid && dims == 1);
    showActions(m_widthActions, pictures && dims == 1);
    showActions(m_sliceActions, dims == 3 && (tab == Tab::Grid || g.dims == 3));
    showActions(m_goToActions, tab != Tab::Diff);
    showActions(m_colorActions,
                pictures && (g.kind == PixelKind::Scalar || g.kind == PixelKind::Vector || tab == Tab::Diff));
    showActions(m_rangeActions, tab == Tab::Image && (g.kind == PixelKind::Scalar || g.kind == PixelKind::Vector));
    showActions(m_channelActions, tab == Tab::Image && g.components > 1);
    const QSignalBlocker block(m_slice);
    m_slice->setRange(0, int(std::min<qint64>(INT_MAX, std::max<qint64>(0, m_model->sliceCount() - 1))));
    if (tab == Tab::Image && m_image->isAutoRange() && m_current) {
        // Show the automatic range where a manual one would be typed (only
        // here: computing it reads the whole buffer).
        const auto [lo, hi] = m_image->range();
        m_rangeLow->setPlaceholderText(number(lo));
        m_rangeHigh->setPlaceholderText(number(hi));
    }
}

void BufferInspector::applyRange()
{
    if (m_rangeMode->currentIndex() == 0) {
        m_image->setAutoRange(true);
        return;
    }
    bool okLo = false;
    bool okHi = false;
    const double lo = QLocale::c().toDouble(m_rangeLow->text(), &okLo);
    const double hi = QLocale::c().toDouble(m_rangeHigh->text(), &okHi);
    if (okLo && okHi) {
        m_image->setRange(lo, hi);
    }
}

void BufferInspector::applyChannels()
{
    int mask = 0;
    for (int c = 0; c < 4; ++c) {
        if (m_channelButtons[c]->isChecked()) {
            mask |= 1 << c;
        }
    }
    m_image->setChannels(mask);
}

void BufferInspector::updateStats()
{
    const quint64 ticket = ++m_statsTicket;
    if (!m_current) {
        m_stats->setText(QString());
        return;
    }
    const qint64 components = m_current->elementCount() * dtypeInfo(m_current->spec.dtype).components;
    if (components <= kSyncStatsComponents) {
        showStats(computeBufferStats(*m_current));
        return;
    }
    m_stats->setText(tr("Computing statistics of %1 values...").arg(components));
    // Large buffers: a pool thread reads the memory, and the result comes
    // back through the event loop, guarded so a closed inspector or a newer
    // request drops it. The thread gets the pointer, type and count taken
    // here: the document may assign spec and shape meanwhile (never the
    // memory: a new size is a new HostBuffer), and the reference it holds
    // keeps the mapping alive.
    QPointer<BufferInspector> guard(this);
    std::shared_ptr<const HostBuffer> buffer = m_current;
    const quint64 generation = buffer->generation;
    const DType component = dtypeInfo(buffer->spec.dtype).component;
    const void *data = buffer->memory.data();
    QThreadPool::globalInstance()->start(
        [guard = std::move(guard), buffer, ticket, generation, component, data, components]() mutable {
            const BufferStats stats = computeComponentStats(component, data, components);
            QMetaObject::invokeMethod(
                qApp,
                [guard = std::move(guard), buffer = std::move(buffer), ticket, generation, stats] {
                    // A run that wrote the memory meanwhile bumped the generation.
                    if (guard && guard->m_statsTicket == ticket && guard->m_current == buffer &&
                        buffer->generation == generation) {
                        guard->showStats(stats);
                    }
                },
                Qt::QueuedConnection);
        });
}

void BufferInspector::showStats(const BufferStats &s)
{
    // No-break spaces inside each figure: a line breaks only between them.
    m_stats->setText(QStringLiteral("min\u00a0%1  max\u00a0%2  mean\u00a0%3  NaN\u00a0%4  Inf\u00a0%5")
                         .arg(number(s.min), number(s.max), number(s.mean))
                         .arg(s.nanCount)
                         .arg(s.infCount));
}

bool BufferInspector::goTo(const QString &text)
{
    const auto fail = [this](const QString &why) {
        m_goTo->setToolTip(why);
        m_hover->setText(why);
        return false;
    };
    if (!m_current || m_model->rowCount() == 0) {
        return fail(tr("No buffer"));
    }
    QString t = text.trimmed();
    t.remove(QRegularExpression(QStringLiteral("[\\[\\]()]")));
    const QStringList parts = t.split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts);
    const QList<qint64> &shape = m_current->shape;
    QList<qint64> values;
    for (const QString &p : parts) {
        bool ok = false;
        const qint64 v = p.toLongLong(&ok);
        if (!ok) {
            return fail(tr("'%1' is not an index").arg(text));
        }
        values << v;
    }
    qint64 flat = -1;
    if (values.size() == 1) {
        flat = values[0];
    } else if (values.size() == shape.size()) {
        flat = 0;
        for (qsizetype d = 0; d < shape.size(); ++d) {
            if (values[d] < 0 || values[d] >= shape[d]) {
                return fail(tr("%1 is out of range for %2").arg(text, shapeText(shape)));
            }
            flat = flat * shape[d] + values[d];
        }
    } else {
        return fail(tr("Give a flat index or %1 coordinates").arg(shape.size()));
    }
    if (flat < 0 || flat >= m_current->elementCount()) {
        return fail(tr("Index %1 is out of range (0 to %2)").arg(flat).arg(m_current->elementCount() - 1));
    }
    m_goTo->setToolTip(tr("A flat index (1234) or coordinates, outermost first (3, 4)"));
    if (currentTab() == Tab::Image) {
        const ImageGeometry g = ImageGeometry::of(*m_current, m_image->width1D(), 0);
        qint64 pixel = flat / g.elementsPerPixel;
        if (g.dims == 3) {
            m_slice->setValue(int(pixel / g.pixels)); // switches the views' slice
            pixel %= g.pixels;
        }
        m_image->centerOn(pixel % g.width, pixel / g.width);
        return true;
    }
    setCurrentTab(Tab::Grid);
    if (m_model->sliceOfElement(flat) != m_model->slice()) {
        m_slice->setValue(int(m_model->sliceOfElement(flat)));
    }
    const QModelIndex index = m_model->indexOfElement(flat);
    if (!index.isValid()) {
        return fail(tr("Index %1 is not in the grid").arg(flat));
    }
    m_gridView->setCurrentIndex(index);
    m_gridView->scrollTo(index, QAbstractItemView::PositionAtCenter);
    return true;
}

void BufferInspector::setCurrentTab(Tab tab)
{
    m_tabs->setCurrentIndex(int(tab));
}

BufferInspector::Tab BufferInspector::currentTab() const
{
    return Tab(std::clamp(m_tabs->currentIndex(), 0, 2));
}

QString BufferInspector::currentBufferName() const
{
    return m_current ? m_current->spec.name : QString();
}

QString BufferInspector::statsText() const
{
    return QString(m_stats->text()).replace(QChar(0x00a0), QLatin1Char(' ')); // as read, not as laid out
}

QString BufferInspector::hoverLine() const
{
    return m_hover->text();
}

} // namespace Kp
