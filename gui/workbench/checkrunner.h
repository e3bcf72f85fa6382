#pragma once

#include "check/checkeval.h"
#include "project/project.h"
#include "run/runner.h"

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QString>
#include <QThreadPool>

#include <memory>

namespace Kp {

/** One check as the GUI shows it: the engine's result, and where the GUI's own run was checked, its failing cells. */
struct CheckOutcome
{
    CheckResult result;
    /** Still being decided by the seed or reference runs (result holds run 0's verdict so far, if any). */
    bool pending = false;
    /**
     * One byte per element of the checked buffer, 1 where the check failed,
     * when the check was evaluated on the buffers the inspector shows (seed
     * run 0 of expected and npy checks); null otherwise.
     */
    std::shared_ptr<const QByteArray> failedMask;
};

/**
 * Evaluates a project's checks after a Run, off the GUI thread, with the
 * engine's check code (engine/check, docs/checks.md):
 *
 * 1. At once, on a pool thread: expected and npy checks on the run's own
 *    buffers (seed run 0), against inputs refilled from their inits (a Run
 *    starts from fresh contents, so they are the run's inputs). These are
 *    the cells the inspector shows, so they come with a mask of the failing
 *    elements.
 * 2. Then, when a check compares with the reference run or asks for more
 *    seeds (and has not already failed in step 1): runProjectWithChecks()
 *    on a pool thread with a worker process of its own, untimed, so the
 *    reference and seed runs follow exactly the flow of `kpg run` and `kpg
 *    check` (it runs seed run 0 again for them). Its verdicts replace the
 *    pending ones.
 *
 * A new run (cancel()) drops whatever is in flight: results of old buffers
 * never reach the panel. GUI thread only.
 */
class CheckRunner : public QObject
{
    Q_OBJECT
public:
    explicit CheckRunner(QObject *parent = nullptr);
    /** Waits for work in flight (a GPU check run ends by itself; it is never long). */
    ~CheckRunner() override;

    /**
     * Checks project (as it ran) against buffers, the run's host buffers
     * after it; device is the GPU for the reference and seed runs; run (not
     * kept) gives "printed" checks the device printf output. Does nothing but
     * clear the results for a project without checks.
     */
    void evaluate(const Project &project, const QList<std::shared_ptr<HostBuffer>> &buffers, int device,
                  const RunResult *run = nullptr);
    /** Drops the work in flight and the results (a new run started, another project was loaded). */
    void clear();
    bool isBusy() const { return m_busy; }
    const QList<CheckOutcome> &outcomes() const { return m_outcomes; }

    /**
     * Step 1 on host buffers: expected and npy checks evaluated on after
     * (buffers after the run) against initial (the same buffers before it),
     * each with its mask; reference checks, and checks that ask for more
     * seed runs and passed this one, are marked pending when pendingOthers,
     * else evaluated as far as the host allows (a reference check then
     * carries an error). Bad checks (validateChecks()) give every check that
     * error. Any thread; reads the buffers only.
     */
    static QList<CheckOutcome> evaluateOnHost(const Project &project, const HostBuffers &initial,
                                              const QList<std::shared_ptr<HostBuffer>> &after, bool pendingOthers,
                                              const QString &printed = {}, bool printedTruncated = false);

    /** True when a project's checks need runs besides the one the GUI did (a reference check, seeds > 1). */
    static bool needsMoreRuns(const Project &project);

Q_SIGNALS:
    /** Checks started for a run (count: how many). */
    void started(int count);
    /** Results, partial (some pending) or final; every check of the project, in order. */
    void evaluated(const QList<CheckOutcome> &outcomes);
    /** Everything there is to know about this run's checks is in outcomes(). */
    void finished();
    /** A line for the Log. */
    void message(const QString &text);

private:
    void runMore(const Project &project, int device, quint64 ticket);

    QList<CheckOutcome> m_outcomes;
    quint64 m_ticket = 0;
    bool m_busy = false;
    QThreadPool m_pool;
};

} // namespace Kp
