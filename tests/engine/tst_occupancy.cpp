// The occupancy calculator (engine/occupancy) on the recorded limits of
// sm_70 to sm_90: hand-checked rows, the curves' ranges, a real device's
// attributes over the recorded rules, and every block size, register count
// and shared size of a grid against the CUDA toolkit's own calculator
// (cuda_occupancy.h, header-only, shipped with the toolkit the build needs).

#include "occupancy/occupancy.h"

#include <QtTest>

#include <cuda_occupancy.h>

using namespace Kp;

Q_DECLARE_METATYPE(Kp::OccupancyLimit)

namespace {

SmLimits sm(const char *arch)
{
    const std::optional<SmLimits> s = recordedSmLimitsFor(QString::fromLatin1(arch));
    Q_ASSERT(s);
    return *s;
}

/** What the toolkit's calculator says for the same inputs, as the worker launches (opt-in shared memory). */
int toolkitBlocks(const SmLimits &s, const KernelUse &u)
{
    cudaOccDeviceProp p;
    p.computeMajor = s.ccMajor;
    p.computeMinor = s.ccMinor;
    p.maxThreadsPerBlock = s.maxThreadsPerBlock;
    p.maxThreadsPerMultiprocessor = s.maxThreadsPerSm;
    p.regsPerBlock = s.regsPerBlock;
    p.regsPerMultiprocessor = s.regsPerSm;
    p.warpSize = s.warpSize;
    p.sharedMemPerBlock = size_t(s.sharedPerBlock);
    p.sharedMemPerMultiprocessor = size_t(s.sharedPerSm);
    p.numSms = 132;
    p.sharedMemPerBlockOptin = size_t(s.sharedPerBlockOptin);
    p.reservedSharedMemPerBlock = size_t(s.reservedSharedPerBlock);
    cudaOccFuncAttributes a;
    a.maxThreadsPerBlock = s.maxThreadsPerBlock;
    a.numRegs = u.regsPerThread;
    a.sharedSizeBytes = size_t(u.staticShared);
    a.partitionedGCConfig = PARTITIONED_GC_OFF;
    // The worker raises CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES for launches above 48 KiB.
    a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
    a.maxDynamicSharedSizeBytes = size_t(std::max<qint64>(0, s.sharedPerBlockOptin - u.staticShared));
    a.numBlockBarriers = 1;
    cudaOccDeviceState state;
    cudaOccResult result{};
    if (cudaOccMaxActiveBlocksPerMultiprocessor(&result, &p, &a, &state, u.blockThreads, size_t(u.dynamicShared)) !=
        CUDA_OCC_SUCCESS) {
        return -1;
    }
    return result.activeBlocksPerMultiprocessor;
}

} // namespace

class TestOccupancy : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void table()
    {
        const QList<SmLimits> &t = recordedSmLimits();
        QStringList archs;
        for (const SmLimits &s : t) {
            archs << s.arch();
            QVERIFY2(!s.source.isEmpty() && !s.examples.isEmpty(), qPrintable(s.arch()));
            QCOMPARE(s.regAllocationUnit, 256);
            QCOMPARE(s.warpAllocationGranularity, 4);
            QCOMPARE(s.reservedSharedPerBlock, s.ccMajor >= 8 ? 1024 : 0);
            QCOMPARE(s.sharedAllocationUnit, s.ccMajor >= 8 ? 128 : 256);
        }
        QCOMPARE(archs, QStringList({"sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"}));
        // What the devices report (cudaDeviceProp): H100, A100, an RTX 3090.
        QCOMPARE(sm("sm_90").sharedPerSm, 233472);
        QCOMPARE(sm("sm_90").sharedPerBlockOptin, 232448);
        QCOMPARE(sm("sm_80").sharedPerSm, 167936);
        QCOMPARE(sm("sm_80").sharedPerBlockOptin, 166912);
        QCOMPARE(sm("sm_86").sharedPerSm, 102400);
        QCOMPARE(sm("sm_86").maxThreadsPerSm, 1536);
        QCOMPARE(sm("sm_89").maxBlocksPerSm, 24);
        QCOMPARE(sm("sm_75").maxThreadsPerSm, 1024);

        QVERIFY(recordedSmLimitsFor(QStringLiteral("compute_90")));
        QVERIFY(recordedSmLimitsFor(QStringLiteral("sm_90a")));
        QCOMPARE(recordedSmLimitsFor(QStringLiteral("8.6"))->arch(), QString("sm_86"));
        QVERIFY(!recordedSmLimitsFor(QStringLiteral("sm_52")));
        QVERIFY(!recordedSmLimitsFor(QStringLiteral("ninety")));
        QVERIFY(!recordedSmLimitsFor(QString()));
    }

    /*
     * Expected values worked by hand with the Occupancy Calculator's rules
     * (docs/occupancy.md; computeOccupancy's comment), W = warps per block:
     *   warps:     floor(maxThreadsPerSm / 32 / W)
     *   registers: R = roundUp(regs x 32, 256); 4 x floor(regsPerSm / 4 / R) warps, / W blocks
     *   shared:    S = roundUp(shared + reserved, unit); floor(sharedPerSm / S)
     *   blocks:    maxBlocksPerSm
     * and the smallest of the four.
     */
    void handChecked_data()
    {
        QTest::addColumn<QString>("arch");
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("regs");
        QTest::addColumn<int>("shared");
        QTest::addColumn<int>("blocks");
        QTest::addColumn<int>("warps");
        QTest::addColumn<double>("occupancy");
        QTest::addColumn<OccupancyLimit>("limiter");

        // sm_90 (H100, H200): 64 warps, 32 blocks, 16384 registers per sub-partition, 228 KiB.
        // 8 warps; R = 1024: 16 warps per sub-partition, 64 per SM, 8 blocks; full.
        QTest::newRow("sm_90 256 threads 32 regs")
            << "sm_90" << 256 << 32 << 0 << 8 << 64 << 1.0 << OccupancyLimit::Warps;
        // R = 2048: 8 per sub-partition, 32 warps, 4 blocks.
        QTest::newRow("sm_90 256 threads 64 regs")
            << "sm_90" << 256 << 64 << 0 << 4 << 32 << 0.5 << OccupancyLimit::Registers;
        // W 4; R = 1280: floor(16384 / 1280) = 12, 48 warps, 12 blocks (warps allow 16).
        QTest::newRow("sm_90 128 threads 40 regs")
            << "sm_90" << 128 << 40 << 0 << 12 << 48 << 0.75 << OccupancyLimit::Registers;
        // One warp per block: 64 by warps, 128 by registers, 32 blocks per SM at most.
        QTest::newRow("sm_90 32 threads 16 regs")
            << "sm_90" << 32 << 16 << 0 << 32 << 32 << 0.5 << OccupancyLimit::Blocks;
        // S = 49152 + 1024 = 50176: floor(233472 / 50176) = 4.
        QTest::newRow("sm_90 256 threads 48 KiB")
            << "sm_90" << 256 << 32 << 49152 << 4 << 32 << 0.5 << OccupancyLimit::SharedMemory;
        // W 32, R 2048 x 32 = 65536 fits a block exactly; 32 warps: 1 block.
        QTest::newRow("sm_90 1024 threads 64 regs")
            << "sm_90" << 1024 << 64 << 0 << 1 << 32 << 0.5 << OccupancyLimit::Registers;
        // R = 2304; 2304 x 32 = 73728 registers > 65536 per block: cannot run.
        QTest::newRow("sm_90 1024 threads 72 regs")
            << "sm_90" << 1024 << 72 << 0 << 0 << 0 << 0.0 << OccupancyLimit::Registers;
        // R = roundUp(8160, 256) = 8192: 2 warps per sub-partition, 8 warps, 1 block.
        QTest::newRow("sm_90 256 threads 255 regs")
            << "sm_90" << 256 << 255 << 0 << 1 << 8 << 0.125 << OccupancyLimit::Registers;
        // W 3: floor(64 / 3) = 21 by warps and by registers (64 warps / 3); 63 of 64 warps.
        QTest::newRow("sm_90 96 threads") << "sm_90" << 96 << 32 << 0 << 21 << 63 << 63.0 / 64 << OccupancyLimit::Warps;
        // The opt-in maximum plus the reserved KiB is 233472: one block.
        QTest::newRow("sm_90 227 KiB") << "sm_90" << 256 << 32 << 232448 << 1 << 8 << 0.125
                                       << OccupancyLimit::SharedMemory;
        QTest::newRow("sm_90 227 KiB + 1")
            << "sm_90" << 256 << 32 << 232449 << 0 << 0 << 0.0 << OccupancyLimit::SharedMemory;
        QTest::newRow("sm_90 1056 threads") << "sm_90" << 1056 << 32 << 0 << 0 << 0 << 0.0 << OccupancyLimit::Warps;

        // sm_80 (A100): as sm_90 but 164 KiB per SM.
        QTest::newRow("sm_80 256 threads 32 regs")
            << "sm_80" << 256 << 32 << 0 << 8 << 64 << 1.0 << OccupancyLimit::Warps;
        // floor(167936 / 50176) = 3: 24 warps.
        QTest::newRow("sm_80 256 threads 48 KiB")
            << "sm_80" << 256 << 32 << 49152 << 3 << 24 << 0.375 << OccupancyLimit::SharedMemory;
        // S = roundUp(10000 + 1024, 128) = 11136: floor(167936 / 11136) = 15 (warps allow 16).
        QTest::newRow("sm_80 128 threads 10000 B")
            << "sm_80" << 128 << 32 << 10000 << 15 << 60 << 60.0 / 64 << OccupancyLimit::SharedMemory;

        // sm_86 (RTX 30xx): 48 warps, 16 blocks, 100 KiB.
        QTest::newRow("sm_86 256 threads 32 regs")
            << "sm_86" << 256 << 32 << 0 << 6 << 48 << 1.0 << OccupancyLimit::Warps;
        // W 2: 24 by warps, 16 blocks at most: 32 of 48 warps.
        QTest::newRow("sm_86 64 threads")
            << "sm_86" << 64 << 32 << 0 << 16 << 32 << 32.0 / 48 << OccupancyLimit::Blocks;
        // S = 32768 + 1024 = 33792: floor(102400 / 33792) = 3: 24 of 48 warps.
        QTest::newRow("sm_86 256 threads 32 KiB")
            << "sm_86" << 256 << 32 << 32768 << 3 << 24 << 0.5 << OccupancyLimit::SharedMemory;

        // sm_89 (RTX 40xx, L4): 48 warps, 24 blocks.
        // W 2: 24 by warps and 24 blocks: full.
        QTest::newRow("sm_89 64 threads") << "sm_89" << 64 << 32 << 0 << 24 << 48 << 1.0 << OccupancyLimit::Warps;
        // R = 4096: 4 warps per sub-partition, 16 warps, 4 blocks of 4 warps.
        QTest::newRow("sm_89 128 threads 128 regs")
            << "sm_89" << 128 << 128 << 0 << 4 << 16 << 16.0 / 48 << OccupancyLimit::Registers;

        // sm_75 (Turing): 32 warps, 16 blocks, 64 KiB, no reserved part, 256-byte units.
        QTest::newRow("sm_75 256 threads 32 regs")
            << "sm_75" << 256 << 32 << 0 << 4 << 32 << 1.0 << OccupancyLimit::Warps;
        // S = roundUp(20000, 256) = 20224: floor(65536 / 20224) = 3.
        QTest::newRow("sm_75 256 threads 20000 B")
            << "sm_75" << 256 << 32 << 20000 << 3 << 24 << 0.75 << OccupancyLimit::SharedMemory;

        // sm_70 (V100): 64 warps, 32 blocks, 96 KiB.
        QTest::newRow("sm_70 256 threads 32 regs")
            << "sm_70" << 256 << 32 << 0 << 8 << 64 << 1.0 << OccupancyLimit::Warps;
        // W 16; R = 1536: floor(16384 / 1536) = 10, 40 warps, 2 blocks.
        QTest::newRow("sm_70 512 threads 48 regs")
            << "sm_70" << 512 << 48 << 0 << 2 << 32 << 0.5 << OccupancyLimit::Registers;
    }
    void handChecked()
    {
        QFETCH(QString, arch);
        QFETCH(int, threads);
        QFETCH(int, regs);
        QFETCH(int, shared);
        QFETCH(int, blocks);
        QFETCH(int, warps);
        QFETCH(double, occupancy);
        QFETCH(OccupancyLimit, limiter);
        const SmLimits s = *recordedSmLimitsFor(arch);
        KernelUse u;
        u.blockThreads = threads;
        u.regsPerThread = regs;
        u.dynamicShared = shared;
        const OccupancyResult r = computeOccupancy(s, u);
        QCOMPARE(r.blocksPerSm, blocks);
        QCOMPARE(r.activeWarps, warps);
        QVERIFY2(std::abs(r.occupancy - occupancy) < 1e-12, qPrintable(QString::number(r.occupancy)));
        QVERIFY2(r.limiter == limiter, qPrintable(occupancyLimitName(r.limiter)));
        QVERIFY(r.limiters.contains(limiter));
        // Whatever cannot run says why, in words that name the resource.
        QCOMPARE(r.problem.isEmpty(), blocks > 0);
        if (blocks == 0) {
            QVERIFY2(r.problem.contains(limiter == OccupancyLimit::Warps          ? "threads per block"
                                        : limiter == OccupancyLimit::SharedMemory ? "shared memory"
                                                                                  : "registers"),
                     qPrintable(r.problem));
        }
        QCOMPARE(toolkitBlocks(s, u), blocks);
    }

    void staticAndDynamicShared()
    {
        // The kernel's static arrays count like dynamic shared memory.
        KernelUse a;
        a.staticShared = 16384;
        a.dynamicShared = 16384;
        KernelUse b;
        b.dynamicShared = 32768;
        QCOMPARE(computeOccupancy(sm("sm_86"), a).blocksPerSm, computeOccupancy(sm("sm_86"), b).blocksPerSm);
        QCOMPARE(computeOccupancy(sm("sm_86"), a).sharedPerBlockAllocated, 33792);
    }

    void kernelBlockLimit()
    {
        // __launch_bounds__(256) or many registers lower the kernel's own limit.
        KernelUse u;
        u.blockThreads = 512;
        u.kernelMaxThreadsPerBlock = 256;
        const OccupancyResult r = computeOccupancy(sm("sm_90"), u);
        QCOMPARE(r.blocksPerSm, 0);
        QVERIFY2(r.problem.contains("512 threads per block exceed the limit of 256"), qPrintable(r.problem));
        QCOMPARE(occupancyByBlockSize(sm("sm_90"), u).size(), 8);
    }

    void curves()
    {
        KernelUse u;
        u.blockThreads = 256;
        u.regsPerThread = 32;
        u.staticShared = 4096;
        const SmLimits h = sm("sm_90");
        const QList<OccupancyPoint> byBlock = occupancyByBlockSize(h, u);
        QCOMPARE(byBlock.size(), 32);
        QCOMPARE(byBlock.first().x, 32);
        QCOMPARE(byBlock.last().x, 1024);
        const QList<OccupancyPoint> byRegs = occupancyByRegisters(h, u);
        QCOMPARE(byRegs.size(), 255);
        QCOMPARE(byRegs.first().x, 1);
        QCOMPARE(byRegs.last().x, 255);
        // Occupancy never grows with registers.
        for (qsizetype i = 1; i < byRegs.size(); ++i) {
            QVERIFY(byRegs[i].result.occupancy <= byRegs[i - 1].result.occupancy);
        }
        const QList<OccupancyPoint> byShared = occupancyBySharedMemory(h, u);
        QCOMPARE(byShared.size(), 232448 / 128 + 1);
        QCOMPARE(byShared.last().x, 232448);
        QCOMPARE(byShared.last().result.blocksPerSm, 1);
        // Below the kernel's 4 KiB of static arrays the point is the static part alone.
        QCOMPARE(byShared[8].x, 1024);
        QCOMPARE(byShared[8].result.sharedPerBlockAllocated, 2048);
        QCOMPARE(occupancyBySharedMemory(h, u, 1024).size(), 232448 / 1024 + 1);
        // The curve through the launch's own point agrees with the point.
        for (const OccupancyPoint &p : byBlock) {
            if (p.x == 256) {
                QCOMPARE(p.result.blocksPerSm, computeOccupancy(h, u).blocksPerSm);
            }
        }
    }

    void fromDevice()
    {
        // An H200 as a run reports it (LaunchLimits from the driver's attributes).
        LaunchLimits l;
        l.maxThreadsPerBlock = 1024;
        l.maxThreadsPerSm = 2048;
        l.maxBlocksPerSm = 32;
        l.regsPerSm = 65536;
        l.sharedPerBlock = 49152;
        l.sharedPerBlockOptin = 232448;
        l.sharedPerSm = 233472;
        l.reservedSharedPerBlock = 1024;
        l.warpSize = 32;
        const SmLimits s = smLimitsFromDevice(l, 9, 0, QStringLiteral("NVIDIA H200 (0)"));
        QCOMPARE(s.arch(), QString("sm_90"));
        QVERIFY2(s.source.contains("NVIDIA H200 (0)"), qPrintable(s.source));
        QCOMPARE(s.sharedAllocationUnit, 128);
        KernelUse u;
        u.regsPerThread = 64;
        QCOMPARE(computeOccupancy(s, u).blocksPerSm, 4);

        // A minor version the table lacks takes its major's newest rules; the attributes stay the device's.
        l.maxThreadsPerSm = 1536;
        l.maxBlocksPerSm = 16;
        l.sharedPerSm = 102400;
        const SmLimits ga = smLimitsFromDevice(l, 8, 7, QStringLiteral("Orin"));
        QCOMPARE(ga.arch(), QString("sm_87"));
        QVERIFY2(ga.source.contains("sm_89"), qPrintable(ga.source));
        QCOMPARE(ga.maxThreadsPerSm, 1536);
        QCOMPARE(ga.maxBlocksPerSm, 16);
        // A newer major version: sm_90's rules.
        QVERIFY(smLimitsFromDevice(l, 10, 0, {}).source.contains("sm_90"));
        QCOMPARE(smLimitsFromDevice(l, 10, 0, {}).sharedAllocationUnit, 128);
    }

    /** Every recorded architecture over a grid of launches, against the toolkit's cuda_occupancy.h. */
    void agreesWithToolkit()
    {
        const QList<int> regsList{0, 1, 16, 24, 31, 32, 33, 40, 48, 56, 63, 64, 65, 72, 80, 96, 128, 168, 200, 255};
        const QList<int> sharedList{0,     1,     1000,  4096,      12288,      16384,
                                    40000, 49152, 65536, 99 * 1024, 163 * 1024, 227 * 1024};
        int compared = 0;
        for (const SmLimits &s : recordedSmLimits()) {
            for (int threads = 1; threads <= 1024; threads += threads < 64 ? 7 : 32) {
                for (int regs : regsList) {
                    for (int shared : sharedList) {
                        for (int staticShared : {0, 2048}) {
                            KernelUse u;
                            u.blockThreads = threads;
                            u.regsPerThread = regs;
                            u.staticShared = staticShared;
                            u.dynamicShared = shared;
                            const int expected = toolkitBlocks(s, u);
                            const int got = computeOccupancy(s, u).blocksPerSm;
                            if (got != expected) {
                                QFAIL(qPrintable(QString("%1: %2 threads, %3 regs, %4 + %5 B shared: %6 blocks, "
                                                         "the toolkit says %7")
                                                     .arg(s.arch())
                                                     .arg(threads)
                                                     .arg(regs)
                                                     .arg(staticShared)
                                                     .arg(shared)
                                                     .arg(got)
                                                     .arg(expected)));
                            }
                            ++compared;
                        }
                    }
                }
            }
        }
        QVERIFY(compared > 50000);
    }
};

QTEST_GUILESS_MAIN(TestOccupancy)
#include "tst_occupancy.moc"
