// The verdict on two sample distributions (engine/compare/verdict.h) on
// synthetic sets, and `kpg compare` on run results written the way
// `kpg run --json` writes them.

#include "compare/verdict.h"
#include "run/runjson.h"
#include "testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <functional>
#include <random>

using namespace Kp;

namespace {

constexpr double kTick = 0.000032;

double quantise(double ms)
{
    return std::round(ms / kTick) * kTick;
}

using Draw = std::function<double(std::mt19937 &)>;

QList<double> draw(const Draw &d, int n, unsigned seed)
{
    std::mt19937 rng(seed);
    QList<double> v;
    for (int i = 0; i < n; ++i) {
        v << d(rng);
    }
    return v;
}

/** A kernel of `ms` with relative jitter `noise` and a slow tail of `tail` of the samples at 1.5x. */
Draw kernel(double ms, double noise, double tail = 0.02)
{
    return [=](std::mt19937 &rng) {
        std::normal_distribution<double> n(ms, ms * noise);
        std::uniform_real_distribution<double> u(0, 1);
        const double v = qMax(kTick, n(rng));
        return quantise(u(rng) < tail ? v * 1.5 : v);
    };
}

/** Two modes (two clock states): `fastShare` of the samples near `fast`, the rest near `slow`. */
Draw bimodal(double fast, double slow, double fastShare)
{
    return [=](std::mt19937 &rng) {
        std::uniform_real_distribution<double> u(0, 1);
        std::normal_distribution<double> n(0, 0.003);
        return quantise((u(rng) < fastShare ? fast : slow) * (1 + n(rng)));
    };
}

QJsonObject runJson(const QList<double> &samples, const QString &mode = QStringLiteral("cold"))
{
    RunResult r;
    r.device = QStringLiteral("NVIDIA H200 (0)");
    r.timed = true;
    r.timingMode = mode;
    r.samplesMs = samples;
    r.stats = computeStats(samples);
    StepResult s;
    s.kernel = QStringLiteral("vectorAdd");
    r.steps << s;
    QJsonObject o = runResultToJson(r);
    o.insert(QStringLiteral("title"), QStringLiteral("Vector add"));
    return o;
}

QString writeJson(const QTemporaryDir &dir, const QString &name, const QJsonObject &o)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(QJsonDocument(o).toJson());
    return path;
}

} // namespace

Q_DECLARE_METATYPE(Draw)

class TestCompare : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void verdicts_data();
    void verdicts();
    void summaryQuantiles();
    void ruleBoundaries();
    void cliVerdicts_data();
    void cliVerdicts();
    void cliBadInput_data();
    void cliBadInput();
    void cliJson();
    void cliControlCharacters();
    void cliDenormalSamples();
};

void TestCompare::verdicts_data()
{
    QTest::addColumn<Draw>("a");
    QTest::addColumn<Draw>("b");
    QTest::addColumn<int>("countA");
    QTest::addColumn<int>("countB");
    QTest::addColumn<QString>("verdict");

    // Two runs of one kernel: the same.
    QTest::newRow("same, quiet") << kernel(0.0040, 0.03) << kernel(0.0040, 0.03) << 400 << 400 << "same";
    QTest::newRow("same, 1 ms") << kernel(1.0, 0.002) << kernel(1.0, 0.002) << 500 << 500 << "same";
    // A consistent 0.4 % change is under the threshold: the same.
    QTest::newRow("same, tiny shift") << kernel(1.0, 0.0005, 0) << kernel(1.004, 0.0005, 0) << 500 << 500 << "same";
    QTest::newRow("faster by 20 %") << kernel(0.0100, 0.02) << kernel(0.0080, 0.02) << 400 << 400 << "faster";
    QTest::newRow("slower by 25 %") << kernel(0.0080, 0.02) << kernel(0.0100, 0.02) << 400 << 400 << "slower";
    QTest::newRow("faster, few samples") << kernel(2.0, 0.005) << kernel(1.5, 0.005) << 12 << 10 << "faster";
    // 5 % apart under 20 % noise: the intervals overlap.
    QTest::newRow("noisy") << kernel(0.0100, 0.20) << kernel(0.0105, 0.20) << 300 << 300 << "ambiguous";
    // Both sides in the same two clock states, 70/30: the same.
    QTest::newRow("bimodal, same mix") << bimodal(0.0050, 0.0065, 0.7) << bimodal(0.0050, 0.0065, 0.7) << 600 << 600
                                       << "same";
    // The mix moved: the medians jump between modes, the intervals overlap.
    QTest::newRow("bimodal, shifted mix")
        << bimodal(0.0050, 0.0065, 0.7) << bimodal(0.0050, 0.0065, 0.3) << 600 << 600 << "ambiguous";
    QTest::newRow("too few samples") << kernel(1.0, 0.01) << kernel(0.5, 0.01) << 4 << 400 << "ambiguous";
}

void TestCompare::verdicts()
{
    QFETCH(Draw, a);
    QFETCH(Draw, b);
    QFETCH(int, countA);
    QFETCH(int, countB);
    QFETCH(QString, verdict);
    for (unsigned seed : {1u, 2u, 3u}) {
        const Comparison c = compareSamples(draw(a, countA, seed), draw(b, countB, seed + 100));
        QVERIFY2(verdictName(c.verdict) == verdict,
                 qPrintable(QStringLiteral("seed %1: %2 (%3)").arg(seed).arg(verdictName(c.verdict), c.reason)));
        QVERIFY(!c.reason.isEmpty());
    }
    // Swapping the sides swaps faster and slower and keeps the others.
    const Comparison swapped = compareSamples(draw(b, countB, 8), draw(a, countA, 9));
    const QString expected = verdict == QLatin1String("faster")   ? QStringLiteral("slower")
                             : verdict == QLatin1String("slower") ? QStringLiteral("faster")
                                                                  : verdict;
    QVERIFY2(verdictName(swapped.verdict) == expected, qPrintable(swapped.reason));
}

void TestCompare::summaryQuantiles()
{
    // Type-7 quantiles, as numpy.quantile: 1..8 → q1 2.75, median 4.5, q3 6.25.
    const SampleSummary s = summarize({8, 3, 1, 7, 2, 6, 5, 4});
    QCOMPARE(s.count, 8);
    QCOMPARE(s.min, 1.0);
    QCOMPARE(s.q1, 2.75);
    QCOMPARE(s.median, 4.5);
    QCOMPARE(s.q3, 6.25);
    QCOMPARE(s.max, 8.0);
    const SampleSummary one = summarize({3});
    QCOMPARE(one.q3, 3.0);
    QCOMPARE(summarize({}).count, 0);
}

void TestCompare::ruleBoundaries()
{
    // Hand-made sets whose numbers the rule can be checked against.
    const QList<double> a{10, 10, 10, 10, 10, 10, 10, 11}; // min 10, median 10, q3 10
    const QList<double> b{8, 8, 8, 8, 8, 8, 8, 12};        // min 8, median 8, q3 8
    const Comparison c = compareSamples(a, b);
    QCOMPARE(c.verdict, Verdict::Faster);
    QCOMPARE(c.relativeDifference, -0.2);
    QCOMPARE(c.gap, 0.2); // (min A 10 - q3 B 8) / 10
    QCOMPARE(c.ratio, 1.25);
    QVERIFY2(c.reason.contains(QLatin1String("apart by 20.00 %")), qPrintable(c.reason));
    // The threshold decides: at 25 % the same sets are "same".
    CompareRule wide;
    wide.minRelativeDifference = 0.25;
    QCOMPARE(compareSamples(a, b, wide).verdict, Verdict::Same);
    // Touching intervals (q3 of B equal to min of A) are not apart.
    const QList<double> touching{9, 9, 9, 9, 10, 10, 10, 10}; // min 9, median 9.5, q3 10
    const Comparison t = compareSamples(a, touching);
    QCOMPARE(t.verdict, Verdict::Ambiguous);
    QVERIFY(t.gap <= 0);
    QVERIFY2(t.reason.contains(QLatin1String("cannot be confirmed")), qPrintable(t.reason));
    // Zero medians cannot be judged.
    QCOMPARE(compareSamples(QList<double>(8, 0.0), b).verdict, Verdict::Ambiguous);
}

void TestCompare::cliVerdicts_data()
{
    QTest::addColumn<Draw>("a");
    QTest::addColumn<Draw>("b");
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("verdict");
    QTest::newRow("faster") << kernel(0.0100, 0.02) << kernel(0.0080, 0.02) << QStringList{} << 0 << "FASTER";
    QTest::newRow("slower, expected not-slower")
        << kernel(0.0080, 0.02) << kernel(0.0100, 0.02) << QStringList{"--expect", "not-slower"} << 1 << "SLOWER";
    QTest::newRow("same, expected same") << kernel(0.0040, 0.03) << kernel(0.0040, 0.03)
                                         << QStringList{"--expect", "same"} << 0 << "SAME";
    QTest::newRow("20 % under a 30 % threshold")
        << kernel(0.0100, 0.02) << kernel(0.0080, 0.02) << QStringList{"--threshold", "30"} << 0 << "SAME";
    QTest::newRow("noisy") << kernel(0.0100, 0.20) << kernel(0.0105, 0.20) << QStringList{} << 0 << "AMBIGUOUS";
}

void TestCompare::cliVerdicts()
{
    QFETCH(Draw, a);
    QFETCH(Draw, b);
    QFETCH(QStringList, extra);
    QFETCH(int, exitCode);
    QFETCH(QString, verdict);
    QTemporaryDir dir;
    const QString fa = writeJson(dir, "a.json", runJson(draw(a, 400, 11)));
    const QString fb = writeJson(dir, "b.json", runJson(draw(b, 400, 12)));
    const KpTest::Run r = KpTest::run("kpg", QStringList{"compare", fa, fb} + extra);
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY2(r.out.contains(QStringLiteral("verdict: ") + verdict), qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains(QLatin1String("rule (times in ms): ")), qPrintable(r.out));
    QVERIFY2(r.out.contains(QLatin1String("A (baseline) : ")) && r.out.contains(QLatin1String("vectorAdd")),
             qPrintable(r.out));
}

void TestCompare::cliBadInput_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");
    const QByteArray good = QJsonDocument(runJson(draw(kernel(1.0, 0.01), 50, 1))).toJson();
    QJsonObject untimed = runJson({});
    untimed.insert("timing", QJsonValue::Null);
    QJsonObject failed = runJson({1.0});
    failed.insert("ok", false);
    failed.insert("error", QJsonObject{{"message", "step 1 of 1 ('k'): an illegal memory access was encountered"}});
    QJsonObject badSample = runJson({1.0, 2.0});
    QJsonObject t = badSample.value("timing").toObject();
    t.insert("samplesMs", QJsonArray{1.0, "fast"});
    badSample.insert("timing", t);
    QTest::newRow("not JSON") << QByteArray("{\"ok\": tru") << QStringList{} << 65 << "not JSON";
    QTest::newRow("an array") << QByteArray("[1, 2]") << QStringList{} << 65 << "the top level is not an object";
    QTest::newRow("a project, not a result") << QByteArray(R"({"format": "kernel-playground-project", "version": 1})")
                                             << QStringList{} << 65 << "no timing.samplesMs array";
    QTest::newRow("untimed") << QJsonDocument(untimed).toJson() << QStringList{} << 65 << "the run was not timed";
    QTest::newRow("failed run") << QJsonDocument(failed).toJson() << QStringList{} << 65
                                << "the run failed (step 1 of 1 ('k'): an illegal memory access";
    QTest::newRow("bad sample") << QJsonDocument(badSample).toJson() << QStringList{} << 65
                                << "timing.samplesMs[1] is \"fast\"";
    QTest::newRow("one file only") << good << QStringList{"only"} << 64 << "give two run results";
    QTest::newRow("bad threshold") << good << QStringList{"--threshold", "-3"} << 64
                                   << "--threshold takes a percentage from 0 to under 100, not '-3'";
    QTest::newRow("bad expect") << good << QStringList{"--expect", "quicker"} << 64
                                << "--expect takes one of same, faster, slower, not-slower, not-faster, not 'quicker'";
    // Issue 28: "-" once said "No such file"; an empty --json was ignored with exit 0.
    QTest::newRow("standard input") << good << QStringList{"stdin"} << 64
                                    << "compare: '-' would be standard input, which kpg compare does not read; give "
                                       "the files that 'kpg run --json FILE' wrote";
    QTest::newRow("empty --json") << good << QStringList{"--json", ""} << 64 << "compare: --json needs a file name";
    QTest::newRow("--json in a missing folder") << good << QStringList{"--json", "/nonexistent/dir/c.json"} << 74
                                                << "compare: --json /nonexistent/dir/c.json: its folder "
                                                   "/nonexistent/dir does not exist";
}

void TestCompare::cliBadInput()
{
    QFETCH(QByteArray, content);
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const QString good = writeJson(dir, "good.json", runJson(draw(kernel(1.0, 0.01), 50, 1)));
    const QString bad = dir.filePath("bad.json");
    QFile f(bad);
    f.open(QIODevice::WriteOnly);
    f.write(content);
    f.close();
    QStringList full{"compare"};
    if (args.value(0) == QLatin1String("only")) {
        full << good;
    } else if (args.value(0) == QLatin1String("stdin")) {
        full << "-" << bad;
    } else {
        full << good << bad << args;
    }
    const KpTest::Run r = KpTest::run("kpg", full);
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    if (exitCode == 65) {
        QVERIFY2(r.err.contains(bad), qPrintable(r.err)); // names the file
    }
}

void TestCompare::cliControlCharacters()
{
    // Issue 28: titles and device names from the files reached the terminal as they were.
    QTemporaryDir dir;
    QJsonObject a = runJson(draw(kernel(0.0100, 0.02), 400, 5));
    a.insert("title", QStringLiteral("\x1b]0;pwned\x07\x1b[2J title"));
    a.insert("device", QStringLiteral("GPU\r\x1b[31mred\u202e"));
    QJsonObject b = runJson(draw(kernel(0.0080, 0.02), 400, 6));
    b.insert("device", QStringLiteral("other\x1b[0m"));
    const KpTest::Run r = KpTest::run("kpg", {"compare", writeJson(dir, "a.json", a), writeJson(dir, "b.json", b)});
    QCOMPARE(r.exitCode, 0);
    const QString all = r.out + r.err;
    for (const QChar c : {QChar(0x1b), QChar(0x07), QChar(u'\r'), QChar(0x202e)}) {
        QVERIFY2(!all.contains(c), qPrintable(QStringLiteral("U+%1 in: %2").arg(c.unicode(), 4, 16).arg(all)));
    }
    QVERIFY2(r.out.contains(QLatin1String("(?]0;pwned??[2J title) on GPU??[31mred?")), qPrintable(r.out));
    QVERIFY2(r.err.contains(QLatin1String("and B on other?[0m")), qPrintable(r.err));
}

void TestCompare::cliDenormalSamples()
{
    // Issue 28: 5e-324 ms samples printed "infx".
    QTemporaryDir dir;
    const QString fa = writeJson(dir, "a.json", runJson(draw(kernel(1.0, 0.01), 50, 7)));
    const QString fb = writeJson(dir, "b.json", runJson(QList<double>(50, 5e-324)));
    const KpTest::Run r = KpTest::run("kpg", {"compare", fa, fb});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains(QLatin1String("verdict: AMBIGUOUS")), qPrintable(r.out));
    QVERIFY2(r.out.contains(QLatin1String("too far apart to give a ratio")), qPrintable(r.out));
    QVERIFY2(!r.out.contains(QLatin1String("inf")), qPrintable(r.out));
}

void TestCompare::cliJson()
{
    QTemporaryDir dir;
    const QString fa = writeJson(dir, "a.json", runJson(draw(kernel(0.0100, 0.02), 400, 3)));
    const QString fb = writeJson(dir, "b.json", runJson(draw(kernel(0.0080, 0.02), 400, 4), QStringLiteral("hot")));
    const KpTest::Run r = KpTest::run("kpg", {"compare", fa, fb, "--json", "-"});
    QCOMPARE(r.exitCode, 0);
    QJsonParseError pe{};
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8(), &pe).object();
    QCOMPARE(pe.error, QJsonParseError::NoError);
    QCOMPARE(o.value("verdict").toString(), QStringLiteral("faster"));
    QVERIFY(o.value("relativeDifference").toDouble() < -0.15);
    QVERIFY(o.value("gap").toDouble() > 0);
    QCOMPARE(o.value("threshold").toDouble(), 0.01);
    QCOMPARE(o.value("a").toObject().value("count").toInt(), 400);
    QCOMPARE(o.value("b").toObject().value("mode").toString(), QStringLiteral("hot"));
    // The summary went to stderr, with the warning about mixed modes.
    QVERIFY2(r.err.contains(QLatin1String("verdict: FASTER")), qPrintable(r.err));
    QVERIFY2(r.err.contains(QLatin1String("mixes two timing modes")), qPrintable(r.err));
}

QTEST_GUILESS_MAIN(TestCompare)
#include "tst_compare.moc"
