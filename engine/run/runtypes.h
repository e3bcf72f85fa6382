#pragma once

#include "core/result.h"
#include "run/guardzones.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>
#include <QVariantMap>

#include <array>
#include <optional>

namespace Kp {

using Dim3 = std::array<qint64, 3>;

/** "256" or "(256, 4, 1)" → "256x4x1" style text for messages and tables. */
QString dim3Text(const Dim3 &d);

/** Device and kernel limits a launch must respect (from the driver, or made up in tests). */
struct LaunchLimits
{
    Dim3 maxBlock{1024, 1024, 64};
    Dim3 maxGrid{2147483647, 65535, 65535};
    int maxThreadsPerBlock = 1024;       ///< device limit
    int kernelMaxThreadsPerBlock = 1024; ///< CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK (registers)
    int numRegs = 0;                     ///< per thread
    int staticSharedBytes = 0;
    int sharedPerBlock = 48 * 1024;      ///< without opt-in
    int sharedPerBlockOptin = 48 * 1024; ///< CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    int sharedPerSm = 228 * 1024;        ///< CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
    int reservedSharedPerBlock = 1024;   ///< CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK
    int regsPerSm = 65536;
    int maxThreadsPerSm = 2048;
    int maxBlocksPerSm = 32;
    int warpSize = 32;

    QVariantMap toVariant() const;
    static LaunchLimits fromVariant(const QVariantMap &m);
    bool operator==(const LaunchLimits &) const = default;
};

/**
 * Checks a launch against the limits before the driver sees it. The message
 * names the field, the value and the limit, e.g. "block (2048, 1, 1) has
 * 2048 threads; this device allows at most 1024 per block".
 */
/**
 * A cooperative launch needs every block resident at once: the grid may have
 * at most blocksPerSm (the occupancy of the kernel at this block size and
 * shared memory) times smCount blocks. The error names both numbers: "step
 * 1 ('reduce'): grid of 4096 blocks; at most 1056 can be resident for a
 * cooperative launch (8 per SM x 132 SMs) ...".
 */
Status cooperativeGridError(const QString &label, const Dim3 &grid, int blocksPerSm, int smCount);

Status validateLaunch(const LaunchLimits &limits, const Dim3 &grid, const Dim3 &block, qint64 dynamicShared,
                      const QString &field);

/** Theoretical occupancy and what bounds it. */
struct Occupancy
{
    int blocksPerSm = 0; ///< the driver's answer (cuOccupancyMaxActiveBlocksPerMultiprocessor)
    int activeWarps = 0;
    int maxWarps = 0;
    double ratio = 0;    ///< activeWarps / maxWarps
    QString limiter;     ///< "registers", "shared memory", "block size", "blocks per SM" or "warps"
    int byRegisters = 0; ///< our estimate of blocks per SM under each limit
    int bySharedMemory = 0;
    int byWarps = 0;
    int byBlocks = 0;

    QVariantMap toVariant() const;
    static Occupancy fromVariant(const QVariantMap &m);
};

/**
 * Estimates blocks per SM under each limit and names the tightest (the
 * driver's blocksPerSm is filled in by the worker). Register allocation is
 * per warp in units of 256 registers, as on every GPU since Maxwell.
 */
Occupancy estimateOccupancy(const LaunchLimits &limits, int blockThreads, qint64 dynamicShared);

/** Statistics of timing samples (milliseconds). */
struct TimingStats
{
    int count = 0;
    double medianMs = 0;
    double minMs = 0;
    double maxMs = 0;
    double meanMs = 0;
    double stdevMs = 0; ///< sample standard deviation
    double noise = 0;   ///< stdev / mean: nvbench's relative noise

    QVariantMap toVariant() const;
    static TimingStats fromVariant(const QVariantMap &m);
};

TimingStats computeStats(QList<double> samplesMs);

/** One launch step's outcome in the correctness run. */
struct StepResult
{
    /** "kernel", "copy", "memset", "record" or "wait" (docs/streams.md). */
    QString kind = QStringLiteral("kernel");
    QString label;       ///< what the step does in words; empty for a kernel (its name says it)
    QString stream;      ///< the stream it ran on; empty: the default stream
    qint64 bytes = 0;    ///< copy and memset: bytes moved
    QString kernel;      ///< as the project names it
    QString loweredName; ///< the symbol launched
    Dim3 grid{1, 1, 1};
    Dim3 block{1, 1, 1};
    qint64 sharedBytes = 0;
    double firstRunMs = 0; ///< event time of this step in the (untimed) correctness run
    QString printfOutput;  ///< device printf of this step (first run only)
    bool printfTruncated = false;
    Occupancy occupancy;
    LaunchLimits limits; ///< includes the kernel's registers and static shared memory

    QVariantMap toVariant() const;
    static StepResult fromVariant(const QVariantMap &m);
};

/**
 * One step on the timeline (docs/streams.md): the times of the events
 * recorded before and after it on its own stream, in milliseconds from the
 * start of the timeline pass.
 */
struct TimelineSpan
{
    int step = 0;      ///< index into RunResult::steps
    QString kind;      ///< as StepResult::kind
    QString label;     ///< kernel name or what the step does
    QString stream;    ///< stream name ("default" for the default stream)
    QString direction; ///< copies: "HtoD" or "DtoH" (the copy engine's lane); empty otherwise
    double startMs = 0;
    double endMs = 0;
    qint64 bytes = 0;
    Dim3 grid{1, 1, 1};
    Dim3 block{1, 1, 1};

    double durationMs() const { return endMs - startMs; }
    QVariantMap toVariant() const;
    static TimelineSpan fromVariant(const QVariantMap &m);
};

/** A run's whole story; a fault is an ordinary result with error set. */
struct RunResult
{
    QString device; ///< "NVIDIA H200 (0)"
    int deviceOrdinal = 0;
    QList<StepResult> steps;
    int repeat = 1;
    bool timed = false;
    QString timingMode; ///< "cold" or "hot"
    int batch = 1;      ///< launches per sample (hot)
    QList<double> samplesMs;
    TimingStats stats;
    bool converged = false; ///< stopped by the noise or the entropy criterion
    QString timingNote;     ///< why sampling stopped, in words
    QString stopCriterion;  ///< stopCriterionName() of run/timingstop.h: noise, entropy, max-samples, ...
    QString l2Flush;        ///< cold: "read" (a 2x-L2 buffer read before each sample, clean lines); hot: "none"
    /**
     * Measured once per worker and device: the median event time of an event
     * pair around an empty one-thread kernel after an L2 flush, the floor
     * every cold sample includes, and of an event pair with nothing between.
     * 0 when not measured (under a profiler).
     */
    double eventOverheadMs = 0;
    double eventPairMs = 0;
    /** max(0, median - overheadTakenOffMs() / batch): an estimate of the kernel's own time, not a measurement. */
    double medianLessOverheadMs = 0;
    /**
     * What medianLessOverheadMs takes off (per batch): the event pair's own
     * time, not the empty kernel's, since a profiler's kernel duration
     * includes the kernel's launch on the GPU as the empty kernel's does;
     * eventOverheadMs where the pair was not measured.
     */
    double overheadTakenOffMs() const { return eventPairMs > 0 ? eventPairMs : eventOverheadMs; }
    double uploadMs = 0;
    double downloadMs = 0;
    qint64 uploadBytes = 0;
    /** Host time per launch while timing (argument setup + cuLaunchKernel), microseconds. */
    double hostLaunchUs = 0;
    double bytes = 0; ///< from the project's throughput expressions; 0 = not given
    double flops = 0;
    double bytesPerSecond = 0; ///< from the median
    double flopsPerSecond = 0;
    /** From one extra pass with events around every step (empty when not asked for, or not timed). */
    QList<TimelineSpan> timeline;
    double timelineTotalMs = 0; ///< the pass from its first event to its last
    /** Graph mode: replays of the captured steps against the same steps launched one by one, host wall time with a
     * sync. */
    int graphReplays = 0;
    double graphReplayUs = 0;   ///< median per replay
    double streamLaunchUs = 0;  ///< median per pass of launches
    bool graphCompared = false; ///< the last replay's buffers were compared with the run's
    QStringList graphDiffers;   ///< buffers whose bytes differ after the last replay
    QStringList warnings;
    std::optional<Error> error;
    int failedStep = -1;          ///< index of the step that faulted, -1 if none or not a step
    bool buffersRestored = false; ///< after a fault: host copies kept as before the run
    /** Guard zones (run/guardzones.h): on for this run, what they caught, and what checking them cost. */
    bool guards = false;
    QList<GuardViolation> guardViolations;
    double guardCheckMs = 0; ///< host time spent filling and checking guards, correctness run and after timing
    QList<DeviceAllocation> deviceBuffers; ///< in request order; addresses for mapping sanitizer findings
    /** The memory-access map (RunRequest::accessRecords): the records written, whole, in the order warps wrote them. */
    QByteArray accessTrace;
    qint64 accessRequested = 0;   ///< records the launches asked for (more than were written when the room ran out)
    QList<qint64> accessStepEnds; ///< records asked for by the end of each step of the correctness run

    QVariantMap toVariant() const;
    static RunResult fromVariant(const QVariantMap &m);
};

} // namespace Kp
