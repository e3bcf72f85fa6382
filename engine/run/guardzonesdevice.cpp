#include "run/guardzonesdevice.h"

#include "cuda/driverapi.h"

#include <QElapsedTimer>

#include <cstring>

namespace Kp {

namespace {

constexpr qint64 G = Guard::kGuardBytes;

class CostTimer
{
public:
    explicit CostTimer(double *sink)
        : m_sink(sink)
    {
        m_timer.start();
    }
    ~CostTimer() { *m_sink += double(m_timer.nsecsElapsed()) / 1e6; }
    CostTimer(const CostTimer &) = delete;
    CostTimer &operator=(const CostTimer &) = delete;

private:
    double *m_sink;
    QElapsedTimer m_timer;
};

} // namespace

Status GuardZonesDevice::ensurePinned(qint64 stagingBytes)
{
    if (!m_pattern) {
        void *p = nullptr;
        if (const CUresult r = m_api->cuMemHostAlloc(&p, size_t(G), 0); r != CUDA_SUCCESS) {
            return m_api->error(r, "cuMemHostAlloc (guard pattern)");
        }
        m_pattern = Cuda::PinnedHostMemory(p, Cuda::HostFree{m_api});
        std::memcpy(p, Guard::expectedGuard().constData(), size_t(G));
    }
    if (stagingBytes > m_stagingBytes) {
        m_staging.reset();
        m_stagingBytes = 0;
        void *p = nullptr;
        if (const CUresult r = m_api->cuMemHostAlloc(&p, size_t(stagingBytes), 0); r != CUDA_SUCCESS) {
            return m_api->error(r, "cuMemHostAlloc (guard staging)");
        }
        m_staging = Cuda::PinnedHostMemory(p, Cuda::HostFree{m_api});
        m_stagingBytes = stagingBytes;
    }
    return Unit{};
}

Status GuardZonesDevice::fill(CUstream stream, const std::vector<Zone> &zones)
{
    CostTimer cost(&m_costMs);
    if (Status s = ensurePinned(qint64(zones.size()) * 2 * G); !s) {
        return s;
    }
    if (m_fillKernel && !zones.empty()) {
        // One launch for every guard instead of two copies per buffer.
        if (Status s = writeTable(zones, false); !s) {
            return s;
        }
        CUdeviceptr tableDev = m_mappedDev;
        quint32 pattern = Guard::kPattern;
        void *params[] = {&tableDev, &pattern};
        if (const CUresult r = m_api->cuLaunchKernel(m_fillKernel, unsigned(zones.size() * 2), 1, 1, 256, 1, 1, 0,
                                                     stream, params, nullptr);
            r != CUDA_SUCCESS) {
            return m_api->error(r, "cuLaunchKernel (guard fill)");
        }
        return Unit{};
    }
    for (const Zone &z : zones) {
        for (const CUdeviceptr at : {z.base, z.base + CUdeviceptr(G + z.bytes)}) {
            if (const CUresult r = m_api->cuMemcpyHtoDAsync(at, m_pattern.get(), size_t(G), stream);
                r != CUDA_SUCCESS) {
                return m_api->error(r, "cuMemcpyHtoDAsync (guard fill)");
            }
        }
    }
    return Unit{};
}

Status GuardZonesDevice::ensureMapped(qint64 guards)
{
    if (guards <= m_mappedGuards) {
        return Unit{};
    }
    m_mapped.reset();
    m_mappedGuards = 0;
    void *p = nullptr;
    if (const CUresult r = m_api->cuMemHostAlloc(&p, size_t(guards * 12), CU_MEMHOSTALLOC_DEVICEMAP);
        r != CUDA_SUCCESS) {
        return m_api->error(r, "cuMemHostAlloc (guard table)");
    }
    m_mapped = Cuda::PinnedHostMemory(p, Cuda::HostFree{m_api});
    if (const CUresult r = m_api->cuMemHostGetDevicePointer(&m_mappedDev, p, 0); r != CUDA_SUCCESS) {
        m_mapped.reset();
        return m_api->error(r, "cuMemHostGetDevicePointer (guard table)");
    }
    m_mappedGuards = guards;
    return Unit{};
}

Status GuardZonesDevice::writeTable(const std::vector<Zone> &zones, bool resetFlags)
{
    static_assert(G == 4096, "kpg_guard_check and kpg_guard_fill cover 4 KiB per guard with 256 threads");
    const qint64 guards = qint64(zones.size()) * 2;
    if (Status s = ensureMapped(guards); !s) {
        return s;
    }
    // Only ever written between a synchronisation and the next launch (or
    // with the values a running kernel already reads: fill, then the first
    // step's check, with the same buffers).
    auto *table = static_cast<quint64 *>(m_mapped.get());
    auto *flags = reinterpret_cast<volatile quint32 *>(table + guards);
    for (size_t i = 0; i < zones.size(); ++i) {
        table[2 * i] = zones[i].base;
        table[2 * i + 1] = zones[i].base + CUdeviceptr(G + zones[i].bytes);
        if (resetFlags) {
            // Neither answer: a comparison that did not run is never "clean".
            flags[2 * i] = 2;
            flags[2 * i + 1] = 2;
        }
    }
    return Unit{};
}

Status GuardZonesDevice::enqueueCheck(CUstream stream, const std::vector<Zone> &zones)
{
    CostTimer cost(&m_costMs);
    m_enqueued = false;
    if (!m_checkKernel || zones.empty()) {
        return Unit{};
    }
    if (Status s = writeTable(zones, true); !s) {
        return s;
    }
    const qint64 guards = qint64(zones.size()) * 2;
    CUdeviceptr tableDev = m_mappedDev;
    CUdeviceptr flagsDev = m_mappedDev + CUdeviceptr(guards * 8);
    quint32 pattern = Guard::kPattern;
    void *params[] = {&tableDev, &pattern, &flagsDev};
    if (const CUresult r =
            m_api->cuLaunchKernel(m_checkKernel, unsigned(guards), 1, 1, 256, 1, 1, 0, stream, params, nullptr);
        r != CUDA_SUCCESS) {
        return m_api->error(r, "cuLaunchKernel (guard check)");
    }
    m_enqueued = true;
    return Unit{};
}

Status GuardZonesDevice::collect(CUstream stream, const std::vector<Zone> &zones, QList<GuardViolation> *found,
                                 QList<int> *zoneIndex)
{
    CostTimer cost(&m_costMs);
    const qint64 guards = qint64(zones.size()) * 2;
    std::vector<int> look;
    if (!m_enqueued || guards > m_mappedGuards) {
        // No comparison ran on the device: every guard is copied back and compared here.
        for (qint64 g = 0; g < guards; ++g) {
            look.push_back(int(g));
        }
    } else {
        const auto *flags = reinterpret_cast<const volatile quint32 *>(static_cast<quint64 *>(m_mapped.get()) + guards);
        for (qint64 g = 0; g < guards; ++g) {
            if (flags[g] != 0) {
                look.push_back(int(g));
            }
        }
    }
    m_enqueued = false;
    if (look.empty()) {
        return Unit{};
    }
    return copyBackAndScan(stream, zones, look, found, zoneIndex);
}

Status GuardZonesDevice::check(CUstream stream, const std::vector<Zone> &zones, QList<GuardViolation> *found,
                               QList<int> *zoneIndex)
{
    if (Status s = enqueueCheck(stream, zones); !s) {
        return s;
    }
    if (m_enqueued) {
        CostTimer cost(&m_costMs);
        if (const CUresult r = m_api->cuStreamSynchronize(stream); r != CUDA_SUCCESS) {
            return m_api->error(r, "cuStreamSynchronize (guard check)");
        }
    }
    return collect(stream, zones, found, zoneIndex);
}

Status GuardZonesDevice::copyBackAndScan(CUstream stream, const std::vector<Zone> &zones,
                                         const std::vector<int> &guards, QList<GuardViolation> *found,
                                         QList<int> *zoneIndex)
{
    if (Status s = ensurePinned(qint64(guards.size()) * G); !s) {
        return s;
    }
    const auto addressOf = [&zones](int g) {
        const Zone &z = zones[size_t(g / 2)];
        return g % 2 == 0 ? z.base : z.base + CUdeviceptr(G + z.bytes);
    };
    auto *staging = static_cast<uchar *>(m_staging.get());
    for (size_t k = 0; k < guards.size(); ++k) {
        if (const CUresult r =
                m_api->cuMemcpyDtoHAsync(staging + k * size_t(G), addressOf(guards[k]), size_t(G), stream);
            r != CUDA_SUCCESS) {
            return m_api->error(r, "cuMemcpyDtoHAsync (guard check)");
        }
    }
    if (const CUresult r = m_api->cuStreamSynchronize(stream); r != CUDA_SUCCESS) {
        return m_api->error(r, "cuStreamSynchronize (guard check)");
    }
    for (size_t k = 0; k < guards.size(); ++k) {
        const int g = guards[k];
        const Zone &z = zones[size_t(g / 2)];
        const auto change = Guard::scanGuard(staging + k * size_t(G), G);
        if (!change) {
            continue;
        }
        found->append(guardViolation(g % 2 == 0 ? GuardViolation::Side::Before : GuardViolation::Side::After, *change,
                                     z.bytes, z.elementBytes));
        zoneIndex->append(g / 2);
        if (const CUresult r = m_api->cuMemcpyHtoDAsync(addressOf(g), m_pattern.get(), size_t(G), stream);
            r != CUDA_SUCCESS) {
            return m_api->error(r, "cuMemcpyHtoDAsync (guard refill)");
        }
    }
    return Unit{};
}

} // namespace Kp
