#pragma once

#include "core/result.h"

#include <QList>
#include <QString>
#include <QVariantMap>

namespace Kp {

/** What the driver says about one GPU. A plain value; safe to copy across threads. */
struct DeviceInfo
{
    int ordinal = 0;
    QString name;
    QString uuid;     ///< "GPU-xxxxxxxx-..." as nvidia-smi prints it
    QString pciBusId; ///< "0000:19:00.0"
    int ccMajor = 0;
    int ccMinor = 0;
    int smCount = 0;
    qint64 totalMemoryBytes = 0;
    int memoryBusWidthBits = 0;
    int l2CacheBytes = 0;
    int maxThreadsPerBlock = 0;
    int maxThreadsPerSm = 0;
    int warpSize = 0;
    int maxSharedMemoryPerBlockOptin = 0;
    int maxRegistersPerBlock = 0;
    int clockRateKHz = 0;       ///< the SM clock the driver reports; 0 when unknown
    int memoryClockRateKHz = 0; ///< peak memory clock; 0 when unknown

    /** "9.0" */
    QString computeCapability() const { return QStringLiteral("%1.%2").arg(ccMajor).arg(ccMinor); }
    /** "sm_90" */
    QString arch() const { return QStringLiteral("sm_%1%2").arg(ccMajor).arg(ccMinor); }

    QVariantMap toVariant() const;
    static DeviceInfo fromVariant(const QVariantMap &map);
};

/** The answer to "list devices". */
struct DeviceList
{
    int driverVersion = 0; ///< CUDA version the driver supports, e.g. 13000
    QList<DeviceInfo> devices;

    QVariantMap toVariant() const;
    static DeviceList fromVariant(const QVariantMap &map);
};

} // namespace Kp
