#pragma once

// GpuSession's resolved step, shared by gpusession.cpp and streamexec.cpp
// (the streams' part of a run); not for anything else.

#include "run/gpusession.h"

namespace Kp {

/**
 * A step's theoretical occupancy with the driver's answer
 * (cuOccupancyMaxActiveBlocksPerMultiprocessor) where it gives one; used by
 * the one-stream path (gpusession.cpp) and the streams path (streamexec.cpp).
 */
Occupancy stepOccupancy(const DriverApi &api, CUfunction function, const LaunchLimits &limits, int threads,
                        qint64 shared);

struct GpuSession::Step
{
    QString kernel;
    QString lowered;
    QString label; ///< "step 1 ('vector_add')"
    CUfunction function = nullptr;
    Dim3 grid{1, 1, 1};
    Dim3 block{1, 1, 1};
    qint64 shared = 0;
    bool cooperative = false; ///< cuLaunchCooperativeKernel (grid.sync()); the grid was checked to be resident
    struct Arg
    {
        int buffer = -1;     ///< >= 0: pointer to that buffer (+ offset)
        qint64 offset = 0;   ///< bytes
        QByteArray value;    ///< a by-value argument's bytes
        CUdeviceptr ptr = 0; ///< storage for the pointer value handed to the driver
        int texture = -1;    ///< >= 0: RunRequest::textures[texture]'s handle (in ptr)
    };
    mutable std::vector<Arg> args;
    LaunchLimits limits;
};

} // namespace Kp
