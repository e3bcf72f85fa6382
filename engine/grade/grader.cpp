#include "grader.h"

#include "check/checkeval.h"
#include "client/engineclient.h"
#include "compile/compiler.h"
#include "run/projectcompile.h"

#include <QElapsedTimer>

#include <condition_variable>
#include <deque>
#include <thread>

namespace Kp::Grade {

namespace {

QString refKey(const QString &exercise, int device)
{
    return exercise + QLatin1Char('#') + QString::number(device);
}

QString diagnosticText(const Diagnostic &d)
{
    return QStringLiteral("%1:%2:%3: %4").arg(d.file).arg(d.line).arg(d.column).arg(d.message);
}

void setCompileErrors(const CompileResult &c, GradeItem *item)
{
    item->outcome = Outcome::CompileError;
    item->compileErrors.clear();
    for (const Diagnostic &d : c.diagnostics) {
        if (d.severity == Diagnostic::Severity::Error) {
            item->compileErrors << diagnosticText(d);
        }
    }
    if (item->compileErrors.isEmpty()) {
        // A crash or time-out of the compiler has a log line but no diagnostic.
        const QString first = c.log.section(QLatin1Char('\n'), 0, 0).trimmed();
        item->compileErrors << (first.isEmpty() ? QStringLiteral("the compile failed") : first);
    }
    item->detail = item->compileErrors.first();
    if (item->compileErrors.size() > 1) {
        item->detail += QStringLiteral(" (and %1 more)").arg(item->compileErrors.size() - 1);
    }
}

QString mismatchText(const CheckResult &r, const CheckMismatch &m)
{
    static const char *const axes[] = {"x", "y", "z"};
    QStringList parts;
    for (int a = 0; a < std::max(r.axes, 1) && a < 3; ++a) {
        parts << QStringLiteral("%1=%2").arg(QLatin1String(axes[a])).arg(m.coords[size_t(a)]);
    }
    if (r.components > 1) {
        parts << QStringLiteral("c=%1").arg(m.component);
    }
    return QStringLiteral("%1[%2] (%3): got %4, expected %5")
        .arg(r.buffer)
        .arg(m.index)
        .arg(parts.join(QStringLiteral(", ")), checkNumberText(m.got), checkNumberText(m.expected));
}

/** An exercise's reference as a submission: its source and launches, with the exercise's checks and timing. */
Project selfTestProject(const Project &p)
{
    Project r = referenceProjectFor(p);
    r.checks = p.checks;
    r.timing = p.timing;
    return r;
}

} // namespace

void classifyRun(const CheckedRun &c, GradeItem *item)
{
    if (c.compiled && !c.compiled->ok) {
        setCompileErrors(*c.compiled, item);
        return;
    }
    if (c.ran && c.run.timed) {
        item->medianMs = c.run.stats.medianMs;
    }
    if (c.error) {
        const Error &e = *c.error;
        item->detail = e.message;
        switch (e.code) {
        case Error::Code::NoDriver:
        case Error::Code::NoDevice:
            // The reason (no driver, no device) is the same for every item; the CLI says it once.
            item->outcome = Outcome::NoGpu;
            item->detail = QStringLiteral("compiled and bound, not run");
            return;
        case Error::Code::Fault:
        case Error::Code::WorkerDied: item->outcome = Outcome::Fault; return;
        case Error::Code::Timeout: item->outcome = Outcome::Timeout; return;
        case Error::Code::CompileError: item->outcome = Outcome::CompileError; return;
        case Error::Code::BadInput:
        case Error::Code::Usage:
            // The exercise was self-tested with its reference, so what is left
            // is the submission not fitting it (a renamed kernel, other
            // parameters); a reference that fails now is grading's trouble.
            if (e.message.contains(QStringLiteral("reference"))) {
                item->outcome = Outcome::Error;
            } else {
                item->outcome = Outcome::Fail;
                item->detail = QStringLiteral("does not fit the exercise: ") + e.message;
            }
            return;
        default: item->outcome = Outcome::Error; return;
        }
    }
    for (const CheckResult &r : c.checks) {
        if (r.passed) {
            continue;
        }
        item->outcome = Outcome::Fail;
        item->failedCheck = r.name;
        if (r.error) {
            item->detail = QStringLiteral("check '%1' not evaluated: %2").arg(r.name, r.error->message);
        } else {
            item->detail = QStringLiteral("check '%1' failed: %2 of %3 differ (%4 %)%5")
                               .arg(r.name)
                               .arg(r.mismatches)
                               .arg(r.compared)
                               .arg(QString::number(r.mismatchFraction() * 100, 'g', 3),
                                    r.seedRuns > 1 ? QStringLiteral(", seed run %1").arg(r.seedRun) : QString());
            if (!r.first.isEmpty()) {
                item->firstMismatch = mismatchText(r, r.first.first());
            }
        }
        return;
    }
    item->outcome = Outcome::Pass;
}

Grader::Grader(const Lab &lab, GraderOptions options)
    : m_lab(lab)
    , m_options(std::move(options))
{
    m_options.jobs = std::max(1, m_options.jobs);
    m_options.compileJobs = std::max(1, m_options.compileJobs);
}

double Grader::referenceMs(const QString &exercise, int device) const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_referenceMs.value(refKey(exercise, device), std::numeric_limits<double>::quiet_NaN());
}

Status Grader::prepare()
{
    QElapsedTimer clock;
    clock.start();
    const QList<int> devices = m_options.devices.isEmpty() ? QList<int>{0} : m_options.devices;
    std::mutex errorMutex;
    std::optional<Error> firstError;
    auto selfTest = [&](int device) {
        EngineClient engine;
        for (const Exercise &e : m_lab.exercises) {
            if (!e.project.reference || e.project.reference->sourceFile.isEmpty()) {
                continue;
            }
            Project p = selfTestProject(e.project);
            if (m_options.timeoutSeconds > 0) {
                p.killTimeoutSeconds = m_options.timeoutSeconds;
            }
            CheckedRunOptions o;
            o.device = device;
            o.timing = m_options.timing;
            const CheckedRun c = runProjectWithChecks(p, &engine, o);
            GradeItem probe;
            classifyRun(c, &probe);
            const bool noGpu = probe.outcome == Outcome::NoGpu && m_options.devices.isEmpty();
            if (probe.outcome != Outcome::Pass && !noGpu) {
                Error err =
                    c.error ? *c.error : Error{QStringLiteral("grade"), Error::Code::BadInput, {}, probe.detail};
                // A reference that fails or does not compile is the lab's mistake;
                // a compiler or worker that cannot start is this machine's.
                if (probe.outcome != Outcome::Error) {
                    err.code = Error::Code::BadInput;
                }
                const QString what = probe.outcome == Outcome::CompileError
                                         ? probe.compileErrors.join(QStringLiteral("; "))
                                         : probe.detail;
                err.message = QStringLiteral("%1: the reference (%2) does not pass as a submission on GPU %3: %4: %5")
                                  .arg(e.path, e.project.reference->sourceFile)
                                  .arg(device)
                                  .arg(outcomeText(probe.outcome), what);
                std::lock_guard<std::mutex> lock(errorMutex);
                if (!firstError) {
                    firstError = err;
                }
                return;
            }
            if (c.ran && c.run.timed) {
                std::lock_guard<std::mutex> lock(m_mutex);
                m_referenceMs.insert(refKey(e.name, device), c.run.stats.medianMs);
            }
        }
    };
    std::vector<std::thread> threads;
    for (int d : devices) {
        threads.emplace_back(selfTest, d);
    }
    for (std::thread &t : threads) {
        t.join();
    }
    m_prepareMs = double(clock.nsecsElapsed()) / 1e6;
    if (firstError) {
        return *firstError;
    }
    return Unit{};
}

GradeItem Grader::gradeOne(const GradeTask &task, int device, EngineClient *engine)
{
    GradeItem item;
    item.student = task.student;
    item.exercise = task.exercise->name;
    item.sha256 = task.submission.sha256;
    item.device = m_options.devices.isEmpty() ? -1 : device;
    const Project &ex = task.exercise->project;
    item.minSpeedup = ex.grading ? ex.grading->minSpeedup : 0;

    Project p = ex;
    if (m_options.timeoutSeconds > 0) {
        p.killTimeoutSeconds = m_options.timeoutSeconds;
    }
    CheckedRunOptions o;
    o.device = device;
    o.timing = m_options.timing;
    o.checks = m_options.checks;
    o.replacementSource = task.submission.source;
    o.replacementFileName = task.exercise->name + QStringLiteral(".cu");
    QElapsedTimer clock;
    clock.start();
    const CheckedRun c = runProjectWithChecks(p, engine, o);
    item.runMs = double(clock.nsecsElapsed()) / 1e6;
    classifyRun(c, &item);
    if (std::isfinite(item.medianMs) && item.medianMs > 0) {
        item.referenceMs = referenceMs(item.exercise, device);
        if (std::isfinite(item.referenceMs)) {
            item.speedRatio = item.referenceMs / item.medianMs;
        }
    }
    if (item.outcome == Outcome::Pass && item.minSpeedup > 0 && m_options.timing) {
        if (!std::isfinite(item.speedRatio)) {
            item.outcome = Outcome::Error;
            item.detail = QStringLiteral("the speed target %1x cannot be judged: no reference time on GPU %2")
                              .arg(item.minSpeedup)
                              .arg(device);
        } else if (item.speedRatio < item.minSpeedup) {
            item.outcome = Outcome::Slow;
            item.detail = QStringLiteral("%1x the reference's speed; the exercise asks for at least %2x")
                              .arg(QString::number(item.speedRatio, 'f', 2))
                              .arg(item.minSpeedup);
        }
    }
    return item;
}

void Grader::run(const QList<GradeTask> &tasks, const std::function<void(const GradeItem &)> &onDone)
{
    std::mutex doneMutex;
    auto finish = [&](const GradeItem &item) {
        std::lock_guard<std::mutex> lock(doneMutex);
        onDone(item);
    };

    // Stage 1: read results that need no compile, compile the rest ahead of
    // the runners. The runner's own compile of the same source is then a
    // compile-cache hit, so compiles overlap with runs; a compile error is
    // final here and never occupies a GPU.
    std::mutex queueMutex;
    std::condition_variable queueReady;
    std::deque<std::pair<const GradeTask *, double>> ready; // task, compile ms
    int compilersLeft = m_options.compileJobs;
    std::atomic<qsizetype> next{0};

    auto compileStage = [&] {
        Compiler compiler;
        for (;;) {
            const qsizetype k = next.fetch_add(1);
            if (k >= tasks.size()) {
                break;
            }
            const GradeTask &t = tasks[k];
            GradeItem item;
            item.student = t.student;
            item.exercise = t.exercise->name;
            item.sha256 = t.submission.sha256;
            item.minSpeedup = t.exercise->project.grading ? t.exercise->project.grading->minSpeedup : 0;
            if (t.submission.state == Submission::State::Missing) {
                item.outcome = Outcome::NotSubmitted;
                item.detail = t.submission.path + QStringLiteral(" is missing");
                finish(item);
                continue;
            }
            if (t.submission.state == Submission::State::Refused) {
                item.outcome = Outcome::Refused;
                item.detail = t.submission.path + QStringLiteral(": ") + t.submission.why;
                finish(item);
                continue;
            }
            Project p = t.exercise->project;
            p.sourceText = t.submission.source;
            p.sourceFile = t.exercise->name + QStringLiteral(".cu");
            QElapsedTimer clock;
            clock.start();
            const Result<CompileResult> r =
                compiler.compile(compileRequestFor(p, m_options.ccMajor, m_options.ccMinor));
            const double compileMs = double(clock.nsecsElapsed()) / 1e6;
            ++m_stats.compiled;
            if (r && !r->ok) {
                setCompileErrors(*r, &item);
                item.compileMs = compileMs;
                finish(item);
                continue;
            }
            std::lock_guard<std::mutex> lock(queueMutex);
            ready.emplace_back(&t, compileMs);
            queueReady.notify_one();
        }
        std::lock_guard<std::mutex> lock(queueMutex);
        --compilersLeft;
        queueReady.notify_all();
    };

    // Stage 2: one runner per job, each with its own worker on its GPU.
    auto runner = [&](int job) {
        const int device = m_options.devices.isEmpty() ? 0 : m_options.devices[job % m_options.devices.size()];
        EngineClient engine;
        qint64 lastPid = 0;
        for (;;) {
            std::pair<const GradeTask *, double> work{nullptr, 0};
            {
                std::unique_lock<std::mutex> lock(queueMutex);
                queueReady.wait(lock, [&] { return !ready.empty() || compilersLeft == 0; });
                if (ready.empty()) {
                    return;
                }
                work = ready.front();
                ready.pop_front();
            }
            // A fault or time-out killed the last worker: wait for a fresh
            // one here, so the restart is counted apart from the run.
            double restartMs = 0;
            bool restarted = false;
            if (lastPid != 0 && engine.workerPid() == 0) {
                QElapsedTimer clock;
                clock.start();
                (void)engine.listDevicesSync();
                restartMs = double(clock.nsecsElapsed()) / 1e6;
                restarted = true;
            }
            GradeItem item = gradeOne(*work.first, device, &engine);
            item.compileMs = work.second;
            item.restartMs = restartMs;
            item.workerRestarted = restarted;
            const qint64 pid = engine.workerPid();
            if (pid != 0 && pid != lastPid) {
                ++m_stats.workerStarts;
                // The worker's end may be seen only after the reply that
                // caused it (a time-out answers, then kills): then the next
                // item started the fresh one inside its own run.
                item.workerRestarted = item.workerRestarted || lastPid != 0;
            }
            lastPid = pid != 0 ? pid : lastPid;
            finish(item);
        }
    };

    std::vector<std::thread> threads;
    for (int i = 0; i < m_options.compileJobs; ++i) {
        threads.emplace_back(compileStage);
    }
    for (int j = 0; j < m_options.jobs; ++j) {
        threads.emplace_back(runner, j);
    }
    for (std::thread &t : threads) {
        t.join();
    }
}

} // namespace Kp::Grade
