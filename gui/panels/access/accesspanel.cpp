#include "accesspanel.h"

#include "access/accessrun.h"
#include "editor/accessheat.h"
#include "workbench/accessmap.h"
#include "workbench/devices.h"
#include "workbench/projectdocument.h"
#include "workbench/selection.h"
#include "workbench/workbench.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMap>
#include <QPushButton>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableWidget>
#include <QTextDocument>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace Kp {

namespace {

enum Column { Line, Access, Requests, Sectors, IdealSectors, Wavefronts, IdealWavefronts, Reading, Columns };

QString number(double v)
{
    return QString::number(v, 'g', 3);
}

/**
 * A tooltip that shows text as it is. Qt renders a tooltip as HTML when it
 * looks like HTML, and a source line can ("foo<b>(x)", "// <img src=...>"),
 * so such text goes in escaped.
 */
QString plainToolTip(const QString &text)
{
    return Qt::mightBeRichText(text) ? QStringLiteral("<p style='white-space:pre'>%1</p>").arg(text.toHtmlEscaped())
                                     : text;
}

QString intro()
{
    return AccessPanel::tr("Analyze records one launch of the step and shows how its memory accesses use the "
                           "hardware, line by line.");
}

/** "2: transpose_naive", or "3: copy (not a kernel)" for a step the map cannot record. */
QString stepText(int index, const LaunchStep &step)
{
    if (step.isKernel()) {
        return QStringLiteral("%1: %2").arg(index + 1).arg(step.kernel);
    }
    const char *kind = step.kind == LaunchStep::Kind::Copy     ? "copy"
                       : step.kind == LaunchStep::Kind::Memset ? "memset"
                       : step.kind == LaunchStep::Kind::Record ? "record"
                       : step.kind == LaunchStep::Kind::Wait   ? "wait"
                                                               : "chunks";
    return AccessPanel::tr("%1: %2 (not a kernel)").arg(index + 1).arg(QLatin1String(kind));
}

} // namespace

AccessPanel::AccessPanel(Workbench &workbench, QWidget *parent)
    : QWidget(parent)
    , m_wb(&workbench)
{
    auto *layout = new QVBoxLayout(this);
    auto *top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Step"), this));
    m_step = new QComboBox(this);
    m_step->setObjectName(QStringLiteral("accessStep"));
    m_step->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_step->setToolTip(tr("The launch step to record; the steps before it run too"));
    top->addWidget(m_step);
    m_analyze = new QPushButton(tr("Analyze"), this);
    m_analyze->setObjectName(QStringLiteral("analyzeAccess"));
    top->addWidget(m_analyze);
    m_inEditor = new QCheckBox(tr("Show in editor"), this);
    m_inEditor->setObjectName(QStringLiteral("accessInEditor"));
    m_inEditor->setToolTip(tr("Colour each analysed source line in the editor's margin by its cost: green at the "
                              "ideal, amber at 2 to 4 times it, red beyond, or a 4-way bank conflict"));
    m_inEditor->setChecked(m_wb->access().showInEditor());
    top->addWidget(m_inEditor);
    m_summary = new QLabel(intro(), this);
    m_summary->setObjectName(QStringLiteral("accessSummary"));
    m_summary->setWordWrap(true);
    // Kernel names and error messages carry the user's text ("k<b>", a compile log).
    m_summary->setTextFormat(Qt::PlainText);
    top->addWidget(m_summary, 1);
    layout->addLayout(top);

    // The table and who touched a cell side by side: the panel lives in the
    // bottom dock, wide and short, where a list under the table was below
    // the fold and "Who touched this cell?" seemed to do nothing.
    auto *split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("accessSplit"));
    split->setChildrenCollapsible(false);
    m_table = new QTableWidget(0, Columns, split);
    m_table->setObjectName(QStringLiteral("accessTable"));
    m_table->setHorizontalHeaderLabels({tr("Line"), tr("Access"), tr("Requests"), tr("Sectors"), tr("Ideal sectors"),
                                        tr("Wavefronts"), tr("Ideal wavefronts"), tr("Reading")});
    m_table->horizontalHeaderItem(Sectors)->setToolTip(tr("32-byte sectors per global request of a warp"));
    m_table->horizontalHeaderItem(IdealSectors)->setToolTip(tr("The fewest sectors the bytes asked for fit in"));
    m_table->horizontalHeaderItem(Wavefronts)
        ->setToolTip(tr("Passes per shared-memory request of a warp: more than the ideal is a bank conflict"));
    m_table->horizontalHeaderItem(IdealWavefronts)->setToolTip(tr("One pass per phase of the request"));
    // The numbers take what they need and the reading the rest, so nothing
    // hides behind a horizontal scroll bar at 1024 pixels.
    for (int c = Line; c < Reading; ++c) {
        m_table->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    }
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setWordWrap(false);
    split->addWidget(m_table);

    auto *whoBox = new QWidget(split);
    auto *whoLayout = new QVBoxLayout(whoBox);
    whoLayout->setContentsMargins(0, 0, 0, 0);
    whoLayout->addWidget(new QLabel(tr("Who touched a cell"), whoBox));
    auto *who = new QHBoxLayout;
    m_buffer = new QComboBox(whoBox);
    m_buffer->setObjectName(QStringLiteral("accessBuffer"));
    who->addWidget(m_buffer);
    m_element = new QLineEdit(whoBox);
    m_element->setObjectName(QStringLiteral("accessElement"));
    m_element->setPlaceholderText(tr("element"));
    m_element->setMaximumWidth(100);
    who->addWidget(m_element);
    m_find = new QPushButton(tr("Find"), whoBox);
    m_find->setObjectName(QStringLiteral("findTouches"));
    who->addWidget(m_find);
    who->addStretch(1);
    whoLayout->addLayout(who);
    m_touches = new QTreeWidget(whoBox);
    m_touches->setObjectName(QStringLiteral("accessTouches"));
    m_touches->setHeaderLabels({tr("Access"), tr("Block"), tr("Thread"), tr("Line")});
    m_touches->setRootIsDecorated(false);
    whoLayout->addWidget(m_touches, 1);
    split->addWidget(whoBox);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    connect(m_analyze, &QPushButton::clicked, this, &AccessPanel::analyze);
    connect(m_step, &QComboBox::currentIndexChanged, this, &AccessPanel::refreshControls);
    connect(m_inEditor, &QCheckBox::toggled, &m_wb->access(), &AccessMap::setShowInEditor);
    connect(&m_wb->access(), &AccessMap::showInEditorChanged, m_inEditor, &QCheckBox::setChecked);
    connect(&m_wb->access(), &AccessMap::reportChanged, this, &AccessPanel::showReport);
    connect(m_wb, &Workbench::showTouches, this, &AccessPanel::showTouches);
    connect(&m_wb->access(), &AccessMap::lineRequested, this, &AccessPanel::showLine);
    // The step the Launch panel edits is the one a user most likely wants recorded.
    connect(&m_wb->selection(), &Selection::stepChanged, this, &AccessPanel::chooseStep);
    connect(m_find, &QPushButton::clicked, this, &AccessPanel::findTouches);
    connect(m_element, &QLineEdit::returnPressed, this, &AccessPanel::findTouches);
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        const int line = m_table->item(row, Line)->data(Qt::UserRole).toInt();
        if (line > 0) {
            m_wb->requestSourceLine(line, 1, line, line, true);
        }
    });
    connect(m_touches, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem *item) {
        const int line = item->data(3, Qt::UserRole).toInt();
        if (line > 0) {
            m_wb->requestSourceLine(line, 1, line, line, true);
        }
    });
    connect(m_wb, &Workbench::accessStarted, this, [this](int step) {
        m_summary->setText(tr("Recording step %1...").arg(step + 1));
        refreshControls();
    });
    connect(m_wb, &Workbench::accessFinished, this, &AccessPanel::finished);
    connect(&m_wb->document(), &ProjectDocument::projectChanged, this, &AccessPanel::refreshSteps);
    connect(&m_wb->document(), &ProjectDocument::loaded, this, &AccessPanel::refreshSteps);
    connect(&m_wb->devices(), &Devices::changed, this, &AccessPanel::refreshControls);
    refreshSteps();
    showReport(m_wb->access().last());
}

AccessPanel::~AccessPanel() = default;

void AccessPanel::refreshSteps()
{
    const QList<LaunchStep> &launches = m_wb->document().project().launches;
    const int chosen = chosenStep();
    const QSignalBlocker quiet(m_step);
    m_step->clear();
    auto *model = qobject_cast<QStandardItemModel *>(m_step->model());
    for (int i = 0; i < launches.size(); ++i) {
        m_step->addItem(stepText(i, launches[i]), i);
        if (!launches[i].isKernel() && model) {
            // Listed, so the numbers match the Launch panel's, but not offered.
            model->item(i)->setEnabled(false);
        }
    }
    // The step chosen before, if it is still a kernel step; else the first kernel step.
    int index = chosen >= 0 && chosen < launches.size() && launches[chosen].isKernel() ? chosen : -1;
    for (int i = 0; index < 0 && i < launches.size(); ++i) {
        if (launches[i].isKernel()) {
            index = i;
        }
    }
    m_step->setCurrentIndex(index);
    // One step leaves nothing to choose.
    m_step->setEnabled(launches.size() > 1);
    refreshControls();
}

void AccessPanel::chooseStep(int step)
{
    const QList<LaunchStep> &launches = m_wb->document().project().launches;
    if (step >= 0 && step < m_step->count() && step < launches.size() && launches[step].isKernel()) {
        m_step->setCurrentIndex(step);
    }
}

int AccessPanel::chosenStep() const
{
    return m_step->currentIndex() >= 0 ? m_step->currentData().toInt() : -1;
}

void AccessPanel::refreshControls()
{
    const bool running = m_wb->access().isRunning();
    const bool canRun = m_wb->devices().canRun();
    const bool kernel = chosenStep() >= 0;
    m_analyze->setEnabled(!running && canRun && kernel);
    m_analyze->setToolTip(!canRun   ? m_wb->devices().whyNoRun()
                          : running ? tr("An analysis is running")
                          : !kernel ? tr("The project has no kernel step to record")
                                    : tr("Record one launch of the step (an instrumented copy of the kernel, run "
                                         "once, untimed) and show its memory accesses per line"));
}

void AccessPanel::analyze()
{
    if (chosenStep() >= 0) {
        m_wb->analyzeAccess(chosenStep());
    }
}

void AccessPanel::finished(const AccessOutcome &outcome)
{
    refreshControls();
    if (!outcome.report) {
        m_summary->setText(tr("Step %1 not analysed: %2").arg(outcome.step + 1).arg(outcome.error.message));
        return;
    }
    m_wb->requestAttention(PanelId::MemoryAccess, Attention::UserAsked);
}

void AccessPanel::showReport(std::shared_ptr<const AccessReport> report)
{
    m_report = std::move(report);
    m_table->setRowCount(0);
    m_touches->clear();
    m_buffer->clear();
    if (!m_report) {
        m_summary->setText(intro());
        return;
    }
    const AccessReport &r = *m_report;
    QString summary = tr("Step %1, %2 on %3: %4 warp requests recorded")
                          .arg(r.step + 1)
                          .arg(r.kernel, r.device)
                          .arg(r.summary.recorded);
    if (r.summary.truncated()) {
        summary += tr(" (traced the first %1 of %2)").arg(r.summary.recorded).arg(r.summary.requested);
    }
    if (r.summary.outside > 0) {
        summary += tr("; %1 accesses inside no buffer").arg(r.summary.outside);
    }
    if (r.recordingSlowdown() > 0) {
        summary += tr("; recording made the launch %1x slower (%2 ms against %3 ms)")
                       .arg(r.recordingSlowdown(), 0, 'f', 1)
                       .arg(r.launchMs, 0, 'f', 3)
                       .arg(r.plainLaunchMs, 0, 'f', 3);
    }
    m_summary->setText(summary);
    // Costliest first: sectors and wavefronts beyond the ideal.
    QList<const SiteAccess *> sites;
    for (const SiteAccess &s : r.summary.sites) {
        sites << &s;
    }
    std::stable_sort(sites.begin(), sites.end(), [](const SiteAccess *a, const SiteAccess *b) {
        const qint64 ea = (a->sectors - a->idealSectors) + (a->wavefronts - a->idealWavefronts);
        const qint64 eb = (b->sectors - b->idealSectors) + (b->wavefronts - b->idealWavefronts);
        return ea != eb ? ea > eb : a->site.sourceLine < b->site.sourceLine;
    });
    // Each row's line in the colour the editor's margin gives it.
    QMap<std::pair<QString, int>, AccessHeat> heat;
    for (const LineAccess &l : r.summary.lines) {
        heat.insert({l.path, l.line}, accessHeat(l));
    }
    m_table->setRowCount(int(sites.size()));
    for (int row = 0; row < sites.size(); ++row) {
        const SiteAccess &s = *sites[row];
        const bool own = s.site.sourcePath.isEmpty() || QFileInfo(s.site.sourcePath).fileName() == r.sourceName;
        auto *line = new QTableWidgetItem(
            own ? QString::number(s.site.sourceLine)
                : QStringLiteral("%1:%2").arg(QFileInfo(s.site.sourcePath).fileName()).arg(s.site.sourceLine));
        line->setData(Qt::UserRole, own ? s.site.sourceLine : 0);
        line->setData(Qt::DecorationRole,
                      AccessHeatMargin::colour(heat.value({s.site.sourcePath, s.site.sourceLine}, AccessHeat::Ideal)));
        line->setToolTip(plainToolTip(
            own ? r.sourceText.section(QLatin1Char('\n'), s.site.sourceLine - 1, s.site.sourceLine - 1).trimmed()
                : s.site.sourcePath));
        m_table->setItem(row, Line, line);
        auto *access =
            new QTableWidgetItem(QStringLiteral("%1 %2 (%3)")
                                     .arg(accessSpaceName(s.site.space), accessKindName(s.site.kind), s.site.typeName));
        access->setToolTip(plainToolTip(tr("PTX line %1: %2").arg(s.site.ptxLine).arg(s.site.instruction)));
        m_table->setItem(row, Access, access);
        m_table->setItem(row, Requests, new QTableWidgetItem(QString::number(s.requests)));
        m_table->setItem(row, Sectors,
                         new QTableWidgetItem(s.globalRequests ? number(s.sectorsPerRequest()) : QString()));
        m_table->setItem(row, IdealSectors,
                         new QTableWidgetItem(s.globalRequests ? number(s.idealSectorsPerRequest()) : QString()));
        m_table->setItem(row, Wavefronts,
                         new QTableWidgetItem(s.sharedRequests ? number(s.wavefrontsPerRequest()) : QString()));
        m_table->setItem(row, IdealWavefronts,
                         new QTableWidgetItem(s.sharedRequests ? number(s.idealWavefrontsPerRequest()) : QString()));
        auto *reading = new QTableWidgetItem(s.reading);
        reading->setToolTip(s.reading);
        m_table->setItem(row, Reading, reading);
        const bool wasteful = s.sectors > s.idealSectors || s.wavefronts > s.idealWavefronts;
        if (wasteful) {
            for (int c : {Sectors, Wavefronts}) {
                QFont f = m_table->item(row, c)->font();
                f.setBold(true);
                m_table->item(row, c)->setFont(f);
            }
        }
    }
    for (const TraceBuffer &b : r.summary.bufferList) {
        m_buffer->addItem(b.name);
    }
}

void AccessPanel::showLine(int line)
{
    m_table->clearSelection();
    bool found = false;
    for (int row = 0; row < m_table->rowCount(); ++row) {
        if (m_table->item(row, Line)->data(Qt::UserRole).toInt() != line) {
            continue;
        }
        const QModelIndex index = m_table->model()->index(row, Line);
        m_table->selectionModel()->select(index, QItemSelectionModel::Select | QItemSelectionModel::Rows);
        if (!found) {
            // The costliest of the line's rows (the table is sorted so) is the one in view.
            m_table->selectionModel()->setCurrentIndex(index, QItemSelectionModel::NoUpdate);
            m_table->scrollTo(index);
            found = true;
        }
    }
    if (found) {
        m_wb->requestAttention(PanelId::MemoryAccess, Attention::UserAsked);
    }
}

void AccessPanel::showTouches(const QString &buffer, qint64 element)
{
    const int index = m_buffer->findText(buffer);
    if (!m_report || index < 0) {
        m_touches->clear();
        auto *item =
            new QTreeWidgetItem(m_touches, {m_report ? tr("%1 was not part of the analysed launch").arg(buffer)
                                                     : tr("No memory-access analysis to ask: Analyze records one")});
        item->setFirstColumnSpanned(true);
        return;
    }
    m_buffer->setCurrentIndex(index);
    m_element->setText(QString::number(element));
    findTouches();
}

void AccessPanel::findTouches()
{
    m_touches->clear();
    if (!m_report || m_buffer->currentText().isEmpty()) {
        return;
    }
    bool ok = false;
    const qint64 element = m_element->text().trimmed().toLongLong(&ok);
    const QString name = m_buffer->currentText();
    const auto b = std::find_if(m_report->summary.bufferList.cbegin(), m_report->summary.bufferList.cend(),
                                [&](const TraceBuffer &t) { return t.name == name; });
    const qint64 count = b == m_report->summary.bufferList.cend() ? 0 : b->bytes / std::max(1, b->elementBytes);
    if (!ok || element < 0 || element >= count) {
        auto *item = new QTreeWidgetItem(
            m_touches, {tr("%1 is not an element of %2 (0 to %3)").arg(m_element->text(), name).arg(count - 1)});
        item->setFirstColumnSpanned(true);
        return;
    }
    const QList<CellTouch> touches =
        touchesOf(m_report->summary, m_report->sites, m_report->trace, name, element, m_report->blockDim());
    if (touches.isEmpty()) {
        auto *item = new QTreeWidgetItem(
            m_touches, {tr("No thread of the recorded launch touched %1[%2]").arg(name).arg(element)});
        item->setFirstColumnSpanned(true);
        return;
    }
    for (const CellTouch &t : touches) {
        auto *item = new QTreeWidgetItem(
            m_touches,
            {touchVerb(t.kind), QStringLiteral("(%1, %2, %3)").arg(t.block[0]).arg(t.block[1]).arg(t.block[2]),
             QStringLiteral("(%1, %2, %3)").arg(t.thread[0]).arg(t.thread[1]).arg(t.thread[2]),
             QString::number(t.line)});
        item->setData(3, Qt::UserRole, t.line);
    }
}

} // namespace Kp
