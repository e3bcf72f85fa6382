// The timeline's lanes and summary, and its Chrome trace-event JSON
// (engine/run/trace), on a made-up run of two streams and copies.

#include "run/runjson.h"
#include "run/runtypes.h"
#include "run/trace.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace Kp;

class TestTrace : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void lanesAndSummary();
    void traceEventFormat();
    void resultRoundTrip();
};

namespace {

TimelineSpan span(int step, const QString &kind, const QString &stream, const QString &dir, double a, double b,
                  qint64 bytes = 0)
{
    TimelineSpan t;
    t.step = step;
    t.kind = kind;
    t.label = kind + QString::number(step);
    t.stream = stream;
    t.direction = dir;
    t.startMs = a;
    t.endMs = b;
    t.bytes = bytes;
    t.grid = {16, 1, 1};
    t.block = {256, 1, 1};
    return t;
}

RunResult twoStreams()
{
    RunResult r;
    r.device = QStringLiteral("NVIDIA H200 (0)");
    r.timed = true;
    // s0: copy in, kernel, copy out; s1 the same, shifted by one step.
    r.timeline << span(0, "copy", "pipe.0", "HtoD", 0.0, 1.0, 4 << 20) << span(1, "kernel", "pipe.0", "", 1.0, 2.0)
               << span(2, "copy", "pipe.0", "DtoH", 2.0, 3.0, 4 << 20)
               << span(3, "copy", "pipe.1", "HtoD", 1.0, 2.0, 4 << 20) << span(4, "kernel", "pipe.1", "", 2.0, 3.0)
               << span(5, "copy", "pipe.1", "DtoH", 3.0, 4.0, 4 << 20) << span(6, "record", "pipe.1", "", 4.0, 4.0);
    r.timelineTotalMs = 4.0;
    return r;
}

} // namespace

void TestTrace::lanesAndSummary()
{
    const RunResult r = twoStreams();
    const QList<TimelineLane> lanes = timelineLanes(r.timeline);
    QCOMPARE(lanes.size(), 4);
    QCOMPARE(lanes[0].name, QStringLiteral("stream pipe.0"));
    QCOMPARE(lanes[1].name, QStringLiteral("stream pipe.1"));
    QCOMPARE(lanes[2].name, QStringLiteral("copy engine HtoD"));
    QCOMPARE(lanes[3].name, QStringLiteral("copy engine DtoH"));
    QCOMPARE(lanes[0].spans, (QList<int>{0, 1, 2}));
    QCOMPARE(lanes[2].spans, (QList<int>{0, 3}));
    QCOMPARE(lanes[3].spans, (QList<int>{2, 5}));

    const TimelineSummary s = summarizeTimeline(r);
    QCOMPARE(s.streams, 2);
    QCOMPARE(s.totalMs, 4.0);
    QCOMPARE(s.stepsMs, 6.0); // the record takes no time and is not a step's work
    QCOMPARE(s.overlap, 1.5);

    QCOMPARE(spanDetail(r.timeline[0]), QStringLiteral("4.0 MiB in 1000.0 us, 4.2 GB/s"));
    QCOMPARE(spanDetail(r.timeline[1]), QStringLiteral("grid (16, 1, 1) block (256, 1, 1), 1000.0 us"));
}

void TestTrace::traceEventFormat()
{
    const RunResult r = twoStreams();
    const QByteArray json = chromeTraceJson(r, QStringLiteral("Overlap"));
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    QCOMPARE(pe.error, QJsonParseError::NoError);
    QVERIFY(doc.isObject());
    const QJsonArray events = doc.object().value("traceEvents").toArray();
    QVERIFY(!events.isEmpty());
    int complete = 0;
    QStringList threads;
    QString process;
    for (const QJsonValue &v : events) {
        const QJsonObject e = v.toObject();
        // Every event of the format: a name, a phase, a process and a thread id.
        QVERIFY(e.value("name").isString());
        QVERIFY(e.value("pid").isDouble());
        QVERIFY(e.value("tid").isDouble());
        const QString ph = e.value("ph").toString();
        QVERIFY2(ph == "X" || ph == "M", qPrintable(ph));
        if (ph == "M") {
            QVERIFY(e.value("args").isObject());
            if (e.value("name").toString() == "thread_name") {
                threads << e.value("args").toObject().value("name").toString();
            } else if (e.value("name").toString() == "process_name") {
                process = e.value("args").toObject().value("name").toString();
            }
            continue;
        }
        ++complete;
        // Complete events: start and duration in microseconds.
        QVERIFY(e.value("ts").isDouble());
        QVERIFY(e.value("dur").isDouble());
        QVERIFY(e.value("dur").toDouble() >= 0);
        QVERIFY(e.value("cat").isString());
        QVERIFY(e.value("args").toObject().contains("step"));
    }
    QCOMPARE(complete, 7 + 4); // every step, and the four copies again on their engine's lane
    QCOMPARE(threads, (QStringList{"stream pipe.0", "stream pipe.1", "copy engine HtoD", "copy engine DtoH"}));
    QCOMPARE(process, QStringLiteral("Overlap on NVIDIA H200 (0)"));
    // The second stream's kernel: 2 ms in, 1 ms long.
    bool found = false;
    for (const QJsonValue &v : events) {
        const QJsonObject e = v.toObject();
        if (e.value("name").toString() == "kernel4") {
            QCOMPARE(e.value("ts").toDouble(), 2000.0);
            QCOMPARE(e.value("dur").toDouble(), 1000.0);
            QCOMPARE(e.value("tid").toInt(), 2);
            found = true;
        }
    }
    QVERIFY(found);
    QCOMPARE(doc.object().value("otherData").toObject().value("overlap").toDouble(), 1.5);

    // A run without a timeline still gives a valid document, with metadata only.
    const QJsonObject empty = chromeTrace(RunResult{}, QStringLiteral("x"));
    QCOMPARE(empty.value("traceEvents").toArray().size(), 1);
}

void TestTrace::resultRoundTrip()
{
    // The worker's reply carries the timeline; the engine reads it back whole.
    RunResult r = twoStreams();
    r.graphReplays = 50;
    r.graphReplayUs = 55.0;
    r.streamLaunchUs = 352.0;
    r.graphCompared = true;
    const RunResult back = RunResult::fromVariant(r.toVariant());
    QCOMPARE(back.timeline.size(), r.timeline.size());
    QCOMPARE(back.timeline[4].stream, QStringLiteral("pipe.1"));
    QCOMPARE(back.timeline[3].direction, QStringLiteral("HtoD"));
    QCOMPARE(back.timeline[0].bytes, qint64(4 << 20));
    QCOMPARE(back.timelineTotalMs, 4.0);
    QCOMPARE(back.graphReplayUs, 55.0);
    QVERIFY(back.graphCompared);
    const QJsonObject json = runResultToJson(back);
    QCOMPARE(json.value("timeline").toObject().value("spans").toArray().size(), 7);
    QCOMPARE(json.value("graph").toObject().value("launchedUs").toDouble(), 352.0);
}

QTEST_GUILESS_MAIN(TestTrace)
#include "tst_trace.moc"
