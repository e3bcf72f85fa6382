#pragma once

#include "core/result.h"

#include <QString>

#include <cuda.h>

namespace Kp {

class DriverApi;

/**
 * The device address of a module's __constant__ or __device__ variable
 * that a buffer with "symbol" stands for (cuModuleGetGlobal), with its size
 * checked against the buffer's: the engine checked both from the PTX, this
 * is the loaded module's word. kpg-worker only; its one thread.
 */
Result<CUdeviceptr> moduleGlobal(const DriverApi &api, CUmodule module, const QString &symbol, qint64 bytes,
                                 const QString &buffer);

} // namespace Kp
