// PTX .loc mapping, and the compile service's superseding.

#include "compile/compileservice.h"
#include "compile/ptxmap.h"
#include "cuda/nvrtcapi.h"

#include <QTemporaryDir>
#include <QtTest>

#include <atomic>

using namespace Kp;

class TestPtxMap : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void mapsLines()
    {
        const QByteArray ptx = ".visible .entry k(\n" // 1
                               ")\n"                  // 2
                               "{\n"                  // 3
                               "\t.loc\t1 5 3\n"      // 4
                               "\tmov.u32 %r1, 1;\n"  // 5
                               "\t.loc\t2 100 1\n"    // 6  another file
                               "\tadd.s32 %r2, 1;\n"  // 7
                               "\t.loc\t1 7 1\n"      // 8
                               "\tret;\n"             // 9
                               "}\n"                  // 10
                               "\t.file\t1 \"/home/me/kernel.cu\"\n"
                               "\t.file\t2 \"/usr/local/cuda/include/x.h\"\n";
        const PtxLineMap m(ptx, "kernel.cu");
        QCOMPARE(m.sourceLine(1), 0);
        QCOMPARE(m.sourceLine(5), 5);
        QCOMPARE(m.sourceLine(7), 0);
        QCOMPARE(m.sourceLine(9), 7);
        QCOMPARE(m.sourceLine(10), 0);
        QCOMPARE(m.ptxLines(5, 5), (QList<int>{4, 5}));
        QCOMPARE(m.ptxLines(5, 7), (QList<int>{4, 5, 8, 9}));
        QVERIFY(m.ptxLines(6, 6).isEmpty());
        QCOMPARE(m.sourceLine(0), 0);
        QCOMPARE(m.sourceLine(1000), 0);
    }

    void mapsSass()
    {
        const QByteArray sass = "\t.text.vectorAdd:\n"                                 // 1
                                "        //## File \"/home/me/kernel.cu\", line 12\n"  // 2
                                "        /*0000*/ LDC R1, c[0x0][0x28] ;\n"            // 3
                                "        //## File \"/home/me/kernel.cu\", line 14\n"  // 4
                                "        /*0010*/ FADD R9, R2, R5 ;\n"                 // 5
                                "        //## File \"/usr/include/other.h\", line 3\n" // 6
                                "        /*0020*/ EXIT ;\n";                           // 7
        const PtxLineMap m = PtxLineMap::fromSass(sass, "kernel.cu");
        QCOMPARE(m.sourceLine(1), 0);
        QCOMPARE(m.sourceLine(3), 12);
        QCOMPARE(m.sourceLine(5), 14);
        QCOMPARE(m.sourceLine(7), 0);
        QCOMPARE(m.ptxLines(14, 14), (QList<int>{4, 5}));
    }

    void serviceSupersedes()
    {
        if (!NvrtcApi::instance()) {
            QSKIP("NVRTC is not available");
        }
        QTemporaryDir dir;
        CompileService service(Compiler::Config{dir.path(), 1 << 20});
        QObject context;
        QList<QString> done;
        for (int i = 0; i < 5; ++i) {
            CompileRequest r;
            r.source = QString("__global__ void k%1(int *p) { p[0] = %1; }\n").arg(i);
            r.options.useCache = false;
            service.compile(
                r, &context,
                [&done, i](const Result<CompileResult> &res) {
                    QVERIFY(res.ok());
                    done << QString::number(i);
                },
                "editor");
        }
        QTRY_VERIFY_WITH_TIMEOUT(done.contains("4"), 30000);
        QTest::qWait(200);
        // The first may already be running; everything queued behind it collapses into the newest.
        QVERIFY2(done.size() <= 2, qPrintable(done.join(',')));
        QCOMPARE(done.last(), QString("4"));
    }

    void serviceWorksOnResultOffTheCallersThread()
    {
        if (!NvrtcApi::instance()) {
            QSKIP("NVRTC is not available");
        }
        CompileService service(Compiler::Config{"-", 0});
        std::atomic<QThread *> workedOn{nullptr};
        QByteArray workedPtx;
        service.setAfterCompile([&](const CompileResult &r) {
            workedPtx = r.ptx;
            workedOn = QThread::currentThread();
        });
        QObject context;
        QByteArray answeredPtx;
        QThread *workedBeforeAnswer = nullptr;
        CompileRequest r;
        r.source = "__global__ void k(int *p) { p[0] = 7; }\n";
        service.compile(r, &context, [&](const Result<CompileResult> &res) {
            QVERIFY(res.ok());
            answeredPtx = res.value().ptx;
            workedBeforeAnswer = workedOn;
        });
        QTRY_VERIFY_WITH_TIMEOUT(!answeredPtx.isEmpty(), 60000);
        // Done on the pool thread, before the answer, with the answer's PTX.
        QVERIFY(workedBeforeAnswer != nullptr);
        QVERIFY(workedBeforeAnswer != QThread::currentThread());
        QCOMPARE(workedPtx, answeredPtx);

        // Not for a source that does not compile: there is nothing to work on.
        workedOn = nullptr;
        bool failed = false;
        r.source = "__global__ void k(int *p) { p[0] = undeclared; }\n";
        service.compile(r, &context, [&](const Result<CompileResult> &res) {
            QVERIFY(res.ok());
            failed = !res.value().ok;
        });
        QTRY_VERIFY_WITH_TIMEOUT(failed, 60000);
        QCOMPARE(workedOn.load(), nullptr);
    }

    void serviceDropsResultForDeadContext()
    {
        if (!NvrtcApi::instance()) {
            QSKIP("NVRTC is not available");
        }
        CompileService service(Compiler::Config{"-", 0});
        bool called = false;
        auto *context = new QObject;
        CompileRequest r;
        r.source = "__global__ void k(int *p) { p[0] = 1; }\n";
        service.compile(r, context, [&](const Result<CompileResult> &) { called = true; });
        delete context;
        // The service answers in order on its one thread: once a later
        // request's callback has come, the first one's would have too.
        QObject alive;
        bool later = false;
        CompileRequest r2 = r;
        r2.source += "// a second source\n";
        service.compile(r2, &alive, [&](const Result<CompileResult> &) { later = true; });
        QTRY_VERIFY_WITH_TIMEOUT(later, 60000);
        QVERIFY(!called);
    }
};

QTEST_GUILESS_MAIN(TestPtxMap)
#include "tst_ptxmap.moc"
