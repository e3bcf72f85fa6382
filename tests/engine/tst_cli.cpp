// kpg as a user runs it: exit codes, messages and JSON.

#include "testutil.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
        QTest::newRow("unknown command lists every command")
            << QStringList{"frobnicate"} << 64 << ""
            << "(commands: devices, compile, run, check, compare, sweep, grade, lab, export, access)";
        QTest::newRow("unknown option") << QStringList{"--frob"} << 64 << ""
                                        << "unknown option '--frob'";
        QTest::newRow("devices unknown option")
            << QStringList{"devices", "--xml"} << 64 << ""
            << "devices: unknown option '--xml' (allowed: --json, --ceilings, --remeasure)";
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
        // What compiling needs is still shown (issue 29: the NVRTC version was hidden).
        QVERIFY2(r.out.startsWith("Driver: none (compile-only"), qPrintable(r.out));
        QVERIFY2(QRegularExpression("\\nNVRTC:  [0-9]+\\.[0-9]+ \\(").match(r.out).hasMatch(), qPrintable(r.out));
        QVERIFY2(r.out.contains("Compiler sandbox: "), qPrintable(r.out));
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

    // A refused --arch names itself in the summary line (it read "for  with NVRTC 13.0 in 0.0 ms").
    void compileRefusedArchSummary()
    {
        const KpTest::Run r = KpTest::run(
            "kpg", {"compile", KPG_SOURCE_DIR "/presets/vector_add/vector_add.cu", "--no-cache", "--arch", "sm_999"},
            {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"});
        if (r.exitCode == 69) {
            QSKIP(qPrintable("no NVRTC: " + r.err));
        }
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.out.contains("--arch sm_999 was refused"), qPrintable(r.out));
        QVERIFY2(!r.out.contains(" for  with"), qPrintable(r.out));
        QVERIFY2(r.err.contains("arch 'sm_999' is not supported by this NVRTC (supported: sm_"), qPrintable(r.err));
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
        // kpg run compiles for the GPU it saw last time while the worker
        // starts (a hint beside the compile cache). A hint the worker then
        // contradicts, or one that is not ours, changes nothing.
        for (const QByteArray &hint :
             {QByteArray("0 8 6\n"), QByteArray("0 9\nx y z\n0 -1 5\n0 900 0\n"), QByteArray(8192, '7')}) {
            QTemporaryDir cache;
            QFile h(cache.filePath("last-gpus"));
            QVERIFY(h.open(QIODevice::WriteOnly));
            h.write(hint);
            h.close();
            const KpTest::Run hinted = KpTest::run(
                "kpg", QStringList{"run", path} + args,
                {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1", "KPG_NO_CACHE=1", "KPG_CACHE_DIR=" + cache.path()});
            QCOMPARE(hinted.exitCode, r.exitCode);
            QCOMPARE(hinted.err, r.err);
            QCOMPARE(hinted.out, r.out);
        }
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
        // Compiled for "auto" without a GPU: sm_90, even where the last GPU
        // kpg saw (its hint, compiled for while the worker started) was another.
        QCOMPARE(doc.value("compile").toObject().value("arch").toString(), QString("sm_90"));
        QTemporaryDir cache;
        QFile h(cache.filePath("last-gpus"));
        QVERIFY(h.open(QIODevice::WriteOnly));
        h.write("0 8 6\n");
        h.close();
        const KpTest::Run hinted =
            KpTest::run("kpg", {"run", KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg", "--json", "-"},
                        {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1", "KPG_CACHE_DIR=" + cache.path()});
        QCOMPARE(hinted.exitCode, 69);
        const QJsonObject again = QJsonDocument::fromJson(hinted.out.toUtf8()).object();
        QCOMPARE(again.value("compile").toObject().value("arch").toString(), QString("sm_90"));
        // A FIFO in the hint's place, with no writer, is no hint: the run
        // neither blocks on it nor says a word about it (it once waited forever).
        QTemporaryDir fifoCache;
        QVERIFY(::mkfifo(qPrintable(fifoCache.filePath("last-gpus")), 0600) == 0);
        const KpTest::Run fifo =
            KpTest::run("kpg", {"run", KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg", "--json", "-"},
                        {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1", "KPG_CACHE_DIR=" + fifoCache.path()}, 30000);
        QCOMPARE(fifo.exitCode, 69);
        const QJsonObject throughFifo = QJsonDocument::fromJson(fifo.out.toUtf8()).object();
        QCOMPARE(throughFifo.value("error").toObject().value("code").toString(), QString("no-driver"));
        QCOMPARE(throughFifo.value("compile").toObject().value("arch").toString(), QString("sm_90"));
        QVERIFY2(!fifo.err.contains("hint"), qPrintable(fifo.err));
    }

    // kpg access: everything up to the launch is checked without a GPU, each with its message.
    void accessExitCodes_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("stderrHas");
        const QString vectorAdd = QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg");
        QTest::newRow("no project") << QStringList{} << 64 << "access: no project given";
        QTest::newRow("no GPU, after the compile and the bindings")
            << QStringList{vectorAdd} << 69 << "kpg: access: No NVIDIA driver found";
        QTest::newRow("step past the end")
            << QStringList{vectorAdd, "--step", "4"} << 64 << "step 4 asked; the project has 1 launch step (1 to 1)";
        QTest::newRow("step 0") << QStringList{vectorAdd, "--step", "0"} << 64
                                << "--step takes a step number (1, 2, ...), not '0'";
        QTest::newRow("records") << QStringList{vectorAdd, "--records", "-5"} << 64
                                 << "--records takes a positive number of warp records, not '-5'";
        QTest::newRow("too many records")
            << QStringList{vectorAdd, "--records", "99999999999"} << 64
            << "room for 99999999999 records asked; the map takes 1 to 786432 (they travel back in one answer)";
        QTest::newRow("cell syntax") << QStringList{vectorAdd, "--cell", "c(3)"} << 64 << "--cell takes BUFFER[INDEX]";
        QTest::newRow("cell of no buffer")
            << QStringList{vectorAdd, "--cell", "d[3]"} << 64 << "--cell d[3]: the project has no buffer 'd'";
        QTest::newRow("streams") << QStringList{QStringLiteral(KPG_SOURCE_DIR "/presets/overlap_2/overlap_2.kpg")} << 64
                                 << "this project uses streams, copies or events";
    }
    void accessExitCodes()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, stderrHas);
        const KpTest::Run r = KpTest::run("kpg", QStringList{"access"} + args,
                                          {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1", "KPG_NO_CACHE=1"});
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.err.contains(stderrHas), qPrintable(r.err));
    }

    void runMissingProject()
    {
        const KpTest::Run r = KpTest::run("kpg", {"run", "/nonexistent/p.kpg"});
        QCOMPARE(r.exitCode, 65);
        QVERIFY2(r.err.contains("/nonexistent/p.kpg"), qPrintable(r.err));
    }

    // --- Files and safety (core/safefile): hostile paths for inputs and outputs ---

    void hostileInputs_data()
    {
        QTest::addColumn<QString>("project");  // written to DIR/p.kpg; empty: none
        QTest::addColumn<QStringList>("args"); // DIR is the temporary folder, which holds a FIFO named fifo.npy
        QTest::addColumn<QString>("stderrHas");
        const QString inlineSource = R"({"format": "kernel-playground-project", "version": 1,
            "source": {"inline": "__global__ void k(float *p) { p[threadIdx.x] = 1; }"},
            "buffers": [{"name": "p", "dtype": "float32", "shape": 32}],
            "launches": [{"kernel": "k", "grid": 1, "block": 32, "args": ["p"]}]})";
        QString devZero = inlineSource;
        devZero.replace(R"({"inline": "__global__ void k(float *p) { p[threadIdx.x] = 1; }"})", "\"/dev/zero\"");
        QString fifoNpy = inlineSource;
        fifoNpy.replace(R"("shape": 32})", R"("shape": 32, "init": {"kind": "npy", "file": "fifo.npy"}})");
        QString fifoNpyNoShape = fifoNpy;
        fifoNpyNoShape.replace(R"("shape": 32, )", "");
        // Read to 4.2 GB and aborted with std::bad_alloc.
        QTest::newRow("source /dev/zero in the project")
            << devZero << QStringList{"run", "DIR/p.kpg"}
            << "source: cannot read '/dev/zero': it is a character device, not a regular file";
        QTest::newRow("run --source /dev/zero")
            << inlineSource << QStringList{"run", "DIR/p.kpg", "--source", "/dev/zero"}
            << "--source: cannot read /dev/zero: it is a character device, not a regular file";
        // Blocked for ever.
        QTest::newRow("npy init is a FIFO") << fifoNpy << QStringList{"run", "DIR/p.kpg"}
                                            << "cannot open DIR/fifo.npy: it is a FIFO (named pipe), not a regular "
                                               "file";
        QTest::newRow("npy init is a FIFO, shape from the file")
            << fifoNpyNoShape << QStringList{"run", "DIR/p.kpg"}
            << "cannot open DIR/fifo.npy: it is a FIFO (named pipe), not a regular file";
        QTest::newRow("project is a FIFO") << QString() << QStringList{"run", "DIR/fifo.npy"}
                                           << "cannot read: it is a FIFO (named pipe), not a regular file";
        QTest::newRow("compile /dev/zero") << QString() << QStringList{"compile", "/dev/zero"}
                                           << "kpg: cannot read /dev/zero: it is a character device, not a regular "
                                              "file";
        QTest::newRow("compile a FIFO") << QString() << QStringList{"compile", "DIR/fifo.npy"}
                                        << "kpg: cannot read DIR/fifo.npy: it is a FIFO (named pipe), not a regular "
                                           "file";
    }

    void hostileInputs()
    {
        QFETCH(QString, project);
        QFETCH(QStringList, args);
        QFETCH(QString, stderrHas);
        QTemporaryDir dir;
        QCOMPARE(::mkfifo(QFile::encodeName(dir.filePath("fifo.npy")).constData(), 0600), 0);
        if (!project.isEmpty()) {
            QFile f(dir.filePath("p.kpg"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(project.toUtf8());
        }
        args.replaceInStrings("DIR", dir.path());
        // A regression must fail the test, not hang it: 30 s is far more than any of these needs.
        const KpTest::Run r =
            KpTest::run("kpg", args, {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1", "KPG_NO_CACHE=1"}, 30000);
        QVERIFY2(r.err != "timed out", "kpg blocked on a FIFO or read a device without end");
        QCOMPARE(r.status, QProcess::NormalExit);
        QCOMPARE(r.exitCode, 65);
        QVERIFY2(r.err.contains(QString(stderrHas).replace("DIR", dir.path())), qPrintable(r.err));
    }

    void outputsIntoDevices_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("device");
        QTest::addColumn<bool>("needsNvrtc");
        // As root, --json /dev/null replaced /dev/null with a regular file (QSaveFile's rename).
        QTest::newRow("run --json /dev/null")
            << QStringList{"run", KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg", "--json", "/dev/null"}
            << "/dev/null" << true;
        QTest::newRow("run --json /dev/null, bad project")
            << QStringList{"run", "/nonexistent/p.kpg", "--json", "/dev/null"} << "/dev/null" << false;
        QTest::newRow("compile --ptx /dev/null")
            << QStringList{"compile", "K", "--ptx", "/dev/null"} << "/dev/null" << true;
        QTest::newRow("compile --cubin /dev/null")
            << QStringList{"compile", "K", "--cubin", "/dev/null"} << "/dev/null" << true;
    }

    void outputsIntoDevices()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, device);
        QFETCH(bool, needsNvrtc);
        QTemporaryDir dir;
        QFile k(dir.filePath("k.cu"));
        QVERIFY(k.open(QIODevice::WriteOnly));
        k.write("__global__ void k(float *p) { p[threadIdx.x] = 1; }\n");
        k.close();
        args.replaceInStrings(QRegularExpression("^K$"), k.fileName());
        const KpTest::Run r = KpTest::run("kpg", args, {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"}, 60000);
        if (needsNvrtc && r.exitCode == 69 && r.err.contains("NVRTC")) {
            QSKIP(qPrintable("no NVRTC: " + r.err));
        }
        QCOMPARE(r.status, QProcess::NormalExit);
        QVERIFY2(!r.err.contains("cannot write"), qPrintable(r.err));
        struct stat st;
        QCOMPARE(::stat(QFile::encodeName(device).constData(), &st), 0);
        QVERIFY2(S_ISCHR(st.st_mode), qPrintable(device + " is no longer a character device"));
    }

    void outputsIntoFifo()
    {
        // A FIFO is written into (a reader gets the bytes), never replaced by a regular file.
        QTemporaryDir dir;
        const QString fifo = dir.filePath("out.ptx");
        QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
        QFile k(dir.filePath("k.cu"));
        QVERIFY(k.open(QIODevice::WriteOnly));
        k.write("__global__ void k(float *p) { p[threadIdx.x] = 1; }\n");
        k.close();
        QProcess p;
        p.start(KpTest::program("kpg"), {"compile", k.fileName(), "--no-cache", "--ptx", fifo});
        // Opened non-blocking, so the test cannot hang when kpg fails before writing.
        const int fd = ::open(QFile::encodeName(fifo).constData(), O_RDONLY | O_NONBLOCK);
        QVERIFY(fd >= 0);
        QByteArray got;
        QElapsedTimer t;
        t.start();
        bool finished = false;
        while (t.elapsed() < 60000) {
            char buf[65536];
            const ssize_t n = ::read(fd, buf, sizeof buf);
            if (n > 0) {
                got.append(buf, n);
            } else if (finished) {
                break;
            } else {
                finished = p.waitForFinished(20);
            }
        }
        ::close(fd);
        if (!finished) {
            p.kill();
            p.waitForFinished();
            QFAIL("kpg did not finish writing into the FIFO");
        }
        if (p.exitCode() == 69) {
            QSKIP("no NVRTC");
        }
        QCOMPARE(p.exitCode(), 0);
        QVERIFY2(got.contains(".entry _Z1kPf"), got.left(200).constData());
        struct stat st;
        QCOMPARE(::stat(QFile::encodeName(fifo).constData(), &st), 0);
        QVERIFY(S_ISFIFO(st.st_mode));
    }

    void writeFailures_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("stderrHas");
        // Exited 0 with nothing written.
        QTest::newRow("compile --ptx /dev/full")
            << QStringList{"--ptx", "/dev/full"} << "kpg: cannot write /dev/full: no space left on device";
        QTest::newRow("compile --cubin /dev/full")
            << QStringList{"--cubin", "/dev/full"} << "kpg: cannot write /dev/full: no space left on device";
    }

    // Issue 28: output options are checked before any work (the compile, the
    // run, the sweep): empty names were ignored with exit 0, a folder for a
    // file was found only after the compile.
    void outputsCheckedFirst_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        const QString preset = QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg");
        QTest::newRow("compile --ptx into a folder")
            << QStringList{"compile", "K", "--ptx", "/tmp"} << 74 << "kpg: compile: --ptx /tmp: is a folder";
        QTest::newRow("compile --cubin ''") << QStringList{"compile", "K", "--cubin", ""} << 64
                                            << "kpg: compile: --cubin needs a file name; '' is empty";
        QTest::newRow("compile --ptx in a missing folder")
            << QStringList{"compile", "K", "--ptx", "/nonexistent/dir/k.ptx"} << 74
            << "kpg: compile: --ptx /nonexistent/dir/k.ptx: its folder /nonexistent/dir does not exist";
        QTest::newRow("run --json ''") << QStringList{"run", preset, "--json", ""} << 64
                                       << "kpg: run: --json needs a file name; '' is empty";
        QTest::newRow("run --csv ''") << QStringList{"run", preset, "--csv", ""} << 64
                                      << "kpg: run: --csv needs a file name; '' is empty";
        QTest::newRow("run --trace in a missing folder")
            << QStringList{"run", preset, "--trace", "/nonexistent/dir/t.json"} << 74
            << "kpg: run: --trace /nonexistent/dir/t.json: its folder /nonexistent/dir does not exist";
        QTest::newRow("run --save-buffers ''") << QStringList{"run", preset, "--save-buffers", ""} << 64
                                               << "kpg: run: --save-buffers needs a folder; '' is empty";
        QTest::newRow("check --json ''") << QStringList{"check", preset, "--json", ""} << 64
                                         << "kpg: check: --json needs a file name; '' is empty";
        QTest::newRow("compile --memory-limit too low")
            << QStringList{"compile", "K", "--memory-limit", "100"} << 64
            << "kpg: compile: --memory-limit takes MiB, a whole number from 256 to 1048576, not '100'";
    }
    void diagnosticsPrintable()
    {
        // Issue 28: a diagnostic quotes the source; its control characters must not reach the terminal.
        QTemporaryDir dir;
        QFile k(dir.filePath("k.cu"));
        QVERIFY(k.open(QIODevice::WriteOnly));
        k.write("#error \x1b]0;title\x07\x1b[2Jcleared\n__global__ void k(float *p) { p[0] = 1; }\n");
        k.close();
        const KpTest::Run r = KpTest::run("kpg", {"compile", k.fileName(), "--no-cache"},
                                          {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"}, 60000);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("k.cu:1:2: error: #error directive: ?]0;title??[2Jcleared"), qPrintable(r.err));
        QVERIFY2(!r.err.contains(QChar(0x1b)) && !r.err.contains(QChar(0x07)), qPrintable(r.err));
    }

    void outputFollowsSymbolicLinks()
    {
        // docs/security.md: an output that is a link writes where the link leads; the link stays.
        QTemporaryDir dir;
        QFile k(dir.filePath("k.cu"));
        QVERIFY(k.open(QIODevice::WriteOnly));
        k.write("__global__ void k(float *p) { p[threadIdx.x] = 1; }\n");
        k.close();
        QVERIFY(QDir(dir.path()).mkdir("elsewhere"));
        QVERIFY(QFile::link(dir.filePath("elsewhere/target.ptx"), dir.filePath("link.ptx")));
        const KpTest::Run r = KpTest::run("kpg", {"compile", k.fileName(), "--ptx", dir.filePath("link.ptx")},
                                          {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"}, 60000);
        QCOMPARE(r.exitCode, 0);
        QVERIFY(QFileInfo(dir.filePath("link.ptx")).isSymLink());
        QFile target(dir.filePath("elsewhere/target.ptx"));
        QVERIFY(target.open(QIODevice::ReadOnly));
        QVERIFY(target.readAll().contains(".entry"));
    }

    void outputsCheckedFirst()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        QTemporaryDir dir;
        QFile k(dir.filePath("k.cu"));
        QVERIFY(k.open(QIODevice::WriteOnly));
        k.write("__global__ void k(float *p) { p[threadIdx.x] = 1; }\n");
        k.close();
        args.replaceInStrings(QRegularExpression("^K$"), k.fileName());
        const KpTest::Run r = KpTest::run("kpg", args, {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"}, 60000);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.err.startsWith(message), qPrintable(r.err));
        QVERIFY2(r.out.isEmpty(), qPrintable(r.out)); // nothing ran
    }

    void writeFailures()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, stderrHas);
        QTemporaryDir dir;
        QFile k(dir.filePath("k.cu"));
        QVERIFY(k.open(QIODevice::WriteOnly));
        k.write("__global__ void k(float *p) { p[threadIdx.x] = 1; }\n");
        k.close();
        for (const bool json : {false, true}) {
            const QStringList all = QStringList{"compile", k.fileName(), "--no-cache"} + args +
                                    (json ? QStringList{"--json"} : QStringList{});
            const KpTest::Run r = KpTest::run("kpg", all, {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"}, 60000);
            if (r.exitCode == 69) {
                QSKIP(qPrintable("no NVRTC: " + r.err));
            }
            QCOMPARE(r.exitCode, 74); // "an output file cannot be written"
            QVERIFY2(r.err.contains(stderrHas), qPrintable(r.err));
            if (json) {
                const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8()).object();
                QCOMPARE(doc.value("ok").toBool(), true); // the compile itself worked
                QVERIFY2(stderrHas.endsWith(doc.value("error").toObject().value("message").toString()),
                         qPrintable(r.out));
            }
        }
    }

    void compileJsonOnInputError_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("message");
        // Printed nothing on stdout; docs/kpg-compile-json.md promises one object.
        QTest::newRow("/dev/zero") << "/dev/zero"
                                   << "cannot read /dev/zero: it is a character device, not a regular file";
        QTest::newRow("missing file") << "/nonexistent/k.cu"
                                      << "cannot read /nonexistent/k.cu: no such file";
        QTest::newRow("binary file") << "BIN"
                                     << "BIN is not text (it contains NUL bytes)";
    }

    void compileJsonOnInputError()
    {
        QFETCH(QString, file);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString bin = dir.filePath("bin.cu");
        QFile b(bin);
        QVERIFY(b.open(QIODevice::WriteOnly));
        b.write(QByteArray("\x7f"
                           "ELF\0\0",
                           6));
        b.close();
        file.replace("BIN", bin);
        message.replace("BIN", bin);
        const KpTest::Run r = KpTest::run("kpg", {"compile", file, "--json"}, {}, 30000);
        QCOMPARE(r.exitCode, 65);
        QJsonParseError pe;
        const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8(), &pe).object();
        QCOMPARE(pe.error, QJsonParseError::NoError);
        QCOMPARE(doc.value("ok").toBool(true), false);
        QCOMPARE(doc.value("file").toString(), file);
        QCOMPARE(doc.value("error").toObject().value("code").toString(), QString("bad-input"));
        QCOMPARE(doc.value("error").toObject().value("message").toString(), message);
        QVERIFY2(r.err.contains("kpg: " + message), qPrintable(r.err));
    }

    void exitCodesListedOnce()
    {
        // README's table and kpg --help both come from one list (cli/exitcodes.h); 70 was missing from both.
        QFile readme(KPG_SOURCE_DIR "/README.md");
        QVERIFY(readme.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(readme.readAll());
        const qsizetype start = text.indexOf("`kpg` exit codes");
        QVERIFY(start >= 0);
        QMap<int, QString> fromReadme;
        const QRegularExpression row(R"(^\| (\d+) \| (.+) \|$)", QRegularExpression::MultilineOption);
        for (auto it = row.globalMatch(text.mid(start, text.indexOf("\n\n", text.indexOf("|", start)) - start));
             it.hasNext();) {
            const auto m = it.next();
            fromReadme.insert(m.captured(1).toInt(), m.captured(2));
        }
        const KpTest::Run r = KpTest::run("kpg", {"--help"});
        QCOMPARE(r.exitCode, 0);
        QMap<int, QString> fromHelp;
        const QString codes = r.out.mid(r.out.indexOf("Exit codes:"));
        const QRegularExpression line(R"(^\s+(\d+) (.+)$)", QRegularExpression::MultilineOption);
        for (auto it = line.globalMatch(codes); it.hasNext();) {
            const auto m = it.next();
            fromHelp.insert(m.captured(1).toInt(), m.captured(2));
        }
        QCOMPARE(fromHelp, fromReadme);
        QVERIFY(fromHelp.contains(70));
        QVERIFY(fromHelp.contains(74));
    }

    void bindingsBeforeFill()
    {
        // A dtype typo in a 4 GB project cost 16.5 s and 4 GB before its message. The
        // bindings are now checked before any buffer is filled: this .npy init would fail
        // (its data is cut short), but the binding error comes first.
        QTemporaryDir dir;
        QFile npy(dir.filePath("cut.npy"));
        QVERIFY(npy.open(QIODevice::WriteOnly));
        QByteArray header = "{'descr': '<i2', 'fortran_order': False, 'shape': (32,), }";
        while ((10 + header.size() + 1) % 64 != 0) {
            header += ' ';
        }
        header += '\n';
        npy.write(QByteArray("\x93NUMPY\x01\x00", 8));
        const char len[2] = {char(header.size() & 0xff), char(header.size() >> 8)};
        npy.write(len, 2);
        npy.write(header);
        npy.write(QByteArray(10, 0)); // 64 bytes are needed
        npy.close();
        QFile f(dir.filePath("p.kpg"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "kernel-playground-project", "version": 1,
            "source": {"inline": "__global__ void k(float *p) { p[threadIdx.x] = 1; }"},
            "buffers": [{"name": "p", "dtype": "int16", "shape": 32, "init": {"kind": "npy", "file": "cut.npy"}}],
            "launches": [{"kernel": "k", "grid": 1, "block": 32, "args": ["p"]}]})");
        f.close();
        const KpTest::Run r = KpTest::run("kpg", {"run", f.fileName()},
                                          {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1", "KPG_NO_CACHE=1"}, 60000);
        if (r.exitCode == 69 && r.err.contains("NVRTC")) {
            QSKIP("no NVRTC");
        }
        QCOMPARE(r.exitCode, 65);
        QVERIFY2(r.err.contains("launches[0].args[0] (parameter 'p', float *): buffer 'p' holds int16"),
                 qPrintable(r.err));
        QVERIFY2(!r.err.contains("truncated"), qPrintable(r.err));
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
