// On a machine with an NVIDIA GPU: the occupancy calculator (engine/occupancy)
// agrees with the driver. Presets' kernels run at several block sizes; each
// run result carries the driver's cuOccupancyMaxActiveBlocksPerMultiprocessor
// answer and the device's attributes, and the calculator, given those
// attributes and the kernel's registers and shared memory, must say the same
// number of blocks per SM.

#include "check/checkedrun.h"
#include "client/engineclient.h"
#include "occupancy/occupancy.h"
#include "project/projectio.h"
#include "testutil.h"

#include <QtTest>

using namespace Kp;

class TestGpuOccupancy : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        const KpTest::Run r = KpTest::run("kpg", {"devices"});
        if (r.exitCode == 69) {
            QSKIP(qPrintable(QStringLiteral("no GPU: %1").arg(r.err.trimmed())));
        }
        QCOMPARE(r.exitCode, 0);
    }

    void calculatorEqualsDriver_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QList<int>>("blocks"); ///< block.x values to try; empty: the preset's own block
        const QList<int> sizes{32, 96, 128, 192, 256, 512, 640, 1024};
        QTest::newRow("vector_add") << "vector_add" << sizes;
        QTest::newRow("saxpy") << "saxpy" << sizes;
        QTest::newRow("grid_stride") << "grid_stride" << sizes;
        QTest::newRow("reduce_shuffle") << "reduce_shuffle" << QList<int>{64, 128, 256, 512, 1024};
        QTest::newRow("histogram_shared") << "histogram_shared" << QList<int>{64, 128, 256, 512, 1024};
        QTest::newRow("matmul_tiled") << "matmul_tiled" << QList<int>{};
        QTest::newRow("transpose_shared") << "transpose_shared" << QList<int>{};
        QTest::newRow("nbody") << "nbody" << QList<int>{};
    }
    void calculatorEqualsDriver()
    {
        QFETCH(QString, preset);
        QFETCH(QList<int>, blocks);
        Result<Project> loaded = loadProject(QStringLiteral(KPG_SOURCE_DIR "/presets/%1/%1.kpg").arg(preset));
        KP_VERIFY_RESULT(loaded);
        EngineClient engine;
        CheckedRunOptions options;
        options.timing = false;
        options.checks = false;
        QList<int> tries = blocks;
        if (tries.isEmpty()) {
            tries << 0;
        }
        int compared = 0;
        for (int bx : tries) {
            Project p = *loaded;
            if (bx > 0) {
                p.launches[0].block = QStringList{QString::number(bx)};
            }
            const CheckedRun run = runProjectWithChecks(p, &engine, options);
            if (!run.ran || run.run.error || !run.device) {
                // A block size this kernel cannot take (its shared memory is sized for another) is no disagreement.
                qInfo("%s block %d: not run (%s)", qPrintable(preset), bx,
                      qPrintable(run.error       ? run.error->message
                                 : run.run.error ? run.run.error->message
                                                 : QStringLiteral("no device")));
                continue;
            }
            for (const StepResult &s : run.run.steps) {
                const SmLimits sm =
                    smLimitsFromDevice(s.limits, run.device->ccMajor, run.device->ccMinor, run.run.device);
                KernelUse use;
                use.blockThreads = int(s.block[0] * s.block[1] * s.block[2]);
                use.regsPerThread = s.limits.numRegs;
                use.staticShared = s.limits.staticSharedBytes;
                use.dynamicShared = s.sharedBytes;
                use.kernelMaxThreadsPerBlock = s.limits.kernelMaxThreadsPerBlock;
                const OccupancyResult mine = computeOccupancy(sm, use);
                const QString what = QStringLiteral("%1 (%2) on %3: %4 threads, %5 registers, %6 + %7 B shared")
                                         .arg(preset, s.kernel, sm.arch())
                                         .arg(use.blockThreads)
                                         .arg(use.regsPerThread)
                                         .arg(use.staticShared)
                                         .arg(use.dynamicShared);
                qInfo("%s: driver %d, calculator %d blocks/SM (%s)", qPrintable(what), s.occupancy.blocksPerSm,
                      mine.blocksPerSm, qPrintable(occupancyLimitName(mine.limiter)));
                QVERIFY2(mine.blocksPerSm == s.occupancy.blocksPerSm,
                         qPrintable(QStringLiteral("%1: the driver says %2 blocks/SM, the calculator %3")
                                        .arg(what)
                                        .arg(s.occupancy.blocksPerSm)
                                        .arg(mine.blocksPerSm)));
                ++compared;
            }
        }
        QVERIFY2(compared > 0, "no launch of this preset ran");
    }
};

QTEST_GUILESS_MAIN(TestGpuOccupancy)
#include "tst_gpu_occupancy.moc"
