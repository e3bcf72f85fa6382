// The Inspector as the window's dock: how it follows the Workbench (runs,
// checks, memory checks, navigation). The widget itself is in
// bufferinspector.cpp and needs no Workbench (tests and benchmarks build it
// alone).

#include "bufferinspector.h"

#include "workbench/checkrunner.h"
#include "workbench/memorycheck.h"
#include "workbench/projectdocument.h"
#include "workbench/runcontroller.h"
#include "workbench/workbench.h"

#include <QTimer>

namespace Kp {

namespace {

/** Each buffer's element count, for masks of findings. */
QHash<QString, qint64> elementCounts(const ProjectDocument &doc)
{
    QHash<QString, qint64> counts;
    for (const auto &b : doc.hostBuffers().all()) {
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
    connect(&doc, &ProjectDocument::loaded, this, [this, &doc, showAll] {
        showAll();
        clearFailedCells();
        if (!doc.hostBuffers().all().isEmpty()) {
            showBuffer(doc.hostBuffers().all().first()->spec.name);
        }
    });
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
        // the event loop, so it adds nothing to the chart's stall.
        QTimer::singleShot(0, this, &BufferInspector::afterRun);
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
}

} // namespace Kp
