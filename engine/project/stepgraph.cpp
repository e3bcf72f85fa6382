#include "project/stepgraph.h"

#include "project/fieldreader.h"
#include "project/project.h"

#include <QHash>
#include <QSet>

#include <algorithm>
#include <functional>
#include <queue>
#include <vector>

namespace Kp {

namespace {

QString namesOrNone(const QStringList &names)
{
    return names.isEmpty() ? QStringLiteral("none") : names.join(QStringLiteral(", "));
}

/** Above this many nodes the race check (quadratic) is skipped; the graph is still validated. */
constexpr int kMaxRaceCheckNodes = 1024;

/** A plain non-negative integer written in the project, or -1. */
qint64 plainInteger(const QString &text)
{
    bool ok = false;
    const qint64 v = text.trimmed().toLongLong(&ok);
    return ok && v >= 0 ? v : -1;
}

QString stepLabel(const LaunchStep &s, const QString &path)
{
    switch (s.kind) {
    case LaunchStep::Kind::Kernel: return QStringLiteral("%1 (kernel '%2')").arg(path, s.kernel);
    case LaunchStep::Kind::Copy:
        return QStringLiteral("%1 (copy of '%2' to the %3)")
            .arg(path, s.buffer, s.toDevice ? QStringLiteral("device") : QStringLiteral("host"));
    case LaunchStep::Kind::Memset: return QStringLiteral("%1 (memset of '%2')").arg(path, s.buffer);
    case LaunchStep::Kind::Record: return QStringLiteral("%1 (record of event '%2')").arg(path, s.event);
    case LaunchStep::Kind::Wait: return QStringLiteral("%1 (wait)").arg(path);
    case LaunchStep::Kind::Chunks: return QStringLiteral("%1 (chunks)").arg(path);
    }
    return path;
}

void addNode(const Project &p, const LaunchStep &s, const QString &path, const QString &stream,
             const std::function<QString(const QString &)> &eventName, QList<GraphNode> *out)
{
    GraphNode n;
    n.path = path;
    n.label = stepLabel(s, path);
    n.stream = stream;
    for (qsizetype w = 0; w < s.waitFor.size(); ++w) {
        n.waits << eventName(s.waitFor[w]);
        n.waitPaths << jsonIndexPath(jsonKeyPath(path, QStringLiteral("waitFor")), w);
    }
    if (s.kind == LaunchStep::Kind::Record) {
        n.records = eventName(s.event);
        n.recordPath = jsonKeyPath(path, QStringLiteral("event"));
    }
    if (s.kind == LaunchStep::Kind::Copy || s.kind == LaunchStep::Kind::Memset) {
        const BufferSpec *b = p.buffer(s.buffer);
        n.rangeBuffer = s.buffer;
        n.rangeBegin = s.offset.isEmpty() ? 0 : plainInteger(s.offset);
        n.rangeCount = s.count.isEmpty() ? -1 : plainInteger(s.count);
        n.rangePath = jsonKeyPath(path, s.count.isEmpty() ? QStringLiteral("offset") : QStringLiteral("count"));
        if (b && !b->shape.isEmpty()) {
            n.bufferElements = shapeElementCount(b->shape);
            if (s.count.isEmpty() && n.rangeBegin >= 0) {
                n.rangeCount = qMax<qint64>(0, n.bufferElements - n.rangeBegin);
            }
        }
        if (n.rangeBegin < 0) {
            n.rangeCount = -1; // an expression: checked when the project runs
        }
    }
    *out << n;
}

} // namespace

QString defaultStreamName()
{
    return QStringLiteral("default");
}

QString legacyStreamName()
{
    return QStringLiteral("legacy");
}

QString chunkStreamName(const QString &group, qint64 chunk, qint64 streams)
{
    return QStringLiteral("%1.%2")
        .arg(group.isEmpty() ? QStringLiteral("chunk") : group)
        .arg(chunk % qMax<qint64>(1, streams));
}

QString chunkEventName(const QString &event, qint64 chunk)
{
    return QStringLiteral("%1[%2]").arg(event).arg(chunk);
}

QStringList declaredStreams(const Project &project)
{
    QStringList names;
    for (const StreamSpec &s : project.streams) {
        names << s.name;
    }
    return names;
}

QList<GraphNode> loadTimeGraph(const Project &project)
{
    QList<GraphNode> nodes;
    const auto same = [](const QString &e) { return e; };
    for (qsizetype i = 0; i < project.launches.size(); ++i) {
        const LaunchStep &s = project.launches[i];
        const QString path = jsonIndexPath(QStringLiteral("launches"), i);
        if (s.kind != LaunchStep::Kind::Chunks) {
            addNode(project, s, path, s.stream.isEmpty() ? defaultStreamName() : s.stream, same, &nodes);
            continue;
        }
        QSet<QString> local;
        for (const LaunchStep &inner : s.steps) {
            if (inner.kind == LaunchStep::Kind::Record) {
                local.insert(inner.event);
            }
        }
        const auto chunkEvent = [&](const QString &e) { return local.contains(e) ? chunkEventName(e, 0) : e; };
        for (qsizetype k = 0; k < s.steps.size(); ++k) {
            const LaunchStep &inner = s.steps[k];
            const QString stream = inner.stream.isEmpty() ? chunkStreamName(s.groupName, 0, 1) : inner.stream;
            addNode(project, inner, jsonIndexPath(jsonKeyPath(path, QStringLiteral("steps")), k), stream, chunkEvent,
                    &nodes);
        }
    }
    return nodes;
}

Result<StepGraph> validateStepGraph(const QList<GraphNode> &nodes, const QStringList &knownStreams)
{
    const auto fail = [](const QString &path, const QString &message) {
        return projectError(path + QStringLiteral(": ") + message, path);
    };
    StepGraph g;
    // Streams.
    for (const GraphNode &n : nodes) {
        if (n.stream != defaultStreamName() && n.stream != legacyStreamName() && !knownStreams.contains(n.stream)) {
            return fail(jsonKeyPath(n.path, QStringLiteral("stream")),
                        QStringLiteral("unknown stream '%1'; declare it in \"streams\" (declared: %2), or use "
                                       "\"default\" or \"legacy\"")
                            .arg(n.stream, namesOrNone(knownStreams)));
        }
        if (!g.streams.contains(n.stream)) {
            g.streams << n.stream;
        }
    }
    // Events: recorded once each, waited for only when recorded.
    QHash<QString, int> recordedBy;
    QStringList recorded;
    for (int i = 0; i < nodes.size(); ++i) {
        const GraphNode &n = nodes[i];
        if (n.records.isEmpty()) {
            continue;
        }
        if (recordedBy.contains(n.records)) {
            return fail(n.recordPath, QStringLiteral("event '%1' is already recorded by %2; record each event once "
                                                     "(use another name for the second record)")
                                          .arg(n.records, nodes[recordedBy.value(n.records)].path));
        }
        recordedBy.insert(n.records, i);
        recorded << n.records;
    }
    for (const GraphNode &n : nodes) {
        for (qsizetype w = 0; w < n.waits.size(); ++w) {
            if (!recordedBy.contains(n.waits[w])) {
                return fail(n.waitPaths.value(w, n.path),
                            QStringLiteral("event '%1' is never recorded, so waiting for it would wait for "
                                           "nothing; events recorded: %2")
                                .arg(n.waits[w], namesOrNone(recorded)));
            }
            if (recordedBy.value(n.waits[w]) == int(&n - nodes.constData())) {
                return fail(n.waitPaths.value(w, n.path),
                            QStringLiteral("the step waits for event '%1', which it records itself").arg(n.waits[w]));
            }
        }
    }
    // Ranges.
    for (const GraphNode &n : nodes) {
        if (n.rangeBuffer.isEmpty() || n.rangeBegin < 0 || n.rangeCount < 0 || n.bufferElements < 0) {
            continue;
        }
        if (n.rangeBegin > n.bufferElements || n.rangeCount > n.bufferElements - n.rangeBegin) {
            return fail(n.rangePath, QStringLiteral("elements %1 to %2 are past the end of buffer '%3' (%4 elements)")
                                         .arg(n.rangeBegin)
                                         .arg(n.rangeBegin + n.rangeCount - 1)
                                         .arg(n.rangeBuffer)
                                         .arg(n.bufferElements));
        }
    }
    // Edges: the stream order, and record -> wait.
    const int count = int(nodes.size());
    std::vector<std::vector<int>> next(static_cast<size_t>(count));
    std::vector<int> indegree(static_cast<size_t>(count), 0);
    QHash<QString, int> lastOnStream;
    const auto edge = [&](int from, int to) {
        next[size_t(from)].push_back(to);
        ++indegree[size_t(to)];
    };
    for (int i = 0; i < count; ++i) {
        const GraphNode &n = nodes[i];
        if (lastOnStream.contains(n.stream)) {
            edge(lastOnStream.value(n.stream), i);
        }
        lastOnStream.insert(n.stream, i);
        for (const QString &w : n.waits) {
            edge(recordedBy.value(w), i);
        }
    }
    // Kahn's algorithm, smallest index first: the list order wherever the waits allow it.
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    std::vector<int> left = indegree;
    for (int i = 0; i < count; ++i) {
        if (left[size_t(i)] == 0) {
            ready.push(i);
        }
    }
    while (!ready.empty()) {
        const int i = ready.top();
        ready.pop();
        g.order << i;
        for (int j : next[size_t(i)]) {
            if (--left[size_t(j)] == 0) {
                ready.push(j);
            }
        }
    }
    if (g.order.size() != count) {
        // Walk back along unfinished predecessors until a node repeats: that is a cycle.
        std::vector<std::vector<int>> prev(static_cast<size_t>(count));
        for (int i = 0; i < count; ++i) {
            for (int j : next[size_t(i)]) {
                prev[size_t(j)].push_back(i);
            }
        }
        int at = 0;
        while (left[size_t(at)] == 0) {
            ++at;
        }
        std::vector<int> seenAt(static_cast<size_t>(count), -1);
        std::vector<int> walk;
        while (seenAt[size_t(at)] < 0) {
            seenAt[size_t(at)] = int(walk.size());
            walk.push_back(at);
            for (int p : prev[size_t(at)]) {
                if (left[size_t(p)] > 0) {
                    at = p;
                    break;
                }
            }
        }
        std::vector<int> cycle(walk.begin() + seenAt[size_t(at)], walk.end());
        std::reverse(cycle.begin(), cycle.end());
        const int first = *std::min_element(cycle.begin(), cycle.end());
        std::rotate(cycle.begin(), std::find(cycle.begin(), cycle.end(), first), cycle.end());
        QStringList chain;
        for (int i : cycle) {
            chain << QStringLiteral("%1 on stream '%2'").arg(nodes[i].path, nodes[i].stream);
        }
        chain << nodes[first].path;
        const GraphNode &n = nodes[first];
        const QString where = n.waitPaths.isEmpty() ? n.path : n.waitPaths.first();
        return fail(where, QStringLiteral("the steps wait for each other in a cycle, so none of them can start: %1; "
                                          "wait only for events recorded by steps that do not wait for this one")
                               .arg(chain.join(QStringLiteral(" -> "))));
    }
    if (g.streams.contains(legacyStreamName())) {
        for (const GraphNode &n : nodes) {
            if (n.stream == legacyStreamName()) {
                g.warnings << QStringLiteral("%1: runs on the legacy default stream, which waits for all work on the "
                                             "other streams and makes them wait for it, so nothing overlaps with it")
                                  .arg(n.label);
                break;
            }
        }
    }
    // Races: two steps on different streams that touch overlapping parts of a
    // buffer, one of them writing, with no path between them in the graph.
    if (count > kMaxRaceCheckNodes) {
        return g;
    }
    std::vector<std::vector<bool>> reach(static_cast<size_t>(count),
                                         std::vector<bool>(static_cast<size_t>(count), false));
    for (auto it = g.order.crbegin(); it != g.order.crend(); ++it) {
        const int i = *it;
        for (int j : next[size_t(i)]) {
            reach[size_t(i)][size_t(j)] = true;
            for (int k = 0; k < count; ++k) {
                if (reach[size_t(j)][size_t(k)]) {
                    reach[size_t(i)][size_t(k)] = true;
                }
            }
        }
    }
    QSet<QString> reported;
    for (int i = 0; i < count; ++i) {
        for (int j = i + 1; j < count; ++j) {
            const GraphNode &a = nodes[i];
            const GraphNode &b = nodes[j];
            if (a.stream == b.stream || reach[size_t(i)][size_t(j)] || reach[size_t(j)][size_t(i)]) {
                continue;
            }
            for (const GraphNode::Access &x : a.accesses) {
                for (const GraphNode::Access &y : b.accesses) {
                    if (x.buffer != y.buffer || (!x.write && !y.write)) {
                        continue;
                    }
                    const bool overlap = (x.end < 0 || y.begin < x.end) && (y.end < 0 || x.begin < y.end);
                    const QString key = x.buffer + QLatin1Char('|') + a.stream + QLatin1Char('|') + b.stream;
                    if (!overlap || reported.contains(key)) {
                        continue;
                    }
                    reported.insert(key);
                    g.warnings << QStringLiteral("%1 on stream '%2' and %3 on stream '%4' both use buffer '%5', %6, "
                                                 "and no event wait orders them: a race; record an event after one "
                                                 "and wait for it before the other")
                                      .arg(a.label, a.stream, b.label, b.stream, x.buffer,
                                           x.write && y.write ? QStringLiteral("both write it")
                                                              : QStringLiteral("one of them writes it"));
                }
            }
        }
    }
    return g;
}

} // namespace Kp
