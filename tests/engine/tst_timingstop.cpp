// When a timed run stops sampling (engine/run/timingstop.h), on synthetic
// sample streams shaped like the worker's: event times quantised to the
// timer's tick, short kernels whose noise never falls under 0.5 %, long ones
// whose noise does, drifting and continuous streams.

#include "compile/compilerprocess.h"
#include "run/runjson.h"
#include "run/timingstop.h"

#include <QJsonObject>
#include <QProcessEnvironment>
#include <QtTest>

#include <cmath>
#include <functional>
#include <random>

using namespace Kp;

namespace {

/** The event timer's tick as cuEventElapsedTime reports it, in ms. */
constexpr double kTick = 0.000032;

using Stream = std::function<double(int i, std::mt19937 &rng)>;

double quantise(double ms)
{
    return std::round(ms / kTick) * kTick;
}

struct Outcome
{
    StopCriterion criterion = StopCriterion::None;
    int count = 0;
    QString note;
};

/** Feeds the stream to a stopper; each sample also costs `wallPerSample` seconds of wall time. */
Outcome feed(const StopRule &rule, const Stream &stream, double wallPerSample = 30e-6, unsigned seed = 12345)
{
    std::mt19937 rng(seed);
    SampleStopper s(rule);
    for (int i = 0; i < 1000000; ++i) {
        s.add(stream(i, rng));
        const StopCriterion c = s.check(wallPerSample * (i + 1));
        if (c != StopCriterion::None) {
            return {c, s.count(), s.note(c)};
        }
    }
    return {};
}

} // namespace

Q_DECLARE_METATYPE(StopRule)
Q_DECLARE_METATYPE(Stream)

class TestTimingStop : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void streams_data();
    void streams();
    void entropyNeedsAFullWindow();
    void entropyOff();
    void entropyOfKnownHistograms();
    void names();
    void profilerDetection();
    void compilerLeavesOutTheInjection();
    void profilerPreloads();
    void runJsonSaysWhatStopped();
    void maxSamplesNoteSaysWhatHeldItBack_data();
    void maxSamplesNoteSaysWhatHeldItBack();
};

void TestTimingStop::streams_data()
{
    QTest::addColumn<StopRule>("rule");
    QTest::addColumn<Stream>("stream");
    QTest::addColumn<double>("wallPerSample");
    QTest::addColumn<int>("criterion");
    QTest::addColumn<int>("minCount");
    QTest::addColumn<int>("maxCount");

    const StopRule defaults;
    // Vector add at 64K elements: 4 us with a jitter of a few ticks. Its noise
    // (~4 %) never falls under 0.5 % and 10,000 samples are 40 ms of GPU time,
    // far from the 0.5 s the noise criterion waits for: before the entropy
    // criterion it always ran to the cap.
    QTest::newRow("short kernel, quantised jitter") << defaults << Stream([](int, std::mt19937 &rng) {
        std::binomial_distribution<int> ticks(12, 0.4);
        return quantise(0.0040 + ticks(rng) * kTick);
    }) << 30e-6 << int(StopCriterion::Entropy) << 300
                                                    << 1500;
    // A short kernel with rare slow outliers (a preempting context): still a
    // distribution that stops changing.
    QTest::newRow("short kernel, 2 % outliers") << defaults << Stream([](int, std::mt19937 &rng) {
        std::uniform_real_distribution<double> u(0, 1);
        std::binomial_distribution<int> ticks(8, 0.5);
        return quantise((u(rng) < 0.02 ? 0.012 : 0.008) + ticks(rng) * kTick);
    }) << 30e-6 << int(StopCriterion::Entropy) << 300
                                                << 2500;
    // Every sample the same tick: the entropy is 0 throughout, a flat line.
    QTest::newRow("constant") << defaults << Stream([](int, std::mt19937 &) { return quantise(0.0024); }) << 30e-6
                              << int(StopCriterion::Entropy) << 300 << 300;
    // Two clock states, half the samples each: one bit, settled at once.
    QTest::newRow("bimodal") << defaults << Stream([](int, std::mt19937 &rng) {
        std::bernoulli_distribution b(0.5);
        return quantise(b(rng) ? 0.0050 : 0.0065);
    }) << 30e-6 << int(StopCriterion::Entropy)
                             << 300 << 1000;
    // A 1 ms kernel with 0.1 % noise: the noise criterion, once 0.5 s of GPU
    // time (500 samples) is in.
    QTest::newRow("long kernel, low noise") << defaults << Stream([](int, std::mt19937 &rng) {
        std::normal_distribution<double> n(1.0, 0.001);
        return quantise(n(rng));
    }) << 1.1e-3 << int(StopCriterion::Noise)
                                            << 500 << 501;
    // Continuous values, all distinct (hot batches divide by the batch): the
    // entropy grows like log2(n), whose slope falls under 0.048 degrees
    // (8.4e-4 bits per sample) near n = 1 / (ln 2 * 8.4e-4) = 1722.
    QTest::newRow("continuous, all distinct") << defaults << Stream([](int, std::mt19937 &rng) {
        std::normal_distribution<double> n(0.010, 0.0005);
        return n(rng);
    }) << 30e-6 << int(StopCriterion::Entropy) << 1500
                                              << 2200;
    // A kernel that keeps slowing down (clocks falling as it heats): every
    // few samples a new value, the distribution never settles before the cap.
    StopRule capped = defaults;
    capped.maxSamples = 1000;
    QTest::newRow("drifting, capped") << capped
                                      << Stream([](int i, std::mt19937 &) { return quantise(0.004 + (i / 3) * kTick); })
                                      << 30e-6 << int(StopCriterion::MaxSamples) << 1000 << 1000;
    // Slow samples against a short time-out: the time limit.
    StopRule quick = defaults;
    quick.timeoutSeconds = 0.05;
    QTest::newRow("time limit") << quick << Stream([](int, std::mt19937 &rng) {
        std::normal_distribution<double> n(5.0, 0.5);
        return n(rng);
    }) << 0.01 << int(StopCriterion::TimeLimit)
                                << 5 << 5;
    // Fewer samples than the window allowed: the cap, not the entropy.
    StopRule few = defaults;
    few.maxSamples = 200;
    QTest::newRow("cap below the window") << few << Stream([](int, std::mt19937 &) { return quantise(0.0024); })
                                          << 30e-6 << int(StopCriterion::MaxSamples) << 200 << 200;
}

void TestTimingStop::streams()
{
    QFETCH(StopRule, rule);
    QFETCH(Stream, stream);
    QFETCH(double, wallPerSample);
    QFETCH(int, criterion);
    QFETCH(int, minCount);
    QFETCH(int, maxCount);
    const Outcome o = feed(rule, stream, wallPerSample);
    QVERIFY2(int(o.criterion) == criterion, qPrintable(QStringLiteral("stopped by '%1' after %2 samples (%3)")
                                                           .arg(stopCriterionName(o.criterion))
                                                           .arg(o.count)
                                                           .arg(o.note)));
    QVERIFY2(o.count >= minCount && o.count <= maxCount,
             qPrintable(QStringLiteral("%1 samples: %2").arg(o.count).arg(o.note)));
    QVERIFY(o.note.contains(QString::number(o.count)) || o.criterion == StopCriterion::MaxSamples);
    // Another seed stops by the same criterion.
    QCOMPARE(int(feed(rule, stream, wallPerSample, 777).criterion), criterion);
    qInfo("%s", qPrintable(o.note));
}

void TestTimingStop::entropyNeedsAFullWindow()
{
    // Identical samples settle at once, but not before the window is full and
    // not before minSamples.
    StopRule rule;
    rule.window = 50;
    rule.minSamples = 120;
    SampleStopper s(rule);
    int stoppedAt = 0;
    for (int i = 1; i <= 1000 && !stoppedAt; ++i) {
        s.add(0.004);
        if (s.check(0) != StopCriterion::None) {
            stoppedAt = i;
        }
    }
    QCOMPARE(stoppedAt, 120);
    QCOMPARE(s.entropy(), 0.0);
    QCOMPARE(s.r2(), 1.0);
}

void TestTimingStop::entropyOff()
{
    StopRule rule;
    rule.entropy = false;
    rule.maxSamples = 3000;
    const Outcome o = feed(rule, [](int, std::mt19937 &) { return quantise(0.0024); });
    QCOMPARE(int(o.criterion), int(StopCriterion::MaxSamples));
    QCOMPARE(o.count, 3000);
}

void TestTimingStop::entropyOfKnownHistograms()
{
    // 4 values, equally often: 2 bits; 3:1: 0.811 bits.
    SampleStopper uniform{StopRule{}};
    for (int i = 0; i < 400; ++i) {
        uniform.add(0.001 * (i % 4 + 1));
    }
    QVERIFY(std::abs(uniform.entropy() - 2.0) < 1e-12);
    SampleStopper skewed{StopRule{}};
    for (int i = 0; i < 400; ++i) {
        skewed.add(i % 4 == 0 ? 0.002 : 0.001);
    }
    const double h = -(0.25 * std::log2(0.25) + 0.75 * std::log2(0.75));
    QVERIFY(std::abs(skewed.entropy() - h) < 1e-12);
    // Noise is the sample stdev over the mean.
    SampleStopper n{StopRule{}};
    for (double v : {1.0, 2.0, 3.0, 4.0}) {
        n.add(v);
    }
    QVERIFY(std::abs(n.noise() - std::sqrt(5.0 / 3.0) / 2.5) < 1e-12);
}

void TestTimingStop::names()
{
    for (StopCriterion c : {StopCriterion::Noise, StopCriterion::Entropy, StopCriterion::MaxSamples,
                            StopCriterion::TimeLimit, StopCriterion::Profiler}) {
        QVERIFY(!stopCriterionName(c).isEmpty());
        QCOMPARE(int(stopCriterionFromName(stopCriterionName(c))), int(c));
    }
    QCOMPARE(int(stopCriterionFromName(QStringLiteral("settled"))), int(StopCriterion::None));
}

void TestTimingStop::profilerDetection()
{
    qunsetenv("KPG_PROFILING");
    qunsetenv("CUDA_INJECTION64_PATH");
    QString why;
    QVERIFY(!cudaToolAttached(&why));
    qputenv("CUDA_INJECTION64_PATH", "/opt/nsight-compute/target/linux-x64/libcuda-injection.so");
    QVERIFY(cudaToolAttached(&why));
    QVERIFY(why.contains(QLatin1String("CUDA_INJECTION64_PATH")));
    qputenv("KPG_PROFILING", "0");
    QVERIFY(!cudaToolAttached(&why));
    QCOMPARE(why, QStringLiteral("KPG_PROFILING=0"));
    qunsetenv("CUDA_INJECTION64_PATH");
    qputenv("KPG_PROFILING", "1");
    QVERIFY(cudaToolAttached(&why));
    qunsetenv("KPG_PROFILING");
    // ncu 2025 following a process tree sets its own variables instead.
    qputenv("NV_TPS_LAUNCH_TOKEN", "Interactive Profile");
    QVERIFY(cudaToolAttached(&why));
    QCOMPARE(why, QStringLiteral("NV_TPS_LAUNCH_TOKEN=Interactive Profile"));
    qunsetenv("NV_TPS_LAUNCH_TOKEN");
    QVERIFY(!cudaToolAttached(&why));
}

void TestTimingStop::compilerLeavesOutTheInjection()
{
    QProcessEnvironment plain;
    plain.insert(QStringLiteral("LD_PRELOAD"), QStringLiteral("/usr/lib/libmine.so"));
    plain.insert(QStringLiteral("PATH"), QStringLiteral("/usr/bin"));
    QProcessEnvironment same = plain;
    withoutProfilerInjection(same);
    QCOMPARE(same, plain); // no profiler: untouched

    QProcessEnvironment ncu = plain;
    ncu.insert(
        QStringLiteral("CUDA_INJECTION64_PATH"),
        QStringLiteral("/opt/nvidia/nsight-compute/2025.1/target/linux-desktop-glibc_2_11_3-x64/libcuda-injection.so"));
    ncu.insert(
        QStringLiteral("LD_PRELOAD"),
        QStringLiteral(
            "/usr/lib/libmine.so:/opt/nvidia/nsight-compute/2025.1/target/"
            "linux-desktop-glibc_2_11_3-x64/libTreeLauncherTargetInjection.so /tmp/libTreeLauncherPlaceholder.so"));
    withoutProfilerInjection(ncu);
    QVERIFY(!ncu.contains(QStringLiteral("CUDA_INJECTION64_PATH")));
    QCOMPARE(ncu.value(QStringLiteral("LD_PRELOAD")), QStringLiteral("/usr/lib/libmine.so"));
    QCOMPARE(ncu.value(QStringLiteral("PATH")), QStringLiteral("/usr/bin"));
}

void TestTimingStop::profilerPreloads()
{
    // Which preloaded libraries count as a profiler's: they leave kpg-compiler's environment, others stay.
    QProcessEnvironment env;
    env.insert(QStringLiteral("CUDA_INJECTION64_PATH"), QStringLiteral("/opt/ncu/libcuda-injection.so"));
    env.insert(QStringLiteral("LD_PRELOAD"),
               QStringLiteral("/opt/nvidia/nsight-compute/2025.1/target/linux-x64/libTreeLauncherTargetInjection.so:"
                              "/tmp/libTreeLauncherPlaceholder.so:/usr/lib/libmine.so"));
    withoutProfilerInjection(env);
    QCOMPARE(env.value(QStringLiteral("LD_PRELOAD")), QStringLiteral("/usr/lib/libmine.so"));
}

void TestTimingStop::runJsonSaysWhatStopped()
{
    RunResult r;
    r.timed = true;
    r.timingMode = QStringLiteral("cold");
    std::mt19937 rng(5);
    std::normal_distribution<double> d(0.004, 0.0002);
    for (int i = 0; i < 500; ++i) {
        r.samplesMs << quantise(d(rng));
    }
    r.stats = computeStats(r.samplesMs);
    r.stopCriterion = stopCriterionName(StopCriterion::Entropy);
    r.l2Flush = QStringLiteral("read");
    r.eventOverheadMs = 0.00275;
    r.eventPairMs = 0.0011;
    r.medianLessOverheadMs = r.stats.medianMs - r.eventOverheadMs;
    const RunResult back = RunResult::fromVariant(r.toVariant());
    QCOMPARE(back.stopCriterion, r.stopCriterion);
    QCOMPARE(back.eventOverheadMs, r.eventOverheadMs);
    QCOMPARE(back.medianLessOverheadMs, r.medianLessOverheadMs);
    const QJsonObject t = runResultToJson(back).value(QStringLiteral("timing")).toObject();
    QCOMPARE(t.value(QStringLiteral("stoppedBy")).toString(), QStringLiteral("entropy"));
    QCOMPARE(t.value(QStringLiteral("l2Flush")).toString(), QStringLiteral("read"));
    QCOMPARE(t.value(QStringLiteral("eventOverheadMs")).toDouble(), 0.00275);
    QCOMPARE(t.value(QStringLiteral("eventPairMs")).toDouble(), 0.0011);
    QCOMPARE(t.value(QStringLiteral("medianLessOverheadMs")).toDouble(), r.medianLessOverheadMs);
}

QTEST_GUILESS_MAIN(TestTimingStop)
#include "tst_timingstop.moc"

// Issue 29: a run whose noise was 1.63 % under a 5 % bound read "stopped ...
// before the noise fell under 5.00 %"; the real reason was minSeconds.
void TestTimingStop::maxSamplesNoteSaysWhatHeldItBack_data()
{
    QTest::addColumn<double>("spread"); // relative half-width of the samples around 1 ms
    QTest::addColumn<QString>("note");
    QTest::newRow("minSeconds, with the noise under its bound")
        << 0.02
        << "stopped at the maximum of 200 samples: the noise (1.27 %) was under the bound of 5.00 %, but the samples "
           "added up to 0.2 s of GPU time, short of minSeconds (10 s)";
    QTest::newRow("the noise above its bound")
        << 0.2 << "stopped at the maximum of 200 samples: the noise (12.77 %) was still above the bound of 5.00 %";
}

void TestTimingStop::maxSamplesNoteSaysWhatHeldItBack()
{
    QFETCH(double, spread);
    QFETCH(QString, note);
    StopRule rule;
    rule.maxSamples = 200;
    rule.minSeconds = 10;
    rule.maxNoise = 0.05;
    rule.entropy = false;
    SampleStopper s(rule);
    StopCriterion c = StopCriterion::None;
    // A saw-tooth of 1 ms +- spread: a known noise, no randomness.
    for (int i = 0; c == StopCriterion::None; ++i) {
        s.add(1.0 + spread * (2.0 * (i % 11) / 10.0 - 1.0));
        c = s.check(0.001 * (i + 1));
    }
    QCOMPARE(int(c), int(StopCriterion::MaxSamples));
    QCOMPARE(s.note(c), note);
}
