// NVRTC in kpg-compiler: a source that kills the compiler, one that runs past
// the time limit, a superseded compile, and the Landlock sandbox keeping a
// source from reading files outside the toolkit and the project.

#include "compile/compiler.h"
#include "compile/compileservice.h"
#include "compile/sandbox.h"
#include "cuda/nvrtcapi.h"

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace Kp;

namespace {

const QString kGood = QStringLiteral("__global__ void k(int *a) { a[threadIdx.x] = 1; }\n");

// Kernels enough to keep NVRTC busy for seconds (10,000 take over a minute).
QString manyKernels(int count)
{
    QString s;
    for (int i = 0; i < count; ++i) {
        s += QStringLiteral("__global__ void k%1(float *a) { for (int j = 0; j < (%1 % 7) + 3; ++j) a[j] += "
                            "sinf(a[j + %1]); }\n")
                 .arg(i);
    }
    return s;
}

} // namespace

class TestCompilerProcess : public QObject
{
    Q_OBJECT

private:
    static CompileRequest request(const QString &source, const QString &dir = {})
    {
        CompileRequest req;
        req.source = source;
        req.fileName = QStringLiteral("kernel.cu");
        req.projectDir = dir;
        req.options.useCache = false;
        return req;
    }
    static Compiler::Config config(int timeoutMs = 0)
    {
        Compiler::Config c;
        c.cacheDir = QStringLiteral("-");
        c.timeoutMs = timeoutMs;
        return c;
    }
    static QString text(const CompileResult &r)
    {
        QStringList l{r.log};
        for (const Diagnostic &d : r.diagnostics) {
            l << d.file + QLatin1Char(':') + d.message;
        }
        return l.join(QLatin1Char('\n'));
    }

private Q_SLOTS:
    void initTestCase()
    {
        const auto nv = NvrtcApi::instance();
        if (!nv) {
            QSKIP(qPrintable("NVRTC is not available: " + nv.error().message));
        }
        // The crash and hang pragmas of kpg-compiler (engine/compiler/main.cpp).
        qputenv("KPG_COMPILER_TEST_HOOKS", "1");
    }

    void crashIsOneMessage_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<bool>("real");
        QTest::newRow("test hook") << QStringLiteral("#pragma kpg_test_crash\n") + kGood << false;
        // NVRTC 13.0 corrupts its heap on a 256 KiB kernel name ("malloc(): invalid size").
        QTest::newRow("256 KiB kernel name")
            << QStringLiteral("__global__ void %1(int *a) { a[0] = 1; }\n").arg(QString(256 * 1024, QLatin1Char('k')))
            << true;
    }
    void crashIsOneMessage()
    {
        QFETCH(QString, source);
        QFETCH(bool, real);
        Compiler compiler(config());
        const Result<CompileResult> r = compiler.compile(request(source));
        KP_VERIFY_RESULT(r);
        if (real && r->ok) {
            QSKIP("this NVRTC compiles the source without crashing");
        }
        QVERIFY(!r->ok);
        QCOMPARE(r->diagnostics.size(), 1);
        QCOMPARE(r->diagnostics.first().message, Compiler::crashMessage());
        QCOMPARE(r->diagnostics.first().file, QStringLiteral("kernel.cu"));

        // A fresh process compiles the next source.
        const Result<CompileResult> next = compiler.compile(request(kGood));
        KP_VERIFY_RESULT(next);
        QVERIFY2(next->ok, qPrintable(text(*next)));
        QVERIFY(!next->cubin.isEmpty());
    }

    void timeoutStops_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<int>("timeoutMs");
        QTest::addColumn<QString>("message");
        QTest::newRow("test hook, 2 s") << QStringLiteral("#pragma kpg_test_hang\n") + kGood << 2000
                                        << QStringLiteral("compile took longer than 2 s and was stopped");
        QTest::newRow("3000 kernels, 2 s")
            << manyKernels(3000) << 2000 << QStringLiteral("compile took longer than 2 s and was stopped");
    }
    void timeoutStops()
    {
        QFETCH(QString, source);
        QFETCH(int, timeoutMs);
        QFETCH(QString, message);
        Compiler compiler(config(timeoutMs));
        QElapsedTimer timer;
        timer.start();
        const Result<CompileResult> r = compiler.compile(request(source));
        KP_VERIFY_RESULT(r);
        QVERIFY(!r->ok);
        QCOMPARE(r->diagnostics.size(), 1);
        QCOMPARE(r->diagnostics.first().message, message);
        QVERIFY2(timer.elapsed() < timeoutMs + 5000, qPrintable(QString::number(timer.elapsed())));

        const Result<CompileResult> next = compiler.compile(request(kGood));
        KP_VERIFY_RESULT(next);
        QVERIFY2(next->ok, qPrintable(text(*next)));
    }

    void defaultTimeout()
    {
        qputenv("KPG_COMPILE_TIMEOUT", "2.5");
        QCOMPARE(Compiler(config()).timeoutMs(), 2500);
        qunsetenv("KPG_COMPILE_TIMEOUT");
        QCOMPARE(Compiler(config()).timeoutMs(), 60000);
        QCOMPARE(Compiler::timeoutMessage(60000), QStringLiteral("compile took longer than 60 s and was stopped"));
    }

    void supersededCompileIsKilled()
    {
        CompileService service(config(60000));
        QObject context;
        QStringList got;
        service.compile(
            request(QStringLiteral("#pragma kpg_test_hang\n") + kGood), &context,
            [&](const Result<CompileResult> &) { got << QStringLiteral("hang"); }, QStringLiteral("edit"));
        QTest::qWait(2000); // the hanging compile is running now (a loaded machine starts it late)
        bool ok = false;
        service.compile(
            request(kGood), &context,
            [&](const Result<CompileResult> &r) {
                got << QStringLiteral("good");
                ok = r && r->ok;
            },
            QStringLiteral("edit"));
        QTRY_VERIFY_WITH_TIMEOUT(got.contains(QStringLiteral("good")), 20000);
        QVERIFY(ok);
        QCOMPARE(got, QStringList{QStringLiteral("good")});
    }

    void includeOutsideIsDenied_data()
    {
        QTest::addColumn<QString>("include");
        QTest::newRow("absolute") << QStringLiteral("/etc/passwd");
        QTest::newRow("relative to the project") << QStringLiteral("../../../../../../../../../etc/passwd");
    }
    void includeOutsideIsDenied()
    {
        if (Sandbox::landlockAbi() <= 0) {
            QSKIP("Landlock is not available on this kernel (landlock_create_ruleset reports no ABI)");
        }
        QFETCH(QString, include);
        QFile passwd(QStringLiteral("/etc/passwd"));
        QVERIFY(passwd.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = passwd.readAll().split('\n');

        QTemporaryDir project;
        QFile header(project.filePath(QStringLiteral("mine.h")));
        QVERIFY(header.open(QIODevice::WriteOnly));
        header.write("#define MINE 7\n");
        header.close();

        Compiler compiler(config());
        const Result<CompileResult> r = compiler.compile(
            request(QStringLiteral("#include \"mine.h\"\n#include \"%1\"\n__global__ void k(int *a) { a[0] = MINE; }\n")
                        .arg(include),
                    project.path()));
        KP_VERIFY_RESULT(r);
        QVERIFY(compiler.sandboxState().startsWith(QLatin1String("sandboxed")));
        QVERIFY(!r->ok);
        const QString all = text(*r);
        QVERIFY2(all.contains(QLatin1String("Permission denied")) || all.contains(QLatin1String("cannot open")),
                 qPrintable(all));
        for (const QByteArray &line : lines) {
            if (line.trimmed().size() > 3) {
                QVERIFY2(!all.contains(QString::fromUtf8(line)), qPrintable(all));
            }
        }

        // The project's own header is readable (it was given to the sandbox).
        const Result<CompileResult> own = compiler.compile(request(
            QStringLiteral("#include \"mine.h\"\n__global__ void k(int *a) { a[0] = MINE; }\n"), project.path()));
        KP_VERIFY_RESULT(own);
        QVERIFY2(own->ok, qPrintable(text(*own)));
    }

    void isolatedMatchesInProcess()
    {
        Compiler::Config in = config();
        in.isolated = false;
        Compiler inProcess(in);
        Compiler isolated(config());
        const QString source = QStringLiteral("template <int N> __global__ void t(float *a) { a[N] = N; }\n") + kGood;
        CompileRequest req = request(source);
        req.options.nameExpressions = QStringList{QStringLiteral("t<4>")};
        const Result<CompileResult> a = inProcess.compile(req);
        const Result<CompileResult> b = isolated.compile(req);
        KP_VERIFY_RESULT(a);
        KP_VERIFY_RESULT(b);
        QVERIFY(a->ok && b->ok);
        QCOMPARE(b->ptx, a->ptx);
        QCOMPARE(b->cubin, a->cubin);
        QCOMPARE(b->kernels.size(), a->kernels.size());
        for (qsizetype i = 0; i < a->kernels.size(); ++i) {
            QCOMPARE(b->kernels.at(i).loweredName, a->kernels.at(i).loweredName);
        }
    }
};

QTEST_GUILESS_MAIN(TestCompilerProcess)
#include "tst_compilerprocess.moc"
