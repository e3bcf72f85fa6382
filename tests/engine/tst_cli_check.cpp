// kpg check (and the checks of kpg run) without a GPU: bad input (65), a
// submitted source that does not compile (2, with the submitted file's line
// numbers), no GPU (69), usage (64), and the shape of --json. The GPU side is
// tests/gpu/tst_gpu_checks.cpp.

#include "testutil.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

namespace {

const QStringList kNoDriver{"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"};

const char *const kProject = R"~({"format": "kernel-playground-project", "version": 1, "title": "Add",
    "source": "add.cu",
    "scalars": [{"name": "n", "type": "int32", "value": 1000}],
    "buffers": [{"name": "a", "dtype": "float32", "shape": [1000], "init": {"kind": "random", "seed": 1}},
                {"name": "b", "dtype": "float32", "shape": [1000], "init": {"kind": "random", "seed": 2}},
                {"name": "c", "dtype": "float32", "shape": [1000]}],
    "launches": [{"kernel": "add", "grid": "ceil_div(n, block.x)", "block": 128, "args": ["a", "b", "c", "n"]}],
    "checks": CHECKS})~";

const char *const kSource = "__global__ void add(const float *a, const float *b, float *c, int n)\n"
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

/** Writes DIR/p.kpg with the given "checks" value and DIR/add.cu. */
QString makeProject(const QTemporaryDir &dir, const QByteArray &checks)
{
    QByteArray p(kProject);
    p.replace("CHECKS", checks);
    writeFile(dir.filePath("p.kpg"), p);
    writeFile(dir.filePath("add.cu"), kSource);
    return dir.filePath("p.kpg");
}

bool noNvrtc(const KpTest::Run &r)
{
    return r.exitCode == 69 && r.err.contains("NVRTC");
}

} // namespace

class TestCliCheck : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Without a GPU, kpg check says how far it got: the source compiled and
    // the project's launches, buffers and checks were checked (it said only
    // "No NVIDIA driver found" once).
    void saysTheSourceCompiledWithoutAGpu()
    {
        const KpTest::Run r =
            KpTest::run("kpg", {"check", KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg"}, kNoDriver);
        QCOMPARE(r.exitCode, 69);
        QVERIFY2(r.out.contains("vector_add.cu compiled for sm_"), qPrintable(r.out));
        QVERIFY2(r.out.contains("1 check were checked; running them needs a GPU"), qPrintable(r.out));
        QVERIFY2(r.err.contains("kpg: No NVIDIA driver found"), qPrintable(r.err));
    }

    // A launch that starts whole blocks beyond every buffer is a warning
    // kpg check prints before saying there is no GPU (the student's "grid of
    // n blocks" instead of ceil_div(n, block)).
    void warnsOfALaunchBeyondItsBuffersWithoutAGpu()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QByteArray p(kProject);
        p.replace("CHECKS", R"([{"name": "c = a + b", "buffer": "c", "expected": "a + b"}])");
        p.replace(R"~("grid": "ceil_div(n, block.x)")~", R"~("grid": "n")~");
        writeFile(dir.filePath("p.kpg"), p);
        writeFile(dir.filePath("add.cu"), kSource);
        const KpTest::Run r = KpTest::run("kpg", {"check", dir.filePath("p.kpg")}, kNoDriver);
        if (noNvrtc(r)) {
            QSKIP("NVRTC is not installed");
        }
        QCOMPARE(r.exitCode, 69);
        QVERIFY2(r.err.contains("kpg: warning: launches[0]: the launch starts 128000 threads but the largest buffer "
                                "it is given, 'a', holds 1000 elements, so whole blocks have no element of their own; "
                                "a kernel that does not guard its index (if (i < n)) writes past the end (a grid of 8 "
                                "blocks of 128 covers it)"),
                 qPrintable(r.err));
        QVERIFY2(r.out.contains("1 check were checked; running them needs a GPU"), qPrintable(r.out));
    }

    void exitCodes_data()
    {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QByteArray>("checks");
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("stderrHas");
        const QByteArray good = R"([{"name": "c = a + b", "buffer": "c", "expected": "a + b"}])";
        QTest::newRow("no GPU") << "check" << good << QStringList{} << 69 << "kpg: No NVIDIA driver found";
        QTest::newRow("run: no GPU") << "run" << good << QStringList{} << 69 << "kpg: No NVIDIA driver found";
        QTest::newRow("no checks") << "check" << QByteArray("[]") << QStringList{} << 65
                                   << "the project has no checks, so there is nothing to check";
        QTest::newRow("bad check") << "check" << QByteArray(R"([{"buffer": "c", "expected": "1", "seeds": 0}])")
                                   << QStringList{} << 65 << "checks[0].seeds: must be at least 1, got 0";
        QTest::newRow("run: bad check") << "run" << QByteArray(R"([{"buffer": "q", "expected": "1"}])") << QStringList{}
                                        << 65 << "checks[0].buffer: unknown buffer 'q'";
        // Found after the compile, still before saying there is no GPU.
        QTest::newRow("unknown variable before no GPU")
            << "check" << QByteArray(R"([{"buffer": "c", "expected": "a + bb"}])") << QStringList{} << 65
            << "checks[0].expected: unknown variable 'bb' in 'a + bb'";
        QTest::newRow("run: unknown variable before no GPU")
            << "run" << QByteArray(R"([{"buffer": "c", "expected": "a + bb"}])") << QStringList{} << 65
            << "checks[0].expected: unknown variable 'bb' in 'a + bb'";
        QTest::newRow("npy missing before no GPU") << "check" << QByteArray(R"([{"buffer": "c", "npy": "c.npy"}])")
                                                   << QStringList{} << 65 << "checks[0].npy: cannot read 'c.npy'";
        QTest::newRow("unknown option") << "check" << good << QStringList{"--no-timing"} << 64
                                        << "check: unknown option '--no-timing'";
        QTest::newRow("bad timeout") << "check" << good << QStringList{"--timeout", "-1"} << 64
                                     << "check: --timeout takes a positive number of seconds, not '-1'";
        QTest::newRow("bad device") << "check" << good << QStringList{"--device", "one"} << 64
                                    << "check: --device takes a GPU number";
        QTest::newRow("missing source") << "check" << good << QStringList{"--source", "/nonexistent/s.cu"} << 65
                                        << "--source: cannot read /nonexistent/s.cu";
        QTest::newRow("source is a device") << "check" << good << QStringList{"--source", "/dev/zero"} << 65
                                            << "--source: cannot read /dev/zero: it is a character device";
    }

    void exitCodes()
    {
        QFETCH(QString, command);
        QFETCH(QByteArray, checks);
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, stderrHas);
        QTemporaryDir dir;
        const QString p = makeProject(dir, checks);
        const KpTest::Run r =
            KpTest::run("kpg", QStringList{command, p} + args, kNoDriver + QStringList{"KPG_NO_CACHE=1"});
        if (noNvrtc(r) && exitCode != 69) {
            QSKIP("no NVRTC on this machine");
        }
        QCOMPARE(r.status, QProcess::NormalExit);
        QVERIFY2(r.exitCode == exitCode, qPrintable(QString::number(r.exitCode) + ": " + r.err));
        QVERIFY2(r.err.contains(stderrHas), qPrintable(r.err));
    }

    void usage()
    {
        const KpTest::Run none = KpTest::run("kpg", {"check"});
        QCOMPARE(none.exitCode, 64);
        QVERIFY2(none.err.contains("check: no project given"), qPrintable(none.err));
        const KpTest::Run two = KpTest::run("kpg", {"check", "a.kpg", "b.kpg"});
        QCOMPARE(two.exitCode, 64);
        const KpTest::Run help = KpTest::run("kpg", {"--help"});
        QCOMPARE(help.exitCode, 0);
        QVERIFY(help.out.contains("check PROJECT.kpg [options]"));
        QVERIFY(help.out.contains("--timing       also time the run"));
        const KpTest::Run missing = KpTest::run("kpg", {"check", "/nonexistent/p.kpg"});
        QCOMPARE(missing.exitCode, 65);
        QVERIFY2(missing.err.contains("/nonexistent/p.kpg: no such file"), qPrintable(missing.err));
    }

    void compileErrorLines()
    {
        // The submitted file's own name and line numbers, on stderr and in the JSON.
        QTemporaryDir dir;
        const QString p = makeProject(dir, R"([{"buffer": "c", "expected": "a + b"}])");
        writeFile(dir.filePath("student.cu"), "// my kernel\n"
                                              "__global__ void add(const float *a, const float *b, float *c, int n)\n"
                                              "{\n"
                                              "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                              "    if (i < n) c[i] = a[i] + b[i] + offset;\n"
                                              "}\n");
        const KpTest::Run r = KpTest::run(
            "kpg", {"check", p, "--source", dir.filePath("student.cu"), "--json", dir.filePath("out.json")}, kNoDriver);
        if (noNvrtc(r)) {
            QSKIP("no NVRTC on this machine");
        }
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("student.cu:5:"), qPrintable(r.err));
        QVERIFY2(r.err.contains("identifier \"offset\" is undefined"), qPrintable(r.err));
        QVERIFY2(r.err.contains("student.cu does not compile (1 error)"), qPrintable(r.err));
        QFile f(dir.filePath("out.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject doc = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(doc.value("exitCode").toInt(), 2);
        QCOMPARE(doc.value("passed").toBool(true), false);
        QCOMPARE(doc.value("source").toString(), dir.filePath("student.cu"));
        QCOMPARE(doc.value("error").toObject().value("code").toString(), QString("compile-error"));
        const QJsonObject compile = doc.value("compile").toObject();
        QCOMPARE(compile.value("ok").toBool(true), false);
        const QJsonObject d = compile.value("diagnostics").toArray().first().toObject();
        QCOMPARE(d.value("file").toString(), QString("student.cu"));
        QCOMPARE(d.value("line").toInt(), 5);
        QCOMPARE(d.value("severity").toString(), QString("error"));
        QVERIFY(doc.value("run").isNull());
        QCOMPARE(doc.value("checks").toArray().size(), 0);
    }

    void referenceMustCompile()
    {
        // A broken reference is the project's fault (65), found before the GPU is looked for.
        QTemporaryDir dir;
        QByteArray p(kProject);
        p.replace("CHECKS", R"([{"buffer": "c", "reference": "c"}], "reference": {"source": "ref.cu"})");
        writeFile(dir.filePath("p.kpg"), p);
        writeFile(dir.filePath("add.cu"), kSource);
        writeFile(dir.filePath("ref.cu"), "__global__ void add(const float *a, const float *b, float *c, int n)\n"
                                          "{ c[0] = nope; }\n");
        const KpTest::Run r = KpTest::run("kpg", {"check", dir.filePath("p.kpg")}, kNoDriver);
        if (noNvrtc(r)) {
            QSKIP("no NVRTC on this machine");
        }
        QCOMPARE(r.exitCode, 65);
        QVERIFY2(r.err.contains("the reference (ref.cu) does not compile: ref.cu:2:"), qPrintable(r.err));
        // A reference launch that does not bind is reported with its path.
        writeFile(dir.filePath("ref.cu"), "__global__ void ref(float *c) { }\n");
        p.replace(
            R"("reference": {"source": "ref.cu"})",
            R"("reference": {"source": "ref.cu", "launches": [{"kernel": "ref", "grid": 1, "block": 1, "args": ["n"]}]})");
        writeFile(dir.filePath("p.kpg"), p);
        const KpTest::Run r2 = KpTest::run("kpg", {"check", dir.filePath("p.kpg")}, kNoDriver);
        QCOMPARE(r2.exitCode, 65);
        QVERIFY2(r2.err.contains("reference: launches[0].args[0]"), qPrintable(r2.err));
    }

    void jsonWithoutGpu()
    {
        const KpTest::Run r = KpTest::run(
            "kpg", {"check", KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg", "--json", "-"}, kNoDriver);
        QCOMPARE(r.exitCode, 69);
        QJsonParseError pe;
        const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8(), &pe).object();
        QCOMPARE(pe.error, QJsonParseError::NoError);
        for (const char *key : {"project", "title", "source", "passed", "exitCode", "device", "seedRuns", "checks",
                                "warnings", "compile", "run", "error"}) {
            QVERIFY2(doc.contains(key), key);
        }
        QCOMPARE(doc.value("exitCode").toInt(), 69);
        QCOMPARE(doc.value("passed").toBool(true), false);
        QCOMPARE(doc.value("title").toString(), QString("Vector add"));
        QCOMPARE(doc.value("source").toString(), QString("vector_add.cu"));
        QCOMPARE(doc.value("error").toObject().value("code").toString(), QString("no-driver"));
        QCOMPARE(doc.value("compile").toObject().value("ok").toBool(), true);
        QVERIFY(doc.value("run").isNull());
        QVERIFY(doc.value("device").isNull());

        // kpg run --json has the checks keys too.
        const KpTest::Run run =
            KpTest::run("kpg", {"run", KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg", "--json", "-"}, kNoDriver);
        QCOMPARE(run.exitCode, 69);
        const QJsonObject rdoc = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QVERIFY(rdoc.value("checks").isArray());
        QCOMPARE(rdoc.value("checksPassed").toBool(true), false);
        QCOMPARE(rdoc.value("seedRuns").toInt(-1), 0);
    }
};

QTEST_GUILESS_MAIN(TestCliCheck)
#include "tst_cli_check.moc"
