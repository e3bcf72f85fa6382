// Dynamic parallelism without a GPU: a kernel that launches kernels is
// compiled by real NVRTC as relocatable device code (on its own or because
// the options ask) and linked with the toolkit's libcudadevrt.a through real
// nvJitLink; both kernels must be in the linked cubin's ELF symbol table.
// Also the messages when nvJitLink or libcudadevrt.a is missing, and the ELF
// reader on hostile bytes.

#include "compile/compiler.h"
#include "compile/devicelink.h"
#include "cuda/nvjitlinkapi.h"
#include "cuda/nvrtcapi.h"
#include "testutil.h"

#include <QFile>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

using namespace Kp;

namespace {

const char *const kParentChild = "__global__ void child(int *a) { a[threadIdx.x] += 1; }\n"
                                 "__global__ void parent(int *a)\n"
                                 "{\n"
                                 "    if (threadIdx.x == 0) {\n"
                                 "        child<<<1, 32>>>(a);\n"
                                 "    }\n"
                                 "}\n";

QString readPreset(const QString &relative)
{
    QFile f(QStringLiteral(KPG_SOURCE_DIR "/presets/") + relative);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

QString dump(const CompileResult &r)
{
    QStringList l;
    for (const Diagnostic &d : r.diagnostics) {
        l << d.text();
    }
    return l.join('\n') + "\n--- log ---\n" + r.log;
}

} // namespace

class TestDeviceLink : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_cacheDir;
    std::unique_ptr<Compiler> m_compiler;

    CompileResult compile(const QString &source, const QStringList &extra = {}, const QString &arch = "sm_90")
    {
        CompileRequest req;
        req.source = source;
        req.fileName = QStringLiteral("dp.cu");
        req.options.arch = arch;
        req.options.extra = extra;
        req.options.useCache = false;
        Result<CompileResult> r = m_compiler->compile(req);
        if (!r) {
            qWarning("%s", qPrintable(r.error().toString()));
            return {};
        }
        return r.value();
    }

private Q_SLOTS:
    void initTestCase()
    {
        const auto nv = NvrtcApi::instance();
        if (!nv) {
            QSKIP(qPrintable("NVRTC is not available: " + nv.error().message));
        }
        m_compiler = std::make_unique<Compiler>(Compiler::Config{m_cacheDir.path(), 64 * 1024 * 1024});
    }

    void logNeedsRdc_data()
    {
        QTest::addColumn<QString>("log");
        QTest::addColumn<bool>("needs");
        QTest::newRow("device-side launch") << "k.cu(2): error: device-side kernel launch could not be processed as "
                                               "the required runtime APIs are not declared"
                                            << true;
        QTest::newRow("device runtime stream call")
            << "k.cu(82): error: identifier \"cudaStreamCreateWithFlags\" is undefined" << true;
        QTest::newRow("user identifier") << "k.cu(3): error: identifier \"cudaStreamCreateWithFlagz\" is undefined"
                                         << false;
        QTest::newRow("other error") << "k.cu(3): error: expected a \";\"" << false;
    }
    void logNeedsRdc()
    {
        QFETCH(QString, log);
        QFETCH(bool, needs);
        QCOMPARE(DeviceLink::logNeedsRdc(log), needs);
    }

    void optionsUseRdc_data()
    {
        QTest::addColumn<QStringList>("options");
        QTest::addColumn<bool>("rdc");
        QTest::newRow("none") << QStringList{"-lineinfo"} << false;
        QTest::newRow("short") << QStringList{"-rdc=true"} << true;
        QTest::newRow("long") << QStringList{"--relocatable-device-code=true"} << true;
        QTest::newRow("dc") << QStringList{"-dc"} << true;
        QTest::newRow("last one wins") << QStringList{"-rdc=true", "-rdc=false"} << false;
    }
    void optionsUseRdc()
    {
        QFETCH(QStringList, options);
        QFETCH(bool, rdc);
        QCOMPARE(DeviceLink::optionsUseRdc(options), rdc);
    }

    // The link needs nothing but the toolkit: these rows run in CI.
    void compilesAndLinks_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QStringList>("kernels"); // lowered names that must be functions in the cubin
        QTest::addColumn<QString>("note");
        QTest::newRow("parent launches child, found by the compiler")
            << QString::fromLatin1(kParentChild) << QStringList{} << QStringList{"_Z6parentPi", "_Z5childPi"}
            << "compiled again with -rdc=true and linked with the device runtime";
        QTest::newRow("parent launches child, -rdc=true given")
            << QString::fromLatin1(kParentChild) << QStringList{"-rdc=true"} << QStringList{"_Z6parentPi", "_Z5childPi"}
            << "linked with the device runtime (libcudadevrt.a): the options";
        QTest::newRow("cdpSimpleQuicksort as written")
            << readPreset("cdp_quicksort/cdp_quicksort.cu") << QStringList{}
            << QStringList{"_Z20cdp_simple_quicksortPjiii"}
            << "compiled again with -rdc=true and linked with the device runtime";
    }
    void compilesAndLinks()
    {
        QFETCH(QString, source);
        QFETCH(QStringList, extra);
        QFETCH(QStringList, kernels);
        QFETCH(QString, note);
        QVERIFY(!source.isEmpty());
        const CompileResult r = compile(source, extra);
        QVERIFY2(r.ok, qPrintable(dump(r)));
        QVERIFY(r.nvrtcOptions.contains("-rdc=true"));
        QVERIFY2(r.log.startsWith("note: " + note), qPrintable(r.log));
        bool noted = false;
        for (const Diagnostic &d : r.diagnostics) {
            noted = noted || (d.severity == Diagnostic::Severity::Note && d.message.startsWith(note));
        }
        QVERIFY2(noted, qPrintable(dump(r)));
        const Result<QStringList> functions = DeviceLink::elfFunctionSymbols(r.cubin);
        QVERIFY2(functions, qPrintable(functions ? QString() : functions.error().message));
        for (const QString &k : kernels) {
            QVERIFY2(functions->contains(k), qPrintable(k + " not in " + functions->join(' ')));
            bool listed = false;
            for (const KernelInfo &info : r.kernels) {
                listed = listed || info.loweredName == k;
            }
            QVERIFY2(listed, qPrintable(k));
        }
        // The device runtime's own code came in with the link: NVRTC's
        // relocatable cubin alone does not define it.
        bool runtime = false;
        for (const QString &f : *functions) {
            runtime = runtime || f.contains(QLatin1String("cnprt")) || f.startsWith(QLatin1String("cuda"));
        }
        QVERIFY2(runtime, qPrintable(functions->join(' ')));
    }

    // An ordinary kernel is not relocatable and not linked.
    void plainKernelIsNotLinked()
    {
        const CompileResult r = compile("__global__ void k(int *a) { a[0] = 1; }\n");
        QVERIFY2(r.ok, qPrintable(dump(r)));
        QVERIFY(!r.nvrtcOptions.contains("-rdc=true"));
        QVERIFY(!r.log.contains("device runtime"));
    }

    // A real error besides the device launch: the first compile's errors stay.
    void realErrorIsNotHidden()
    {
        const CompileResult r =
            compile(QString::fromLatin1(kParentChild) + "__global__ void k(int *a) { a[0] = x; }\n");
        QVERIFY(!r.ok);
        QVERIFY(!r.nvrtcOptions.contains("-rdc=true"));
        QVERIFY2(dump(r).contains("device-side kernel launch"), qPrintable(dump(r)));
    }

    void virtualArchCannotLink()
    {
        const CompileResult r = compile(QString::fromLatin1(kParentChild), {"-rdc=true"}, "compute_90");
        QVERIFY(!r.ok);
        QVERIFY2(dump(r).contains("needs a real architecture (sm_XX); the arch is 'compute_90'"), qPrintable(dump(r)));
    }

    // Missing pieces of the toolkit, each with its own message; kpg compile
    // is a process of its own, so nvJitLink is looked up afresh.
    void missingToolkitPieces_data()
    {
        QTest::addColumn<QString>("env");
        QTest::addColumn<QString>("message");
        QTest::newRow("no nvJitLink") << "KPG_NVJITLINK_LIBRARY=/nonexistent/libnvJitLink.so.13"
                                      << "nvJitLink not found (tried /nonexistent/libnvJitLink.so.13): kernels that "
                                         "launch kernels (dynamic parallelism) cannot be linked";
        QTest::newRow("no libcudadevrt.a") << "KPG_CUDADEVRT=/nonexistent/libcudadevrt.a"
                                           << "KPG_CUDADEVRT is '/nonexistent/libcudadevrt.a', which is not a file";
    }
    void missingToolkitPieces()
    {
        QFETCH(QString, env);
        QFETCH(QString, message);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QFile f(dir.filePath("dp.cu"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(kParentChild);
        f.close();
        const KpTest::Run run = KpTest::run("kpg", {"compile", f.fileName(), "--arch", "sm_90", "--no-cache"}, {env});
        QVERIFY2(run.exitCode != 0, qPrintable(run.out + run.err));
        QVERIFY2((run.out + run.err).contains(message), qPrintable(run.out + run.err));
    }

    void elfReaderRefusesGarbage_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("message");
        QTest::newRow("empty") << QByteArray() << "no ELF header";
        QTest::newRow("text") << QByteArray(100, 'x') << "no ELF header";
        QByteArray elf32(64, '\0');
        elf32.replace(0, 6,
                      QByteArray("\x7f"
                                 "ELF\x01\x01",
                                 6));
        QTest::newRow("32-bit") << elf32 << "not a 64-bit little-endian ELF";
        QByteArray outside(64, '\0');
        outside.replace(0, 6,
                        QByteArray("\x7f"
                                   "ELF\x02\x01",
                                   6));
        const quint64 shoff = 1ull << 40;
        std::memcpy(outside.data() + 0x28, &shoff, 8);
        const quint16 entsize = 64;
        const quint16 count = 3;
        std::memcpy(outside.data() + 0x3a, &entsize, 2);
        std::memcpy(outside.data() + 0x3c, &count, 2);
        QTest::newRow("section table past the end") << outside << "lies outside the image";
    }
    void elfReaderRefusesGarbage()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, message);
        const Result<QStringList> r = DeviceLink::elfFunctionSymbols(bytes);
        QVERIFY(!r);
        QVERIFY2(r.error().message.contains(message), qPrintable(r.error().message));
    }

    // A real cubin with bytes flipped at random never crashes the reader.
    void elfReaderSurvivesCorruption()
    {
        const CompileResult r = compile(QString::fromLatin1(kParentChild), {"-rdc=true"});
        QVERIFY2(r.ok, qPrintable(dump(r)));
        QRandomGenerator rng(26);
        for (int round = 0; round < 2000; ++round) {
            QByteArray bytes = r.cubin;
            for (int k = 0; k < 8; ++k) {
                bytes[rng.bounded(int(qMin<qsizetype>(bytes.size(), 4096)))] = char(rng.bounded(256));
            }
            if (round % 7 == 0) {
                bytes.truncate(rng.bounded(int(bytes.size())));
            }
            (void)DeviceLink::elfFunctionSymbols(bytes);
        }
    }
};

QTEST_GUILESS_MAIN(TestDeviceLink)
#include "tst_devicelink.moc"
