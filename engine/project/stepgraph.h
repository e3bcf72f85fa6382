#pragma once

#include "core/result.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace Kp {

struct Project;

/** The stream a step without "stream" runs on: the program's own stream, as before streams existed. */
QString defaultStreamName();
/** The legacy default stream (CUDA's NULL stream), which serialises with every blocking stream. */
QString legacyStreamName();

/**
 * One step of a run as the step graph sees it (docs/streams.md): the stream
 * it is issued to, the events it waits for and records, and the part of a
 * buffer it touches. Built from a project's launches, with chunk groups
 * expanded (expandedGraph()), or by prepareRun from the resolved steps.
 */
struct GraphNode
{
    QString path;  ///< JSON path of the step: "launches[2]" or "launches[1].steps[0]"
    QString label; ///< for messages: "launches[2] (copy of 'a' to the device)"
    QString stream;
    QStringList waits;     ///< event names
    QStringList waitPaths; ///< the JSON path of each wait, for messages
    QString records;       ///< the event recorded after the step; empty: none
    QString recordPath;
    /** A buffer the step reads or writes; empty for none. */
    struct Access
    {
        QString buffer;
        qint64 begin = 0; ///< elements
        qint64 end = -1;  ///< past the last element; -1: to the end of the buffer
        bool write = false;
    };
    QList<Access> accesses;
    /** A copy or memset range, checked against the buffer's size when both are known. */
    QString rangePath;          ///< JSON path to name in the message ("launches[2].count")
    QString rangeBuffer;        ///< empty: no range to check
    qint64 rangeBegin = 0;      ///< elements
    qint64 rangeCount = -1;     ///< -1: not known (an expression at load time)
    qint64 bufferElements = -1; ///< -1: not known (a shape from a file)
};

/** What validateStepGraph() found. */
struct StepGraph
{
    /** Indices of the nodes in the order to issue them: the list order, moved only where a wait needs it. */
    QList<int> order;
    /** Streams in order of first use. */
    QStringList streams;
    /** Races and serialising choices, in words: allowed, but worth saying (docs/streams.md). */
    QStringList warnings;
};

/**
 * Validates the step graph: every stream is known (`knownStreams`, plus
 * "default" and "legacy"), every event is recorded exactly once and every
 * waited-for event is recorded somewhere, the waits do not form a cycle, and
 * no copy or memset reaches past its buffer's end. The first mistake is an
 * error whose path is the offending field ("launches[3].waitFor[0]: event
 * 'e2' is never recorded; events recorded: e1"). On success, the issue order
 * (a topological order that keeps the list order where it can) and warnings:
 * steps on different streams that touch the same buffer, one of them writing,
 * with no wait ordering them (a race), and use of the legacy stream.
 */
Result<StepGraph> validateStepGraph(const QList<GraphNode> &nodes, const QStringList &knownStreams);

/**
 * The nodes of a project's launches as far as they are known without running
 * it: chunk groups expanded once (chunk 0, on stream NAME.0), ranges given as
 * plain numbers checked against buffers with a shape, accesses left out (the
 * kernels' parameters are not known before a compile).
 */
QList<GraphNode> loadTimeGraph(const Project &project);

/** Names of the streams a project declares. */
QStringList declaredStreams(const Project &project);

/** The stream of chunk `chunk` of a group named `group` with `streams` streams: "pipe.2". */
QString chunkStreamName(const QString &group, qint64 chunk, qint64 streams);
/** An event named inside a chunk group is the chunk's own: "done" in chunk 3 is "done[3]". */
QString chunkEventName(const QString &event, qint64 chunk);

} // namespace Kp
