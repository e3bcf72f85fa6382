// NVRTC in kpg-compiler: a source that kills the compiler, one that runs past
// the time limit, a superseded compile, and the Landlock sandbox keeping a
// source from reading files outside the toolkit and the project.

#include "compile/compiler.h"
#include "compile/compilerprocess.h"
#include "compile/compileservice.h"
#include "compile/sandbox.h"
#include "cuda/nvrtcapi.h"
#include "testutil.h"

#include <QFile>
#include <QProcessEnvironment>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <thread>

using namespace Kp;

namespace {

const QString kGood = QStringLiteral("__global__ void k(int *a) { a[threadIdx.x] = 1; }\n");
// A value no file on the machine holds: it must never come back from a compile.
constexpr const char *kMarker = "kpg-marker-5b1e0c7a93d4";
// The bomb's limit: above what an ordinary compile without a precompiled
// header maps (about 130 MiB), far below what the bomb wants, and low enough
// that the bomb reaches it in seconds.
constexpr qint64 kBombLimitMiB = 512;

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
    /** A job as Compiler makes one for source: the toolkit's headers, -pch. */
    static NvrtcJob job(const QByteArray &source)
    {
        NvrtcJob j;
        j.source = source;
        j.programName = "kernel.cu";
        j.options = QStringList{QStringLiteral("-arch=compute_75"), QStringLiteral("-std=c++17")};
        for (const QString &d : Compiler::toolkitIncludeDirs()) {
            j.options << QStringLiteral("-I") + d;
        }
        j.options << QStringLiteral("-pch");
        return j;
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
        // Issue 28: the time it ran before it was stopped, not "0.0 ms".
        QVERIFY2(r->compileMs >= timeoutMs * 0.95 && r->compileMs < timeoutMs + 5000,
                 qPrintable(QString::number(r->compileMs)));

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

    // A kernel that launches kernels compiles twice (the second time with
    // -rdc=true). When the second compile was cancelled (the editor's text or
    // the GPU changed meanwhile), the first one's "needs -rdc" errors were
    // returned as the source's answer and cached: on an H100 the window then
    // kept saying cdp_quicksort does not compile. A cancelled retry is a
    // cancelled compile, and nothing of it is cached.
    void cancelledRetryIsNotTheAnswer()
    {
        QTemporaryDir cache;
        Compiler::Config c = config(4000);
        c.cacheDir = cache.path();
        Compiler compiler(c);
        CompileRequest req = request(QStringLiteral("#pragma kpg_test_hang_retry\n"
                                                    "__global__ void child(int *a) { a[threadIdx.x] += 1; }\n"
                                                    "__global__ void parent(int *a) { child<<<1, 32>>>(a); }\n"));
        req.options.arch = QStringLiteral("sm_90");
        req.options.useCache = true;
        std::atomic<bool> done{false};
        Result<CompileResult> r = Error{};
        std::thread t([&] {
            r = compiler.compile(req);
            done = true;
        });
        // The first compile answers in well under a second; the retry hangs
        // until cancelled. (Cancelling the first instead is a cancel too.)
        QElapsedTimer waited;
        waited.start();
        QTest::qWait(1500);
        while (!done && waited.elapsed() < 20000) {
            compiler.cancelRunning();
            QTest::qWait(200);
        }
        t.join();
        QVERIFY2(!r, qPrintable(r ? text(*r) : QString()));
        QCOMPARE(r.error().code, Error::Code::Cancelled);

        // Nothing was cached: the same source compiles afresh, and its retry
        // hangs again until the time limit stops it.
        const Result<CompileResult> again = compiler.compile(req);
        KP_VERIFY_RESULT(again);
        QVERIFY(!again->cached);
        QVERIFY(!again->ok);
        QCOMPARE(again->diagnostics.size(), 1);
        QCOMPARE(again->diagnostics.first().message, Compiler::timeoutMessage(4000));
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

    // kpg run spawns kpg-compiler before the worker finds the GPU
    // (Compiler::warmUp) and greets it at the first compile: that process
    // compiles with the folders it was started for, and no others; another
    // project's folders start a new one.
    void warmedUpProcessCompilesWithItsFolders()
    {
        QTemporaryDir a;
        QTemporaryDir b;
        for (QTemporaryDir *d : {&a, &b}) {
            QFile header(d->filePath(QStringLiteral("mine.h")));
            QVERIFY(header.open(QIODevice::WriteOnly));
            header.write(d == &a ? "#define MINE 7\n" : "#define MINE 8\n");
        }
        const QString includesMine =
            QStringLiteral("#include \"mine.h\"\n__global__ void k(int *a) { a[0] = MINE; }\n");
        Compiler compiler(config());
        compiler.warmUp(request(includesMine, a.path()));
        QVERIFY2(compiler.sandboxState().isEmpty(), "warmUp waited for the process's answer");
        compiler.warmUp(request(includesMine, a.path())); // the same folders: the same process
        Result<CompileResult> r = compiler.compile(request(includesMine, a.path()));
        KP_VERIFY_RESULT(r);
        QVERIFY2(r->ok, qPrintable(text(*r)));
        QVERIFY(!compiler.sandboxState().isEmpty());
        QVERIFY(r->ptx.contains("7;"));
        compiler.warmUp(request(includesMine, b.path()));
        r = compiler.compile(request(includesMine, b.path()));
        KP_VERIFY_RESULT(r);
        QVERIFY2(r->ok, qPrintable(text(*r)));
        QVERIFY(r->ptx.contains("8;"));
        if (Sandbox::landlockAbi() > 0) {
            // Started for b, asked to read a's header by path: the sandbox refuses.
            compiler.warmUp(request(includesMine, b.path()));
            const Result<CompileResult> outside =
                compiler.compile(request(QStringLiteral("#include \"%1\"\n__global__ void k(int *a) { a[0] = MINE; }\n")
                                             .arg(a.filePath(QStringLiteral("mine.h"))),
                                         b.path()));
            KP_VERIFY_RESULT(outside);
            QVERIFY2(!outside->ok, qPrintable(text(*outside)));
        }
        // A process only warmed up is stopped with its compiler, never waited for.
        Compiler idle(config());
        idle.warmUp(request(includesMine, a.path()));
    }

    // NVRTC's automatic precompiled header covers the source's leading
    // directives; headerPrefix() finds them as the preprocessor does.
    void headerPrefixIsTheLeadingDirectives_data()
    {
        QTest::addColumn<QByteArray>("source");
        QTest::addColumn<QByteArray>("prefix"); // empty: none
        const QByteArray body = "__global__ void k(float *a) { a[0] = 1; }\n";
        QTest::newRow("includes") << QByteArray("#include <cub/cub.cuh>\n#include <cstdio>\n" + body)
                                  << QByteArray("#include <cub/cub.cuh>\n#include <cstdio>\n");
        QTest::newRow("comments and defines between")
            << QByteArray("// a kernel\n/* two\n lines */\n#define N 4\n  #  include <cstdio> // why\n\n" + body)
            << QByteArray("// a kernel\n/* two\n lines */\n#define N 4\n  #  include <cstdio> // why\n\n");
        QTest::newRow("continued directive")
            << QByteArray("#include <cstdio>\n#define TWICE(x) \\\n  ((x) + (x))\n" + body)
            << QByteArray("#include <cstdio>\n#define TWICE(x) \\\n  ((x) + (x))\n");
        QTest::newRow("a comment opened in a directive")
            << QByteArray("#include <cstdio> /* spans\n__global__ void no() {}\n */\n" + body)
            << QByteArray("#include <cstdio> /* spans\n__global__ void no() {}\n */\n");
        QTest::newRow("a comment opener in a string") << QByteArray("#include <cstdio>\n#define S \"/*\"\n" + body)
                                                      << QByteArray("#include <cstdio>\n#define S \"/*\"\n");
        QTest::newRow("byte order mark") << QByteArray("\xEF\xBB\xBF#include <cstdio>\n" + body)
                                         << QByteArray("\xEF\xBB\xBF#include <cstdio>\n");
        QTest::newRow("no include") << QByteArray("#define N 4\n" + body) << QByteArray();
        QTest::newRow("code first") << QByteArray(body + "#include <cstdio>\n") << QByteArray();
        QTest::newRow("include later") << QByteArray("int x;\n#include <cstdio>\n" + body) << QByteArray();
        QTest::newRow("only directives") << QByteArray("#include <cstdio>\n") << QByteArray();
        QTest::newRow("unterminated comment") << QByteArray("#include <cstdio>\n/* " + body) << QByteArray();
        QTest::newRow("escaped newline at the end") << QByteArray("#include <cstdio> \\\r") << QByteArray();
    }
    void headerPrefixIsTheLeadingDirectives()
    {
        QFETCH(QByteArray, source);
        QFETCH(QByteArray, prefix);
        NvrtcJob job;
        job.source = source;
        job.programName = "k.cu";
        job.options = QStringList{QStringLiteral("-pch"), QStringLiteral("-std=c++17")};
        job.headers = {{"h.h", "#pragma once\n"}};
        const NvrtcJob p = job.headerPrefix();
        QCOMPARE(p.source, prefix);
        if (!prefix.isEmpty()) {
            QCOMPARE(p.options, job.options);
            QCOMPARE(p.programName, job.programName);
            QCOMPARE(p.headers, job.headers);
        }
    }

    // A first compile with -pch is as fast as one without (NVRTC makes the
    // header about 1.5x slower); the header is made after it answers, and the
    // next compile with the same directives uses it (NVRTC's status says so).
    void headerIsMadeAfterTheFirstAnswer()
    {
        const QByteArray cmath = "#include <cuda/std/cmath>\n";
        CompilerProcess proc;
        Result<NvrtcOutput> first =
            proc.run(job(cmath + "__global__ void k(float *a) { a[0] = cuda::std::sqrt(a[1]); }\n"), {}, 60000);
        KP_VERIFY_RESULT(first);
        QCOMPARE(first->status, 0);
        QCOMPARE(first->pchStatus, -1); // sent without -pch
        // The same directives, another body: the header made meanwhile is used.
        Result<NvrtcOutput> second =
            proc.run(job(cmath + "__global__ void k(float *a) { a[0] = cuda::std::cbrt(a[1]); }\n"), {}, 60000);
        KP_VERIFY_RESULT(second);
        QCOMPARE(second->status, 0);
        if (!(*NvrtcApi::instance())->nvrtcGetPCHCreateStatus) {
            QSKIP("this NVRTC does not report whether it used a precompiled header");
        }
        QCOMPARE(second->pchStatus, 13); // NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED: it had one
        QVERIFY(second->ptx.contains("cbrt") || second->ptx.size() > 0);
        // Other directives: without -pch again, as any first.
        Result<NvrtcOutput> other =
            proc.run(job("#include <cuda/std/cstdint>\n__global__ void k(int *a) { a[0] = 1; }\n"), {}, 60000);
        KP_VERIFY_RESULT(other);
        QCOMPARE(other->status, 0);
        QCOMPARE(other->pchStatus, -1);
        // A header that does not compile is not tried again: its jobs go without -pch.
        const QByteArray broken = "#include <cuda/std/cmath>\n#error no\n";
        for (int i = 0; i < 2; ++i) {
            Result<NvrtcOutput> r = proc.run(job(broken + "__global__ void k(int *a) { a[0] = 1; }\n"), {}, 60000);
            KP_VERIFY_RESULT(r);
            QVERIFY(r->status != 0);
            QCOMPARE(r->pchStatus, -1);
        }
    }

    // A compile sent while the header is being made waits for it; a cancel()
    // then ends the wait, not the process: the header is there for the next.
    void cancelWhileTheHeaderIsMadeKeepsIt()
    {
        const NvrtcJob j = job("#include <cub/block/block_reduce.cuh>\n__global__ void k(float *a) {\n"
                               "  using R = cub::BlockReduce<float, 128>;\n  __shared__ R::TempStorage t;\n"
                               "  a[0] = R(t).Sum(a[threadIdx.x]);\n}\n");
        CompilerProcess proc;
        Result<NvrtcOutput> first = proc.run(j, {}, 120000);
        KP_VERIFY_RESULT(first);
        QCOMPARE(first->status, 0);
        // The header takes about as long as the compile; cancels every 5 ms from now on.
        std::atomic<bool> done{false};
        std::thread canceller([&] {
            while (!done) {
                proc.cancel();
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        });
        const Result<NvrtcOutput> cancelled = proc.run(j, {}, 120000);
        done = true;
        canceller.join();
        QVERIFY(!cancelled);
        QCOMPARE(cancelled.error().code, Error::Code::Cancelled);
        const Result<NvrtcOutput> next = proc.run(j, {}, 120000);
        KP_VERIFY_RESULT(next);
        QCOMPARE(next->status, 0);
        if ((*NvrtcApi::instance())->nvrtcGetPCHCreateStatus) {
            QCOMPARE(next->pchStatus, 13); // the same process, with the header
        }
    }

    // Issue 28: a macro bomb once grew kpg-compiler to 1.1 GB before the time limit stopped it.
    void memoryLimitStopsAMacroBomb()
    {
        QString bomb =
            QStringLiteral("#define A0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n");
        for (int i = 1; i <= 20; ++i) {
            bomb += QStringLiteral("#define A%1 A%2 A%2 A%2 A%2\n").arg(i).arg(i - 1);
        }
        bomb += QStringLiteral("#define S(x) #x\n#define T(x) S(x)\n__device__ const char *s = T(A20);\n") + kGood;
        Compiler::Config c = config(120000);
        c.memoryLimitMiB = kBombLimitMiB;
        Compiler compiler(c);
        CompileRequest bombRequest = request(bomb);
        bombRequest.options.pch = false;
        QElapsedTimer timer;
        timer.start();
        const Result<CompileResult> r = compiler.compile(bombRequest);
        KP_VERIFY_RESULT(r);
        QVERIFY(!r->ok);
        QCOMPARE(r->diagnostics.size(), 1);
        QCOMPARE(
            r->diagnostics.first().message,
            QStringLiteral("the compiler used more than %1 MiB on this source and was stopped").arg(kBombLimitMiB));
        QCOMPARE(r->diagnostics.first().file, QStringLiteral("kernel.cu"));
        QVERIFY2(timer.elapsed() < 100000, qPrintable(QString::number(timer.elapsed()))); // well before the time limit

        // The same limit leaves an ordinary compile alone, in a fresh process.
        CompileRequest good = request(kGood);
        good.options.pch = false;
        const Result<CompileResult> next = compiler.compile(good);
        KP_VERIFY_RESULT(next);
        QVERIFY2(next->ok, qPrintable(text(*next)));
    }

    void memoryLimitSetting_data()
    {
        QTest::addColumn<QString>("value");
        QTest::addColumn<qint64>("mib"); // -1: refused
        QTest::newRow("unset: the default") << QString() << CompilerProcess::defaultMemoryLimitMiB();
        QTest::newRow("1024") << QStringLiteral("1024") << qint64(1024);
        QTest::newRow("below the minimum") << QStringLiteral("100") << qint64(-1);
        QTest::newRow("a word") << QStringLiteral("lots") << qint64(-1);
        QTest::newRow("past 64 bits") << QStringLiteral("99999999999999999999") << qint64(-1);
    }
    void memoryLimitSetting()
    {
        QFETCH(QString, value);
        QFETCH(qint64, mib);
        if (value.isEmpty()) {
            qunsetenv("KPG_COMPILER_MEMORY_LIMIT");
        } else {
            qputenv("KPG_COMPILER_MEMORY_LIMIT", value.toUtf8());
        }
        const Result<qint64> got = CompilerProcess::memoryLimitMiB();
        qunsetenv("KPG_COMPILER_MEMORY_LIMIT");
        if (mib < 0) {
            QVERIFY(!got);
            QCOMPARE(got.error().message,
                     QStringLiteral("KPG_COMPILER_MEMORY_LIMIT is the compiler's memory limit in MiB, a whole number "
                                    "from 256 to 1048576, not '%1'")
                         .arg(value));
        } else {
            KP_VERIFY_RESULT(got);
            QCOMPARE(*got, mib);
        }
        const qint64 d = CompilerProcess::defaultMemoryLimitMiB();
        QVERIFY(d >= 2048 && d <= 8192);
    }

    // Issue 28: /proc/self/environ once returned the whole environment in "log".
    void procAndSysAreDenied_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("content"); // what the file would show
        QTest::newRow("/proc/self/environ") << QStringLiteral("/proc/self/environ") << QString(kMarker);
        QTest::newRow("/proc/self/cmdline") << QStringLiteral("/proc/self/cmdline") << QStringLiteral("--serve");
        QTest::newRow("/proc/self/maps") << QStringLiteral("/proc/self/maps") << QStringLiteral("libnvrtc");
        QTest::newRow("/proc/self/status") << QStringLiteral("/proc/self/status") << QStringLiteral("TracerPid");
        QTest::newRow("/proc/cpuinfo") << QStringLiteral("/proc/cpuinfo") << QStringLiteral("processor");
        QTest::newRow("/proc/1/environ") << QStringLiteral("/proc/1/environ") << QString(kMarker);
        QTest::newRow("/sys/kernel/mm/transparent_hugepage/enabled")
            << QStringLiteral("/sys/kernel/mm/transparent_hugepage/enabled") << QStringLiteral("madvise");
    }
    void procAndSysAreDenied()
    {
        if (Sandbox::landlockAbi() <= 0) {
            QSKIP("Landlock is not available on this kernel (landlock_create_ruleset reports no ABI)");
        }
        QFETCH(QString, file);
        QFETCH(QString, content);
        QTemporaryDir dir;
        const QString source = dir.filePath(QStringLiteral("leak.cu"));
        QFile f(source);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QStringLiteral("#include \"%1\"\n").arg(file).toUtf8() + kGood.toUtf8());
        f.close();
        const KpTest::Run run =
            KpTest::run(QStringLiteral("kpg"), {QStringLiteral("compile"), QStringLiteral("--json"), source},
                        {QStringLiteral("KPG_TEST_MARKER=") + kMarker, QStringLiteral("KPG_CACHE_DIR=") + dir.path()});
        QCOMPARE(run.exitCode, 2);
        const QString all = run.out + run.err;
        QVERIFY2(all.contains(QStringLiteral("cannot open source file \\\"%1\\\"").arg(file)), qPrintable(all));
        QVERIFY2(all.contains(QLatin1String("Permission denied")), qPrintable(all));
        QVERIFY2(!all.contains(QLatin1String(kMarker)), qPrintable(all));
        QVERIFY2(!all.contains(content), qPrintable(all));
    }

    void environmentIsMinimal()
    {
        QProcessEnvironment parent;
        parent.insert(QStringLiteral("KPG_TEST_MARKER"), QString(kMarker));
        parent.insert(QStringLiteral("AWS_SECRET_ACCESS_KEY"), QStringLiteral("s3cr3t"));
        parent.insert(QStringLiteral("LD_LIBRARY_PATH"), QStringLiteral("/opt/lib"));
        parent.insert(QStringLiteral("KPG_COMPILER_TEST_HOOKS"), QStringLiteral("1"));
        const QProcessEnvironment env = compilerEnvironment(parent);
        QCOMPARE(env.keys(),
                 (QStringList{QStringLiteral("KPG_COMPILER_TEST_HOOKS"), QStringLiteral("LD_LIBRARY_PATH")}));
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
