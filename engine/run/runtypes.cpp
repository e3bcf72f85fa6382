#include "runtypes.h"

#include <QVariantList>

#include <algorithm>
#include <cmath>

namespace Kp {

namespace {
QVariantList dimToList(const Dim3 &d)
{
    return {d[0], d[1], d[2]};
}
Dim3 listToDim(const QVariant &v)
{
    const QVariantList l = v.toList();
    Dim3 d{1, 1, 1};
    for (int i = 0; i < 3 && i < l.size(); ++i) {
        d[static_cast<size_t>(i)] = l[i].toLongLong();
    }
    return d;
}
Error launchError(const QString &message)
{
    return Error{QStringLiteral("launch"), Error::Code::BadInput, {}, message};
}
QString prefix(const QString &field)
{
    return field.isEmpty() ? QString() : field + QStringLiteral(": ");
}
} // namespace

QString dim3Text(const Dim3 &d)
{
    return QStringLiteral("(%1, %2, %3)").arg(d[0]).arg(d[1]).arg(d[2]);
}

#define KP_LIMIT_FIELDS(X)                                                                                             \
    X(maxThreadsPerBlock)                                                                                              \
    X(kernelMaxThreadsPerBlock)                                                                                        \
    X(numRegs)                                                                                                         \
    X(staticSharedBytes)                                                                                               \
    X(sharedPerBlock)                                                                                                  \
    X(sharedPerBlockOptin)                                                                                             \
    X(sharedPerSm)                                                                                                     \
    X(reservedSharedPerBlock)                                                                                          \
    X(regsPerSm)                                                                                                       \
    X(maxThreadsPerSm)                                                                                                 \
    X(maxBlocksPerSm)                                                                                                  \
    X(warpSize)

QVariantMap LaunchLimits::toVariant() const
{
    QVariantMap m;
    m.insert(QStringLiteral("maxBlock"), dimToList(maxBlock));
    m.insert(QStringLiteral("maxGrid"), dimToList(maxGrid));
#define KP_PUT(f) m.insert(QStringLiteral(#f), f);
    KP_LIMIT_FIELDS(KP_PUT)
#undef KP_PUT
    return m;
}

LaunchLimits LaunchLimits::fromVariant(const QVariantMap &m)
{
    LaunchLimits l;
    l.maxBlock = listToDim(m.value(QStringLiteral("maxBlock")));
    l.maxGrid = listToDim(m.value(QStringLiteral("maxGrid")));
#define KP_GET(f) l.f = m.value(QStringLiteral(#f), l.f).toInt();
    KP_LIMIT_FIELDS(KP_GET)
#undef KP_GET
    return l;
}

Status cooperativeGridError(const QString &label, const Dim3 &grid, int blocksPerSm, int smCount)
{
    const qint64 blocks = grid[0] * grid[1] * grid[2];
    const qint64 resident = qint64(qMax(0, blocksPerSm)) * qMax(0, smCount);
    if (blocks <= resident) {
        return Unit{};
    }
    Error e{QStringLiteral("run"), Error::Code::BadInput, {}, {}};
    e.message =
        QStringLiteral("%1: grid of %2 blocks; at most %3 can be resident for a cooperative launch (%4 per SM "
                       "x %5 SMs at this block size and shared memory)%6")
            .arg(label)
            .arg(blocks)
            .arg(resident)
            .arg(blocksPerSm)
            .arg(smCount)
            .arg(resident > 0
                     ? QStringLiteral("; launch at most %1 blocks and loop over the rest (grid-stride)").arg(resident)
                     : QStringLiteral("; not one block fits: use fewer threads or less shared memory"));
    return e;
}

Status validateLaunch(const LaunchLimits &limits, const Dim3 &grid, const Dim3 &block, qint64 dynamicShared,
                      const QString &field)
{
    static const char *axis[3] = {"x", "y", "z"};
    for (size_t i = 0; i < 3; ++i) {
        if (block[i] < 1) {
            return launchError(QStringLiteral("%1block.%2 is %3; it must be at least 1")
                                   .arg(prefix(field), QLatin1String(axis[i]))
                                   .arg(block[i]));
        }
        if (grid[i] < 1) {
            return launchError(QStringLiteral("%1grid.%2 is %3; it must be at least 1")
                                   .arg(prefix(field), QLatin1String(axis[i]))
                                   .arg(grid[i]));
        }
        if (block[i] > limits.maxBlock[i]) {
            return launchError(QStringLiteral("%1block.%2 is %3; this device allows at most %4")
                                   .arg(prefix(field), QLatin1String(axis[i]))
                                   .arg(block[i])
                                   .arg(limits.maxBlock[i]));
        }
        if (grid[i] > limits.maxGrid[i]) {
            return launchError(QStringLiteral("%1grid.%2 is %3; this device allows at most %4")
                                   .arg(prefix(field), QLatin1String(axis[i]))
                                   .arg(grid[i])
                                   .arg(limits.maxGrid[i]));
        }
    }
    const qint64 threads = block[0] * block[1] * block[2];
    if (threads > limits.maxThreadsPerBlock) {
        return launchError(QStringLiteral("%1block %2 has %3 threads; this device allows at most %4 per block")
                               .arg(prefix(field), dim3Text(block))
                               .arg(threads)
                               .arg(limits.maxThreadsPerBlock));
    }
    if (threads > limits.kernelMaxThreadsPerBlock) {
        return launchError(QStringLiteral("%1block %2 has %3 threads; this kernel uses %4 registers per thread, "
                                          "which allows at most %5 threads per block")
                               .arg(prefix(field), dim3Text(block))
                               .arg(threads)
                               .arg(limits.numRegs)
                               .arg(limits.kernelMaxThreadsPerBlock));
    }
    if (dynamicShared < 0) {
        return launchError(QStringLiteral("%1dynamic shared memory is %2 bytes; it cannot be negative")
                               .arg(prefix(field))
                               .arg(dynamicShared));
    }
    const qint64 totalShared = dynamicShared + limits.staticSharedBytes;
    if (totalShared > limits.sharedPerBlockOptin) {
        return launchError(QStringLiteral("%1shared memory per block is %2 bytes (%3 dynamic + %4 static); this "
                                          "device allows at most %5")
                               .arg(prefix(field))
                               .arg(totalShared)
                               .arg(dynamicShared)
                               .arg(limits.staticSharedBytes)
                               .arg(limits.sharedPerBlockOptin));
    }
    return Unit{};
}

QVariantMap Occupancy::toVariant() const
{
    return {{QStringLiteral("blocksPerSm"), blocksPerSm},
            {QStringLiteral("activeWarps"), activeWarps},
            {QStringLiteral("maxWarps"), maxWarps},
            {QStringLiteral("ratio"), ratio},
            {QStringLiteral("limiter"), limiter},
            {QStringLiteral("byRegisters"), byRegisters},
            {QStringLiteral("bySharedMemory"), bySharedMemory},
            {QStringLiteral("byWarps"), byWarps},
            {QStringLiteral("byBlocks"), byBlocks}};
}

Occupancy Occupancy::fromVariant(const QVariantMap &m)
{
    Occupancy o;
    o.blocksPerSm = m.value(QStringLiteral("blocksPerSm")).toInt();
    o.activeWarps = m.value(QStringLiteral("activeWarps")).toInt();
    o.maxWarps = m.value(QStringLiteral("maxWarps")).toInt();
    o.ratio = m.value(QStringLiteral("ratio")).toDouble();
    o.limiter = m.value(QStringLiteral("limiter")).toString();
    o.byRegisters = m.value(QStringLiteral("byRegisters")).toInt();
    o.bySharedMemory = m.value(QStringLiteral("bySharedMemory")).toInt();
    o.byWarps = m.value(QStringLiteral("byWarps")).toInt();
    o.byBlocks = m.value(QStringLiteral("byBlocks")).toInt();
    return o;
}

Occupancy estimateOccupancy(const LaunchLimits &l, int blockThreads, qint64 dynamicShared)
{
    Occupancy o;
    const int warpSize = qMax(1, l.warpSize);
    const int warpsPerBlock = (qMax(1, blockThreads) + warpSize - 1) / warpSize;
    o.maxWarps = l.maxThreadsPerSm / warpSize;
    o.byWarps = o.maxWarps / warpsPerBlock;
    o.byBlocks = l.maxBlocksPerSm;
    if (l.numRegs > 0) {
        // Registers are allocated per warp in units of 256.
        const int regsPerWarp = (l.numRegs * warpSize + 255) / 256 * 256;
        o.byRegisters = l.regsPerSm / (regsPerWarp * warpsPerBlock);
    } else {
        o.byRegisters = o.byBlocks;
    }
    const qint64 shared = dynamicShared + l.staticSharedBytes;
    if (shared > 0) {
        o.bySharedMemory = static_cast<int>(l.sharedPerSm / (shared + l.reservedSharedPerBlock));
    } else {
        o.bySharedMemory = o.byBlocks;
    }
    o.blocksPerSm = std::min({o.byWarps, o.byBlocks, o.byRegisters, o.bySharedMemory});
    // Name the tightest limit; ties go to the one a user can most easily change.
    if (o.blocksPerSm == o.byRegisters && o.byRegisters < o.byWarps && o.byRegisters < o.byBlocks) {
        o.limiter = QStringLiteral("registers");
    } else if (o.blocksPerSm == o.bySharedMemory && o.bySharedMemory < o.byWarps && o.bySharedMemory < o.byBlocks) {
        o.limiter = QStringLiteral("shared memory");
    } else if (o.blocksPerSm == o.byBlocks && o.byBlocks < o.byWarps) {
        o.limiter = QStringLiteral("blocks per SM (block size too small)");
    } else {
        o.limiter = QStringLiteral("warps per SM (block size)");
    }
    o.activeWarps = o.blocksPerSm * warpsPerBlock;
    o.ratio = o.maxWarps > 0 ? double(o.activeWarps) / o.maxWarps : 0;
    return o;
}

QVariantMap TimingStats::toVariant() const
{
    return {{QStringLiteral("count"), count},   {QStringLiteral("medianMs"), medianMs},
            {QStringLiteral("minMs"), minMs},   {QStringLiteral("maxMs"), maxMs},
            {QStringLiteral("meanMs"), meanMs}, {QStringLiteral("stdevMs"), stdevMs},
            {QStringLiteral("noise"), noise}};
}

TimingStats TimingStats::fromVariant(const QVariantMap &m)
{
    TimingStats s;
    s.count = m.value(QStringLiteral("count")).toInt();
    s.medianMs = m.value(QStringLiteral("medianMs")).toDouble();
    s.minMs = m.value(QStringLiteral("minMs")).toDouble();
    s.maxMs = m.value(QStringLiteral("maxMs")).toDouble();
    s.meanMs = m.value(QStringLiteral("meanMs")).toDouble();
    s.stdevMs = m.value(QStringLiteral("stdevMs")).toDouble();
    s.noise = m.value(QStringLiteral("noise")).toDouble();
    return s;
}

TimingStats computeStats(QList<double> samples)
{
    TimingStats s;
    s.count = static_cast<int>(samples.size());
    if (samples.isEmpty()) {
        return s;
    }
    std::sort(samples.begin(), samples.end());
    const qsizetype n = samples.size();
    s.minMs = samples.front();
    s.maxMs = samples.back();
    s.medianMs = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
    double sum = 0;
    for (double v : samples) {
        sum += v;
    }
    s.meanMs = sum / double(n);
    if (n > 1) {
        double sq = 0;
        for (double v : samples) {
            sq += (v - s.meanMs) * (v - s.meanMs);
        }
        s.stdevMs = std::sqrt(sq / double(n - 1));
    }
    s.noise = s.meanMs > 0 ? s.stdevMs / s.meanMs : 0;
    return s;
}

QVariantMap TimelineSpan::toVariant() const
{
    return {{QStringLiteral("step"), step},
            {QStringLiteral("kind"), kind},
            {QStringLiteral("label"), label},
            {QStringLiteral("stream"), stream},
            {QStringLiteral("direction"), direction},
            {QStringLiteral("startMs"), startMs},
            {QStringLiteral("endMs"), endMs},
            {QStringLiteral("bytes"), bytes},
            {QStringLiteral("grid"), dimToList(grid)},
            {QStringLiteral("block"), dimToList(block)}};
}

TimelineSpan TimelineSpan::fromVariant(const QVariantMap &m)
{
    TimelineSpan t;
    t.step = m.value(QStringLiteral("step")).toInt();
    t.kind = m.value(QStringLiteral("kind")).toString();
    t.label = m.value(QStringLiteral("label")).toString();
    t.stream = m.value(QStringLiteral("stream")).toString();
    t.direction = m.value(QStringLiteral("direction")).toString();
    t.startMs = m.value(QStringLiteral("startMs")).toDouble();
    t.endMs = m.value(QStringLiteral("endMs")).toDouble();
    t.bytes = m.value(QStringLiteral("bytes")).toLongLong();
    t.grid = listToDim(m.value(QStringLiteral("grid")));
    t.block = listToDim(m.value(QStringLiteral("block")));
    return t;
}

QVariantMap StepResult::toVariant() const
{
    return {{QStringLiteral("kind"), kind},
            {QStringLiteral("label"), label},
            {QStringLiteral("stream"), stream},
            {QStringLiteral("bytes"), bytes},
            {QStringLiteral("kernel"), kernel},
            {QStringLiteral("loweredName"), loweredName},
            {QStringLiteral("grid"), dimToList(grid)},
            {QStringLiteral("block"), dimToList(block)},
            {QStringLiteral("sharedBytes"), sharedBytes},
            {QStringLiteral("firstRunMs"), firstRunMs},
            {QStringLiteral("printf"), printfOutput},
            {QStringLiteral("printfTruncated"), printfTruncated},
            {QStringLiteral("occupancy"), occupancy.toVariant()},
            {QStringLiteral("limits"), limits.toVariant()}};
}

StepResult StepResult::fromVariant(const QVariantMap &m)
{
    StepResult s;
    s.kind = m.value(QStringLiteral("kind"), QStringLiteral("kernel")).toString();
    s.label = m.value(QStringLiteral("label")).toString();
    s.stream = m.value(QStringLiteral("stream")).toString();
    s.bytes = m.value(QStringLiteral("bytes")).toLongLong();
    s.kernel = m.value(QStringLiteral("kernel")).toString();
    s.loweredName = m.value(QStringLiteral("loweredName")).toString();
    s.grid = listToDim(m.value(QStringLiteral("grid")));
    s.block = listToDim(m.value(QStringLiteral("block")));
    s.sharedBytes = m.value(QStringLiteral("sharedBytes")).toLongLong();
    s.firstRunMs = m.value(QStringLiteral("firstRunMs")).toDouble();
    s.printfOutput = m.value(QStringLiteral("printf")).toString();
    s.printfTruncated = m.value(QStringLiteral("printfTruncated")).toBool();
    s.occupancy = Occupancy::fromVariant(m.value(QStringLiteral("occupancy")).toMap());
    s.limits = LaunchLimits::fromVariant(m.value(QStringLiteral("limits")).toMap());
    return s;
}

QVariantMap RunResult::toVariant() const
{
    QVariantMap m;
    m.insert(QStringLiteral("device"), device);
    m.insert(QStringLiteral("deviceOrdinal"), deviceOrdinal);
    QVariantList steps_;
    for (const StepResult &s : steps) {
        steps_ << s.toVariant();
    }
    m.insert(QStringLiteral("steps"), steps_);
    m.insert(QStringLiteral("repeat"), repeat);
    m.insert(QStringLiteral("timed"), timed);
    m.insert(QStringLiteral("timingMode"), timingMode);
    m.insert(QStringLiteral("batch"), batch);
    QVariantList samples;
    for (double v : samplesMs) {
        samples << v;
    }
    m.insert(QStringLiteral("samplesMs"), samples);
    m.insert(QStringLiteral("stats"), stats.toVariant());
    m.insert(QStringLiteral("converged"), converged);
    m.insert(QStringLiteral("timingNote"), timingNote);
    m.insert(QStringLiteral("stopCriterion"), stopCriterion);
    m.insert(QStringLiteral("l2Flush"), l2Flush);
    m.insert(QStringLiteral("eventOverheadMs"), eventOverheadMs);
    m.insert(QStringLiteral("eventPairMs"), eventPairMs);
    m.insert(QStringLiteral("medianLessOverheadMs"), medianLessOverheadMs);
    m.insert(QStringLiteral("uploadMs"), uploadMs);
    m.insert(QStringLiteral("downloadMs"), downloadMs);
    m.insert(QStringLiteral("uploadBytes"), uploadBytes);
    m.insert(QStringLiteral("hostLaunchUs"), hostLaunchUs);
    m.insert(QStringLiteral("bytes"), bytes);
    m.insert(QStringLiteral("flops"), flops);
    m.insert(QStringLiteral("bytesPerSecond"), bytesPerSecond);
    m.insert(QStringLiteral("flopsPerSecond"), flopsPerSecond);
    m.insert(QStringLiteral("warnings"), warnings);
    if (!timeline.isEmpty()) {
        QVariantList spans;
        for (const TimelineSpan &t : timeline) {
            spans << t.toVariant();
        }
        m.insert(QStringLiteral("timeline"), spans);
        m.insert(QStringLiteral("timelineTotalMs"), timelineTotalMs);
    }
    if (graphReplays > 0) {
        m.insert(QStringLiteral("graphReplays"), graphReplays);
        m.insert(QStringLiteral("graphReplayUs"), graphReplayUs);
        m.insert(QStringLiteral("streamLaunchUs"), streamLaunchUs);
        m.insert(QStringLiteral("graphCompared"), graphCompared);
        m.insert(QStringLiteral("graphDiffers"), graphDiffers);
    }
    if (error) {
        m.insert(QStringLiteral("error"), error->toVariant());
    }
    m.insert(QStringLiteral("failedStep"), failedStep);
    m.insert(QStringLiteral("buffersRestored"), buffersRestored);
    m.insert(QStringLiteral("guards"), guards);
    QVariantList violations, allocations;
    for (const GuardViolation &v : guardViolations) {
        violations << v.toVariant();
    }
    for (const DeviceAllocation &a : deviceBuffers) {
        allocations << a.toVariant();
    }
    m.insert(QStringLiteral("guardViolations"), violations);
    m.insert(QStringLiteral("guardCheckMs"), guardCheckMs);
    m.insert(QStringLiteral("deviceBuffers"), allocations);
    if (accessRequested > 0 || !accessTrace.isEmpty()) {
        m.insert(QStringLiteral("accessTrace"), accessTrace);
        m.insert(QStringLiteral("accessRequested"), accessRequested);
        QVariantList ends;
        for (qint64 e : accessStepEnds) {
            ends << e;
        }
        m.insert(QStringLiteral("accessStepEnds"), ends);
    }
    return m;
}

RunResult RunResult::fromVariant(const QVariantMap &m)
{
    RunResult r;
    r.device = m.value(QStringLiteral("device")).toString();
    r.deviceOrdinal = m.value(QStringLiteral("deviceOrdinal")).toInt();
    for (const QVariant &v : m.value(QStringLiteral("steps")).toList()) {
        r.steps << StepResult::fromVariant(v.toMap());
    }
    r.repeat = m.value(QStringLiteral("repeat"), 1).toInt();
    r.timed = m.value(QStringLiteral("timed")).toBool();
    r.timingMode = m.value(QStringLiteral("timingMode")).toString();
    r.batch = m.value(QStringLiteral("batch"), 1).toInt();
    for (const QVariant &v : m.value(QStringLiteral("samplesMs")).toList()) {
        r.samplesMs << v.toDouble();
    }
    r.stats = TimingStats::fromVariant(m.value(QStringLiteral("stats")).toMap());
    r.converged = m.value(QStringLiteral("converged")).toBool();
    r.timingNote = m.value(QStringLiteral("timingNote")).toString();
    r.stopCriterion = m.value(QStringLiteral("stopCriterion")).toString();
    r.l2Flush = m.value(QStringLiteral("l2Flush")).toString();
    r.eventOverheadMs = m.value(QStringLiteral("eventOverheadMs")).toDouble();
    r.eventPairMs = m.value(QStringLiteral("eventPairMs")).toDouble();
    r.medianLessOverheadMs = m.value(QStringLiteral("medianLessOverheadMs")).toDouble();
    r.uploadMs = m.value(QStringLiteral("uploadMs")).toDouble();
    r.downloadMs = m.value(QStringLiteral("downloadMs")).toDouble();
    r.uploadBytes = m.value(QStringLiteral("uploadBytes")).toLongLong();
    r.hostLaunchUs = m.value(QStringLiteral("hostLaunchUs")).toDouble();
    r.bytes = m.value(QStringLiteral("bytes")).toDouble();
    r.flops = m.value(QStringLiteral("flops")).toDouble();
    r.bytesPerSecond = m.value(QStringLiteral("bytesPerSecond")).toDouble();
    r.flopsPerSecond = m.value(QStringLiteral("flopsPerSecond")).toDouble();
    r.warnings = m.value(QStringLiteral("warnings")).toStringList();
    for (const QVariant &v : m.value(QStringLiteral("timeline")).toList()) {
        r.timeline << TimelineSpan::fromVariant(v.toMap());
    }
    r.timelineTotalMs = m.value(QStringLiteral("timelineTotalMs")).toDouble();
    r.graphReplays = m.value(QStringLiteral("graphReplays")).toInt();
    r.graphReplayUs = m.value(QStringLiteral("graphReplayUs")).toDouble();
    r.streamLaunchUs = m.value(QStringLiteral("streamLaunchUs")).toDouble();
    r.graphCompared = m.value(QStringLiteral("graphCompared")).toBool();
    r.graphDiffers = m.value(QStringLiteral("graphDiffers")).toStringList();
    if (m.contains(QStringLiteral("error"))) {
        r.error = Error::fromVariant(m.value(QStringLiteral("error")).toMap());
    }
    r.failedStep = m.value(QStringLiteral("failedStep"), -1).toInt();
    r.buffersRestored = m.value(QStringLiteral("buffersRestored")).toBool();
    r.guards = m.value(QStringLiteral("guards")).toBool();
    for (const QVariant &v : m.value(QStringLiteral("guardViolations")).toList()) {
        r.guardViolations << GuardViolation::fromVariant(v.toMap());
    }
    r.guardCheckMs = m.value(QStringLiteral("guardCheckMs")).toDouble();
    for (const QVariant &v : m.value(QStringLiteral("deviceBuffers")).toList()) {
        r.deviceBuffers << DeviceAllocation::fromVariant(v.toMap());
    }
    r.accessTrace = m.value(QStringLiteral("accessTrace")).toByteArray();
    r.accessRequested = m.value(QStringLiteral("accessRequested")).toLongLong();
    for (const QVariant &v : m.value(QStringLiteral("accessStepEnds")).toList()) {
        r.accessStepEnds << v.toLongLong();
    }
    return r;
}

} // namespace Kp
