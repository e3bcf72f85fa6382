#pragma once

namespace Kp {

/**
 * The PTX of kpg-worker's own kernels (the stream blocker, the L2 flush, the
 * empty kernel, the guard-zone check and fill): engine/run/workerkernels.ptx,
 * embedded by the build (cmake/EmbedText.cmake). What each does is said there.
 */
extern const char kWorkerKernelsPtx[];

} // namespace Kp
