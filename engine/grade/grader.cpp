#include "grader.h"

#include "check/checkeval.h"
#include "check/sanitizedrun.h"
#include "client/engineclient.h"
#include "compile/compiler.h"
#include "grade/integrity.h"
#include "run/projectcompile.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QSet>

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

/**
 * Whether a diagnostic's file is one whose text may be shown: the submission
 * itself (no folder in its name) or a toolkit header. Anything else was
 * reached by an #include the sandbox let through (/proc entries, say), and
 * its text quoted in a message must not reach the results.
 */
bool showableFile(const QString &file)
{
    if (!file.contains(QLatin1Char('/'))) {
        return true;
    }
    static const QStringList toolkit = [] {
        QStringList dirs;
        for (const QString &d : Compiler::toolkitIncludeDirs()) {
            dirs << QDir::cleanPath(d) + QLatin1Char('/');
        }
        return dirs;
    }();
    const QString clean = QDir::cleanPath(file);
    for (const QString &d : toolkit) {
        if (clean.startsWith(d)) {
            return true;
        }
    }
    return false;
}

void setCompileErrors(const CompileResult &c, GradeItem *item)
{
    item->outcome = Outcome::CompileError;
    item->compileErrors.clear();
    bool redacted = false;
    for (const Diagnostic &d : c.diagnostics) {
        if (d.severity != Diagnostic::Severity::Error) {
            continue;
        }
        if (showableFile(d.file)) {
            item->compileErrors << diagnosticText(d);
        } else if (!redacted) {
            redacted = true;
            item->compileErrors << QStringLiteral("%1: errors in a file outside the submission and the toolkit (not "
                                                  "shown: a submission compiles from its own file only)")
                                       .arg(d.file);
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

/** The slowest launch of a run's correctness pass (ms), NaN when nothing ran. */
double slowestLaunchMs(const CheckedRun &c)
{
    double ms = std::numeric_limits<double>::quiet_NaN();
    if (!c.ran) {
        return ms;
    }
    for (const StepResult &s : c.run.steps) {
        if (std::isfinite(s.firstRunMs) && (!std::isfinite(ms) || s.firstRunMs > ms)) {
            ms = s.firstRunMs;
        }
    }
    return ms;
}

} // namespace

void flagSuspiciousSpeed(GradeItem *item, double bound)
{
    // Far faster than the reference is more often a cached answer or a timer
    // trick than genius: worth a look, not a grade by itself.
    if (std::isfinite(item->speedRatio) && bound > 0 && item->speedRatio > bound) {
        item->flags << QStringLiteral("%1x the reference's speed, above the %2x bound: check it for a cached answer "
                                      "or a timing trick")
                           .arg(QString::number(item->speedRatio, 'f', 1))
                           .arg(bound);
    }
}

bool isHiddenCheck(const CheckSpec &check)
{
    return check.unknown.value(QStringLiteral("hidden")).toBool(false);
}

Project saltedProject(const Project &project, const QString &salt)
{
    if (salt.isEmpty()) {
        return project;
    }
    Project p = project;
    for (BufferSpec &b : p.buffers) {
        if (b.init.kind == BufferInit::Kind::Random) {
            const QByteArray h = QCryptographicHash::hash(salt.toUtf8() + '\0' + QByteArray::number(b.init.seed),
                                                          QCryptographicHash::Sha256);
            quint64 seed = 0;
            for (int i = 0; i < 8; ++i) {
                seed = (seed << 8) | quint8(h[i]);
            }
            b.init.seed = seed;
        }
    }
    return p;
}

void classifyRun(const CheckedRun &c, GradeItem *item, const Project *exercise)
{
    if (c.compiled && !c.compiled->ok) {
        setCompileErrors(*c.compiled, item);
        return;
    }
    if (c.ran && c.run.timed) {
        item->medianMs = c.run.stats.medianMs;
    }
    // A write outside a buffer fails the submission whatever its checks say:
    // the guard caught what a right answer never does.
    if (c.ran && !c.run.guardViolations.isEmpty()) {
        const GuardViolation &first = c.run.guardViolations.first();
        item->wroteOutside = guardHitText(first);
        // The same guard is found again after the timing samples: count other places only.
        QSet<QString> others;
        for (const GuardViolation &v : c.run.guardViolations) {
            if (v.buffer != first.buffer || v.side != first.side) {
                others.insert(v.buffer +
                              (v.side == GuardViolation::Side::After ? QStringLiteral(">") : QStringLiteral("<")));
            }
        }
        if (!others.isEmpty()) {
            item->wroteOutside += QStringLiteral(" and %1 more").arg(others.size());
        }
    }
    if (c.ran) {
        for (const StepResult &s : c.run.steps) {
            if (s.printfTruncated) {
                item->outcome = Outcome::PrintfFlood;
                item->detail =
                    QStringLiteral("printf output cut at %1 lines").arg(s.printfOutput.count(QLatin1Char('\n')));
                return;
            }
        }
    }
    item->checksTotal = exercise ? int(exercise->checks.size()) : int(c.checks.size());
    for (const CheckResult &r : c.checks) {
        item->checksPassed += r.passed ? 1 : 0;
    }
    auto withGuardHit = [item] {
        if (!item->wroteOutside.isEmpty()) {
            item->outcome = Outcome::Fail;
            item->detail =
                item->detail.isEmpty() ? item->wroteOutside : item->wroteOutside + QStringLiteral("; ") + item->detail;
        }
    };
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
    for (qsizetype k = 0; k < c.checks.size(); ++k) {
        const CheckResult &r = c.checks[k];
        if (r.passed) {
            continue;
        }
        item->outcome = Outcome::Fail;
        item->failedCheck = r.name;
        if (exercise) {
            for (const CheckSpec &spec : exercise->checks) {
                if (spec.displayName() == r.name && isHiddenCheck(spec)) {
                    item->failedCheckHidden = true;
                }
            }
        }
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
        withGuardHit();
        return;
    }
    item->outcome = Outcome::Pass;
    item->detail.clear();
    withGuardHit();
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

double Grader::referenceLaunchMs(const QString &exercise, int device) const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_referenceLaunchMs.value(refKey(exercise, device), std::numeric_limits<double>::quiet_NaN());
}

Status Grader::prepare()
{
    QElapsedTimer clock;
    clock.start();
    const QList<int> devices = m_options.devices.isEmpty() ? QList<int>{0} : m_options.devices;
    std::mutex errorMutex;
    std::optional<Error> firstError;
    // The starter graded as a submission must fail: an exercise whose starter
    // already passes gives everyone the points. Only a GPU can say.
    auto starterFails = [&](const Exercise &e, int device, EngineClient *engine) {
        if (!m_options.preflightStarter || m_options.devices.isEmpty()) {
            return true;
        }
        Project starter = saltedProject(e.project, m_options.seedSalt);
        if (m_options.timeoutSeconds > 0) {
            starter.killTimeoutSeconds = m_options.timeoutSeconds;
        }
        CheckedRunOptions so;
        so.device = device;
        so.timing = false;
        so.isolatedCompile = m_options.isolatedCompile;
        const CheckedRun sc = runProjectWithChecks(starter, engine, so);
        GradeItem starterProbe;
        classifyRun(sc, &starterProbe, &e.project);
        if (starterProbe.outcome != Outcome::Pass) {
            return true;
        }
        std::lock_guard<std::mutex> lock(errorMutex);
        if (!firstError) {
            firstError = Error{QStringLiteral("grade"),
                               Error::Code::BadInput,
                               {},
                               QStringLiteral("%1: the starter (%2) passes every check on GPU %3, so the checks "
                                              "cannot tell an answer from the starter; add a check it fails")
                                   .arg(e.path, e.project.sourceFile)
                                   .arg(device)};
        }
        return false;
    };
    auto selfTest = [&](int device) {
        EngineClient engine;
        for (const Exercise &e : m_lab.exercises) {
            if (!e.project.reference || e.project.reference->sourceFile.isEmpty()) {
                if (!starterFails(e, device, &engine)) {
                    return;
                }
                continue;
            }
            Project p = saltedProject(selfTestProject(e.project), m_options.seedSalt);
            if (m_options.timeoutSeconds > 0) {
                p.killTimeoutSeconds = m_options.timeoutSeconds;
            }
            CheckedRunOptions o;
            o.device = device;
            o.timing = m_options.timing;
            // Compiled as a submission is: a reference that needs a header of
            // the lab's would pass here and fail every student otherwise.
            o.isolatedCompile = m_options.isolatedCompile;
            // Under the submissions' sentinel: an exercise whose kernel adds
            // into its output is named here, not failed in every student.
            o.sentinelOutputs = m_options.policy.antiGaming;
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
                // Without a GPU only the compile was tried: no GPU to name.
                const QString where = m_options.devices.isEmpty() ? QStringLiteral("(compiled without a GPU)")
                                                                  : QStringLiteral("on GPU %1").arg(device);
                err.message = QStringLiteral("%1: the reference (%2) does not pass as a submission %3: %4: %5")
                                  .arg(e.path, e.project.reference->sourceFile, where)
                                  .arg(outcomeText(probe.outcome), what);
                std::lock_guard<std::mutex> lock(errorMutex);
                if (!firstError) {
                    firstError = err;
                }
                return;
            }
            {
                std::lock_guard<std::mutex> lock(m_mutex);
                if (c.ran && c.run.timed) {
                    m_referenceMs.insert(refKey(e.name, device), c.run.stats.medianMs);
                }
                m_referenceLaunchMs.insert(refKey(e.name, device), slowestLaunchMs(c));
            }
            if (!starterFails(e, device, &engine)) {
                return;
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
    item.foundIn = task.submission.foundIn;
    item.device = m_options.devices.isEmpty() ? -1 : device;
    const Project &ex = task.exercise->project;
    item.minSpeedup = ex.grading ? ex.grading->minSpeedup : 0;

    Project p = saltedProject(ex, m_options.seedSalt);
    // A hang costs a few times the reference's launch, not the exercise's
    // whole time-out (--timeout overrides).
    p.killTimeoutSeconds = m_options.timeoutSeconds > 0
                               ? m_options.timeoutSeconds
                               : timeLimitSeconds(m_options.policy.timeLimit, referenceLaunchMs(item.exercise, device),
                                                  ex.killTimeoutSeconds);
    item.timeLimitSeconds = p.killTimeoutSeconds;
    CheckedRunOptions o;
    o.isolatedCompile = m_options.isolatedCompile;
    // The sentinel goes before every launch, timed or not: a kernel that
    // returns early on its second launch fails with --no-timing too.
    o.sentinelOutputs = m_options.policy.antiGaming;
    if (o.sentinelOutputs && m_options.timing && !p.checks.isEmpty() && seedRunsNeeded(p) < 2) {
        // A timed run on inputs the first run did not see: an answer cached
        // from the first launches does not fit them.
        bool random = false;
        for (const BufferSpec &b : p.buffers) {
            random = random || b.init.kind == BufferInit::Kind::Random;
        }
        if (random) {
            p.checks.first().seeds = 2;
        }
    }
    o.device = device;
    o.timing = m_options.timing;
    o.checks = m_options.checks;
    o.replacementSource = task.submission.source;
    o.replacementFileName = task.exercise->name + QStringLiteral(".cu");
    QElapsedTimer clock;
    clock.start();
    const CheckedRun c = runProjectWithChecks(p, engine, o);
    item.runMs = double(clock.nsecsElapsed()) / 1e6;
    classifyRun(c, &item, &ex);
    if (m_options.sanitize && c.compiled && c.compiled->ok && item.outcome != Outcome::NoGpu) {
        CheckedRunOptions so = o;
        so.timing = false;
        const SanitizedRun san = runProjectSanitized(p, so, SanitizeOptions{});
        if (san.report) {
            for (const Sanitizer::Finding &f : san.report->findings) {
                item.memoryFindings << f.summary();
            }
        } else if (san.reportError) {
            item.memoryFindings << QStringLiteral("no memcheck report: ") + san.reportError->message;
        }
    }
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
    flagSuspiciousSpeed(&item, m_options.policy.flagSpeedRatio);
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
    struct Compiled
    {
        const GradeTask *task = nullptr;
        double compileMs = 0;
    };
    std::deque<Compiled> ready;
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
            item.foundIn = t.submission.foundIn;
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
            CompileRequest req = compileRequestFor(p, m_options.ccMajor, m_options.ccMinor);
            if (m_options.isolatedCompile) {
                // No folder of the lab's on the include path or in the sandbox: the
                // submission reads itself and the toolkit (docs/labs.md). The
                // runner compiles the same request, so its compile is a cache hit.
                req.projectDir.clear();
                req.options.includeDirs.clear();
                req.sourcePath.clear(); // the exercise's file, not the submission's
            }
            QElapsedTimer clock;
            clock.start();
            const Result<CompileResult> r = compiler.compile(req);
            const double compileMs = double(clock.nsecsElapsed()) / 1e6;
            ++m_stats.compiled;
            if (r && !r->ok) {
                setCompileErrors(*r, &item);
                item.compileMs = compileMs;
                finish(item);
                continue;
            }
            std::lock_guard<std::mutex> lock(queueMutex);
            ready.push_back(Compiled{&t, compileMs});
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
            Compiled work;
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
            GradeItem item = gradeOne(*work.task, device, &engine);
            item.compileMs = work.compileMs;
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
