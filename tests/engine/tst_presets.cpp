// Every preset, one row each: it loads, compiles with real NVRTC, fills its
// buffers and binds its arguments (everything short of the GPU).

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
    }
};

QTEST_GUILESS_MAIN(TestPresets)
#include "tst_presets.moc"
