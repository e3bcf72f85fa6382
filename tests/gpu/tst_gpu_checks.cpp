// On a machine with an NVIDIA GPU: `kpg check` end to end. A right kernel
// passes; an off-by-one fails with the report a CPU computes from the same
// random inputs; a fault exits 3, a hang 4 (and the next check passes); a
// kernel that writes a table of run 0's outputs passes one seed run and fails
// the second; every preset passes its own checks, and every broken variant
// (presets/*/broken/*.cu) fails as its first line says.

#include "buffers/dtype.h"
#include "check/checkedrun.h"
#include "client/engineclient.h"
#include "project/projectio.h"
#include "run/runner.h"
#include "testutil.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace Kp;

namespace {

const char *const kProject = R"~({"format": "kernel-playground-project", "version": 1, "title": "Add",
    "source": "add.cu",
    "scalars": [{"name": "n", "type": "int32", "value": N}],
    "buffers": [{"name": "a", "dtype": "float32", "shape": [N], "init": {"kind": "random", "min": -1, "max": 1, "seed": 11}},
                {"name": "b", "dtype": "float32", "shape": [N], "init": {"kind": "random", "min": -1, "max": 1, "seed": 12}},
                {"name": "c", "dtype": "float32", "shape": [N]}],
    "launches": [{"kernel": "add", "grid": "ceil_div(n, block.x)", "block": 256, "args": ["a", "b", "c", "n"]}],
    "checks": [{"name": "c = a + b", "buffer": "c", "expected": "a + b", "seeds": SEEDS},
               {"name": "c matches the reference", "buffer": "c", "reference": "c"}]})~";

const char *const kGood = "__global__ void add(const float *a, const float *b, float *c, int n)\n"
                          "{\n"
                          "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                          "    if (i < n) c[i] = a[i] + b[i];\n"
                          "}\n";

void writeFile(const QString &path, const QByteArray &data)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(data);
}

QString makeProject(const QTemporaryDir &dir, int n, int seeds)
{
    QByteArray p(kProject);
    p.replace("SEEDS", QByteArray::number(seeds));
    p.replace("N", QByteArray::number(n));
    writeFile(dir.filePath("p.kpg"), p);
    writeFile(dir.filePath("add.cu"), kGood);
    return dir.filePath("p.kpg");
}

struct Checked
{
    KpTest::Run run;
    QJsonObject doc;
};

Checked check(const QStringList &args, int timeoutMs = 120000)
{
    Checked c;
    c.run = KpTest::run("kpg", QStringList{"check"} + args + QStringList{"--json", "-"}, {}, timeoutMs);
    c.doc = QJsonDocument::fromJson(c.run.out.toUtf8()).object();
    return c;
}

QJsonObject checkNamed(const QJsonObject &doc, const QString &name)
{
    for (const QJsonValue &v : doc.value("checks").toArray()) {
        if (v.toObject().value("name").toString() == name) {
            return v.toObject();
        }
    }
    return {};
}

} // namespace

class TestGpuChecks : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        EngineClient client;
        const Result<DeviceList> r = client.listDevicesSync(60000);
        if (!r) {
            if (r.error().code == Error::Code::NoDriver || r.error().code == Error::Code::NoDevice) {
                QSKIP(qPrintable(QStringLiteral("no GPU: %1").arg(r.error().message)));
            }
            QFAIL(qPrintable(r.error().toString()));
        }
    }

    void goodKernelPasses()
    {
        QTemporaryDir dir;
        const QString p = makeProject(dir, 100000, 3);
        const Checked c = check({p});
        QVERIFY2(c.run.exitCode == 0, qPrintable(c.run.err + c.run.out));
        QCOMPARE(c.doc.value("passed").toBool(), true);
        QCOMPARE(c.doc.value("seedRuns").toInt(), 3);
        QCOMPARE(c.doc.value("checks").toArray().size(), 2);
        const QJsonObject sum = checkNamed(c.doc, "c = a + b");
        QCOMPARE(sum.value("passed").toBool(), true);
        QCOMPARE(sum.value("compared").toInteger(), 100000);
        QCOMPARE(sum.value("seedRuns").toInt(), 3);
        QVERIFY(c.doc.value("run").toObject().value("timing").isNull()); // timing off by default

        // The text form, and --timing.
        const KpTest::Run text = KpTest::run("kpg", {"check", p, "--timing"});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.contains("PASS c = a + b (100000 elements, 3 seed runs)"), qPrintable(text.out));
        QVERIFY2(text.out.contains("2 of 2 checks passed (3 seed runs)"), qPrintable(text.out));
        QVERIFY2(text.out.contains("time: median"), qPrintable(text.out));
    }

    void offByOneReport()
    {
        const int n = 100000;
        QTemporaryDir dir;
        const QString p = makeProject(dir, n, 1);
        writeFile(dir.filePath("shifted.cu"), "__global__ void add(const float *a, const float *b, float *c, int n)\n"
                                              "{\n"
                                              "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                              "    if (i < n) c[i] = a[i] + b[min(i + 1, n - 1)];\n"
                                              "}\n");
        const Checked c = check({p, "--source", dir.filePath("shifted.cu")});
        QVERIFY2(c.run.exitCode == 1, qPrintable(c.run.err + c.run.out));

        // The CPU's report from the same inputs (the project's own fill on the host).
        const Result<Project> project = loadProject(p);
        KP_VERIFY_RESULT(project);
        HostBuffers buffers;
        KP_VERIFY_RESULT(buffers.materialize(*project));
        const float *a = static_cast<const float *>(buffers.find("a")->memory.data());
        const float *b = static_cast<const float *>(buffers.find("b")->memory.data());
        qint64 mismatches = 0;
        double maxAbs = 0;
        double sumAbs = 0;
        QList<qint64> first;
        QList<float> firstGot;
        for (int i = 0; i < n; ++i) {
            const float got = a[i] + b[std::min(i + 1, n - 1)];
            const double exp = double(a[i]) + double(b[i]);
            const double d = std::fabs(double(got) - exp);
            maxAbs = std::max(maxAbs, d);
            sumAbs += d;
            if (!(d <= 1e-6 + 1e-5 * std::fabs(exp)) && got != float(exp)) {
                ++mismatches;
                if (first.size() < 10) {
                    first << i;
                    firstGot << got;
                }
            }
        }
        QVERIFY(mismatches > n / 2);
        const QJsonObject sum = checkNamed(c.doc, "c = a + b");
        QCOMPARE(sum.value("passed").toBool(true), false);
        QCOMPARE(sum.value("mismatches").toInteger(), mismatches);
        QCOMPARE(sum.value("compared").toInteger(), qint64(n));
        QVERIFY(std::fabs(sum.value("maxAbsError").toDouble() - maxAbs) <= 1e-12);
        QVERIFY(std::fabs(sum.value("meanAbsError").toDouble() - sumAbs / n) <= 1e-9);
        const QJsonArray reported = sum.value("firstMismatches").toArray();
        QCOMPARE(reported.size(), 10);
        for (int k = 0; k < 10; ++k) {
            const QJsonObject m = reported[k].toObject();
            QCOMPARE(m.value("index").toInteger(), first[k]);
            QCOMPARE(m.value("coords").toArray()[0].toInteger(), first[k]);
            QCOMPARE(float(m.value("got").toDouble()), firstGot[k]);
            QCOMPARE(m.value("expected").toDouble(), double(a[first[k]]) + double(b[first[k]]));
        }
        // The reference run (the project's add.cu) finds the same elements.
        const QJsonObject ref = checkNamed(c.doc, "c matches the reference");
        QCOMPARE(ref.value("passed").toBool(true), false);
        QCOMPARE(ref.value("firstMismatches").toArray()[0].toObject().value("index").toInteger(), first[0]);

        const KpTest::Run text = KpTest::run("kpg", {"check", p, "--source", dir.filePath("shifted.cu")});
        QCOMPARE(text.exitCode, 1);
        QVERIFY2(text.out.contains(QStringLiteral("FAIL c = a + b: %1 of %2 elements differ").arg(mismatches).arg(n)),
                 qPrintable(text.out));
        QVERIFY2(text.out.contains("0 of 2 checks passed"), qPrintable(text.out));
    }

    void faultThenHangThenPass()
    {
        QTemporaryDir dir;
        const QString p = makeProject(dir, 4096, 1);
        writeFile(dir.filePath("fault.cu"), "__global__ void add(const float *a, const float *b, float *c, int n)\n"
                                            "{\n"
                                            "    float *bad = (float *)0x10;\n"
                                            "    bad[threadIdx.x] = a[0];\n"
                                            "}\n");
        writeFile(dir.filePath("hang.cu"),
                  "__global__ void add(const float *a, const float *b, float *c, int n)\n"
                  "{\n"
                  "    // An hour of %globaltimer, read with asm volatile: a loop the compiler\n"
                  "    // must keep (one on clock64() - start >= 0 was once removed as\n"
                  "    // side-effect free, and the kernel returned at once).\n"
                  "    unsigned long long start, now;\n"
                  "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(start));\n"
                  "    do {\n"
                  "        asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(now));\n"
                  "    } while (now - start < 3600000000000ull);\n"
                  "    c[threadIdx.x] = float(now - start);\n"
                  "}\n");
        const Checked fault = check({p, "--source", dir.filePath("fault.cu")});
        QVERIFY2(fault.run.exitCode == 3, qPrintable(fault.run.err));
        const QString code = fault.doc.value("error").toObject().value("code").toString();
        QVERIFY2(code == "fault" || code == "worker-died", qPrintable(code));
        QCOMPARE(fault.doc.value("checks").toArray().size(), 0);

        QElapsedTimer t;
        t.start();
        const Checked hang = check({p, "--source", dir.filePath("hang.cu"), "--timeout", "2"}, 60000);
        QVERIFY2(hang.run.exitCode == 4, qPrintable(hang.run.err));
        QVERIFY2(t.elapsed() < 30000, qPrintable(QString::number(t.elapsed())));
        QCOMPARE(hang.doc.value("error").toObject().value("code").toString(), QString("timeout"));

        const Checked good = check({p, "--source", dir.filePath("add.cu")});
        QVERIFY2(good.run.exitCode == 0, qPrintable(good.run.err));
    }

    void hardCodedOutputsFailOtherSeeds()
    {
        // A "kernel" that copies a table of the right answers for the inputs of seed run 0.
        const int n = 1024;
        QTemporaryDir dir;
        const QString p1 = makeProject(dir, n, 1);
        const Result<Project> project = loadProject(p1);
        KP_VERIFY_RESULT(project);
        HostBuffers buffers;
        KP_VERIFY_RESULT(buffers.materialize(*project));
        const float *a = static_cast<const float *>(buffers.find("a")->memory.data());
        const float *b = static_cast<const float *>(buffers.find("b")->memory.data());
        QByteArray table = "__device__ const float table[] = {\n";
        for (int i = 0; i < n; ++i) {
            table += QByteArray::number(double(a[i] + b[i]), 'g', 9) + "f,\n";
        }
        table += "};\n__global__ void add(const float *a, const float *b, float *c, int n)\n"
                 "{\n"
                 "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                 "    if (i < n) c[i] = table[i];\n"
                 "}\n";
        writeFile(dir.filePath("table.cu"), table);

        // One seed run cannot tell...
        const Checked once = check({p1, "--source", dir.filePath("table.cu")});
        QVERIFY2(once.run.exitCode == 0, qPrintable(once.run.err + once.run.out));
        // ...a second one can, and says which run failed.
        const QString p3 = makeProject(dir, n, 3);
        const Checked thrice = check({p3, "--source", dir.filePath("table.cu")});
        QVERIFY2(thrice.run.exitCode == 1, qPrintable(thrice.run.err + thrice.run.out));
        const QJsonObject sum = checkNamed(thrice.doc, "c = a + b");
        QCOMPARE(sum.value("passed").toBool(true), false);
        QCOMPARE(sum.value("seedRun").toInt(), 1);
        QCOMPARE(sum.value("seedRuns").toInt(), 3);
        QVERIFY(sum.value("mismatches").toInteger() > n / 2);
        // The reference check has seeds 1: the table passes it.
        QCOMPARE(checkNamed(thrice.doc, "c matches the reference").value("passed").toBool(), true);
        // Seed run 2 was not needed once every check that asked for it had failed.
        QCOMPARE(thrice.doc.value("seedRuns").toInt(), 2);
    }

    void kpgRunEvaluatesChecks()
    {
        QTemporaryDir dir;
        const QString p = makeProject(dir, 10000, 1);
        const KpTest::Run ok = KpTest::run("kpg", {"run", p, "--no-timing", "--json", dir.filePath("ok.json")});
        QVERIFY2(ok.exitCode == 0, qPrintable(ok.err));
        QVERIFY2(ok.out.contains("PASS c = a + b"), qPrintable(ok.out));
        writeFile(dir.filePath("add.cu"),
                  "__global__ void add(const float *a, const float *b, float *c, int n)\n"
                  "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i]; }\n");
        // The project's own source is now wrong: its reference is that source too, so only the expression catches it.
        const KpTest::Run bad = KpTest::run("kpg", {"run", p, "--no-timing", "--json", dir.filePath("bad.json")});
        QCOMPARE(bad.exitCode, 1);
        QFile f(dir.filePath("bad.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject doc = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(doc.value("ok").toBool(), true); // the run itself went fine
        QCOMPARE(doc.value("checksPassed").toBool(true), false);
        QCOMPARE(checkNamed(doc, "c = a + b").value("passed").toBool(true), false);
        QCOMPARE(checkNamed(doc, "c matches the reference").value("passed").toBool(), true);
    }

    void presetsPassTheirChecks_data()
    {
        QTest::addColumn<QString>("path");
        const QDir dir(QStringLiteral(KPG_SOURCE_DIR "/presets"));
        for (const QString &name : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
            const QString kpg = dir.filePath(name + QLatin1Char('/') + name + QStringLiteral(".kpg"));
            const Result<Project> p = loadProject(kpg);
            if (p && !p->checks.isEmpty()) {
                QTest::newRow(qPrintable(name)) << kpg;
            }
        }
    }

    void presetsPassTheirChecks()
    {
        QFETCH(QString, path);
        const Checked c = check({path}, 300000);
        QVERIFY2(c.run.exitCode == 0, qPrintable(c.run.err + c.run.out));
        QCOMPARE(c.doc.value("passed").toBool(), true);
    }

    void brokenVariantsFail_data()
    {
        QTest::addColumn<QString>("project");
        QTest::addColumn<QString>("source");
        const QDir dir(QStringLiteral(KPG_SOURCE_DIR "/presets"));
        int rows = 0;
        for (const QString &name : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
            const QDir broken(dir.filePath(name + QStringLiteral("/broken")));
            for (const QString &cu : broken.entryList({QStringLiteral("*.cu")}, QDir::Files, QDir::Name)) {
                QTest::newRow(qPrintable(name + QLatin1Char('/') + cu))
                    << dir.filePath(name + QLatin1Char('/') + name + QStringLiteral(".kpg")) << broken.filePath(cu);
                ++rows;
            }
        }
        if (rows == 0) {
            QTest::newRow("none") << QString() << QString();
        }
    }

    void brokenVariantsFail()
    {
        QFETCH(QString, project);
        QFETCH(QString, source);
        if (source.isEmpty()) {
            QSKIP("no presets/*/broken/*.cu in this tree");
        }
        QFile f(source);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString firstLine = QString::fromUtf8(f.readLine()).trimmed();
        // fail: the check fails every time; race: a race decides, run by run,
        // whether it shows, so the check fails or passes but nothing else
        // happens (racecheck, which always finds it, is tst_gpu_memcheck's).
        static const QRegularExpression re(
            QStringLiteral("^// kpg-expect: (?:fail \"(.+)\" first ([0-9]+|any)|race \"(.+)\")$"));
        const QRegularExpressionMatch m = re.match(firstLine);
        QVERIFY2(m.hasMatch(), qPrintable(source +
                                          ": the first line must read // kpg-expect: fail \"<check>\" first "
                                          "<index|any> or // kpg-expect: race \"<check>\", not: " +
                                          firstLine));
        if (m.capturedLength(3) > 0) {
            const Checked c = check({project, "--source", source}, 300000);
            QVERIFY2(c.run.exitCode == 0 || c.run.exitCode == 1,
                     qPrintable(QString::number(c.run.exitCode) + ": " + c.run.err + c.run.out));
            const QJsonObject r = checkNamed(c.doc, m.captured(3));
            QVERIFY2(!r.isEmpty(), qPrintable("no check named '" + m.captured(3) + "' in " + project));
            QCOMPARE(r.value("passed").toBool(), c.run.exitCode == 0);
            if (c.run.exitCode == 0) {
                qInfo("%s: the race did not show in this run", qPrintable(source));
            }
            return;
        }
        const QString name = m.captured(1);
        const QString index = m.captured(2);

        const Checked c = check({project, "--source", source}, 300000);
        QVERIFY2(c.run.exitCode == 1, qPrintable(QString::number(c.run.exitCode) + ": " + c.run.err + c.run.out));
        const QJsonObject r = checkNamed(c.doc, name);
        QVERIFY2(!r.isEmpty(), qPrintable("no check named '" + name + "' in " + project));
        QCOMPARE(r.value("passed").toBool(true), false);
        if (index != QLatin1String("any")) {
            const QJsonArray first = r.value("firstMismatches").toArray();
            QVERIFY(!first.isEmpty());
            QCOMPARE(first[0].toObject().value("index").toInteger(), index.toLongLong());
        }
    }
};

QTEST_GUILESS_MAIN(TestGpuChecks)
#include "tst_gpu_checks.moc"
