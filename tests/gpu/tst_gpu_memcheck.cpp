// On a machine with an NVIDIA GPU: memory checking end to end through kpg.
// Guard zones catch a 4-byte and a 96-byte overrun (and an underrun) in the
// second step of a two-step project and name the step, buffer and elements;
// a clean run reports nothing. Under compute-sanitizer (skipped when it is
// not installed) memcheck, racecheck and initcheck on the memory presets'
// broken variants give findings on the right lines, threads and buffers, the
// presets themselves are clean, and a kernel that faults under memcheck costs
// one message and leaves the next run working.

#include "run/sanitizer.h"
#include "testutil.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace Kp;

namespace {

const char *const kTwoStep = R"~({"format": "kernel-playground-project", "version": 1, "title": "Two steps",
    "source": "two.cu",
    "scalars": [{"name": "n", "type": "int32", "value": 1000}, {"name": "shift", "type": "int32", "value": SHIFT}],
    "buffers": [{"name": "a", "dtype": "float32", "shape": [1000], "init": {"kind": "random", "min": 1, "max": 2, "seed": 3}},
                {"name": "b", "dtype": "float32", "shape": [1000]},
                {"name": "c", "dtype": "float32", "shape": [1000]}],
    "launches": [{"kernel": "scale", "grid": "ceil_div(n, block.x)", "block": 256, "args": ["a", "b", "n"]},
                 {"kernel": "copy", "grid": "ceil_div(n, block.x)", "block": 256, "args": ["b", "c", "n", "shift"]}],
    "timing": {"minSamples": 5, "minSeconds": 0.02, "timeoutSeconds": 5}})~";

const char *const kTwoStepSource = "__global__ void scale(const float *a, float *b, int n)\n"
                                   "{\n"
                                   "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                   "    if (i < n) b[i] = 2.0f * a[i];\n"
                                   "}\n"
                                   "__global__ void copy(const float *b, float *c, int n, int shift)\n"
                                   "{\n"
                                   "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                   "    if (i < n) c[i + shift] = b[i];\n"
                                   "}\n";

QString presetDir(const QString &name)
{
    return QStringLiteral(KPG_SOURCE_DIR "/presets/") + name;
}

/** The 1-based line of the first line of a file containing text. */
int lineOf(const QString &path, const QString &text)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        return -1;
    }
    const QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'));
    for (qsizetype i = 0; i < lines.size(); ++i) {
        if (lines[i].contains(text)) {
            return int(i + 1);
        }
    }
    return -1;
}

struct Kpg
{
    KpTest::Run run;
    QJsonObject doc;
};

Kpg kpg(const QStringList &args, const QString &json, const QStringList &env = {})
{
    Kpg k;
    k.run = KpTest::run(QStringLiteral("kpg"), args + QStringList{QStringLiteral("--json"), json}, env, 600000);
    QFile f(json);
    if (f.open(QIODevice::ReadOnly)) {
        k.doc = QJsonDocument::fromJson(f.readAll()).object();
    }
    return k;
}

} // namespace

class TestGpuMemcheck : public QObject
{
    Q_OBJECT

    bool m_haveSanitizer = false;
    QString m_sanitizerWhy;

    void needSanitizer()
    {
        if (!m_haveSanitizer) {
            QSKIP(qPrintable(m_sanitizerWhy));
        }
    }

private Q_SLOTS:
    void initTestCase()
    {
        const KpTest::Run devices = KpTest::run(QStringLiteral("kpg"), {QStringLiteral("devices")});
        if (devices.exitCode == 69) {
            QSKIP(qPrintable(QStringLiteral("no GPU: %1").arg(devices.err.trimmed())));
        }
        QVERIFY2(devices.exitCode == 0, qPrintable(devices.err));
        const Result<QString> p = Sanitizer::findProgram();
        m_haveSanitizer = p.ok();
        m_sanitizerWhy = p ? QString() : p.error().message;
    }

    void guardCatchesOverrunInStepTwo_data()
    {
        QTest::addColumn<int>("shift");
        QTest::addColumn<QString>("side");
        QTest::addColumn<int>("firstElement");
        QTest::addColumn<int>("lastElement");
        QTest::addColumn<QString>("message");
        QTest::newRow("4 bytes past") << 1 << "after" << 1000 << 1000
                                      << "step 2 (copy) wrote past the end of `c`: 4 bytes, element 1000 of the guard";
        QTest::newRow("96 bytes past")
            << 24 << "after" << 1000 << 1023
            << "step 2 (copy) wrote past the end of `c`: 96 bytes, elements 1000..1023 of the guard";
        QTest::newRow("8 bytes before") << -2 << "before" << -2 << -1
                                        << "step 2 (copy) wrote before the start of `c`: 8 bytes, elements -2..-1 of "
                                           "the guard";
    }

    void guardCatchesOverrunInStepTwo()
    {
        QFETCH(int, shift);
        QFETCH(QString, side);
        QFETCH(int, firstElement);
        QFETCH(int, lastElement);
        QFETCH(QString, message);
        QTemporaryDir dir;
        QByteArray p(kTwoStep);
        p.replace("SHIFT", QByteArray::number(shift));
        {
            QFile f(dir.filePath("p.kpg"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(p);
            QFile s(dir.filePath("two.cu"));
            QVERIFY(s.open(QIODevice::WriteOnly));
            s.write(kTwoStepSource);
        }
        const Kpg k = kpg({QStringLiteral("run"), dir.filePath("p.kpg"), QStringLiteral("--no-timing")},
                          dir.filePath("out.json"));
        QVERIFY2(k.run.exitCode == 1, qPrintable(k.run.err + k.run.out));
        QVERIFY2(k.run.out.contains(message), qPrintable(k.run.out));
        const QJsonObject guards = k.doc.value("guards").toObject();
        QCOMPARE(guards.value("enabled").toBool(), true);
        const QJsonArray v = guards.value("violations").toArray();
        QCOMPARE(v.size(), 1); // step 1 wrote nothing outside, and c's guard was caught once
        const QJsonObject o = v.first().toObject();
        QCOMPARE(o.value("step").toInt(), 2);
        QCOMPARE(o.value("kernel").toString(), QStringLiteral("copy"));
        QCOMPARE(o.value("buffer").toString(), QStringLiteral("c"));
        QCOMPARE(o.value("side").toString(), side);
        QCOMPARE(o.value("firstElement").toInt(), firstElement);
        QCOMPARE(o.value("lastElement").toInt(), lastElement);
        QCOMPARE(o.value("bytes").toInt(), 4 * (lastElement - firstElement + 1));
        QCOMPARE(o.value("message").toString(), message);
    }

    void cleanRunReportsNothing()
    {
        QTemporaryDir dir;
        QByteArray p(kTwoStep);
        p.replace("SHIFT", "0");
        {
            QFile f(dir.filePath("p.kpg"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(p);
            QFile s(dir.filePath("two.cu"));
            QVERIFY(s.open(QIODevice::WriteOnly));
            s.write(kTwoStepSource);
        }
        // Timed, so the check after the timing samples runs too.
        const Kpg k = kpg({QStringLiteral("run"), dir.filePath("p.kpg")}, dir.filePath("out.json"));
        QVERIFY2(k.run.exitCode == 0, qPrintable(k.run.err + k.run.out));
        QVERIFY2(!k.run.out.contains(QStringLiteral("wrote")), qPrintable(k.run.out));
        const QJsonObject guards = k.doc.value("guards").toObject();
        QCOMPARE(guards.value("enabled").toBool(), true);
        QCOMPARE(guards.value("violations").toArray().size(), 0);
        QVERIFY(guards.value("checkMs").toDouble() > 0);
        QVERIFY(k.doc.value("timing").isObject());
    }

    // Under a profiler the guard kernels are left out of the run (an Nsight
    // Compute report listed kpg_guard_fill and kpg_guard_check among the
    // user's kernels), and the run says so. KPG_PROFILING=1 is how the
    // worker is told a profiler is attached without one (timingstop.cpp).
    void guardsAreOffUnderAProfiler()
    {
        const QString dir = presetDir(QStringLiteral("memcheck_guard"));
        QTemporaryDir tmp;
        const Kpg k =
            kpg({QStringLiteral("run"), QStringLiteral("--no-timing"), dir + QStringLiteral("/memcheck_guard.kpg"),
                 QStringLiteral("--source"), dir + QStringLiteral("/broken/shifted_by_24.cu")},
                tmp.filePath("out.json"), {QStringLiteral("KPG_PROFILING=1")});
        // The run ends normally (its checks fail: the shifted write leaves c
        // unwritten) and the overrun goes uncaught, as the warning says.
        QVERIFY2(k.run.status == QProcess::NormalExit && (k.run.exitCode == 0 || k.run.exitCode == 1),
                 qPrintable(k.run.err + k.run.out));
        QCOMPARE(k.doc.value("guards").toObject().value("enabled").toBool(true), false);
        QCOMPARE(k.doc.value("guards").toObject().value("violations").toArray().size(), 0);
        QVERIFY2(
            k.run.err.contains(QStringLiteral("guard zones are off: a CUDA profiler is attached (KPG_PROFILING=1)")) ||
                k.run.out.contains(QStringLiteral("guard zones are off")),
            qPrintable(k.run.err + k.run.out));
        // Without it the same source's overrun is caught.
        const Kpg plain =
            kpg({QStringLiteral("run"), QStringLiteral("--no-timing"), dir + QStringLiteral("/memcheck_guard.kpg"),
                 QStringLiteral("--source"), dir + QStringLiteral("/broken/shifted_by_24.cu")},
                tmp.filePath("plain.json"));
        QCOMPARE(plain.doc.value("guards").toObject().value("enabled").toBool(), true);
        QVERIFY2(plain.run.exitCode != 0, qPrintable(plain.run.err + plain.run.out));
        QVERIFY2(!plain.doc.value("guards").toObject().value("violations").toArray().isEmpty(),
                 qPrintable(plain.run.err + plain.run.out));
    }

    void memcheckFindsTheShiftedWrite()
    {
        needSanitizer();
        const QString dir = presetDir(QStringLiteral("memcheck_guard"));
        const QString broken = dir + QStringLiteral("/broken/shifted_by_24.cu");
        const int line = lineOf(broken, QStringLiteral("c[i + 24] = b[i]"));
        QVERIFY(line > 0);
        QTemporaryDir tmp;
        const Kpg k =
            kpg({QStringLiteral("run"), dir + QStringLiteral("/memcheck_guard.kpg"), QStringLiteral("--source"), broken,
                 QStringLiteral("--sanitize"), QStringLiteral("memcheck")},
                tmp.filePath("out.json"));
        QVERIFY2(k.run.status == QProcess::NormalExit && k.run.exitCode == 1,
                 qPrintable(QStringLiteral("exit %1%2\n")
                                .arg(k.run.exitCode)
                                .arg(k.run.status == QProcess::NormalExit ? "" : " (crashed)") +
                            k.run.err + k.run.out));
        // The fault memcheck causes is one message, not a cascade.
        QCOMPARE(k.run.err.count(QStringLiteral("run failed")), 1);
        const QJsonObject s = k.doc.value("sanitizer").toObject();
        QCOMPARE(s.value("tool").toString(), QStringLiteral("memcheck"));
        QVERIFY2(s.value("counts").toObject().value("invalid-access").toInt() >= 1, qPrintable(k.run.out));
        QCOMPARE(s.value("counts").toObject().value("api").toInt(), 0); // the worker's probes are not findings
        for (const QJsonValue &fv : s.value("findings").toArray()) {
            const QJsonObject f = fv.toObject();
            if (f.value("kind").toString() != QLatin1String("invalid-access")) {
                continue;
            }
            QCOMPARE(f.value("where").toObject().value("line").toInt(), line);
            QCOMPARE(f.value("where").toObject().value("file").toString(), QStringLiteral("shifted_by_24.cu"));
            QCOMPARE(f.value("access").toString(), QStringLiteral("write"));
            QCOMPARE(f.value("buffer").toString(), QStringLiteral("c"));
            const int element = f.value("element").toInt();
            QVERIFY2(element >= 1000 && element <= 1023, qPrintable(QString::number(element)));
            const QJsonArray t = f.value("thread").toArray();
            const QJsonArray b = f.value("block").toArray();
            // Thread i writes c[i + 24]: the element names the thread.
            QCOMPARE(b[0].toInt() * 256 + t[0].toInt() + 24, element);
        }
        // A fresh worker serves the next run (the fixed project passes).
        const Kpg next =
            kpg({QStringLiteral("run"), dir + QStringLiteral("/memcheck_guard.kpg"), QStringLiteral("--no-timing")},
                tmp.filePath("next.json"));
        QVERIFY2(next.run.exitCode == 0, qPrintable(next.run.err + next.run.out));
    }

    void checkSanitizeFailsWithTheFinding()
    {
        needSanitizer();
        const QString dir = presetDir(QStringLiteral("memcheck_guard"));
        QTemporaryDir tmp;
        const Kpg k = kpg({QStringLiteral("check"), dir + QStringLiteral("/memcheck_guard.kpg"),
                           QStringLiteral("--source"), dir + QStringLiteral("/broken/shifted_copy.cu"),
                           QStringLiteral("--sanitize"), QStringLiteral("memcheck")},
                          tmp.filePath("out.json"));
        QVERIFY2(k.run.exitCode == 1, qPrintable(k.run.err + k.run.out));
        QCOMPARE(k.doc.value("passed").toBool(true), false);
        const QJsonArray findings = k.doc.value("sanitizer").toObject().value("findings").toArray();
        QVERIFY(!findings.isEmpty());
        QCOMPARE(findings.first().toObject().value("buffer").toString(), QStringLiteral("c"));
        QCOMPARE(findings.first().toObject().value("element").toInt(), 1000);
        QVERIFY2(k.run.out.contains(QStringLiteral("just past the end of `c` (element 1000)")), qPrintable(k.run.out));
    }

    void racecheckFindsTheMissingBarrier()
    {
        needSanitizer();
        const QString dir = presetDir(QStringLiteral("racecheck_reduce"));
        const QString broken = dir + QStringLiteral("/broken/no_sync.cu");
        const int readLine = lineOf(broken, QStringLiteral("const float other = sdata[tid + s]"));
        const int writeLine = lineOf(broken, QStringLiteral("sdata[tid] += other"));
        QVERIFY(readLine > 0 && writeLine == readLine + 1);
        const QList<int> lines{readLine, writeLine};
        QTemporaryDir tmp;
        const Kpg k =
            kpg({QStringLiteral("run"), dir + QStringLiteral("/racecheck_reduce.kpg"), QStringLiteral("--source"),
                 broken, QStringLiteral("--sanitize"), QStringLiteral("racecheck")},
                tmp.filePath("out.json"));
        QVERIFY2(k.run.exitCode == 1, qPrintable(k.run.err + k.run.out));
        const QJsonArray findings = k.doc.value("sanitizer").toObject().value("findings").toArray();
        QVERIFY2(!findings.isEmpty(), qPrintable(k.run.out));
        bool sawTwoLines = false;
        for (const QJsonValue &fv : findings) {
            const QJsonObject f = fv.toObject();
            if (f.value("kind").toString() == QLatin1String("race")) {
                const int a = f.value("where").toObject().value("line").toInt();
                const int b = f.value("other").toObject().value("line").toInt();
                QVERIFY2(lines.contains(a) && lines.contains(b), qPrintable(QStringLiteral("%1 %2").arg(a).arg(b)));
                sawTwoLines = sawTwoLines || a != b;
                QVERIFY(f.value("count").toInt() > 0);
            }
        }
        QVERIFY2(sawTwoLines, "no race joins the read line and the write line");

        const Kpg h =
            kpg({QStringLiteral("run"), dir + QStringLiteral("/racecheck_reduce.kpg"), QStringLiteral("--source"),
                 broken, QStringLiteral("--sanitize"), QStringLiteral("racecheck"), QStringLiteral("--hazards")},
                tmp.filePath("hazards.json"));
        QVERIFY2(h.run.exitCode == 1, qPrintable(h.run.err + h.run.out));
        const QJsonArray hazards = h.doc.value("sanitizer").toObject().value("findings").toArray();
        QVERIFY(!hazards.isEmpty());
        for (const QJsonValue &fv : hazards) {
            const QJsonObject f = fv.toObject();
            QCOMPARE(f.value("kind").toString(), QStringLiteral("hazard"));
            QVERIFY(lines.contains(f.value("where").toObject().value("line").toInt()));
            QVERIFY(lines.contains(f.value("other").toObject().value("line").toInt()));
            // Offsets into the block's own 1 KiB (256 floats), past the driver's reserved shared memory.
            const int offset = f.value("sharedOffset").toInt();
            QVERIFY2(offset >= 0 && offset < 1024, qPrintable(QString::number(offset)));
            QVERIFY(f.value("thread").toArray() != f.value("otherThread").toArray());
        }
    }

    void initcheckFindsTheUnwrittenHalf()
    {
        needSanitizer();
        const QString dir = presetDir(QStringLiteral("initcheck_scratch"));
        const QString broken = dir + QStringLiteral("/broken/stage_half.cu");
        const int line = lineOf(broken, QStringLiteral("out[i] = scratch[i] + 1.0f"));
        QVERIFY(line > 0);
        QTemporaryDir tmp;
        const Kpg k =
            kpg({QStringLiteral("run"), dir + QStringLiteral("/initcheck_scratch.kpg"), QStringLiteral("--source"),
                 broken, QStringLiteral("--sanitize"), QStringLiteral("initcheck")},
                tmp.filePath("out.json"));
        QVERIFY2(k.run.exitCode == 1, qPrintable(k.run.err + k.run.out));
        const QJsonObject s = k.doc.value("sanitizer").toObject();
        int byThreads = 0;
        for (const QJsonValue &fv : s.value("findings").toArray()) {
            const QJsonObject f = fv.toObject();
            if (!f.contains("thread")) {
                continue; // initcheck may also report the download of the half nobody wrote
            }
            ++byThreads;
            QCOMPARE(f.value("kind").toString(), QStringLiteral("uninitialized"));
            QCOMPARE(f.value("where").toObject().value("line").toInt(), line);
            QCOMPARE(f.value("buffer").toString(), QStringLiteral("scratch"));
            const int element = f.value("element").toInt();
            QVERIFY(element >= 500 && element < 1000);
            QCOMPARE(f.value("block").toArray()[0].toInt() * 256 + f.value("thread").toArray()[0].toInt(), element);
        }
        QCOMPARE(byThreads, 500); // one read per thread of the unwritten half
    }

    void presetsAreClean_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("tool");
        QTest::newRow("memcheck") << "memcheck_guard"
                                  << "memcheck";
        QTest::newRow("racecheck") << "racecheck_reduce"
                                   << "racecheck";
        QTest::newRow("initcheck") << "initcheck_scratch"
                                   << "initcheck";
    }

    void presetsAreClean()
    {
        needSanitizer();
        QFETCH(QString, preset);
        QFETCH(QString, tool);
        QTemporaryDir tmp;
        const Kpg k =
            kpg({QStringLiteral("run"), presetDir(preset) + QLatin1Char('/') + preset + QStringLiteral(".kpg"),
                 QStringLiteral("--sanitize"), tool},
                tmp.filePath("out.json"));
        QVERIFY2(k.run.exitCode == 0, qPrintable(k.run.err + k.run.out));
        QCOMPARE(k.doc.value("sanitizer").toObject().value("clean").toBool(), true);
        QVERIFY(k.run.out.contains(QStringLiteral("compute-sanitizer: no findings")));
    }
};

QTEST_GUILESS_MAIN(TestGpuMemcheck)
#include "tst_gpu_memcheck.moc"
