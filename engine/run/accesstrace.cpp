#include "run/accesstrace.h"

#include "access/ptxinstrument.h"
#include "cuda/driverapi.h"

#include <algorithm>

namespace Kp {

using namespace AccessTraceLayout;

Error AccessTraceDevice::cudaError(CUresult r, const char *call) const
{
    Error e = m_api->error(r, call);
    e.where = QStringLiteral("kpg-worker");
    return e;
}

Status AccessTraceDevice::arm(CUmodule module, qint64 capacity, CUstream stream)
{
    if (capacity <= 0) {
        return Error{QStringLiteral("kpg-worker"), Error::Code::Usage, QString(),
                     QStringLiteral("the memory-access trace needs room for at least one record")};
    }
    CUdeviceptr globals[3] = {};
    const char *names[3] = {kBufferSymbol, kCapacitySymbol, kCountSymbol};
    for (int i = 0; i < 3; ++i) {
        size_t bytes = 0;
        const CUresult r = m_api->cuModuleGetGlobal(&globals[i], &bytes, module, names[i]);
        if (r == CUDA_ERROR_NOT_FOUND) {
            return Error{QStringLiteral("kpg-worker"), Error::Code::Usage, QStringLiteral("cuModuleGetGlobal"),
                         QStringLiteral("the module has no %1: it was not instrumented for the memory-access map")
                             .arg(QLatin1String(names[i]))};
        }
        if (r != CUDA_SUCCESS) {
            return cudaError(r, "cuModuleGetGlobal");
        }
        if (bytes != sizeof(quint64)) {
            return Error{QStringLiteral("kpg-worker"), Error::Code::Usage, QString(),
                         QStringLiteral("%1 is %2 bytes, not 8").arg(QLatin1String(names[i])).arg(bytes)};
        }
    }
    CUdeviceptr records = 0;
    const size_t bytes = size_t(capacity) * size_t(kRecordBytes);
    if (const CUresult r = m_api->cuMemAlloc(&records, bytes); r != CUDA_SUCCESS) {
        Error e = cudaError(r, "cuMemAlloc");
        e.message = QStringLiteral("the memory-access trace's %1 MiB (%2 records) did not fit on the GPU: %3")
                        .arg(double(bytes) / (1 << 20), 0, 'f', 1)
                        .arg(capacity)
                        .arg(e.message);
        return e;
    }
    m_records = Cuda::DeviceMemory(Cuda::DevicePointer(records), Cuda::DeviceFree{m_api});
    m_count = globals[2];
    m_capacitySlot = globals[1];
    m_capacity = capacity;
    // The values must stay alive until the copies ran: synchronise before returning.
    const quint64 values[3] = {quint64(records), quint64(capacity), 0};
    for (int i = 0; i < 3; ++i) {
        if (const CUresult r = m_api->cuMemcpyHtoDAsync(globals[i], &values[i], sizeof(quint64), stream);
            r != CUDA_SUCCESS) {
            return cudaError(r, "cuMemcpyHtoDAsync");
        }
    }
    if (const CUresult r = m_api->cuStreamSynchronize(stream); r != CUDA_SUCCESS) {
        return cudaError(r, "cuStreamSynchronize");
    }
    return Unit{};
}

Status AccessTraceDevice::record(bool on, CUstream stream)
{
    const quint64 capacity = on ? quint64(m_capacity) : 0;
    const quint64 zero = 0;
    if (const CUresult r = m_api->cuMemcpyHtoDAsync(m_capacitySlot, &capacity, sizeof capacity, stream);
        r != CUDA_SUCCESS) {
        return cudaError(r, "cuMemcpyHtoDAsync");
    }
    if (on) {
        if (const CUresult r = m_api->cuMemcpyHtoDAsync(m_count, &zero, sizeof zero, stream); r != CUDA_SUCCESS) {
            return cudaError(r, "cuMemcpyHtoDAsync");
        }
    }
    // The values live on this stack frame: the copies must be done before it goes.
    if (const CUresult r = m_api->cuStreamSynchronize(stream); r != CUDA_SUCCESS) {
        return cudaError(r, "cuStreamSynchronize");
    }
    return Unit{};
}

Result<qint64> AccessTraceDevice::requested(CUstream stream) const
{
    quint64 count = 0;
    if (const CUresult r = m_api->cuMemcpyDtoHAsync(&count, m_count, sizeof count, stream); r != CUDA_SUCCESS) {
        return cudaError(r, "cuMemcpyDtoHAsync");
    }
    if (const CUresult r = m_api->cuStreamSynchronize(stream); r != CUDA_SUCCESS) {
        return cudaError(r, "cuStreamSynchronize");
    }
    return qint64(count);
}

Result<QByteArray> AccessTraceDevice::collect(qint64 requested, CUstream stream) const
{
    QByteArray out(qsizetype(std::clamp<qint64>(requested, 0, m_capacity)) * kRecordBytes, Qt::Uninitialized);
    if (out.isEmpty()) {
        return out;
    }
    if (const CUresult r = m_api->cuMemcpyDtoHAsync(out.data(), Cuda::address(m_records), size_t(out.size()), stream);
        r != CUDA_SUCCESS) {
        return cudaError(r, "cuMemcpyDtoHAsync");
    }
    if (const CUresult r = m_api->cuStreamSynchronize(stream); r != CUDA_SUCCESS) {
        return cudaError(r, "cuStreamSynchronize");
    }
    return out;
}

} // namespace Kp
