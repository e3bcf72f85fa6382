// .kpg project files: loading every section, the exact message for each kind
// of mistake, unknown keys kept, and save -> load -> save giving the same bytes.

#include "kernel/signature.h"
#include "project/projectio.h"
#include "run/projectcompile.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

using namespace Kp;

// Declared before the test data: moc's tokenizer misreads raw string literals
// with an odd number of quotes, and only needs to see this class.
class TestProject : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void baseIsValid();
    void defaults();
    void fullRoundTrip();
    void keyOrder();
    void unknownKeysKept();
    void inlineSource_data();
    void inlineSource();
    void defines_data();
    void defines();
    void args_data();
    void args();
    void dims_data();
    void dims();
    void malformed_data();
    void malformed();
    void errorPaths_data();
    void errorPaths();
    void badText_data();
    void badText();
    void loadErrors();
    void saveErrors();
    void saveSource();
    void validFiles_data();
    void validFiles();
    void vectorAddPreset();
    void docsExample();
    void includeDirsRelativeToProject_data();
    void includeDirsRelativeToProject();
    void hostileFiles_data();
    void hostileFiles();
    void saveIntoDevice();
};

namespace {

const QString kAllDtypes = dtypeNamesText();
const QString kScalarDtypes = QStringLiteral("int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, "
                                             "bfloat16, float32, float64");
const QString kInitKinds = QStringLiteral("zeros, constant, ramp, random, expression, npy, image, uninitialized");
const QString kDimItems = QStringLiteral("expected 1 to 3 items, each a positive integer or an expression string");

// The valid project every malformed row starts from.
const char *const kBase = R"({
  "format": "kernel-playground-project",
  "version": 1,
  "title": "base",
  "source": {"inline": "__global__ void k(float *a, float *b, float *c, int n) {}"},
  "scalars": [{"name": "n", "type": "int32", "value": 16}],
  "buffers": [
    {"name": "a", "dtype": "float32", "shape": [16]},
    {"name": "b", "dtype": "float32", "shape": [16]},
    {"name": "c", "dtype": "float32", "shape": [16]}
  ],
  "launches": [{"kernel": "k", "grid": [1], "block": [16], "args": ["a", "b", "c", "n"]}]
})";

// Every section with values that differ from the defaults.
const char *const kFull = R"~({
  "format": "kernel-playground-project",
  "version": 1,
  "title": "Everything",
  "description": "Line one\n\nLine *two*",
  "source": "kernels/full.cu",
  "compile": {"arch": "sm_90", "opt": 2, "fastMath": true, "lineInfo": false, "debug": true, "std": "c++20",
              "defines": {"N": 16, "USE_X": true, "OFF": false, "NAME": "abc", "HALF": 0.5},
              "includeDirs": ["include", "/opt/inc"], "extra": ["--extra-device-vectorization"]},
  "scalars": [
    {"name": "n", "type": "int32", "value": 1024},
    {"name": "alpha", "type": "float", "value": 0.25},
    {"name": "big", "type": "uint64", "value": 4294967296},
    {"name": "flag", "type": "uint8", "value": true}
  ],
  "buffers": [
    {"name": "a", "dtype": "float32", "shape": 1024, "init": {"kind": "random", "seed": 7}},
    {"name": "b", "dtype": "float32", "shape": [1024],
     "init": {"kind": "random", "distribution": "normal", "mean": 1, "stddev": 0.5, "seed": 9007199254740993}},
    {"name": "c", "dtype": "float", "shape": [1024]},
    {"name": "m", "dtype": "int32", "shape": [4, 8, 2], "init": {"kind": "constant", "value": -3}},
    {"name": "r", "dtype": "float64", "shape": [32, 32], "init": {"kind": "ramp", "start": 1, "step": 0.5}},
    {"name": "e", "dtype": "float2", "shape": [16], "init": {"kind": "expression", "expr": "sin(x) * alpha"}},
    {"name": "w", "dtype": "float16", "init": {"kind": "npy", "file": "data/w.npy"}},
    {"name": "img", "dtype": "uchar4", "init": {"kind": "image", "file": "lena.png"}},
    {"name": "gray", "dtype": "float32", "shape": [64, 64], "init": {"kind": "image", "file": "g.png", "mode": "gray"}},
    {"name": "taps", "dtype": "float32", "shape": [17], "init": {"kind": "constant", "value": 1}, "symbol": "c_Kernel"}
  ],
  "launches": [
    {"kernel": "add", "grid": "ceil_div(n, block.x)", "block": 256, "sharedBytes": "block.x * 4",
     "args": ["a", "b+16", "c + 8", {"buffer": "m", "offset": 4}, "n", {"scalar": "alpha"}, 2.5, {"value": -1}, true]},
    {"kernel": "scale<float>", "grid": [2, "n / 64", 1], "block": ["16", 16], "sharedBytes": 1024,
     "args": {"out": "c", "in": {"buffer": "a"}, "k": "alpha", "count": 3}}
  ],
  "repeat": {"count": 10, "swap": [["a", "c"]]},
  "timing": {"mode": "hot", "enabled": false, "warmup": 3, "minSamples": 5, "maxSamples": 50, "minSeconds": 0.25,
             "maxNoise": 0.01, "timeoutSeconds": 30, "batch": 8},
  "throughput": {"bytes": "12*n", "flops": 1024},
  "timeout": 2.5,
  "reference": {"launches": [{"kernel": "add", "grid": 4, "block": 256, "args": ["a", "c"]}], "note": "kept"},
  "checks": [{"name": "c = a + b", "buffer": "c", "expected": "a + b", "tolerance": {"abs": 1e-6, "ulp": 2},
              "region": {"begin": [8], "end": [1000]}, "seeds": 3, "nan": true, "tol": 1e-6},
             {"buffer": "m", "reference": "m"}],
  "grading": {}
})~";

const char *const kFullSource = "extern \"C\" __global__ void add(float *a) {}\n";

QJsonObject baseObject()
{
    return QJsonDocument::fromJson(kBase).object();
}

bool writeFile(const QString &path, const QByteArray &data)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(data) == data.size();
}

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QStringList topLevelKeys(const QByteArray &json)
{
    static const QRegularExpression re(QStringLiteral("^  \"([^\"]+)\":"), QRegularExpression::MultilineOption);
    QStringList keys;
    auto it = re.globalMatch(QString::fromUtf8(json));
    while (it.hasNext()) {
        keys << it.next().captured(1);
    }
    return keys;
}

QString bindingText(const ArgBinding &b)
{
    QString s = b.param.isEmpty() ? QString() : b.param + QLatin1Char('=');
    switch (b.kind) {
    case ArgBinding::Kind::Buffer: return s + QStringLiteral("buffer:%1+%2").arg(b.name).arg(b.offset);
    case ArgBinding::Kind::Scalar: return s + QStringLiteral("scalar:%1").arg(b.name);
    case ArgBinding::Kind::Literal: return s + QStringLiteral("value:%1").arg(b.value);
    case ArgBinding::Kind::Texture: return s + QStringLiteral("texture:%1").arg(b.texture.describe());
    }
    return s;
}

QString bindingsText(const QList<ArgBinding> &args)
{
    QStringList parts;
    for (const ArgBinding &b : args) {
        parts << bindingText(b);
    }
    return parts.join(QLatin1Char(';'));
}

/** Every field of two projects (QCOMPARE inside: check QTest::currentTestFailed() after). */
void compareProjects(const Project &a, const Project &b)
{
    QCOMPARE(a.title, b.title);
    QCOMPARE(a.description, b.description);
    QCOMPARE(a.sourceFile, b.sourceFile);
    QCOMPARE(a.sourceText, b.sourceText);
    QCOMPARE(a.compile.arch, b.compile.arch);
    QCOMPARE(a.compile.optLevel, b.compile.optLevel);
    QCOMPARE(a.compile.fastMath, b.compile.fastMath);
    QCOMPARE(a.compile.lineInfo, b.compile.lineInfo);
    QCOMPARE(a.compile.debug, b.compile.debug);
    QCOMPARE(a.compile.std, b.compile.std);
    QCOMPARE(a.compile.defines, b.compile.defines);
    QCOMPARE(a.compile.includeDirs, b.compile.includeDirs);
    QCOMPARE(a.compile.extra, b.compile.extra);
    QCOMPARE(a.scalars.size(), b.scalars.size());
    for (qsizetype i = 0; i < a.scalars.size(); ++i) {
        QCOMPARE(a.scalars[i].name, b.scalars[i].name);
        QCOMPARE(a.scalars[i].type, b.scalars[i].type);
        QCOMPARE(a.scalars[i].value, b.scalars[i].value);
        QCOMPARE(a.scalars[i].unknown, b.scalars[i].unknown);
    }
    QCOMPARE(a.buffers.size(), b.buffers.size());
    for (qsizetype i = 0; i < a.buffers.size(); ++i) {
        const BufferSpec &x = a.buffers[i];
        const BufferSpec &y = b.buffers[i];
        QCOMPARE(x.name, y.name);
        QCOMPARE(x.dtype, y.dtype);
        QCOMPARE(x.shape, y.shape);
        QCOMPARE(x.symbol, y.symbol);
        QCOMPARE(x.init.kind, y.init.kind);
        QCOMPARE(x.init.value, y.init.value);
        QCOMPARE(x.init.start, y.init.start);
        QCOMPARE(x.init.step, y.init.step);
        QCOMPARE(x.init.distribution, y.init.distribution);
        QCOMPARE(x.init.min, y.init.min);
        QCOMPARE(x.init.max, y.init.max);
        QCOMPARE(x.init.mean, y.init.mean);
        QCOMPARE(x.init.stddev, y.init.stddev);
        QCOMPARE(x.init.seed, y.init.seed);
        QCOMPARE(x.init.expression, y.init.expression);
        QCOMPARE(x.init.file, y.init.file);
        QCOMPARE(x.init.imageMode, y.init.imageMode);
        QCOMPARE(x.unknown, y.unknown);
    }
    QCOMPARE(a.launches.size(), b.launches.size());
    for (qsizetype i = 0; i < a.launches.size(); ++i) {
        const LaunchStep &x = a.launches[i];
        const LaunchStep &y = b.launches[i];
        QCOMPARE(x.kernel, y.kernel);
        QCOMPARE(x.grid, y.grid);
        QCOMPARE(x.block, y.block);
        QCOMPARE(x.sharedBytes, y.sharedBytes);
        QCOMPARE(bindingsText(x.args), bindingsText(y.args));
        QCOMPARE(x.unknown, y.unknown);
    }
    QCOMPARE(a.repeat.count, b.repeat.count);
    QCOMPARE(a.repeat.swaps, b.repeat.swaps);
    QCOMPARE(a.timing.mode, b.timing.mode);
    QCOMPARE(a.timing.enabled, b.timing.enabled);
    QCOMPARE(a.timing.warmup, b.timing.warmup);
    QCOMPARE(a.timing.minSamples, b.timing.minSamples);
    QCOMPARE(a.timing.maxSamples, b.timing.maxSamples);
    QCOMPARE(a.timing.minSeconds, b.timing.minSeconds);
    QCOMPARE(a.timing.maxNoise, b.timing.maxNoise);
    QCOMPARE(a.timing.timeoutSeconds, b.timing.timeoutSeconds);
    QCOMPARE(a.timing.batch, b.timing.batch);
    QCOMPARE(a.timing.unknown, b.timing.unknown);
    QCOMPARE(a.throughput.bytes, b.throughput.bytes);
    QCOMPARE(a.throughput.flops, b.throughput.flops);
    QCOMPARE(a.killTimeoutSeconds, b.killTimeoutSeconds);
    QVERIFY(a.checks == b.checks);
    QCOMPARE(a.reference.has_value(), b.reference.has_value());
    if (a.reference) {
        QCOMPARE(a.reference->sourceFile, b.reference->sourceFile);
        QCOMPARE(a.reference->launches.has_value(), b.reference->launches.has_value());
        QCOMPARE(a.reference->unknown, b.reference->unknown);
    }
    QCOMPARE(a.grading.has_value(), b.grading.has_value());
    if (a.grading) {
        QCOMPARE(a.grading->minSpeedup, b.grading->minSpeedup);
    }
    QCOMPARE(a.unknown, b.unknown);
}

} // namespace

void TestProject::baseIsValid()
{
    const Result<Project> r = parseProject(QByteArray(kBase));
    KP_VERIFY_RESULT(r);
    QCOMPARE(r->buffers.size(), 3);
    QCOMPARE(bindingsText(r->launches[0].args), QString("buffer:a+0;buffer:b+0;buffer:c+0;scalar:n"));
}

void TestProject::defaults()
{
    const Result<Project> r = parseProject(QByteArray(R"({"format": "kernel-playground-project", "version": 1,
        "source": "k.cu"})"));
    KP_VERIFY_RESULT(r);
    const Project d;
    QCOMPARE(r->sourceFile, QString("k.cu"));
    QVERIFY(r->sourceText.isEmpty()); // no dir: the file is not read
    QCOMPARE(r->compile.arch, d.compile.arch);
    QCOMPARE(r->compile.optLevel, 3);
    QVERIFY(r->compile.lineInfo);
    QVERIFY(r->scalars.isEmpty() && r->buffers.isEmpty() && r->launches.isEmpty());
    QCOMPARE(r->repeat.count, 1);
    QCOMPARE(r->timing.mode, TimingSpec::Mode::Cold);
    QCOMPARE(r->timing.minSamples, 10);
    QCOMPARE(r->timing.maxSamples, 10000);
    QCOMPARE(r->timing.maxNoise, 0.005);
    QCOMPARE(r->killTimeoutSeconds, 10.0);
    QVERIFY(r->checks.isEmpty());
    QVERIFY(!r->reference);
    QVERIFY(r->unknown.isEmpty());

    // Earlier versions wrote "checks": null for a project without checks
    // (every project the GUI made from a bare .cu): it opens, with none, and
    // is saved without the key.
    const Result<Project> old = parseProject(QByteArray(R"({"format": "kernel-playground-project", "version": 1,
        "source": "k.cu", "checks": null})"));
    KP_VERIFY_RESULT(old);
    QVERIFY(old->checks.isEmpty());
    QVERIFY(!serializeProject(*old).contains("checks"));
}

void TestProject::fullRoundTrip()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString kpg = dir.filePath(QStringLiteral("full.kpg"));
    QVERIFY(writeFile(kpg, kFull));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("kernels/full.cu")), kFullSource));

    const Result<Project> r = loadProject(kpg);
    KP_VERIFY_RESULT(r);
    const Project &p = *r;
    QCOMPARE(p.path, QFileInfo(kpg).absoluteFilePath());
    QCOMPARE(p.title, QString("Everything"));
    QCOMPARE(p.description, QString("Line one\n\nLine *two*"));
    QCOMPARE(p.sourceFile, QString("kernels/full.cu"));
    QCOMPARE(p.sourceText, QString::fromUtf8(kFullSource));
    QCOMPARE(p.compile.arch, QString("sm_90"));
    QCOMPARE(p.compile.optLevel, 2);
    QVERIFY(p.compile.fastMath);
    QVERIFY(!p.compile.lineInfo);
    QVERIFY(p.compile.debug);
    QCOMPARE(p.compile.std, QString("c++20"));
    QCOMPARE(p.compile.defines, QStringList({"HALF=0.5", "N=16", "NAME=abc", "USE_X"}));
    QCOMPARE(p.compile.includeDirs, QStringList({"include", "/opt/inc"}));
    QCOMPARE(p.compile.extra, QStringList({"--extra-device-vectorization"}));

    QCOMPARE(p.scalars.size(), 4);
    QCOMPARE(p.scalars[0].name, QString("n"));
    QCOMPARE(p.scalars[0].type, DType::Int32);
    QCOMPARE(p.scalars[0].value, 1024.0);
    QCOMPARE(p.scalars[1].type, DType::Float32);
    QCOMPARE(p.scalars[1].value, 0.25);
    QCOMPARE(p.scalars[2].type, DType::UInt64);
    QCOMPARE(p.scalars[2].value, 4294967296.0);
    QCOMPARE(p.scalars[3].type, DType::UInt8);
    QCOMPARE(p.scalars[3].value, 1.0);

    QCOMPARE(p.buffers.size(), 10);
    QCOMPARE(p.buffers[9].symbol, QString("c_Kernel"));
    QVERIFY(p.buffers[9].unknown.isEmpty());
    QVERIFY(p.buffers[0].symbol.isEmpty());
    const BufferSpec &a = p.buffers[0];
    QCOMPARE(a.shape, QList<qint64>({1024}));
    QCOMPARE(a.init.kind, BufferInit::Kind::Random);
    QCOMPARE(a.init.distribution, BufferInit::Distribution::Uniform);
    QCOMPARE(a.init.min, 0.0);
    QCOMPARE(a.init.max, 1.0);
    QCOMPARE(a.init.seed, quint64(7));
    const BufferSpec &b = p.buffers[1];
    QCOMPARE(b.init.distribution, BufferInit::Distribution::Normal);
    QCOMPARE(b.init.mean, 1.0);
    QCOMPARE(b.init.stddev, 0.5);
    QCOMPARE(b.init.seed, quint64(9007199254740993ull)); // beyond 2^53: kept exactly
    QCOMPARE(p.buffers[2].dtype, DType::Float32);        // "float" is accepted
    QCOMPARE(p.buffers[2].init.kind, BufferInit::Kind::Zeros);
    QCOMPARE(p.buffers[3].shape, QList<qint64>({4, 8, 2}));
    QCOMPARE(p.buffers[3].init.kind, BufferInit::Kind::Constant);
    QCOMPARE(p.buffers[3].init.value, -3.0);
    QCOMPARE(p.buffers[4].init.kind, BufferInit::Kind::Ramp);
    QCOMPARE(p.buffers[4].init.start, 1.0);
    QCOMPARE(p.buffers[4].init.step, 0.5);
    QCOMPARE(p.buffers[5].dtype, DType::Float2);
    QCOMPARE(p.buffers[5].init.expression, QString("sin(x) * alpha"));
    QCOMPARE(p.buffers[6].init.kind, BufferInit::Kind::Npy);
    QVERIFY(p.buffers[6].shape.isEmpty());
    QCOMPARE(p.buffers[6].init.file, QString("data/w.npy"));
    QCOMPARE(p.buffers[7].init.kind, BufferInit::Kind::Image);
    QCOMPARE(p.buffers[7].init.imageMode, BufferInit::ImageMode::Rgba8);
    QCOMPARE(p.buffers[8].init.imageMode, BufferInit::ImageMode::Gray);

    QCOMPARE(p.launches.size(), 2);
    const LaunchStep &l0 = p.launches[0];
    QCOMPARE(l0.kernel, QString("add"));
    QCOMPARE(l0.grid, QStringList({"ceil_div(n, block.x)"}));
    QCOMPARE(l0.block, QStringList({"256"}));
    QCOMPARE(l0.sharedBytes, QString("block.x * 4"));
    QCOMPARE(bindingsText(l0.args), QString("buffer:a+0;buffer:b+16;buffer:c+8;buffer:m+4;scalar:n;scalar:alpha;"
                                            "value:2.5;value:-1;value:1"));
    const LaunchStep &l1 = p.launches[1];
    QCOMPARE(l1.kernel, QString("scale<float>"));
    QCOMPARE(l1.grid, QStringList({"2", "n / 64", "1"}));
    QCOMPARE(l1.block, QStringList({"16", "16"}));
    QCOMPARE(l1.sharedBytes, QString("1024"));
    QCOMPARE(bindingsText(l1.args), QString("count=value:3;in=buffer:a+0;k=scalar:alpha;out=buffer:c+0"));

    QCOMPARE(p.repeat.count, 10);
    QCOMPARE(p.repeat.swaps, (QList<QPair<QString, QString>>{{"a", "c"}}));
    QCOMPARE(p.timing.mode, TimingSpec::Mode::Hot);
    QVERIFY(!p.timing.enabled);
    QCOMPARE(p.timing.warmup, 3);
    QCOMPARE(p.timing.minSamples, 5);
    QCOMPARE(p.timing.maxSamples, 50);
    QCOMPARE(p.timing.minSeconds, 0.25);
    QCOMPARE(p.timing.maxNoise, 0.01);
    QCOMPARE(p.timing.timeoutSeconds, 30.0);
    QCOMPARE(p.timing.batch, 8);
    QCOMPARE(p.throughput.bytes, QString("12*n"));
    QCOMPARE(p.throughput.flops, QString("1024"));
    QCOMPARE(p.killTimeoutSeconds, 2.5);
    QCOMPARE(p.checks.size(), 2);
    QCOMPARE(p.checks[0].name, QString("c = a + b"));
    QCOMPARE(p.checks[0].expected, QString("a + b"));
    QVERIFY(p.checks[0].tolerance == (CheckTolerance{1e-6, 0, 2}));
    QVERIFY(p.checks[0].region == (CheckRegion{{8}, {1000}}));
    QCOMPARE(p.checks[0].seeds, 3);
    QVERIFY(p.checks[0].nan);
    QCOMPARE(p.checks[0].unknown.value("tol").toDouble(), 1e-6);
    QCOMPARE(p.checks[1].kind, CheckSpec::Kind::Reference);
    QCOMPARE(p.checks[1].displayName(), QString("m == m"));
    QVERIFY(p.reference && p.reference->launches && p.reference->launches->size() == 1);
    QVERIFY(p.reference->sourceFile.isEmpty());
    QCOMPARE(p.reference->unknown.value("note").toString(), QString("kept"));
    QVERIFY(p.unknown.isEmpty());

    // save -> load: equal; saving what save wrote: the same bytes.
    const QString saved = dir.filePath(QStringLiteral("saved.kpg"));
    KP_VERIFY_RESULT(saveProject(p, saved));
    const QByteArray first = readFile(saved);
    QCOMPARE(first, serializeProject(p));
    const Result<Project> again = loadProject(saved);
    KP_VERIFY_RESULT(again);
    compareProjects(p, *again);
    if (QTest::currentTestFailed()) {
        return;
    }
    const QString resaved = dir.filePath(QStringLiteral("resaved.kpg"));
    KP_VERIFY_RESULT(saveProject(*again, resaved));
    QCOMPARE(readFile(resaved), first);
    QCOMPARE(readFile(dir.filePath(QStringLiteral("kernels/full.cu"))), QByteArray(kFullSource)); // untouched
}

void TestProject::keyOrder()
{
    Result<Project> r = parseProject(QByteArray(kFull));
    KP_VERIFY_RESULT(r);
    Project p = *r;
    p.unknown.insert(QStringLiteral("aaFirst"), QStringLiteral("s"));
    p.unknown.insert(QStringLiteral("zzLast"), 1);
    QCOMPARE(topLevelKeys(serializeProject(p)),
             QStringList({"format", "version", "title", "description", "source", "compile", "scalars", "buffers",
                          "launches", "repeat", "timing", "throughput", "timeout", "reference", "checks", "grading",
                          "aaFirst", "zzLast"}));
    const QString text = QString::fromUtf8(serializeProject(p));
    QVERIFY(text.endsWith(QLatin1String("}\n")));
    // Known keys inside a section keep their documented order too.
    QVERIFY(text.indexOf(QLatin1String("\"arch\"")) < text.indexOf(QLatin1String("\"opt\"")));
    QVERIFY(text.indexOf(QLatin1String("\"opt\"")) < text.indexOf(QLatin1String("\"fastMath\"")));
    QVERIFY(text.indexOf(QLatin1String("\"kernel\"")) < text.indexOf(QLatin1String("\"grid\"")));
    QVERIFY(text.indexOf(QLatin1String("\"grid\"")) < text.indexOf(QLatin1String("\"block\"")));
}

void TestProject::unknownKeysKept()
{
    QJsonObject o = baseObject();
    o.insert(QStringLiteral("zzFuture"), QJsonObject{{"x", QJsonArray{1, 2.5, "s"}}});
    o.insert(QStringLiteral("editorState"), QJsonObject{{"cursor", 12}});
    QJsonArray scalars = o.value("scalars").toArray();
    QJsonObject s0 = scalars[0].toObject();
    s0.insert(QStringLiteral("note"), QStringLiteral("problem size"));
    scalars[0] = s0;
    o.insert(QStringLiteral("scalars"), scalars);
    QJsonArray buffers = o.value("buffers").toArray();
    QJsonObject b1 = buffers[1].toObject();
    b1.insert(QStringLiteral("color"), QStringLiteral("red"));
    b1.insert(QStringLiteral("view"), QJsonObject{{"kind", "heatmap"}, {"range", QJsonArray{0, 1}}});
    buffers[1] = b1;
    o.insert(QStringLiteral("buffers"), buffers);
    QJsonArray launches = o.value("launches").toArray();
    QJsonObject l0 = launches[0].toObject();
    l0.insert(QStringLiteral("label"), QStringLiteral("add"));
    launches[0] = l0;
    o.insert(QStringLiteral("launches"), launches);
    o.insert(QStringLiteral("timing"), QJsonObject{{"mode", "hot"}, {"l2FlushBytes", 123456789}});

    const Result<Project> r = parseProject(QJsonDocument(o));
    KP_VERIFY_RESULT(r);
    QCOMPARE(r->unknown.keys(), QStringList({"editorState", "zzFuture"}));
    QCOMPARE(r->unknown.value("zzFuture").toObject().value("x").toArray()[1].toDouble(), 2.5);
    QCOMPARE(r->scalars[0].unknown, (QJsonObject{{"note", "problem size"}}));
    QVERIFY(r->buffers[0].unknown.isEmpty());
    QCOMPARE(r->buffers[1].unknown.keys(), QStringList({"color", "view"}));
    QCOMPARE(r->launches[0].unknown, (QJsonObject{{"label", "add"}}));
    QCOMPARE(r->timing.unknown, (QJsonObject{{"l2FlushBytes", 123456789}}));

    const QByteArray saved = serializeProject(*r);
    const Result<Project> again = parseProject(saved);
    KP_VERIFY_RESULT(again);
    compareProjects(*r, *again);
    if (QTest::currentTestFailed()) {
        return;
    }
    QCOMPARE(serializeProject(*again), saved);
    const QStringList keys = topLevelKeys(saved);
    QCOMPARE(keys.mid(keys.size() - 3), QStringList({"timeout", "editorState", "zzFuture"}));
    // Unknown keys follow the known ones inside a buffer, too.
    const QString text = QString::fromUtf8(saved);
    QVERIFY(text.contains(QLatin1String(R"({"name": "n", "type": "int32", "value": 16, "note": "problem size"})")));
}

void TestProject::inlineSource_data()
{
    QTest::addColumn<QByteArray>("source");
    QTest::addColumn<QString>("expected");
    QTest::newRow("string") << QByteArray(R"({"inline": "__global__ void k() {}"})")
                            << QString("__global__ void k() {}");
    QTest::newRow("escaped newlines") << QByteArray(R"({"inline": "// a\n__global__ void k() {}\n"})")
                                      << QString("// a\n__global__ void k() {}\n");
    QTest::newRow("array of lines") << QByteArray(R"({"inline": ["// a", "__global__ void k() {}", ""]})")
                                    << QString("// a\n__global__ void k() {}\n");
    QTest::newRow("quotes and tabs") << QByteArray(R"({"inline": "const char *s = \"x\\ty\";\t// \u00e9"})")
                                     << QString::fromUtf8("const char *s = \"x\\ty\";\t// \xc3\xa9");
}

void TestProject::inlineSource()
{
    QFETCH(QByteArray, source);
    QFETCH(QString, expected);
    QJsonObject o = baseObject();
    o.insert(QStringLiteral("source"), QJsonDocument::fromJson(source).object());
    QTemporaryDir dir;
    const Result<Project> r = parseProject(QJsonDocument(o), dir.path());
    KP_VERIFY_RESULT(r);
    QVERIFY(r->sourceFile.isEmpty());
    QCOMPARE(r->sourceText, expected);
    const QByteArray saved = serializeProject(*r);
    const Result<Project> again = parseProject(saved);
    KP_VERIFY_RESULT(again);
    QCOMPARE(again->sourceText, expected);
    QVERIFY(again->sourceFile.isEmpty());
    QCOMPARE(serializeProject(*again), saved);
    // Nothing was written beside the project for an inline source.
    KP_VERIFY_RESULT(saveProjectSource(*r, dir.filePath(QStringLiteral("p.kpg"))));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList());
}

void TestProject::defines_data()
{
    QTest::addColumn<QByteArray>("defines");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("object") << QByteArray(R"({"N": 16, "USE_X": true, "OFF": false, "S": "abc", "F": 0.5})")
                            << QStringList({"F=0.5", "N=16", "S=abc", "USE_X"});
    QTest::newRow("object empty value") << QByteArray(R"({"EMPTY": ""})") << QStringList({"EMPTY="});
    QTest::newRow("array") << QByteArray(R"~(["N=16", "USE_X", "EXPR=(1+2)"])~")
                           << QStringList({"N=16", "USE_X", "EXPR=(1+2)"});
    QTest::newRow("empty array") << QByteArray("[]") << QStringList();
}

void TestProject::defines()
{
    QFETCH(QByteArray, defines);
    QFETCH(QStringList, expected);
    QJsonObject o = baseObject();
    const QJsonDocument d = QJsonDocument::fromJson(defines);
    o.insert(QStringLiteral("compile"),
             QJsonObject{{"defines", d.isArray() ? QJsonValue(d.array()) : QJsonValue(d.object())}});
    const Result<Project> r = parseProject(QJsonDocument(o));
    KP_VERIFY_RESULT(r);
    QCOMPARE(r->compile.defines, expected);
    // Saved in the array form, which reads back the same.
    const Result<Project> again = parseProject(serializeProject(*r));
    KP_VERIFY_RESULT(again);
    QCOMPARE(again->compile.defines, expected);
}

void TestProject::args_data()
{
    QTest::addColumn<QByteArray>("args");
    QTest::addColumn<QString>("expected");
    QTest::newRow("positional") << QByteArray(R"(["a", "b", "c", "n"])")
                                << QString("buffer:a+0;buffer:b+0;buffer:c+0;scalar:n");
    QTest::newRow("offset string") << QByteArray(R"(["a+16", "b + 4", " c+0 ", "n"])")
                                   << QString("buffer:a+16;buffer:b+4;buffer:c+0;scalar:n");
    QTest::newRow("offset at the end") << QByteArray(R"(["a+1024"])") << QString("buffer:a+1024");
    QTest::newRow("objects") << QByteArray(R"([{"buffer": "a", "offset": 3}, {"buffer": "b"}, {"scalar": "n"},
                                               {"value": 2.5}, {"value": false}])")
                             << QString("buffer:a+3;buffer:b+0;scalar:n;value:2.5;value:0");
    QTest::newRow("literals") << QByteArray(R"([1, -2.5, true, 1e3])")
                              << QString("value:1;value:-2.5;value:1;value:1000");
    QTest::newRow("by name") << QByteArray(R"({"out": "c", "x": "a+2", "count": "n", "scale": 0.5})")
                             << QString("count=scalar:n;out=buffer:c+0;scale=value:0.5;x=buffer:a+2");
    QTest::newRow("by name objects") << QByteArray(R"({"p": {"buffer": "b", "offset": 8}, "q": {"scalar": "n"}})")
                                     << QString("p=buffer:b+8;q=scalar:n");
    QTest::newRow("none") << QByteArray("[]") << QString();
}

void TestProject::args()
{
    QFETCH(QByteArray, args);
    QFETCH(QString, expected);
    QJsonObject o = baseObject();
    o.insert(QStringLiteral("buffers"), QJsonDocument::fromJson(R"([
        {"name": "a", "dtype": "float32", "shape": [1024]},
        {"name": "b", "dtype": "float32", "shape": [1024]},
        {"name": "c", "dtype": "float32", "shape": [1024]}])")
                                            .array());
    const QJsonDocument d = QJsonDocument::fromJson(args);
    QVERIFY(!d.isNull());
    QJsonObject launch{{"kernel", "k"}, {"grid", 1}, {"block", 1}};
    launch.insert(QStringLiteral("args"), d.isArray() ? QJsonValue(d.array()) : QJsonValue(d.object()));
    o.insert(QStringLiteral("launches"), QJsonArray{launch});
    const Result<Project> r = parseProject(QJsonDocument(o));
    KP_VERIFY_RESULT(r);
    QCOMPARE(bindingsText(r->launches[0].args), expected);
    const QByteArray saved = serializeProject(*r);
    const Result<Project> again = parseProject(saved);
    KP_VERIFY_RESULT(again);
    QCOMPARE(bindingsText(again->launches[0].args), expected);
    QCOMPARE(serializeProject(*again), saved);
}

void TestProject::dims_data()
{
    QTest::addColumn<QByteArray>("grid");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("number") << QByteArray("4") << QStringList({"4"});
    QTest::newRow("string") << QByteArray(R"~("ceil_div(n, block.x)")~") << QStringList({"ceil_div(n, block.x)"});
    QTest::newRow("mixed") << QByteArray(R"([8, "n / 8", 2])") << QStringList({"8", "n / 8", "2"});
    QTest::newRow("largest") << QByteArray("[2147483647]") << QStringList({"2147483647"});
    QTest::newRow("numeric string") << QByteArray(R"(["16"])") << QStringList({"16"});
}

void TestProject::dims()
{
    QFETCH(QByteArray, grid);
    QFETCH(QStringList, expected);
    const QByteArray json = QByteArray(R"({"format": "kernel-playground-project", "version": 1, "source": "k.cu",
        "scalars": [{"name": "n", "value": 64}],
        "launches": [{"kernel": "k", "block": 1, "grid": )") +
                            grid + "}]}";
    const Result<Project> r = parseProject(json);
    KP_VERIFY_RESULT(r);
    QCOMPARE(r->launches[0].grid, expected);
    const Result<Project> again = parseProject(serializeProject(*r));
    KP_VERIFY_RESULT(again);
    QCOMPARE(again->launches[0].grid, expected);
}

void TestProject::malformed_data()
{
    QTest::addColumn<QByteArray>("patch");
    QTest::addColumn<QString>("message");
    // patch: top-level keys that replace the base's; "-key" removes one.
    auto row = [](const char *tag, const char *patch, const QString &message) {
        QTest::newRow(tag) << QByteArray(patch) << message;
    };
    // header
    row("format missing", R"({"-format": 0})",
        R"(format: missing; expected "kernel-playground-project" (is this a Kernel Playground project?))");
    row("format wrong", R"({"format": "kpg"})", R"(format: expected "kernel-playground-project", got "kpg")");
    row("format number", R"({"format": 1})", R"(format: expected "kernel-playground-project", got a number)");
    row("version newer", R"({"version": 2})",
        "version: this file is version 2; this Kernel Playground reads version 1; update the program");
    row("version string", R"({"version": "1"})", "version: expected 1, got a string");
    row("version zero", R"({"version": 0})", "version: expected 1, got 0");
    row("version missing", R"({"-version": 0})", "version: missing; expected 1");
    row("title number", R"({"title": 5})", "title: expected a string, got a number");
    row("description line", R"({"description": ["a", 2]})", "description[1]: expected a string, got a number");
    row("description object", R"({"description": {}})",
        "description: expected a string or an array of lines, got an object");

    // grading (docs/labs.md)
    row("grading number", R"({"grading": 1})", "grading: expected an object, got a number");
    row("grading unknown key", R"({"grading": {"speed": 1}})", "grading.speed: unknown key; allowed: speedup");
    row("grading speedup zero", R"({"grading": {"speedup": 0}})", "grading.speedup: must be greater than 0, got 0");
    row("grading speedup text", R"({"grading": {"speedup": "2x"}})",
        "grading.speedup: expected a number, got a string");
    row("grading speedup without a reference", R"({"grading": {"speedup": 0.5}})",
        R"(grading.speedup: a speed target needs a reference kernel to compare with: add "reference": {"source": )"
        R"("reference.cu"})");
    row("grading speedup with reference launches only",
        R"({"reference": {"launches": []}, "grading": {"speedup": 0.5}})",
        R"(grading.speedup: a speed target needs a reference kernel to compare with: add "reference": {"source": )"
        R"("reference.cu"})");

    // source
    row("source missing", R"({"-source": 0})",
        R"(source: missing; expected a file name ("kernel.cu") or {"inline": "..."})");
    row("source number", R"({"source": 3})",
        R"(source: expected a file name ("kernel.cu") or {"inline": "..."}, got a number)");
    row("source empty", R"({"source": ""})",
        R"(source: expected a file name ("kernel.cu") or {"inline": "..."}, got an empty string)");
    row("source unknown key", R"({"source": {"file": "k.cu"}})", "source.file: unknown key; allowed: inline");
    row("source inline missing", R"({"source": {}})",
        "source.inline: missing; expected the kernel source (a string or an array of lines)");

    // compile
    row("opt too high", R"({"compile": {"opt": 4}})", "compile.opt: must be at most 3, got 4");
    row("opt string", R"({"compile": {"opt": "3"}})", "compile.opt: expected an integer, got a string");
    row("opt fraction", R"({"compile": {"opt": 1.5}})", "compile.opt: expected an integer, got 1.5");
    row("compile typo", R"({"compile": {"fastmath": true}})",
        "compile.fastmath: unknown key; allowed: arch, opt, fastMath, lineInfo, debug, std, defines, includeDirs, "
        "extra");
    row("fastMath string", R"({"compile": {"fastMath": "yes"}})",
        "compile.fastMath: expected true or false, got a string");
    row("arch", R"({"compile": {"arch": "sm90"}})",
        R"(compile.arch: expected "auto", "sm_XX" or "compute_XX", got "sm90")");
    row("std", R"({"compile": {"std": "17"}})",
        R"(compile.std: expected "c++NN" (c++11, c++14, c++17, c++20), got "17")");
    row("compile array", R"({"compile": []})", "compile: expected an object, got an array");
    row("define name", R"({"compile": {"defines": ["1N=2"]}})",
        R"(compile.defines[0]: expected "NAME" or "NAME=VALUE" with NAME a C identifier, got "1N=2")");
    row("define twice", R"({"compile": {"defines": ["N=1", "M", "N=2"]}})",
        "compile.defines[2]: 'N' is already defined by compile.defines[0]");
    row("define null", R"({"compile": {"defines": {"N": null}}})",
        "compile.defines.N: expected a number, a string or true/false, got null");
    row("define object name", R"({"compile": {"defines": {"A B": 1}}})",
        "compile.defines.A B: 'A B' is not a C identifier (a macro name)");
    row("defines string", R"({"compile": {"defines": "N=1"}})",
        R"(compile.defines: expected an object {"NAME": value} or an array of "NAME=VALUE", got a string)");
    row("include number", R"({"compile": {"includeDirs": [1]}})",
        "compile.includeDirs[0]: expected a string, got a number");

    // scalars
    row("scalars object", R"({"scalars": {}})", "scalars: expected an array, got an object");
    row("scalar string", R"({"scalars": ["n"]})", "scalars[0]: expected an object, got a string");
    row("scalar no name", R"({"scalars": [{"value": 1}]})", "scalars[0].name: missing; expected a C identifier");
    row("scalar bad name", R"({"scalars": [{"name": "my-n", "value": 1}]})",
        "scalars[0].name: 'my-n' is not a C identifier (letters, digits and _, not starting with a digit)");
    row("scalar twice", R"({"scalars": [{"name": "n", "value": 1}, {"name": "n", "value": 2}]})",
        "scalars[1].name: 'n' is already defined by scalars[0]");
    row("scalar vector type", R"({"scalars": [{"name": "n", "type": "float4", "value": 1}]})",
        "scalars[0].type: 'float4' is a vector type; a scalar must be one of: " + kScalarDtypes);
    row("scalar unknown type", R"({"scalars": [{"name": "n", "type": "int33", "value": 1}]})",
        "scalars[0].type: unknown dtype 'int33'; allowed: " + kScalarDtypes);
    row("scalar value string", R"({"scalars": [{"name": "n", "value": "16"}]})",
        "scalars[0].value: expected a number, got a string");
    row("scalar value missing", R"({"scalars": [{"name": "n"}]})", "scalars[0].value: missing; expected a number");
    row("scalar fraction", R"({"scalars": [{"name": "n", "type": "int32", "value": 3.5}]})",
        "scalars[0].value: 3.5 is not an integer (type int32)");
    row("scalar uint8 range", R"({"scalars": [{"name": "n", "type": "uint8", "value": 300}]})",
        "scalars[0].value: 300 is out of range for uint8 (0 to 255)");
    row("scalar int32 range", R"({"scalars": [{"name": "n", "value": 2147483648}]})",
        "scalars[0].value: 2147483648 is out of range for int32 (-2147483648 to 2147483647)");
    row("scalar negative unsigned", R"({"scalars": [{"name": "n", "type": "unsigned int", "value": -1}]})",
        "scalars[0].value: -1 is out of range for uint32 (0 to 4294967295)");
    row("scalar uint64 negative", R"({"scalars": [{"name": "n", "type": "uint64", "value": -1}]})",
        "scalars[0].value: -1 is out of range for uint64 (0 to 18446744073709551615)");
    row("scalar not exact", R"({"scalars": [{"name": "n", "type": "int64", "value": 9007199254740993}]})",
        "scalars[0].value: 9007199254740993 is too large to be exact (scalar values are doubles; at most "
        "9007199254740992 in magnitude)");
    row("scalar half range", R"({"scalars": [{"name": "n", "type": "float16", "value": 70000}]})",
        "scalars[0].value: 70000 is out of range for float16 (-65504 to 65504)");

    // buffers
    row("buffers string", R"({"buffers": "a"})", "buffers: expected an array, got a string");
    row("shape zero", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": [16]},
                                      {"name": "b", "dtype": "float32", "shape": [16]},
                                      {"name": "c", "dtype": "float32", "shape": [0, 4]}]})",
        "buffers[2].shape: expected 1 to 3 positive integers, got [0, 4]");
    row("shape four", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": [1, 2, 3, 4]}]})",
        "buffers[0].shape: expected 1 to 3 positive integers, got [1, 2, 3, 4]");
    row("shape string", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": "16"}]})",
        R"(buffers[0].shape: expected 1 to 3 positive integers, got "16")");
    row("shape fraction", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 1.5}]})",
        "buffers[0].shape: expected 1 to 3 positive integers, got 1.5");
    row("shape empty", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": []}]})",
        "buffers[0].shape: expected 1 to 3 positive integers, got []");
    row("shape missing", R"({"buffers": [{"name": "a", "dtype": "float32"}]})",
        "buffers[0].shape: missing; expected 1 to 3 positive integers (only npy and image inits take the shape "
        "from the file)");
    row("dtype unknown", R"({"buffers": [{"name": "a", "dtype": "float8", "shape": 4}]})",
        "buffers[0].dtype: unknown dtype 'float8'; allowed: " + kAllDtypes);
    row("dtype missing", R"({"buffers": [{"name": "a", "shape": 4}]})",
        "buffers[0].dtype: missing; expected one of: " + kAllDtypes);
    row("dtype number", R"({"buffers": [{"name": "a", "dtype": 4, "shape": 4}]})",
        "buffers[0].dtype: expected a dtype name, got a number");
    row("buffer is scalar", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4},
                                            {"name": "n", "dtype": "float32", "shape": 4}]})",
        "buffers[1].name: 'n' is already a scalar");
    row("symbol number", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4, "symbol": 3}]})",
        "buffers[0].symbol: expected a string, got a number");
    row("symbol not a name", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4, "symbol": "c[0]"}]})",
        "buffers[0].symbol: 'c[0]' is not a variable name; \"symbol\" names a __constant__ or __device__ variable of "
        "the source, e.g. \"c_Kernel\" or \"ns::table\"");
    row("symbol empty", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4, "symbol": ""}]})",
        "buffers[0].symbol: '' is not a variable name; \"symbol\" names a __constant__ or __device__ variable of "
        "the source, e.g. \"c_Kernel\" or \"ns::table\"");
    row("buffer twice", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4},
                                        {"name": "a", "dtype": "int32", "shape": 4}]})",
        "buffers[1].name: 'a' is already defined by buffers[0]");
    row("too big", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": [65536, 65536, 5]}]})",
        "buffers[0].shape: [65536, 65536, 5] of float32 is 85899345920 bytes (21474836480 elements), more than "
        "the limit of 64 GiB (68719476736 bytes)");
    row("too big float4", R"({"buffers": [{"name": "a", "dtype": "float4", "shape": [65536, 65536, 2]}]})",
        "buffers[0].shape: [65536, 65536, 2] of float4 is 137438953472 bytes (8589934592 elements), more than "
        "the limit of 64 GiB (68719476736 bytes)");
    row("overflow", R"({"buffers": [{"name": "a", "dtype": "float32",
                                     "shape": [4294967296, 4294967296, 4294967296]}]})",
        "buffers[0].shape: [4294967296, 4294967296, 4294967296] of float32 is more than the limit of 64 GiB "
        "(68719476736 bytes)");

    // buffer init
    row("init kind missing", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4, "init": {}}]})",
        "buffers[0].init.kind: missing; expected one of: " + kInitKinds);
    row("init kind unknown",
        R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4, "init": {"kind": "rand"}}]})",
        "buffers[0].init.kind: unknown kind 'rand'; allowed: " + kInitKinds);
    row("init string", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4, "init": "zeros"}]})",
        "buffers[0].init: expected an object, got a string");
    row("stddev for uniform", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4,
                                               "init": {"kind": "random", "stddev": 2}}]})",
        R"(buffers[0].init.stddev: only for distribution "normal")");
    row("min for normal", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4,
                                           "init": {"kind": "random", "distribution": "normal", "min": 2}}]})",
        R"(buffers[0].init.min: only for distribution "uniform")");
    row("seed typo", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4,
                                      "init": {"kind": "random", "sead": 2}}]})",
        R"(buffers[0].init.sead: not a key of a "random" init; allowed: kind, distribution, min, max, seed)");
    row("step for constant", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4,
                                              "init": {"kind": "constant", "value": 1, "step": 2}}]})",
        R"(buffers[0].init.step: not a key of a "constant" init; allowed: kind, value)");
    row("constant no value", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4,
                                              "init": {"kind": "constant"}}]})",
        "buffers[0].init.value: missing; expected a number");
    row("ramp step string", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4,
                                             "init": {"kind": "ramp", "step": "2"}}]})",
        "buffers[0].init.step: expected a number, got a string");
    row("seed negative", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4,
                                          "init": {"kind": "random", "seed": -1}}]})",
        "buffers[0].init.seed: must be at least 0, got -1");
    row("seed fraction", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4,
                                          "init": {"kind": "random", "seed": 1.5}}]})",
        "buffers[0].init.seed: expected an integer, got 1.5");
    row("uniform empty range", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4,
                                                "init": {"kind": "random", "min": 1, "max": 1}}]})",
        "buffers[0].init.max: must be greater than min (1), got 1");
    row("stddev negative", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4,
                             "init": {"kind": "random", "distribution": "normal", "stddev": -1}}]})",
        "buffers[0].init.stddev: must be at least 0, got -1");
    row("distribution", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4,
                                         "init": {"kind": "random", "distribution": "gauss"}}]})",
        R"(buffers[0].init.distribution: expected "uniform" or "normal", got "gauss")");
    row("image mode", R"({"buffers": [{"name": "a", "dtype": "uchar4",
                                       "init": {"kind": "image", "file": "x.png", "mode": "rgb"}}]})",
        R"(buffers[0].init.mode: expected "rgba8", "gray" or "rgba", got "rgb")");
    row("image rgba8 dtype", R"({"buffers": [{"name": "a", "dtype": "float32",
                                              "init": {"kind": "image", "file": "x.png"}}]})",
        R"(buffers[0].init.mode: "rgba8" needs dtype uchar4, or uint8 with a last dimension of 4; got float32)");
    row("image rgba shape", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": [8, 8, 3],
                                             "init": {"kind": "image", "file": "x.png", "mode": "rgba"}}]})",
        R"(buffers[0].init.mode: "rgba" needs dtype float4, or a float type with a last dimension of 4; got )"
        "float32 [8, 8, 3]");
    row("image gray vector", R"({"buffers": [{"name": "a", "dtype": "float4",
                                              "init": {"kind": "image", "file": "x.png", "mode": "gray"}}]})",
        R"(buffers[0].init.mode: "gray" needs a scalar dtype (one value per pixel), got float4)");
    row("expr empty", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": 4,
                                       "init": {"kind": "expression", "expr": ""}}]})",
        R"~(buffers[0].init.expr: expected an expression string such as "sin(x)", got an empty string)~");
    row("npy no file", R"({"buffers": [{"name": "a", "dtype": "float32", "init": {"kind": "npy"}}]})",
        "buffers[0].init.file: missing; expected a file name");

    // launches
    row("launches object", R"({"launches": {}})", "launches: expected an array, got an object");
    row("block object", R"({"launches": [{"kernel": "k", "grid": 1, "block": {}}]})",
        "launches[0].block: " + kDimItems + ", got {}");
    row("block zero", R"({"launches": [{"kernel": "k", "grid": 1, "block": [0]}]})",
        "launches[0].block[0]: expected a positive integer (at most 2147483647) or an expression string, got 0");
    row("block bare zero", R"({"launches": [{"kernel": "k", "grid": 1, "block": 0}]})",
        "launches[0].block: expected a positive integer (at most 2147483647) or an expression string, got 0");
    row("grid four", R"({"launches": [{"kernel": "k", "grid": [1, 1, 1, 1], "block": 1}]})",
        "launches[0].grid: " + kDimItems + ", got [1, 1, 1, 1]");
    row("grid too big", R"({"launches": [{"kernel": "k", "grid": [1, 2147483648], "block": 1}]})",
        "launches[0].grid[1]: expected a positive integer (at most 2147483647) or an expression string, got "
        "2147483648");
    row("grid null item", R"({"launches": [{"kernel": "k", "grid": [null], "block": 1}]})",
        "launches[0].grid[0]: expected a positive integer (at most 2147483647) or an expression string, got null");
    row("grid empty string", R"({"launches": [{"kernel": "k", "grid": " ", "block": 1}]})",
        "launches[0].grid: expected a positive integer (at most 2147483647) or an expression string, got a "
        "string");
    row("grid missing", R"({"launches": [{"kernel": "k", "block": 1}]})",
        "launches[0].grid: missing; expected 1 to 3 items, each a positive integer or an expression string");
    row("kernel missing", R"({"launches": [{"grid": 1, "block": 1}]})",
        "launches[0].kernel: missing; expected the kernel's name");
    row("kernel number", R"({"launches": [{"kernel": 1, "grid": 1, "block": 1}]})",
        "launches[0].kernel: expected the kernel's name, got a number");
    row("shared negative", R"({"launches": [{"kernel": "k", "grid": 1, "block": 1, "sharedBytes": -1}]})",
        "launches[0].sharedBytes: expected a non-negative integer (at most 2147483647) or an expression string, "
        "got -1");
    row("arg unknown", R"({"launches": [{"kernel": "k", "grid": 1, "block": 1, "args": ["a", "b", "cc", "n"]}]})",
        "launches[0].args[2]: unknown buffer or scalar 'cc'; buffers: a, b, c; scalars: n");
    row("arg unknown no scalars", R"({"-scalars": 0, "launches": [{"kernel": "k", "grid": 1, "block": 1,
                                                                   "args": ["x"]}]})",
        "launches[0].args[0]: unknown buffer or scalar 'x'; buffers: a, b, c; scalars: none");
    row("arg offset unknown", R"({"launches": [{"kernel": "k", "grid": 1, "block": 1, "args": ["d+4"]}]})",
        "launches[0].args[0]: unknown buffer or scalar 'd'; buffers: a, b, c; scalars: n");
    row("arg scalar offset",
        R"({"launches": [{"kernel": "k", "grid": 1, "block": 1, "args": ["a", "b", "c", "n+1"]}]})",
        "launches[0].args[3]: 'n' is a scalar; only a buffer takes an offset");
    row("arg expression", R"({"launches": [{"kernel": "k", "grid": 1, "block": 1, "args": ["2*n"]}]})",
        R"(launches[0].args[0]: expected a buffer or scalar name, "buffer+offset", a number, null, a braced value ("float2 {1, 2}") or an object, got "2*n")");
    row("arg empty array", R"({"launches": [{"kernel": "k", "grid": 1, "block": 1, "args": [[]]}]})",
        "launches[0].args[0]: an empty array is no value; a vector or struct needs one number per member, e.g. [1, 2] "
        "for a float2");
    row("arg unbalanced braces", R"({"launches": [{"kernel": "k", "grid": 1, "block": 1, "args": ["float2 {1, 2"]}]})",
        "launches[0].args[0]: expected a braced value such as \"float2 {1, 2}\", got 'float2 {1, 2'");
    row("arg two kinds", R"({"launches": [{"kernel": "k", "grid": 1, "block": 1,
                                           "args": [{"buffer": "a", "value": 1}]}]})",
        R"(launches[0].args[0]: expected exactly one of "buffer", "scalar" or "value", got {"buffer": "a", "value": 1})");
    row("arg offset with scalar", R"({"launches": [{"kernel": "k", "grid": 1, "block": 1,
                                                    "args": [{"scalar": "n", "offset": 1}]}]})",
        R"(launches[0].args[0].offset: only allowed with "buffer")");
    row("arg buffer is scalar", R"({"launches": [{"kernel": "k", "grid": 1, "block": 1,
                                                  "args": [{"buffer": "n"}]}]})",
        "launches[0].args[0].buffer: 'n' is a scalar, not a buffer");
    row("arg scalar unknown", R"({"launches": [{"kernel": "k", "grid": 1, "block": 1,
                                                "args": [{"scalar": "x"}]}]})",
        "launches[0].args[0].scalar: unknown scalar 'x'; scalars: n");
    row("arg scalar is buffer", R"({"launches": [{"kernel": "k", "grid": 1, "block": 1,
                                                  "args": {"p": {"scalar": "a"}}}]})",
        "launches[0].args.p.scalar: 'a' is a buffer, not a scalar");
    row("arg offset past end", R"({"launches": [{"kernel": "k", "grid": 1, "block": 1, "args": ["a+17"]}]})",
        "launches[0].args[0]: offset 17 is past the end of buffer 'a' (16 elements)");
    row("arg object offset negative", R"({"launches": [{"kernel": "k", "grid": 1, "block": 1,
                                                        "args": [{"buffer": "a", "offset": -1}]}]})",
        "launches[0].args[0].offset: must be at least 0, got -1");
    // A string is an expression (docs/streams.md); an empty one is not.
    row("arg object value string", R"({"launches": [{"kernel": "k", "grid": 1, "block": 1,
                                                     "args": [{"value": ""}]}]})",
        "launches[0].args[0].value: expected a number, got an empty string");
    row("arg param name", R"({"launches": [{"kernel": "k", "grid": 1, "block": 1, "args": {"2x": "a"}}]})",
        "launches[0].args.2x: '2x' is not a C identifier (a parameter name)");
    row("args string", R"({"launches": [{"kernel": "k", "grid": 1, "block": 1, "args": "a, b"}]})",
        "launches[0].args: expected an array (by position) or an object (by parameter name), got a string");
    row("arg object typo", R"({"launches": [{"kernel": "k", "grid": 1, "block": 1, "args": [{"buf": "a"}]}]})",
        "launches[0].args[0].buf: unknown key; allowed: buffer, offset, scalar, value, texture, surface");

    // repeat
    row("repeat zero", R"({"repeat": {"count": 0}})", "repeat.count: must be at least 1, got 0");
    row("repeat typo", R"({"repeat": {"times": 2}})", "repeat.times: unknown key; allowed: count, swap");
    row("swap mismatch", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": [16]},
                                         {"name": "d", "dtype": "float32", "shape": [8]}],
                             "launches": [], "repeat": {"swap": [["a", "d"]]}})",
        "repeat.swap[0]: buffers 'a' and 'd' must have the same dtype and shape; a is float32 [16], d is float32 "
        "[8]");
    row("swap dtype", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": [16]},
                                      {"name": "d", "dtype": "int32", "shape": [16]}],
                          "launches": [], "repeat": {"swap": [["a", "d"]]}})",
        "repeat.swap[0]: buffers 'a' and 'd' must have the same dtype and shape; a is float32 [16], d is int32 "
        "[16]");
    row("swap single", R"({"repeat": {"swap": [["a"]]}})",
        R"(repeat.swap[0]: expected a pair of buffer names, got ["a"])");
    row("swap flat", R"({"repeat": {"swap": ["a", "b"]}})",
        R"(repeat.swap[0]: expected a pair of buffer names, got "a")");
    row("swap unknown", R"({"repeat": {"swap": [["a", "x"]]}})",
        "repeat.swap[0][1]: unknown buffer 'x'; buffers: a, b, c");
    row("swap scalar", R"({"repeat": {"swap": [["n", "a"]]}})", "repeat.swap[0][0]: 'n' is a scalar, not a buffer");
    row("swap itself", R"({"repeat": {"swap": [["a", "a"]]}})", "repeat.swap[0]: cannot swap buffer 'a' with itself");

    // timing
    row("timing mode", R"({"timing": {"mode": "warm"}})", R"(timing.mode: expected "cold" or "hot", got "warm")");
    row("timing mode number", R"({"timing": {"mode": 1}})", R"(timing.mode: expected "cold" or "hot", got a number)");
    row("timing minSamples", R"({"timing": {"minSamples": 0}})", "timing.minSamples: must be at least 1, got 0");
    row("timing maxSamples", R"({"timing": {"minSamples": 10, "maxSamples": 5}})",
        "timing.maxSamples: must be at least minSamples (10), got 5");
    row("timing maxSamples default", R"({"timing": {"minSamples": 20000}})",
        "timing.maxSamples: must be at least minSamples (20000), got 10000");
    row("timing maxNoise", R"({"timing": {"maxNoise": 0}})", "timing.maxNoise: must be greater than 0, got 0");
    row("timing minSeconds", R"({"timing": {"minSeconds": -0.5}})", "timing.minSeconds: must be at least 0, got -0.5");
    row("timing timeout string", R"({"timing": {"timeoutSeconds": "15"}})",
        "timing.timeoutSeconds: expected a number, got a string");
    row("timing timeout zero", R"({"timing": {"timeoutSeconds": 0}})",
        "timing.timeoutSeconds: must be greater than 0, got 0");
    row("timing warmup", R"({"timing": {"warmup": 1.5}})", "timing.warmup: expected an integer, got 1.5");
    row("timing batch", R"({"timing": {"batch": -1}})", "timing.batch: must be at least 0, got -1");
    row("timing enabled", R"({"timing": {"enabled": 1}})", "timing.enabled: expected true or false, got a number");
    row("timing array", R"({"timing": []})", "timing: expected an object, got an array");

    // throughput and timeout
    row("throughput array", R"({"throughput": {"bytes": ["12*n"]}})",
        "throughput.bytes: expected an expression string or a number, got an array");
    row("throughput typo", R"({"throughput": {"flop": "n"}})", "throughput.flop: unknown key; allowed: bytes, flops");
    row("timeout zero", R"({"timeout": 0})", "timeout: must be greater than 0, got 0");
    row("timeout string", R"({"timeout": "10"})", "timeout: expected a number, got a string");
}

void TestProject::malformed()
{
    QFETCH(QByteArray, patch);
    QFETCH(QString, message);
    QJsonParseError pe;
    const QJsonObject p = QJsonDocument::fromJson(patch, &pe).object();
    QVERIFY2(pe.error == QJsonParseError::NoError, qPrintable(pe.errorString()));
    QJsonObject o = baseObject();
    for (auto it = p.begin(); it != p.end(); ++it) {
        if (it.key().startsWith(QLatin1Char('-'))) {
            o.remove(it.key().mid(1));
        } else {
            o.insert(it.key(), it.value());
        }
    }
    const Result<Project> r = parseProject(QJsonDocument(o));
    QVERIFY2(!r.ok(), "parsed although it is malformed");
    QCOMPARE(r.error().message, message);
    QCOMPARE(r.error().where, QString("project"));
    QCOMPARE(r.error().code, Error::Code::BadInput);
    // Every row is about one field, and the message names it first.
    QVERIFY(!r.error().path.isEmpty());
    QVERIFY2(message.startsWith(r.error().path + ": "), qPrintable(r.error().path));
}

void TestProject::errorPaths_data()
{
    QTest::addColumn<QByteArray>("patch");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("message");
    // patch as in malformed(): top-level keys that replace the base's; "-key" removes one.
    auto row = [](const char *tag, const char *patch, const QString &path, const QString &message) {
        QTest::newRow(tag) << QByteArray(patch) << path << message;
    };
    row("format missing", R"({"-format": 0})", "format",
        R"(format: missing; expected "kernel-playground-project" (is this a Kernel Playground project?))");
    row("version newer", R"({"version": 2})", "version",
        "version: this file is version 2; this Kernel Playground reads version 1; update the program");
    row("source inline missing", R"({"source": {}})", "source.inline",
        "source.inline: missing; expected the kernel source (a string or an array of lines)");
    row("compile unknown key", R"({"compile": {"fastmath": true}})", "compile.fastmath",
        "compile.fastmath: unknown key; allowed: arch, opt, fastMath, lineInfo, debug, std, defines, includeDirs, "
        "extra");
    row("define twice", R"({"compile": {"defines": ["N=1", "M", "N=2"]}})", "compile.defines[2]",
        "compile.defines[2]: 'N' is already defined by compile.defines[0]");
    row("scalar value", R"({"scalars": [{"name": "n", "type": "uint8", "value": 300}]})", "scalars[0].value",
        "scalars[0].value: 300 is out of range for uint8 (0 to 255)");
    row("scalar name twice", R"({"scalars": [{"name": "n", "value": 1}, {"name": "n", "value": 2}]})",
        "scalars[1].name", "scalars[1].name: 'n' is already defined by scalars[0]");
    row("buffer shape", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": [16]},
                                        {"name": "b", "dtype": "float32", "shape": [16]},
                                        {"name": "c", "dtype": "float32", "shape": [0, 4]}]})",
        "buffers[2].shape", "buffers[2].shape: expected 1 to 3 positive integers, got [0, 4]");
    row("buffer name is a scalar", R"({"buffers": [{"name": "n", "dtype": "float32", "shape": [16]}]})",
        "buffers[0].name", "buffers[0].name: 'n' is already a scalar");
    row("buffer dtype", R"({"buffers": [{"name": "a", "dtype": "float5", "shape": [16]}]})", "buffers[0].dtype",
        "buffers[0].dtype: unknown dtype 'float5'; allowed: " + dtypeNamesText());
    row("init seed", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": [16],
                                     "init": {"kind": "random", "seed": -1}}]})",
        "buffers[0].init.seed", "buffers[0].init.seed: must be at least 0, got -1");
    row("init distribution", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": [16],
                                             "init": {"kind": "random", "distribution": "poisson"}}]})",
        "buffers[0].init.distribution",
        R"(buffers[0].init.distribution: expected "uniform" or "normal", got "poisson")");
    row("image mode", R"({"buffers": [{"name": "a", "dtype": "float32", "shape": [8, 8],
                                      "init": {"kind": "image", "file": "a.png"}}]})",
        "buffers[0].init.mode",
        "buffers[0].init.mode: \"rgba8\" needs dtype uchar4, or uint8 with a last dimension of 4; got float32 [8, 8]");
    row("grid item", R"({"launches": [{"kernel": "k", "grid": [1, 0], "block": [16]}]})", "launches[0].grid[1]",
        "launches[0].grid[1]: expected a positive integer (at most 2147483647) or an expression string, got 0");
    row("block missing", R"({"launches": [{"kernel": "k", "grid": [1]}]})", "launches[0].block",
        "launches[0].block: missing; expected 1 to 3 items, each a positive integer or an expression string");
    row("arg unknown", R"({"launches": [{"kernel": "k", "grid": [1], "block": [16], "args": ["a", "b", "c", "m"]}]})",
        "launches[0].args[3]", "launches[0].args[3]: unknown buffer or scalar 'm'; buffers: a, b, c; scalars: n");
    row("arg by name offset", R"({"launches": [{"kernel": "k", "grid": [1], "block": [16],
                                               "args": {"a": {"buffer": "a", "offset": 17}}}]})",
        "launches[0].args.a.offset",
        "launches[0].args.a.offset: offset 17 is past the end of buffer 'a' (16 elements)");
    row("swap unknown", R"({"repeat": {"swap": [["a", "x"]]}})", "repeat.swap[0][1]",
        "repeat.swap[0][1]: unknown buffer 'x'; buffers: a, b, c");
    row("timing mode", R"({"timing": {"mode": "warm"}})", "timing.mode",
        R"(timing.mode: expected "cold" or "hot", got "warm")");
    row("throughput", R"({"throughput": {"bytes": ["12*n"]}})", "throughput.bytes",
        "throughput.bytes: expected an expression string or a number, got an array");
    row("timeout", R"({"timeout": 0})", "timeout", "timeout: must be greater than 0, got 0");
}

void TestProject::errorPaths()
{
    QFETCH(QByteArray, patch);
    QFETCH(QString, path);
    QFETCH(QString, message);
    QJsonParseError pe;
    const QJsonObject p = QJsonDocument::fromJson(patch, &pe).object();
    QVERIFY2(pe.error == QJsonParseError::NoError, qPrintable(pe.errorString()));
    QJsonObject o = baseObject();
    for (auto it = p.begin(); it != p.end(); ++it) {
        if (it.key().startsWith(QLatin1Char('-'))) {
            o.remove(it.key().mid(1));
        } else {
            o.insert(it.key(), it.value());
        }
    }
    const Result<Project> r = parseProject(QJsonDocument(o));
    QVERIFY2(!r.ok(), "parsed although it is malformed");
    QCOMPARE(r.error().path, path);
    QCOMPARE(r.error().message, message);

    // loadProject puts the file name in front of the message, never into the path.
    QTemporaryDir dir;
    const QString kpg = dir.filePath(QStringLiteral("p.kpg"));
    QVERIFY(writeFile(kpg, QJsonDocument(o).toJson()));
    const Result<Project> loaded = loadProject(kpg);
    QVERIFY(!loaded.ok());
    QCOMPARE(loaded.error().path, path);
    QCOMPARE(loaded.error().message, kpg + ": " + message);
}

void TestProject::badText_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("empty") << QByteArray("  \n") << QString("not valid JSON: the text is empty");
    QTest::newRow("array") << QByteArray("[1, 2]") << QString("expected a JSON object at the top level, got an array");
    QTest::newRow("unterminated") << QByteArray("{\n  \"format\": \"kernel-playground-project\",\n  \"version\": 1\n")
                                  << QString("not valid JSON: unterminated object at line 4, column 1 (offset 58)");
    QTest::newRow("missing comma") << QByteArray("{\n  \"a\": 1\n  \"b\": 2\n}")
                                   << QString("not valid JSON: unterminated object at line 3, column 4 (offset 14)");
    QTest::newRow("trailing comma")
        << QByteArray("{\"a\": [1, 2,]}")
        << QString("not valid JSON: object is missing after a comma at line 1, column 14 (offset 13)");
}

void TestProject::badText()
{
    QFETCH(QByteArray, text);
    QFETCH(QString, message);
    const Result<Project> r = parseProject(text);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().message, message);
    QCOMPARE(r.error().path, QString()); // about the whole text, not one field
}

void TestProject::loadErrors()
{
    QTemporaryDir dir;
    const QString missing = dir.filePath(QStringLiteral("missing.kpg"));
    Result<Project> r = loadProject(missing);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().message, missing + ": no such file");
    QCOMPARE(r.error().path, QString());

    r = loadProject(dir.path());
    QVERIFY(!r.ok());
    QCOMPARE(r.error().message, dir.path() + ": is a folder, not a project file");
    QCOMPARE(r.error().path, QString());

    const QString notJson = dir.filePath(QStringLiteral("bad.kpg"));
    QVERIFY(writeFile(notJson, "{\n  \"format\": kernel\n}\n"));
    r = loadProject(notJson);
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.startsWith(notJson + ": not valid JSON: "), qPrintable(r.error().message));
    QVERIFY2(r.error().message.contains("at line 2, column "), qPrintable(r.error().message));
    QCOMPARE(r.error().path, QString());

    const QString bad = dir.filePath(QStringLiteral("version.kpg"));
    QVERIFY(writeFile(bad, R"({"format": "kernel-playground-project", "version": 3, "source": "k.cu"})"));
    r = loadProject(bad);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().message,
             bad + ": version: this file is version 3; this Kernel Playground reads version 1; update the program");
    QCOMPARE(r.error().toString(), "project: " + r.error().message);

    // The .cu is looked for beside the project, and the message says where.
    const QString noSource = dir.filePath(QStringLiteral("nosource.kpg"));
    QVERIFY(writeFile(noSource, R"({"format": "kernel-playground-project", "version": 1, "source": "src/k.cu"})"));
    r = loadProject(noSource);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().message, noSource + ": source: cannot read '" + QDir(dir.path()).absoluteFilePath("src/k.cu") +
                                    "': No such file or directory");
    QCOMPARE(r.error().path, QString("source"));

    // A broken project says what is wrong in it before a missing source file.
    const QString both = dir.filePath(QStringLiteral("both.kpg"));
    QVERIFY(writeFile(both, R"({"format": "kernel-playground-project", "version": 1, "source": "nope.cu",
                               "timing": {"mode": "warm"}})"));
    r = loadProject(both);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().message, both + R"(: timing.mode: expected "cold" or "hot", got "warm")");
}

void TestProject::saveErrors()
{
    const Result<Project> p = parseProject(QByteArray(kBase));
    KP_VERIFY_RESULT(p);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("no/such/folder/p.kpg"));
    const Status s = saveProject(*p, path);
    QVERIFY(!s.ok());
    QVERIFY2(s.error().message.startsWith("cannot write '" + path + "': "), qPrintable(s.error().message));
}

void TestProject::saveSource()
{
    QTemporaryDir dir;
    const QString kpg = dir.filePath(QStringLiteral("p.kpg"));
    const QString cu = dir.filePath(QStringLiteral("k.cu"));
    QVERIFY(writeFile(kpg, R"({"format": "kernel-playground-project", "version": 1, "source": "k.cu"})"));
    QVERIFY(writeFile(cu, "__global__ void k() {}\n"));
    Result<Project> r = loadProject(kpg);
    KP_VERIFY_RESULT(r);
    QCOMPARE(r->sourceText, QString("__global__ void k() {}\n"));

    // Unchanged: the file is not rewritten, so its time stamp stays.
    const QDateTime old = QDateTime::currentDateTime().addDays(-2);
    {
        QFile f(cu);
        QVERIFY(f.open(QIODevice::ReadWrite));
        QVERIFY(f.setFileTime(old, QFileDevice::FileModificationTime));
    }
    KP_VERIFY_RESULT(saveProjectSource(*r, kpg));
    QCOMPARE(QFileInfo(cu).lastModified().toSecsSinceEpoch(), old.toSecsSinceEpoch());

    Project p = *r;
    p.sourceText = QStringLiteral("__global__ void k(int n) {}\n");
    KP_VERIFY_RESULT(saveProjectSource(p, kpg));
    QCOMPARE(readFile(cu), QByteArray("__global__ void k(int n) {}\n"));
    KP_VERIFY_RESULT(saveProject(p, kpg));
    const Result<Project> again = loadProject(kpg);
    KP_VERIFY_RESULT(again);
    QCOMPARE(again->sourceText, p.sourceText);
    QCOMPARE(again->sourceFile, QString("k.cu"));
    QVERIFY(!readFile(kpg).contains("__global__")); // the .kpg names the file, it does not embed it
}

void TestProject::validFiles_data()
{
    QTest::addColumn<QString>("path");
    QTest::newRow("vector_add preset") << QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg");
}

void TestProject::validFiles()
{
    QFETCH(QString, path);
    const Result<Project> r = loadProject(path);
    KP_VERIFY_RESULT(r);
    const Project &p = *r;
    QVERIFY(!p.title.isEmpty());
    QVERIFY(!p.description.isEmpty());
    QVERIFY(!p.sourceText.isEmpty());
    // Every launch names a kernel of the source and binds each of its parameters.
    const QList<KernelSignature> kernels = findKernels(p.sourceText);
    QVERIFY(!p.launches.isEmpty());
    for (const LaunchStep &l : p.launches) {
        const auto k =
            std::find_if(kernels.begin(), kernels.end(), [&](const KernelSignature &s) { return s.name == l.kernel; });
        QVERIFY2(k != kernels.end(), qPrintable(l.kernel));
        QCOMPARE(l.args.size(), k->params.size());
    }
    const Result<Project> again = parseProject(serializeProject(p), QFileInfo(path).absolutePath());
    KP_VERIFY_RESULT(again);
    compareProjects(p, *again);
}

void TestProject::vectorAddPreset()
{
    const Result<Project> r = loadProject(QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg"));
    KP_VERIFY_RESULT(r);
    const Project &p = *r;
    QCOMPARE(p.title, QString("Vector add"));
    QCOMPARE(p.scalars.size(), 1);
    QCOMPARE(p.scalars[0].value, 1048576.0);
    QCOMPARE(p.buffers.size(), 3);
    QCOMPARE(p.buffers[0].init.kind, BufferInit::Kind::Random);
    QCOMPARE(p.buffers[1].init.kind, BufferInit::Kind::Random);
    QVERIFY(p.buffers[0].init.seed != p.buffers[1].init.seed);
    QCOMPARE(p.buffers[2].init.kind, BufferInit::Kind::Zeros);
    for (const BufferSpec &b : p.buffers) {
        QCOMPARE(b.shape, QList<qint64>({1048576}));
        QCOMPARE(b.dtype, DType::Float32);
    }
    QCOMPARE(p.launches[0].kernel, QString("vectorAdd"));
    QCOMPARE(p.launches[0].grid, QStringList({"ceil_div(n, block.x)"}));
    QCOMPARE(p.launches[0].block, QStringList({"256"}));
    QCOMPARE(p.throughput.bytes, QString("12*n"));
    QCOMPARE(p.throughput.flops, QString("n"));
}

void TestProject::docsExample()
{
    // The complete example in docs/kpg-project.md loads, and round-trips.
    const QString doc = QString::fromUtf8(readFile(QStringLiteral(KPG_SOURCE_DIR "/docs/kpg-project.md")));
    const qsizetype start = doc.indexOf(QLatin1String("```json\n"));
    QVERIFY(start >= 0);
    const qsizetype end = doc.indexOf(QLatin1String("```"), start + 8);
    const QByteArray json = doc.mid(start + 8, end - start - 8).toUtf8();
    const Result<Project> r = parseProject(json);
    KP_VERIFY_RESULT(r);
    QCOMPARE(r->launches.size(), 1);
    QCOMPARE(r->compile.defines, QStringList({"N=16", "USE_X"}));
    const Result<Project> again = parseProject(serializeProject(*r));
    KP_VERIFY_RESULT(again);
    compareProjects(*r, *again);
}

void TestProject::includeDirsRelativeToProject_data()
{
    QTest::addColumn<QString>("dir");
    QTest::addColumn<QString>("expected"); // relative to the project's folder, or absolute
    QTest::newRow("relative") << "include"
                              << "include";
    QTest::newRow("dot-dot") << "../shared/inc"
                             << "../shared/inc";
    QTest::newRow("absolute") << "/opt/inc"
                              << "/opt/inc";
}

void TestProject::includeDirsRelativeToProject()
{
    // docs/kpg-project.md: relative includeDirs are relative to the project's
    // folder; they used to be passed on as they were, so NVRTC looked in the
    // working directory.
    QFETCH(QString, dir);
    QFETCH(QString, expected);
    QTemporaryDir tmp;
    const QString projectDir = QDir(tmp.path()).filePath(QStringLiteral("proj"));
    QVERIFY(QDir().mkpath(projectDir));
    const QString path = QDir(projectDir).filePath(QStringLiteral("p.kpg"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QStringLiteral(R"({"format": "kernel-playground-project", "version": 1,
        "source": {"inline": "__global__ void k() {}"}, "compile": {"includeDirs": ["%1"]}})")
                .arg(dir)
                .toUtf8());
    f.close();
    const QString before = QDir::currentPath();
    QVERIFY(QDir::setCurrent(QDir::tempPath())); // anywhere but the project's folder
    const Result<Project> p = loadProject(path);
    QDir::setCurrent(before);
    KP_VERIFY_RESULT(p);
    QCOMPARE(p->compile.includeDirs, QStringList{dir}); // the project keeps what was written
    const CompileRequest req = compileRequestFor(*p, 0, 0);
    QCOMPARE(req.options.includeDirs, QStringList{QDir::cleanPath(QDir(projectDir).absoluteFilePath(expected))});
}

void TestProject::hostileFiles_data()
{
    QTest::addColumn<QString>("source");  // the project's "source" (or the project itself: "")
    QTest::addColumn<QString>("message"); // what the error says after the project's path
    QTest::newRow("source /dev/zero") << "/dev/zero"
                                      << "source: cannot read '/dev/zero': it is a character device, not a "
                                         "regular file";
    QTest::newRow("source FIFO") << "FIFO"
                                 << "source: cannot read '%1': it is a FIFO (named pipe), not a regular file";
    QTest::newRow("source folder") << "FOLDER"
                                   << "source: cannot read '%1': it is a folder, not a regular file";
    QTest::newRow("source over 4 MiB") << "BIG"
                                       << "source: cannot read '%1': it is 4.0 MiB (4194305 bytes); a source file "
                                          "may be at most 4.0 MiB (4194304 bytes)";
    // Regular-looking files of the kernel's: the user's environment, the machine's.
    QTest::newRow("source /proc/self/environ")
        << "/proc/self/environ"
        << "source: cannot read '/proc/self/environ': it is a file of the kernel's /proc or /sys, not a file of yours";
    QTest::newRow("source /sys") << "/sys/devices/system/cpu/online"
                                 << "source: cannot read '/sys/devices/system/cpu/online': it is a file "
                                    "of the kernel's /proc or /sys, not a file of yours";
    QTest::newRow("project is a FIFO") << ""
                                       << "cannot read: it is a FIFO (named pipe), not a regular file";
}

void TestProject::hostileFiles()
{
    // "source": "/dev/zero" read to 4.2 GB and aborted with bad_alloc; a FIFO
    // blocked for ever. Nothing here may block: every case is refused by
    // stat() before the open.
    QFETCH(QString, source);
    QFETCH(QString, message);
    QTemporaryDir tmp;
    const QString fifo = tmp.filePath(QStringLiteral("fifo"));
    QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
    QString file = source;
    if (source == QLatin1String("FIFO")) {
        file = fifo;
    } else if (source == QLatin1String("FOLDER")) {
        file = tmp.path();
    } else if (source == QLatin1String("BIG")) {
        file = tmp.filePath(QStringLiteral("big.cu"));
        QFile big(file);
        QVERIFY(big.open(QIODevice::WriteOnly));
        QVERIFY(big.resize(4 * 1024 * 1024 + 1));
    }
    QString path = tmp.filePath(QStringLiteral("p.kpg"));
    if (source.isEmpty()) {
        path = fifo;
    } else {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(QJsonObject{{"format", "kernel-playground-project"}, {"version", 1}, {"source", file}})
                    .toJson());
    }
    const Result<Project> r = loadProject(path);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().message, path + ": " + (message.contains("%1") ? message.arg(QDir::cleanPath(file)) : message));
}

void TestProject::saveIntoDevice()
{
    // QSaveFile's rename replaced a device node with a regular file (as root).
    Project p;
    p.sourceFile = QStringLiteral("/dev/null");
    p.sourceText = QStringLiteral("__global__ void k() {}\n");
    KP_VERIFY_RESULT(saveProjectSource(p, QDir::temp().filePath(QStringLiteral("p.kpg"))));
    KP_VERIFY_RESULT(saveProject(p, QStringLiteral("/dev/null")));
    struct stat st;
    QCOMPARE(::stat("/dev/null", &st), 0);
    QVERIFY(S_ISCHR(st.st_mode));
    const Status full = saveProject(p, QStringLiteral("/dev/full"));
    QVERIFY(!full);
    QCOMPARE(full.error().message, QStringLiteral("cannot write '/dev/full': no space left on device"));
}

QTEST_GUILESS_MAIN(TestProject)
#include "tst_project.moc"
