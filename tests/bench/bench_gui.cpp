// GUI responsiveness: the longest event-loop stall while a compile, a run and
// Play are in flight, measured with a 1 ms timer in the real main window
// (offscreen), and the stall when a timed run of 2,000 and of 100,000
// synthetic samples lands in the Results panel. Prints a table; asserts
// nothing. Target: under 16 ms.
//   QT_QPA_PLATFORM=offscreen bench_gui            everything
//   QT_QPA_PLATFORM=offscreen bench_gui results    only a run landing in Results
// BENCH_GUI_RECORD=FILE keeps the real timed run (a run history file);
// BENCH_GUI_REPLAY=FILE lands that run in the no-GPU landing row instead of a
// made-up one, so a GPU's landing can be studied and cut without a GPU.

#include "client/engineclient.h"
#include "compile/compileservice.h"
#include "editor/codeeditor.h"
#include "panels/inspector/bufferinspector.h"
#include "panels/launch/launchpanel.h"
#include "panels/results/resultspanel.h"
#include "run/projectcompile.h"
#include "run/runner.h"
#include "shell/mainwindow.h"
#include "workbench/compilecontroller.h"
#include "workbench/runcontroller.h"
#include "workbench/runhistory.h"
#include "workbench/workbench.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QHash>
#include <QMetaEnum>
#include <QPushButton>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <cxxabi.h>
#include <execinfo.h>
#include <map>
#include <pthread.h>
#include <thread>

using namespace Kp;

namespace {

/** One clock for the stalls and the events the profiler logs, so a stall's events can be found. */
QElapsedTimer &benchClock()
{
    static QElapsedTimer clock = [] {
        QElapsedTimer c;
        c.start();
        return c;
    }();
    return clock;
}

/** The last longestStall()'s worst gap, from and to, in benchClock() nanoseconds, and the GUI thread's CPU time in it.
 */
qint64 g_stallFrom = 0;
qint64 g_stallTo = 0;
double g_stallCpuMs = 0;

/** CPU time of the calling thread, in milliseconds: what the GUI thread spent, whatever else the machine runs. */
double threadCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

/**
 * Where the GUI thread is while it has not ticked for a while, as stacks: a
 * thread interrupts it with SIGPROF every 0.25 ms while longestStall()'s
 * last tick is more than 2 ms old, and the handler keeps the stack and
 * whether an event was being delivered. printWorstStall() shows the stacks
 * taken outside any event within the longest stall: work no receiver's
 * event accounts for (BENCH_GUI_STACKS=all: every sample).
 */
namespace Sampler {
struct Sample
{
    qint64 at = 0;
    bool inEvent = false;
    int depth = 0;
    void *frames[40];
};
constexpr int kMax = 8192;
Sample g_samples[kMax];
std::atomic<int> g_count{0};
std::atomic<qint64> g_lastTick{0};
std::atomic<bool> g_on{false};
std::atomic<bool> g_inEvent{false};
pthread_t g_gui;

void onSignal(int)
{
    const int i = g_count.load(std::memory_order_relaxed);
    if (i >= kMax) {
        return;
    }
    Sample &s = g_samples[i];
    s.at = benchClock().nsecsElapsed();
    s.inEvent = g_inEvent.load(std::memory_order_relaxed);
    s.depth = backtrace(s.frames, 40);
    g_count.store(i + 1, std::memory_order_release);
}

void start()
{
    g_gui = pthread_self();
    void *warm[4];
    backtrace(warm, 4); // loads the unwinder now, not in the handler
    struct sigaction sa
    {
    };
    sa.sa_handler = onSignal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, nullptr);
    std::thread([] {
        for (;;) {
            std::this_thread::sleep_for(std::chrono::microseconds(250));
            if (g_on.load() && benchClock().nsecsElapsed() - g_lastTick.load() > 2000000) {
                pthread_kill(g_gui, SIGPROF);
            }
        }
    }).detach();
}

/** The samples outside any event within [from, to], grouped by stack, the most frequent first. */
void print(qint64 from, qint64 to)
{
    // BENCH_GUI_STACKS=all: the samples within events too.
    const bool everything = qEnvironmentVariable("BENCH_GUI_STACKS") == QLatin1String("all");
    std::map<QString, int> stacks;
    int outside = 0;
    const int n = g_count.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) {
        const Sample &s = g_samples[i];
        if (s.at < from || s.at > to || (s.inEvent && !everything)) {
            continue;
        }
        ++outside;
        char **names = backtrace_symbols(s.frames, s.depth);
        QString stack;
        int shown = 0;
        for (int f = 2; f < s.depth && shown < 14; ++f) { // past the handler and the signal frame
            QString name = QString::fromLocal8Bit(names[f]);
            const qsizetype open = name.indexOf(QLatin1Char('('));
            const qsizetype plus = name.indexOf(QLatin1Char('+'), open);
            if (open >= 0 && plus > open + 1) {
                const QByteArray mangled = name.mid(open + 1, plus - open - 1).toLatin1();
                int status = 0;
                char *plain = abi::__cxa_demangle(mangled.constData(), nullptr, nullptr, &status);
                name = status == 0 ? QString::fromLatin1(plain) : QString::fromLatin1(mangled);
                std::free(plain);
            }
            stack += QStringLiteral("\n      ") + name.left(160);
            ++shown;
        }
        std::free(names);
        ++stacks[stack];
    }
    if (outside == 0) {
        return;
    }
    std::vector<std::pair<int, QString>> sorted;
    for (const auto &[stack, count] : stacks) {
        sorted.emplace_back(count, stack);
    }
    std::sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    std::printf("\nThe GUI thread %s in that stall, %d samples every 0.25 ms, by stack:\n",
                everything ? "(in events too)" : "outside any event", outside);
    for (size_t i = 0; i < sorted.size() && i < 6; ++i) {
        std::printf("  %d x%s\n", sorted[i].first, qPrintable(sorted[i].second));
    }
}
} // namespace Sampler

/** Runs the event loop until done() or timeoutMs, and returns the longest gap between 1 ms ticks. */
template<typename Done> double longestStall(Done done, int timeoutMs, int *ticks)
{
    QElapsedTimer clock;
    clock.start();
    qint64 last = clock.nsecsElapsed();
    qint64 lastGlobal = benchClock().nsecsElapsed();
    double lastCpu = threadCpuMs();
    Sampler::g_lastTick = lastGlobal;
    Sampler::g_on = true;
    g_stallFrom = g_stallTo = lastGlobal;
    g_stallCpuMs = 0;
    double worst = 0;
    double worstAt = 0;
    int n = 0;
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    tick.setInterval(1);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const qint64 now = clock.nsecsElapsed();
        const qint64 nowGlobal = benchClock().nsecsElapsed();
        const double nowCpu = threadCpuMs();
        if (double(now - last) / 1e6 > worst) {
            worst = double(now - last) / 1e6;
            worstAt = double(now) / 1e6;
            g_stallFrom = lastGlobal;
            g_stallTo = nowGlobal;
            g_stallCpuMs = nowCpu - lastCpu;
        }
        last = now;
        lastGlobal = nowGlobal;
        lastCpu = nowCpu;
        Sampler::g_lastTick = nowGlobal;
        ++n;
    });
    tick.start();
    while (!done() && clock.elapsed() < timeoutMs) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
    }
    Sampler::g_on = false;
    *ticks = n;
    if (qEnvironmentVariableIsSet("BENCH_GUI_VERBOSE")) {
        std::printf("(worst stall ended at %.1f ms, of %.1f ms)\n", worstAt, double(clock.nsecsElapsed()) / 1e6);
    }
    return worst;
}

/** A timed run as the worker returns it: count samples around 0.24 ms with noise and a slow tail. */
RunRecord syntheticRun(int count, quint32 seed)
{
    QRandomGenerator rng(seed);
    RunRecord rec;
    rec.kernel = QStringLiteral("heat_step");
    rec.grid = {64, 64, 1};
    rec.block = {16, 16, 1};
    rec.label = QStringLiteral("block 16");
    rec.result.samplesMs.reserve(count);
    for (int i = 0; i < count; ++i) {
        double v = 0.24 * (1 + 0.02 * (rng.generateDouble() + rng.generateDouble() - 1));
        if (rng.bounded(50) == 0) {
            v *= 1.1 + 0.2 * rng.generateDouble();
        }
        rec.result.samplesMs << v;
    }
    rec.result.timed = true;
    rec.result.timingMode = QStringLiteral("cold");
    rec.result.stats = computeStats(rec.result.samplesMs);
    return rec;
}

/** One launch of heat's step as a run reports it (1024x1024: a grid of 32x128 blocks of 32x8). */
StepResult heatStep()
{
    StepResult step;
    step.kernel = QStringLiteral("heat_step");
    step.grid = {32, 128, 1};
    step.block = {32, 8, 1};
    return step;
}

/** What a run's download does to w's buffers without a GPU: new contents in t at element, every generation bumped. */
void simulateDownload(MainWindow &w, qint64 element)
{
    static_cast<float *>(w.hostBuffers().find(QStringLiteral("t"))->memory.data())[element] += 1.0f;
    for (const auto &b : w.hostBuffers().all()) {
        ++b->generation;
    }
}

/**
 * Times every event the GUI thread delivers (the outermost only, so nested
 * event loops are not counted twice) and sums them by receiver class and
 * event type: where a frame of Play spends the GUI thread. A queued slot
 * call counts as a MetaCall event to the receiver of the slot.
 */
class ProfilingApp : public QApplication
{
public:
    using QApplication::QApplication;

    struct Cost
    {
        double totalMs = 0;
        double worstMs = 0;
        int count = 0;
    };

    void setProfiling(bool on)
    {
        m_on = on;
        if (on) {
            m_costs.clear();
            m_log.clear();
        }
    }

    bool notify(QObject *receiver, QEvent *event) override
    {
        if (!m_on || m_depth > 0) {
            return QApplication::notify(receiver, event);
        }
        // Named before delivery: the receiver may be deleted by it.
        const QString key = QStringLiteral("%1%2 %3").arg(
            QString::fromLatin1(receiver->metaObject()->className()),
            receiver->objectName().isEmpty() ? QString() : QStringLiteral(" '%1'").arg(receiver->objectName()),
            QString::fromLatin1(QMetaEnum::fromType<QEvent::Type>().valueToKey(event->type())));
        ++m_depth;
        Sampler::g_inEvent = true;
        const qint64 from = benchClock().nsecsElapsed();
        const bool r = QApplication::notify(receiver, event);
        Sampler::g_inEvent = false;
        --m_depth;
        const qint64 to = benchClock().nsecsElapsed();
        const double ms = double(to - from) / 1e6;
        m_log.append({from, to, key});
        Cost &c = m_costs[key];
        c.totalMs += ms;
        c.worstMs = std::max(c.worstMs, ms);
        ++c.count;
        return r;
    }

    /** The receivers and events that took the most GUI-thread time, per frame. */
    void printTop(int rows, qint64 frames) const
    {
        QList<QPair<QString, Cost>> sorted;
        for (auto it = m_costs.cbegin(); it != m_costs.cend(); ++it) {
            sorted << qMakePair(it.key(), it.value());
        }
        std::sort(sorted.begin(), sorted.end(),
                  [](const auto &a, const auto &b) { return a.second.totalMs > b.second.totalMs; });
        std::printf("\nGUI thread, by receiver and event (per frame of %lld):\n\n", frames);
        std::printf("| receiver, event | ms per frame | events per frame | worst ms |\n|---|---|---|---|\n");
        for (int i = 0; i < rows && i < sorted.size(); ++i) {
            const Cost &c = sorted[i].second;
            std::printf("| %s | %.2f | %.1f | %.2f |\n", qPrintable(sorted[i].first),
                        c.totalMs / double(std::max<qint64>(1, frames)),
                        double(c.count) / double(std::max<qint64>(1, frames)), c.worstMs);
        }
    }

    /**
     * The events delivered within the last longestStall()'s worst gap, in
     * order, with what the gap spent outside them (the event dispatcher,
     * timers' own bookkeeping, the window system): where that one stall went.
     */
    void printWorstStall() const
    {
        std::printf("\nThe longest stall (%.2f ms), event by event:\n\n| receiver, event | ms |\n|---|---|\n",
                    double(g_stallTo - g_stallFrom) / 1e6);
        double inside = 0;
        double small = 0;
        int smallCount = 0;
        for (const Logged &e : m_log) {
            if (e.to <= g_stallFrom || e.from >= g_stallTo) {
                continue;
            }
            const double ms = double(std::min(e.to, g_stallTo) - std::max(e.from, g_stallFrom)) / 1e6;
            inside += ms;
            if (ms < 0.2) {
                small += ms;
                ++smallCount;
                continue;
            }
            std::printf("| %s | %.2f |\n", qPrintable(e.key), ms);
        }
        std::printf("| (%d events under 0.2 ms each) | %.2f |\n| (outside any event) | %.2f |\n", smallCount, small,
                    double(g_stallTo - g_stallFrom) / 1e6 - inside);
        // Less CPU than wall time: the GUI thread waited (a lock, the kernel, another process on its core).
        std::printf("| (the GUI thread's CPU time in the stall) | %.2f |\n", g_stallCpuMs);
        Sampler::print(g_stallFrom, g_stallTo);
    }

private:
    struct Logged
    {
        qint64 from;
        qint64 to;
        QString key;
    };
    bool m_on = false;
    int m_depth = 0;
    QHash<QString, Cost> m_costs;
    QList<Logged> m_log;
};

/**
 * The stall a user feels when a run lands in Results (the window's
 * RunController::recorded hands it over in its own turn of the event loop):
 * ResultsPanel::addRun and then the events it leaves (layout, paint), on the
 * Samples tab, as the window shows it after a run. Prints the median and the
 * worst of `repeats` runs, as wall time and as the GUI thread's CPU time
 * (on a busy machine the wall time includes waiting for a core).
 */
void benchResultsLanding(int samples, int repeats)
{
    ResultsPanel panel;
    panel.resize(910, 215); // the Results dock of a 1280x800 window
    panel.show();
    QCoreApplication::processEvents();
    panel.addRun(syntheticRun(samples, 99)); // first use: fonts, styles
    QCoreApplication::processEvents();
    QList<double> addMs;
    QList<double> totalMs;
    QList<double> cpuMs;
    for (int i = 0; i < repeats; ++i) {
        const RunRecord rec = syntheticRun(samples, quint32(i + 1));
        QElapsedTimer t;
        const double cpu0 = threadCpuMs();
        t.start();
        panel.addRun(rec);
        addMs << double(t.nsecsElapsed()) / 1e6;
        panel.repaint(); // what the next frame draws
        QCoreApplication::processEvents();
        totalMs << double(t.nsecsElapsed()) / 1e6;
        cpuMs << threadCpuMs() - cpu0;
    }
    std::sort(addMs.begin(), addMs.end());
    std::sort(totalMs.begin(), totalMs.end());
    std::sort(cpuMs.begin(), cpuMs.end());
    std::printf("| a run of %d samples lands in Results (addRun + paint) | median %.2f ms, worst %.2f ms "
                "(addRun alone: median %.2f ms) | GUI thread CPU: median %.2f ms, worst %.2f ms | %d runs |\n",
                samples, totalMs[repeats / 2], totalMs.back(), addMs[repeats / 2], cpuMs[repeats / 2], cpuMs.back(),
                repeats);
}

} // namespace

int main(int argc, char **argv)
{
    ProfilingApp app(argc, argv);
    Sampler::start();
    if (argc > 1 && QByteArray(argv[1]) == "results") {
        std::printf("\nbench_gui: a run landing in Results (target under 16 ms)\n\n");
        std::printf("| while | stall (wall) | GUI thread CPU | |\n|---|---|---|---|\n");
        benchResultsLanding(2000, 9);
        benchResultsLanding(100000, 9);
        return 0;
    }
    EngineClient engine;
    MainWindow w(&engine);
    w.show();
    w.refreshDeviceStatus();
    w.openProject(QStringLiteral(":/presets/heat/heat.kpg"));
    QSignalSpy settled(&w, &MainWindow::compileFinished);
    settled.wait(30000);
    for (int i = 0; i < 100 && !w.deviceStatusKnown(); ++i) {
        QTest::qWait(100);
    }
    QTest::qWait(500); // let the recompile for the device's arch land

    std::printf("\nbench_gui: longest event-loop stall (target under 16 ms)\n\n");
    std::printf("| while | longest stall | 1 ms ticks seen | elapsed |\n|---|---|---|---|\n");

    // A heavy compile (cub) in flight on the compile service; a fresh comment
    // makes it miss the cache.
    {
        w.editor()->setText(QStringLiteral("#include <cub/block/block_reduce.cuh>\n") + w.editor()->text() +
                            QStringLiteral("\n// %1\n").arg(QDateTime::currentMSecsSinceEpoch()));
        w.compileNow();
        QElapsedTimer t;
        t.start();
        int ticks = 0;
        app.setProfiling(true);
        const double stall = longestStall(
            [&] { return w.lastCompile().ptx.contains("cub") || w.lastCompile().log.contains("cub"); }, 60000, &ticks);
        QTest::qWait(200); // what the answer leaves queued
        app.setProfiling(false);
        std::printf("| compiling a kernel that includes cub (no cache) | %.2f ms | %d | %lld ms |\n", stall, ticks,
                    t.elapsed());
        app.printTop(6, 1);
        app.printWorstStall();
        std::printf("\n");
    }
    // What a finished run costs the GUI thread, piece by piece, without a GPU:
    // the chart and history for 2000 samples, the inspector's refresh of two
    // 1024x1024 float buffers.
    {
        ResultsPanel panel;
        panel.resize(1200, 500);
        panel.show();
        RunRecord rec;
        rec.kernel = QStringLiteral("heat_step");
        for (int i = 0; i < 2000; ++i) {
            rec.result.samplesMs << 0.24 + 0.001 * std::sin(i * 0.37);
        }
        rec.result.timed = true;
        rec.result.stats = computeStats(rec.result.samplesMs);
        QElapsedTimer t;
        t.start();
        panel.addRun(rec);
        QCoreApplication::processEvents();
        std::printf("| (piece) ResultsPanel::addRun, 2000 samples | %.2f ms | | |\n", double(t.nsecsElapsed()) / 1e6);
        benchResultsLanding(2000, 9);
        benchResultsLanding(100000, 9);

        BufferInspector inspector;
        inspector.resize(600, 500);
        inspector.show();
        inspector.setBuffers(w.hostBuffers().all());
        inspector.showBuffer(QStringLiteral("t"));
        inspector.showImage(true);
        QCoreApplication::processEvents();
        inspector.beforeRun();
        auto *data = static_cast<float *>(w.hostBuffers().find(QStringLiteral("t"))->memory.data());
        data[5000] += 1.0f;
        t.restart();
        inspector.afterRun();
        const double after = double(t.nsecsElapsed()) / 1e6;
        t.restart();
        QCoreApplication::processEvents();
        std::printf("| (piece) BufferInspector::afterRun, image view of 1024x1024 float | %.2f ms + %.2f ms of "
                    "events | | |\n",
                    after, double(t.nsecsElapsed()) / 1e6);
        t.restart();
        inspector.beforeRun();
        std::printf("| (piece) BufferInspector::beforeRun (snapshots of 2 x 4 MiB) | %.2f ms | | |\n",
                    double(t.nsecsElapsed()) / 1e6);
        t.restart();
        (void)w.hostBuffers().materialize(w.project(), true);
        std::printf("| (piece) HostBuffers::materialize, heat (1M-element expression + zeros) | %.2f ms | | |\n",
                    double(t.nsecsElapsed()) / 1e6);
    }
    // The steps of a Play frame before the worker, on the GUI thread, without
    // the GPU: the project and request (RunController::start), the compile's
    // cache hit on the compile service (its callback queued back), filling
    // (nothing: Play keeps the contents) and binding the parameters.
    {
        const int n = 20;
        QList<double> req, comp, fill, prep;
        Compiler &compiler = w.workbench().compile().service()->compiler();
        for (int i = 0; i < n; ++i) {
            QElapsedTimer c;
            c.start();
            Project p = w.project();
            p.sourceText = w.editor()->text();
            p.timing.enabled = false;
            CompileRequest r = compileRequestFor(p, w.lastCompile().arch.isEmpty() ? 0 : 9, 0);
            req << double(c.nsecsElapsed()) / 1e6;
            c.restart();
            const Result<CompileResult> cr = compiler.compile(r);
            comp << double(c.nsecsElapsed()) / 1e6;
            c.restart();
            (void)w.hostBuffers().materialize(p, false);
            fill << double(c.nsecsElapsed()) / 1e6;
            c.restart();
            if (cr && cr->ok) {
                (void)prepareRun(p, *cr, w.hostBuffers(), 0);
            }
            prep << double(c.nsecsElapsed()) / 1e6;
        }
        const auto med = [](QList<double> v) {
            std::sort(v.begin(), v.end());
            return v[v.size() / 2];
        };
        std::printf("| (piece) a Play frame before the worker, no GPU: project and request %.2f ms, compile (cache "
                    "hit) %.2f ms, fill %.2f ms, prepareRun %.2f ms (medians) | | | %d frames |\n",
                    med(req), med(comp), med(fill), med(prep), n);
    }
    // A Play frame's work on the GUI thread without the GPU: what the window
    // does between the worker's answers (the run controller's signals and
    // everything they fan out to, then the events they leave: the image
    // view's refresh and paint), with heat's buffers and the image view of t
    // in front. The frame rate of Play is bounded by 1000 / this.
    {
        w.inspectBuffer(QStringLiteral("t"), QStringLiteral("image"));
        QCoreApplication::processEvents();
        RunController &runs = w.workbench().runs();
        RunResult frame;
        frame.steps << heatStep();
        frame.repeat = 50;
        QList<double> ms;
        app.setProfiling(true);
        const int frames = 20;
        for (int i = 0; i < frames; ++i) {
            QElapsedTimer clock;
            clock.start();
            Q_EMIT runs.started(true);
            Q_EMIT runs.launching();
            simulateDownload(w, 1024 * 400 + 300 + i);
            Q_EMIT runs.finished(frame, true);
            QCoreApplication::processEvents(); // what the frame left: refreshes, paints
            QCoreApplication::processEvents();
            ms << double(clock.nsecsElapsed()) / 1e6;
        }
        app.setProfiling(false);
        std::sort(ms.begin(), ms.end());
        std::printf("| (piece) a Play frame on the GUI thread, no GPU (signals, fan-out, refresh, paint) | median "
                    "%.2f ms, worst %.2f ms | | %d frames |\n",
                    ms[frames / 2], ms.back(), frames);
        app.printTop(10, frames);
        std::printf("\n");
    }
    // A timed run's landing without the GPU: what the run controller emits
    // when a timed heat run of 2000 samples comes back (the status, the Log
    // line, the history record and the result), and everything it fans out
    // to, timed as the event loop's longest stall until the landing has
    // settled. The row above it with the GPU ("a timed run of heat") adds
    // the worker's answer and the launch itself.
    {
        RunController &runs = w.workbench().runs();
        RunResult r;
        const StepResult step = heatStep();
        r.steps << step;
        r.repeat = 50;
        r.timed = true;
        r.device = QStringLiteral("a GPU");
        r.timingMode = QStringLiteral("cold");
        for (int i = 0; i < 2000; ++i) {
            r.samplesMs << 12.0 + 0.05 * std::sin(i * 0.37);
        }
        r.stats = computeStats(r.samplesMs);
        RunRecord rec;
        rec.kernel = step.kernel;
        rec.grid = step.grid;
        rec.block = step.block;
        rec.label = QStringLiteral("block 32");
        rec.result = r;
        // A real timed run of heat, recorded on a GPU by BENCH_GUI_RECORD,
        // lands instead where BENCH_GUI_REPLAY names it: its samples, source,
        // resources and steps as the worker returned them.
        const QString replay = qEnvironmentVariable("BENCH_GUI_REPLAY");
        if (!replay.isEmpty()) {
            const Result<QList<RunRecord>> recorded = loadHistory(replay);
            if (!recorded || recorded->isEmpty()) {
                std::fprintf(stderr, "BENCH_GUI_REPLAY: %s\n",
                             recorded ? "no run in the file" : qPrintable(recorded.error().message));
                return 1;
            }
            rec = recorded->last();
            r = rec.result;
            std::printf("(replaying %s: %lld samples, %lld steps)\n", qPrintable(replay), qint64(r.samplesMs.size()),
                        qint64(r.steps.size()));
        }
        QList<double> stalls;
        qint64 worstFrom = 0;
        qint64 worstTo = 0;
        double worstCpu = 0;
        app.setProfiling(true);
        const int landings = 7;
        for (int i = 0; i < landings; ++i) {
            rec.number = 1000 + i;
            rec.when = QDateTime::currentDateTime();
            Q_EMIT runs.started(false);
            Q_EMIT runs.launching();
            QCoreApplication::processEvents();
            simulateDownload(w, 1024 * 300 + 200 + i);
            QElapsedTimer since;
            bool landed = false;
            QTimer::singleShot(0, &runs, [&] {
                Q_EMIT runs.statusChanged(QStringLiteral("Median 12.00 ms"));
                Q_EMIT runs.message(QStringLiteral("Run %1 on a GPU: median 12.00 ms").arg(rec.number));
                Q_EMIT runs.recorded(rec);
                Q_EMIT runs.finished(r, false);
                landed = true;
                since.start();
            });
            int ticks = 0;
            stalls << longestStall([&] { return landed && since.elapsed() > 150; }, 10000, &ticks);
            if (stalls.last() >= *std::max_element(stalls.cbegin(), stalls.cend())) {
                worstFrom = g_stallFrom;
                worstTo = g_stallTo;
                worstCpu = g_stallCpuMs;
            }
        }
        g_stallFrom = worstFrom;
        g_stallTo = worstTo;
        g_stallCpuMs = worstCpu;
        app.setProfiling(false);
        std::sort(stalls.begin(), stalls.end());
        std::printf("| (piece) a timed run of heat lands, no GPU (2000 samples: status, Log, history, result fan-out, "
                    "paints) | median %.2f ms, worst %.2f ms | | %d landings |\n",
                    stalls[landings / 2], stalls.back(), landings);
        app.printTop(10, landings);
        app.printWorstStall();
        std::printf("\n");
    }
    if (!w.deviceStatusKnown() || w.deviceStatusText().contains(QLatin1String("compile-only"))) {
        std::printf("\n(no GPU: the run and Play rows need one)\n");
        return 0;
    }
    // A run with timing (upload, launches, samples, download, chart, inspector).
    {
        QSignalSpy done(&w, &MainWindow::runFinished);
        QElapsedTimer t;
        t.start();
        app.setProfiling(true);
        w.runNow();
        int ticks = 0;
        const double stall = longestStall([&] { return done.count() > 0; }, 60000, &ticks);
        QTest::qWait(100); // what the run's landing leaves queued (Results, paints)
        app.setProfiling(false);
        std::printf("| a timed run of heat (50 steps per sample, 1024x1024) | %.2f ms | %d | %lld ms |\n", stall, ticks,
                    t.elapsed());
        app.printTop(8, 1);
        app.printWorstStall();
        std::printf("\n");
        const QString record = qEnvironmentVariable("BENCH_GUI_RECORD");
        if (!record.isEmpty() && !w.workbench().history().records().isEmpty()) {
            const Status saved = saveHistory(record, {w.workbench().history().records().last()});
            std::printf("(the run recorded in %s%s)\n", qPrintable(record),
                        saved ? "" : qPrintable(QStringLiteral(": ") + saved.error().message));
        }
    }
    // Play: runs back to back, the image view refreshed after each.
    {
        w.inspectBuffer(QStringLiteral("t"), QStringLiteral("image"));
        auto *play = w.launchPanel()->findChild<QPushButton *>(QStringLiteral("play"));
        QSignalSpy frames(&w, &MainWindow::runFinished);
        QElapsedTimer t;
        t.start();
        // Each frame's phases, as the run controller saw them.
        RunController &runs = w.workbench().runs();
        QList<RunController::Phases> phases;
        QMetaObject::Connection c = QObject::connect(&runs, &RunController::finished, &runs, [&] {
            QTimer::singleShot(0, &runs, [&] { phases << runs.lastPhases(); }); // after deliverMs is set
        });
        app.setProfiling(true);
        play->setChecked(true);
        int ticks = 0;
        const double stall = longestStall([&] { return t.elapsed() > 3000; }, 4000, &ticks);
        play->setChecked(false);
        app.setProfiling(false);
        QObject::disconnect(c);
        std::printf("| Play on heat, image view live (%lld frames, %.1f frames/s) | %.2f ms | %d | %lld ms |\n",
                    qint64(frames.count()), frames.count() / (t.elapsed() / 1000.0), stall, ticks, t.elapsed());
        app.printTop(12, frames.count());
        app.printWorstStall();
        const auto median = [&phases](double RunController::Phases::*field) {
            QList<double> v;
            for (const RunController::Phases &p : phases) {
                v << p.*field;
            }
            std::sort(v.begin(), v.end());
            return v.isEmpty() ? 0.0 : v[v.size() / 2];
        };
        std::printf("\nA Play frame's phases (median of %lld, ms): compile %.2f, fill %.2f, prepare %.2f, worker "
                    "%.2f, deliver %.2f\n",
                    qint64(phases.size()), median(&RunController::Phases::compileMs),
                    median(&RunController::Phases::fillMs), median(&RunController::Phases::prepareMs),
                    median(&RunController::Phases::workerMs), median(&RunController::Phases::deliverMs));
        if (!w.runs().isEmpty()) {
            const RunResult &last = w.runs().last();
            std::printf("the worker's own account of the last frame: upload %.2f ms, download %.2f ms\n", last.uploadMs,
                        last.downloadMs);
        }
    }
    return 0;
}
