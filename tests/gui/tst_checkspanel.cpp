// The Checks panel offscreen, without a GPU: the GUI's check runner
// evaluates a real check (engine/check) on host buffers filled with random
// data and a wrong result, the panel shows the verdict and the report's
// numbers, clicking the first mismatch selects that cell in the inspector
// (1-D by index, 2-D by coordinates), and clicking the check shows its
// failing cells in the grid and as the Diff tab's heatmap.

#include "client/engineclient.h"
#include "panels/checks/checkspanel.h"
#include "panels/inspector/buffergridmodel.h"
#include "panels/inspector/bufferinspector.h"
#include "panels/inspector/diffview.h"
#include "panels/inspector/imageview.h"
#include "project/projectio.h"
#include "run/runner.h"
#include "screenshot.h"
#include "shell/mainwindow.h"
#include "testutil.h"
#include "workbench/checkrunner.h"

#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>

#include <algorithm>

#include <cstring>

using namespace Kp;
using KpTest::screenshot;

namespace {

float *floats(HostBuffers &buffers, const QString &name)
{
    HostBuffer *b = buffers.find(name);
    return b ? static_cast<float *>(b->memory.data()) : nullptr;
}

bool evaluateAndWait(MainWindow &w)
{
    QSignalSpy done(w.checkRunner(), &CheckRunner::finished);
    w.checkRunner()->evaluate(w.project(), w.hostBuffers().all(), 0);
    return done.wait(30000);
}

void click(QTreeWidget *tree, QTreeWidgetItem *item)
{
    tree->scrollToItem(item);
    const QRect r = tree->visualItemRect(item);
    QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, r.center());
}

} // namespace

// A project whose one check reads the device printf output.
static const char *const kPrintedProject =
    "{\"format\": \"kernel-playground-project\", \"version\": 1,\n"
    " \"source\": {\"inline\": \"__global__ void k(int *a) { printf(\\\"sum = %d\\\\n\\\", 42); }\"},\n"
    " \"buffers\": [{\"name\": \"a\", \"dtype\": \"int32\", \"shape\": [4], \"init\": {\"kind\": \"zeros\"}}],\n"
    " \"launches\": [{\"kernel\": \"k\", \"grid\": [1], \"block\": [1], \"args\": [\"a\"]}],\n"
    " \"checks\": [{\"printed\": {\"matches\": \"^sum = \\\\d+$\"}}]}";

class TestChecksPanel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        qputenv("KPG_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
    }

    void failingCheckAndFirstMismatch()
    {
        EngineClient engine;
        MainWindow w(&engine);
        w.resize(1400, 900);
        w.show();
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        QCOMPARE(w.project().checks.size(), 1);
        // The run's buffers as a wrong kernel leaves them: a and b random
        // (their inits), c = a + b except at a few random places.
        KP_VERIFY_RESULT(w.hostBuffers().materialize(w.project()));
        const float *a = floats(w.hostBuffers(), "a");
        const float *b = floats(w.hostBuffers(), "b");
        float *c = floats(w.hostBuffers(), "c");
        QVERIFY(a && b && c);
        const qint64 n = w.hostBuffers().find("c")->elementCount();
        for (qint64 i = 0; i < n; ++i) {
            c[i] = a[i] + b[i];
        }
        QRandomGenerator rng(20261203);
        QList<qint64> wrong;
        while (wrong.size() < 37) {
            const qint64 i = rng.bounded(int(n));
            if (!wrong.contains(i)) {
                wrong << i;
                c[i] += float(0.5 + rng.generateDouble());
            }
        }
        std::sort(wrong.begin(), wrong.end());
        w.hostBuffers().find("c")->generation++;

        QVERIFY(evaluateAndWait(w));
        ChecksPanel *panel = w.checksPanel();
        QCOMPARE(panel->outcomes().size(), 1);
        const CheckResult &r = panel->outcomes()[0].result;
        QVERIFY(!r.passed);
        QVERIFY(!r.error);
        QCOMPARE(r.mismatches, qint64(wrong.size()));
        QCOMPARE(r.compared, n);
        QCOMPARE(r.first.size(), kMaxReportedMismatches);
        QCOMPARE(r.first[0].index, wrong[0]);
        QVERIFY2(panel->summaryText().contains("1 of 1 checks failed"), qPrintable(panel->summaryText()));
        QTreeWidgetItem *row = panel->checkItem(0);
        QVERIFY(row);
        QCOMPARE(row->text(0), QString("c = a + b"));
        QCOMPARE(row->text(1), QString("FAIL"));
        QVERIFY2(row->text(4).startsWith(QString("%1 of %2 elements differ").arg(wrong.size()).arg(n)),
                 qPrintable(row->text(4)));
        QVERIFY(row->text(4).contains("max abs err"));
        QVERIFY(row->text(4).contains("mean abs err"));
        QVERIFY(row->text(4).contains("max rel err"));
        QTreeWidgetItem *first = panel->mismatchItem(0, 0);
        QVERIFY(first);
        QCOMPARE(first->text(0), QString("[%1] (x=%1)").arg(wrong[0]));
        QCOMPARE(first->text(2), QString::number(c[wrong[0]], 'g', 9));
        QCOMPARE(first->text(3), QString::number(double(a[wrong[0]]) + double(b[wrong[0]]), 'g', 9));
        QCOMPARE(row->childCount(), kMaxReportedMismatches + 1); // and "… 27 more"

        // Click the first mismatch: the inspector shows c with that cell selected, in red.
        BufferInspector *inspector = w.inspector();
        inspector->showBuffer("a");
        click(panel->tree(), first);
        QCOMPARE(inspector->currentBufferName(), QString("c"));
        QCOMPARE(inspector->currentTab(), BufferInspector::Tab::Grid);
        const QModelIndex cell = inspector->gridView()->currentIndex();
        QVERIFY(cell.isValid());
        QCOMPARE(inspector->gridModel()->flatIndex(cell), wrong[0]);
        QCOMPARE(cell.data(BufferGridModel::FailedRole).toBool(), true);
        QCOMPARE(cell.data(Qt::BackgroundRole).value<QColor>(), BufferGridModel::failedColor());
        screenshot(&w, QStringLiteral("checks-mismatch-grid"), 200); // layout and the grid's painting
        const qint64 fine = wrong[0] == 0 ? 1 : wrong[0] - 1;
        QVERIFY(!wrong.contains(fine));
        QCOMPARE(inspector->gridModel()->index(0, 0).isValid(), true);
        QCOMPARE(inspector->gridModel()->isFailed(fine), false);
        QCOMPARE(inspector->gridModel()->isFailed(wrong.last()), true);

        // Click the check: the Diff tab shows its failing cells as a heatmap.
        click(panel->tree(), row);
        QCOMPARE(inspector->currentTab(), BufferInspector::Tab::Diff);
        DiffView *diff = inspector->diffView();
        QVERIFY(diff->showsFailedCells());
        QCOMPARE(diff->result().mismatchCount, qint64(wrong.size()));
        QCOMPARE(diff->result().first.first().index, wrong[0]);
        QVERIFY(diff->heatmap()->source());
        QVERIFY2(diff->summary().contains(
                     QString("%1 of %2 elements of c fail the check c = a + b").arg(wrong.size()).arg(n)),
                 qPrintable(diff->summary()));
        // The heatmap: 1 at a failing cell, 0 elsewhere.
        const ImageSource *src = diff->heatmap()->source();
        const ImageGeometry &g = src->geometry();
        float v = -1;
        qint64 x = wrong[0] % g.width;
        src->read(wrong[0] / g.width, &x, 1, &v);
        QCOMPARE(v, 1.0f);
        x = fine % g.width;
        src->read(fine / g.width, &x, 1, &v);
        QCOMPARE(v, 0.0f);
        screenshot(&w, QStringLiteral("checks-heatmap"), 200);

        // A new run forgets the failing cells.
        w.checkRunner()->clear();
        QVERIFY(w.checksPanel()->outcomes().isEmpty());
    }

    // A permutation check compares with the buffer as it was before the run:
    // the window's checks refill it from its init (they once filled only
    // the shapes, so the sorted random data of cdp_quicksort was compared
    // with zeros and "the same values" failed). And the same check sees a
    // lost value.
    void permutationComparesWithTheInitialContents()
    {
        QTemporaryDir dir;
        QFile project(dir.filePath(QStringLiteral("sort.kpg")));
        QVERIFY(project.open(QIODevice::WriteOnly));
        project.write(R"({"format": "kernel-playground-project", "version": 1,
            "source": {"inline": "__global__ void sort(unsigned *d) {}\n"},
            "buffers": [{"name": "data", "dtype": "uint32", "shape": [4096],
                         "init": {"kind": "random", "distribution": "uniform", "min": 0, "max": 4096, "seed": 7}}],
            "launches": [{"kernel": "sort", "grid": [1], "block": [1], "args": ["data"]}],
            "checks": [{"name": "the same values", "buffer": "data", "permutation": "data"}]})");
        project.close();
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(project.fileName()));
        KP_VERIFY_RESULT(w.hostBuffers().materialize(w.project()));
        auto *d = static_cast<quint32 *>(w.hostBuffers().find("data")->memory.data());
        QVERIFY(std::count(d, d + 4096, 0u) < 16); // random, not zeros
        std::sort(d, d + 4096);
        QVERIFY(evaluateAndWait(w));
        const CheckOutcome &o = w.checkRunner()->outcomes().value(0);
        QVERIFY2(!o.result.error, qPrintable(o.result.error ? o.result.error->message : QString()));
        QVERIFY(o.result.passed);
        QCOMPARE(o.result.compared, qint64(4096));

        d[100] = 5000; // one value lost, one outside the init's range gained
        QVERIFY(evaluateAndWait(w));
        QVERIFY(!w.checkRunner()->outcomes().value(0).result.passed);
    }

    void passingCheck()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        KP_VERIFY_RESULT(w.hostBuffers().materialize(w.project()));
        const float *a = floats(w.hostBuffers(), "a");
        const float *b = floats(w.hostBuffers(), "b");
        float *c = floats(w.hostBuffers(), "c");
        const qint64 n = w.hostBuffers().find("c")->elementCount();
        for (qint64 i = 0; i < n; ++i) {
            c[i] = a[i] + b[i];
        }
        // Seed run 0 passes on the host; the second seed run needs a GPU, which this machine does not have.
        QVERIFY(evaluateAndWait(w));
        const CheckOutcome &o = w.checksPanel()->outcomes().value(0);
        QVERIFY(!o.pending);
        QVERIFY(o.result.error); // the seed run could not run
        QVERIFY2(w.checksPanel()->checkItem(0)->text(4).startsWith("not evaluated"),
                 qPrintable(w.checksPanel()->checkItem(0)->text(4)));

        // Evaluated on the host alone, the same buffers pass.
        HostBuffers initial;
        KP_VERIFY_RESULT(initial.materialize(w.project()));
        const QList<CheckOutcome> host = CheckRunner::evaluateOnHost(w.project(), initial, w.hostBuffers().all(), true);
        QCOMPARE(host.size(), 1);
        QVERIFY(host[0].result.passed);
        QCOMPARE(host[0].result.compared, n);
        QVERIFY(host[0].pending); // "seeds": 2: run 1 still to come
        QCOMPARE(host[0].failedMask->count(char(1)), 0);
        w.checksPanel()->setOutcomes(host);
        QCOMPARE(w.checksPanel()->checkItem(0)->text(1), QString("checking…"));
    }

    // The window's checks see the run's device printf output ("printed"
    // checks failed in the window once: they were given none).
    void printedChecksSeeTheRunsOutput_data()
    {
        QTest::addColumn<QString>("printed");
        QTest::addColumn<bool>("passes");
        QTest::newRow("matches") << QStringLiteral("sum = 42\n") << true;
        QTest::newRow("other text") << QStringLiteral("sum = forty-two\n") << false;
        QTest::newRow("nothing printed") << QString() << false;
    }
    void printedChecksSeeTheRunsOutput()
    {
        QFETCH(QString, printed);
        QFETCH(bool, passes);
        const Result<Project> p = parseProject(kPrintedProject);
        KP_VERIFY_RESULT(p);
        HostBuffers initial;
        KP_VERIFY_RESULT(initial.materialize(*p));
        const QList<CheckOutcome> out = CheckRunner::evaluateOnHost(*p, initial, initial.all(), false, printed, false);
        QCOMPARE(out.size(), 1);
        QVERIFY2(!out[0].result.error, qPrintable(out[0].result.error ? out[0].result.error->message : QString()));
        QCOMPARE(out[0].result.passed, passes);
    }

    void mismatchCoordinates2D()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QFile cu(dir.filePath("m.cu"));
        QVERIFY(cu.open(QIODevice::WriteOnly));
        cu.write("extern \"C\" __global__ void fill(int *m) {}\n");
        cu.close();
        QFile kpg(dir.filePath("m.kpg"));
        QVERIFY(kpg.open(QIODevice::WriteOnly));
        kpg.write(R"({"format": "kernel-playground-project", "version": 1, "title": "Grid",
  "description": "A *grid* of numbers: `m[y][x] = x + 100*y`.",
  "source": "m.cu",
  "buffers": [{"name": "m", "dtype": "int32", "shape": [7, 9], "init": {"kind": "zeros"}}],
  "launches": [{"kernel": "fill", "grid": [1], "block": [1], "args": ["m"]}],
  "checks": [{"name": "m = x + 100 y", "buffer": "m", "expected": "x + 100*y"}]})");
        kpg.close();
        EngineClient engine;
        MainWindow w(&engine);
        w.resize(1400, 900);
        w.show();
        KP_VERIFY_RESULT(w.openProject(dir.filePath("m.kpg")));
        KP_VERIFY_RESULT(w.hostBuffers().materialize(w.project()));
        auto *m = static_cast<qint32 *>(w.hostBuffers().find("m")->memory.data());
        QRandomGenerator rng(7);
        for (int y = 0; y < 7; ++y) {
            for (int x = 0; x < 9; ++x) {
                m[y * 9 + x] = x + 100 * y;
            }
        }
        const int bx = 1 + int(rng.bounded(8));
        const int by = 1 + int(rng.bounded(6));
        m[by * 9 + bx] = -1 - int(rng.bounded(1000));
        QVERIFY(evaluateAndWait(w));
        const CheckResult &r = w.checksPanel()->outcomes().value(0).result;
        QCOMPARE(r.mismatches, qint64(1));
        QVERIFY(r.exact);
        QTreeWidgetItem *first = w.checksPanel()->mismatchItem(0, 0);
        QVERIFY(first);
        QCOMPARE(first->text(0), QString("[%1] (x=%2, y=%3)").arg(by * 9 + bx).arg(bx).arg(by));
        click(w.checksPanel()->tree(), first);
        const QModelIndex cell = w.inspector()->gridView()->currentIndex();
        QCOMPARE(cell.row(), by);
        QCOMPARE(cell.column(), bx);
        QCOMPARE(cell.data(BufferGridModel::FailedRole).toBool(), true);
        QVERIFY(w.checksPanel()->checkItem(0)->text(4).contains("exact"));
        screenshot(&w, QStringLiteral("checks-2d"), 200);
    }
};

QTEST_MAIN(TestChecksPanel)
#include "tst_checkspanel.moc"
