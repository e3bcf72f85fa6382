#include "run/stepexpand.h"

#include "core/expression.h"
#include "project/fieldreader.h"

#include <QSet>

#include <cmath>

namespace Kp {

namespace {

Error stepError(const QString &path, const QString &message)
{
    Error e{QStringLiteral("run"), Error::Code::BadInput, {}, path + QStringLiteral(": ") + message};
    e.path = path;
    return e;
}

/** A count or offset: a whole number from 0 to 2^53. */
Result<qint64> evalCount(Expression &ex, const QString &text, const QString &field, qint64 min = 0)
{
    double v = 0;
    if (!Expression::isNumber(text, &v)) {
        const Result<double> r = ex.evaluate(text, field);
        if (!r) {
            Error e = r.error();
            e.path = field;
            return e;
        }
        v = *r;
    }
    if (!std::isfinite(v) || v != std::floor(v) || v < double(min) || v > 9007199254740992.0) {
        return stepError(field, QStringLiteral("'%1' gives %2; expected a whole number of at least %3")
                                    .arg(text, QString::number(v, 'g', 12))
                                    .arg(min));
    }
    return qint64(v);
}

struct Pending
{
    RunStep step;
    GraphNode node;
};

} // namespace

Status expandSteps(const Project &project, const HostBuffers &buffers, const QHash<QString, int> &bufferIndex,
                   Expression &ex, const KernelResolver &resolveKernel, PreparedRun *out)
{
    QList<Pending> pending;
    QStringList known = declaredStreams(project);

    struct Chunk
    {
        qint64 offset = 0;
        qint64 n = 0;
    };
    const auto addStep = [&](const LaunchStep &step, const QString &field, const QString &stream,
                             const std::function<QString(const QString &)> &eventName, const Chunk *chunk) -> Status {
        Pending p;
        GraphNode &n = p.node;
        n.path = field;
        n.stream = stream;
        for (qsizetype w = 0; w < step.waitFor.size(); ++w) {
            n.waits << eventName(step.waitFor[w]);
            n.waitPaths << jsonIndexPath(jsonKeyPath(field, QStringLiteral("waitFor")), w);
        }
        RunStep &rs = p.step;
        switch (step.kind) {
        case LaunchStep::Kind::Kernel: {
            Result<RunStep> r = resolveKernel(step, field, &n);
            if (!r) {
                return r.error();
            }
            rs = *r;
            n.label = QStringLiteral("%1 (kernel '%2')").arg(field, step.kernel);
            if (chunk) {
                // A kernel in a chunks group is taken to touch its own chunk
                // of each buffer it gets (docs/streams.md): the group exists
                // to split the work that way.
                for (GraphNode::Access &a : n.accesses) {
                    a.begin += chunk->offset;
                    a.end = a.begin + chunk->n;
                }
            }
            break;
        }
        case LaunchStep::Kind::Copy:
        case LaunchStep::Kind::Memset: {
            const HostBuffer *hb = buffers.find(step.buffer);
            if (!hb || !bufferIndex.contains(step.buffer)) {
                return stepError(jsonKeyPath(field, QStringLiteral("buffer")),
                                 QStringLiteral("unknown buffer '%1'").arg(step.buffer));
            }
            const qint64 elements = hb->elementCount();
            qint64 offset = 0;
            qint64 count = -1;
            if (!step.offset.isEmpty()) {
                const Result<qint64> v = evalCount(ex, step.offset, jsonKeyPath(field, QStringLiteral("offset")));
                if (!v) {
                    return v.error();
                }
                offset = *v;
            } else if (chunk) {
                offset = chunk->offset;
            }
            if (!step.count.isEmpty()) {
                const Result<qint64> v = evalCount(ex, step.count, jsonKeyPath(field, QStringLiteral("count")));
                if (!v) {
                    return v.error();
                }
                count = *v;
            } else if (chunk && step.offset.isEmpty()) {
                count = chunk->n;
            } else {
                count = qMax<qint64>(0, elements - offset);
            }
            n.rangeBuffer = step.buffer;
            n.rangeBegin = offset;
            n.rangeCount = count;
            n.bufferElements = elements;
            n.rangePath =
                jsonKeyPath(field, step.count.isEmpty() && !chunk ? QStringLiteral("offset") : QStringLiteral("count"));
            if (step.count.isEmpty() && step.offset.isEmpty() && chunk) {
                n.rangePath = field; // the chunk's own range
            }
            const bool toHost = step.kind == LaunchStep::Kind::Copy && !step.toDevice;
            n.accesses << GraphNode::Access{step.buffer, offset, offset + count, !toHost};
            const qint64 elementBytes = dtypeInfo(hb->spec.dtype).elementBytes();
            rs.kind = step.kind == LaunchStep::Kind::Memset
                          ? RunStep::Kind::Memset
                          : (step.toDevice ? RunStep::Kind::CopyToDevice : RunStep::Kind::CopyToHost);
            rs.buffer = bufferIndex.value(step.buffer);
            rs.offset = offset * elementBytes;
            rs.bytes = count * elementBytes;
            rs.memsetValue = step.memsetValue;
            const QString range = offset == 0 && count == elements
                                      ? step.buffer
                                      : QStringLiteral("%1[%2:%3]").arg(step.buffer).arg(offset).arg(offset + count);
            rs.label = step.kind == LaunchStep::Kind::Memset
                           ? QStringLiteral("memset %1 to %2").arg(range).arg(step.memsetValue)
                           : QStringLiteral("copy %1 to the %2")
                                 .arg(range, step.toDevice ? QStringLiteral("device") : QStringLiteral("host"));
            n.label = QStringLiteral("%1 (%2)").arg(field, rs.label);
            break;
        }
        case LaunchStep::Kind::Record:
            rs.kind = RunStep::Kind::Record;
            n.records = eventName(step.event);
            n.recordPath = jsonKeyPath(field, QStringLiteral("event"));
            rs.label = QStringLiteral("record %1").arg(n.records);
            n.label = QStringLiteral("%1 (%2)").arg(field, rs.label);
            break;
        case LaunchStep::Kind::Wait:
            rs.kind = RunStep::Kind::Wait;
            rs.label = QStringLiteral("wait for %1").arg(n.waits.join(QStringLiteral(", ")));
            n.label = QStringLiteral("%1 (%2)").arg(field, rs.label);
            break;
        case LaunchStep::Kind::Chunks: return Unit{}; // expanded by the caller
        }
        pending << p;
        return Unit{};
    };

    const auto same = [](const QString &e) { return e; };
    for (qsizetype si = 0; si < project.launches.size(); ++si) {
        const LaunchStep &step = project.launches[si];
        const QString field = jsonIndexPath(QStringLiteral("launches"), si);
        if (step.kind != LaunchStep::Kind::Chunks) {
            if (Status st =
                    addStep(step, field, step.stream.isEmpty() ? defaultStreamName() : step.stream, same, nullptr);
                !st) {
                return st;
            }
            continue;
        }
        const Result<qint64> count = evalCount(ex, step.chunkCount, jsonKeyPath(field, QStringLiteral("count")), 1);
        if (!count) {
            return count.error();
        }
        const Result<qint64> elements = evalCount(ex, step.elements, jsonKeyPath(field, QStringLiteral("elements")));
        if (!elements) {
            return elements.error();
        }
        qint64 streams = 1;
        if (!step.chunkStreams.isEmpty()) {
            const Result<qint64> s = evalCount(ex, step.chunkStreams, jsonKeyPath(field, QStringLiteral("streams")), 1);
            if (!s) {
                return s.error();
            }
            streams = *s;
        }
        constexpr qint64 kMaxChunks = 4096;
        if (*count > kMaxChunks) {
            return stepError(jsonKeyPath(field, QStringLiteral("count")),
                             QStringLiteral("%1 chunks; at most %2").arg(*count).arg(kMaxChunks));
        }
        QSet<QString> local;
        for (const LaunchStep &inner : step.steps) {
            if (inner.kind == LaunchStep::Kind::Record) {
                local.insert(inner.event);
            }
        }
        const qint64 size = (*elements + *count - 1) / *count;
        for (qint64 c = 0; c < *count; ++c) {
            Chunk chunk{c * size, qMin(size, *elements - c * size)};
            if (chunk.n <= 0) {
                break; // more chunks than elements: the last ones would be empty
            }
            ex.set(QStringLiteral("chunk.index"), double(c));
            ex.set(QStringLiteral("chunk.count"), double(*count));
            ex.set(QStringLiteral("chunk.offset"), double(chunk.offset));
            ex.set(QStringLiteral("chunk.n"), double(chunk.n));
            ex.set(QStringLiteral("chunk.streams"), double(streams));
            const QString stream = chunkStreamName(step.groupName, c, streams);
            if (!known.contains(stream)) {
                known << stream;
            }
            const auto chunkEvent = [&](const QString &e) { return local.contains(e) ? chunkEventName(e, c) : e; };
            for (qsizetype k = 0; k < step.steps.size(); ++k) {
                const LaunchStep &inner = step.steps[k];
                const QString path = jsonIndexPath(jsonKeyPath(field, QStringLiteral("steps")), k);
                const QString where =
                    *count > 1 ? QStringLiteral("%1 (chunk %2 of %3)").arg(path).arg(c).arg(*count) : path;
                if (Status st =
                        addStep(inner, path, inner.stream.isEmpty() ? stream : inner.stream, chunkEvent, &chunk);
                    !st) {
                    Error e = st.error();
                    if (*count > 1 && e.message.startsWith(path)) {
                        e.message.replace(0, path.size(), where);
                    }
                    return e;
                }
                pending.last().node.label.replace(path, where);
            }
        }
    }

    QList<GraphNode> nodes;
    for (const Pending &p : pending) {
        nodes << p.node;
    }
    const Result<StepGraph> graph = validateStepGraph(nodes, known);
    if (!graph) {
        Error e = graph.error();
        e.where = QStringLiteral("run");
        return e;
    }
    out->warnings << graph->warnings;

    RunRequest &req = out->request;
    QHash<QString, int> streamIndex;
    streamIndex.insert(defaultStreamName(), 0);
    req.streams.clear();
    req.streams << RunStream{defaultStreamName(), 0, false};
    QHash<QString, int> eventIndex;
    const auto eventOf = [&](const QString &name) {
        if (!eventIndex.contains(name)) {
            eventIndex.insert(name, int(req.events.size()));
            req.events << name;
        }
        return eventIndex.value(name);
    };
    for (int i : graph->order) {
        const Pending &p = pending[i];
        RunStep rs = p.step;
        if (!streamIndex.contains(p.node.stream)) {
            streamIndex.insert(p.node.stream, int(req.streams.size()));
            RunStream st;
            st.name = p.node.stream;
            st.legacy = p.node.stream == legacyStreamName();
            for (const StreamSpec &spec : project.streams) {
                if (spec.name == st.name) {
                    st.priority = spec.priority;
                }
            }
            req.streams << st;
        }
        rs.stream = streamIndex.value(p.node.stream);
        for (const QString &w : p.node.waits) {
            rs.waits << eventOf(w);
        }
        if (!p.node.records.isEmpty()) {
            rs.event = eventOf(p.node.records);
        }
        req.steps << rs;
    }
    if (!req.usesStreams()) {
        // Kernels on the default stream only: the request is what it was before streams.
        req.streams.clear();
        for (RunStep &rs : req.steps) {
            rs.label.clear();
        }
    }
    return Unit{};
}

} // namespace Kp
