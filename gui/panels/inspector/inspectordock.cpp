// The Inspector as the window's dock: how it follows the Workbench (runs,
// checks, memory checks, navigation). The widget itself is in
// bufferinspector.cpp and needs no Workbench (tests and benchmarks build it
// alone).

#include "bufferinspector.h"
#include "imageview.h"

#include "access/accessrun.h"
#include "workbench/accessmap.h"
#include "workbench/checkrunner.h"
#include "workbench/memorycheck.h"
#include "workbench/projectdocument.h"
#include "workbench/runcontroller.h"
#include "workbench/workbench.h"

#include <QAction>
#include <QActionGroup>
#include <QMenu>
#include <QTableView>

#include <algorithm>

namespace Kp {

namespace {

/** Each buffer's element count, for masks of findings. */
QHash<QString, qint64> elementCounts(const ProjectDocument &doc)
{
    QHash<QString, qint64> counts;
    for (const auto &b : doc.bufferShapes().all()) {
        counts.insert(b->spec.name, b->elementCount());
    }
    return counts;
}

} // namespace

BufferInspector::BufferInspector(Workbench &wb, QWidget *parent)
    : BufferInspector(parent)
{
    ProjectDocument &doc = wb.document();
    RunController &runs = wb.runs();
    const auto showAll = [this, &doc] { setBuffers(doc.hostBuffers().all()); };
    connect(&doc, &ProjectDocument::buffersChanged, this, [this, &runs, showAll] {
        if (!runs.isRunning()) {
            showAll();
        }
    });
    const auto showFirst = [this, &doc, showAll] {
        showAll();
        if (!doc.hostBuffers().all().isEmpty()) {
            showBuffer(doc.hostBuffers().all().first()->spec.name);
        }
    };
    connect(&doc, &ProjectDocument::loaded, this, [this, showFirst] {
        showFirst();
        clearFailedCells();
    });
    if (doc.isOpen()) {
        showFirst(); // built after the project opened (after the window's first paint)
    }
    // The buffers are refilled off the GUI thread: let go of them until the launch.
    connect(&runs, &RunController::buffersReleased, this, [this] { setBuffers({}); });
    connect(&runs, &RunController::launching, this, [this, showAll] {
        showAll();
        beforeRun();
    });
    // Failing cells of the last run no longer describe buffers about to change.
    connect(&runs, &RunController::started, this, &BufferInspector::clearFailedCells);
    connect(&runs, &RunController::failed, this, showAll);
    connect(&wb, &Workbench::runFinished, this, [this, &doc, showAll](const RunResult &r) {
        showAll();
        if (!r.steps.isEmpty()) {
            setLaunch(r.steps.first().grid, r.steps.first().block);
        }
        // The refresh (statistics, image conversion) takes its own turn of
        // the event loop, so it adds nothing to the chart's stall, and is
        // one with the refresh showAll()'s setBuffers() scheduled.
        afterRunLater();
        // A write outside a buffer marks the buffer's edge element it went past.
        QHash<QString, QByteArray> masks;
        for (const GuardViolation &v : r.guardViolations) {
            const HostBuffer *b = doc.hostBuffers().find(v.buffer);
            const qint64 n = b ? b->elementCount() : 0;
            if (n <= 0) {
                continue;
            }
            QByteArray &m = masks[v.buffer];
            if (m.isEmpty()) {
                m = QByteArray(n, '\0');
            }
            m[qMin(v.edgeElement(), n - 1)] = 1;
        }
        for (auto it = masks.cbegin(); it != masks.cend(); ++it) {
            setFailedCells(it.key(), tr("Guard zones (last run)"), std::make_shared<const QByteArray>(it.value()));
        }
    });
    connect(&wb.checks(), &CheckRunner::evaluated, this, [this](const QList<CheckOutcome> &outcomes) {
        for (const CheckOutcome &o : outcomes) {
            if (o.failedMask && !o.result.passed) {
                setFailedCells(o.result.buffer, o.result.name, o.failedMask);
            }
        }
    });
    connect(&wb, &Workbench::memoryCheckFinished, this, [this, &doc](const SanitizedRun &run, Sanitizer::Tool tool) {
        if (!run.report) {
            return;
        }
        // The cells the findings touched, red as a failed check's are.
        const QString label = tr("Check memory (%1)").arg(Sanitizer::toolName(tool));
        const QHash<QString, QByteArray> masks = sanitizerMasks(*run.report, elementCounts(doc));
        for (auto it = masks.cbegin(); it != masks.cend(); ++it) {
            setFailedCells(it.key(), label, std::make_shared<const QByteArray>(it.value()));
        }
        if (!masks.isEmpty()) {
            showFailedCells(label);
        }
    });
    connect(&wb, &Workbench::showBuffer, this,
            [this, &doc, showAll](const QString &name, InspectorView view, qint64 element) {
                showAll();
                showBuffer(name);
                setCurrentTab(view == InspectorView::Image  ? Tab::Image
                              : view == InspectorView::Diff ? Tab::Diff
                                                            : Tab::Grid);
                const HostBuffer *b = doc.hostBuffers().find(name);
                if (element >= 0 && b && b->elementCount() > 0) {
                    // Past the end there is no cell: the last one is the nearest.
                    goTo(QString::number(qBound<qint64>(0, element, b->elementCount() - 1)));
                }
            });
    connect(&wb, &Workbench::showFailedCellsOf, this, [this, &wb](const QString &check, const QString &buffer) {
        if (showFailedCells(check)) {
            wb.requestAttention(PanelId::Inspector, Attention::UserAsked);
        } else {
            wb.requestBuffer(buffer);
        }
    });
    followAccess(wb);
}

void BufferInspector::followAccess(Workbench &wb)
{
    // "Who touched this cell?" asks the Memory Access panel, which lists the
    // threads from the current access report (one implementation of it).
    // The cell is the grid's current one, or the image's pixel right-clicked.
    auto *who = new QAction(tr("Who touched this cell?"), this);
    who->setObjectName(QStringLiteral("whoTouched"));
    auto picked = std::make_shared<qint64>(-1);
    const auto update = [this, who, &wb, picked] {
        const std::shared_ptr<const AccessReport> r = wb.access().last();
        const QString name = currentBufferName();
        const qint64 element = *picked;
        QString why;
        if (!r) {
            why = tr("Analyze Memory Access first: it records which threads touched which cells in one launch");
        } else {
            const auto b = std::find_if(r->summary.bufferList.cbegin(), r->summary.bufferList.cend(),
                                        [&](const TraceBuffer &t) { return t.name == name; });
            const qint64 count = b == r->summary.bufferList.cend() ? 0 : b->bytes / std::max(1, b->elementBytes);
            if (b == r->summary.bufferList.cend()) {
                why = tr("%1 was not a buffer of the analysed launch").arg(name);
            } else if (element < 0) {
                why = tr("Choose a cell of %1 first").arg(name);
            } else if (element >= count) {
                why = tr("%1[%2] is past the %3 elements the analysed launch had").arg(name).arg(element).arg(count);
            }
        }
        who->setEnabled(why.isEmpty());
        who->setToolTip(why.isEmpty() ? tr("List the threads of the analysed launch (step %1) that read or wrote "
                                           "%2[%3], in the Memory Access panel")
                                            .arg(r->step + 1)
                                            .arg(name)
                                            .arg(element)
                                      : why);
    };
    const auto fromGrid = [this, picked, update] {
        *picked = m_model->flatIndex(m_gridView->currentIndex());
        update();
    };
    connect(m_gridView->selectionModel(), &QItemSelectionModel::currentChanged, who, fromGrid);
    connect(m_model, &QAbstractItemModel::modelReset, who, fromGrid);
    connect(&wb.access(), &AccessMap::reportChanged, who, update);
    // Colour the cells by who touched them: one action group, values by default.
    auto *colourBy = new QActionGroup(this);
    colourBy->setExclusive(true);
    const std::pair<const char *, QString> modes[] = {{"colourByValues", tr("Colour by value")},
                                                      {"colourByThread", tr("Colour by the thread that wrote")},
                                                      {"colourByWarp", tr("Colour by the warp that wrote")},
                                                      {"colourByFirstAccess", tr("Colour by first access")}};
    for (const auto &[name, text] : modes) {
        auto *a = colourBy->addAction(text);
        a->setObjectName(QString::fromLatin1(name));
        a->setCheckable(true);
    }
    colourBy->actions().first()->setChecked(true);
    struct Applied
    {
        // Not a raw pointer: a new report may be allocated where a freed one was.
        std::weak_ptr<const AccessReport> report;
        QString buffer;
        std::shared_ptr<const CellOwners> owners;
        int mode = 0;
    };
    auto applied = std::make_shared<Applied>();
    const auto applyOwners = [this, &wb, colourBy, applied] {
        const std::shared_ptr<const AccessReport> r = wb.access().last();
        const QString name = currentBufferName();
        const int mode = int(colourBy->actions().indexOf(colourBy->checkedAction()));
        const auto traced = r ? std::find_if(r->summary.bufferList.cbegin(), r->summary.bufferList.cend(),
                                             [&](const TraceBuffer &t) { return t.name == name; })
                              : QList<TraceBuffer>::const_iterator();
        const bool recorded = r && traced != r->summary.bufferList.cend();
        const qint64 cells = recorded ? traced->bytes / std::max(1, traced->elementBytes) : 0;
        const bool covers = recorded && cells <= kMaxOwnerCells;
        for (QAction *a : colourBy->actions().mid(1)) {
            a->setEnabled(covers);
            a->setToolTip(
                covers     ? tr("From the analysed launch (step %1); untouched cells keep no colour").arg(r->step + 1)
                : recorded ? tr("%1 has %2 elements; colouring by who touched them covers buffers of up to %3")
                                 .arg(name)
                                 .arg(cells)
                                 .arg(kMaxOwnerCells)
                           : tr("Analyze Memory Access of a launch that uses %1 first").arg(name));
        }
        std::shared_ptr<const CellOwners> owners;
        if (covers && mode > 0) {
            if (applied->report.lock() == r && applied->buffer == name && applied->owners) {
                owners = applied->owners;
            } else {
                const std::array<quint32, 3> grid{quint32(r->grid[0]), quint32(r->grid[1]), quint32(r->grid[2])};
                const Result<CellOwners> o = cellOwners(r->summary, r->sites, r->trace, name, grid, r->blockDim());
                owners = o ? std::make_shared<const CellOwners>(*o) : nullptr;
            }
        }
        if (owners == applied->owners && mode == applied->mode) {
            return; // nothing changed: the image keeps its view and cache
        }
        applied->report = r;
        applied->buffer = name;
        applied->owners = owners;
        applied->mode = mode;
        const OwnerColour colour = mode == 2   ? OwnerColour::Warp
                                   : mode == 3 ? OwnerColour::FirstAccess
                                               : OwnerColour::Thread;
        m_model->setOwners(owners, colour);
        m_image->setOwners(owners, colour);
    };
    connect(colourBy, &QActionGroup::triggered, this, applyOwners);
    connect(&wb.access(), &AccessMap::reportChanged, this, applyOwners);
    connect(m_model, &QAbstractItemModel::modelReset, this, applyOwners);

    // A popup, not exec(): the menu does not hold the event loop (and tests can reach it).
    const auto popup = [who, colourBy, applyOwners](QWidget *view, QPoint pos) {
        applyOwners(); // the entries' enabled state for the buffer shown now
        auto *menu = new QMenu(view);
        menu->setObjectName(QStringLiteral("cellMenu"));
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->setToolTipsVisible(true); // a disabled entry says why
        menu->addAction(who);
        menu->addSeparator();
        menu->addActions(colourBy->actions());
        menu->popup(view->mapToGlobal(pos));
    };
    m_gridView->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_gridView, &QWidget::customContextMenuRequested, who, [this, popup, fromGrid](const QPoint &pos) {
        const QModelIndex index = m_gridView->indexAt(pos);
        if (index.isValid()) {
            m_gridView->setCurrentIndex(index);
        }
        fromGrid();
        popup(m_gridView->viewport(), pos);
    });
    m_image->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_image, &QWidget::customContextMenuRequested, who, [this, picked, update, popup](const QPoint &pos) {
        *picked = m_image->elementAt(pos);
        update();
        popup(m_image, pos);
    });
    connect(who, &QAction::triggered, this, [this, who, &wb, picked, update] {
        update(); // the buffer shown may have changed since the menu opened
        if (who->isEnabled()) {
            wb.requestTouches(currentBufferName(), *picked);
        }
    });
    update();
}

} // namespace Kp
