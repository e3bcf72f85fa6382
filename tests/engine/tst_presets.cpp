// Every preset, one row each: it loads, compiles with real NVRTC, fills its
// buffers and binds its arguments (everything short of the GPU).

#include "check/checkedrun.h"
#include "compile/compiler.h"
#include "project/projectio.h"
#include "run/projectcompile.h"
#include "run/runner.h"
#include "testutil.h"

#include <QDir>
#include <QtTest>

using namespace Kp;

class TestPresets : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void presetPreparesARun_data()
    {
        QTest::addColumn<QString>("path");
        const QDir dir(QStringLiteral(KPG_SOURCE_DIR "/presets"));
        for (const QString &name : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
            const QString kpg = dir.filePath(name + QLatin1Char('/') + name + QStringLiteral(".kpg"));
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
        const CompileRequest req = compileRequestFor(*p);
        const auto compiled = Compiler(Compiler::Config{QStringLiteral("-"), 0}).compile(req);
        KP_VERIFY_RESULT(compiled);
        QVERIFY2(compiled->ok, qPrintable(compiled->log));
        QCOMPARE(compiled->warningCount(), 0);
        HostBuffers buffers;
        KP_VERIFY_RESULT(buffers.materialize(*p));
        const auto prepared = prepareRun(*p, *compiled, buffers, 0);
        KP_VERIFY_RESULT(prepared);
        QVERIFY2(prepared->warnings.isEmpty(), qPrintable(prepared->warnings.join('\n')));
        checksAreValid(*p, buffers);
    }

private:
    /** The checks validate against the filled buffers, and the reference compiles and binds (docs/checks.md). */
    void checksAreValid(const Project &p, const HostBuffers &buffers)
    {
        QHash<QString, BufferView> views;
        for (const auto &b : buffers.all()) {
            views.insert(b->spec.name, BufferView{b->spec.dtype, b->shape, b->memory.data(), b->byteSize()});
        }
        const Result<QStringList> valid = validateChecks(p, views, expressionVariables(p, buffers));
        KP_VERIFY_RESULT(valid);
        QVERIFY2(valid->isEmpty(), qPrintable(valid->join('\n')));
        const Project ref = referenceProjectFor(p);
        if (!p.reference) {
            return; // the project itself, compiled and bound above
        }
        const auto compiled = Compiler(Compiler::Config{QStringLiteral("-"), 0}).compile(compileRequestFor(ref));
        KP_VERIFY_RESULT(compiled);
        QVERIFY2(compiled->ok, qPrintable(compiled->log));
        KP_VERIFY_RESULT(prepareRun(ref, *compiled, buffers, 0));
    }
};

QTEST_GUILESS_MAIN(TestPresets)
#include "tst_presets.moc"
