#pragma once

#include "run/runrequest.h"

#include <QList>

namespace Kp {

struct Project;

/**
 * kpg grade's anti-gaming sentinel (docs/labs.md, "Anti-gaming"): which
 * buffers of a run start every launch that writes them as 0xFF bytes (NaN
 * for floats, -1 for integers), so that a kernel that returns early on a
 * later launch, or copies an answer it kept in a global, leaves the sentinel
 * behind and fails its checks. Plain functions of values; any thread.
 */

/**
 * The request's buffers that the project's checks judge and that start
 * empty (zeros or uninitialized): a kernel's outputs, which the kernel must
 * write in full. A buffer with contents (an input, or one a kernel adds
 * into) is never a sentinel buffer.
 */
QList<int> sentinelBuffersFor(const Project &project, const RunRequest &request);

/**
 * For each of request.steps, the request buffers to fill with the sentinel
 * just before that step is launched: each of request.sentinelBuffers before
 * the first kernel step (in the order the steps run) that takes it as an
 * argument, the step that writes it; a later step that reads it and writes
 * it again (a second pass of a reduction) sees the first step's result.
 * Applied before every repetition. Empty lists when the request has swaps
 * (a buffer then moves between allocations from one repetition to the next)
 * or streams (the steps overlap), as the timing samples' sentinel is.
 */
QList<QList<int>> sentinelBeforeSteps(const RunRequest &request);

} // namespace Kp
