#include "checkrunner.h"

#include "check/checkedrun.h"
#include "client/engineclient.h"
#include "project/fieldreader.h"

#include <QCoreApplication>
#include <QHash>
#include <QPointer>

namespace Kp {

namespace {

QHash<QString, BufferView> viewsOf(const QList<std::shared_ptr<HostBuffer>> &buffers)
{
    QHash<QString, BufferView> views;
    for (const auto &b : buffers) {
        if (b) {
            views.insert(b->spec.name, BufferView{b->spec.dtype, b->shape, b->memory.data(), b->byteSize()});
        }
    }
    return views;
}

/**
 * Whether a check reads the buffers as they were before the run: an
 * expression may name them, and a permutation or set compares with one
 * (the others need only the shapes).
 */
bool readsInitialContents(const Project &project)
{
    for (const CheckSpec &c : project.checks) {
        if (c.kind == CheckSpec::Kind::Expected || (c.isCollection() && !c.otherFromReference)) {
            return true;
        }
    }
    return false;
}

} // namespace

CheckRunner::CheckRunner(QObject *parent)
    : QObject(parent)
{
    // One check job at a time: a new run's checks wait for the old ones
    // (which they then drop) instead of reading the same buffers twice.
    m_pool.setMaxThreadCount(1);
}

CheckRunner::~CheckRunner()
{
    ++m_ticket;
    m_pool.waitForDone();
}

bool CheckRunner::needsMoreRuns(const Project &project)
{
    for (const CheckSpec &c : project.checks) {
        if (c.needsReference() || c.seeds > 1) {
            return true;
        }
    }
    return false;
}

QList<CheckOutcome> CheckRunner::evaluateOnHost(const Project &project, const HostBuffers &initial,
                                                const QList<std::shared_ptr<HostBuffer>> &after, bool pendingOthers,
                                                const QString &printed, bool printedTruncated)
{
    QList<CheckOutcome> out;
    CheckData data;
    data.printed = printed;
    data.printedTruncated = printedTruncated;
    data.after = viewsOf(after);
    data.initial = viewsOf(initial.all());
    data.variables = expressionVariables(project, initial);
    data.projectDir = project.dir();
    const Result<QStringList> valid = validateChecks(project, data.after, data.variables);
    for (qsizetype i = 0; i < project.checks.size(); ++i) {
        const CheckSpec &c = project.checks[i];
        CheckOutcome o;
        o.result = checkResultHead(c);
        if (!valid) {
            o.result.error = valid.error();
            out << o;
            continue;
        }
        if (c.needsReference()) {
            o.pending = pendingOthers;
            if (!pendingOthers) {
                o.result.error = Error{QStringLiteral("check"),
                                       Error::Code::NoDevice,
                                       {},
                                       QStringLiteral("needs the reference run, which needs a GPU")};
            }
            out << o;
            continue;
        }
        auto mask = std::make_shared<QByteArray>();
        data.failedMask = mask.get();
        const Result<CheckResult> r = evaluateCheck(c, data, 0, jsonIndexPath(QStringLiteral("checks"), i));
        data.failedMask = nullptr;
        if (!r) {
            o.result.error = r.error();
        } else {
            o.result = *r;
            o.failedMask = std::move(mask);
            // Passing run 0 says nothing yet about the other seeds.
            o.pending = pendingOthers && r->passed && c.seeds > 1;
        }
        out << o;
    }
    return out;
}

void CheckRunner::clear()
{
    ++m_ticket;
    m_busy = false;
    if (!m_outcomes.isEmpty()) {
        m_outcomes.clear();
        Q_EMIT evaluated(m_outcomes);
    }
}

void CheckRunner::evaluate(const Project &project, const QList<std::shared_ptr<HostBuffer>> &buffers, int device,
                           const RunResult *run)
{
    // A "printed" check reads the run's device printf output, every step's in order.
    QString printed;
    bool printedTruncated = false;
    if (run) {
        for (const StepResult &step : run->steps) {
            printed += step.printfOutput;
            printedTruncated = printedTruncated || step.printfTruncated;
        }
    }
    clear();
    if (project.checks.isEmpty()) {
        return;
    }
    const quint64 ticket = m_ticket;
    m_busy = true;
    m_outcomes.clear();
    for (const CheckSpec &c : project.checks) {
        CheckOutcome o;
        o.result = checkResultHead(c);
        o.pending = true;
        m_outcomes << o;
    }
    Q_EMIT started(int(project.checks.size()));
    Q_EMIT evaluated(m_outcomes);
    const bool more = needsMoreRuns(project);
    QList<quint64> generations;
    for (const auto &b : buffers) {
        generations << (b ? b->generation : 0);
    }
    QPointer<CheckRunner> guard(this);
    m_pool.start([guard, project, buffers, generations, ticket, device, more, printed, printedTruncated] {
        // The run started from each buffer's init: refilling gives its inputs.
        HostBuffers initial;
        const Status filled = initial.materialize(
            project, true, readsInitialContents(project) ? HostBuffers::Fill::Contents : HostBuffers::Fill::ShapesOnly);
        QList<CheckOutcome> outcomes;
        if (filled) {
            outcomes = evaluateOnHost(project, initial, buffers, more, printed, printedTruncated);
        } else {
            for (const CheckSpec &c : project.checks) {
                CheckOutcome o;
                o.result = checkResultHead(c);
                o.result.error = filled.error();
                outcomes << o;
            }
        }
        QMetaObject::invokeMethod(
            qApp,
            [guard, project, buffers, generations, ticket, device, more, outcomes] {
                if (!guard || guard->m_ticket != ticket) {
                    return;
                }
                // A run that wrote the buffers meanwhile makes these results stale.
                for (qsizetype i = 0; i < buffers.size(); ++i) {
                    if (buffers[i] && buffers[i]->generation != generations[i]) {
                        // No new run cleared them (the ticket holds), so no
                        // one else will say the checks are over: say it here.
                        guard->clear();
                        Q_EMIT guard->finished();
                        return;
                    }
                }
                guard->m_outcomes = outcomes;
                bool pending = false;
                for (const CheckOutcome &o : outcomes) {
                    pending = pending || o.pending;
                }
                Q_EMIT guard->evaluated(guard->m_outcomes);
                if (pending && more) {
                    guard->runMore(project, device, ticket);
                } else {
                    guard->m_busy = false;
                    Q_EMIT guard->finished();
                }
            },
            Qt::QueuedConnection);
    });
}

void CheckRunner::runMore(const Project &project, int device, quint64 ticket)
{
    Q_EMIT message(tr("Checks: running the reference and seed runs on GPU %1…").arg(device));
    QPointer<CheckRunner> guard(this);
    m_pool.start([guard, project, device, ticket] {
        CheckedRun run;
        {
            // A worker of its own: a faulting reference costs the GUI's worker nothing.
            EngineClient engine;
            CheckedRunOptions options;
            options.device = device;
            options.timing = false;
            run = runProjectWithChecks(project, &engine, options);
        }
        QMetaObject::invokeMethod(
            qApp,
            [guard, ticket, run] {
                if (!guard || guard->m_ticket != ticket) {
                    return;
                }
                for (qsizetype i = 0; i < guard->m_outcomes.size(); ++i) {
                    CheckOutcome &o = guard->m_outcomes[i];
                    if (!o.pending) {
                        continue; // decided on the GUI's own run (and the seed runs agree on run 0)
                    }
                    o.pending = false;
                    if (i < run.checks.size()) {
                        std::shared_ptr<const QByteArray> mask = o.failedMask;
                        o.result = run.checks[i];
                        // The mask is of the GUI's run: it stays only while it describes that run.
                        if (o.result.seedRun != 0 || o.result.kind == CheckSpec::Kind::Reference) {
                            mask.reset();
                        }
                        o.failedMask = mask;
                    } else {
                        o.result.error = run.error.value_or(Error{QStringLiteral("check"),
                                                                  Error::Code::Internal,
                                                                  {},
                                                                  QStringLiteral("the check run gave no result")});
                    }
                }
                if (run.error) {
                    Q_EMIT guard->message(tr("Checks: %1").arg(run.error->message));
                }
                guard->m_busy = false;
                Q_EMIT guard->evaluated(guard->m_outcomes);
                Q_EMIT guard->finished();
            },
            Qt::QueuedConnection);
    });
}

} // namespace Kp
