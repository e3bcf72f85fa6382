// The Launch panel's edits as pure functions (engine/project/launchedits):
// what a new step is, how args are written, what "Create and bind" adds.

#include "kernel/signature.h"
#include "project/launchedits.h"
#include "project/projectio.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QtTest>

using namespace Kp;

namespace {

/** The kernel named `name` in source, as the compile reports it (name and parameters). */
KernelInfo kernelFrom(const QString &source, const QString &name)
{
    for (const KernelSignature &s : findKernels(source)) {
        if (s.name == name) {
            KernelInfo k;
            k.name = s.name;
            k.params = s.params;
            return k;
        }
    }
    qFatal("no kernel %s", qPrintable(name));
}

/** A project from the JSON fragment of its buffers, scalars and launches. */
Project projectFrom(const QByteArray &fields)
{
    const QByteArray json = R"j({"format": "kernel-playground-project", "version": 1,
        "source": "__global__ void k(float *p) {}\n", )j" +
                            fields + "}";
    const Result<Project> p = parseProject(json);
    if (!p) {
        qFatal("%s", qPrintable(p.error().message));
    }
    return p.value();
}

QJsonObject object(const QByteArray &json)
{
    QJsonParseError e;
    const QJsonDocument d = QJsonDocument::fromJson(json, &e);
    if (e.error != QJsonParseError::NoError) {
        qFatal("bad test JSON: %s in %s", qPrintable(e.errorString()), json.constData());
    }
    return d.object();
}

const QString kSource = QStringLiteral("__global__ void saxpy(int n, float a, const float *x, float *y) {}\n"
                                       "__global__ void fill(float *out) {}\n"
                                       "__global__ void none() {}\n"
                                       "struct P { int a; float b; };\n"
                                       "__global__ void byValue(P p, float4 v, double *d, unsigned long long m) {}\n");

} // namespace

class TestLaunchEdits : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void numberOrText_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QJsonValue>("expected");
        QTest::newRow("integer") << "256" << QJsonValue(256);
        QTest::newRow("spaces around a number") << " 2.5 " << QJsonValue(2.5);
        QTest::newRow("negative exponent") << "-1e-3" << QJsonValue(-1e-3);
        QTest::newRow("an expression") << "ceil_div(n, block.x)" << QJsonValue("ceil_div(n, block.x)");
        QTest::newRow("an expression, trimmed") << "  n * 2 " << QJsonValue("n * 2");
        QTest::newRow("empty") << "" << QJsonValue("");
    }
    void numberOrText()
    {
        QFETCH(QString, text);
        QFETCH(QJsonValue, expected);
        QCOMPARE(LaunchEdits::numberOrText(text), expected);
    }

    void whatCreateAndBindCanMake()
    {
        const KernelInfo k = kernelFrom(kSource, "byValue"); // (P p, float4 v, double *d, unsigned long long m)
        QList<bool> can;
        for (const KernelParam &p : k.params) {
            can << LaunchEdits::canCreateFor(p);
        }
        QCOMPARE(can, (QList<bool>{false, false, true, true}));
        const KernelInfo s = kernelFrom(kSource, "saxpy");
        for (const KernelParam &p : s.params) {
            QVERIFY2(LaunchEdits::canCreateFor(p), qPrintable(p.name));
        }
    }

    void bindingsReadBothForms()
    {
        const KernelInfo k = kernelFrom(kSource, "saxpy");
        const QMap<QString, QJsonValue> byPosition =
            LaunchEdits::bindings(QJsonArray{"n", 2.0, "X", "Y", "extra"}, k); // one more than the kernel has
        QCOMPARE(byPosition.keys(), (QStringList{"a", "n", "x", "y"}));
        QCOMPARE(byPosition.value("a"), QJsonValue(2.0));
        QCOMPARE(byPosition.value("x"), QJsonValue("X"));
        const QMap<QString, QJsonValue> byName = LaunchEdits::bindings(object(R"j({"y": "Y", "n": 7})j"), k);
        QCOMPARE(byName.keys(), (QStringList{"n", "y"}));
        QCOMPARE(byName.value("n"), QJsonValue(7));
        QVERIFY(LaunchEdits::bindings(QJsonValue(), k).isEmpty());
    }

    void argsArePositionalOnlyWhenComplete()
    {
        const KernelInfo k = kernelFrom(kSource, "saxpy");
        QMap<QString, QJsonValue> bound{{"n", "n"}, {"a", 2.0}, {"x", "X"}, {"y", "Y"}};
        QCOMPARE(LaunchEdits::args(k, bound, false), QJsonValue(QJsonArray{"n", 2.0, "X", "Y"}));
        QCOMPARE(LaunchEdits::args(k, bound, true), QJsonValue(object(R"j({"n": "n", "a": 2, "x": "X", "y": "Y"})j")));
        bound.remove("a");
        QCOMPARE(LaunchEdits::args(k, bound, false), QJsonValue(object(R"j({"n": "n", "x": "X", "y": "Y"})j")));
        // What args() writes, bindings() reads back.
        QCOMPARE(LaunchEdits::bindings(LaunchEdits::args(k, bound, false), k), bound);
    }

    void defaultStep_data()
    {
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<QByteArray>("fields");
        QTest::addColumn<QByteArray>("expected");
        QTest::newRow("an integer parameter sizes the grid; existing names bind")
            << "saxpy" << QByteArray(R"j("buffers": [{"name": "y", "dtype": "float32", "shape": [8]}],
                "scalars": [{"name": "n", "type": "int32", "value": 8}])j")
            << QByteArray(R"j({"kernel": "saxpy", "block": [256], "grid": ["ceil_div(n, block.x)"],
                "args": {"n": "n", "y": "y"}})j");
        QTest::newRow("a scalar of a pointer's name does not bind it")
            << "fill" << QByteArray(R"j("scalars": [{"name": "out", "type": "int32", "value": 1}])j")
            << QByteArray(R"j({"kernel": "fill", "block": [256], "grid": ["ceil_div(out.n, block.x)"]})j");
        QTest::newRow("no parameters: one block") << "none" << QByteArray(R"j("buffers": [])j")
                                                  << QByteArray(R"j({"kernel": "none", "block": [256], "grid": [1]})j");
        QTest::newRow("an unsigned 64-bit size counts, a struct does not")
            << "byValue" << QByteArray(R"j("buffers": [])j")
            << QByteArray(R"j({"kernel": "byValue", "block": [256], "grid": ["ceil_div(m, block.x)"]})j");
    }
    void defaultStep()
    {
        QFETCH(QString, kernel);
        QFETCH(QByteArray, fields);
        QFETCH(QByteArray, expected);
        QCOMPARE(LaunchEdits::defaultStep(kernelFrom(kSource, kernel), projectFrom(fields)), object(expected));
    }

    void defaultOtherStep_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QByteArray>("fields");
        QTest::addColumn<QByteArray>("expected"); // empty: refused with `error`
        QTest::addColumn<QString>("error");
        const QByteArray two = R"j("buffers": [{"name": "a", "dtype": "float32", "shape": [4]},
            {"name": "b", "dtype": "float32", "shape": [4]}])j";
        QTest::newRow("copy to the device: the first buffer")
            << "copy-to-device" << two << QByteArray(R"j({"kind": "copy", "buffer": "a", "to": "device"})j") << "";
        QTest::newRow("copy to the host: the last buffer")
            << "copy-to-host" << two << QByteArray(R"j({"kind": "copy", "buffer": "b", "to": "host"})j") << "";
        QTest::newRow("memset") << "memset" << two << QByteArray(R"j({"kind": "memset", "buffer": "a", "value": 0})j")
                                << "";
        QTest::newRow("copy without a buffer") << "copy-to-host" << QByteArray(R"j("buffers": [])j") << QByteArray()
                                               << "No buffer to copy yet: add one in the Buffers panel first.";
        QTest::newRow("memset without a buffer") << "memset" << QByteArray(R"j("buffers": [])j") << QByteArray()
                                                 << "No buffer to set yet: add one in the Buffers panel first.";
        const QByteArray recorded = two + R"j(, "launches": [{"kind": "record", "event": "event1"},
            {"kind": "chunks", "count": 2, "elements": 4, "steps": [{"kind": "record", "event": "inner"}]}])j";
        QTest::newRow("record: a name not yet used")
            << "record" << recorded << QByteArray(R"j({"kind": "record", "event": "event2"})j") << "";
        QTest::newRow("wait: the last event recorded, in chunks too")
            << "wait" << recorded << QByteArray(R"j({"kind": "wait", "waitFor": "inner"})j") << "";
        QTest::newRow("wait with no event")
            << "wait" << two << QByteArray()
            << "No event to wait for yet: add a \"Record an event\" step first (on the stream to wait for).";
        QTest::newRow("an unknown kind") << "launch" << two << QByteArray() << "unknown kind of step 'launch'";
    }
    void defaultOtherStep()
    {
        QFETCH(QString, kind);
        QFETCH(QByteArray, fields);
        QFETCH(QByteArray, expected);
        QFETCH(QString, error);
        const Result<QJsonObject> step = LaunchEdits::defaultOtherStep(kind, projectFrom(fields));
        if (expected.isEmpty()) {
            QVERIFY(!step);
            QCOMPARE(step.error().message, error);
            QCOMPARE(step.error().code, Error::Code::BadInput);
        } else {
            QVERIFY2(step, qPrintable(step ? QString() : step.error().message));
            QCOMPARE(step.value(), object(expected));
        }
    }

    void createMissing_data()
    {
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<QByteArray>("before");
        QTest::addColumn<QStringList>("only");
        QTest::addColumn<QByteArray>("after");
        QTest::newRow("every parameter, by name")
            << "saxpy" << QByteArray(R"j({"launches": [{"kernel": "saxpy", "args": {}}]})j") << QStringList()
            << QByteArray(R"j({"launches": [{"kernel": "saxpy", "args": {"n": "n", "a": "a", "x": "x", "y": "y"}}],
                "scalars": [{"name": "n", "type": "int32", "value": 1024},
                            {"name": "a", "type": "float32", "value": 1}],
                "buffers": [{"name": "x", "dtype": "float32", "shape": [1024], "init": {"kind": "random"}},
                            {"name": "y", "dtype": "float32", "shape": [1024], "init": {"kind": "zeros"}}]})j");
        QTest::newRow("positional args stay positional once complete")
            << "saxpy" << QByteArray(R"j({"launches": [{"kernel": "saxpy", "args": ["n", 2]}]})j") << QStringList()
            << QByteArray(R"j({"launches": [{"kernel": "saxpy", "args": ["n", 2, "x", "y"]}],
                "buffers": [{"name": "x", "dtype": "float32", "shape": [1024], "init": {"kind": "random"}},
                            {"name": "y", "dtype": "float32", "shape": [1024], "init": {"kind": "zeros"}}]})j");
        QTest::newRow("a taken name gets _2, then _3")
            << "fill" << QByteArray(R"j({"launches": [{"kernel": "fill"}],
                "buffers": [{"name": "out"}], "scalars": [{"name": "out_2"}]})j")
            << QStringList() << QByteArray(R"j({"launches": [{"kernel": "fill", "args": ["out_3"]}],
                "buffers": [{"name": "out"},
                            {"name": "out_3", "dtype": "float32", "shape": [1024], "init": {"kind": "zeros"}}],
                "scalars": [{"name": "out_2"}]})j");
        QTest::newRow("only the parameters asked for")
            << "saxpy" << QByteArray(R"j({"launches": [{"kernel": "saxpy"}]})j") << QStringList{"a"}
            << QByteArray(R"j({"launches": [{"kernel": "saxpy", "args": {"a": "a"}}],
                "scalars": [{"name": "a", "type": "float32", "value": 1}]})j");
        QTest::newRow("structs and vectors by value stay unbound")
            << "byValue" << QByteArray(R"j({"launches": [{"kernel": "byValue"}]})j") << QStringList()
            << QByteArray(R"j({"launches": [{"kernel": "byValue", "args": {"d": "d", "m": "m"}}],
                "buffers": [{"name": "d", "dtype": "float64", "shape": [1024], "init": {"kind": "zeros"}}],
                "scalars": [{"name": "m", "type": "uint64", "value": 1024}]})j");
        QTest::newRow("a step out of range changes nothing")
            << "fill" << QByteArray(R"j({"launches": []})j") << QStringList() << QByteArray(R"j({"launches": []})j");
    }
    void createMissing()
    {
        QFETCH(QString, kernel);
        QFETCH(QByteArray, before);
        QFETCH(QStringList, only);
        QFETCH(QByteArray, after);
        QJsonObject o = object(before);
        LaunchEdits::createMissing(o, 0, kernelFrom(kSource, kernel), only);
        QCOMPARE(QJsonDocument(o).toJson(QJsonDocument::Compact),
                 QJsonDocument(object(after)).toJson(QJsonDocument::Compact));
    }

    void stepTitle_data()
    {
        QTest::addColumn<QByteArray>("step");
        QTest::addColumn<QString>("title");
        QTest::newRow("kernel") << QByteArray(R"j({"kernel": "fill", "grid": [1], "block": [1], "args": ["b"]})j")
                                << "fill";
        QTest::newRow("copy with a range on a stream")
            << QByteArray(R"j({"kind": "copy", "buffer": "b", "to": "host", "offset": 2, "stream": "s1"})j")
            << "copy b[2 +to end] → host (stream s1)";
        QTest::newRow("memset") << QByteArray(R"j({"kind": "memset", "buffer": "b", "value": 255})j")
                                << "memset b = 255";
        QTest::newRow("record") << QByteArray(R"j({"kind": "record", "event": "done"})j") << "record event done";
        QTest::newRow("wait") << QByteArray(R"j({"kind": "wait", "waitFor": ["e1", "e2"]})j") << "wait for e1, e2";
        QTest::newRow("chunks") << QByteArray(R"j({"kind": "chunks", "count": 4, "elements": "b.n",
                "steps": [{"kind": "copy", "buffer": "b", "to": "device"}]})j")
                                << "4 chunks of b.n: copy b → device";
    }
    void stepTitle()
    {
        QFETCH(QByteArray, step);
        QFETCH(QString, title);
        // Two events recorded first, for the wait to be valid.
        const Project p = projectFrom(QByteArray(R"j("buffers": [{"name": "b", "dtype": "float32", "shape": [16]}],
            "streams": [{"name": "s1"}], "launches": [{"kind": "record", "event": "e1"},
            {"kind": "record", "event": "e2"}, )j") +
                                      step + "]");
        QCOMPARE(p.launches.size(), 3);
        QCOMPARE(LaunchEdits::stepTitle(p.launches.last()), title);
    }
};

QTEST_GUILESS_MAIN(TestLaunchEdits)
#include "tst_launchedits.moc"
