#include "devicequery.h"

#include "driverapi.h"

#include <QVariantList>

namespace Kp {

Result<DeviceList> queryDevices()
{
    const Result<const DriverApi *> loaded = DriverApi::instance();
    if (!loaded) {
        return loaded.error();
    }
    const DriverApi &cu = **loaded;
    DeviceList list;
    list.driverVersion = cu.driverVersion;
    int count = 0;
    if (const CUresult r = cu.cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
        return cu.error(r, "cuDeviceGetCount");
    }
    if (count == 0) {
        return Error{QStringLiteral("CUDA driver"), Error::Code::NoDevice, QStringLiteral("cuDeviceGetCount"),
                     QStringLiteral("No CUDA device found: the driver is loaded but reports no GPU")};
    }
    for (int i = 0; i < count; ++i) {
        CUdevice dev = 0;
        if (const CUresult r = cu.cuDeviceGet(&dev, i); r != CUDA_SUCCESS) {
            return cu.error(r, "cuDeviceGet");
        }
        DeviceInfo d;
        d.ordinal = i;
        char name[256] = {};
        if (const CUresult r = cu.cuDeviceGetName(name, sizeof name - 1, dev); r != CUDA_SUCCESS) {
            return cu.error(r, "cuDeviceGetName");
        }
        d.name = QString::fromUtf8(name);
        CUuuid uuid{};
        if (cu.cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS) {
            const QByteArray hex = QByteArray(uuid.bytes, sizeof uuid.bytes).toHex();
            d.uuid = QStringLiteral("GPU-%1-%2-%3-%4-%5")
                         .arg(QString::fromLatin1(hex.mid(0, 8)), QString::fromLatin1(hex.mid(8, 4)),
                              QString::fromLatin1(hex.mid(12, 4)), QString::fromLatin1(hex.mid(16, 4)),
                              QString::fromLatin1(hex.mid(20, 12)));
        }
        char bus[64] = {};
        if (cu.cuDeviceGetPCIBusId(bus, sizeof bus - 1, dev) == CUDA_SUCCESS) {
            d.pciBusId = QString::fromLatin1(bus);
        }
        size_t bytes = 0;
        if (const CUresult r = cu.cuDeviceTotalMem(&bytes, dev); r != CUDA_SUCCESS) {
            return cu.error(r, "cuDeviceTotalMem");
        }
        d.totalMemoryBytes = static_cast<qint64>(bytes);
        struct Attr
        {
            CUdevice_attribute attr;
            int *out;
        };
        const Attr attrs[] = {
            {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &d.ccMajor},
            {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &d.ccMinor},
            {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &d.smCount},
            {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &d.memoryBusWidthBits},
            {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &d.l2CacheBytes},
            {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &d.maxThreadsPerBlock},
            {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &d.maxThreadsPerSm},
            {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &d.warpSize},
            {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &d.maxSharedMemoryPerBlockOptin},
            {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, &d.maxRegistersPerBlock},
        };
        for (const Attr &a : attrs) {
            if (const CUresult r = cu.cuDeviceGetAttribute(a.out, a.attr, dev); r != CUDA_SUCCESS) {
                return cu.error(r, "cuDeviceGetAttribute");
            }
        }
        // Optional: a driver that no longer reports a clock leaves it unknown (0).
        cu.cuDeviceGetAttribute(&d.clockRateKHz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
        cu.cuDeviceGetAttribute(&d.memoryClockRateKHz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev);
        list.devices.append(d);
    }
    return list;
}

} // namespace Kp
