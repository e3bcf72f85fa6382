#pragma once

#include "buffers/dtype.h"

#include <QtGlobal>

namespace Kp {

struct HostBuffer;

/** The statistics line of a buffer; components of vector types are pooled. */
struct BufferStats
{
    double min = 0;      ///< smallest finite value; NaN when there is none
    double max = 0;      ///< largest finite value; NaN when there is none
    double mean = 0;     ///< of the finite values; NaN when there is none
    qint64 nanCount = 0; ///< components that are NaN
    qint64 infCount = 0; ///< components that are +inf or -inf
    qint64 count = 0;    ///< components looked at (finite or not)
    qint64 finiteCount() const { return count - nanCount - infCount; }
};

/**
 * Statistics of count components of type componentType, starting at data,
 * stride components apart (1: contiguous). A plain loop over the memory,
 * specialised per type; 64-bit integers go through double (min and max
 * round beyond 2^53). Reads only; any thread.
 */
BufferStats computeComponentStats(DType componentType, const void *data, qint64 count, qint64 stride = 1);

/** Statistics of a whole buffer (computeComponentStats over all its components). Any thread. */
BufferStats computeBufferStats(const HostBuffer &buffer);

} // namespace Kp
