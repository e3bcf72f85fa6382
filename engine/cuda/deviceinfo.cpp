#include "deviceinfo.h"

#include <QVariantList>

namespace Kp {

QVariantMap DeviceInfo::toVariant() const
{
    return QVariantMap{
        {QStringLiteral("ordinal"), ordinal},
        {QStringLiteral("name"), name},
        {QStringLiteral("uuid"), uuid},
        {QStringLiteral("pciBusId"), pciBusId},
        {QStringLiteral("ccMajor"), ccMajor},
        {QStringLiteral("ccMinor"), ccMinor},
        {QStringLiteral("smCount"), smCount},
        {QStringLiteral("totalMemoryBytes"), totalMemoryBytes},
        {QStringLiteral("memoryBusWidthBits"), memoryBusWidthBits},
        {QStringLiteral("l2CacheBytes"), l2CacheBytes},
        {QStringLiteral("maxThreadsPerBlock"), maxThreadsPerBlock},
        {QStringLiteral("maxThreadsPerSm"), maxThreadsPerSm},
        {QStringLiteral("warpSize"), warpSize},
        {QStringLiteral("maxSharedMemoryPerBlockOptin"), maxSharedMemoryPerBlockOptin},
        {QStringLiteral("maxRegistersPerBlock"), maxRegistersPerBlock},
        {QStringLiteral("clockRateKHz"), clockRateKHz},
        {QStringLiteral("memoryClockRateKHz"), memoryClockRateKHz},
    };
}

DeviceInfo DeviceInfo::fromVariant(const QVariantMap &m)
{
    DeviceInfo d;
    d.ordinal = m.value(QStringLiteral("ordinal")).toInt();
    d.name = m.value(QStringLiteral("name")).toString();
    d.uuid = m.value(QStringLiteral("uuid")).toString();
    d.pciBusId = m.value(QStringLiteral("pciBusId")).toString();
    d.ccMajor = m.value(QStringLiteral("ccMajor")).toInt();
    d.ccMinor = m.value(QStringLiteral("ccMinor")).toInt();
    d.smCount = m.value(QStringLiteral("smCount")).toInt();
    d.totalMemoryBytes = m.value(QStringLiteral("totalMemoryBytes")).toLongLong();
    d.memoryBusWidthBits = m.value(QStringLiteral("memoryBusWidthBits")).toInt();
    d.l2CacheBytes = m.value(QStringLiteral("l2CacheBytes")).toInt();
    d.maxThreadsPerBlock = m.value(QStringLiteral("maxThreadsPerBlock")).toInt();
    d.maxThreadsPerSm = m.value(QStringLiteral("maxThreadsPerSm")).toInt();
    d.warpSize = m.value(QStringLiteral("warpSize")).toInt();
    d.maxSharedMemoryPerBlockOptin = m.value(QStringLiteral("maxSharedMemoryPerBlockOptin")).toInt();
    d.maxRegistersPerBlock = m.value(QStringLiteral("maxRegistersPerBlock")).toInt();
    d.clockRateKHz = m.value(QStringLiteral("clockRateKHz")).toInt();
    d.memoryClockRateKHz = m.value(QStringLiteral("memoryClockRateKHz")).toInt();
    return d;
}

QVariantMap DeviceList::toVariant() const
{
    QVariantList list;
    for (const DeviceInfo &d : devices) {
        list.append(d.toVariant());
    }
    return QVariantMap{{QStringLiteral("driverVersion"), driverVersion}, {QStringLiteral("devices"), list}};
}

DeviceList DeviceList::fromVariant(const QVariantMap &m)
{
    DeviceList l;
    l.driverVersion = m.value(QStringLiteral("driverVersion")).toInt();
    const QVariantList list = m.value(QStringLiteral("devices")).toList();
    for (const QVariant &v : list) {
        l.devices.append(DeviceInfo::fromVariant(v.toMap()));
    }
    return l;
}

} // namespace Kp
