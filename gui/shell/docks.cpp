#include "docks.h"

#include "chartpanels.h"

#include "editor/ptxview.h"
#include "panels/access/accesspanel.h"
#include "panels/buffers/bufferspanel.h"
#include "panels/checks/checkspanel.h"
#include "panels/description/descriptionview.h"
#include "panels/inspector/bufferinspector.h"
#include "panels/kernels/kernelstable.h"
#include "panels/launch/launchpanel.h"
#include "panels/log/logpanel.h"
#include "panels/memory/memorypanel.h"
#include "panels/problems/problemspanel.h"
#include "panels/project/projectpanel.h"
#include "panels/ptx/ptxdocks.h"
#include "panels/sweep/sweeppanel.h"
#include "workbench/checkrunner.h"
#include "workbench/runcontroller.h"

#include <QAction>
#include <QDockWidget>
#include <QMainWindow>
#include <QScrollArea>
#include <QTimer>

#include <algorithm>
#include <functional>
#include <optional>

namespace Kp {

namespace {

struct DockRow
{
    PanelId id;
    const char *title;
    const char *name; ///< --show's name; the dock is "<name>Dock" (saved layouts and tests know it so)
    Qt::DockWidgetArea area;
    std::optional<PanelId> tabWith; ///< shares tabs with this dock (built before it)
    std::function<QWidget *(Workbench &, QWidget *)> make;
    const char *panelName = nullptr; ///< the panel's object name, where tests and screenshots look for it
    bool scrolls = false;            ///< in a scroll area, so its controls never raise the window's minimum size
};

template<typename Panel> QWidget *make(Workbench &wb, QWidget *parent)
{
    return new Panel(wb, parent);
}

/** A panel drawn with Qt Charts, from its module (chartpanels.h). */
template<PanelId id> QWidget *makeChart(Workbench &wb, QWidget *parent)
{
    return makeChartPanel(id, wb, parent);
}

// The table: one row per dock, in the order they are built (the View menu
// lists them so). The launch panel takes the left edge from top to bottom;
// compile output and the run's story share the bottom, views of code and
// memory the right.
const std::vector<DockRow> &table()
{
    static const std::vector<DockRow> rows = {
        {PanelId::Problems,
         QT_TRANSLATE_NOOP("Docks", "Problems"),
         "problems",
         Qt::BottomDockWidgetArea,
         {},
         make<ProblemsPanel>},
        {PanelId::Kernels, QT_TRANSLATE_NOOP("Docks", "Kernels"), "kernels", Qt::BottomDockWidgetArea,
         PanelId::Problems, make<KernelsTable>},
        {PanelId::Ptx, QT_TRANSLATE_NOOP("Docks", "PTX"), "ptx", Qt::RightDockWidgetArea, {}, makePtxPanel},
        {PanelId::Sass, QT_TRANSLATE_NOOP("Docks", "SASS"), "sass", Qt::RightDockWidgetArea, PanelId::Ptx,
         makeSassPanel},
        {PanelId::Launch,
         QT_TRANSLATE_NOOP("Docks", "Launch"),
         "launch",
         Qt::LeftDockWidgetArea,
         {},
         make<LaunchPanel>,
         "launchPanel"},
        {PanelId::Buffers, QT_TRANSLATE_NOOP("Docks", "Buffers"), "buffers", Qt::BottomDockWidgetArea, PanelId::Kernels,
         make<BuffersPanel>},
        {PanelId::Inspector, QT_TRANSLATE_NOOP("Docks", "Inspector"), "inspector", Qt::RightDockWidgetArea,
         PanelId::Sass, make<BufferInspector>, "inspector"},
        {PanelId::Results, QT_TRANSLATE_NOOP("Docks", "Results"), "results", Qt::BottomDockWidgetArea, PanelId::Buffers,
         makeChart<PanelId::Results>, "results"},
        {PanelId::Log, QT_TRANSLATE_NOOP("Docks", "Log"), "log", Qt::BottomDockWidgetArea, PanelId::Results,
         make<LogPanel>},
        {PanelId::Checks, QT_TRANSLATE_NOOP("Docks", "Checks"), "checks", Qt::BottomDockWidgetArea, PanelId::Results,
         make<ChecksPanel>, "checks"},
        {PanelId::Description, QT_TRANSLATE_NOOP("Docks", "Description"), "description", Qt::LeftDockWidgetArea,
         PanelId::Launch, make<DescriptionView>},
        {PanelId::Project, QT_TRANSLATE_NOOP("Docks", "Project"), "project", Qt::LeftDockWidgetArea,
         PanelId::Description, make<ProjectPanel>, "projectPanel", true},
        {PanelId::Sweep, QT_TRANSLATE_NOOP("Docks", "Sweep"), "sweep", Qt::BottomDockWidgetArea, PanelId::Log,
         make<SweepPanel>, nullptr, true},
        {PanelId::Occupancy, QT_TRANSLATE_NOOP("Docks", "Occupancy"), "occupancy", Qt::RightDockWidgetArea,
         PanelId::Inspector, makeChart<PanelId::Occupancy>, "occupancy"},
        {PanelId::Compare, QT_TRANSLATE_NOOP("Docks", "Compare"), "compare", Qt::BottomDockWidgetArea, PanelId::Results,
         makeChart<PanelId::Compare>, "compare"},
        {PanelId::Memory, QT_TRANSLATE_NOOP("Docks", "Memory"), "memory", Qt::BottomDockWidgetArea, PanelId::Log,
         make<MemoryPanel>, "memory"},
        {PanelId::MemoryAccess, QT_TRANSLATE_NOOP("Docks", "Memory Access"), "access", Qt::BottomDockWidgetArea,
         PanelId::Log, make<AccessPanel>, "access", true},
    };
    return rows;
}

/** How much a kind of news outranks another within one run; UserAsked always comes forward. */
int rank(Attention why)
{
    switch (why) {
    case Attention::RunResult: return 1;
    case Attention::GuardHit: return 2;
    case Attention::Findings: return 2;
    case Attention::CheckFailed: return 3;
    case Attention::UserAsked: return 4;
    }
    return 0;
}

const DockRow &rowOf(PanelId id)
{
    const std::vector<DockRow> &rows = table();
    return *std::find_if(rows.begin(), rows.end(), [id](const DockRow &r) { return r.id == id; });
}

} // namespace

Docks::Docks(Workbench &wb, QMainWindow *window)
    : QObject(window)
    , m_wb(wb)
{
    for (const DockRow &row : table()) {
        const QString title = tr(row.title);
        auto *dock = new QDockWidget(title, window);
        dock->setObjectName(QString::fromLatin1(row.name) + QStringLiteral("Dock"));
        window->addDockWidget(row.area, dock);
        if (row.tabWith) {
            window->tabifyDockWidget(m_docks.value(*row.tabWith), dock);
        }
        // The View menu shows the title as it is: "&" is a mnemonic marker in menu text.
        dock->toggleViewAction()->setText(QString(title).replace(QLatin1Char('&'), QStringLiteral("&&")));
        m_docks.insert(row.id, dock);
        m_order << dock;
        const PanelId id = row.id;
        connect(dock, &QDockWidget::visibilityChanged, this, [this, id](bool visible) {
            if (visible && !m_awaitingPaint) {
                build(id);
            }
        });
    }
    // In front at the start: the launch, the inspector and the log.
    for (PanelId id : {PanelId::Launch, PanelId::Inspector, PanelId::Log}) {
        m_docks.value(id)->raise();
    }
    // Memory Access opens when asked for (Build > Analyze Memory Access…, the
    // View menu): an eleventh tab at the bottom would cut every tab's title at
    // 1024 pixels. A saved layout that has it open opens it.
    m_docks.value(PanelId::MemoryAccess)->hide();
    // Work that panels report on builds them all first. These are the first
    // receivers of the signals (connected before any panel), so a panel built
    // here misses only this one emission: a start, whose news a new panel
    // shows anyway. A request to one panel is handed to it here when this
    // emission built it.
    connect(&wb.runs(), &RunController::started, this, &Docks::buildAll);
    connect(&wb.checks(), &CheckRunner::started, this, &Docks::buildAll);
    connect(&wb, &Workbench::memoryCheckStarted, this, &Docks::buildAll);
    connect(&wb, &Workbench::accessStarted, this, &Docks::buildAll);
    connect(&wb, &Workbench::compareRequested, this, [this](int a, int b) {
        if (!isBuilt(PanelId::Compare)) {
            // By name: the panel is in the chart module (chartpanels.h).
            QMetaObject::invokeMethod(panel(PanelId::Compare), "compareRows", Q_ARG(int, a), Q_ARG(int, b));
        }
    });
    connect(&wb, &Workbench::showTouches, this, [this](const QString &buffer, qint64 element) {
        if (!isBuilt(PanelId::MemoryAccess)) {
            panel<AccessPanel>(PanelId::MemoryAccess)->showTouches(buffer, element);
        }
    });
    connect(&wb, &Workbench::attention, this, &Docks::attend);
    // Each run's news starts afresh.
    connect(&wb.runs(), &RunController::started, this, [this] { m_rank = 0; });
}

void Docks::build(PanelId id)
{
    if (m_panels.contains(id) || !m_docks.contains(id)) {
        return;
    }
    const DockRow &row = rowOf(id);
    QDockWidget *dock = m_docks.value(id);
    QWidget *panel = row.make(m_wb, dock);
    if (row.panelName) {
        panel->setObjectName(QString::fromLatin1(row.panelName));
    }
    m_panels.insert(id, panel); // before setWidget: showing it may ask for the panel again
    if (row.scrolls) {
        auto *scroll = new QScrollArea(dock);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        scroll->setWidget(panel);
        dock->setWidget(scroll);
    } else {
        dock->setWidget(panel);
    }
    Q_EMIT panelBuilt(id, panel);
}

QWidget *Docks::panel(PanelId id)
{
    build(id);
    return m_panels.value(id);
}

void Docks::buildAll()
{
    if (allBuiltNow()) {
        return;
    }
    for (const DockRow &row : table()) {
        build(row.id);
    }
    Q_EMIT allBuilt();
}

void Docks::waitForFirstPaint()
{
    m_awaitingPaint = true;
}

void Docks::windowPainted()
{
    if (!m_awaitingPaint) {
        return;
    }
    // The panels in sight now; then the ones behind tabs, one a turn of the
    // event loop, so the first compile's answer and the user's keys never
    // wait for more than one panel. (A panel's arrival shows and hides its
    // neighbours' docks on the way: those wait their turn too.)
    QList<PanelId> inSight;
    for (QDockWidget *dock : std::as_const(m_order)) {
        if (!dock->visibleRegion().isEmpty()) {
            inSight << m_docks.key(dock);
        }
    }
    for (PanelId id : std::as_const(inSight)) {
        build(id);
    }
    m_awaitingPaint = false;
    buildNextLater();
}

void Docks::buildNextLater()
{
    QTimer::singleShot(0, this, [this] {
        const std::vector<DockRow> &rows = table();
        const auto next = std::find_if(rows.begin(), rows.end(), [this](const DockRow &r) { return !isBuilt(r.id); });
        if (next == rows.end()) {
            return; // buildAll() came first and said so
        }
        build(next->id);
        if (allBuiltNow()) {
            Q_EMIT allBuilt();
        } else {
            buildNextLater();
        }
    });
}

std::optional<PanelId> Docks::fromName(const QString &name)
{
    if (name == QLatin1String("timeline")) {
        return PanelId::Results; // the Results panel's Timeline tab (docs/streams.md)
    }
    for (const DockRow &row : table()) {
        if (name == QLatin1String(row.name)) {
            return row.id;
        }
    }
    return std::nullopt;
}

QStringList Docks::names()
{
    QStringList out;
    for (const DockRow &row : table()) {
        out << QString::fromLatin1(row.name);
    }
    out.insert(out.indexOf(QStringLiteral("description")) + 1, QStringLiteral("timeline"));
    return out;
}

void Docks::attend(PanelId id, Attention why)
{
    QDockWidget *dock = m_docks.value(id);
    if (!dock) {
        return;
    }
    const int r = rank(why);
    if (why != Attention::UserAsked && r < m_rank) {
        return; // more important news of this run is in front
    }
    if (why != Attention::UserAsked) {
        m_rank = r;
    }
    // A run's result and a failed check come forward among their tabs; a
    // write outside a buffer, findings and what the user asked for also
    // reopen a closed dock.
    if (why != Attention::RunResult && why != Attention::CheckFailed) {
        dock->show();
    }
    dock->raise();
}

} // namespace Kp
