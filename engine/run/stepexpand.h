#pragma once

#include "core/result.h"
#include "project/stepgraph.h"
#include "run/runner.h"

#include <QHash>
#include <QString>

#include <functional>

namespace Kp {

class Expression;

/** Resolves one kernel step (prepareRun's part); the buffers it points into go to node. */
using KernelResolver = std::function<Result<RunStep>(const LaunchStep &, const QString &field, GraphNode *node)>;

/**
 * Turns a project's launches into the request's steps (docs/streams.md):
 * chunk groups expanded with chunk.index, chunk.count, chunk.offset, chunk.n
 * and chunk.streams defined for their expressions, copies and memsets
 * resolved to byte ranges, streams and events numbered, the step graph
 * validated with every range known, and the steps put in issue order. The
 * graph's warnings (races, the legacy stream) go to out->warnings. A project
 * of kernels on the default stream gives exactly the steps it always did.
 */
Status expandSteps(const Project &project, const HostBuffers &buffers, const QHash<QString, int> &bufferIndex,
                   Expression &ex, const KernelResolver &resolveKernel, PreparedRun *out);

} // namespace Kp
