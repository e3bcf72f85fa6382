#pragma once

#include "core/result.h"
#include "cuda/driverapi.h"
#include "cuda/handles.h"

#include <utility>
#include <vector>

namespace Kp {

/**
 * Device copies of some buffers as they were uploaded, copied back before
 * every warm-up and timing sample ("timing.resetBeforeEachSample",
 * docs/kpg-project.md): a kernel that consumes its input (an atomic counter,
 * an in-place sort) then sees the same input in every sample. The copies are
 * device to device and queued before the sample's start event, so they are
 * never timed. Lives in kpg-worker; one thread.
 */
class SampleReset
{
public:
    /**
     * Frees the copies of the last run and copies `bytes` at each address into
     * fresh device memory on stream, ordered after the upload queued there.
     */
    Status snapshot(const DriverApi &api, CUstream stream, const std::vector<std::pair<CUdeviceptr, qint64>> &buffers);
    /** Queues the copies back onto dst (one address per snapshot buffer, in order) on stream. */
    Status restore(CUstream stream, const std::vector<CUdeviceptr> &dst) const;
    bool empty() const { return m_copies.empty(); }
    void clear();

private:
    const DriverApi *m_api = nullptr;
    std::vector<Cuda::DeviceMemory> m_copies;
    std::vector<qint64> m_bytes;
};

} // namespace Kp
