// The one JSON codec of buffers, inits and scalars: every init kind survives
// a round trip, random inits name their distribution and keep integer seeds
// exact, and read errors carry the JSON path of the bad field.

#include "project/bufferjson.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace Kp;

Q_DECLARE_METATYPE(Kp::BufferInit)

class TestBufferJson : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initRoundTrip_data();
    void initRoundTrip();
    void specRoundTrip();
    void specFromFile();
    void scalarRoundTrip();
    void readErrors_data();
    void readErrors();
};

namespace {

QString compact(const QJsonObject &o)
{
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

void compareInits(const BufferInit &x, const BufferInit &y)
{
    QCOMPARE(x.kind, y.kind);
    QCOMPARE(x.value, y.value);
    QCOMPARE(x.start, y.start);
    QCOMPARE(x.step, y.step);
    QCOMPARE(x.distribution, y.distribution);
    QCOMPARE(x.min, y.min);
    QCOMPARE(x.max, y.max);
    QCOMPARE(x.mean, y.mean);
    QCOMPARE(x.stddev, y.stddev);
    QCOMPARE(x.seed, y.seed);
    QCOMPARE(x.expression, y.expression);
    QCOMPARE(x.file, y.file);
    QCOMPARE(x.imageMode, y.imageMode);
}

} // namespace

void TestBufferJson::initRoundTrip_data()
{
    QTest::addColumn<BufferInit>("init");
    QTest::addColumn<QString>("json"); // compact, keys sorted as QJsonDocument writes them
    using K = BufferInit::Kind;
    auto row = [](const char *tag, const BufferInit &init, const char *json) {
        QTest::newRow(tag) << init << QString::fromUtf8(json);
    };
    BufferInit i;
    row("zeros", i, R"({"kind":"zeros"})");
    i = {};
    i.kind = K::Constant;
    i.value = -2.5;
    row("constant", i, R"({"kind":"constant","value":-2.5})");
    i = {};
    i.kind = K::Ramp;
    i.start = 1;
    i.step = 0.25;
    row("ramp", i, R"({"kind":"ramp","start":1,"step":0.25})");
    i = {};
    i.kind = K::Random;
    i.min = -1;
    i.max = 3;
    i.seed = 42;
    row("random uniform", i, R"({"distribution":"uniform","kind":"random","max":3,"min":-1,"seed":42})");
    i = {};
    i.kind = K::Random;
    i.distribution = BufferInit::Distribution::Normal;
    i.mean = 1;
    i.stddev = 0.5;
    i.seed = 7;
    row("random normal", i, R"({"distribution":"normal","kind":"random","mean":1,"seed":7,"stddev":0.5})");
    i = {};
    i.kind = K::Random;
    i.seed = 9007199254740993ull; // 2^53 + 1: a double would round it
    row("random seed beyond 2^53", i,
        R"({"distribution":"uniform","kind":"random","max":1,"min":0,"seed":9007199254740993})");
    i = {};
    i.kind = K::Random;
    i.seed = 9223372036854775807ull; // issue 28: 2^63-1 was refused as "got 9223372036854776000"
    row("random seed 2^63-1", i,
        R"({"distribution":"uniform","kind":"random","max":1,"min":0,"seed":9223372036854775807})");
    i = {};
    i.kind = K::Expression;
    i.expression = QStringLiteral("sin(x) * alpha");
    row("expression", i, R"({"expr":"sin(x) * alpha","kind":"expression"})");
    i = {};
    i.kind = K::Npy;
    i.file = QStringLiteral("data/w.npy");
    row("npy", i, R"({"file":"data/w.npy","kind":"npy"})");
    i = {};
    i.kind = K::Image;
    i.file = QStringLiteral("in.png");
    row("image rgba8", i, R"({"file":"in.png","kind":"image","mode":"rgba8"})");
    i.imageMode = BufferInit::ImageMode::Gray;
    row("image gray", i, R"({"file":"in.png","kind":"image","mode":"gray"})");
    i.imageMode = BufferInit::ImageMode::Rgba;
    row("image rgba", i, R"({"file":"in.png","kind":"image","mode":"rgba"})");
}

void TestBufferJson::initRoundTrip()
{
    QFETCH(BufferInit, init);
    QFETCH(QString, json);
    const QJsonObject o = bufferInitToJson(init);
    QCOMPARE(compact(o), json);
    if (init.kind == BufferInit::Kind::Random) {
        QVERIFY(o.contains("distribution"));
        QCOMPARE(o.value("seed").toInteger(), static_cast<qint64>(init.seed));
    }
    const Result<BufferInit> back = bufferInitFromJson(o);
    KP_VERIFY_RESULT(back);
    compareInits(*back, init);
    // The ordered form (what .kpg files get) has the same content, "kind" first.
    const JsonNode node = bufferInitNode(init);
    QCOMPARE(node.keys.first(), QString("kind"));
    QCOMPARE(toJsonValue(node).toObject(), o);
}

void TestBufferJson::specRoundTrip()
{
    BufferSpec b;
    b.name = QStringLiteral("grid");
    b.dtype = DType::Float2;
    b.shape = {4, 8, 2};
    b.init.kind = BufferInit::Kind::Random;
    b.init.distribution = BufferInit::Distribution::Normal;
    b.init.seed = 123;
    b.unknown.insert(QStringLiteral("note"), QStringLiteral("kept"));
    const QJsonObject o = bufferSpecToJson(b);
    QCOMPARE(inlineJsonText(bufferSpecNode(b)),
             QString(R"({"name": "grid", "dtype": "float2", "shape": [4, 8, 2], )"
                     R"("init": {"kind": "random", "distribution": "normal", "mean": 0, "stddev": 1, "seed": 123}, )"
                     R"("note": "kept"})"));
    const Result<BufferSpec> back = bufferSpecFromJson(o, QStringLiteral("buffers[0]"));
    KP_VERIFY_RESULT(back);
    QCOMPARE(back->name, b.name);
    QCOMPARE(back->dtype, b.dtype);
    QCOMPARE(back->shape, b.shape);
    compareInits(back->init, b.init);
    QCOMPARE(back->unknown, b.unknown);
    QCOMPARE(bufferSpecToJson(*back), o);
}

void TestBufferJson::specFromFile()
{
    BufferSpec b;
    b.name = QStringLiteral("w");
    b.dtype = DType::Float16;
    b.init.kind = BufferInit::Kind::Npy;
    b.init.file = QStringLiteral("w.npy");
    const QJsonObject o = bufferSpecToJson(b);
    QVERIFY(!o.contains("shape")); // the shape comes from the file
    const Result<BufferSpec> back = bufferSpecFromJson(o);
    KP_VERIFY_RESULT(back);
    QVERIFY(back->shape.isEmpty());
    QCOMPARE(bufferSpecToJson(*back), o);
}

void TestBufferJson::scalarRoundTrip()
{
    ScalarSpec s;
    s.name = QStringLiteral("big");
    s.type = DType::UInt64;
    s.value = 4294967296.0;
    s.unknown.insert(QStringLiteral("unit"), QStringLiteral("bytes"));
    const QJsonObject o = scalarSpecToJson(s);
    QCOMPARE(compact(o), QString(R"({"name":"big","type":"uint64","unit":"bytes","value":4294967296})"));
    const Result<ScalarSpec> back = scalarSpecFromJson(o, QStringLiteral("scalars[0]"));
    KP_VERIFY_RESULT(back);
    QCOMPARE(back->name, s.name);
    QCOMPARE(back->type, s.type);
    QCOMPARE(back->value, s.value);
    QCOMPARE(back->unknown, s.unknown);
}

void TestBufferJson::readErrors_data()
{
    QTest::addColumn<QString>("what"); // init, buffer or scalar
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("message");
    auto row = [](const char *tag, const char *what, const char *json, const char *path, const QString &message) {
        QTest::newRow(tag) << QString(what) << QByteArray(json) << QString(path) << message;
    };
    row("init kind unknown", "init", R"({"kind": "ones"})", "init.kind",
        "init.kind: unknown kind 'ones'; allowed: zeros, constant, ramp, random, expression, npy, image, "
        "uninitialized");
    row("init key of another kind", "init", R"({"kind": "ramp", "value": 1})", "init.value",
        R"(init.value: not a key of a "ramp" init; allowed: kind, start, step)");
    row("init uniform max", "init", R"({"kind": "random", "min": 2, "max": 1})", "init.max",
        "init.max: must be greater than min (2), got 1");
    row("init normal with min", "init", R"({"kind": "random", "distribution": "normal", "min": 0})", "init.min",
        R"(init.min: only for distribution "uniform")");
    row("init seed fraction", "init", R"({"kind": "random", "seed": 1.5})", "init.seed",
        "init.seed: expected an integer, got 1.5");
    row("init seed past 2^63-1", "init", R"({"kind": "random", "seed": 9223372036854775808})", "init.seed",
        "init.seed: must be at most 9223372036854775807; the number given is past the 64-bit integer range "
        "(9.22337e+18)");
    row("init seed negative", "init", R"({"kind": "random", "seed": -1})", "init.seed",
        "init.seed: must be at least 0, got -1");
    row("init constant value missing", "init", R"({"kind": "constant"})", "init.value",
        "init.value: missing; expected a number");
    row("init image mode", "init", R"({"kind": "image", "file": "a.png", "mode": "cmyk"})", "init.mode",
        R"(init.mode: expected "rgba8", "gray" or "rgba", got "cmyk")");
    row("buffer shape", "buffer", R"({"name": "a", "dtype": "float32", "shape": [0, 4]})", "buffers[2].shape",
        "buffers[2].shape: expected 1 to 3 positive integers, got [0, 4]");
    row("buffer shape missing", "buffer", R"({"name": "a", "dtype": "float32"})", "buffers[2].shape",
        "buffers[2].shape: missing; expected 1 to 3 positive integers (only npy and image inits take the shape "
        "from the file)");
    row("buffer too big", "buffer", R"({"name": "a", "dtype": "float64", "shape": [65536, 65536, 4]})",
        "buffers[2].shape",
        "buffers[2].shape: [65536, 65536, 4] of float64 is 137438953472 bytes (17179869184 elements), more than the "
        "limit of 64 GiB (68719476736 bytes)");
    row("buffer init kind", "buffer", R"({"name": "a", "dtype": "float32", "shape": 4, "init": {"kind": 1}})",
        "buffers[2].init.kind",
        "buffers[2].init.kind: expected a string (one of: zeros, constant, ramp, random, expression, npy, image, "
        "uninitialized), "
        "got a number");
    row("scalar value", "scalar", R"({"name": "n", "type": "int8", "value": 200})", "scalars[0].value",
        "scalars[0].value: 200 is out of range for int8 (-128 to 127)");
    row("scalar name", "scalar", R"({"name": "2n", "value": 1})", "scalars[0].name",
        "scalars[0].name: '2n' is not a C identifier (letters, digits and _, not starting with a digit)");
}

void TestBufferJson::readErrors()
{
    QFETCH(QString, what);
    QFETCH(QByteArray, json);
    QFETCH(QString, path);
    QFETCH(QString, message);
    const QJsonValue v = QJsonDocument::fromJson(json).object();
    Error e;
    if (what == QLatin1String("init")) {
        const Result<BufferInit> r = bufferInitFromJson(v);
        QVERIFY(!r.ok());
        e = r.error();
    } else if (what == QLatin1String("buffer")) {
        const Result<BufferSpec> r = bufferSpecFromJson(v, QStringLiteral("buffers[2]"));
        QVERIFY(!r.ok());
        e = r.error();
    } else {
        const Result<ScalarSpec> r = scalarSpecFromJson(v, QStringLiteral("scalars[0]"));
        QVERIFY(!r.ok());
        e = r.error();
    }
    QCOMPARE(e.path, path);
    QCOMPARE(e.message, message);
    QCOMPARE(e.where, QString("project"));
    QCOMPARE(e.code, Error::Code::BadInput);
}

QTEST_GUILESS_MAIN(TestBufferJson)
#include "tst_bufferjson.moc"
