#pragma once

#include "core/result.h"
#include "cuda/handles.h"
#include "run/runrequest.h"
#include "run/texturedesc.h"

#include <QList>

#include <cuda.h>

#include <memory>
#include <utility>
#include <vector>

namespace Kp {

class DriverApi;

/**
 * The texture and surface objects of one run (RunRequest::textures), inside
 * kpg-worker: a CUDA array per "array" binding, copied from its buffer's
 * device memory when the buffer may have changed since the last copy, and a
 * surface's array copied back into the buffer after every launch that binds
 * it, so the buffer shows what the kernel wrote. "linear" and "pitched"
 * objects read the buffer in place: one object per address the buffer has
 * had (swaps move it). Owned by GpuSession for the length of one run; the
 * objects and arrays are destroyed with it. Single-threaded: the worker's
 * one thread, with the run's context current.
 */
class TextureBindings
{
public:
    explicit TextureBindings(const DriverApi *api);
    ~TextureBindings();
    TextureBindings(const TextureBindings &) = delete;
    TextureBindings &operator=(const TextureBindings &) = delete;

    /** The device's limits, from cuDeviceGetAttribute. */
    static TextureLimits deviceLimits(const DriverApi &api, CUdevice device);

    /**
     * Checks every binding against the buffer sizes and the device's limits,
     * and makes the arrays and the objects over them. bufferBytes: the size
     * of each request buffer. The first bad binding is the error, naming its
     * field.
     */
    Status setup(const QList<RunTexture> &textures, const QList<qint64> &bufferBytes, const TextureLimits &limits);

    /** The buffer (request index) binding t is made over. */
    int buffer(int t) const { return m_entries[size_t(t)].texture.buffer; }

    /**
     * The handle to pass for binding t, whose buffer lives at address now:
     * queues the copy of the buffer into the array on stream first when the
     * array is stale, or makes the in-place object for this address.
     */
    Result<unsigned long long> prepare(int t, CUdeviceptr address, CUstream stream);
    /** After a launch: a surface's array is copied back into the buffer at address. */
    Status writeBack(int t, CUdeviceptr address, CUstream stream);
    /** A launch may have written the buffer at address: arrays copied from it are stale. */
    void written(CUdeviceptr address);
    /** Every array is stale (buffers were restored, filled or copied behind the launches' back). */
    void invalidate();
    /** On: every launch copies its arrays again (streams and graphs, where the order is not one sequence). */
    void setAlwaysCopy(bool on) { m_alwaysCopy = on; }
    /** Lets go of every object without destroying it: a poisoned context is torn down by the process exit. */
    void abandon() noexcept;

private:
    struct Entry
    {
        RunTexture texture;
        TextureDescriptors desc;
        Cuda::Array array;
        Cuda::TexObject arrayTexture;                                 ///< a texture over array
        Cuda::SurfObject surface;                                     ///< a surface over array
        std::vector<std::pair<CUdeviceptr, Cuda::TexObject>> inPlace; ///< linear / pitched: one per address
        CUdeviceptr copiedFrom = 0; ///< the address array was last copied from (or written back to)
        bool fresh = false;         ///< array equals the buffer at copiedFrom
    };
    Error driverError(CUresult r, const char *call, const Entry &e) const;
    CUDA_MEMCPY3D copyDesc(const Entry &e, CUdeviceptr address, bool toArray) const;

    const DriverApi *m_api;
    std::vector<Entry> m_entries;
    TextureLimits m_limits;
    bool m_alwaysCopy = false;
};

} // namespace Kp
