#pragma once

#include "cuda/driverapi.h"

#include <cstddef>
#include <memory>

// Move-only owners of the driver objects kpg-worker creates, so that a
// GpuSession frees everything by construction, in the reverse order of its
// members, on every path (the idea of nvbench's cuda_stream.cuh). Each deleter
// keeps the DriverApi it came from (the process-wide instance) and ignores the
// driver's answer: a destructor cannot report, and a failing free means the
// context is gone anyway. All of them: kpg-worker only (kpg_worker_lib), on
// the thread whose current context owns the object.

namespace Kp::Cuda {

/** Releases a primary context retained with cuDevicePrimaryCtxRetain. */
struct PrimaryContextRelease
{
    const DriverApi *api = nullptr;
    CUdevice device = 0;
    void operator()(CUcontext) const noexcept
    {
        if (api) {
            api->cuDevicePrimaryCtxRelease(device);
        }
    }
};
/** The device's primary context, retained; released (not destroyed: it is shared) when the owner goes. */
using PrimaryContext = std::unique_ptr<CUctx_st, PrimaryContextRelease>;

struct StreamDestroy
{
    const DriverApi *api = nullptr;
    void operator()(CUstream s) const noexcept
    {
        if (api) {
            api->cuStreamDestroy(s);
        }
    }
};
/** A stream from cuStreamCreate. */
using Stream = std::unique_ptr<CUstream_st, StreamDestroy>;

struct EventDestroy
{
    const DriverApi *api = nullptr;
    void operator()(CUevent e) const noexcept
    {
        if (api) {
            api->cuEventDestroy(e);
        }
    }
};
/** An event from cuEventCreate. */
using Event = std::unique_ptr<CUevent_st, EventDestroy>;

struct ModuleUnload
{
    const DriverApi *api = nullptr;
    void operator()(CUmodule m) const noexcept
    {
        if (api) {
            api->cuModuleUnload(m);
        }
    }
};
/** A module from cuModuleLoadData; its CUfunctions are valid while it lives. */
using Module = std::unique_ptr<CUmod_st, ModuleUnload>;

struct HostFree
{
    const DriverApi *api = nullptr;
    void operator()(void *p) const noexcept
    {
        if (api) {
            api->cuMemFreeHost(p);
        }
    }
};
/** Pinned host memory from cuMemHostAlloc. */
using PinnedHostMemory = std::unique_ptr<void, HostFree>;

struct HostUnregister
{
    const DriverApi *api = nullptr;
    void operator()(void *p) const noexcept
    {
        if (api) {
            api->cuMemHostUnregister(p);
        }
    }
};
/**
 * Host memory pinned with cuMemHostRegister; unregistered when the owner
 * goes. It does not own the memory itself, which must outlive it.
 */
using HostRegistration = std::unique_ptr<void, HostUnregister>;

/** A CUdeviceptr (an integer) dressed as the nullable pointer std::unique_ptr needs. */
struct DevicePointer
{
    CUdeviceptr address = 0;

    DevicePointer() = default;
    DevicePointer(std::nullptr_t) noexcept {}
    explicit DevicePointer(CUdeviceptr a) noexcept
        : address(a)
    {
    }
    explicit operator bool() const noexcept { return address != 0; }
    friend bool operator==(DevicePointer, DevicePointer) = default;
    friend bool operator==(DevicePointer p, std::nullptr_t) noexcept { return p.address == 0; }
};

struct DeviceFree
{
    using pointer = DevicePointer;
    const DriverApi *api = nullptr;
    void operator()(DevicePointer p) const noexcept
    {
        if (api) {
            api->cuMemFree(p.address);
        }
    }
};
/** Device memory from cuMemAlloc. */
using DeviceMemory = std::unique_ptr<DevicePointer, DeviceFree>;

/** The device address of an allocation (0 when empty). */
inline CUdeviceptr address(const DeviceMemory &m) noexcept
{
    return m.get().address;
}

struct ArrayDestroy
{
    const DriverApi *api = nullptr;
    void operator()(CUarray a) const noexcept
    {
        if (api) {
            api->cuArrayDestroy(a);
        }
    }
};
/** A CUDA array from cuArray3DCreate (the storage of a texture or surface). */
using Array = std::unique_ptr<CUarray_st, ArrayDestroy>;

/** A texture or surface object (a 64-bit integer) dressed as the nullable pointer std::unique_ptr needs. */
struct ObjectHandle
{
    unsigned long long value = 0;

    ObjectHandle() = default;
    ObjectHandle(std::nullptr_t) noexcept {}
    explicit ObjectHandle(unsigned long long v) noexcept
        : value(v)
    {
    }
    explicit operator bool() const noexcept { return value != 0; }
    friend bool operator==(ObjectHandle, ObjectHandle) = default;
    friend bool operator==(ObjectHandle h, std::nullptr_t) noexcept { return h.value == 0; }
};

struct TexObjectDestroy
{
    using pointer = ObjectHandle;
    const DriverApi *api = nullptr;
    void operator()(ObjectHandle h) const noexcept
    {
        if (api) {
            api->cuTexObjectDestroy(h.value);
        }
    }
};
/** A texture object from cuTexObjectCreate. */
using TexObject = std::unique_ptr<ObjectHandle, TexObjectDestroy>;

struct SurfObjectDestroy
{
    using pointer = ObjectHandle;
    const DriverApi *api = nullptr;
    void operator()(ObjectHandle h) const noexcept
    {
        if (api) {
            api->cuSurfObjectDestroy(h.value);
        }
    }
};
/** A surface object from cuSurfObjectCreate. */
using SurfObject = std::unique_ptr<ObjectHandle, SurfObjectDestroy>;

} // namespace Kp::Cuda
