#include "occupancy/occupancy.h"

#include <QRegularExpression>

#include <algorithm>

namespace Kp {

namespace {

/*
 * Per-architecture limits, as published:
 *
 * - threads, blocks and registers per SM, registers per block and per
 *   thread, shared memory per SM and per block (opt-in): the CUDA C++
 *   Programming Guide, "Compute Capabilities", table "Technical
 *   Specifications per Compute Capability" (CUDA 12.x/13.0), in bytes as the
 *   devices report them (cudaDeviceProp::sharedMemPerMultiprocessor and
 *   sharedMemPerBlockOptin: 233472 and 232448 on an H100);
 * - the allocation rules, which the guide does not tabulate: the CUDA
 *   Occupancy Calculator spreadsheet's "GPU Data" sheet and the toolkit's
 *   cuda_occupancy.h (register allocation unit 256 per warp, 4 warp
 *   schedulers that split the register file, shared memory allocated in
 *   units of 256 bytes before sm_80 and 128 from sm_80);
 * - reserved shared memory per block: 1 KiB from sm_80
 *   (CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK; the guide: "1 KB
 *   of shared memory is reserved for system use").
 */
SmLimits arch(int major, int minor, int threadsPerSm, int blocksPerSm, qint64 sharedPerSm, qint64 sharedOptin,
              const char *examples)
{
    SmLimits s;
    s.ccMajor = major;
    s.ccMinor = minor;
    s.warpSize = 32;
    s.maxThreadsPerBlock = 1024;
    s.maxThreadsPerSm = threadsPerSm;
    s.maxBlocksPerSm = blocksPerSm;
    s.regsPerSm = 65536;
    s.regsPerBlock = 65536;
    s.maxRegsPerThread = 255;
    s.regAllocationUnit = 256;
    s.warpAllocationGranularity = 4;
    s.sharedPerSm = sharedPerSm;
    s.sharedPerBlock = 48 * 1024;
    s.sharedPerBlockOptin = sharedOptin;
    s.reservedSharedPerBlock = major >= 8 ? 1024 : 0;
    s.sharedAllocationUnit = major >= 8 ? 128 : 256;
    s.examples = QString::fromLatin1(examples);
    s.source = QStringLiteral("recorded limits of %1 (CUDA C++ Programming Guide, compute capabilities; "
                              "CUDA Occupancy Calculator)")
                   .arg(s.arch());
    return s;
}

int ceilDiv(qint64 a, qint64 b)
{
    return int((a + b - 1) / b);
}

qint64 roundUp(qint64 a, qint64 unit)
{
    return unit > 0 ? (a + unit - 1) / unit * unit : a;
}

} // namespace

const QList<SmLimits> &recordedSmLimits()
{
    static const QList<SmLimits> table{
        arch(7, 0, 2048, 32, 96 * 1024, 96 * 1024, "V100"),
        arch(7, 5, 1024, 16, 64 * 1024, 64 * 1024, "T4, RTX 20xx"),
        arch(8, 0, 2048, 32, 164 * 1024, 163 * 1024, "A100, A30"),
        arch(8, 6, 1536, 16, 100 * 1024, 99 * 1024, "A10, A40, RTX 30xx"),
        arch(8, 9, 1536, 24, 100 * 1024, 99 * 1024, "L4, L40, RTX 40xx"),
        arch(9, 0, 2048, 32, 228 * 1024, 227 * 1024, "H100, H200, GH200"),
    };
    return table;
}

std::optional<SmLimits> recordedSmLimitsFor(int ccMajor, int ccMinor)
{
    for (const SmLimits &s : recordedSmLimits()) {
        if (s.ccMajor == ccMajor && s.ccMinor == ccMinor) {
            return s;
        }
    }
    return std::nullopt;
}

std::optional<SmLimits> recordedSmLimitsFor(const QString &archText)
{
    static const QRegularExpression smName(QStringLiteral(R"(^(?:sm|compute)_(\d+?)(\d)[af]?$)"));
    static const QRegularExpression ccName(QStringLiteral(R"(^(\d+)\.(\d)$)"));
    const QString text = archText.trimmed();
    QRegularExpressionMatch m = smName.match(text);
    if (!m.hasMatch()) {
        m = ccName.match(text);
    }
    if (!m.hasMatch()) {
        return std::nullopt;
    }
    return recordedSmLimitsFor(m.captured(1).toInt(), m.captured(2).toInt());
}

SmLimits smLimitsFromDevice(const LaunchLimits &d, int ccMajor, int ccMinor, const QString &deviceName)
{
    // The allocation rules of the architecture; an unknown minor version gets
    // those of its major version's newest recorded one, a newer major sm_90's.
    std::optional<SmLimits> base = recordedSmLimitsFor(ccMajor, ccMinor);
    if (!base) {
        // The newest of the same major version (the table is oldest first).
        for (const SmLimits &s : recordedSmLimits()) {
            if (s.ccMajor == ccMajor) {
                base = s;
            }
        }
    }
    if (!base) {
        // Another major version: the newest recorded one older than it, else the oldest.
        for (const SmLimits &s : recordedSmLimits()) {
            if (s.ccMajor < ccMajor) {
                base = s;
            }
        }
    }
    if (!base) {
        base = recordedSmLimits().front();
    }
    SmLimits s = *base;
    s.ccMajor = ccMajor;
    s.ccMinor = ccMinor;
    const auto take = [](auto &field, auto value) {
        if (value > 0) {
            field = value;
        }
    };
    take(s.warpSize, d.warpSize);
    take(s.maxThreadsPerBlock, d.maxThreadsPerBlock);
    take(s.maxThreadsPerSm, d.maxThreadsPerSm);
    take(s.maxBlocksPerSm, d.maxBlocksPerSm);
    take(s.regsPerSm, d.regsPerSm);
    take(s.sharedPerSm, qint64(d.sharedPerSm));
    take(s.sharedPerBlock, qint64(d.sharedPerBlock));
    take(s.sharedPerBlockOptin, qint64(d.sharedPerBlockOptin));
    // 0 is a real answer here (before sm_80), so it is taken as it is.
    s.reservedSharedPerBlock = d.reservedSharedPerBlock;
    s.examples = deviceName;
    s.source = QStringLiteral("%1 (the driver's device attributes; allocation rules of %2)")
                   .arg(deviceName.isEmpty() ? QStringLiteral("the device") : deviceName, base->arch());
    return s;
}

QString occupancyLimitName(OccupancyLimit limit)
{
    switch (limit) {
    case OccupancyLimit::Warps: return QStringLiteral("warps");
    case OccupancyLimit::Blocks: return QStringLiteral("blocks per SM");
    case OccupancyLimit::Registers: return QStringLiteral("registers");
    case OccupancyLimit::SharedMemory: return QStringLiteral("shared memory");
    }
    return {};
}

int OccupancyResult::blocksBy(OccupancyLimit limit) const
{
    switch (limit) {
    case OccupancyLimit::Warps: return byWarps;
    case OccupancyLimit::Blocks: return byBlocks;
    case OccupancyLimit::Registers: return byRegisters;
    case OccupancyLimit::SharedMemory: return bySharedMemory;
    }
    return 0;
}

OccupancyResult computeOccupancy(const SmLimits &sm, const KernelUse &use)
{
    OccupancyResult r;
    const int warpSize = std::max(1, sm.warpSize);
    const int threads = std::max(1, use.blockThreads);
    const int granularity = std::max(1, sm.warpAllocationGranularity);
    r.warpsPerBlock = ceilDiv(threads, warpSize);
    r.maxWarps = sm.maxThreadsPerSm / warpSize;
    QStringList problems;

    // Warp slots.
    const int blockLimit = use.kernelMaxThreadsPerBlock > 0
                               ? std::min(sm.maxThreadsPerBlock, use.kernelMaxThreadsPerBlock)
                               : sm.maxThreadsPerBlock;
    if (threads > blockLimit) {
        r.byWarps = 0;
        problems << QStringLiteral("%1 threads per block exceed the limit of %2").arg(threads).arg(blockLimit);
    } else {
        r.byWarps = r.maxWarps / r.warpsPerBlock;
    }

    r.byBlocks = sm.maxBlocksPerSm;

    // Registers: per warp in allocation units, from one sub-partition's share of the file.
    const int regs = std::max(0, use.regsPerThread);
    r.regsPerWarpAllocated = int(roundUp(qint64(regs) * warpSize, sm.regAllocationUnit));
    r.regsPerBlockAllocated = r.regsPerWarpAllocated * r.warpsPerBlock;
    // The hardware checks a block's registers as if its warps filled every sub-partition alike.
    const qint64 regsChecked = qint64(r.regsPerWarpAllocated) * roundUp(r.warpsPerBlock, granularity);
    if (regs > sm.maxRegsPerThread) {
        r.byRegisters = 0;
        problems << QStringLiteral("%1 registers per thread exceed the limit of %2").arg(regs).arg(sm.maxRegsPerThread);
    } else if (regsChecked > sm.regsPerBlock || r.regsPerBlockAllocated > sm.regsPerBlock) {
        r.byRegisters = 0;
        problems << QStringLiteral("%1 threads x %2 registers need %3 registers per block; a block may hold %4")
                        .arg(threads)
                        .arg(regs)
                        .arg(regsChecked)
                        .arg(sm.regsPerBlock);
    } else if (r.regsPerWarpAllocated == 0) {
        r.byRegisters = OccupancyResult::kNoLimit;
    } else {
        const int warpsPerSubPartition = sm.regsPerSm / granularity / r.regsPerWarpAllocated;
        r.byRegisters = warpsPerSubPartition * granularity / r.warpsPerBlock;
    }

    // Shared memory, with the driver's reserved part, in allocation units.
    const qint64 shared = std::max<qint64>(0, use.sharedPerBlock());
    r.sharedPerBlockAllocated = roundUp(shared + sm.reservedSharedPerBlock, sm.sharedAllocationUnit);
    const qint64 sharedLimit = sm.sharedPerBlockOptin + sm.reservedSharedPerBlock;
    if (r.sharedPerBlockAllocated > sharedLimit) {
        r.bySharedMemory = 0;
        problems << QStringLiteral("%1 bytes of shared memory per block exceed the limit of %2")
                        .arg(shared)
                        .arg(sm.sharedPerBlockOptin);
    } else if (r.sharedPerBlockAllocated == 0) {
        r.bySharedMemory = OccupancyResult::kNoLimit;
    } else {
        r.bySharedMemory = int(sm.sharedPerSm / r.sharedPerBlockAllocated);
    }

    r.blocksPerSm = std::min({r.byWarps, r.byBlocks, r.byRegisters, r.bySharedMemory});
    r.activeWarps = r.blocksPerSm * r.warpsPerBlock;
    r.occupancy = r.maxWarps > 0 ? double(r.activeWarps) / r.maxWarps : 0;
    for (OccupancyLimit l :
         {OccupancyLimit::Warps, OccupancyLimit::Blocks, OccupancyLimit::Registers, OccupancyLimit::SharedMemory}) {
        if (r.blocksBy(l) == r.blocksPerSm) {
            r.limiters << l;
        }
    }
    // Ties name the first in the order above: when the block size ties with
    // a resource, relaxing the resource alone gains nothing, while another
    // block size may. A block that cannot run names what forbids it.
    if (!r.limiters.isEmpty()) {
        r.limiter = r.limiters.first();
    }
    r.problem = problems.join(QStringLiteral("; "));
    return r;
}

QList<OccupancyPoint> occupancyByBlockSize(const SmLimits &sm, const KernelUse &use)
{
    QList<OccupancyPoint> points;
    const int limit = use.kernelMaxThreadsPerBlock > 0 ? std::min(sm.maxThreadsPerBlock, use.kernelMaxThreadsPerBlock)
                                                       : sm.maxThreadsPerBlock;
    const int warpSize = std::max(1, sm.warpSize);
    for (int threads = warpSize; threads <= limit; threads += warpSize) {
        KernelUse u = use;
        u.blockThreads = threads;
        points << OccupancyPoint{threads, computeOccupancy(sm, u)};
    }
    return points;
}

QList<OccupancyPoint> occupancyByRegisters(const SmLimits &sm, const KernelUse &use)
{
    QList<OccupancyPoint> points;
    for (int regs = 1; regs <= sm.maxRegsPerThread; ++regs) {
        KernelUse u = use;
        u.regsPerThread = regs;
        points << OccupancyPoint{regs, computeOccupancy(sm, u)};
    }
    return points;
}

QList<OccupancyPoint> occupancyBySharedMemory(const SmLimits &sm, const KernelUse &use, int step)
{
    QList<OccupancyPoint> points;
    const qint64 by = step > 0 ? step : std::max(1, sm.sharedAllocationUnit);
    const qint64 staticShared = std::max<qint64>(0, use.staticShared);
    for (qint64 total = 0; total <= sm.sharedPerBlockOptin; total += by) {
        KernelUse u = use;
        // Below the kernel's static part the point is the static part alone.
        u.staticShared = std::min(staticShared, total);
        u.dynamicShared = total - u.staticShared;
        points << OccupancyPoint{int(total), computeOccupancy(sm, u)};
    }
    return points;
}

} // namespace Kp
