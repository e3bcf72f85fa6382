#include "run/trace.h"

#include "core/format.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>

namespace Kp {

QList<TimelineLane> timelineLanes(const QList<TimelineSpan> &spans)
{
    QList<TimelineLane> lanes;
    const auto laneFor = [&lanes](const QString &name) -> TimelineLane & {
        for (TimelineLane &l : lanes) {
            if (l.name == name) {
                return l;
            }
        }
        lanes << TimelineLane{name, {}};
        return lanes.last();
    };
    for (qsizetype i = 0; i < spans.size(); ++i) {
        laneFor(QStringLiteral("stream ") + spans[i].stream).spans << int(i);
    }
    for (const char *dir : {"HtoD", "DtoH"}) {
        for (qsizetype i = 0; i < spans.size(); ++i) {
            if (spans[i].direction == QLatin1String(dir)) {
                laneFor(QStringLiteral("copy engine ") + QLatin1String(dir)).spans << int(i);
            }
        }
    }
    return lanes;
}

TimelineSummary summarizeTimeline(const RunResult &result)
{
    TimelineSummary s;
    s.totalMs = result.timelineTotalMs;
    QStringList streams;
    for (const TimelineSpan &t : result.timeline) {
        if (!streams.contains(t.stream)) {
            streams << t.stream;
        }
        if (t.kind != QLatin1String("record") && t.kind != QLatin1String("wait")) {
            s.stepsMs += t.durationMs();
        }
    }
    s.streams = int(streams.size());
    s.overlap = s.totalMs > 0 ? s.stepsMs / s.totalMs : 0;
    return s;
}

QString spanDetail(const TimelineSpan &t)
{
    const double us = t.durationMs() * 1000.0;
    if (t.kind == QLatin1String("copy") || t.kind == QLatin1String("memset")) {
        const double gbps = t.durationMs() > 0 ? double(t.bytes) / (t.durationMs() / 1000.0) / 1e9 : 0;
        return QStringLiteral("%1 in %2 us, %3 GB/s").arg(formatBytes(t.bytes)).arg(us, 0, 'f', 1).arg(gbps, 0, 'f', 1);
    }
    if (t.kind == QLatin1String("kernel")) {
        return QStringLiteral("grid %1 block %2, %3 us").arg(dim3Text(t.grid), dim3Text(t.block)).arg(us, 0, 'f', 1);
    }
    return QStringLiteral("%1 us").arg(us, 0, 'f', 1);
}

QJsonObject chromeTrace(const RunResult &r, const QString &title)
{
    QJsonArray events;
    const QList<TimelineLane> lanes = timelineLanes(r.timeline);
    events.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("process_name")},
                              {QStringLiteral("ph"), QStringLiteral("M")},
                              {QStringLiteral("pid"), 1},
                              {QStringLiteral("tid"), 0},
                              {QStringLiteral("args"),
                               QJsonObject{{QStringLiteral("name"),
                                            r.device.isEmpty() ? title : title + QStringLiteral(" on ") + r.device}}}});
    for (qsizetype l = 0; l < lanes.size(); ++l) {
        const int tid = int(l) + 1;
        events.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("thread_name")},
                                  {QStringLiteral("ph"), QStringLiteral("M")},
                                  {QStringLiteral("pid"), 1},
                                  {QStringLiteral("tid"), tid},
                                  {QStringLiteral("args"), QJsonObject{{QStringLiteral("name"), lanes[l].name}}}});
        events.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("thread_sort_index")},
                                  {QStringLiteral("ph"), QStringLiteral("M")},
                                  {QStringLiteral("pid"), 1},
                                  {QStringLiteral("tid"), tid},
                                  {QStringLiteral("args"), QJsonObject{{QStringLiteral("sort_index"), tid}}}});
        for (int i : lanes[l].spans) {
            const TimelineSpan &t = r.timeline[i];
            QJsonObject args{{QStringLiteral("step"), t.step + 1},
                             {QStringLiteral("stream"), t.stream},
                             {QStringLiteral("detail"), spanDetail(t)}};
            if (t.bytes > 0) {
                args.insert(QStringLiteral("bytes"), t.bytes);
            }
            events.append(QJsonObject{{QStringLiteral("name"), t.label},
                                      {QStringLiteral("cat"), t.kind},
                                      {QStringLiteral("ph"), QStringLiteral("X")},
                                      {QStringLiteral("ts"), t.startMs * 1000.0},
                                      {QStringLiteral("dur"), std::max(0.0, t.durationMs() * 1000.0)},
                                      {QStringLiteral("pid"), 1},
                                      {QStringLiteral("tid"), tid},
                                      {QStringLiteral("args"), args}});
        }
    }
    const TimelineSummary s = summarizeTimeline(r);
    return QJsonObject{{QStringLiteral("traceEvents"), events},
                       {QStringLiteral("displayTimeUnit"), QStringLiteral("ns")},
                       {QStringLiteral("otherData"), QJsonObject{{QStringLiteral("title"), title},
                                                                 {QStringLiteral("device"), r.device},
                                                                 {QStringLiteral("totalMs"), s.totalMs},
                                                                 {QStringLiteral("stepsMs"), s.stepsMs},
                                                                 {QStringLiteral("overlap"), s.overlap}}}};
}

QByteArray chromeTraceJson(const RunResult &result, const QString &title)
{
    return QJsonDocument(chromeTrace(result, title)).toJson(QJsonDocument::Indented);
}

} // namespace Kp
