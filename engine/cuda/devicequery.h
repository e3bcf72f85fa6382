#pragma once

#include "core/result.h"
#include "cuda/deviceinfo.h"

namespace Kp {

/**
 * Asks the driver. Only kpg-worker calls this (it uses DriverApi, and lives
 * in kpg_worker_lib, which nothing else links); everyone else asks the
 * worker through EngineClient::listDevices(). Any thread of the worker.
 */
Result<DeviceList> queryDevices();

} // namespace Kp
