#pragma once

#include "run/runtypes.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace Kp {

/** A row of the timeline: a stream, or a copy engine's direction. */
struct TimelineLane
{
    QString name;     ///< "stream default", "stream pipe.1", "copy engine HtoD"
    QList<int> spans; ///< indices into RunResult::timeline
};

/**
 * The timeline's rows (docs/streams.md): one per stream in order of first
 * use, then one per copy direction that occurs ("copy engine HtoD", "copy
 * engine DtoH"), where each copy shows a second time. Shared by the Results
 * panel's timeline and the trace.
 */
QList<TimelineLane> timelineLanes(const QList<TimelineSpan> &spans);

/** How much the steps overlapped. */
struct TimelineSummary
{
    int streams = 0;
    double totalMs = 0; ///< the pass, first event to last
    double stepsMs = 0; ///< the steps' durations added up
    double overlap = 0; ///< stepsMs / totalMs: 1 when nothing overlapped
};
TimelineSummary summarizeTimeline(const RunResult &result);

/** "1.00 MiB in 42.0 us, 24.9 GB/s" or "grid (4096, 1, 1) block (256, 1, 1)": what hovering a span says. */
QString spanDetail(const TimelineSpan &span);

/**
 * The timeline as a Chrome trace-event document (the JSON object format:
 * "traceEvents" with complete "X" events in microseconds, and metadata "M"
 * events naming the process after the device and each thread after a lane),
 * which Perfetto and chrome://tracing open. Empty "traceEvents" when the
 * run has no timeline.
 */
QJsonObject chromeTrace(const RunResult &result, const QString &title);
QByteArray chromeTraceJson(const RunResult &result, const QString &title);

} // namespace Kp
