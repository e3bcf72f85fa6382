#pragma once

#include "core/result.h"

#include <cuda.h>

namespace Kp {

// The driver functions kpg-worker uses. cuda.h renames many of them with
// macros (cuDeviceTotalMem -> cuDeviceTotalMem_v2); both the member names and
// the strings given to dlsym go through the same macros, so each pointer is
// bound to the ABI version these headers declare.
#define KP_CUDA_DRIVER_FUNCTIONS(X)                                                                                    \
    X(cuInit)                                                                                                          \
    X(cuDriverGetVersion)                                                                                              \
    X(cuGetErrorName)                                                                                                  \
    X(cuGetErrorString)                                                                                                \
    X(cuDeviceGetCount)                                                                                                \
    X(cuDeviceGet)                                                                                                     \
    X(cuDeviceGetName)                                                                                                 \
    X(cuDeviceGetUuid)                                                                                                 \
    X(cuDeviceGetPCIBusId)                                                                                             \
    X(cuDeviceTotalMem)                                                                                                \
    X(cuDeviceGetAttribute)                                                                                            \
    X(cuDevicePrimaryCtxRetain)                                                                                        \
    X(cuDevicePrimaryCtxRelease)                                                                                       \
    X(cuCtxSetCurrent)                                                                                                 \
    X(cuCtxSynchronize)                                                                                                \
    X(cuCtxSetLimit)                                                                                                   \
    X(cuModuleLoadData)                                                                                                \
    X(cuModuleUnload)                                                                                                  \
    X(cuModuleGetGlobal)                                                                                               \
    X(cuModuleGetFunction)                                                                                             \
    X(cuFuncGetAttribute)                                                                                              \
    X(cuFuncSetAttribute)                                                                                              \
    X(cuMemAlloc)                                                                                                      \
    X(cuMemFree)                                                                                                       \
    X(cuMemGetInfo)                                                                                                    \
    X(cuMemHostRegister)                                                                                               \
    X(cuMemHostUnregister)                                                                                             \
    X(cuMemHostAlloc)                                                                                                  \
    X(cuMemFreeHost)                                                                                                   \
    X(cuMemHostGetDevicePointer)                                                                                       \
    X(cuMemcpyHtoDAsync)                                                                                               \
    X(cuMemcpyDtoHAsync)                                                                                               \
    X(cuMemcpyDtoDAsync)                                                                                               \
    X(cuMemsetD8Async)                                                                                                 \
    X(cuStreamCreate)                                                                                                  \
    X(cuStreamDestroy)                                                                                                 \
    X(cuStreamQuery)                                                                                                   \
    X(cuStreamSynchronize)                                                                                             \
    X(cuEventCreate)                                                                                                   \
    X(cuEventDestroy)                                                                                                  \
    X(cuEventRecord)                                                                                                   \
    X(cuEventQuery)                                                                                                    \
    X(cuEventSynchronize)                                                                                              \
    X(cuEventElapsedTime)                                                                                              \
    X(cuLaunchKernel)                                                                                                  \
    X(cuLaunchCooperativeKernel)                                                                                       \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                                                     \
    X(cuStreamWaitEvent)                                                                                               \
    X(cuStreamCreateWithPriority)                                                                                      \
    X(cuCtxGetStreamPriorityRange)                                                                                     \
    X(cuStreamBeginCapture)                                                                                            \
    X(cuStreamEndCapture)                                                                                              \
    X(cuGraphInstantiateWithFlags)                                                                                     \
    X(cuGraphLaunch)                                                                                                   \
    X(cuGraphExecDestroy)                                                                                              \
    X(cuGraphDestroy)                                                                                                  \
    X(cuArray3DCreate)                                                                                                 \
    X(cuArrayDestroy)                                                                                                  \
    X(cuMemcpy3DAsync)                                                                                                 \
    X(cuTexObjectCreate)                                                                                               \
    X(cuTexObjectDestroy)                                                                                              \
    X(cuSurfObjectCreate)                                                                                              \
    X(cuSurfObjectDestroy)

/**
 * The CUDA driver API, opened at run time with dlopen so that every program
 * starts on a machine without a driver. Only kpg-worker may use it: a kernel
 * fault poisons the process that owns the context (docs/ARCHITECTURE.md).
 *
 * The library is libcuda.so.1, or the file named by the environment variable
 * KPG_CUDA_DRIVER (tests point it at a missing file to act out "no driver").
 */
class DriverApi
{
public:
    /**
     * Opens the driver and calls cuInit(0) once per process; later calls
     * return the same object or the same error. Thread-safe. The object lives
     * until the process exits.
     */
    static Result<const DriverApi *> instance();

    /** An Error for a failed call, with the driver's own name and text for the code. */
    Error error(CUresult result, const char *apiCall) const;

    QString libraryPath;   ///< the file that was opened
    int driverVersion = 0; ///< e.g. 13000 for CUDA 13.0

#define KP_DECLARE_MEMBER(name) decltype(&::name) name = nullptr;
    KP_CUDA_DRIVER_FUNCTIONS(KP_DECLARE_MEMBER)
#undef KP_DECLARE_MEMBER
    /** Optional (driver 550+): the compiled kernel's own parameter layout; null when absent. */
    decltype(&::cuFuncGetParamInfo) cuFuncGetParamInfo = nullptr;

private:
    DriverApi() = default;
    static Result<const DriverApi *> load();
};

} // namespace Kp
