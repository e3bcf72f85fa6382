// Every preset, one row each: it loads, compiles with real NVRTC, fills its
// buffers and binds its arguments (everything short of the GPU); so do its
// reference kernel and every deliberately broken variant in broken/. The
// checks are validated against the agreed format (docs/kpg-project.md) and
// their `expected` expressions are evaluated on the initial contents. Running
// the checks themselves needs a GPU (tests/gpu).

#include "buffers/dtype.h"
#include "check/checkedrun.h"
#include "check/checkeval.h"
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

    // The checks validate against the filled buffers with the checks engine's
    // own rules (validateChecks: buffers exist, one of expected/reference/npy,
    // tolerances only on floating buffers, expressions parse); every check is
    // named (broken variants refer to them by name), names are unique, and
    // the throughput expressions are positive.
    void presetChecksAreWellFormed_data() { presetPreparesARun_data(); }

    void presetChecksAreWellFormed()
    {
        QFETCH(QString, path);
        const Result<Project> p = loadProject(path);
        KP_VERIFY_RESULT(p);
        QVERIFY2(!p->checks.isEmpty(), "every preset has checks");
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
        for (const CheckSpec &c : p->checks) {
            QVERIFY2(!c.name.isEmpty(), "preset checks are named (broken variants refer to them)");
            QVERIFY2(!names.contains(c.name), qPrintable("two checks named " + c.name));
            names.insert(c.name);
        }
        QHash<QString, BufferView> views;
        for (const auto &b : buffers.all()) {
            static const QStringList builtIn{"i", "x", "y", "z"};
            QVERIFY2(!builtIn.contains(b->spec.name), qPrintable("buffer '" + b->spec.name + "' shadows a coordinate"));
            views.insert(b->spec.name, BufferView{b->spec.dtype, b->shape, b->memory.data(), b->byteSize()});
        }
        const Result<QStringList> valid = validateChecks(*p, views, expressionVariables(*p, buffers));
        KP_VERIFY_RESULT(valid);
        QVERIFY2(valid->isEmpty(), qPrintable(valid->join('\n')));
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
        const Result<Project> p = loadProject(path);
        KP_VERIFY_RESULT(p);
        QVERIFY(p->reference.has_value());
        const Project ref = referenceProjectFor(*p);
        QVERIFY2(!ref.sourceText.isEmpty(), qPrintable(p->reference->sourceFile));
        const QString why = compileAndBind(ref);
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
        static const QRegularExpression expect(
            QStringLiteral("^// kpg-expect: (?:fail \"([^\"]+)\" first (\\d+|any)|race \"([^\"]+)\")$"));
        const QRegularExpressionMatch m = expect.match(first);
        QVERIFY2(m.hasMatch(), qPrintable("first line: " + first));
        const QString checkName = m.capturedLength(3) > 0 ? m.captured(3) : m.captured(1);
        QString bufferName;
        for (const CheckSpec &c : p.checks) {
            if (c.name == checkName) {
                bufferName = c.buffer;
            }
        }
        QVERIFY2(!bufferName.isEmpty(), qPrintable("no check named " + checkName));
        HostBuffers buffers;
        KP_VERIFY_RESULT(buffers.materialize(p, true, HostBuffers::Fill::ShapesOnly));
        if (m.capturedLength(2) > 0 && m.captured(2) != QLatin1String("any")) {
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
