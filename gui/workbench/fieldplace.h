#pragma once

#include "core/result.h"
#include "project/project.h"

namespace Kp {

/**
 * A project field's JSON path worded as the GUI's user sees the place:
 * "launches[0].grid[1]" -> "step 1, grid y", "launches[0].args[2]" ->
 * "step 1, argument 3", "buffers[2].shape" -> "buffer t_next, shape",
 * "scalars[0].value" -> "scalar alpha, value", "timing.mode" -> "timing, mode".
 * Names come from project; a path it cannot word is returned as it is.
 * .kpg files and kpg keep the JSON path; only the panels use this.
 */
QString fieldPlace(const QString &path, const Project &project);

/**
 * The error's message for a panel: a leading JSON path (the error's own
 * path) is replaced by fieldPlace(); the rest of the message is kept.
 */
QString panelMessage(const Error &error, const Project &project);

} // namespace Kp
