#pragma once

#include <QString>

namespace Kp {

/**
 * Whether lib (a path from LD_PRELOAD) is a CUDA profiler's launcher or
 * injection library: the tools that follow a process tree (nsys, older ncu)
 * preload these into every child; kpg-compiler is started without them
 * (compile/compilerprocess.h).
 */
bool isProfilerPreload(const QString &lib);

} // namespace Kp
