// Streams, events, copies and chunk groups in a project's launches: parsing,
// saving, and the step graph's validation with its exact messages
// (docs/streams.md).

#include "compile/compiler.h"
#include "project/projectio.h"
#include "project/stepgraph.h"
#include "run/projectcompile.h"
#include "run/runner.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <cstring>

using namespace Kp;

class TestStepGraph : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void plainProjectUnchanged();
    void streamsRoundTrip();
    void chunksGroup();
    void mistakes_data();
    void mistakes();
    void issueOrderFollowsWaits();
    void raceWarnings();
    void legacyWarning();
    void cycleOfThree();
    void expandOverlapPreset();
    void expandProducerConsumer();
    void expandErrors();
    void plainRequestUnchanged();
};

namespace {

QJsonObject baseProject()
{
    return QJsonDocument::fromJson(R"J({
      "format": "kernel-playground-project", "version": 1,
      "source": {"inline": "__global__ void k(const float *a, float *c, int off, int n) {}"},
      "scalars": [{"name": "n", "type": "int32", "value": 1000}, {"name": "chunks", "value": 4}],
      "buffers": [
        {"name": "a", "dtype": "float32", "shape": [1000], "init": {"kind": "random", "seed": 3}},
        {"name": "c", "dtype": "float32", "shape": [1000]}
      ],
      "streams": [{"name": "s1"}, {"name": "s2", "priority": -1}]
    })J")
        .object();
}

Result<Project> withLaunches(const QByteArray &launches, const QByteArray &streams = {})
{
    QJsonObject o = baseProject();
    o.insert(QStringLiteral("launches"), QJsonDocument::fromJson(launches).array());
    if (!streams.isEmpty()) {
        o.insert(QStringLiteral("streams"), QJsonDocument::fromJson(streams).array());
    }
    return parseProject(QJsonDocument(o));
}

GraphNode node(const QString &path, const QString &stream, const QStringList &waits = {}, const QString &records = {})
{
    GraphNode n;
    n.path = path;
    n.label = path;
    n.stream = stream;
    n.waits = waits;
    for (qsizetype i = 0; i < waits.size(); ++i) {
        n.waitPaths << path + QStringLiteral(".waitFor[%1]").arg(i);
    }
    n.records = records;
    n.recordPath = path + QStringLiteral(".event");
    return n;
}

/** The project compiled with NVRTC and prepared as a run would be. */
Result<PreparedRun> prepare(const Project &p)
{
    const auto compiled = Compiler(Compiler::Config{QStringLiteral("-"), 0}).compile(compileRequestFor(p));
    if (!compiled) {
        return compiled.error();
    }
    HostBuffers buffers;
    if (const Status s = buffers.materialize(p, true, HostBuffers::Fill::ShapesOnly); !s) {
        return s.error();
    }
    return prepareRun(p, *compiled, buffers, 0);
}

Project preset(const QString &name)
{
    const Result<Project> p = loadProject(QStringLiteral(KPG_SOURCE_DIR "/presets/%1/%1.kpg").arg(name));
    return p ? *p : Project{};
}

void setScalar(Project &p, const QString &name, double value)
{
    for (ScalarSpec &s : p.scalars) {
        if (s.name == name) {
            s.value = value;
        }
    }
}

} // namespace

void TestStepGraph::plainProjectUnchanged()
{
    // A project of kernel steps only: no kind, no stream, no "streams" key written.
    const QByteArray text = R"J({
      "format": "kernel-playground-project", "version": 1,
      "source": {"inline": "__global__ void k(float *c) {}"},
      "buffers": [{"name": "c", "dtype": "float32", "shape": [16]}],
      "launches": [{"kernel": "k", "grid": [1], "block": [16], "args": ["c"], "note": "kept"}]
    })J";
    const Result<Project> p = parseProject(text);
    QVERIFY2(p, p ? "" : qPrintable(p.error().message));
    QCOMPARE(p->launches.size(), 1);
    QCOMPARE(p->launches[0].kind, LaunchStep::Kind::Kernel);
    QVERIFY(p->launches[0].stream.isEmpty());
    QVERIFY(p->streams.isEmpty());
    QVERIFY(!p->graph);
    const QByteArray saved = serializeProject(*p);
    // The step is written exactly as before streams existed.
    QVERIFY2(saved.contains(
                 R"J({"kernel": "k", "grid": [1], "block": [16], "sharedBytes": 0, "args": ["c"], "note": "kept"})J"),
             saved.constData());
    QVERIFY(!saved.contains("\"streams\""));
    QVERIFY(!saved.contains("\"graph\""));
    QVERIFY(!saved.contains("\"waitFor\""));
    QVERIFY(saved.contains("\"note\": \"kept\""));
}

void TestStepGraph::streamsRoundTrip()
{
    const Result<Project> p = withLaunches(R"J([
      {"kind": "copy", "buffer": "a", "to": "device", "offset": 10, "count": 500, "stream": "s1"},
      {"kind": "record", "event": "copied", "stream": "s1"},
      {"kind": "memset", "buffer": "c", "value": 255, "stream": "s2"},
      {"kernel": "k", "grid": [4], "block": [256], "args": ["a", "c", {"value": "n - 1"}, "n"],
       "stream": "s2", "waitFor": ["copied"]},
      {"kind": "record", "event": "done", "stream": "s2"},
      {"kind": "wait", "waitFor": "done"},
      {"kind": "copy", "buffer": "c", "to": "host"}
    ])J");
    QVERIFY2(p, p ? "" : qPrintable(p.error().message));
    QCOMPARE(p->streams.size(), 2);
    QCOMPARE(p->streams[1].priority, -1);
    const QList<LaunchStep> &l = p->launches;
    QCOMPARE(l.size(), 7);
    QCOMPARE(l[0].kind, LaunchStep::Kind::Copy);
    QVERIFY(l[0].toDevice);
    QCOMPARE(l[0].offset, QStringLiteral("10"));
    QCOMPARE(l[0].count, QStringLiteral("500"));
    QCOMPARE(l[0].stream, QStringLiteral("s1"));
    QCOMPARE(l[1].event, QStringLiteral("copied"));
    QCOMPARE(l[2].memsetValue, 255);
    QCOMPARE(l[3].waitFor, QStringList{QStringLiteral("copied")});
    QCOMPARE(l[3].args[2].expression, QStringLiteral("n - 1"));
    QCOMPARE(l[5].kind, LaunchStep::Kind::Wait);
    QCOMPARE(l[5].waitFor, QStringList{QStringLiteral("done")});
    QVERIFY(!l[6].toDevice);
    QVERIFY(l[6].stream.isEmpty());

    const QByteArray once = serializeProject(*p);
    const Result<Project> again = parseProject(once);
    QVERIFY2(again, again ? "" : qPrintable(again.error().message));
    QCOMPARE(serializeProject(*again), once);
    QVERIFY(once.contains("\"kind\": \"copy\""));
    QVERIFY(once.contains("{\"value\": \"n - 1\"}"));
}

void TestStepGraph::chunksGroup()
{
    const Result<Project> p = withLaunches(R"J([
      {"kind": "chunks", "count": "chunks", "streams": 2, "elements": "n", "name": "pipe", "steps": [
        {"kind": "copy", "buffer": "a", "to": "device"},
        {"kernel": "k", "grid": ["ceil_div(chunk.n, block.x)"], "block": [256],
         "args": ["a", "c", {"value": "chunk.offset"}, {"value": "chunk.n"}]},
        {"kind": "record", "event": "ran"},
        {"kind": "copy", "buffer": "c", "to": "host", "stream": "s1", "waitFor": ["ran"]}
      ]}
    ])J");
    QVERIFY2(p, p ? "" : qPrintable(p.error().message));
    QCOMPARE(p->launches.size(), 1);
    const LaunchStep &g = p->launches[0];
    QCOMPARE(g.kind, LaunchStep::Kind::Chunks);
    QCOMPARE(g.chunkCount, QStringLiteral("chunks"));
    QCOMPARE(g.chunkStreams, QStringLiteral("2"));
    QCOMPARE(g.elements, QStringLiteral("n"));
    QCOMPARE(g.groupName, QStringLiteral("pipe"));
    QCOMPARE(g.steps.size(), 4);
    QCOMPARE(g.steps[1].args[3].expression, QStringLiteral("chunk.n"));

    // Inside a group, a recorded event is the chunk's own.
    const QList<GraphNode> nodes = loadTimeGraph(*p);
    QCOMPARE(nodes.size(), 4);
    QCOMPARE(nodes[0].stream, QStringLiteral("pipe.0"));
    QCOMPARE(nodes[2].records, QStringLiteral("ran[0]"));
    QCOMPARE(nodes[3].waits, QStringList{QStringLiteral("ran[0]")});
    QCOMPARE(chunkStreamName(QStringLiteral("pipe"), 5, 4), QStringLiteral("pipe.1"));

    const QByteArray once = serializeProject(*p);
    const Result<Project> again = parseProject(once);
    QVERIFY2(again, again ? "" : qPrintable(again.error().message));
    QCOMPARE(serializeProject(*again), once);
}

void TestStepGraph::mistakes_data()
{
    QTest::addColumn<QByteArray>("launches");
    QTest::addColumn<QByteArray>("streams");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("path");

    QTest::newRow("unknown stream")
        << QByteArray(R"J([{"kernel": "k", "grid": 1, "block": 1, "args": ["a", "c", 0, "n"], "stream": "s3"}])J")
        << QByteArray()
        << "launches[0].stream: unknown stream 's3'; declare it in \"streams\" (declared: s1, s2), or "
           "use \"default\" or \"legacy\""
        << "launches[0].stream";
    QTest::newRow("wait never recorded")
        << QByteArray(R"J([{"kind": "record", "event": "e1", "stream": "s1"},
                          {"kind": "wait", "waitFor": ["e1", "e2"], "stream": "s2"}])J")
        << QByteArray()
        << "launches[1].waitFor[1]: event 'e2' is never recorded, so waiting for it would wait for nothing; events "
           "recorded: e1"
        << "launches[1].waitFor[1]";
    QTest::newRow("recorded twice")
        << QByteArray(R"J([{"kind": "record", "event": "e1", "stream": "s1"},
                          {"kind": "record", "event": "e1", "stream": "s2"}])J")
        << QByteArray()
        << "launches[1].event: event 'e1' is already recorded by launches[0]; record each event once (use another "
           "name for the second record)"
        << "launches[1].event";
    QTest::newRow("cycle")
        << QByteArray(R"J([{"kind": "wait", "waitFor": "b", "stream": "s1"},
                          {"kind": "record", "event": "a", "stream": "s1"},
                          {"kind": "wait", "waitFor": "a", "stream": "s2"},
                          {"kind": "record", "event": "b", "stream": "s2"}])J")
        << QByteArray()
        << "launches[0].waitFor[0]: the steps wait for each other in a cycle, so none of them can start: launches[0] "
           "on stream 's1' -> launches[1] on stream 's1' -> launches[2] on stream 's2' -> launches[3] on stream 's2' "
           "-> launches[0]; wait only for events recorded by steps that do not wait for this one"
        << "launches[0].waitFor[0]";
    QTest::newRow("wait on the default stream")
        << QByteArray(R"J([{"kind": "wait", "waitFor": "w"}, {"kind": "record", "event": "x"}])J") << QByteArray()
        << "launches[0].waitFor[0]: event 'w' is never recorded, so waiting for it would wait for nothing; events "
           "recorded: x"
        << "launches[0].waitFor[0]";
    QTest::newRow("copy past the end")
        << QByteArray(R"J([{"kind": "copy", "buffer": "a", "to": "device", "offset": 900, "count": 200}])J")
        << QByteArray() << "launches[0].count: elements 900 to 1099 are past the end of buffer 'a' (1000 elements)"
        << "launches[0].count";
    QTest::newRow("offset past the end")
        << QByteArray(R"J([{"kind": "memset", "buffer": "c", "offset": 1001}])J") << QByteArray()
        << "launches[0].offset: elements 1001 to 1000 are past the end of buffer 'c' (1000 elements)"
        << "launches[0].offset";
    QTest::newRow("chunk copy past the end")
        << QByteArray(R"J([{"kind": "chunks", "count": 2, "elements": "n", "steps": [
                          {"kind": "copy", "buffer": "c", "to": "host", "offset": 0, "count": 1001}]}])J")
        << QByteArray()
        << "launches[0].steps[0].count: elements 0 to 1000 are past the end of buffer 'c' (1000 elements)"
        << "launches[0].steps[0].count";
    QTest::newRow("unknown kind") << QByteArray(R"J([{"kind": "copyy", "buffer": "a"}])J") << QByteArray()
                                  << "launches[0].kind: expected \"kernel\", \"copy\", \"memset\", \"record\", "
                                     "\"wait\" or \"chunks\", got \"copyy\""
                                  << "launches[0].kind";
    QTest::newRow("copy without to")
        << QByteArray(R"J([{"kind": "copy", "buffer": "a"}])J") << QByteArray()
        << "launches[0].to: missing; expected \"device\" (host to device) or \"host\" (device to host)"
        << "launches[0].to";
    QTest::newRow("copy of an unknown buffer")
        << QByteArray(R"J([{"kind": "copy", "buffer": "b", "to": "host"}])J") << QByteArray()
        << "launches[0].buffer: unknown buffer 'b'; buffers: a, c"
        << "launches[0].buffer";
    QTest::newRow("copy with a typo")
        << QByteArray(R"J([{"kind": "copy", "buffer": "a", "to": "host", "cout": 4}])J") << QByteArray()
        << "launches[0].cout: unknown key; allowed: buffer, to, offset, count, kind, stream, waitFor"
        << "launches[0].cout";
    QTest::newRow("memset value") << QByteArray(R"J([{"kind": "memset", "buffer": "a", "value": 256}])J")
                                  << QByteArray() << "launches[0].value: must be at most 255, got 256"
                                  << "launches[0].value";
    QTest::newRow("negative count")
        << QByteArray(R"J([{"kind": "copy", "buffer": "a", "to": "host", "count": -1}])J") << QByteArray()
        << "launches[0].count: expected a non-negative integer or an expression string, got -1"
        << "launches[0].count";
    QTest::newRow("wait without events") << QByteArray(R"J([{"kind": "wait"}])J") << QByteArray()
                                         << "launches[0].waitFor: missing; expected the events to wait for (a name "
                                            "or an array)"
                                         << "launches[0].waitFor";
    QTest::newRow("nested chunks") << QByteArray(R"J([{"kind": "chunks", "count": 2, "elements": 4, "steps": [
                          {"kind": "chunks", "count": 2, "elements": 4, "steps": []}]}])J")
                                   << QByteArray()
                                   << "launches[0].steps[0].kind: a chunks group cannot hold another chunks group"
                                   << "launches[0].steps[0].kind";
    QTest::newRow("chunks without count")
        << QByteArray(R"J([{"kind": "chunks", "elements": 4, "steps": []}])J") << QByteArray()
        << "launches[0].count: missing; expected how many chunks (a number or an expression)"
        << "launches[0].count";
    QTest::newRow("stream declared twice") << QByteArray("[]") << QByteArray(R"J([{"name": "x"}, {"name": "x"}])J")
                                           << "streams[1].name: stream 'x' is declared twice"
                                           << "streams[1].name";
    QTest::newRow("default declared") << QByteArray("[]") << QByteArray(R"J([{"name": "default"}])J")
                                      << "streams[0].name: 'default' is built in; steps use it without declaring it"
                                      << "streams[0].name";
    QTest::newRow("priority") << QByteArray("[]") << QByteArray(R"J([{"name": "x", "priority": 1.5}])J")
                              << "streams[0].priority: expected an integer, got 1.5"
                              << "streams[0].priority";
}

void TestStepGraph::mistakes()
{
    QFETCH(QByteArray, launches);
    QFETCH(QByteArray, streams);
    QFETCH(QString, message);
    QFETCH(QString, path);
    const Result<Project> p = withLaunches(launches, streams);
    QVERIFY(!p);
    QCOMPARE(p.error().message, message);
    QCOMPARE(p.error().path, path);
}

void TestStepGraph::issueOrderFollowsWaits()
{
    // A wait for an event recorded later in the list moves the waiting step
    // (and what follows it on its stream) after the record; the rest keeps
    // the list order.
    const QList<GraphNode> nodes{node(QStringLiteral("n0"), QStringLiteral("s1"), {QStringLiteral("e")}),
                                 node(QStringLiteral("n1"), QStringLiteral("s1")),
                                 node(QStringLiteral("n2"), QStringLiteral("s2")),
                                 node(QStringLiteral("n3"), QStringLiteral("s2"), {}, QStringLiteral("e")),
                                 node(QStringLiteral("n4"), QStringLiteral("default"))};
    const Result<StepGraph> g = validateStepGraph(nodes, {QStringLiteral("s1"), QStringLiteral("s2")});
    QVERIFY2(g, g ? "" : qPrintable(g.error().message));
    QCOMPARE(g->order, (QList<int>{2, 3, 0, 1, 4}));
    QCOMPARE(g->streams, (QStringList{QStringLiteral("s1"), QStringLiteral("s2"), QStringLiteral("default")}));
    QVERIFY(g->warnings.isEmpty());
}

void TestStepGraph::raceWarnings()
{
    // Two streams write halves of one buffer: no race. A third step reads the
    // whole buffer on another stream without waiting: a race with each.
    QList<GraphNode> nodes{node(QStringLiteral("w1"), QStringLiteral("s1")),
                           node(QStringLiteral("w2"), QStringLiteral("s2")),
                           node(QStringLiteral("r"), QStringLiteral("s3"))};
    nodes[0].accesses << GraphNode::Access{QStringLiteral("c"), 0, 500, true};
    nodes[1].accesses << GraphNode::Access{QStringLiteral("c"), 500, 1000, true};
    nodes[2].accesses << GraphNode::Access{QStringLiteral("c"), 0, -1, false};
    const QStringList streams{QStringLiteral("s1"), QStringLiteral("s2"), QStringLiteral("s3")};
    Result<StepGraph> g = validateStepGraph(nodes, streams);
    QVERIFY(g);
    QCOMPARE(g->warnings.size(), 2);
    QCOMPARE(g->warnings[0], QStringLiteral("w1 on stream 's1' and r on stream 's3' both use buffer 'c', one of them "
                                            "writes it, and no event wait orders them: a race; record an event after "
                                            "one and wait for it before the other"));
    QVERIFY(g->warnings[1].startsWith(QStringLiteral("w2 on stream 's2' and r on stream 's3'")));

    // Waiting for both writers removes both warnings.
    nodes[0].records = QStringLiteral("d1");
    nodes[1].records = QStringLiteral("d2");
    nodes[2].waits = QStringList{QStringLiteral("d1"), QStringLiteral("d2")};
    nodes[2].waitPaths = QStringList{QStringLiteral("r.waitFor[0]"), QStringLiteral("r.waitFor[1]")};
    g = validateStepGraph(nodes, streams);
    QVERIFY(g);
    QVERIFY2(g->warnings.isEmpty(), qPrintable(g->warnings.join('\n')));

    // Waiting for one writer only leaves the other race.
    nodes[2].waits = QStringList{QStringLiteral("d1")};
    g = validateStepGraph(nodes, streams);
    QVERIFY(g);
    QCOMPARE(g->warnings.size(), 1);
    QVERIFY(g->warnings[0].startsWith(QStringLiteral("w2 on stream 's2' and r on stream 's3'")));
}

void TestStepGraph::legacyWarning()
{
    const Result<StepGraph> g = validateStepGraph(
        {node(QStringLiteral("a"), QStringLiteral("s1")), node(QStringLiteral("b"), QStringLiteral("legacy"))},
        {QStringLiteral("s1")});
    QVERIFY(g);
    QCOMPARE(g->warnings.size(), 1);
    QCOMPARE(g->warnings[0], QStringLiteral("b: runs on the legacy default stream, which waits for all work on the "
                                            "other streams and makes them wait for it, so nothing overlaps with it"));
}

void TestStepGraph::cycleOfThree()
{
    // s1 waits for s3, s3 for s2, s2 for s1: reported from the first step in the list.
    const QList<GraphNode> nodes{node(QStringLiteral("x"), QStringLiteral("s1"), {QStringLiteral("c")}),
                                 node(QStringLiteral("x2"), QStringLiteral("s1"), {}, QStringLiteral("a")),
                                 node(QStringLiteral("y"), QStringLiteral("s2"), {QStringLiteral("a")}),
                                 node(QStringLiteral("y2"), QStringLiteral("s2"), {}, QStringLiteral("b")),
                                 node(QStringLiteral("z"), QStringLiteral("s3"), {QStringLiteral("b")}),
                                 node(QStringLiteral("z2"), QStringLiteral("s3"), {}, QStringLiteral("c")),
                                 node(QStringLiteral("free"), QStringLiteral("default"))};
    const Result<StepGraph> g =
        validateStepGraph(nodes, {QStringLiteral("s1"), QStringLiteral("s2"), QStringLiteral("s3")});
    QVERIFY(!g);
    QCOMPARE(g.error().path, QStringLiteral("x.waitFor[0]"));
    QVERIFY2(g.error().message.contains(QStringLiteral(
                 "x on stream 's1' -> x2 on stream 's1' -> y on stream 's2' -> y2 on stream 's2' -> z on stream "
                 "'s3' -> z2 on stream 's3' -> x")),
             qPrintable(g.error().message));
}

void TestStepGraph::expandOverlapPreset()
{
    Project p = preset(QStringLiteral("overlap_4"));
    QVERIFY(!p.launches.isEmpty());
    Result<PreparedRun> r = prepare(p);
    QVERIFY2(r, r ? "" : qPrintable(r.error().message));
    QVERIFY2(r->warnings.isEmpty(), qPrintable(r->warnings.join('\n')));
    const RunRequest &q = r->request;
    QVERIFY(q.usesStreams());
    QCOMPARE(q.steps.size(), 16 * 3);
    QStringList streams;
    for (const RunStream &s : q.streams) {
        streams << s.name;
    }
    QCOMPARE(streams, (QStringList{"default", "pipe.0", "pipe.1", "pipe.2", "pipe.3"}));
    const qint64 chunk = 16777216 / 16;
    // Chunk 5: the copy in, the kernel and the copy out, on pipe.1 (stream index 2).
    const RunStep &in = q.steps[15];
    const RunStep &k = q.steps[16];
    const RunStep &out = q.steps[17];
    QCOMPARE(in.kind, RunStep::Kind::CopyToDevice);
    QCOMPARE(in.stream, 2);
    QCOMPARE(in.buffer, 0);
    QCOMPARE(in.offset, 5 * chunk * 4);
    QCOMPARE(in.bytes, chunk * 4);
    QCOMPARE(in.label, QStringLiteral("copy a[5242880:6291456] to the device"));
    QCOMPARE(k.kind, RunStep::Kind::Kernel);
    QCOMPARE(k.stream, 2);
    QCOMPARE(k.grid[0], chunk / 256);
    qint32 offset = 0, count = 0;
    std::memcpy(&offset, k.args[2].value.constData(), 4);
    std::memcpy(&count, k.args[3].value.constData(), 4);
    QCOMPARE(offset, qint32(5 * chunk));
    QCOMPARE(count, qint32(chunk));
    QCOMPARE(out.kind, RunStep::Kind::CopyToHost);
    QCOMPARE(out.buffer, 1);
    QCOMPARE(out.stream, 2);

    // The stream and chunk counts are scalars: one stream, 3 uneven chunks.
    setScalar(p, QStringLiteral("streams"), 1);
    setScalar(p, QStringLiteral("chunks"), 3);
    r = prepare(p);
    QVERIFY2(r, r ? "" : qPrintable(r.error().message));
    QCOMPARE(r->request.steps.size(), 9);
    QCOMPARE(r->request.streams.size(), 2);
    const qint64 big = (16777216 + 2) / 3;
    QCOMPARE(r->request.steps[6].offset, 2 * big * 4);
    QCOMPARE(r->request.steps[6].bytes, (16777216 - 2 * big) * 4);
    QVERIFY(r->request.toVariant() == RunRequest::fromVariant(r->request.toVariant()).toVariant());
    QVERIFY(RunRequest::fromVariant(r->request.toVariant()) == r->request);
}

void TestStepGraph::expandProducerConsumer()
{
    Project p = preset(QStringLiteral("producer_consumer"));
    Result<PreparedRun> r = prepare(p);
    QVERIFY2(r, r ? "" : qPrintable(r.error().message));
    QVERIFY2(r->warnings.isEmpty(), qPrintable(r->warnings.join('\n')));
    QCOMPARE(r->request.events, (QStringList{"ready[0]", "ready[1]", "ready[2]", "ready[3]"}));
    QCOMPARE(r->request.steps[2].waits, QList<int>{0});
    QCOMPARE(r->request.streams[2].priority, -1);

    // Without the wait, the consumer of each chunk races its producer.
    p.launches[0].steps[2].waitFor.clear();
    r = prepare(p);
    QVERIFY2(r, r ? "" : qPrintable(r.error().message));
    QVERIFY(!r->warnings.isEmpty());
    QVERIFY2(r->warnings.first().contains(QStringLiteral("both use buffer 'b', one of them writes it, and no event "
                                                         "wait orders them: a race")),
             qPrintable(r->warnings.first()));
}

void TestStepGraph::expandErrors()
{
    Project p = preset(QStringLiteral("overlap_1"));
    // A count given as an expression is checked when the project runs.
    p.launches[0].steps[0].count = QStringLiteral("chunk.n + 1");
    Result<PreparedRun> r = prepare(p);
    QVERIFY(!r);
    QCOMPARE(r.error().path, QStringLiteral("launches[0].steps[0].count"));
    QCOMPARE(r.error().message, QStringLiteral("launches[0].steps[0].count: elements 15728640 to 16777216 are past "
                                               "the end of buffer 'a' (16777216 elements)"));
    p = preset(QStringLiteral("overlap_1"));
    setScalar(p, QStringLiteral("chunks"), 0);
    r = prepare(p);
    QVERIFY(!r);
    QCOMPARE(r.error().path, QStringLiteral("launches[0].count"));
    QCOMPARE(r.error().message,
             QStringLiteral("launches[0].count: 'chunks' gives 0; expected a whole number of at least 1"));
}

void TestStepGraph::plainRequestUnchanged()
{
    const Project p = preset(QStringLiteral("vector_add"));
    const Result<PreparedRun> r = prepare(p);
    QVERIFY2(r, r ? "" : qPrintable(r.error().message));
    QVERIFY(!r->request.usesStreams());
    QVERIFY(r->request.streams.isEmpty());
    QVERIFY(r->request.events.isEmpty());
    QCOMPARE(r->request.steps.size(), 1);
    QVERIFY(r->request.steps[0].label.isEmpty());
    // The wire body of a plain step has the keys it always had.
    const QVariantMap step = r->request.toVariant().value("steps").toList().first().toMap();
    QCOMPARE(step.keys(), (QStringList{"args", "block", "function", "grid", "kernel", "shared"}));
}

QTEST_GUILESS_MAIN(TestStepGraph)
#include "tst_stepgraph.moc"
