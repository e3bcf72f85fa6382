#pragma once

#include "core/result.h"
#include "cuda/deviceinfo.h"

#include <QJsonObject>
#include <QString>
#include <QVariantMap>

#include <optional>

namespace Kp {

class EngineClient;

/**
 * What one GPU can do at best, measured once and cached (docs/sweep.md,
 * "Device ceilings"): the copy bandwidth of a saturating copy kernel and the
 * FP32 and FP64 rates of independent FMA chains. A roofline and a sweep plot
 * draw them as ceilings. A plain value.
 */
struct DeviceCeilings
{
    // What the cache key is made of: a measurement belongs to one card (UUID
    // and PCI address), one driver and, when known, one clock setting.
    QString deviceName;
    QString uuid;
    QString pciBusId;
    int driverVersion = 0;
    int clockKHz = 0;
    int memoryClockKHz = 0;

    double bytesPerSecond = 0;     ///< copy: bytes read + bytes written per second
    double fp32FlopsPerSecond = 0; ///< an FMA counts as 2 FLOPs
    double fp64FlopsPerSecond = 0;
    qint64 copyBytes = 0; ///< per buffer
    QString measuredAt;   ///< ISO 8601, UTC

    bool valid() const { return bytesPerSecond > 0 && fp32FlopsPerSecond > 0 && fp64FlopsPerSecond > 0; }
    /** Arithmetic intensity (FLOP/byte) where the FP32 roof meets the bandwidth roof. */
    double ridgeFp32() const { return bytesPerSecond > 0 ? fp32FlopsPerSecond / bytesPerSecond : 0; }
    double ridgeFp64() const { return bytesPerSecond > 0 ? fp64FlopsPerSecond / bytesPerSecond : 0; }

    /** Whether this measurement was made on this device, driver and clocks. */
    bool matches(const DeviceInfo &device, int driverVersion) const;

    QJsonObject toJson() const;
    /** Null for an object that lacks a field or has a non-positive rate. */
    static std::optional<DeviceCeilings> fromJson(const QJsonObject &o);
};

/** The CUDA C source of the ceiling kernels (compiled by the engine, run by the worker). */
QString ceilingsSource();

/** The body of the worker's "ceilings" request: what to launch, and how hard. */
struct CeilingsRequest
{
    int device = 0;
    QByteArray image;             ///< the compiled ceilingsSource()
    qint64 copyBytes = 512 << 20; ///< per buffer (source and destination); the worker shrinks it to fit
    int fmaIterations = 4096;     ///< loop trips of each FMA kernel's threads
    int rounds = 10;              ///< timed launches per kernel; the best counts

    QVariantMap toVariant() const;
    static CeilingsRequest fromVariant(const QVariantMap &map);
};

/** FMAs per thread per loop trip in the FMA kernels (independent chains x unroll). */
constexpr int kCeilingFmasPerTrip = 32;

/** $KPG_CACHE_DIR or the user's cache folder for kernel-playground, with the compile cache. */
QString ceilingsCachePath();

/**
 * The cached ceilings of a device, if a measurement for this device, driver
 * and clocks is in the file. A missing, unreadable or corrupt file is no
 * cache (it is rewritten on the next store).
 */
std::optional<DeviceCeilings> readCachedCeilings(const QString &path, const DeviceInfo &device, int driverVersion);

/** Adds or replaces (same UUID and PCI address) the entry for c in the cache file. */
Status storeCeilings(const QString &path, const DeviceCeilings &c);

/** Compiles the ceiling kernels for the device and has the worker measure them. Blocks; not on the engine thread. */
Result<DeviceCeilings> measureCeilings(EngineClient &engine, const DeviceInfo &device, int driverVersion);

/**
 * The cached ceilings, or a fresh measurement stored in the cache (always
 * measured with remeasure). fromCache says which.
 */
Result<DeviceCeilings> deviceCeilings(EngineClient &engine, const DeviceInfo &device, int driverVersion, bool remeasure,
                                      bool *fromCache = nullptr);

} // namespace Kp
