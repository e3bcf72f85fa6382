#pragma once

#include "run/runtypes.h"

#include <QList>
#include <QString>

#include <optional>

namespace Kp {

/**
 * What one streaming multiprocessor offers and how it hands it out: the
 * numbers the occupancy of a launch depends on. Either recorded per
 * architecture (recordedSmLimits(), for machines without a GPU) or the
 * driver's attributes of a real device completed by the recorded allocation
 * rules (smLimitsFromDevice()). A plain value; any thread.
 */
struct SmLimits
{
    int ccMajor = 9;
    int ccMinor = 0;
    int warpSize = 32;
    int maxThreadsPerBlock = 1024;
    int maxThreadsPerSm = 2048;
    int maxBlocksPerSm = 32;
    int regsPerSm = 65536;
    /** Registers one block may hold; the hardware checks it with the warps rounded up to warpAllocationGranularity. */
    int regsPerBlock = 65536;
    int maxRegsPerThread = 255;
    /** Registers are given to a warp in units of this many (regs/thread x 32, rounded up). */
    int regAllocationUnit = 256;
    /**
     * The register file is split between this many sub-partitions (warp
     * schedulers); a warp's registers come from one of them, so warps per SM
     * under the register limit are a multiple of this.
     */
    int warpAllocationGranularity = 4;
    qint64 sharedPerSm = 233472;          ///< the largest shared memory configuration of the SM
    qint64 sharedPerBlock = 49152;        ///< without the opt-in attribute
    qint64 sharedPerBlockOptin = 232448;  ///< with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (the worker sets it)
    qint64 reservedSharedPerBlock = 1024; ///< taken by the driver for every block (sm_80 and newer)
    int sharedAllocationUnit = 128;       ///< a block's shared memory is rounded up to this
    QString examples;                     ///< GPUs of this architecture ("H100, H200")
    QString source;                       ///< where the numbers come from, in words

    /** "sm_90" */
    QString arch() const { return QStringLiteral("sm_%1%2").arg(ccMajor).arg(ccMinor); }
    int maxWarpsPerSm() const { return warpSize > 0 ? maxThreadsPerSm / warpSize : 0; }
};

/**
 * The recorded table: sm_70, sm_75, sm_80, sm_86, sm_89 and sm_90, oldest
 * first. Its sources are stated in occupancy.cpp and docs/occupancy.md.
 */
const QList<SmLimits> &recordedSmLimits();

/** The recorded limits of exactly this compute capability; nullopt when it is not in the table. */
std::optional<SmLimits> recordedSmLimitsFor(int ccMajor, int ccMinor);

/**
 * The recorded limits for "sm_86", "compute_90", "sm_90a" or "8.6"; nullopt
 * for an architecture the table lacks or text that names none.
 */
std::optional<SmLimits> recordedSmLimitsFor(const QString &arch);

/**
 * A real device's limits: the driver's attributes from a run (LaunchLimits:
 * threads, blocks, registers and shared memory per SM and per block,
 * reserved shared memory) over the allocation rules recorded for its
 * architecture (or the newest recorded one of its major version, or sm_90).
 * deviceName goes into source.
 */
SmLimits smLimitsFromDevice(const LaunchLimits &device, int ccMajor, int ccMinor, const QString &deviceName);

/** What a launch of a kernel asks of an SM. */
struct KernelUse
{
    int blockThreads = 256;
    int regsPerThread = 32;
    qint64 staticShared = 0;  ///< the kernel's __shared__ arrays
    qint64 dynamicShared = 0; ///< the launch's dynamic shared memory
    /** The kernel's own block-size limit (__launch_bounds__, registers); 0 = the device's. */
    int kernelMaxThreadsPerBlock = 0;

    qint64 sharedPerBlock() const { return staticShared + dynamicShared; }
};

/** What bounds the number of resident blocks. */
enum class OccupancyLimit {
    Warps,        ///< warp slots of the SM (the block size)
    Blocks,       ///< the SM's maximum of resident blocks (blocks too small)
    Registers,    ///< the register file
    SharedMemory, ///< shared memory
};

/** "warps", "blocks per SM", "registers", "shared memory". */
QString occupancyLimitName(OccupancyLimit limit);

/** Theoretical occupancy of one launch configuration, and how each resource bounds it. */
struct OccupancyResult
{
    /** Resident blocks per SM: the smallest of the four limits below; 0 when the block cannot run at all. */
    int blocksPerSm = 0;
    /** Blocks per SM under each limit alone. kNoLimit when the resource is not used (no registers, no shared memory).
     */
    int byWarps = 0;
    int byBlocks = 0;
    int byRegisters = 0;
    int bySharedMemory = 0;
    int warpsPerBlock = 0;
    int activeWarps = 0;
    int maxWarps = 0;
    double occupancy = 0; ///< activeWarps / maxWarps
    /** The tightest limit; of several equally tight ones the first of warps, blocks, registers, shared memory. */
    OccupancyLimit limiter = OccupancyLimit::Warps;
    /** Every limit that equals blocksPerSm. */
    QList<OccupancyLimit> limiters;
    int regsPerWarpAllocated = 0;
    int regsPerBlockAllocated = 0;
    qint64 sharedPerBlockAllocated = 0; ///< with the reserved part and rounded up to the allocation unit
    /** Why the block cannot run at all (blocksPerSm 0), in words; empty when it can. */
    QString problem;

    static constexpr int kNoLimit = 1 << 30;

    /** Blocks under one limit. */
    int blocksBy(OccupancyLimit limit) const;
};

/**
 * The occupancy calculator: resident blocks per SM for a launch, by the
 * published rules of the CUDA Occupancy Calculator (docs/occupancy.md states
 * them; they agree with the toolkit's cuda_occupancy.h and the driver's
 * cuOccupancyMaxActiveBlocksPerMultiprocessor with the default carveout):
 *
 * - warps per block W = ceil(threads / warpSize);
 * - warps: floor(maxThreadsPerSm / warpSize / W);
 * - blocks: maxBlocksPerSm;
 * - registers: R = ceil(regsPerThread x warpSize / 256) x 256 per warp; warps
 *   per SM = granularity x floor(regsPerSm / granularity / R); blocks =
 *   floor(that / W); none when R x roundUp(W, granularity) exceeds
 *   regsPerBlock or regsPerThread exceeds the maximum;
 * - shared memory: S = roundUp(static + dynamic + reserved, unit); blocks =
 *   floor(sharedPerSm / S); none when S exceeds the opt-in limit plus the
 *   reserved part.
 *
 * Pure; any thread.
 */
OccupancyResult computeOccupancy(const SmLimits &sm, const KernelUse &use);

/** One point of a curve: the value on the x axis and the occupancy there. */
struct OccupancyPoint
{
    int x = 0;
    OccupancyResult result;
};

/** Every multiple of the warp size from one warp up to the block-size limit (the device's and the kernel's). */
QList<OccupancyPoint> occupancyByBlockSize(const SmLimits &sm, const KernelUse &use);
/** Registers per thread from 1 to the maximum (255), the rest of use as given. */
QList<OccupancyPoint> occupancyByRegisters(const SmLimits &sm, const KernelUse &use);
/**
 * Shared memory per block (static + dynamic, x in bytes) from 0 to the
 * opt-in limit in steps of step bytes (the allocation unit when 0), the rest
 * of use as given; the static part is kept and the dynamic part varied.
 */
QList<OccupancyPoint> occupancyBySharedMemory(const SmLimits &sm, const KernelUse &use, int step = 0);

} // namespace Kp
