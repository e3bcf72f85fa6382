#pragma once

#include "core/result.h"
#include "cuda/handles.h"
#include "run/guardzones.h"

#include <cuda.h>

#include <vector>

namespace Kp {

class DriverApi;

/**
 * The device half of the guard zones (run/guardzones.h), inside kpg-worker:
 * fills each allocation's two guards from a pinned copy of the pattern and
 * reads them back into pinned staging memory after a step, both on the run's
 * stream, so a check is two small copies per buffer and one synchronisation.
 * A changed guard is filled again, so the next check reports only new writes.
 */
class GuardZonesDevice
{
public:
    /** One allocation: kGuardBytes, then the buffer's bytes, then kGuardBytes. */
    struct Zone
    {
        CUdeviceptr base = 0; ///< the allocation's start (the buffer starts kGuardBytes later)
        qint64 bytes = 0;     ///< the buffer's size
        int elementBytes = 1;
    };

    void setApi(const DriverApi *api) { m_api = api; }

    /** Queues the pattern into both guards of every zone. */
    Status fill(CUstream stream, const std::vector<Zone> &zones);
    /**
     * Copies every guard back (after the work queued before it), waits, and
     * appends a violation per changed guard with side, bytes and elements set;
     * index is the zone's position. Changed guards are filled again.
     */
    Status check(CUstream stream, const std::vector<Zone> &zones, QList<GuardViolation> *found, QList<int> *zoneIndex);

    /** Host milliseconds spent in fill() and check() since the last resetCost(). */
    double costMs() const { return m_costMs; }
    void resetCost() { m_costMs = 0; }
    /** Lets go of the pinned memory without freeing it (a poisoned context; see GpuSession). */
    void abandon() noexcept
    {
        (void)m_pattern.release();
        (void)m_staging.release();
    }

private:
    Status ensurePinned(qint64 stagingBytes);

    const DriverApi *m_api = nullptr;
    Cuda::PinnedHostMemory m_pattern;
    Cuda::PinnedHostMemory m_staging;
    qint64 m_stagingBytes = 0;
    double m_costMs = 0;
};

} // namespace Kp
