#pragma once

#include "compile/compiletypes.h"
#include "project/project.h"

namespace Kp {

/**
 * The compile a project's runs use: its source under its file name, the
 * options compileOptionsFor() gives (its own plus a name expression per
 * templated launch step), user headers from the project's folder, for a
 * device of compute capability ccMajor.ccMinor (0 when none is known: "auto"
 * then means the newest architecture NVRTC supports within reason).
 *
 * The one place such a request is built: the editor's compile-as-you-type,
 * Run, `kpg run` and the tests all call it, so their compile options and
 * cache keys agree. A project loaded from a ":/" resource or never saved has
 * no folder to include from. Pure; any thread.
 */
CompileRequest compileRequestFor(const Project &project, int ccMajor = 0, int ccMinor = 0);

} // namespace Kp
