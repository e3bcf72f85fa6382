// On a machine with an NVIDIA GPU: checks in the workbench as a user meets
// them. vector_add with an off-by-one guard fails its check with the right
// first mismatch (the last element, never written), which a click shows in
// the inspector; the fixed kernel passes both seed runs; a reference check
// (the reference run on a worker of its own) fails the same way.

#include "client/engineclient.h"
#include "cuda/deviceinfo.h"
#include "editor/codeeditor.h"
#include "gpurun.h"
#include "panels/checks/checkspanel.h"
#include "panels/inspector/buffergridmodel.h"
#include "panels/inspector/bufferinspector.h"
#include "shell/mainwindow.h"
#include "testutil.h"
#include "workbench/checkrunner.h"

#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>

using namespace Kp;

namespace {

const char *kOffByOne = "extern \"C\" __global__ void vectorAdd(const float *a, const float *b, float *c, int n)\n"
                        "{\n"
                        "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                        "    if (i < n - 1) {\n" // off by one: the last element is never written
                        "        c[i] = a[i] + b[i];\n"
                        "    }\n"
                        "}\n";

} // namespace

class TestGpuGuiChecks : public QObject
{
    Q_OBJECT

private:
    /** Runs the editor's text and waits for the run and then for its checks. */
    static void runAndCheck(MainWindow &w)
    {
        QSignalSpy checked(w.checkRunner(), &CheckRunner::finished);
        QSignalSpy done(&w, &MainWindow::runFinished);
        w.runNow();
        QVERIFY2(done.wait(60000), "the run did not finish within 60 s");
        QVERIFY2(!w.runs().last().error, qPrintable(w.runs().last().error ? w.runs().last().error->message : ""));
        QVERIFY2(checked.wait(120000), "the checks did not finish within 120 s");
    }

    /** The last element of vector_add is the first (and only) mismatch; clicking it selects it. */
    static void expectLastElementMissing(MainWindow &w, bool reference)
    {
        const qint64 n = w.hostBuffers().find("c")->elementCount();
        const auto *a = static_cast<const float *>(w.hostBuffers().find("a")->memory.data());
        const auto *b = static_cast<const float *>(w.hostBuffers().find("b")->memory.data());
        ChecksPanel *panel = w.checksPanel();
        QCOMPARE(panel->outcomes().size(), 1);
        const CheckResult &r = panel->outcomes()[0].result;
        QVERIFY2(!r.error, qPrintable(r.error ? r.error->message : QString()));
        QVERIFY(!r.passed);
        QCOMPARE(r.mismatches, qint64(1));
        QCOMPARE(r.first.size(), 1);
        QCOMPARE(r.first[0].index, n - 1);
        QCOMPARE(r.first[0].coords[0], n - 1);
        QCOMPARE(r.first[0].got, 0.0);
        // An expression is evaluated in double; the reference run added in float.
        QCOMPARE(r.first[0].expected, reference ? double(a[n - 1] + b[n - 1]) : double(a[n - 1]) + double(b[n - 1]));
        QCOMPARE(panel->checkItem(0)->text(1), QString("FAIL"));
        QTreeWidgetItem *first = panel->mismatchItem(0, 0);
        QVERIFY(first);
        QCOMPARE(first->text(0), QString("[%1] (x=%1)").arg(n - 1));
        panel->tree()->scrollToItem(first);
        QTest::mouseClick(panel->tree()->viewport(), Qt::LeftButton, {}, panel->tree()->visualItemRect(first).center());
        QCOMPARE(w.inspector()->currentBufferName(), QString("c"));
        QCOMPARE(w.inspector()->gridModel()->flatIndex(w.inspector()->gridView()->currentIndex()), n - 1);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        if (const std::optional<QString> why = KpTest::noGpu()) {
            QSKIP(qPrintable(*why));
        }
    }

    void brokenVectorAddFails()
    {
        EngineClient engine;
        MainWindow w(&engine);
        w.resize(1400, 900);
        w.show();
        QSignalSpy compiled(&w, &MainWindow::compileFinished);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        QVERIFY(compiled.wait(30000));
        w.editor()->setText(QString::fromLatin1(kOffByOne));
        runAndCheck(w);
        if (QTest::currentTestFailed()) {
            return;
        }
        expectLastElementMissing(w, false);
        if (QTest::currentTestFailed()) {
            return;
        }
        // The mask of failing cells: exactly the last one.
        const auto mask = w.checksPanel()->outcomes()[0].failedMask;
        QVERIFY(mask);
        QCOMPARE(mask->count(char(1)), 1);
        QCOMPARE(int(mask->back()), 1);

        // The preset's own kernel passes, over both of its seed runs.
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        runAndCheck(w);
        const CheckOutcome &o = w.checksPanel()->outcomes().value(0);
        QVERIFY2(!o.result.error, qPrintable(o.result.error ? o.result.error->message : QString()));
        QVERIFY(o.result.passed);
        QVERIFY(!o.pending);
        QCOMPARE(o.result.seedRuns, w.project().checks.at(0).seeds); // every seed run the preset asks for
        QCOMPARE(w.checksPanel()->checkItem(0)->text(1), QString("PASS"));
        QVERIFY(w.checksPanel()->summaryText().contains("passed"));
    }

    void referenceCheckFails()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QFile ref(dir.filePath("ref.cu"));
        QVERIFY(ref.open(QIODevice::WriteOnly));
        QFile preset(":/presets/vector_add/vector_add.cu");
        QVERIFY(preset.open(QIODevice::ReadOnly));
        ref.write(preset.readAll());
        ref.close();
        QFile cu(dir.filePath("student.cu"));
        QVERIFY(cu.open(QIODevice::WriteOnly));
        cu.write(kOffByOne);
        cu.close();
        QFile kpg(dir.filePath("lab.kpg"));
        QVERIFY(kpg.open(QIODevice::WriteOnly));
        kpg.write(
            "{\"format\": \"kernel-playground-project\", \"version\": 1, \"title\": \"Lab\",\n"
            " \"source\": \"student.cu\",\n"
            " \"scalars\": [{\"name\": \"n\", \"type\": \"int32\", \"value\": 100000}],\n"
            " \"buffers\": [\n"
            "  {\"name\": \"a\", \"dtype\": \"float32\", \"shape\": [100000], \"init\": {\"kind\": \"random\", "
            "\"seed\": 5}},\n"
            "  {\"name\": \"b\", \"dtype\": \"float32\", \"shape\": [100000], \"init\": {\"kind\": \"random\", "
            "\"seed\": 6}},\n"
            "  {\"name\": \"c\", \"dtype\": \"float32\", \"shape\": [100000], \"init\": {\"kind\": \"zeros\"}}],\n"
            " \"launches\": [{\"kernel\": \"vectorAdd\", \"grid\": [\"ceil_div(n, block.x)\"], \"block\": [256], "
            "\"args\": [\"a\", \"b\", \"c\", \"n\"]}],\n"
            " \"reference\": {\"source\": \"ref.cu\"},\n"
            " \"checks\": [{\"name\": \"c as the reference\", \"buffer\": \"c\", \"reference\": \"c\"}]}\n");
        kpg.close();
        EngineClient engine;
        MainWindow w(&engine);
        w.resize(1400, 900);
        w.show();
        QSignalSpy compiled(&w, &MainWindow::compileFinished);
        KP_VERIFY_RESULT(w.openProject(dir.filePath("lab.kpg")));
        QVERIFY(compiled.wait(30000));
        runAndCheck(w);
        if (QTest::currentTestFailed()) {
            return;
        }
        expectLastElementMissing(w, true);
        QVERIFY(!w.checksPanel()->outcomes()[0].failedMask); // decided by the check's own runs
    }
};

QTEST_MAIN(TestGpuGuiChecks)
#include "tst_gpu_guichecks.moc"
