// The Compare panel offscreen with synthetic runs: the verdict and its rule,
// the source and compile-option diff, the resources diff, the overlaid
// distributions; the Results history's "Compare with..." menu; and the run
// history file beside the project: its round trip, and a corrupt or huge
// file that gives a clear message and leaves the project whole.

#include "client/engineclient.h"
#include "panels/compare/comparepanel.h"
#include "panels/results/resultspanel.h"
#include "plots/comparechart.h"
#include "shell/docks.h"
#include "shell/mainwindow.h"
#include "workbench/projectdocument.h"
#include "workbench/runhistory.h"

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QMenu>
#include <QPlainTextEdit>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <numeric>

using namespace Kp;

namespace {

const char *kSourceA = "__global__ void scale(float *x, int n)\n{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                       "    if (i < n) x[i] = x[i] * 2.0f;\n}\n";
const char *kSourceB = "__global__ void scale(float *x, int n)\n{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                       "    if (i < n) x[i] = __fmul_rn(x[i], 2.0f);\n}\n";

/** count samples around centreMs with 2 % jitter, seeded. */
RunRecord run(double centreMs, int count, quint32 seed, const char *source, const QString &define, int regs, int spills)
{
    QRandomGenerator rng(seed);
    RunRecord r;
    r.kernel = QStringLiteral("scale");
    r.block = {256, 1, 1};
    r.grid = {4096, 1, 1};
    r.label = QStringLiteral("block 256");
    r.result.timed = true;
    r.result.timingMode = QStringLiteral("cold");
    r.result.device = QStringLiteral("NVIDIA H200 (0)");
    for (int i = 0; i < count; ++i) {
        r.result.samplesMs << centreMs * (1 + 0.02 * (rng.generateDouble() - 0.5));
    }
    r.result.stats = computeStats(r.result.samplesMs);
    r.source = QString::fromLatin1(source);
    r.compileOptions = QStringList{"--gpu-architecture=sm_90", "-lineinfo", define};
    KernelResources res;
    res.known = true;
    res.registers = regs;
    res.spillStores = spills;
    res.sharedBytes = 0;
    r.resources.insert(QStringLiteral("scale"), res);
    return r;
}

} // namespace

class TestComparePanel : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void verdictDiffAndResources()
    {
        RunHistoryModel model;
        model.append(run(0.0100, 400, 1, kSourceA, "-DN=16", 12, 0));
        model.append(run(0.0080, 400, 2, kSourceB, "-DN=32", 16, 8));
        model.append(run(0.0100, 400, 3, kSourceA, "-DN=16", 12, 0));
        ComparePanel panel(&model);
        panel.resize(900, 400);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        // Until A and B are chosen, the last run is compared with the one before it.
        QCOMPARE(panel.baselineChooser()->currentIndex(), 1);
        QCOMPARE(panel.candidateChooser()->currentIndex(), 2);
        QVERIFY2(panel.verdictText().startsWith("SLOWER"), qPrintable(panel.verdictText()));
        // At the height of the bottom dock at 1280x800, the distributions' tick labels are whole (they were "...").
        panel.resize(1100, 230);
        QTest::qWait(50);
        for (const QString &t : panel.distributionChart()->visibleTexts()) {
            QVERIFY2(!t.endsWith(QLatin1String("...")) && !t.endsWith(QChar(0x2026)),
                     qPrintable(panel.distributionChart()->visibleTexts().join(QLatin1String(" | "))));
        }
        panel.resize(900, 400);
        model.append(run(0.0080, 400, 4, kSourceB, "-DN=32", 16, 8));
        QCOMPARE(panel.candidateChooser()->currentIndex(), 3); // a new run moves along
        panel.compareRows(0, 1);
        model.append(run(0.0100, 400, 5, kSourceA, "-DN=16", 12, 0));
        QCOMPARE(panel.baselineChooser()->currentIndex(), 0); // a choice made stays
        QCOMPARE(panel.candidateChooser()->currentIndex(), 1);
        // 20 % apart with 2 % jitter: the intervals are apart.
        QVERIFY2(panel.verdictText().startsWith("FASTER: B is 1.2"), qPrintable(panel.verdictText()));
        // However long the verdict's numbers, the panel asks no more width than the bottom dock has
        // beside the launch panel in a 1024-pixel window (they widened the window to 1445 pixels).
        QVERIFY2(panel.minimumSizeHint().width() <= 600,
                 qPrintable(QStringLiteral("%1 pixels for: %2")
                                .arg(panel.minimumSizeHint().width())
                                .arg(panel.findChild<QLabel *>("compareReason")->text())));
        QCOMPARE(panel.verdictLabel()->text(), panel.verdictText());
        QCOMPARE(panel.comparison().verdict, Verdict::Faster);
        // The rule is in the verdict's tooltip.
        QVERIFY(panel.verdictLabel()->toolTip().contains("[min, q3]"));
        QVERIFY(panel.verdictLabel()->toolTip().contains("ambiguous"));

        QVERIFY2(panel.sourceDiff().contains("-    if (i < n) x[i] = x[i] * 2.0f;\n"
                                             "+    if (i < n) x[i] = __fmul_rn(x[i], 2.0f);\n"),
                 qPrintable(panel.sourceDiff()));
        QVERIFY(panel.sourceDiff().startsWith("--- A (#1)\n+++ B (#2)\n@@ -1,5 +1,5 @@\n"));
        QCOMPARE(panel.optionDiff(), QStringList({"- -DN=16", "+ -DN=32"}));
        QCOMPARE(panel.resourceLines(), QStringList({"scale: registers 12 -> 16, spills 0 -> 8 B, shared 0 -> 0 B"}));
        QCOMPARE(panel.resourcesTable()->rowCount(), 1);
        QCOMPARE(panel.resourcesTable()->item(0, 2)->text(), QString("16"));
        QVERIFY(panel.resourcesTable()->item(0, 2)->font().bold());

        const QList<int> a = panel.distributionChart()->countsA();
        const QList<int> b = panel.distributionChart()->countsB();
        QCOMPARE(std::accumulate(a.cbegin(), a.cend(), 0), 400);
        QCOMPARE(std::accumulate(b.cbegin(), b.cend(), 0), 400);
        QCOMPARE(a.size(), b.size());

        // Swapped: slower. Two draws of one kernel: same.
        panel.compareRows(1, 0);
        QVERIFY2(panel.verdictText().startsWith("SLOWER"), qPrintable(panel.verdictText()));
        panel.compareRows(0, 2);
        QVERIFY2(panel.verdictText().startsWith("SAME"), qPrintable(panel.verdictText()));
        QVERIFY(panel.sourceDiff().isEmpty());
        QVERIFY(panel.optionDiff().isEmpty());
        auto *diff = panel.findChild<QPlainTextEdit *>("compareDiff");
        QVERIFY(diff->toPlainText().contains("The sources are the same."));

        // A run without samples: no verdict, and why.
        RunRecord failed = run(0.01, 0, 6, kSourceA, "-DN=16", 12, 0);
        failed.result.error = Error{QStringLiteral("kpg-worker"), Error::Code::Fault, {}, QStringLiteral("fault")};
        model.append(failed);
        panel.compareRows(0, 5);
        QVERIFY2(panel.verdictText().isEmpty(), qPrintable(panel.verdictText()));
        QVERIFY2(panel.verdictLabel()->text().contains("B has no timing samples"),
                 qPrintable(panel.verdictLabel()->text()));
        QCOMPARE(panel.candidateChooser()->count(), 6);
    }

    // Issue 29: with one run, Compare compared it with itself ("SAME"); it
    // asks for a second run, and says so when A and B are chosen alike.
    void oneRunIsNoComparison()
    {
        RunHistoryModel model;
        model.append(run(0.0100, 400, 1, kSourceA, "-DN=16", 12, 0));
        ComparePanel panel(&model);
        panel.resize(900, 400);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QVERIFY2(panel.verdictText().isEmpty(), qPrintable(panel.verdictText()));
        QCOMPARE(panel.verdictLabel()->text(),
                 QString("Compare needs two runs; there is one so far. Change something and run again."));
        model.append(run(0.0080, 400, 2, kSourceB, "-DN=32", 16, 8));
        QVERIFY2(panel.verdictText().startsWith("FASTER"), qPrintable(panel.verdictText()));
        panel.compareRows(1, 1);
        QVERIFY(panel.verdictText().isEmpty());
        QCOMPARE(panel.verdictLabel()->text(),
                 QString("A and B are the same run (#2): choose another run for one of them."));
    }

    void resultsMenuOpensIt()
    {
        ResultsPanel results;
        results.addRun(run(0.0100, 100, 1, kSourceA, "-DN=16", 12, 0));
        results.addRun(run(0.0080, 100, 2, kSourceB, "-DN=32", 16, 8));
        results.addRun(run(0.0090, 100, 3, kSourceB, "-DN=32", 16, 8));
        QSignalSpy spy(&results, &ResultsPanel::compareRequested);
        // Two selected rows: "Compare #2 with #1", the later one the candidate.
        std::unique_ptr<QMenu> menu(results.contextMenuFor({0, 1}));
        QVERIFY(menu);
        QCOMPARE(menu->actions().first()->text(), QString("Compare #2 with #1"));
        menu->actions().first()->trigger();
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.takeFirst(), QVariantList({0, 1}));
        // One row: "Compare #3 with..." lists the others.
        menu.reset(results.contextMenuFor({2}));
        QMenu *with = menu->actions().first()->menu();
        QVERIFY(with);
        QCOMPARE(menu->actions().first()->text(), QString("Compare #3 with..."));
        QCOMPARE(with->actions().size(), 2);
        QVERIFY(with->actions()[0]->text().startsWith("#1 scale"));
        with->actions()[0]->trigger();
        QCOMPARE(spy.takeFirst(), QVariantList({0, 2}));
    }

    void historyRoundTrip()
    {
        QList<RunRecord> runs{run(0.0100, 300, 1, kSourceA, "-DN=16", 12, 0),
                              run(0.0080, 300, 2, kSourceA, "-DN=32", 16, 8)};
        runs[0].number = 3;
        runs[1].number = 7;
        runs[1].result.error = Error{QStringLiteral("kpg-worker"), Error::Code::Timeout, {}, QStringLiteral("late")};
        runs[0].when = QDateTime::fromString("2026-12-03T10:00:00.123", Qt::ISODateWithMs);
        const QByteArray json = historyToJson(runs);
        // One source, stored once.
        QCOMPARE(json.count("__global__ void scale"), 1);
        Result<QList<RunRecord>> back = historyFromJson(json, "h.json");
        KP_VERIFY_RESULT(back);
        QCOMPARE(back->size(), 2);
        for (int i = 0; i < 2; ++i) {
            const RunRecord &a = runs[i];
            const RunRecord &b = (*back)[i];
            QCOMPARE(b.number, a.number);
            QCOMPARE(b.source, a.source);
            QCOMPARE(b.compileOptions, a.compileOptions);
            QCOMPARE(b.resources.value("scale").registers, a.resources.value("scale").registers);
            QCOMPARE(b.resources.value("scale").spillStores, a.resources.value("scale").spillStores);
            QCOMPARE(b.result.samplesMs, a.result.samplesMs);
            QCOMPARE(b.result.stats.medianMs, a.result.stats.medianMs);
            QCOMPARE(b.block, a.block);
            QCOMPARE(b.failed(), a.failed());
        }
        QCOMPARE((*back)[0].when, runs[0].when);
        QCOMPARE((*back)[1].result.error->code, Error::Code::Timeout);

        QTemporaryDir dir;
        KP_VERIFY_RESULT(saveHistory(dir.filePath("p.kpg.history.json"), runs));
        Result<QList<RunRecord>> loaded = loadHistory(dir.filePath("p.kpg.history.json"));
        KP_VERIFY_RESULT(loaded);
        QCOMPARE(loaded->size(), 2);
        // No file yet: an empty history, not an error.
        KP_VERIFY_RESULT(loadHistory(dir.filePath("none.history.json")));

        // Loaded numbers stay; the next run continues after the highest.
        RunHistoryModel model;
        model.setRecords(*loaded);
        model.append(run(0.01, 10, 9, kSourceA, "-DN=16", 12, 0));
        QCOMPARE(model.record(2).number, 8);
    }

    void corruptHistory_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("message");
        QTest::newRow("not JSON") << QByteArray("{\"format\": \"kpg-run-hist") << "not JSON";
        QTest::newRow("another format") << QByteArray("{\"format\": \"kpg-project\"}") << "not a run history";
        QTest::newRow("bad number")
            << QByteArray("{\"format\":\"kpg-run-history\",\"version\":1,\"runs\":[{\"number\":\"x\",\"result\":{}}]}")
            << "runs[0].number must be a whole number from 1";
        QTest::newRow("missing source")
            << QByteArray("{\"format\":\"kpg-run-history\",\"version\":1,\"sources\":{},\"runs\":[{\"number\":1,"
                          "\"source\":\"abc\",\"result\":{}}]}")
            << "runs[0].source names \"abc\", which \"sources\" lacks";
        QTest::newRow("negative sample")
            << QByteArray("{\"format\":\"kpg-run-history\",\"version\":1,\"runs\":[{\"number\":1,\"result\":{"
                          "\"samplesMs\":[0.1,-2]}}]}")
            << "runs[0].result.samplesMs holds -2";
        QTest::newRow("newer version") << QByteArray("{\"format\":\"kpg-run-history\",\"version\":2,\"runs\":[]}")
                                       << "history version 2; this program reads version 1";
    }
    void corruptHistory()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString path = dir.filePath("p.kpg.history.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
        f.close();
        const Result<QList<RunRecord>> r = loadHistory(path);
        QVERIFY(!r);
        QVERIFY2(r.error().message.contains(message) && r.error().message.contains(path),
                 qPrintable(r.error().message));
    }

    /** In the window: a corrupt or huge history beside a project; the project opens whole, with a message. */
    void windowKeepsTheProject_data()
    {
        QTest::addColumn<bool>("huge");
        QTest::newRow("corrupt") << false;
        QTest::newRow("over 64 MiB") << true;
    }
    void windowKeepsTheProject()
    {
        QFETCH(bool, huge);
        QTemporaryDir dir;
        const QString project = dir.filePath("scale.kpg");
        {
            EngineClient engine;
            MainWindow w(&engine);
            KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
            KP_VERIFY_RESULT(w.saveProjectTo(project));
        }
        const QString history = project + ".history.json";
        QFile f(history);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"format\": \"kpg-run-history\", \"runs\": [tru");
        if (huge) {
            QVERIFY(f.resize(kMaxHistoryBytes + 4096)); // sparse: costs no disk
        }
        f.close();
        const qint64 size = QFileInfo(history).size();

        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(project));
        QVERIFY(w.project().sourceText.contains("vectorAdd"));
        QVERIFY(!w.project().buffers.isEmpty());
        const QString log = w.logView()->toPlainText();
        QVERIFY2(log.contains("The run history was not loaded: ") && log.contains(history), qPrintable(log));
        QVERIFY2(log.contains(huge ? "the run history may be at most 64.0 MiB" : "not JSON"), qPrintable(log));
        QVERIFY2(log.contains("It was kept as " + history + ".unreadable"), qPrintable(log));
        QCOMPARE(QFileInfo(history + ".unreadable").size(), size);

        // Runs of this session go to a new history, which the next opening finds.
        auto *results = w.docks().panel<ResultsPanel>(PanelId::Results);
        results->addRun(run(0.0100, 50, 1, kSourceA, "-DN=16", 12, 0));
        results->addRun(run(0.0080, 50, 2, kSourceB, "-DN=32", 16, 8));
        QTRY_VERIFY(QFileInfo::exists(history));
        QTRY_COMPARE(loadHistory(history) ? loadHistory(history)->size() : -1, 2);
        MainWindow again(&engine);
        KP_VERIFY_RESULT(again.openProject(project));
        auto *reloaded = again.docks().panel<ResultsPanel>(PanelId::Results);
        QCOMPARE(reloaded->model()->rowCount(), 2);
        QCOMPARE(reloaded->model()->record(1).source, QString::fromLatin1(kSourceB));

        // Compare from the history: the dock comes forward with the pair.
        reloaded->contextMenuFor({0, 1})->actions().first()->trigger();
        auto *compare = again.docks().panel<ComparePanel>(PanelId::Compare);
        QVERIFY(compare);
        QVERIFY2(compare->verdictText().startsWith("FASTER"), qPrintable(compare->verdictText()));
        QVERIFY(!again.findChild<QDockWidget *>("compareDock")->isHidden());
    }
};

QTEST_MAIN(TestComparePanel)
#include "tst_comparepanel.moc"
