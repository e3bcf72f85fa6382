// The Occupancy panel offscreen: the numbers and the limiting factor for a
// kernel's resources, the what-if sliders changing them, another
// architecture's limits, the driver's answer from a run, and the panel in the
// main window following a real compile of a preset.

#include "client/engineclient.h"
#include "editor/codeeditor.h"
#include "panels/occupancy/occupancyview.h"
#include "plots/occupancychart.h"
#include "shell/docks.h"
#include "shell/mainwindow.h"

#include <QComboBox>
#include <QDockWidget>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QtTest>

using namespace Kp;

namespace {

CompileResult compileOf(int registers, int staticShared)
{
    CompileResult r;
    r.ok = true;
    r.arch = QStringLiteral("sm_90");
    KernelInfo k;
    k.name = QStringLiteral("stencil");
    k.resources.known = true;
    k.resources.registers = registers;
    k.resources.sharedBytes = staticShared;
    KernelInfo other;
    other.name = QStringLiteral("reduce");
    other.resources.known = true;
    other.resources.registers = 16;
    r.kernels << k << other;
    return r;
}

} // namespace

class TestOccupancyView : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void numbersAndWhatIf()
    {
        OccupancyView view;
        view.resize(420, 620);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setCompile(compileOf(64, 0));
        view.setLaunch(QStringLiteral("stencil"), 256, 0);
        QCOMPARE(view.architecture(), QString("sm_90"));
        // sm_90, 256 threads, 64 registers: 4 blocks, 32 of 64 warps (tst_occupancy works it by hand).
        // Worded as the Launch panel's Occupancy line (issue 29: two messages for one thing).
        QCOMPARE(view.summaryText(), QString("50 % (4 blocks/SM, 32 of 64 warps), limited by registers"));
        QVERIFY2(view.limiterText().startsWith("Limited by registers: 64 registers per thread take 2048 per warp"),
                 qPrintable(view.limiterText()));
        QCOMPARE(view.registerSlider()->value(), 64);
        QCOMPARE(view.blockChart()->pointCount(), 32);
        QCOMPARE(view.blockChart()->currentX(), 256);
        QCOMPARE(view.registerChart()->currentX(), 64);
        QCOMPARE(view.registerChart()->occupancyAt(64), 0.5);
        QCOMPARE(view.registerChart()->occupancyAt(32), 1.0);
        QVERIFY2(view.blockChart()->title().contains("limited by registers"), qPrintable(view.blockChart()->title()));

        // The register slider down to 32: the SM fills.
        QSignalSpy updated(&view, &OccupancyView::updated);
        view.registerSlider()->setValue(32);
        QCOMPARE(updated.count(), 1);
        QCOMPARE(view.summaryText(), QString("100 % (8 blocks/SM, 64 of 64 warps), limited by warps"));
        QVERIFY2(view.limiterText().startsWith("Limited by warps"), qPrintable(view.limiterText()));
        QCOMPARE(view.registerChart()->currentX(), 32);

        // 48 KiB of shared memory per block: floor(233472 / 50176) = 4 blocks.
        view.sharedSlider()->setValue(49152);
        QCOMPARE(view.currentUse().dynamicShared, 49152);
        QCOMPARE(view.summaryText(), QString("50 % (4 blocks/SM, 32 of 64 warps), limited by shared memory"));
        QVERIFY2(view.limiterText().startsWith("Limited by shared memory"), qPrintable(view.limiterText()));
        QCOMPARE(view.sharedChart()->currentX(), 49152);

        // Another architecture's recorded limits: sm_86 has 100 KiB and 48 warps per SM.
        view.setArchitecture(QStringLiteral("sm_86"));
        QCOMPARE(view.smLimits().arch(), QString("sm_86"));
        // S = 50176: floor(102400 / 50176) = 2 blocks, 16 of 48 warps.
        QCOMPARE(view.summaryText(), QString("33.3 % (2 blocks/SM, 16 of 48 warps), limited by shared memory"));
        QCOMPARE(view.sharedSlider()->maximum(), 101376);

        // Too many threads for the registers: cannot run, and why.
        view.sharedSlider()->setValue(0);
        view.registerSlider()->setValue(72);
        view.blockSpin()->setValue(1024);
        QVERIFY2(view.summaryText().startsWith("Cannot run: 1024 threads x 72 registers need 73728 registers"),
                 qPrintable(view.summaryText()));

        // Reset: the kernel's own registers and the launch's block.
        view.resetToKernel();
        QCOMPARE(view.currentUse().regsPerThread, 64);
        QCOMPARE(view.currentUse().blockThreads, 256);
        // A compile does not undo a choice of limits made by hand.
        view.setCompile(compileOf(64, 0));
        QCOMPARE(view.architecture(), QString("sm_86"));
    }

    void driverAnswerFromARun()
    {
        OccupancyView view;
        view.setCompile(compileOf(40, 4096));
        view.setLaunch(QStringLiteral("stencil"), 128, 0);
        view.setDevice(9, 0);
        QCOMPARE(view.architecture(), QString("device"));
        RunResult run;
        run.device = QStringLiteral("NVIDIA H200 (0)");
        StepResult s;
        s.kernel = QStringLiteral("stencil");
        s.block = {128, 1, 1};
        s.limits.numRegs = 40;
        s.limits.staticSharedBytes = 4096;
        s.limits.maxThreadsPerSm = 2048;
        s.limits.sharedPerSm = 233472;
        s.limits.sharedPerBlockOptin = 232448;
        // 128 threads, 40 registers: 12 blocks by registers; 5120 B of shared each: 45.
        s.occupancy.blocksPerSm = 12;
        run.steps << s;
        view.setRun(run);
        QVERIFY2(view.smLimits().source.contains("NVIDIA H200 (0)"), qPrintable(view.smLimits().source));
        QCOMPARE(view.currentResult().blocksPerSm, 12);
        QVERIFY2(view.driverText().contains("The driver agrees: cuOccupancyMaxActiveBlocksPerMultiprocessor = 12"),
                 qPrintable(view.driverText()));
        // What if: the driver's answer was for another configuration, and says so.
        view.blockSpin()->setValue(256);
        QVERIFY2(view.driverText().contains("for the last run (128 threads"), qPrintable(view.driverText()));
    }

    /** In the window: the dock, its View menu entry, and the numbers of a real compile of a preset. */
    void inTheWindow()
    {
        EngineClient engine;
        MainWindow w(&engine);
        // Listening before the open: the compile may land while the window is shown.
        QSignalSpy compiled(&w, &MainWindow::compileFinished);
        KP_VERIFY_RESULT(w.openProject(":/presets/matmul_tiled/matmul_tiled.kpg"));
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(!compiled.isEmpty() || compiled.wait(60000));
        auto *dock = w.findChild<QDockWidget *>("occupancyDock");
        QVERIFY(dock);
        bool inMenu = false;
        for (QAction *a : w.findChildren<QAction *>()) {
            inMenu = inMenu || a == dock->toggleViewAction();
        }
        QVERIFY(inMenu);
        dock->raise();
        auto *view = w.docks().panel<OccupancyView>(PanelId::Occupancy);
        QVERIFY(view);
        QTRY_COMPARE(view->currentUse().blockThreads, 256); // the preset's 16 x 16 block
        int regs = 0;
        for (const KernelInfo &k : w.lastCompile().kernels) {
            if (k.name == "matmul_tiled<16>") {
                regs = k.resources.registers;
                QCOMPARE(view->currentUse().staticShared, k.resources.sharedBytes);
            }
        }
        QVERIFY(regs > 0);
        QCOMPARE(view->currentUse().regsPerThread, regs);
        QCOMPARE(view->smLimits().arch(), w.lastCompile().arch);
        KernelUse use;
        use.blockThreads = 256;
        use.regsPerThread = regs;
        use.staticShared = view->currentUse().staticShared;
        QCOMPARE(view->currentResult().blocksPerSm, computeOccupancy(view->smLimits(), use).blocksPerSm);
        QTest::qWait(50);
        for (OccupancyChart *chart : {view->blockChart()}) {
            for (const QString &t : chart->visibleTexts()) {
                QVERIFY2(
                    !t.endsWith("..."),
                    qPrintable(QString("'%1' is cut short at %2x%3").arg(t).arg(chart->width()).arg(chart->height())));
            }
        }
        if (const QString dir = qEnvironmentVariable("KPG_SCREENSHOT_DIR"); !dir.isEmpty()) {
            QVERIFY(w.grab().save(dir + "/occupancy.png"));
        }
    }

    // The user breaks the source: Occupancy keeps the last good compile's
    // numbers and says they are stale (it showed a default kernel's invented
    // 32 registers, 0 B and "100 %"); fixed, the mark goes.
    void staleAfterAFailedCompile()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTRY_VERIFY_WITH_TIMEOUT(w.lastCompile().ok, 60000);
        auto *view = w.docks().panel<OccupancyView>(PanelId::Occupancy);
        QVERIFY(view);
        QCOMPARE(w.lastCompile().kernels.size(), 1);
        const int regs = w.lastCompile().kernels[0].resources.registers;
        QVERIFY(regs > 0);
        QTRY_COMPARE(view->currentUse().regsPerThread, regs); // the compile's, not the default's
        QVERIFY(!view->summaryText().startsWith("Stale"));
        const QString good = w.editor()->text();
        w.editor()->setText(good + "\nthis does not compile\n");
        w.compileNow();
        QTRY_VERIFY_WITH_TIMEOUT(!w.lastCompile().ok && w.lastCompile().errorCount() > 0, 60000);
        QTRY_VERIFY2(view->summaryText().startsWith("Stale, from the last compile that succeeded: "),
                     qPrintable(view->summaryText()));
        QCOMPARE(view->currentUse().regsPerThread, regs);
        w.editor()->setText(good);
        w.compileNow();
        QTRY_VERIFY_WITH_TIMEOUT(w.lastCompile().ok, 60000);
        QTRY_VERIFY2(!view->summaryText().startsWith("Stale"), qPrintable(view->summaryText()));
    }
};

QTEST_MAIN(TestOccupancyView)
#include "tst_occupancyview.moc"
