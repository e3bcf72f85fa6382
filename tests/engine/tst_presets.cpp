// Every preset, one row each: it loads, compiles with real NVRTC, fills its
// buffers and binds its arguments (everything short of the GPU); so do its
// reference kernel and every deliberately broken variant in broken/. The
// checks are validated against the agreed format (docs/kpg-project.md) and
// their `expected` expressions are evaluated on the initial contents. Running
// the checks themselves needs a GPU (tests/gpu).

#include "buffers/dtype.h"
#include "compile/compiler.h"
#include "core/expression.h"
#include "project/projectio.h"
#include "run/projectcompile.h"
#include "run/runner.h"
#include "testutil.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QtTest>

#include <cmath>

using namespace Kp;

namespace {

QString presetsDir()
{
    return QStringLiteral(KPG_SOURCE_DIR "/presets");
}

QStringList presetNames()
{
    return QDir(presetsDir()).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
}

QString kpgPath(const QString &name)
{
    return presetsDir() + QLatin1Char('/') + name + QLatin1Char('/') + name + QStringLiteral(".kpg");
}

QJsonObject readJson(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        return {};
    }
    return QJsonDocument::fromJson(f.readAll()).object();
}

bool isFloatDtype(DType t)
{
    const DType c = dtypeInfo(t).component;
    return c == DType::Float16 || c == DType::BFloat16 || c == DType::Float32 || c == DType::Float64;
}

// Compiles the project's source (whatever sourceText holds) and binds its
// launches; returns an empty string or what went wrong.
QString compileAndBind(const Project &p)
{
    const CompileRequest req = compileRequestFor(p);
    const auto compiled = Compiler(Compiler::Config{QStringLiteral("-"), 0}).compile(req);
    if (!compiled) {
        return compiled.error().message;
    }
    if (!compiled->ok) {
        return QStringLiteral("compile failed:\n") + compiled->log;
    }
    if (compiled->warningCount() != 0) {
        return QStringLiteral("compile warnings:\n") + compiled->log;
    }
    HostBuffers buffers;
    if (const Status s = buffers.materialize(p); !s) {
        return s.error().message;
    }
    const auto prepared = prepareRun(p, *compiled, buffers, 0);
    if (!prepared) {
        return prepared.error().message;
    }
    if (!prepared->warnings.isEmpty()) {
        return prepared->warnings.join(QLatin1Char('\n'));
    }
    return {};
}

} // namespace

class TestPresets : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void presetPreparesARun_data()
    {
        QTest::addColumn<QString>("path");
        for (const QString &name : presetNames()) {
            const QString kpg = kpgPath(name);
            QVERIFY2(QFileInfo::exists(kpg), qPrintable(kpg + " is missing"));
            QTest::newRow(qPrintable(name)) << kpg;
        }
    }

    void presetPreparesARun()
    {
        QFETCH(QString, path);
        const Result<Project> p = loadProject(path);
        KP_VERIFY_RESULT(p);
        QVERIFY(!p->title.isEmpty());
        QVERIFY(!p->description.isEmpty());
        QVERIFY(QFileInfo::exists(QFileInfo(path).dir().filePath("README.md")));
        QVERIFY2(!p->sourceFile.isEmpty(), "a preset keeps its kernel in a .cu file beside the .kpg");
        const QString why = compileAndBind(*p);
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }

    // The checks follow the agreed format: each names an existing buffer and
    // exactly one of expected, reference or npy; tolerances only on floating
    // buffers; `expected` parses with the variables the checks engine gives
    // it and is finite on every element of the initial contents.
    void presetChecksAreWellFormed_data() { presetPreparesARun_data(); }

    void presetChecksAreWellFormed()
    {
        QFETCH(QString, path);
        const Result<Project> p = loadProject(path);
        KP_VERIFY_RESULT(p);
        QVERIFY2(p->checks.isArray() && !p->checks.toArray().isEmpty(), "every preset has checks");
        QVERIFY2(!p->throughput.bytes.isEmpty() || !p->throughput.flops.isEmpty(), "every preset has throughput");
        HostBuffers buffers;
        KP_VERIFY_RESULT(buffers.materialize(*p));
        {
            Expression t;
            const QMap<QString, double> vars = expressionVariables(*p, buffers);
            for (auto it = vars.begin(); it != vars.end(); ++it) {
                t.set(it.key(), it.value());
            }
            for (const QString &e : {p->throughput.bytes, p->throughput.flops}) {
                if (!e.isEmpty()) {
                    const Result<double> v = t.evaluate(e, QStringLiteral("throughput"));
                    KP_VERIFY_RESULT(v);
                    QVERIFY2(*v > 0, qPrintable(e));
                }
            }
        }
        QSet<QString> names;
        for (const QJsonValue &v : p->checks.toArray()) {
            QVERIFY(v.isObject());
            const QJsonObject c = v.toObject();
            for (const QString &k : c.keys()) {
                static const QStringList allowed{"name",      "buffer", "expected", "reference", "npy",
                                                 "tolerance", "region", "seeds",    "nan"};
                QVERIFY2(allowed.contains(k), qPrintable("unknown check key " + k));
            }
            const QString name = c.value("name").toString();
            QVERIFY2(!name.isEmpty(), "preset checks are named (broken variants refer to them)");
            QVERIFY2(!names.contains(name), qPrintable("two checks named " + name));
            names.insert(name);
            const HostBuffer *b = buffers.find(c.value("buffer").toString());
            QVERIFY2(b, qPrintable(name + ": no buffer " + c.value("buffer").toString()));
            const int kinds = int(c.contains("expected")) + int(c.contains("reference")) + int(c.contains("npy"));
            QCOMPARE(kinds, 1);
            if (c.contains("tolerance")) {
                QVERIFY2(isFloatDtype(b->spec.dtype), qPrintable(name + ": a tolerance on an integer buffer"));
                for (const QString &k : c.value("tolerance").toObject().keys()) {
                    QVERIFY(k == "abs" || k == "rel" || k == "ulp");
                }
            }
            if (c.contains("seeds")) {
                QVERIFY(c.value("seeds").isDouble() && c.value("seeds").toInt() >= 1);
            }
            if (c.contains("reference")) {
                QVERIFY2(buffers.find(c.value("reference").toString()),
                         qPrintable(name + ": the reference run has no buffer " + c.value("reference").toString()));
            }
            if (c.contains("expected")) {
                QVERIFY2(dtypeInfo(b->spec.dtype).components == 1, "expected expressions on scalar dtypes only");
                Expression e;
                for (const ScalarSpec &s : p->scalars) {
                    e.set(s.name, s.value);
                }
                double *vi = e.variable("i");
                double *vx = e.variable("x");
                double *vy = e.variable("y");
                double *vz = e.variable("z");
                QList<QPair<double *, const HostBuffer *>> same;
                for (const auto &o : buffers.all()) {
                    // A buffer named like a coordinate would be ambiguous in the expression.
                    static const QStringList builtIn{"i", "x", "y", "z"};
                    QVERIFY2(!builtIn.contains(o->spec.name),
                             qPrintable(name + ": buffer '" + o->spec.name + "' shadows a coordinate"));
                    if (o->elementCount() == b->elementCount() && dtypeInfo(o->spec.dtype).components == 1) {
                        same << qMakePair(e.variable(o->spec.name), o.get());
                    }
                }
                KP_VERIFY_RESULT(e.parse(c.value("expected").toString(), name));
                const QList<qint64> &sh = b->shape;
                const qint64 nx = sh.last();
                const qint64 ny = sh.size() >= 2 ? sh[sh.size() - 2] : 1;
                for (qint64 i = 0; i < b->elementCount(); ++i) {
                    *vi = double(i);
                    *vx = double(i % nx);
                    *vy = double((i / nx) % ny);
                    *vz = double(i / (nx * ny));
                    for (const auto &[var, buf] : same) {
                        const DTypeInfo &info = dtypeInfo(buf->spec.dtype);
                        *var = loadComponent(info.component,
                                             static_cast<const char *>(buf->memory.data()) + i * info.componentBytes);
                    }
                    const Result<double> r = e.evaluate();
                    KP_VERIFY_RESULT(r);
                    QVERIFY2(std::isfinite(*r), qPrintable(QStringLiteral("%1: not finite at %2").arg(name).arg(i)));
                }
            }
        }
    }

    // The trusted reference (reference.source, or the project's own source)
    // compiles and its launches (reference.launches, or the project's) bind.
    void referencePreparesARun_data()
    {
        QTest::addColumn<QString>("path");
        for (const QString &name : presetNames()) {
            if (readJson(kpgPath(name)).contains(QStringLiteral("reference"))) {
                QTest::newRow(qPrintable(name)) << kpgPath(name);
            }
        }
    }

    void referencePreparesARun()
    {
        QFETCH(QString, path);
        QJsonObject top = readJson(path);
        const QJsonObject ref = top.value("reference").toObject();
        for (const QString &k : ref.keys()) {
            QVERIFY2(k == "source" || k == "launches", qPrintable("unknown reference key " + k));
        }
        if (ref.contains("source")) {
            top.insert("source", ref.value("source"));
        }
        if (ref.contains("launches")) {
            top.insert("launches", ref.value("launches"));
        }
        top.remove("reference");
        top.remove("checks");
        const QString dir = QFileInfo(path).absolutePath();
        const Result<Project> parsed = parseProject(QJsonDocument(top), dir);
        KP_VERIFY_RESULT(parsed);
        Project p = *parsed;
        QVERIFY2(!p.sourceText.isEmpty(), qPrintable(p.sourceFile));
        p.path = path; // the folder for relative include paths, as loadProject gives it
        const QString why = compileAndBind(p);
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }

    // Every broken variant states the check it fails and where, and compiles
    // and binds in place of the preset's source, so a GPU run reaches the checks.
    void brokenVariantPreparesARun_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("variant");
        int count = 0;
        for (const QString &name : presetNames()) {
            const QDir broken(presetsDir() + QLatin1Char('/') + name + QStringLiteral("/broken"));
            QVERIFY2(broken.exists(), qPrintable(name + " has no broken/ variants"));
            const QStringList files = broken.entryList({QStringLiteral("*.cu")}, QDir::Files);
            QVERIFY2(!files.isEmpty(), qPrintable(name + " has no broken/ variants"));
            for (const QString &f : files) {
                QTest::newRow(qPrintable(name + QLatin1Char('/') + f)) << kpgPath(name) << broken.filePath(f);
                ++count;
            }
        }
        QVERIFY(count >= presetNames().size());
    }

    void brokenVariantPreparesARun()
    {
        QFETCH(QString, path);
        QFETCH(QString, variant);
        const Result<Project> loaded = loadProject(path);
        KP_VERIFY_RESULT(loaded);
        Project p = *loaded;
        QFile f(variant);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(f.readAll());
        const QString first = text.section(QLatin1Char('\n'), 0, 0);
        static const QRegularExpression expect(QStringLiteral("^// kpg-expect: fail \"([^\"]+)\" first (\\d+|any)$"));
        const QRegularExpressionMatch m = expect.match(first);
        QVERIFY2(m.hasMatch(), qPrintable("first line: " + first));
        const QString checkName = m.captured(1);
        QString bufferName;
        for (const QJsonValue &v : p.checks.toArray()) {
            if (v.toObject().value("name").toString() == checkName) {
                bufferName = v.toObject().value("buffer").toString();
            }
        }
        QVERIFY2(!bufferName.isEmpty(), qPrintable("no check named " + checkName));
        HostBuffers buffers;
        KP_VERIFY_RESULT(buffers.materialize(p, true, HostBuffers::Fill::ShapesOnly));
        if (m.captured(2) != QLatin1String("any")) {
            QVERIFY(m.captured(2).toLongLong() < buffers.find(bufferName)->elementCount());
        }
        QVERIFY2(text != p.sourceText, "a broken variant differs from the preset");
        p.sourceText = text;
        const QString why = compileAndBind(p);
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }
};

QTEST_GUILESS_MAIN(TestPresets)
#include "tst_presets.moc"
