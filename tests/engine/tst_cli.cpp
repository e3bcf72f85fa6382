// kpg as a user runs it: exit codes, messages and JSON.

#include "testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

class TestCli : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void exitCodes_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("stdoutHas");
        QTest::addColumn<QString>("stderrHas");
        QTest::newRow("version") << QStringList{"--version"} << 0 << "kpg 0."
                                 << "";
        QTest::newRow("help") << QStringList{"--help"} << 0 << "devices [--json]"
                              << "";
        QTest::newRow("help lists exit codes") << QStringList{"-h"} << 0 << "69 no GPU"
                                               << "";
        QTest::newRow("subcommand help") << QStringList{"devices", "--help"} << 0 << "Usage: kpg"
                                         << "";
        QTest::newRow("no command") << QStringList{} << 64 << ""
                                    << "no command given";
        QTest::newRow("unknown command") << QStringList{"frobnicate"} << 64 << ""
                                         << "unknown command 'frobnicate'";
        QTest::newRow("unknown option") << QStringList{"--frob"} << 64 << ""
                                        << "unknown option '--frob'";
        QTest::newRow("devices unknown option") << QStringList{"devices", "--xml"} << 64 << ""
                                                << "devices: unknown option '--xml' (allowed: --json)";
    }
    void exitCodes()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, stdoutHas);
        QFETCH(QString, stderrHas);
        const KpTest::Run r = KpTest::run("kpg", args);
        QCOMPARE(r.status, QProcess::NormalExit);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.out.contains(stdoutHas), qPrintable(r.out));
        QVERIFY2(r.err.contains(stderrHas), qPrintable(r.err));
    }

    void devicesWithoutDriver()
    {
        const KpTest::Run r = KpTest::run("kpg", {"devices"}, {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"});
        QCOMPARE(r.exitCode, 69);
        QVERIFY(r.out.isEmpty());
        // One line that says what is missing.
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY2(r.err.startsWith("kpg: No NVIDIA driver found: /nonexistent/libcuda.so.1 could not be loaded"),
                 qPrintable(r.err));
    }

    void devicesJsonWithoutDriver()
    {
        const KpTest::Run r = KpTest::run("kpg", {"devices", "--json"}, {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"});
        QCOMPARE(r.exitCode, 69);
        QJsonParseError pe;
        const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8(), &pe).object();
        QCOMPARE(pe.error, QJsonParseError::NoError);
        QCOMPARE(doc.value("error").toObject().value("code").toString(), QString("no-driver"));
        QVERIFY(doc.value("devices").toArray().isEmpty());
        QVERIFY(doc.contains("nvrtc"));
    }

    void devicesJsonWithoutNvrtc()
    {
        // NVRTC missing is reported, never fatal for listing devices.
        const KpTest::Run r =
            KpTest::run("kpg", {"devices", "--json"},
                        {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1", "KPG_NVRTC_LIBRARY=/nonexistent/libnvrtc.so"});
        const QJsonObject nvrtc = QJsonDocument::fromJson(r.out.toUtf8()).object().value("nvrtc").toObject();
        QCOMPARE(nvrtc.value("error").toObject().value("code").toString(), QString("no-compiler"));
        QVERIFY(nvrtc.value("error").toObject().value("message").toString().startsWith("NVRTC not found"));
    }

    void devicesWithNvrtcFromToolkit()
    {
        const KpTest::Run r = KpTest::run("kpg", {"devices", "--json"}, {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"});
        const QJsonObject nvrtc = QJsonDocument::fromJson(r.out.toUtf8()).object().value("nvrtc").toObject();
        if (nvrtc.contains("error")) {
            QSKIP("no NVRTC library on this machine");
        }
        QVERIFY(QRegularExpression("^1[2-9]\\.[0-9]+$").match(nvrtc.value("version").toString()).hasMatch());
    }

    void compileExitCodes_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("stderrHas");
        const QString ok = "extern \"C\" __global__ void k(int *p) { p[0] = 1; }\n";
        QTest::newRow("ok") << ok << QStringList{} << 0 << "";
        QTest::newRow("compile error") << "__global__ void k(int *p)\n{\n    p[0] = nope;\n}\n"
                                       << QStringList{} << 2
                                       << "kernel.cu:3:12: error: identifier \"nope\" is undefined";
        QTest::newRow("bad arch") << ok << QStringList{"--arch", "sm_1"} << 2 << "arch 'sm_1' is not supported";
        QTest::newRow("bad -O") << ok << QStringList{"-O", "7"} << 64 << "-O takes 0, 1, 2 or 3, not '7'";
        QTest::newRow("unknown option") << ok << QStringList{"--fast"} << 64 << "compile: unknown option '--fast'";
        QTest::newRow("missing value") << ok << QStringList{"--arch"} << 64 << "--arch needs a value";
        QTest::newRow("define") << "__global__ void k(int *p) { p[0] = N; }\n" << QStringList{"-D", "N=3"} << 0 << "";
        QTest::newRow("attached define") << "__global__ void k(int *p) { p[0] = N; }\n"
                                         << QStringList{"-DN=3"} << 0 << "";
        QTest::newRow("bad name expression")
            << "template <int N> __global__ void t(int *p) { p[0] = N; }\n"
            << QStringList{"--name-expr", "u<1>"} << 2 << "name expression 'u<1>' matches no kernel";
        QTest::newRow("empty file") << "" << QStringList{} << 2 << "kernel.cu is empty";
    }
    void compileExitCodes()
    {
        QFETCH(QString, source);
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, stderrHas);
        QTemporaryDir dir;
        QFile f(dir.filePath("kernel.cu"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(source.toUtf8());
        f.close();
        const KpTest::Run r = KpTest::run("kpg", QStringList{"compile", f.fileName(), "--no-cache"} + args,
                                          {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"});
        if (r.exitCode == 69) {
            QSKIP(qPrintable("no NVRTC: " + r.err));
        }
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.err.contains(stderrHas), qPrintable(r.err));
    }

    void compileInputErrors()
    {
        KpTest::Run r = KpTest::run("kpg", {"compile", "/nonexistent/k.cu"});
        QCOMPARE(r.exitCode, 65);
        QVERIFY2(r.err.contains("cannot read /nonexistent/k.cu: no such file"), qPrintable(r.err));
        r = KpTest::run("kpg", {"compile"});
        QCOMPARE(r.exitCode, 64);
        QTemporaryDir dir;
        QFile bin(dir.filePath("kernel.cu"));
        QVERIFY(bin.open(QIODevice::WriteOnly));
        bin.write(QByteArray("\x7f"
                             "ELF\0\0\0",
                             7));
        bin.close();
        r = KpTest::run("kpg", {"compile", bin.fileName()});
        QCOMPARE(r.exitCode, 65);
        QVERIFY2(r.err.contains("is not text"), qPrintable(r.err));
    }

    void compileJsonAndOutputs()
    {
        QTemporaryDir dir;
        QFile f(dir.filePath("scale.cu"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("template <typename T>\n__global__ void scale(T *p, T s) { p[threadIdx.x] *= s; }\n");
        f.close();
        const QString ptx = dir.filePath("out.ptx");
        const QString cubin = dir.filePath("out.cubin");
        const KpTest::Run r = KpTest::run("kpg",
                                          {"compile", f.fileName(), "--json", "--no-cache", "--name-expr",
                                           "scale<float>", "--ptx", ptx, "--cubin", cubin},
                                          {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"});
        if (r.exitCode == 69) {
            QSKIP("no NVRTC");
        }
        QCOMPARE(r.exitCode, 0);
        const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(doc.value("ok").toBool(), true);
        QCOMPARE(doc.value("arch").toString(), QString("sm_90"));
        QCOMPARE(doc.value("cached").toBool(), false);
        QVERIFY(doc.value("compileMs").toDouble() > 0);
        const QJsonObject k = doc.value("kernels").toArray().first().toObject();
        QCOMPARE(k.value("name").toString(), QString("scale<float>"));
        QCOMPARE(k.value("loweredName").toString(), QString("_Z5scaleIfEvPT_S0_"));
        const QJsonArray params = k.value("params").toArray();
        QCOMPARE(params[0].toObject().value("type").toString(), QString("float *"));
        QCOMPARE(params[1].toObject().value("category").toString(), QString("scalar"));
        QVERIFY(k.value("resources").toObject().value("registers").toInt() > 0);
        QFile p(ptx);
        QVERIFY(p.open(QIODevice::ReadOnly));
        QVERIFY(p.readAll().contains(".entry _Z5scaleIfEvPT_S0_"));
        QFile c(cubin);
        QVERIFY(c.open(QIODevice::ReadOnly));
        QVERIFY(c.readAll().startsWith("\x7f"
                                       "ELF"));
    }

    void runExitCodes_data()
    {
        QTest::addColumn<QString>("project");
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("stderrHas");
        const QString good = R"({"format": "kernel-playground-project", "version": 1,
            "source": {"inline": "__global__ void k(float *p, int n) { p[threadIdx.x] = n; }"},
            "scalars": [{"name": "n", "type": "int32", "value": 3}],
            "buffers": [{"name": "p", "dtype": "float32", "shape": 32}],
            "launches": [{"kernel": "k", "grid": 1, "block": 32, "args": ["p", "n"]}]})";
        QString broken = good;
        broken.replace("p[threadIdx.x] = n;", "p[threadIdx.x] = nope;");
        QString badDtype = good;
        badDtype.replace("\"float32\"", "\"float8\"");
        QString badBinding = good;
        badBinding.replace("[\"p\", \"n\"]", "[\"n\", \"p\"]");
        QTest::newRow("no GPU") << good << QStringList{} << 69 << "kpg: No NVIDIA driver found";
        QTest::newRow("compile error before no GPU")
            << broken << QStringList{} << 2 << "identifier \"nope\" is undefined";
        QTest::newRow("bad dtype") << badDtype << QStringList{} << 65 << "buffers[0].dtype: unknown dtype 'float8'";
        QTest::newRow("bad binding before no GPU")
            << badBinding << QStringList{} << 65
            << "launches[0].args[0] (parameter 'p', float *): a pointer parameter needs a buffer; got scalar 'n'";
        QTest::newRow("not JSON") << "{" << QStringList{} << 65 << "not valid JSON";
        QTest::newRow("unknown option") << good << QStringList{"--fast"} << 64 << "run: unknown option '--fast'";
        QTest::newRow("bad device") << good << QStringList{"--device", "x"} << 64 << "--device takes a GPU number";
        QTest::newRow("bad timeout") << good << QStringList{"--timeout", "0"} << 64
                                     << "--timeout takes a positive number of seconds, not '0'";
        QTest::newRow("missing source file")
            << good << QStringList{"--source", "/nonexistent.cu"} << 65 << "--source: cannot read /nonexistent.cu";
    }

    void runExitCodes()
    {
        QFETCH(QString, project);
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, stderrHas);
        QTemporaryDir dir;
        const QString path = dir.filePath("p.kpg");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(project.toUtf8());
        f.close();
        const KpTest::Run r = KpTest::run("kpg", QStringList{"run", path} + args,
                                          {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1", "KPG_NO_CACHE=1"});
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.err.contains(stderrHas), qPrintable(r.err));
    }

    void runJsonWithoutGpu()
    {
        const KpTest::Run r =
            KpTest::run("kpg", {"run", KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg", "--json", "-"},
                        {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"});
        QCOMPARE(r.exitCode, 69);
        QJsonParseError pe;
        const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8(), &pe).object();
        QCOMPARE(pe.error, QJsonParseError::NoError);
        QCOMPARE(doc.value("ok").toBool(true), false);
        QCOMPARE(doc.value("error").toObject().value("code").toString(), QString("no-driver"));
        QCOMPARE(doc.value("compile").toObject().value("ok").toBool(), true);
        QCOMPARE(doc.value("title").toString(), QString("Vector add"));
    }

    void runMissingProject()
    {
        const KpTest::Run r = KpTest::run("kpg", {"run", "/nonexistent/p.kpg"});
        QCOMPARE(r.exitCode, 65);
        QVERIFY2(r.err.contains("/nonexistent/p.kpg"), qPrintable(r.err));
    }

    void missingWorker()
    {
        const KpTest::Run r = KpTest::run("kpg", {"devices"}, {"KPG_WORKER=/nonexistent/kpg-worker"});
        QCOMPARE(r.exitCode, 69);
        QVERIFY2(r.err.contains("cannot start kpg-worker (/nonexistent/kpg-worker)"), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
