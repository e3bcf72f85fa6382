#include "run/runjson.h"

#include "run/trace.h"

#include <QJsonArray>

namespace Kp {

QJsonObject dim3Json(const Dim3 &d)
{
    return QJsonObject{{QStringLiteral("x"), d[0]}, {QStringLiteral("y"), d[1]}, {QStringLiteral("z"), d[2]}};
}

QJsonObject guardsToJson(const RunResult &r)
{
    QJsonArray violations;
    for (const GuardViolation &v : r.guardViolations) {
        violations.append(
            QJsonObject{{QStringLiteral("step"), v.step >= 0 ? QJsonValue(v.step + 1) : QJsonValue(QJsonValue::Null)},
                        {QStringLiteral("repetition"), v.repetition + 1},
                        {QStringLiteral("kernel"), v.kernel},
                        {QStringLiteral("buffer"), v.buffer},
                        {QStringLiteral("side"),
                         v.side == GuardViolation::Side::After ? QStringLiteral("after") : QStringLiteral("before")},
                        {QStringLiteral("bytes"), v.spanBytes()},
                        {QStringLiteral("changedBytes"), v.changedBytes},
                        {QStringLiteral("firstByte"), v.firstByte},
                        {QStringLiteral("lastByte"), v.lastByte},
                        {QStringLiteral("firstElement"), v.firstElement()},
                        {QStringLiteral("lastElement"), v.lastElement()},
                        {QStringLiteral("message"), v.message()}});
    }
    return QJsonObject{{QStringLiteral("enabled"), r.guards},
                       {QStringLiteral("guardBytes"), r.guards ? Guard::kGuardBytes : 0},
                       {QStringLiteral("checkMs"), r.guardCheckMs},
                       {QStringLiteral("violations"), violations}};
}

QJsonObject runResultToJson(const RunResult &r)
{
    QJsonArray steps;
    QString printfAll;
    for (const StepResult &s : r.steps) {
        QJsonObject o{{QStringLiteral("kind"), s.kind},
                      {QStringLiteral("label"), s.label},
                      {QStringLiteral("stream"), s.stream},
                      {QStringLiteral("bytes"), s.bytes},
                      {QStringLiteral("kernel"), s.kernel},
                      {QStringLiteral("loweredName"), s.loweredName},
                      {QStringLiteral("grid"), dim3Json(s.grid)},
                      {QStringLiteral("block"), dim3Json(s.block)},
                      {QStringLiteral("sharedBytes"), s.sharedBytes},
                      {QStringLiteral("firstRunMs"), s.firstRunMs},
                      {QStringLiteral("printf"), s.printfOutput},
                      {QStringLiteral("printfTruncated"), s.printfTruncated},
                      {QStringLiteral("registers"), s.limits.numRegs},
                      {QStringLiteral("staticSharedBytes"), s.limits.staticSharedBytes},
                      {QStringLiteral("occupancy"), QJsonObject::fromVariantMap(s.occupancy.toVariant())}};
        steps.append(o);
        printfAll += s.printfOutput;
    }
    QJsonArray samples;
    for (double v : r.samplesMs) {
        samples.append(v);
    }
    QJsonObject doc{{QStringLiteral("ok"), !r.error.has_value()},
                    {QStringLiteral("device"), r.device},
                    {QStringLiteral("deviceOrdinal"), r.deviceOrdinal},
                    {QStringLiteral("steps"), steps},
                    {QStringLiteral("repeat"), r.repeat},
                    {QStringLiteral("printf"), printfAll},
                    {QStringLiteral("uploadMs"), r.uploadMs},
                    {QStringLiteral("downloadMs"), r.downloadMs},
                    {QStringLiteral("warnings"), QJsonArray::fromStringList(r.warnings)}};
    if (!r.steps.isEmpty()) {
        // The first step's, for the common one-step project.
        const StepResult &s = r.steps.first();
        doc.insert(QStringLiteral("kernel"), s.kernel);
        doc.insert(QStringLiteral("grid"), dim3Json(s.grid));
        doc.insert(QStringLiteral("block"), dim3Json(s.block));
        doc.insert(QStringLiteral("occupancy"), QJsonObject::fromVariantMap(s.occupancy.toVariant()));
    }
    if (r.timed) {
        QJsonObject t = QJsonObject::fromVariantMap(r.stats.toVariant());
        t.insert(QStringLiteral("mode"), r.timingMode);
        t.insert(QStringLiteral("batch"), r.batch);
        t.insert(QStringLiteral("converged"), r.converged);
        t.insert(QStringLiteral("note"), r.timingNote);
        t.insert(QStringLiteral("stoppedBy"), r.stopCriterion);
        t.insert(QStringLiteral("l2Flush"), r.l2Flush);
        t.insert(QStringLiteral("eventOverheadMs"), r.eventOverheadMs);
        t.insert(QStringLiteral("eventPairMs"), r.eventPairMs);
        t.insert(QStringLiteral("medianLessOverheadMs"), r.medianLessOverheadMs);
        t.insert(QStringLiteral("samplesMs"), samples);
        doc.insert(QStringLiteral("timing"), t);
        doc.insert(QStringLiteral("throughput"), QJsonObject{{QStringLiteral("bytes"), r.bytes},
                                                             {QStringLiteral("flops"), r.flops},
                                                             {QStringLiteral("bytesPerSecond"), r.bytesPerSecond},
                                                             {QStringLiteral("flopsPerSecond"), r.flopsPerSecond}});
    } else {
        doc.insert(QStringLiteral("timing"), QJsonValue::Null);
    }
    doc.insert(QStringLiteral("guards"), guardsToJson(r));
    if (!r.timeline.isEmpty()) {
        const TimelineSummary sum = summarizeTimeline(r);
        QJsonArray spans;
        for (const TimelineSpan &t : r.timeline) {
            spans.append(QJsonObject{{QStringLiteral("step"), t.step},
                                     {QStringLiteral("kind"), t.kind},
                                     {QStringLiteral("label"), t.label},
                                     {QStringLiteral("stream"), t.stream},
                                     {QStringLiteral("direction"), t.direction},
                                     {QStringLiteral("startMs"), t.startMs},
                                     {QStringLiteral("endMs"), t.endMs},
                                     {QStringLiteral("bytes"), t.bytes}});
        }
        doc.insert(QStringLiteral("timeline"), QJsonObject{{QStringLiteral("totalMs"), sum.totalMs},
                                                           {QStringLiteral("stepsMs"), sum.stepsMs},
                                                           {QStringLiteral("overlap"), sum.overlap},
                                                           {QStringLiteral("streams"), sum.streams},
                                                           {QStringLiteral("spans"), spans}});
    }
    if (r.graphReplays > 0) {
        doc.insert(QStringLiteral("graph"),
                   QJsonObject{{QStringLiteral("replays"), r.graphReplays},
                               {QStringLiteral("replayUs"), r.graphReplayUs},
                               {QStringLiteral("launchedUs"), r.streamLaunchUs},
                               {QStringLiteral("compared"), r.graphCompared},
                               {QStringLiteral("differs"), QJsonArray::fromStringList(r.graphDiffers)}});
    }
    if (r.error) {
        QJsonObject e = QJsonObject::fromVariantMap(r.error->toVariant());
        e.insert(QStringLiteral("step"), r.failedStep);
        e.insert(QStringLiteral("buffersRestored"), r.buffersRestored);
        doc.insert(QStringLiteral("error"), e);
    } else {
        doc.insert(QStringLiteral("error"), QJsonValue::Null);
    }
    return doc;
}

QJsonObject compileResultToJson(const CompileResult &compiled)
{
    QJsonArray diagnostics;
    for (const Diagnostic &d : compiled.diagnostics) {
        diagnostics.append(QJsonObject{{QStringLiteral("file"), d.file},
                                       {QStringLiteral("line"), d.line},
                                       {QStringLiteral("column"), d.column},
                                       {QStringLiteral("severity"), Diagnostic::severityName(d.severity)},
                                       {QStringLiteral("message"), d.message}});
    }
    return QJsonObject{{QStringLiteral("ok"), compiled.ok},
                       {QStringLiteral("arch"), compiled.arch},
                       {QStringLiteral("nvrtcVersion"), compiled.nvrtcVersion},
                       {QStringLiteral("compileMs"), compiled.compileMs},
                       {QStringLiteral("cached"), compiled.cached},
                       {QStringLiteral("diagnostics"), diagnostics}};
}

} // namespace Kp
