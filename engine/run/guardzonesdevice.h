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
 * fills each allocation's two guards from a pinned copy of the pattern, and
 * after a step compares them with it on the device (kpg_guard_check, one
 * launch writing a flag per guard into mapped pinned memory, and one
 * synchronisation); only a changed guard is copied back, to find which bytes
 * changed, and filled again, so the next check reports only new writes.
 * Without the check kernel every guard is copied back and compared here.
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
    /** kpg_guard_check and kpg_guard_fill of the session's own module (gpusession.cpp); nullptr: on the host. */
    void setKernels(CUfunction check, CUfunction fill)
    {
        m_checkKernel = check;
        m_fillKernel = fill;
    }

    /** Queues the pattern into both guards of every zone. */
    Status fill(CUstream stream, const std::vector<Zone> &zones);
    /**
     * Copies every guard back (after the work queued before it), waits, and
     * appends a violation per changed guard with side, bytes and elements set;
     * index is the zone's position. Changed guards are filled again.
     */
    Status check(CUstream stream, const std::vector<Zone> &zones, QList<GuardViolation> *found, QList<int> *zoneIndex);
    /**
     * check() in two halves, so the comparison can ride on a synchronisation
     * the caller makes anyway: enqueueCheck() queues the comparison kernel;
     * after the stream has been synchronised, collect() reads its flags
     * (and copies back only changed guards). Without the kernel, collect()
     * does the whole check.
     */
    Status enqueueCheck(CUstream stream, const std::vector<Zone> &zones);
    Status collect(CUstream stream, const std::vector<Zone> &zones, QList<GuardViolation> *found,
                   QList<int> *zoneIndex);

    /** Host milliseconds spent in fill(), check(), enqueueCheck() and collect() since the last resetCost(). */
    double costMs() const { return m_costMs; }
    void resetCost() { m_costMs = 0; }
    /** Lets go of the pinned memory without freeing it (a poisoned context; see GpuSession). */
    void abandon() noexcept
    {
        (void)m_pattern.release();
        (void)m_staging.release();
        (void)m_mapped.release();
    }

private:
    Status ensurePinned(qint64 stagingBytes);
    /** Mapped pinned memory for the guard table and flags of `guards` guards. */
    Status ensureMapped(qint64 guards);
    /** Writes the guards' addresses into the mapped table (and, resetFlags, the flags to "no answer"). */
    Status writeTable(const std::vector<Zone> &zones, bool resetFlags);
    /** Copies guards back and scans them on the host (all, or those whose flag is set). */
    Status copyBackAndScan(CUstream stream, const std::vector<Zone> &zones, const std::vector<int> &guards,
                           QList<GuardViolation> *found, QList<int> *zoneIndex);

    const DriverApi *m_api = nullptr;
    Cuda::PinnedHostMemory m_pattern;
    Cuda::PinnedHostMemory m_staging;
    qint64 m_stagingBytes = 0;
    CUfunction m_checkKernel = nullptr;
    CUfunction m_fillKernel = nullptr;
    bool m_enqueued = false;         ///< a comparison is queued and collect() may read its flags
    Cuda::PinnedHostMemory m_mapped; ///< guards' addresses (u64 each), then their flags (u32 each)
    CUdeviceptr m_mappedDev = 0;
    qint64 m_mappedGuards = 0;
    double m_costMs = 0;
};

} // namespace Kp
