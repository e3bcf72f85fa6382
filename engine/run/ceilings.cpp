#include "ceilings.h"

#include "client/engineclient.h"
#include "compile/compiler.h"
#include "core/safefile.h"
#include "worker/protocol.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

namespace Kp {

namespace {

constexpr qint64 kMaxCacheBytes = 1 << 20;
constexpr int kCacheVersion = 1;

Error ceilingsError(Error::Code code, const QString &message)
{
    return Error{QStringLiteral("ceilings"), code, {}, message};
}

} // namespace

bool DeviceCeilings::matches(const DeviceInfo &device, int driver) const
{
    // Clocks take part only when both sides know them: a worker that cannot
    // read them must not make every cached entry stale.
    const auto sameClock = [](int a, int b) { return a == 0 || b == 0 || a == b; };
    return deviceName == device.name && uuid == device.uuid && pciBusId == device.pciBusId && driverVersion == driver &&
           sameClock(clockKHz, device.clockRateKHz) && sameClock(memoryClockKHz, device.memoryClockRateKHz);
}

QJsonObject DeviceCeilings::toJson() const
{
    return QJsonObject{{QStringLiteral("device"), deviceName},
                       {QStringLiteral("uuid"), uuid},
                       {QStringLiteral("pciBusId"), pciBusId},
                       {QStringLiteral("driverVersion"), driverVersion},
                       {QStringLiteral("clockKHz"), clockKHz},
                       {QStringLiteral("memoryClockKHz"), memoryClockKHz},
                       {QStringLiteral("bytesPerSecond"), bytesPerSecond},
                       {QStringLiteral("fp32FlopsPerSecond"), fp32FlopsPerSecond},
                       {QStringLiteral("fp64FlopsPerSecond"), fp64FlopsPerSecond},
                       {QStringLiteral("copyBytes"), double(copyBytes)},
                       {QStringLiteral("measuredAt"), measuredAt}};
}

std::optional<DeviceCeilings> DeviceCeilings::fromJson(const QJsonObject &o)
{
    for (const char *key : {"device", "uuid", "pciBusId", "driverVersion", "bytesPerSecond", "fp32FlopsPerSecond",
                            "fp64FlopsPerSecond"}) {
        if (!o.contains(QLatin1String(key))) {
            return std::nullopt;
        }
    }
    DeviceCeilings c;
    c.deviceName = o.value(QStringLiteral("device")).toString();
    c.uuid = o.value(QStringLiteral("uuid")).toString();
    c.pciBusId = o.value(QStringLiteral("pciBusId")).toString();
    c.driverVersion = o.value(QStringLiteral("driverVersion")).toInt();
    c.clockKHz = o.value(QStringLiteral("clockKHz")).toInt();
    c.memoryClockKHz = o.value(QStringLiteral("memoryClockKHz")).toInt();
    c.bytesPerSecond = o.value(QStringLiteral("bytesPerSecond")).toDouble();
    c.fp32FlopsPerSecond = o.value(QStringLiteral("fp32FlopsPerSecond")).toDouble();
    c.fp64FlopsPerSecond = o.value(QStringLiteral("fp64FlopsPerSecond")).toDouble();
    c.copyBytes = qint64(o.value(QStringLiteral("copyBytes")).toDouble());
    c.measuredAt = o.value(QStringLiteral("measuredAt")).toString();
    if (!c.valid()) {
        return std::nullopt;
    }
    return c;
}

QString ceilingsSource()
{
    // The copy moves 16-byte words, four loads in flight per thread before
    // their stores, so the memory system sees enough bytes in flight to reach
    // its peak. The FMA kernels run 8 independent chains unrolled 4 times,
    // enough instruction-level parallelism to hide the FMA latency at full
    // occupancy; their sum is stored only when it equals a value the chains
    // (which converge to c / (1 - b) = 1) never reach, so nothing is optimised
    // away and no memory traffic enters the timed region.
    return QStringLiteral(R"(// Kernel Playground's device ceilings (engine/run/ceilings.cpp)
extern "C" __global__ void kpg_ceiling_copy(const float4 *__restrict__ src, float4 *__restrict__ dst,
                                            unsigned long long n)
{
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const float4 a = src[i];
        const float4 b = src[i + stride];
        const float4 c = src[i + 2 * stride];
        const float4 d = src[i + 3 * stride];
        dst[i] = a;
        dst[i + stride] = b;
        dst[i + 2 * stride] = c;
        dst[i + 3 * stride] = d;
    }
    for (; i < n; i += stride) {
        dst[i] = src[i];
    }
}

__device__ __forceinline__ float kpg_fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double kpg_fma(double a, double b, double c) { return fma(a, b, c); }

template <typename T>
__device__ __forceinline__ void kpg_fma_chains(T *out, int iterations, T b, T c)
{
    T a[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        a[j] = T(threadIdx.x + j) * T(1e-3);
    }
    for (int k = 0; k < iterations; ++k) {
#pragma unroll
        for (int u = 0; u < 4; ++u) {
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                a[j] = kpg_fma(a[j], b, c);
            }
        }
    }
    T s = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        s += a[j];
    }
    if (s == T(-1)) {
        out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    }
}

extern "C" __global__ void kpg_ceiling_fma32(float *out, int iterations, float b, float c)
{
    kpg_fma_chains<float>(out, iterations, b, c);
}

extern "C" __global__ void kpg_ceiling_fma64(double *out, int iterations, double b, double c)
{
    kpg_fma_chains<double>(out, iterations, b, c);
}
)");
}

QVariantMap CeilingsRequest::toVariant() const
{
    return QVariantMap{{QStringLiteral("device"), device},
                       {QStringLiteral("image"), image},
                       {QStringLiteral("copyBytes"), copyBytes},
                       {QStringLiteral("fmaIterations"), fmaIterations},
                       {QStringLiteral("rounds"), rounds}};
}

CeilingsRequest CeilingsRequest::fromVariant(const QVariantMap &m)
{
    CeilingsRequest r;
    r.device = m.value(QStringLiteral("device"), r.device).toInt();
    r.image = m.value(QStringLiteral("image")).toByteArray();
    r.copyBytes = m.value(QStringLiteral("copyBytes"), r.copyBytes).toLongLong();
    r.fmaIterations = m.value(QStringLiteral("fmaIterations"), r.fmaIterations).toInt();
    r.rounds = m.value(QStringLiteral("rounds"), r.rounds).toInt();
    return r;
}

QString ceilingsCachePath()
{
    return QDir(Compiler::defaultCacheDir()).filePath(QStringLiteral("ceilings.json"));
}

namespace {

QJsonArray readEntries(const QString &path)
{
    if (!QFileInfo::exists(path)) {
        return {};
    }
    const Result<QByteArray> bytes = readRegularFile(path, kMaxCacheBytes, QStringLiteral("the ceilings cache"));
    if (!bytes) {
        return {};
    }
    const QJsonObject doc = QJsonDocument::fromJson(*bytes).object();
    if (doc.value(QStringLiteral("version")).toInt() != kCacheVersion) {
        return {};
    }
    return doc.value(QStringLiteral("devices")).toArray();
}

} // namespace

std::optional<DeviceCeilings> readCachedCeilings(const QString &path, const DeviceInfo &device, int driverVersion)
{
    for (const QJsonValue &v : readEntries(path)) {
        const std::optional<DeviceCeilings> c = DeviceCeilings::fromJson(v.toObject());
        if (c && c->matches(device, driverVersion)) {
            return c;
        }
    }
    return std::nullopt;
}

Status storeCeilings(const QString &path, const DeviceCeilings &c)
{
    QJsonArray kept;
    for (const QJsonValue &v : readEntries(path)) {
        const std::optional<DeviceCeilings> old = DeviceCeilings::fromJson(v.toObject());
        // One entry per card: a new driver or clock replaces the old figures.
        if (old && !(old->uuid == c.uuid && old->pciBusId == c.pciBusId)) {
            kept.append(v);
        }
    }
    kept.append(c.toJson());
    if (!QDir().mkpath(QFileInfo(path).absolutePath())) {
        return ceilingsError(Error::Code::BadInput,
                             QStringLiteral("cannot create the folder of the ceilings cache %1").arg(path));
    }
    const QJsonObject doc{{QStringLiteral("version"), kCacheVersion}, {QStringLiteral("devices"), kept}};
    return writeOutput(path, QJsonDocument(doc).toJson(QJsonDocument::Indented), QStringLiteral("the ceilings cache"));
}

Result<DeviceCeilings> measureCeilings(EngineClient &engine, const DeviceInfo &device, int driverVersion)
{
    Compiler compiler;
    CompileRequest req;
    req.source = ceilingsSource();
    req.fileName = QStringLiteral("kpg_ceilings.cu");
    req.options.lineInfo = false;
    req.deviceCcMajor = device.ccMajor;
    req.deviceCcMinor = device.ccMinor;
    const Result<CompileResult> compiled = compiler.compile(req);
    if (!compiled) {
        return compiled.error();
    }
    if (!compiled->ok) {
        return ceilingsError(Error::Code::Internal,
                             QStringLiteral("the ceiling kernels do not compile: %1").arg(compiled->log.left(2000)));
    }
    CeilingsRequest body;
    body.device = device.ordinal;
    body.image = compiled->cubin.isEmpty() ? compiled->ptx : compiled->cubin;
    const Reply reply = engine.requestSync(Protocol::Type::Ceilings, body.toVariant(), RequestOptions{180000, {}});
    if (!reply) {
        return reply.error();
    }
    const QVariantMap &r = *reply;
    DeviceCeilings c;
    c.deviceName = device.name;
    c.uuid = device.uuid;
    c.pciBusId = device.pciBusId;
    c.driverVersion = driverVersion;
    c.clockKHz = r.value(QStringLiteral("clockKHz")).toInt();
    c.memoryClockKHz = r.value(QStringLiteral("memoryClockKHz")).toInt();
    c.bytesPerSecond = r.value(QStringLiteral("bytesPerSecond")).toDouble();
    c.fp32FlopsPerSecond = r.value(QStringLiteral("fp32FlopsPerSecond")).toDouble();
    c.fp64FlopsPerSecond = r.value(QStringLiteral("fp64FlopsPerSecond")).toDouble();
    c.copyBytes = r.value(QStringLiteral("copyBytes")).toLongLong();
    c.measuredAt = QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
    if (!c.valid()) {
        return ceilingsError(Error::Code::Internal,
                             QStringLiteral("the worker measured no usable ceilings on %1").arg(device.name));
    }
    return c;
}

Result<DeviceCeilings> deviceCeilings(EngineClient &engine, const DeviceInfo &device, int driverVersion, bool remeasure,
                                      bool *fromCache)
{
    const QString path = ceilingsCachePath();
    if (!remeasure) {
        if (std::optional<DeviceCeilings> c = readCachedCeilings(path, device, driverVersion)) {
            if (fromCache) {
                *fromCache = true;
            }
            return *c;
        }
    }
    if (fromCache) {
        *fromCache = false;
    }
    Result<DeviceCeilings> c = measureCeilings(engine, device, driverVersion);
    if (c) {
        // A cache that cannot be written costs a measurement next time, not this answer.
        (void)storeCeilings(path, *c);
    }
    return c;
}

} // namespace Kp
