#include "samplereset.h"

namespace Kp {

namespace {
Error resetError(const DriverApi &api, CUresult r, const char *call)
{
    Error e = api.error(r, call);
    e.where = QStringLiteral("kpg-worker");
    e.message = QStringLiteral("restoring buffers before each sample: %1").arg(e.message);
    return e;
}
} // namespace

void SampleReset::clear()
{
    m_copies.clear();
    m_bytes.clear();
}

Status SampleReset::snapshot(const DriverApi &api, CUstream stream,
                             const std::vector<std::pair<CUdeviceptr, qint64>> &buffers)
{
    clear();
    m_api = &api;
    for (const auto &[src, bytes] : buffers) {
        CUdeviceptr copy = 0;
        const size_t n = static_cast<size_t>(qMax<qint64>(bytes, 1));
        if (const CUresult r = api.cuMemAlloc(&copy, n); r != CUDA_SUCCESS) {
            clear();
            return resetError(api, r, "cuMemAlloc");
        }
        m_copies.emplace_back(Cuda::DevicePointer(copy), Cuda::DeviceFree{&api});
        m_bytes.push_back(bytes);
        if (bytes > 0) {
            if (const CUresult r = api.cuMemcpyDtoDAsync(copy, src, static_cast<size_t>(bytes), stream);
                r != CUDA_SUCCESS) {
                clear();
                return resetError(api, r, "cuMemcpyDtoDAsync");
            }
        }
    }
    return Unit{};
}

Status SampleReset::restore(CUstream stream, const std::vector<CUdeviceptr> &dst) const
{
    for (size_t i = 0; i < m_copies.size() && i < dst.size(); ++i) {
        if (m_bytes[i] <= 0) {
            continue;
        }
        if (const CUresult r =
                m_api->cuMemcpyDtoDAsync(dst[i], Cuda::address(m_copies[i]), static_cast<size_t>(m_bytes[i]), stream);
            r != CUDA_SUCCESS) {
            return resetError(*m_api, r, "cuMemcpyDtoDAsync");
        }
    }
    return Unit{};
}

} // namespace Kp
