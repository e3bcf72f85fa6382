// kpg grade on a GPU: the test class of tests/data/lab gives the expected
// table: passes, a wrong bounds guard and a wrong grid with their first
// mismatch, a compile error, a fault, a hang stopped by the time-out and
// followed on the same worker by a submission that passes, a correct but slow
// kernel below the exercise's speed target; a kernel that writes only on its
// first launch fails under the sentinel. Skips without a GPU.

#include "client/engineclient.h"
#include "testutil.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace Kp;

namespace {

const QString kLab = QStringLiteral(KPG_SOURCE_DIR "/tests/data/lab/exercises");
const QString kSubs = QStringLiteral(KPG_SOURCE_DIR "/tests/data/lab/submissions");

QHash<QString, QJsonObject> resultsOf(const QString &jsonPath)
{
    QFile f(jsonPath);
    if (!f.open(QIODevice::ReadOnly)) {
        return {};
    }
    QHash<QString, QJsonObject> m;
    for (const QJsonValue &v : QJsonDocument::fromJson(f.readAll()).object().value("results").toArray()) {
        const QJsonObject o = v.toObject();
        m.insert(o.value("student").toString() + "/" + o.value("exercise").toString(), o);
    }
    return m;
}

} // namespace

class TestGpuGrade : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase()
    {
        EngineClient client;
        const Result<DeviceList> devices = client.listDevicesSync();
        if (!devices || devices->devices.isEmpty()) {
            QSKIP(qPrintable(
                QStringLiteral("no GPU: %1").arg(devices ? QStringLiteral("none found") : devices.error().message)));
        }
    }

    void classTable()
    {
        // One worker and one compile thread: the order is the class's, so the
        // hang (carol/saxpy) is followed by carol/scale on the same worker.
        const QString json = m_dir.filePath("grades.json");
        const KpTest::Run r = KpTest::run("kpg",
                                          {"grade", kLab, "--submissions", kSubs, "--jobs", "1", "--compile-jobs", "1",
                                           "--timeout", "2", "--json", json, "--csv", m_dir.filePath("grades.csv")},
                                          {}, 240000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + r.out));
        const QHash<QString, QJsonObject> res = resultsOf(json);
        QCOMPARE(res.size(), 12);
        const QMap<QString, QString> expected{
            {"alice/saxpy", "pass"},        {"alice/scale", "pass"},        {"alice/vector_add", "pass"},
            {"bob/saxpy", "compile-error"}, {"bob/scale", "not-submitted"}, {"bob/vector_add", "fail"},
            {"carol/saxpy", "timeout"},     {"carol/scale", "pass"},        {"carol/vector_add", "fault"},
            {"dave/saxpy", "fail"},         {"dave/scale", "fail"},         {"dave/vector_add", "slow"},
        };
        QMap<QString, QString> got;
        for (auto it = res.cbegin(); it != res.cend(); ++it) {
            got.insert(it.key(), it->value("outcome").toString());
        }
        if (got != expected) {
            qWarning().noquote() << r.out << r.err;
        }
        QCOMPARE(got, expected);

        // The first mismatches: the off-by-one misses the last element, the short grid starts at 1024.
        QCOMPARE(res["bob/vector_add"].value("failedCheck").toString(), QString("c = a + b"));
        QVERIFY2(res["bob/vector_add"].value("firstMismatch").toString().startsWith("c[999] (x=999): got "),
                 qPrintable(res["bob/vector_add"].value("firstMismatch").toString()));
        QVERIFY2(res["dave/saxpy"].value("firstMismatch").toString().startsWith("y[1024] (x=1024): got "),
                 qPrintable(res["dave/saxpy"].value("firstMismatch").toString()));
        QCOMPARE(res["dave/scale"].value("failedCheck").toString(), QString("out = 3 in"));
        QVERIFY(res["bob/saxpy"].value("compileErrors").toArray().first().toString().startsWith("saxpy.cu:5:5: "));

        // The hang cost carol/saxpy only: the next submission got a fresh worker and passed.
        QVERIFY(!res["carol/saxpy"].value("detail").toString().isEmpty());
        // A fresh worker after the hang and after the fault: started within the
        // item that broke the old one (Runner restarts at once) or the next.
        QVERIFY(res["carol/saxpy"].value("workerRestarted").toBool() ||
                res["carol/scale"].value("workerRestarted").toBool());
        QVERIFY(res["carol/vector_add"].value("workerRestarted").toBool() ||
                res["dave/saxpy"].value("workerRestarted").toBool());
        QCOMPARE(res["dave/saxpy"].value("device").toInt(), res["carol/scale"].value("device").toInt());

        // Speed: the reference as a submission is about as fast as itself; dave's busy loop is far below 0.5x.
        const double aliceRatio = res["alice/vector_add"].value("speedRatio").toDouble();
        // The reference is timed first, on a GPU maybe still clocking up: a wide band.
        QVERIFY2(aliceRatio > 0.3 && aliceRatio < 3, qPrintable(QString::number(aliceRatio)));
        QVERIFY(res["alice/vector_add"].value("referenceMs").toDouble() > 0);
        QVERIFY(res["dave/vector_add"].value("speedRatio").toDouble() < 0.5);
        QCOMPARE(res["dave/vector_add"].value("minSpeedup").toDouble(), 0.5);
        QVERIFY2(r.out.contains("vector_add  1 of 4 passed"), qPrintable(r.out));
        QVERIFY2(r.out.contains("saxpy       1 of 4 passed"), qPrintable(r.out));
        QVERIFY2(r.out.contains("scale       2 of 3 passed"), qPrintable(r.out));
    }

    void allGpusWithoutTiming()
    {
        // Every GPU, compiles in parallel, no timing: no speed target is judged.
        const QString json = m_dir.filePath("untimed.json");
        const KpTest::Run r =
            KpTest::run("kpg", {"grade", kLab, "--submissions", kSubs, "--no-timing", "--timeout", "2", "--json", json},
                        {}, 240000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + r.out));
        const QHash<QString, QJsonObject> res = resultsOf(json);
        QCOMPARE(res.size(), 12);
        QCOMPARE(res["dave/vector_add"].value("outcome").toString(), QString("pass"));
        QVERIFY(res["dave/vector_add"].value("speedRatio").isNull());
        QCOMPARE(res["carol/saxpy"].value("outcome").toString(), QString("timeout"));
        QCOMPARE(res["carol/vector_add"].value("outcome").toString(), QString("fault"));
        QCOMPARE(res["alice/saxpy"].value("outcome").toString(), QString("pass"));
        QCOMPARE(res["carol/scale"].value("outcome").toString(), QString("pass"));
    }

    void integrityAndAntiGaming_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("outcome");
        QTest::addColumn<QString>("detail");
        QTest::newRow("writes one element past the end (i <= n)")
            << "__global__ void scale(const int *in, int *out, int n)\n{\n"
               "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               "    if (i <= n) out[i] = 3 * (i < n ? in[i] : 0);\n}\n"
            << "fail"
            << "wrote outside `out` (element 2000, 4 bytes past the end)";
        QTest::newRow("writes past the end and computes the wrong thing")
            << "__global__ void scale(const int *in, int *out, int n)\n{\n"
               "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               "    if (i <= n) out[i] = 2 * (i < n ? in[i] : 0);\n}\n"
            << "fail"
            << "wrote outside `out` (element 2000, 4 bytes past the end); check 'out = 3 in' failed";
        // Computes in the first two launches (the checked run and the warm-up),
        // then leaves the output alone: fast, and right only without the sentinel.
        QTest::newRow("caches its answer across launches")
            << "__device__ unsigned int launches;\n"
               "__global__ void scale(const int *in, int *out, int n)\n{\n"
               "    const unsigned int seen = *(volatile unsigned int *)&launches;\n"
               "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               "    if (seen < 2 && i < n) out[i] = 3 * in[i];\n"
               "    if (i == 0) atomicAdd(&launches, 1u);\n}\n"
            << "fail"
            << "check 'out = 3 in' failed";
        QTest::newRow("prints a flood")
            << "#include <cstdio>\n__global__ void scale(const int *in, int *out, int n)\n{\n"
               "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               "    for (int k = 0; k < 20; ++k) printf(\"%d %d\\n\", i, k);\n"
               "    if (i < n) out[i] = 3 * in[i];\n}\n"
            << "printf-flood"
            << "printf output cut at ";
    }

    void integrityAndAntiGaming()
    {
        QFETCH(QString, source);
        QFETCH(QString, outcome);
        QFETCH(QString, detail);
        QTemporaryDir subs;
        QDir().mkpath(subs.filePath("mallory"));
        QFile f(subs.filePath("mallory/scale.cu"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(source.toUtf8());
        f.close();
        const QString json =
            m_dir.filePath(QStringLiteral("mallory-%1.json").arg(QTest::currentDataTag()).replace(' ', '_'));
        const KpTest::Run r = KpTest::run(
            "kpg", {"grade", kLab, "--submissions", subs.path(), "--jobs", "1", "--json", json}, {}, 240000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + r.out));
        const QJsonObject scale = resultsOf(json).value("mallory/scale");
        QCOMPARE(scale.value("outcome").toString(), outcome);
        QVERIFY2(scale.value("detail").toString().startsWith(detail), qPrintable(scale.value("detail").toString()));
    }

    void writesOnlyOnItsFirstLaunch_data()
    {
        QTest::addColumn<bool>("antiGaming");
        QTest::addColumn<QString>("outcome");
        QTest::newRow("anti-gaming on: the second launch finds the sentinel") << true << "fail";
        QTest::newRow("anti-gaming off: the first launch's answer is kept") << false << "pass";
    }

    void writesOnlyOnItsFirstLaunch()
    {
        // The scale exercise run twice per check run (repeat 2), untimed: only
        // the sentinel before every launch of the check run tells this kernel,
        // which returns at once once every block of its first launch is done.
        QFETCH(bool, antiGaming);
        QFETCH(QString, outcome);
        QTemporaryDir lab;
        QVERIFY(QDir().mkpath(lab.filePath("scale")));
        for (const char *f : {"reference.cu", "starter.cu"}) {
            QVERIFY(QFile::copy(kLab + "/scale/" + f, lab.filePath(QStringLiteral("scale/") + f)));
        }
        QFile kpg(kLab + "/scale/scale.kpg");
        QVERIFY(kpg.open(QIODevice::ReadOnly));
        QJsonObject p = QJsonDocument::fromJson(kpg.readAll()).object();
        p.insert("repeat", QJsonObject{{"count", 2}, {"swap", QJsonArray{}}});
        QFile out(lab.filePath("scale/scale.kpg"));
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QJsonDocument(p).toJson());
        out.close();
        QFile policy(lab.filePath("grading.json"));
        QVERIFY(policy.open(QIODevice::WriteOnly));
        policy.write(antiGaming ? "{}" : "{\"antiGaming\": false}");
        policy.close();
        QTemporaryDir subs;
        QDir().mkpath(subs.filePath("mallory"));
        QFile f(subs.filePath("mallory/scale.cu"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("__device__ unsigned int finishedBlocks;\n"
                "__global__ void scale(const int *in, int *out, int n)\n{\n"
                "    if (*(volatile unsigned int *)&finishedBlocks >= gridDim.x) return;\n"
                "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                "    if (i < n) out[i] = 3 * in[i];\n"
                "    __syncthreads();\n"
                "    if (threadIdx.x == 0) atomicAdd(&finishedBlocks, 1u);\n}\n");
        f.close();
        const QString json = m_dir.filePath(QStringLiteral("first-launch-%1.json").arg(antiGaming));
        const KpTest::Run r = KpTest::run(
            "kpg", {"grade", lab.path(), "--submissions", subs.path(), "--no-timing", "--jobs", "1", "--json", json},
            {}, 240000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + r.out));
        const QJsonObject scale = resultsOf(json).value("mallory/scale");
        QVERIFY2(scale.value("outcome").toString() == outcome, qPrintable(r.out));
        if (antiGaming) {
            QCOMPARE(scale.value("failedCheck").toString(), QString("out = 3 in"));
        }
    }

    void hangCostsAboutTheLimit()
    {
        // No --timeout: the limit comes from the reference's launch (at least a second).
        const QString json = m_dir.filePath("hang.json");
        QElapsedTimer clock;
        clock.start();
        const KpTest::Run r = KpTest::run(
            "kpg", {"grade", kLab, "--submissions", kSubs, "--only", "carol", "--jobs", "1", "--json", json}, {},
            240000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + r.out));
        const QJsonObject hang = resultsOf(json).value("carol/saxpy");
        QCOMPARE(hang.value("outcome").toString(), QString("timeout"));
        const double limit = hang.value("timeLimitSeconds").toDouble();
        QVERIFY2(limit >= 1 && limit < 5, qPrintable(QString::number(limit)));
        // The hang cost its limit and the worker's restart, not the exercise's 5 s time-out.
        QVERIFY2(hang.value("runMs").toDouble() < limit * 1000 + 3000,
                 qPrintable(QString::number(hang.value("runMs").toDouble())));
        qInfo().noquote() << QStringLiteral("carol graded in %1 s; the hang took %2 ms under a %3 s limit")
                                 .arg(double(clock.elapsed()) / 1000)
                                 .arg(hang.value("runMs").toDouble())
                                 .arg(limit);
    }
};

QTEST_GUILESS_MAIN(TestGpuGrade)
#include "tst_gpu_grade.moc"
