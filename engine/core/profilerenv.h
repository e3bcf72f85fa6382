#pragma once

#include <QProcessEnvironment>
#include <QString>

namespace Kp {

/**
 * CUDA profilers that follow a process tree (`ncu --target-processes all`,
 * nsys) preload their launcher library into every process and point the
 * driver at their injection library (CUDA_INJECTION64_PATH). kpg and the GUI
 * never run a kernel themselves; with the launcher preloaded, a child they
 * started (Qt's QProcess clones without glibc's fork) crashed before its
 * exec. So they step out of the injection at start and hand it on to
 * kpg-worker, where the kernels run and the profiler finds them.
 */

/** Whether lib (a path from LD_PRELOAD) is a profiler's launcher or injection library. */
bool isProfilerPreload(const QString &lib);

/**
 * First thing in main(), before any thread: when a profiler's injection is
 * in this process's environment, moves it aside (KPG_PROFILER_LD_PRELOAD,
 * KPG_PROFILER_CUDA_INJECTION64_PATH, KPG_PROFILER_NVTX_INJECTION64_PATH)
 * and executes this program again without it. Returns when there is nothing
 * to do (or the exec failed: then the process goes on as it was).
 * KPG_PROFILER_STAY=1 keeps the injection in this process.
 */
void leaveProfilerInjection(char **argv);

/** For kpg-worker's environment: puts a moved-aside injection back. */
void restoreProfilerInjection(QProcessEnvironment &env);

} // namespace Kp
