#include "sentinel.h"

#include "project/project.h"

namespace Kp {

QList<int> sentinelBuffersFor(const Project &project, const RunRequest &request)
{
    QList<int> out;
    for (qsizetype i = 0; i < request.buffers.size(); ++i) {
        const BufferSpec *b = project.buffer(request.buffers[i].name);
        bool checked = false;
        for (const CheckSpec &c : project.checks) {
            checked = checked || c.buffer == request.buffers[i].name;
        }
        if (b && checked &&
            (b->init.kind == BufferInit::Kind::Zeros || b->init.kind == BufferInit::Kind::Uninitialized)) {
            out << int(i);
        }
    }
    return out;
}

QList<QList<int>> sentinelBeforeSteps(const RunRequest &request)
{
    QList<QList<int>> before(request.steps.size());
    if (!request.swaps.isEmpty() || request.usesStreams()) {
        return before;
    }
    for (int b : request.sentinelBuffers) {
        if (b < 0 || b >= request.buffers.size()) {
            continue;
        }
        for (qsizetype i = 0; i < request.steps.size(); ++i) {
            const RunStep &s = request.steps[i];
            bool takes = false;
            for (const RunArg &a : s.args) {
                // A surface writes its buffer too (its array is copied back after the launch).
                takes = takes || a.buffer == b ||
                        (a.isTexture() && a.texture < request.textures.size() &&
                         request.textures[a.texture].buffer == b && request.textures[a.texture].spec.isSurface());
            }
            if (s.kind == RunStep::Kind::Kernel && takes) {
                if (!before[i].contains(b)) {
                    before[i] << b;
                }
                break;
            }
        }
    }
    return before;
}

} // namespace Kp
