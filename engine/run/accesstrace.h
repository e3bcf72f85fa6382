#pragma once

#include "core/result.h"
#include "cuda/handles.h"

#include <QByteArray>

#include <cuda.h>

namespace Kp {

class DriverApi;

/**
 * The device half of the memory-access map (access/ptxinstrument.h), inside
 * kpg-worker: gives an instrumented module somewhere to write its records
 * (the module's __kpg_access_buf/_cap/_count globals, set with
 * cuModuleGetGlobal), reads the record counter between steps and copies the
 * records back after the run. One per run; the buffer is freed with it.
 */
class AccessTraceDevice
{
public:
    explicit AccessTraceDevice(const DriverApi *api)
        : m_api(api)
    {
    }

    /** Allocates room for capacity records and points module's trace globals at it (count 0). */
    Status arm(CUmodule module, qint64 capacity, CUstream stream);
    /**
     * Records only while on: off sets the module's capacity to 0 (the records
     * are counted, not written), on restores it and starts the count again, so
     * the trace holds one step's launch. Synchronises stream.
     */
    Status record(bool on, CUstream stream);
    /** Records the module asked for so far (past the capacity they are only counted); synchronises stream. */
    Result<qint64> requested(CUstream stream) const;
    /** The records written, whole: the first min(requested, capacity); synchronises stream. */
    Result<QByteArray> collect(qint64 requested, CUstream stream) const;
    /** Lets go of the memory without freeing it (a poisoned context). */
    void abandon() noexcept { (void)m_records.release(); }

private:
    Error cudaError(CUresult r, const char *call) const;

    const DriverApi *m_api;
    Cuda::DeviceMemory m_records;
    CUdeviceptr m_count = 0;
    CUdeviceptr m_capacitySlot = 0;
    qint64 m_capacity = 0;
};

} // namespace Kp
