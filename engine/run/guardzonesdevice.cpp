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

Status GuardZonesDevice::check(CUstream stream, const std::vector<Zone> &zones, QList<GuardViolation> *found,
                               QList<int> *zoneIndex)
{
    CostTimer cost(&m_costMs);
    if (Status s = ensurePinned(qint64(zones.size()) * 2 * G); !s) {
        return s;
    }
    auto *staging = static_cast<uchar *>(m_staging.get());
    for (size_t i = 0; i < zones.size(); ++i) {
        const Zone &z = zones[i];
        const CUdeviceptr at[2] = {z.base, z.base + CUdeviceptr(G + z.bytes)};
        for (int side = 0; side < 2; ++side) {
            if (const CUresult r =
                    m_api->cuMemcpyDtoHAsync(staging + (2 * i + size_t(side)) * size_t(G), at[side], size_t(G), stream);
                r != CUDA_SUCCESS) {
                return m_api->error(r, "cuMemcpyDtoHAsync (guard check)");
            }
        }
    }
    if (const CUresult r = m_api->cuStreamSynchronize(stream); r != CUDA_SUCCESS) {
        return m_api->error(r, "cuStreamSynchronize (guard check)");
    }
    for (size_t i = 0; i < zones.size(); ++i) {
        const Zone &z = zones[i];
        for (int side = 0; side < 2; ++side) {
            const uchar *guard = staging + (2 * i + size_t(side)) * size_t(G);
            const auto change = Guard::scanGuard(guard, G);
            if (!change) {
                continue;
            }
            found->append(guardViolation(side == 0 ? GuardViolation::Side::Before : GuardViolation::Side::After,
                                         *change, z.bytes, z.elementBytes));
            zoneIndex->append(int(i));
            const CUdeviceptr at = side == 0 ? z.base : z.base + CUdeviceptr(G + z.bytes);
            if (const CUresult r = m_api->cuMemcpyHtoDAsync(at, m_pattern.get(), size_t(G), stream);
                r != CUDA_SUCCESS) {
                return m_api->error(r, "cuMemcpyHtoDAsync (guard refill)");
            }
        }
    }
    return Unit{};
}

} // namespace Kp
