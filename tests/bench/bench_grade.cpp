// bench_grade: grades 100 submissions x 4 small exercises with timing off, as
// `kpg grade --no-timing` does (the Grader of engine/grade), and reports
// graded exercise-submissions per second per GPU and where the time went:
// compile, worker restarts, checks. Three passes:
//   distinct  every source differs (a per-student constant in a comment), so
//             every compile is a real NVRTC compile: the honest number;
//   cached    the same sources again: every compile is a cache hit;
//   no checks the cached pass without checks, to price the checks (their
//             evaluation and the reference runs they need).
// Mostly correct submissions, every 10th wrong (an off-by-one). Target: >= 20
// per second per GPU when nothing faults.
//   --timed   time every submission with a short timing (anti-gaming on: the
//             sentinel outputs, a second timed seed run), as kpg grade does;
//   --hangs   5 % of the submissions never end: each must cost about the
//             per-submission time limit (a second), not the exercise's time-out;
//             the report says whether each stayed within the limit plus a
//             worker restart, and what the hangs cost the class in all.
// Without a GPU the submissions are compiled and bound only: the rates are
// the compiler's on this machine, and neither target is judged.
//
// usage: bench_grade [--students N] [--devices 0,1] [--timed] [--hangs]   (KPG_WORKER etc. as for kpg)

#include "client/engineclient.h"
#include "grade/grader.h"
#include "grade/lab.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTextStream>
#include <QThread>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace Kp;
using namespace Kp::Grade;

namespace {

struct ExerciseDef
{
    const char *name;
    const char *kpg;
    const char *reference;
    const char *wrong; ///< with %1: the constant that makes the source distinct
};

const char *const kTiming = R"~("timing": {"enabled": false}, "timeout": 5)~";
const char *const kShortTiming =
    R"~("timing": {"warmup": 1, "minSamples": 3, "maxSamples": 10, "minSeconds": 0.001}, "timeout": 5)~";

const ExerciseDef kExercises[] = {
    {"vector_add",
     R"~({"format": "kernel-playground-project", "version": 1, "source": "starter.cu",
  "scalars": [{"name": "n", "type": "int32", "value": 4096}],
  "buffers": [{"name": "a", "dtype": "float32", "shape": [4096], "init": {"kind": "random", "seed": 1}},
              {"name": "b", "dtype": "float32", "shape": [4096], "init": {"kind": "random", "seed": 2}},
              {"name": "c", "dtype": "float32", "shape": [4096]}],
  "launches": [{"kernel": "vectorAdd", "grid": "ceil_div(n, block.x)", "block": 256, "args": ["a", "b", "c", "n"]}],
  TIMING, "reference": {"source": "reference.cu"},
  "checks": [{"name": "c = a + b", "buffer": "c", "expected": "a + b"}]})~",
     "__global__ void vectorAdd(const float *a, const float *b, float *c, int n)\n{\n"
     "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) c[i] = a[i] + b[i];\n}\n",
     "__global__ void vectorAdd(const float *a, const float *b, float *c, int n)\n{\n"
     "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n - 1) c[i] = a[i] + b[i];\n}\n"},
    {"saxpy",
     R"~({"format": "kernel-playground-project", "version": 1, "source": "starter.cu",
  "scalars": [{"name": "n", "type": "int32", "value": 4096}, {"name": "alpha", "type": "float32", "value": 2.5}],
  "buffers": [{"name": "x", "dtype": "float32", "shape": [4096], "init": {"kind": "random", "seed": 3}},
              {"name": "y", "dtype": "float32", "shape": [4096], "init": {"kind": "random", "seed": 4}}],
  "launches": [{"kernel": "saxpy", "grid": 8, "block": 128, "args": ["n", "alpha", "x", "y"]}],
  TIMING, "reference": {"source": "reference.cu"},
  "checks": [{"name": "y", "buffer": "y", "reference": "y"}]})~",
     "__global__ void saxpy(int n, float alpha, const float *x, float *y)\n{\n"
     "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
     "        y[i] = alpha * x[i] + y[i];\n}\n",
     "__global__ void saxpy(int n, float alpha, const float *x, float *y)\n{\n"
     "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = alpha * x[i] + y[i];\n}\n"},
    {"scale",
     R"~({"format": "kernel-playground-project", "version": 1, "source": "starter.cu",
  "scalars": [{"name": "n", "type": "int32", "value": 4096}],
  "buffers": [{"name": "in", "dtype": "int32", "shape": [4096], "init": {"kind": "random", "min": -1000, "max": 1000, "seed": 5}},
              {"name": "out", "dtype": "int32", "shape": [4096]}],
  "launches": [{"kernel": "scale", "grid": "ceil_div(n, block.x)", "block": 256, "args": ["in", "out", "n"]}],
  TIMING, "reference": {"source": "reference.cu"},
  "checks": [{"name": "out = 3 in", "buffer": "out", "expected": "3 * in"}]})~",
     "__global__ void scale(const int *in, int *out, int n)\n{\n"
     "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) out[i] = 3 * in[i];\n}\n",
     "__global__ void scale(const int *in, int *out, int n)\n{\n"
     "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) out[i] = 2 * in[i];\n}\n"},
    {"relu",
     R"~({"format": "kernel-playground-project", "version": 1, "source": "starter.cu",
  "scalars": [{"name": "n", "type": "int32", "value": 4096}],
  "buffers": [{"name": "x", "dtype": "float32", "shape": [4096], "init": {"kind": "random", "min": -1, "max": 1, "seed": 6}},
              {"name": "y", "dtype": "float32", "shape": [4096]}],
  "launches": [{"kernel": "relu", "grid": "ceil_div(n, block.x)", "block": 256, "args": ["x", "y", "n"]}],
  TIMING, "reference": {"source": "reference.cu"},
  "checks": [{"name": "y = max(x, 0)", "buffer": "y", "reference": "y"}]})~",
     "__global__ void relu(const float *x, float *y, int n)\n{\n"
     "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}\n",
     "__global__ void relu(const float *x, float *y, int n)\n{\n"
     "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = x[i];\n}\n"},
};

void write(const QString &path, const QByteArray &data)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(data) != data.size()) {
        std::fprintf(stderr, "bench_grade: cannot write %s\n", qPrintable(path));
        std::exit(1);
    }
}

struct Pass
{
    double wallMs = 0;
    int items = 0;
    int passed = 0;
    int failed = 0;
    int other = 0;
    double compileMs = 0;
    double runMs = 0;
    double restartMs = 0;
    int restarts = 0;
    int compiles = 0;
    int timeouts = 0;
    double slowestTimeoutMs = 0; ///< the longest run of an item that timed out
    double timeoutMs = 0;        ///< all the items that timed out, together
    double timeLimitSeconds = 0;
    double prepareMs = 0; ///< the references self-tested before the pass (not in wallMs)
};

Pass grade(const Lab &lab, const QList<Student> &students, const QString &subs, const GraderOptions &options)
{
    QList<GradeTask> tasks;
    for (const Student &s : students) {
        for (const Exercise &e : lab.exercises) {
            tasks << GradeTask{s.name, &e, readSubmission(s, e.name, subs)};
        }
    }
    Grader grader(lab, options);
    Pass p;
    QElapsedTimer clock;
    clock.start();
    // As kpg grade does: the references' own launch times set each item's
    // time limit (a few times the reference's, policy.h); a grader that was
    // not prepared falls back to the exercise's whole time-out for a hang.
    // Timed apart from the pass.
    if (Status s = grader.prepare(); !s) {
        std::fprintf(stderr, "bench_grade: %s\n", qPrintable(s.error().message));
        std::exit(1);
    }
    p.prepareMs = double(clock.nsecsElapsed()) / 1e6;
    clock.restart();
    grader.run(tasks, [&](const GradeItem &i) {
        ++p.items;
        p.passed += i.outcome == Outcome::Pass ? 1 : 0;
        p.failed += i.outcome == Outcome::Fail ? 1 : 0;
        p.other += i.outcome != Outcome::Pass && i.outcome != Outcome::Fail ? 1 : 0;
        p.compileMs += i.compileMs;
        p.runMs += i.runMs;
        p.restartMs += i.restartMs;
        p.restarts += i.workerRestarted ? 1 : 0;
        if (i.outcome == Outcome::Timeout) {
            ++p.timeouts;
            p.slowestTimeoutMs = std::max(p.slowestTimeoutMs, i.runMs);
            p.timeoutMs += i.runMs + i.restartMs;
            p.timeLimitSeconds = i.timeLimitSeconds;
        }
    });
    p.wallMs = double(clock.nsecsElapsed()) / 1e6;
    p.compiles = grader.stats().compiled.load();
    return p;
}

/** What a hang may cost beyond its time limit: stopping the launch and starting a fresh worker (tst_gpu_grade's bound).
 */
constexpr double kRestartAllowanceMs = 3000;

void report(const char *name, const Pass &p, int gpus, int expectedHangs, bool onGpu)
{
    const double perSecond = p.items / (p.wallMs / 1000);
    const double work = p.compileMs + p.runMs + p.restartMs;
    std::printf("%-10s %5d items in %7.2f s: %7.1f /s, %7.1f /s per GPU  (pass %d, fail %d, other %d)\n", name, p.items,
                p.wallMs / 1000, perSecond, perSecond / std::max(gpus, 1), p.passed, p.failed, p.other);
    std::printf("           per item: compile %.1f ms, run+checks %.1f ms, restarts %d (%.1f ms); "
                "share of item time: compile %.0f %%, run+checks %.0f %%, restarts %.0f %%\n",
                p.compileMs / std::max(p.items, 1), p.runMs / std::max(p.items, 1), p.restarts, p.restartMs,
                100 * p.compileMs / work, 100 * p.runMs / work, 100 * p.restartMs / work);
    if (expectedHangs > 0 && !onGpu) {
        std::printf("           hangs: %d hanging items compiled and bound only (no GPU): their cost is not measured\n",
                    expectedHangs);
    } else if (expectedHangs > 0) {
        const bool within =
            p.timeouts == expectedHangs && p.slowestTimeoutMs <= p.timeLimitSeconds * 1000 + kRestartAllowanceMs;
        std::printf("           hangs: %d of %d stopped, the slowest after %.0f ms under a %.2f s limit (bound: the "
                    "limit + %.0f s for the restart): %s; together %.1f s of the class's %.1f s (the exercises' 5 s "
                    "time-out would have cost %.0f s)\n",
                    p.timeouts, expectedHangs, p.slowestTimeoutMs, p.timeLimitSeconds, kRestartAllowanceMs / 1000,
                    within ? "met" : "NOT met", p.timeoutMs / 1000, p.wallMs / 1000, 5.0 * expectedHangs);
    }
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    int studentCount = 100;
    QString devicesArg;
    const QStringList args = app.arguments();
    const bool timed = args.contains(QStringLiteral("--timed"));
    const bool hangs = args.contains(QStringLiteral("--hangs"));
    for (qsizetype i = 1; i + 1 < args.size(); ++i) {
        if (args[i] == QLatin1String("--students")) {
            studentCount = std::max(1, args[++i].toInt());
        } else if (args[i] == QLatin1String("--devices")) {
            devicesArg = args[++i];
        }
    }
    QTemporaryDir dir;
    // A cache of its own: the distinct pass must compile for real.
    qputenv("KPG_CACHE_DIR", dir.filePath("cache").toUtf8());
    const QString labDir = dir.filePath("lab");
    const QString subs = dir.filePath("submissions");
    for (const ExerciseDef &e : kExercises) {
        const QString d = labDir + QLatin1Char('/') + QLatin1String(e.name);
        QDir().mkpath(d);
        QByteArray kpg(e.kpg);
        kpg.replace("TIMING", timed ? kShortTiming : kTiming);
        write(d + QLatin1Char('/') + QLatin1String(e.name) + QStringLiteral(".kpg"), kpg);
        write(d + QStringLiteral("/reference.cu"), e.reference);
        write(d + QStringLiteral("/starter.cu"), "// starter\n");
    }
    int wrong = 0;
    int hanging = 0;
    for (int s = 0; s < studentCount; ++s) {
        const QString d = subs + QStringLiteral("/student%1").arg(s, 3, 10, QLatin1Char('0'));
        QDir().mkpath(d);
        for (qsizetype k = 0; k < qsizetype(std::size(kExercises)); ++k) {
            const ExerciseDef &e = kExercises[k];
            const bool bad = s % 10 == 7;
            wrong += bad ? 1 : 0;
            QByteArray source = QByteArray("// student ") + QByteArray::number(s) + "'s " + e.name + "\n" +
                                (bad ? e.wrong : e.reference);
            // One item in 20 (never a wrong one) spins forever on a device
            // variable nothing sets: a loop on a volatile local was compiled
            // away (a loop without side effects may be assumed to end), and
            // those items passed on an H100.
            if (hangs && (s * qsizetype(std::size(kExercises)) + k) % 20 == 13) {
                source.replace("{\n", "{\n    while (*(volatile int *)&g_never == 0) {\n    }\n");
                source.prepend("__device__ int g_never;\n");
                ++hanging;
            }
            write(d + QLatin1Char('/') + QLatin1String(e.name) + QStringLiteral(".cu"), source);
        }
    }

    const Result<Lab> lab = loadLab(labDir);
    const Result<QList<Student>> students = findStudents(subs);
    if (!lab || !students) {
        std::fprintf(stderr, "bench_grade: %s\n", qPrintable((!lab ? lab.error() : students.error()).message));
        return 1;
    }
    GraderOptions options;
    options.timing = timed;
    {
        EngineClient probe;
        const Result<DeviceList> devices = probe.listDevicesSync();
        if (devices && !devices->devices.isEmpty()) {
            for (int d = 0; d < devices->devices.size(); ++d) {
                if (devicesArg.isEmpty() || devicesArg.split(QLatin1Char(',')).contains(QString::number(d))) {
                    options.devices << d;
                }
            }
            options.ccMajor = devices->devices[options.devices.value(0)].ccMajor;
            options.ccMinor = devices->devices[options.devices.value(0)].ccMinor;
            std::printf("GPU: %s x %lld\n", qPrintable(devices->devices[options.devices.value(0)].name),
                        static_cast<long long>(options.devices.size()));
        } else {
            std::printf("no GPU (%s): submissions are compiled and bound only; the numbers are not the GPU's\n",
                        qPrintable(devices ? QStringLiteral("none found") : devices.error().message));
        }
    }
    options.jobs = std::max<int>(1, int(options.devices.size()));
    options.compileJobs = std::clamp(QThread::idealThreadCount() - options.jobs, 1, 16);
    const int gpus = std::max<int>(1, int(options.devices.size()));
    std::printf("%d submissions x %d exercises = %d items (%d wrong%s), timing %s; %d runner%s, %d compile thread%s\n",
                studentCount, int(std::size(kExercises)), studentCount * int(std::size(kExercises)), wrong,
                hangs ? ", 5 % hanging" : "", timed ? "on with anti-gaming" : "off", options.jobs,
                options.jobs == 1 ? "" : "s", options.compileJobs, options.compileJobs == 1 ? "" : "s");

    const bool onGpu = !options.devices.isEmpty();
    const Pass distinct = grade(*lab, *students, subs, options);
    std::printf("prepare (references self-tested): %.2f s\n", distinct.prepareMs / 1000);
    report("distinct", distinct, gpus, hanging, onGpu);
    const Pass cached = grade(*lab, *students, subs, options);
    report("cached", cached, gpus, hanging, onGpu);
    GraderOptions noChecks = options;
    noChecks.checks = false;
    const Pass unchecked = grade(*lab, *students, subs, noChecks);
    report("no checks", unchecked, gpus, hanging, onGpu);
    const double checksMs = (cached.runMs - unchecked.runMs) / std::max(cached.items, 1);
    std::printf("checks (evaluation and reference runs): %.2f ms per item, %.0f %% of the cached pass's item time\n",
                checksMs,
                100 * (cached.runMs - unchecked.runMs) / (cached.compileMs + cached.runMs + cached.restartMs));
    const double distinctRate = distinct.items / (distinct.wallMs / 1000) / gpus;
    const double cachedRate = cached.items / (cached.wallMs / 1000) / gpus;
    if (onGpu) {
        std::printf("target >= 20 /s per GPU%s: distinct sources %.1f (%s), cached %.1f (%s)\n",
                    timed ? " with anti-gaming" : "", distinctRate, distinctRate >= 20 ? "met" : "NOT met", cachedRate,
                    cachedRate >= 20 ? "met" : "NOT met");
    } else {
        // Compiles and binds only: a rate of the compiler on this machine's cores, not of a GPU.
        std::printf("target >= 20 /s per GPU: not judged without a GPU (compile-and-bind rate: distinct %.1f /s, "
                    "cached %.1f /s, with %d compile thread%s)\n",
                    distinctRate, cachedRate, options.compileJobs, options.compileJobs == 1 ? "" : "s");
    }
    const bool countsRight = distinct.items == studentCount * int(std::size(kExercises)) &&
                             (!onGpu || (distinct.failed == wrong && distinct.timeouts == hanging));
    if (!countsRight) {
        std::printf("UNEXPECTED: %d items, %d failed (expected %d wrong), %d timed out (expected %d)\n", distinct.items,
                    distinct.failed, wrong, distinct.timeouts, hanging);
        return 1;
    }
    return 0;
}
