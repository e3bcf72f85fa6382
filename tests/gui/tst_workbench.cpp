// The workbench offscreen with the real engine: projects open and save, the
// argument table follows the kernel's signature, a bad grid expression or
// buffer shape is flagged where it was typed, and a run without a GPU is an
// ordinary result that loses nothing.

#include "client/engineclient.h"
#include "editor/codeeditor.h"
#include "editor/cudalexer.h"
#include "guitestutil.h"
#include "panels/buffers/bufferspanel.h"
#include "panels/launch/launchpanel.h"
#include "panels/results/resultspanel.h"
#include "project/projectio.h"
#include "shell/docks.h"
#include "shell/mainwindow.h"
#include "shell/theme.h"
#include "testutil.h"
#include "workbench/projectdocument.h"
#include "workbench/runcontroller.h"
#include "workbench/runhistory.h"
#include "workbench/workbench.h"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

using namespace Kp;
using KpTest::chooseByKeys;
using KpTest::comboItems;
using KpTest::typeAndEnter;
using KpTest::waitCompiled;

class TestWorkbench : public QObject
{
    Q_OBJECT

private:
    static QString binding(LaunchPanel *panel, int row)
    {
        auto *combo = qobject_cast<QComboBox *>(panel->argumentTable()->cellWidget(row, 2));
        return combo ? combo->currentText() : QString();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        // No GPU on purpose, so the suite means the same on every machine.
        qputenv("KPG_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
    }

    void projectFillsThePanels()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        QVERIFY(waitCompiled(w));
        LaunchPanel *lp = w.launchPanel();
        QCOMPARE(lp->kernelChooser()->currentText(), QString("vectorAdd"));
        QCOMPARE(lp->gridField(0)->text(), QString("ceil_div(n, block.x)"));
        QCOMPARE(lp->blockField(0)->text(), QString("256"));
        QCOMPARE(lp->argumentTable()->rowCount(), 4);
        QCOMPARE(lp->argumentTable()->item(3, 0)->text(), QString("n"));
        QCOMPARE(lp->argumentTable()->item(0, 1)->text(), QString("const float *__restrict__"));
        QCOMPARE(binding(lp, 2), QString("c"));
        QCOMPARE(lp->resolvedLabel()->text(), QString("grid (4096, 1, 1) × block (256, 1, 1) = 1,048,576 threads"));
        QVERIFY(lp->messageLabel()->text().isEmpty());
        QTableWidget *buffers = w.buffersPanel()->table();
        QCOMPARE(buffers->rowCount(), 3);
        QCOMPARE(buffers->item(0, 0)->text(), QString("a"));
        QCOMPARE(buffers->item(0, 4)->text(), QString("1,048,576"));
        QVERIFY(buffers->item(0, 5)->text().startsWith("4,194,304"));
        QVERIFY(!w.isProjectModified());
    }

    void argumentTableFollowsTheSignature()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        QVERIFY(waitCompiled(w));
        QString text = w.editor()->text();
        text.replace("int n)", "int n,\n                                float scale)");
        w.editor()->setText(text);
        QVERIFY(waitCompiled(w));
        LaunchPanel *lp = w.launchPanel();
        QCOMPARE(lp->argumentTable()->rowCount(), 5);
        QCOMPARE(lp->argumentTable()->item(4, 0)->text(), QString("scale"));
        QCOMPARE(lp->argumentTable()->item(4, 1)->text(), QString("float"));
        QCOMPARE(lp->messageLabel()->text(),
                 QString("step 1, arguments: kernel 'vectorAdd' takes 5 parameters (a, b, c, n, scale); 4 are bound"));
        QVERIFY(!lp->runButton()->isEnabled());
        // Binding the new parameter fixes it.
        auto *combo = qobject_cast<QComboBox *>(lp->argumentTable()->cellWidget(4, 2));
        combo->lineEdit()->setFocus();
        QTest::keyClicks(combo->lineEdit(), "2.5");
        QTest::keyClick(combo->lineEdit(), Qt::Key_Return);
        QTRY_VERIFY(lp->messageLabel()->text().isEmpty());
        QCOMPARE(w.project().launches[0].args.size(), 5);
        QCOMPARE(w.project().launches[0].args[4].value, 2.5);
        QVERIFY(lp->runButton()->isEnabled());
        QVERIFY(w.isProjectModified());
    }

    void badGridExpressionIsFlaggedOnItsField()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        QVERIFY(waitCompiled(w));
        LaunchPanel *lp = w.launchPanel();
        lp->gridField(0)->setText("ceil_div(m, block.x)");
        Q_EMIT lp->gridField(0)->editingFinished();
        QTRY_VERIFY(!lp->gridField(0)->styleSheet().isEmpty());
        QVERIFY2(lp->gridField(0)->toolTip().startsWith("step 1, grid x: unknown variable 'm' in "
                                                        "'ceil_div(m, block.x)'; known: a.n"),
                 qPrintable(lp->gridField(0)->toolTip()));
        QVERIFY(lp->gridField(0)->styleSheet().contains("border"));
        QVERIFY(lp->blockField(0)->styleSheet().isEmpty()); // not marked: its tooltip says what it takes
        // The project keeps the expression (it is valid JSON), the panel says what is wrong.
        QCOMPARE(w.project().launches[0].grid.first(), QString("ceil_div(m, block.x)"));
        lp->gridField(0)->setText("ceil_div(n, block.x)");
        Q_EMIT lp->gridField(0)->editingFinished();
        QTRY_VERIFY(lp->gridField(0)->styleSheet().isEmpty());
        // A block that is not positive is refused by the project itself.
        lp->blockField(0)->setText("0");
        Q_EMIT lp->blockField(0)->editingFinished();
        QTRY_VERIFY(!lp->messageLabel()->text().isEmpty());
        QVERIFY2(lp->messageLabel()->text().startsWith("step 1, block"), qPrintable(lp->messageLabel()->text()));
        QCOMPARE(w.project().launches[0].block.first(), QString("256")); // the valid project stays
    }

    void badBufferShapeIsRefusedWithItsMessage()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        QVERIFY(waitCompiled(w));
        QTableWidget *t = w.buffersPanel()->table();
        t->item(2, 2)->setText("0, 4");
        auto *msg = w.buffersPanel()->findChild<QLabel *>("buffersMessage");
        QVERIFY(msg);
        QTRY_COMPARE(msg->text(), QString("buffer c, shape: expected 1 to 3 positive integers, got [0, 4]"));
        QTRY_COMPARE(t->item(2, 2)->text(), QString("1048576")); // the table shows the project again
        t->item(2, 1)->setText("float64");
        QTRY_COMPARE(w.project().buffers[2].dtype, DType::Float64);
        // ...which the kernel's float * does not accept.
        QTRY_VERIFY(w.launchPanel()->messageLabel()->text().contains("buffer 'c' holds float64"));
    }

    void scalarEditsReachTheLaunch()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        QVERIFY(waitCompiled(w));
        QTableWidget *t = w.buffersPanel()->scalarTable();
        QCOMPARE(t->rowCount(), 1);
        QCOMPARE(t->item(0, 0)->text(), QString("n"));
        t->item(0, 2)->setText("1000");
        QTRY_COMPARE(w.project().scalars[0].value, 1000.0);
        QTRY_COMPARE(w.launchPanel()->resolvedLabel()->text(),
                     QString("grid (4, 1, 1) × block (256, 1, 1) = 1,024 threads"));
        t->item(0, 2)->setText("2.5");
        auto *msg = w.buffersPanel()->findChild<QLabel *>("buffersMessage");
        QTRY_COMPARE(msg->text(), QString("scalar n, value: 2.5 is not an integer (type int32)"));
        QCOMPARE(w.project().scalars[0].value, 1000.0);
    }

    void saveAndReopen()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("mine.kpg");
        {
            EngineClient engine;
            MainWindow w(&engine);
            KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
            QVERIFY(waitCompiled(w));
            w.launchPanel()->blockField(0)->setText("128");
            Q_EMIT w.launchPanel()->blockField(0)->editingFinished();
            QTRY_COMPARE(w.project().launches[0].block.first(), QString("128"));
            w.editor()->setText(w.editor()->text() + "\n// edited\n");
            KP_VERIFY_RESULT(w.saveProjectTo(path));
            QVERIFY(!w.isProjectModified());
            QVERIFY(w.windowTitle().startsWith("mine.kpg"));
        }
        // Save As names the kernel after the project, so no two projects share one .cu.
        QVERIFY(QFileInfo::exists(dir.filePath("mine.cu")));
        QVERIFY(!QFileInfo::exists(dir.filePath("vector_add.cu")));
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(path));
        QCOMPARE(w.project().launches[0].block.first(), QString("128"));
        QVERIFY(w.editor()->text().endsWith("// edited\n"));
        QCOMPARE(w.launchPanel()->blockField(0)->text(), QString("128"));
    }

    void runWithoutGpuLosesNothing()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        QVERIFY(waitCompiled(w));
        const QString text = w.editor()->text();
        QSignalSpy done(&w, &MainWindow::runFinished);
        w.runNow();
        QVERIFY(done.wait(30000));
        QCOMPARE(w.runs().size(), 1);
        QVERIFY(w.runs().first().error);
        QCOMPARE(w.runs().first().error->code, Error::Code::NoDriver);
        QVERIFY(w.logView()->toPlainText().contains("No NVIDIA driver found"));
        QCOMPARE(w.editor()->text(), text);
        QVERIFY(!w.isRunning());
        // The failed run is in the history with its status.
        auto *results = w.docks().panel<ResultsPanel>(PanelId::Results);
        QVERIFY(results);
        QCOMPARE(results->model()->rowCount(), 1);
        QVERIFY(results->model()->record(0).failed());
        // Buffers are still there, with their initial contents.
        QVERIFY(w.hostBuffers().find("a"));
        QCOMPARE(w.hostBuffers().find("a")->byteSize(), qint64(4 * 1048576));
    }

    // A history loaded with the project may hold runs 1 to 7 from earlier
    // sessions: this session's first run is run 8, in the Log as in the
    // history (the Log said "Run 1" while the history row said 8).
    void runNumbersFollowTheHistory()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        QVERIFY(waitCompiled(w));
        RunRecord earlier;
        earlier.number = 7;
        earlier.kernel = QStringLiteral("vectorAdd");
        w.workbench().history().setRecords({earlier});
        QSignalSpy done(&w, &MainWindow::runFinished);
        w.runNow();
        QVERIFY(done.wait(30000));
        QVERIFY2(w.logView()->toPlainText().contains(QStringLiteral("Run 8 failed")),
                 qPrintable(w.logView()->toPlainText()));
        QTRY_COMPARE(w.workbench().history().rowCount(), 2);
        QCOMPARE(w.workbench().history().record(1).number, 8);
    }

    // The history is the workbench's: a run joins it with no Results panel
    // built (panels behind other tabs are built after the first paint), and
    // historyRecord() names the row it took.
    void aRunJoinsTheHistoryWithoutAPanel()
    {
        EngineClient engine;
        Workbench wb(&engine);
        KP_VERIFY_RESULT(wb.document().open(QStringLiteral(":/presets/vector_add/vector_add.kpg")));
        QSignalSpy recorded(&wb, &Workbench::historyRecord);
        wb.runs().run();
        QVERIFY(recorded.wait(30000));
        QCOMPARE(wb.history().rowCount(), 1);
        QCOMPARE(recorded.first().at(1).toInt(), 0);
        QVERIFY(wb.history().record(0).failed()); // no GPU here; a failed run is history too
        QCOMPARE(wb.history().record(0).kernel, QStringLiteral("vectorAdd"));
    }

    void darkThemeRecoloursTheEditor()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        applyTheme("light");
        QVERIFY(w.editor()->cudaLexer()->paper(0).lightness() > 128);
        applyTheme("dark");
        QTRY_VERIFY(w.editor()->cudaLexer()->paper(0).lightness() < 128);
        QVERIFY(w.editor()->cudaLexer()->color(0).lightness() > 128);
        applyTheme("system");
    }

    void chunkGroupShowsItsFieldsNotAnEmptyKernel()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/overlap_4/overlap_4.kpg"));
        QVERIFY(waitCompiled(w));
        LaunchPanel *lp = w.launchPanel();
        // The only step is a chunk group: its fields, not the kernel rows of no kernel.
        QCOMPARE(lp->stepChooser()->currentText(),
                 QString("1 of 1: chunks chunks of n: copy a → device, newtonSqrt, copy c → host"));
        QVERIFY(!lp->isRowShown(lp->kernelChooser()));
        QVERIFY(!lp->isRowShown(lp->gridField(0)));
        QVERIFY(!lp->argumentTable()->isVisibleTo(lp));
        QVERIFY(lp->isRowShown(lp->chunkCountField()));
        QCOMPARE(lp->chunkCountField()->text(), QString("chunks"));
        QCOMPARE(lp->chunkStreamsField()->text(), QString("streams"));
        QCOMPARE(lp->chunkElementsField()->text(), QString("n"));
        QCOMPARE(lp->chunkStepsLabel()->text(), QString("1. copy a → device\n2. newtonSqrt\n3. copy c → host"));
        typeAndEnter(lp->chunkStreamsField(), "2");
        QTRY_COMPARE(w.project().launches[0].chunkStreams, QString("2"));
        QVERIFY(lp->messageLabel()->text().isEmpty());
        // A negative count is refused on its field; the project keeps its value.
        typeAndEnter(lp->chunkCountField(), "-3");
        QTRY_VERIFY(lp->chunkCountField()->toolTip().contains("-3"));
        QCOMPARE(w.project().launches[0].chunkCount, QString("chunks"));
    }

    void copyMemsetAndEventStepsAreAddedAndEdited()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        QVERIFY(waitCompiled(w));
        LaunchPanel *lp = w.launchPanel();
        QMenu *menu = lp->addStepButton()->menu();
        QVERIFY(menu);
        const auto add = [menu](const char *kind) {
            QAction *a = menu->findChild<QAction *>(QStringLiteral("add-") + QLatin1String(kind));
            QVERIFY2(a, kind);
            a->trigger();
        };
        // Waiting needs an event first: said in the panel, nothing added.
        add("wait");
        QVERIFY(lp->messageLabel()->text().contains("Record an event"));
        QCOMPARE(w.project().launches.size(), 1);

        add("copy-to-host");
        QTRY_COMPARE(w.project().launches.size(), 2);
        const LaunchStep copy = w.project().launches[1];
        QCOMPARE(copy.kind, LaunchStep::Kind::Copy);
        QCOMPARE(copy.buffer, QString("c"));
        QVERIFY(!copy.toDevice);
        QCOMPARE(lp->currentStep(), 1);
        QCOMPARE(lp->stepChooser()->currentText(), QString("2 of 2: copy c → host"));
        QVERIFY(!lp->isRowShown(lp->kernelChooser()));
        QVERIFY(lp->isRowShown(lp->stepBufferField()));
        QVERIFY(lp->isRowShown(lp->copyDirectionField()));
        QVERIFY(!lp->isRowShown(lp->memsetValueField()));
        QCOMPARE(lp->copyDirectionField()->currentIndex(), 1);
        // A range: the first 10 elements.
        typeAndEnter(lp->countField(), "10");
        QTRY_COMPARE(w.project().launches[1].count, QString("10"));
        QCOMPARE(lp->stepChooser()->currentText(), QString("2 of 2: copy c[0 +10] → host"));
        // A range past the end is refused where it was typed.
        typeAndEnter(lp->offsetField(), "n");
        QTRY_VERIFY(!lp->messageLabel()->text().isEmpty());
        // The range as a whole is past the end: its count says so.
        QVERIFY2(lp->countField()->styleSheet().contains("border"), qPrintable(lp->messageLabel()->text()));
        typeAndEnter(lp->offsetField(), "");
        QTRY_VERIFY(lp->messageLabel()->text().isEmpty());

        add("record");
        QTRY_COMPARE(w.project().launches.size(), 3);
        QCOMPARE(w.project().launches[2].kind, LaunchStep::Kind::Record);
        QCOMPARE(w.project().launches[2].event, QString("event1"));
        QVERIFY(lp->isRowShown(lp->eventField()));
        typeAndEnter(lp->eventField(), "copied");
        QTRY_COMPARE(w.project().launches[2].event, QString("copied"));
        typeAndEnter(lp->streamField()->lineEdit(), "side");
        QTRY_COMPARE(w.project().launches[2].stream, QString("side"));
        QCOMPARE(w.project().streams.size(), 1); // a new name is declared with it
        QCOMPARE(w.project().streams[0].name, QString("side"));
        QCOMPARE(lp->stepChooser()->currentText(), QString("3 of 3: record event copied (stream side)"));

        add("wait");
        QTRY_COMPARE(w.project().launches.size(), 4);
        QCOMPARE(w.project().launches[3].kind, LaunchStep::Kind::Wait);
        QCOMPARE(w.project().launches[3].waitFor, QStringList{"copied"});
        QCOMPARE(lp->waitForField()->text(), QString("copied"));
        // An event nobody records is refused on the field.
        typeAndEnter(lp->waitForField(), "never");
        QTRY_VERIFY(lp->waitForField()->styleSheet().contains("border"));
        QCOMPARE(w.project().launches[3].waitFor, QStringList{"copied"});

        add("memset");
        QTRY_COMPARE(w.project().launches.size(), 5);
        QCOMPARE(w.project().launches[4].kind, LaunchStep::Kind::Memset);
        QVERIFY(lp->isRowShown(lp->memsetValueField()));
        lp->memsetValueField()->setFocus();
        lp->memsetValueField()->selectAll();
        QTest::keyClicks(lp->memsetValueField(), "255");
        QTest::keyClick(lp->memsetValueField(), Qt::Key_Return);
        QTRY_COMPARE(w.project().launches[4].memsetValue, 255);

        // Back on the kernel step, the kernel rows are back.
        lp->stepChooser()->setCurrentIndex(0);
        QVERIFY(lp->isRowShown(lp->kernelChooser()));
        QVERIFY(!lp->isRowShown(lp->stepBufferField()));
        QVERIFY(lp->argumentTable()->isVisibleTo(lp));
        QCOMPARE(lp->kernelChooser()->currentText(), QString("vectorAdd"));
        // Undo takes the steps back one by one.
        QVERIFY(w.isProjectModified());
    }

    void plainKernelHasNoLaunchYet()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openSource(":/presets/vector_add/vector_add.cu"));
        QVERIFY(waitCompiled(w));
        QVERIFY(w.launchPanel()->messageLabel()->text().startsWith("No launch step yet"));
        QVERIFY(!w.launchPanel()->runButton()->isEnabled());
    }
};

QTEST_MAIN(TestWorkbench)
#include "tst_workbench.moc"
