// A new user's steps through the workbench, offscreen with the real engine
// and no GPU: typing a binding, launching a bare .cu without writing JSON,
// switching kernels, setting a buffer's initial contents with the form,
// deleting a buffer still in use, the Buffers table, and the launch checks
// that need no GPU. Each test is one finding, written as the user's keys and
// clicks, reading the widgets afterwards.

#include "client/engineclient.h"
#include "editor/codeeditor.h"
#include "guitestutil.h"
#include "panels/buffers/bufferspanel.h"
#include "panels/buffers/initeditor.h"
#include "panels/checks/checkspanel.h"
#include "panels/launch/launchpanel.h"
#include "panels/memory/memorypanel.h"
#include "panels/sweep/sweeppanel.h"
#include "panels/sweep/sweepplotview.h"
#include "shell/docks.h"
#include "shell/mainwindow.h"
#include "testutil.h"
#include "workbench/projectdocument.h"
#include "workbench/runhistory.h"
#include "workbench/workbench.h"

#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

using namespace Kp;
using KpTest::chooseByKeys;
using KpTest::comboItems;
using KpTest::openShownCompiled;
using KpTest::typeAndEnter;
using KpTest::waitCompiled;

class TestNewUser : public QObject
{
    Q_OBJECT

private:
    static QString binding(LaunchPanel *panel, int row)
    {
        QComboBox *combo = panel->bindingEditor(row);
        return combo ? combo->currentText() : QString();
    }

    static QString writeFile(const QTemporaryDir &dir, const QString &name, const QByteArray &text)
    {
        QFile f(dir.filePath(name));
        if (!f.open(QIODevice::WriteOnly) || f.write(text) != text.size()) {
            return {};
        }
        return f.fileName();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        // No GPU on purpose, so the suite means the same on every machine.
        qputenv("KPG_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
    }

    // 1. "Bound to" took one keystroke: 1.5 became 1, the focus jumped away.
    void bindingTakesAWholeNumber()
    {
        EngineClient engine;
        MainWindow w(&engine);
        QVERIFY(openShownCompiled(w, ":/presets/vector_add/vector_add.kpg"));
        QString text = w.editor()->text();
        text.replace("int n)", "int n, float scale)");
        w.editor()->setText(text);
        QVERIFY(waitCompiled(w));
        LaunchPanel *lp = w.launchPanel();
        QCOMPARE(lp->argumentTable()->rowCount(), 5);
        QPointer<QComboBox> combo = lp->bindingEditor(4);
        QVERIFY(combo);
        combo->lineEdit()->setFocus();
        QTest::keyClicks(combo->lineEdit(), "1");
        QApplication::processEvents();
        // The first key neither commits nor rebuilds the row: the field is still there, with the focus.
        QVERIFY(combo);
        QVERIFY(combo->lineEdit()->hasFocus());
        QVERIFY(w.project().launches[0].args.size() == 4);
        QTest::keyClicks(combo->lineEdit(), ".5");
        QTest::keyClick(combo->lineEdit(), Qt::Key_Return);
        QTRY_COMPARE(w.project().launches[0].args.size(), 5);
        QCOMPARE(w.project().launches[0].args[4].value, 1.5);
        QCOMPARE(binding(lp, 4), QString("1.5"));
        // Again, and leaving the field by focus instead of Enter; 2.7 is shown as typed.
        typeAndEnter(lp->bindingEditor(4)->lineEdit(), "0.25");
        QTRY_COMPARE(w.project().launches[0].args[4].value, 0.25);
        lp->bindingEditor(4)->lineEdit()->setFocus();
        lp->bindingEditor(4)->lineEdit()->selectAll();
        QTest::keyClicks(lp->bindingEditor(4)->lineEdit(), "2.7");
        lp->gridField(1)->setFocus(); // focus out commits
        QTRY_COMPARE(w.project().launches[0].args[4].value, 2.7);
        QCOMPARE(binding(lp, 4), QString("2.7"));
        QVERIFY(lp->messageLabel()->text().isEmpty());
        // One undo step per committed value, not per key.
        w.document()->undoStack()->undo();
        QCOMPARE(w.project().launches[0].args[4].value, 0.25);
    }

    // 2 and 12. A bare .cu gets launch steps, buffers and scalars without a line of JSON.
    void bareKernelBecomesARunnableProject()
    {
        QTemporaryDir dir;
        const QString cu = writeFile(dir, "saxpy.cu",
                                     "__global__ void saxpy(float *y, const float *x, float a, int n)\n"
                                     "{\n"
                                     "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                     "    if (i < n) y[i] = a * x[i] + y[i];\n"
                                     "}\n"
                                     "__global__ void scale(float *y, float a, int n)\n"
                                     "{\n"
                                     "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                     "    if (i < n) y[i] *= a;\n"
                                     "}\n");
        QVERIFY(!cu.isEmpty());
        EngineClient engine;
        MainWindow w(&engine);
        QSignalSpy compiled(&w, &MainWindow::compileFinished); // before the open: it may land during the show
        KP_VERIFY_RESULT(w.openSource(cu));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(!compiled.isEmpty() || compiled.wait(30000));
        LaunchPanel *lp = w.launchPanel();
        QVERIFY(lp->messageLabel()->text().startsWith("No launch step yet: choose the kernel"));
        QVERIFY(!lp->runButton()->isEnabled());
        // Pick the kernel: type its name in the Kernel box and press Enter.
        typeAndEnter(lp->kernelChooser()->lineEdit(), "saxpy");
        QTRY_COMPARE(w.project().launches.size(), 1);
        const LaunchStep &step = w.project().launches[0];
        QCOMPARE(step.kernel, QString("saxpy"));
        QCOMPARE(step.block, QStringList{"256"});
        QCOMPARE(step.grid, QStringList{"ceil_div(n, block.x)"});
        QCOMPARE(lp->gridField(0)->text(), QString("ceil_div(n, block.x)"));
        // The offer: one button creating what the parameters need, named and typed after them.
        QTRY_VERIFY(lp->createMissingButton()->isVisible());
        QCOMPARE(lp->createMissingButton()->text(), QString("Create and bind: y, x, a, n"));
        QVERIFY(comboItems(lp->bindingEditor(0)).contains("new buffer y (float32)"));
        QVERIFY(comboItems(lp->bindingEditor(2)).contains("new scalar a (float32)"));
        QTest::mouseClick(lp->createMissingButton(), Qt::LeftButton);
        QTRY_VERIFY(!lp->createMissingButton()->isVisible());
        const Project &p = w.project();
        QCOMPARE(p.buffers.size(), 2);
        QCOMPARE(p.buffers[0].name, QString("y"));
        QCOMPARE(p.buffers[0].init.kind, BufferInit::Kind::Zeros);
        QCOMPARE(p.buffers[1].name, QString("x"));
        QCOMPARE(p.buffers[1].init.kind, BufferInit::Kind::Random); // const data: an input
        QCOMPARE(p.scalars.size(), 2);
        QCOMPARE(p.scalars[0].name, QString("a"));
        QCOMPARE(p.scalars[0].type, DType::Float32);
        QCOMPARE(p.scalars[1].name, QString("n"));
        QCOMPARE(p.scalars[1].type, DType::Int32);
        QCOMPARE(p.scalars[1].value, 1024.0);
        QCOMPARE(binding(lp, 0), QString("y"));
        QCOMPARE(binding(lp, 3), QString("n"));
        QTRY_VERIFY(lp->messageLabel()->text().isEmpty());
        QCOMPARE(lp->resolvedLabel()->text(), QString("grid (4, 1, 1) × block (256, 1, 1) = 1,024 threads"));
        QVERIFY(lp->runButton()->isEnabled());

        // A second step for the other kernel: +, then choose it; its bindings follow the names.
        QTest::mouseClick(lp->addStepButton(), Qt::LeftButton);
        QTRY_COMPARE(w.project().launches.size(), 2);
        QCOMPARE(lp->currentStep(), 1);
        typeAndEnter(lp->kernelChooser()->lineEdit(), "scale");
        QTRY_COMPARE(w.project().launches[1].kernel, QString("scale"));
        QCOMPARE(binding(lp, 0), QString("y"));
        QCOMPARE(binding(lp, 1), QString("a"));
        QCOMPARE(binding(lp, 2), QString("n"));
        QTRY_VERIFY(lp->messageLabel()->text().isEmpty());
        // Reorder: scale first.
        QTest::mouseClick(lp->moveStepUpButton(), Qt::LeftButton);
        QTRY_COMPARE(w.project().launches[0].kernel, QString("scale"));
        QCOMPARE(w.project().launches[1].kernel, QString("saxpy"));
        QCOMPARE(lp->currentStep(), 0);
        QCOMPARE(lp->stepChooser()->currentText(), QString("1 of 2: scale"));
        // Repeat and swaps (12) are fields too.
        lp->repeatCount()->setFocus();
        lp->repeatCount()->selectAll();
        QTest::keyClicks(lp->repeatCount(), "5");
        QTest::keyClick(lp->repeatCount(), Qt::Key_Return);
        QTRY_COMPARE(w.project().repeat.count, 5);
        typeAndEnter(lp->swapField(), "x <-> y");
        QTRY_COMPARE(w.project().repeat.swaps.size(), 1);
        QCOMPARE(w.project().repeat.swaps[0], qMakePair(QString("x"), QString("y")));
        QCOMPARE(lp->swapField()->text(), QString("x ↔ y"));
        typeAndEnter(lp->swapField(), "x");
        QTRY_VERIFY(lp->messageLabel()->text().startsWith("repeat, swap: 'x' is not a pair"));
        QCOMPARE(w.project().repeat.swaps.size(), 1);
        // Remove the first step.
        QTest::mouseClick(lp->removeStepButton(), Qt::LeftButton);
        QTRY_COMPARE(w.project().launches.size(), 1);
        QCOMPARE(w.project().launches[0].kernel, QString("saxpy"));
        QVERIFY(!lp->stepChooser()->isEnabled());

        // Saved and opened again: the project it became.
        const QString kpg = dir.filePath("saxpy.kpg");
        KP_VERIFY_RESULT(w.saveProjectTo(kpg));
        EngineClient engine2;
        MainWindow w2(&engine2);
        KP_VERIFY_RESULT(w2.openProject(kpg));
        QCOMPARE(w2.project().launches.size(), 1);
        QCOMPARE(w2.project().buffers.size(), 2);
        QCOMPARE(w2.project().repeat.count, 5);
    }

    // 10. A kernel change rebinds by name; the list offers what fits the parameter's type.
    void kernelChangeRebindsByName()
    {
        QTemporaryDir dir;
        writeFile(dir, "two.cu",
                  "__global__ void first(float *b, float s) { b[threadIdx.x] *= s; }\n"
                  "__global__ void second(float s, float *b) { b[threadIdx.x] += s; }\n");
        const QString kpg = writeFile(dir, "two.kpg",
                                      R"({"format": "kernel-playground-project", "version": 1, "source": "two.cu",
                "scalars": [{"name": "s", "type": "float32", "value": 2}, {"name": "k", "type": "int32", "value": 3}],
                "buffers": [{"name": "b", "dtype": "float32", "shape": [32]},
                            {"name": "h", "dtype": "int32", "shape": [32]}],
                "launches": [{"kernel": "first", "grid": 1, "block": 32, "args": ["b", "s"]}]})");
        EngineClient engine;
        MainWindow w(&engine);
        QVERIFY(openShownCompiled(w, kpg));
        LaunchPanel *lp = w.launchPanel();
        // float *b: buffers, float32 first; float s: scalars, float32 first; never a buffer for a value.
        QCOMPARE(comboItems(lp->bindingEditor(0)), (QStringList{"b", "", "h"}));
        QCOMPARE(comboItems(lp->bindingEditor(1)), (QStringList{"s", "", "k"}));
        typeAndEnter(lp->kernelChooser()->lineEdit(), "second");
        QTRY_COMPARE(w.project().launches[0].kernel, QString("second"));
        QCOMPARE(lp->argumentTable()->item(0, 0)->text(), QString("s"));
        QCOMPARE(binding(lp, 0), QString("s"));
        QCOMPARE(binding(lp, 1), QString("b"));
        QTRY_VERIFY(lp->messageLabel()->text().isEmpty());
        // One undo step gives the old kernel and bindings back.
        w.document()->undoStack()->undo();
        QCOMPARE(w.project().launches[0].kernel, QString("first"));
        QCOMPARE(binding(lp, 0), QString("b"));
    }

    // 3 and 4. The initial contents are a form: kind, fields, checked when committed.
    void initEditorValidatesOnCommit()
    {
        EngineClient engine;
        MainWindow w(&engine);
        QVERIFY(openShownCompiled(w, ":/presets/vector_add/vector_add.kpg"));
        BuffersPanel *bp = w.buffersPanel();
        bp->selectBuffer(1);
        InitEditor *ie = bp->initEditor();
        QCOMPARE(ie->kindChooser()->currentText(), QString("random"));
        QCOMPARE(bp->table()->item(1, 3)->text(), QString("random uniform [0, 1), seed 2"));
        // Choose "expression" from the keyboard and type a wrong one.
        chooseByKeys(ie->kindChooser(), "exp");
        QCOMPARE(ie->kindChooser()->currentText(), QString("expression"));
        // Choosing a kind commits it with its defaults (the expression i).
        QTRY_COMPARE(w.project().buffers[1].init.kind, BufferInit::Kind::Expression);
        QCOMPARE(w.project().buffers[1].init.expression, QString("i"));
        typeAndEnter(ie->field("expr"), "q*2");
        QTRY_VERIFY(!bp->messageLabel()->text().isEmpty());
        QVERIFY2(bp->messageLabel()->text().startsWith("buffer b") && bp->messageLabel()->text().contains("'q'"),
                 qPrintable(bp->messageLabel()->text()));
        QCOMPARE(w.project().buffers[1].init.expression, QString("i")); // refused: nothing changed
        QCOMPARE(ie->field("expr")->text(), QString("q*2"));            // the text stays to be fixed
        typeAndEnter(ie->field("expr"), "i % 7");
        QTRY_COMPARE(w.project().buffers[1].init.expression, QString("i % 7"));
        QTRY_VERIFY(bp->messageLabel()->text().isEmpty());
        QCOMPARE(bp->table()->item(1, 3)->text(), QString("expression i % 7"));
        QTRY_COMPARE(w.hostBuffers().find("b")->generation > 0, true);
        // Constant: its field, a number.
        chooseByKeys(ie->kindChooser(), "const");
        QTRY_COMPARE(w.project().buffers[1].init.kind, BufferInit::Kind::Constant);
        typeAndEnter(ie->field("value"), "2.5");
        QTRY_COMPARE(w.project().buffers[1].init.value, 2.5);
        // Random, normal: its own fields.
        chooseByKeys(ie->kindChooser(), "rand");
        chooseByKeys(ie->distributionChooser(), "normal");
        QTRY_COMPARE(w.project().buffers[1].init.distribution, BufferInit::Distribution::Normal);
        QVERIFY(!ie->field("min")->isVisible());
        QVERIFY(ie->field("stddev")->isVisible());
        typeAndEnter(ie->field("stddev"), "-1");
        QTRY_VERIFY(bp->messageLabel()->text().contains("stddev"));
        QCOMPARE(w.project().buffers[1].init.stddev, 1.0);
    }

    // A buffer switched to random gets a seed no other random buffer has
    // (the walk's y took x's seed 1, and so x's values).
    void randomGetsASeedOfItsOwn()
    {
        EngineClient engine;
        MainWindow w(&engine);
        QVERIFY(openShownCompiled(w, ":/presets/vector_add/vector_add.kpg"));
        BuffersPanel *bp = w.buffersPanel();
        bp->selectBuffer(2); // c: zeros; a and b are random with seeds 1 and 2
        InitEditor *ie = bp->initEditor();
        QCOMPARE(ie->kindChooser()->currentText(), QString("zeros"));
        chooseByKeys(ie->kindChooser(), "rand");
        QTRY_COMPARE(w.project().buffers[2].init.kind, BufferInit::Kind::Random);
        QCOMPARE(w.project().buffers[2].init.seed, quint64(3));
        QCOMPARE(bp->table()->item(2, 3)->text(), QString("random uniform [0, 1), seed 3"));
    }

    // 4. The dtype is chosen from the list, not typed.
    void dtypeIsChosenFromAList()
    {
        EngineClient engine;
        MainWindow w(&engine);
        QVERIFY(openShownCompiled(w, ":/presets/vector_add/vector_add.kpg"));
        QTableWidget *t = w.buffersPanel()->table();
        t->setCurrentCell(2, 1);
        t->editItem(t->item(2, 1));
        auto *chooser = t->findChild<QComboBox *>();
        QVERIFY(chooser);
        QCOMPARE(chooser->count(), kDTypeCount); // every dtype, the vector family included
        QCOMPARE(chooser->currentText(), QString("float32"));
        chooseByKeys(chooser, "float6");
        QTRY_COMPARE(w.project().buffers[2].dtype, DType::Float64);
    }

    // 9. Deleting a buffer a step uses is refused, in words that say so.
    void deletingABufferInUseIsRefused()
    {
        EngineClient engine;
        MainWindow w(&engine);
        QVERIFY(openShownCompiled(w, ":/presets/heat/heat.kpg"));
        BuffersPanel *bp = w.buffersPanel();
        bp->selectBuffer(1);
        auto *del = bp->findChild<QToolButton *>("deleteBuffer");
        QVERIFY(del);
        QCOMPARE(del->text(), QString("Delete"));
        QTest::mouseClick(del, Qt::LeftButton);
        QTRY_COMPARE(bp->messageLabel()->text(),
                     QString("buffer t_next: not deleted: t_next is still used by step 1, parameter t_next; the "
                             "repeat swap t ↔ t_next. Bind those to something else first."));
        QCOMPARE(w.project().buffers.size(), 2);
        QVERIFY(w.launchPanel()->messageLabel()->text().isEmpty());
        QVERIFY(!w.isProjectModified());
    }

    // 13. The Buffers table shows several rows; Add selects the new buffer and shows it.
    void addSelectsTheNewBuffer()
    {
        EngineClient engine;
        MainWindow w(&engine);
        QVERIFY(openShownCompiled(w, ":/presets/vector_add/vector_add.kpg", QSize(1280, 800)));
        QTableWidget *t = w.buffersPanel()->table();
        QVERIFY(t->minimumHeight() >= 3 * t->verticalHeader()->defaultSectionSize());
        for (int i = 0; i < 4; ++i) {
            QTest::mouseClick(w.buffersPanel()->findChild<QToolButton *>("addBuffer"), Qt::LeftButton);
        }
        QTRY_COMPARE(w.project().buffers.size(), 7);
        QCOMPARE(t->currentRow(), 6);
        QCOMPARE(t->item(6, 0)->text(), QString("buf4"));
        QVERIFY(t->viewport()->rect().contains(t->visualItemRect(t->item(6, 0))));
        QCOMPARE(w.buffersPanel()->initEditor()->kindChooser()->currentText(), QString("zeros"));
    }

    // 11. Limits known without a GPU; the resolved launch stays shown on an unrelated error.
    void blockLimitAndResolvedWithoutGpu()
    {
        EngineClient engine;
        MainWindow w(&engine);
        QVERIFY(openShownCompiled(w, ":/presets/vector_add/vector_add.kpg"));
        LaunchPanel *lp = w.launchPanel();
        typeAndEnter(lp->blockField(0), "2048");
        typeAndEnter(lp->blockField(1), "8");
        QTRY_COMPARE(lp->messageLabel()->text(),
                     QString("step 1, block: 2048 × 8 × 1 = 16384 threads per block; CUDA GPUs run at most 1024 "
                             "threads per block"));
        QVERIFY(lp->blockField(0)->styleSheet().contains("border"));
        QVERIFY(!lp->runButton()->isEnabled());
        typeAndEnter(lp->blockField(0), "128");
        typeAndEnter(lp->blockField(1), "1");
        QTRY_VERIFY(lp->messageLabel()->text().isEmpty());
        // A wrong binding says so, and the grid it resolves to is still shown.
        typeAndEnter(lp->bindingEditor(2)->lineEdit(), "zz");
        QTRY_VERIFY(lp->messageLabel()->text().contains("'zz'"));
        QCOMPARE(lp->resolvedLabel()->text(), QString("grid (8192, 1, 1) × block (128, 1, 1) = 1,048,576 threads"));
        // A wrong grid field leaves no stale numbers beside it; fixed, they come back.
        typeAndEnter(lp->gridField(1), "ceil_div(n,");
        QTRY_VERIFY(lp->messageLabel()->text().contains("grid y"));
        QCOMPARE(lp->resolvedLabel()->text(), QString("— (fix the marked field)"));
        typeAndEnter(lp->gridField(1), "2");
        QTRY_COMPARE(lp->resolvedLabel()->text(), QString("grid (8192, 2, 1) × block (128, 1, 1) = 2,097,152 threads"));
    }

    // Issue 29: a grid of n blocks (instead of ceil_div(n, block.x)) starts
    // whole blocks beyond every buffer; the Launch panel says so as the user
    // types it, without a GPU, and the warning goes when the grid is fixed.
    void launchBeyondTheBuffersIsHinted()
    {
        EngineClient engine;
        MainWindow w(&engine);
        QVERIFY(openShownCompiled(w, ":/presets/vector_add/vector_add.kpg"));
        LaunchPanel *lp = w.launchPanel();
        QVERIFY2(lp->messageLabel()->text().isEmpty(), qPrintable(lp->messageLabel()->text()));
        typeAndEnter(lp->gridField(0), "n");
        QTRY_VERIFY2(lp->messageLabel()->text().contains(
                         "the largest buffer it is given, 'a', holds 1048576 elements, so whole blocks have no "
                         "element of their own"),
                     qPrintable(lp->messageLabel()->text()));
        QVERIFY(lp->messageLabel()->text().contains("(a grid of 4096 blocks of 256 covers it)"));
        // A warning, not an error (a guarded kernel runs right): not in the error's red.
        QVERIFY(lp->messageLabel()->styleSheet().isEmpty());
        typeAndEnter(lp->gridField(0), "ceil_div(n, block.x)");
        QTRY_VERIFY2(lp->messageLabel()->text().isEmpty(), qPrintable(lp->messageLabel()->text()));
    }

    // Issue 29: sizes no CUDA GPU launches are refused without a GPU, with
    // the field and the limit (the engine's default launch limits). Block
    // x and y allow 1024 like a whole block: blockLimitAndResolvedWithoutGpu.
    void gridAndBlockLimitsWithoutGpu_data()
    {
        QTest::addColumn<bool>("grid");
        QTest::addColumn<int>("axis");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("message");
        QTest::newRow("grid y of 100000") << true << 1 << "100000"
                                          << "step 1, grid y: 100000 blocks; CUDA GPUs allow at most 65535 blocks in y";
        QTest::newRow("grid z of 65536") << true << 2 << "65536"
                                         << "step 1, grid z: 65536 blocks; CUDA GPUs allow at most 65535 blocks in z";
        QTest::newRow("grid x past 2^31-1")
            << true << 0 << "n * 4096"
            << "step 1, grid x: 'n * 4096' is too large (at most 2147483647); it gives 4.29497e+09";
        QTest::newRow("block z of 65") << false << 2 << "65"
                                       << "step 1, block z: 65 threads; CUDA GPUs allow at most 64 threads in z";
    }

    void gridAndBlockLimitsWithoutGpu()
    {
        QFETCH(bool, grid);
        QFETCH(int, axis);
        QFETCH(QString, value);
        QFETCH(QString, message);
        EngineClient engine;
        MainWindow w(&engine);
        QVERIFY(openShownCompiled(w, ":/presets/vector_add/vector_add.kpg"));
        LaunchPanel *lp = w.launchPanel();
        if (!grid && axis == 2) {
            typeAndEnter(lp->blockField(0), "1"); // within 1024 threads a block, so z's own limit speaks
        }
        QLineEdit *field = grid ? lp->gridField(axis) : lp->blockField(axis);
        typeAndEnter(field, value);
        QTRY_COMPARE(lp->messageLabel()->text(), message);
        QVERIFY(field->styleSheet().contains("border"));
        QVERIFY(!lp->runButton()->isEnabled());
        typeAndEnter(field, grid && axis == 0 ? "ceil_div(n, block.x)" : "1");
        QTRY_VERIFY(lp->messageLabel()->text().isEmpty());
    }

    // Issue 29: before anything ran, and without a GPU, the panels say what
    // they will do: Checks names the checks, Memory has checked nothing yet
    // (not "Nothing found"), Run Sweep and Ceilings are off with the reason,
    // and the Log names the preset rather than its resource path.
    void beforeAnyRunWithoutGpu()
    {
        EngineClient engine;
        MainWindow w(&engine);
        QVERIFY(openShownCompiled(w, ":/presets/vector_add/vector_add.kpg"));
        QCOMPARE(w.checksPanel()->summaryText(), QString("1 check: c = a + b. Run the project to evaluate it."));
        const QString memory = w.memoryPanel()->summary()->text();
        QVERIFY2(memory.startsWith("Nothing checked yet."), qPrintable(memory));
        QVERIFY(!memory.contains("Nothing found"));
        w.refreshDeviceStatus(); // as the program does when it starts
        QTRY_VERIFY_WITH_TIMEOUT(w.deviceStatusKnown(), 30000);
        auto *sweep = w.sweepPanel()->findChild<QPushButton *>("sweepRun");
        auto *ceilings = w.sweepPanel()->findChild<QPushButton *>("sweepCeilings");
        QTRY_VERIFY(!sweep->isEnabled());
        QVERIFY(!ceilings->isEnabled());
        QVERIFY2(sweep->toolTip().contains("compile-only mode"), qPrintable(sweep->toolTip()));
        QVERIFY2(ceilings->toolTip().contains("compile-only mode"), qPrintable(ceilings->toolTip()));
        QVERIFY(!sweep->toolTip().contains("cannot open shared object"));
        const QString log = w.logView()->toPlainText();
        QVERIFY2(log.contains("Opened preset vector_add (Vector add)"), qPrintable(log));
        QVERIFY(!log.contains(":/presets"));
    }

    // Issue 29: Save wrote an empty history file beside a project that had
    // never run; the first run's record makes the file.
    void saveWritesNoEmptyHistory()
    {
        QTemporaryDir dir;
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        const QString kpg = dir.filePath("mine.kpg");
        KP_VERIFY_RESULT(w.saveProjectTo(kpg));
        KP_VERIFY_RESULT(w.saveProjectTo(kpg)); // Save again
        Workbench::waitForHistoryWrites();
        QVERIFY(QFileInfo::exists(kpg));
        QVERIFY(!QFileInfo::exists(kpg + ".history.json"));
        RunRecord record;
        record.label = "first";
        w.workbench().history().append(record);
        Workbench::waitForHistoryWrites();
        QVERIFY(QFileInfo::exists(kpg + ".history.json"));
    }

    // Issue 29: an image imported from outside the project's folder is
    // copied into it (kpg check later reads only files inside), and it can
    // become gray float32 from either side: the mode or the dtype.
    void importedImageIsCopiedAndTurnsGray_data()
    {
        QTest::addColumn<bool>("modeFirst");
        QTest::newRow("image mode first") << true;
        QTest::newRow("dtype first") << false;
    }

    void importedImageIsCopiedAndTurnsGray()
    {
        QFETCH(bool, modeFirst);
        QTemporaryDir dir;
        QVERIFY(QDir().mkpath(dir.filePath("project")) && QDir().mkpath(dir.filePath("photos")));
        QImage image(4, 3, QImage::Format_RGBA8888);
        image.fill(Qt::red);
        const QString outside = dir.filePath("photos/cat.png");
        QVERIFY(image.save(outside));
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        const QString kpg = dir.filePath("project/p.kpg");
        KP_VERIFY_RESULT(w.saveProjectTo(kpg));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        BuffersPanel *bp = w.buffersPanel();
        bp->importPath(outside, true);
        QTRY_COMPARE(w.project().buffers.size(), 4);
        const BufferSpec &cat = w.project().buffers[3];
        QCOMPARE(cat.name, QString("cat"));
        QCOMPARE(cat.init.file, QString("cat.png"));
        QVERIFY(QFileInfo::exists(dir.filePath("project/cat.png")));
        QVERIFY2(w.logView()->toPlainText().contains("Copied " + outside + " into the project's folder as cat.png"),
                 qPrintable(w.logView()->toPlainText()));

        bp->selectBuffer(3);
        if (modeFirst) {
            QComboBox *mode = bp->initEditor()->imageModeChooser();
            mode->setFocus();
            chooseByKeys(mode, "gray");
        } else {
            QTableWidget *t = bp->table();
            t->setCurrentCell(3, 1);
            t->editItem(t->item(3, 1));
            auto *chooser = t->findChild<QComboBox *>();
            QVERIFY(chooser);
            // Chosen from the list, as a click on "float32" does.
            const int index = chooser->findText("float32");
            QVERIFY(index >= 0);
            chooser->setCurrentIndex(index);
            Q_EMIT chooser->activated(index);
        }
        QTRY_COMPARE(w.project().buffers[3].dtype, DType::Float32);
        QCOMPARE(w.project().buffers[3].init.imageMode, BufferInit::ImageMode::Gray);
        QVERIFY2(bp->messageLabel()->text().isEmpty(), qPrintable(bp->messageLabel()->text()));
        // One edit: one undo takes both back.
        w.document()->undoStack()->undo();
        QCOMPARE(w.project().buffers[3].dtype, DType::UChar4);
        QCOMPARE(w.project().buffers[3].init.imageMode, BufferInit::ImageMode::Rgba8);
        w.document()->undoStack()->redo();

        // The saved project passes kpg check's confinement (without a GPU it stops after compiling).
        KP_VERIFY_RESULT(w.saveProjectTo(kpg));
        const KpTest::Run r = KpTest::run("kpg", {"check", kpg}, {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"});
        QVERIFY2((r.out + r.err).contains("compiled"), qPrintable(r.err + r.out));
        QVERIFY2(!r.err.contains("outside"), qPrintable(r.err));
    }

    // Issue 29: File > Open started in the home folder. It starts in the
    // project's folder, else where the user last opened or saved a file.
    void openStartsWhereTheUserWorks()
    {
        QTemporaryDir dir;
        QVERIFY(QDir().mkpath(dir.filePath("saved")) && QDir().mkpath(dir.filePath("kernels")));
        QSettings().remove("lastOpenDir");
        QSettings().setValue("lastSaveDir", dir.filePath("saved"));
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg")); // a preset has no folder
        QCOMPARE(w.openDialogFolder(), dir.filePath("saved"));
        QSettings().setValue("lastOpenDir", dir.filePath("kernels"));
        QCOMPARE(w.openDialogFolder(), dir.filePath("kernels"));
        const QString cu = writeFile(dir, "own.cu", "__global__ void k(float *a) { a[0] = 1; }\n");
        KP_VERIFY_RESULT(w.openSource(cu));
        QCOMPARE(w.openDialogFolder(), QFileInfo(cu).absolutePath());
    }

    // Issue 29: Check Memory's status text ran under the NVRTC label. It
    // ends before the first permanent label; the Log has the whole reason.
    void checkMemoryStatusEndsBeforeTheLabels()
    {
        EngineClient engine;
        MainWindow w(&engine);
        QVERIFY(openShownCompiled(w, ":/presets/vector_add/vector_add.kpg", QSize(1024, 700)));
        QSignalSpy finished(&w, &MainWindow::memoryCheckFinished);
        w.checkMemory(Sanitizer::Tool::Memcheck);
        QVERIFY(finished.wait(120000));
        QStatusBar *bar = w.statusBar();
        const QString message = bar->currentMessage();
        QVERIFY2(!message.isEmpty(), qPrintable(w.logView()->toPlainText()));
        auto *nvrtc = bar->findChild<QLabel *>("nvrtcStatus");
        QVERIFY(nvrtc && nvrtc->isVisible());
        const int left = nvrtc->x(); // the first permanent label
        QVERIFY2(bar->fontMetrics().horizontalAdvance(message) < left,
                 qPrintable(QString("'%1' is %2 px; the labels start at %3")
                                .arg(message)
                                .arg(bar->fontMetrics().horizontalAdvance(message))
                                .arg(left)));
        QVERIFY(message.startsWith("Check memory failed: compute-sanitizer"));
        QVERIFY(message.endsWith(QChar(0x2026))); // elided here, whole in the Log and the tooltip
        QVERIFY(bar->toolTip().contains("CUDA_HOME"));
        QVERIFY2(w.logView()->toPlainText().contains("compute-sanitizer was not found"),
                 qPrintable(w.logView()->toPlainText()));
    }

    // Issue 29: the roofline in the Sweep dock was too small to read in a
    // 1052x720 window (seen after a GPU sweep). Offscreen, without a sweep,
    // the layout already gives it the larger share: this pins that.
    void sweepPlotIsReadableAt1052x720()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        w.resize(1052, 720);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QDockWidget *dock = w.docks().dock(PanelId::Sweep);
        QVERIFY(dock);
        dock->show();
        dock->raise();
        w.sweepPanel()->setPlotKind(QStringLiteral("roofline"));
        QApplication::processEvents();
        auto *plot = w.sweepPanel()->findChild<SweepPlotView *>();
        QVERIFY(plot);
        QTRY_VERIFY(plot->isVisible());
        const QTableView *table = w.sweepPanel()->findChild<QTableView *>("sweepTable");
        QVERIFY(table);
        // The dock is about 690 px wide here (the Launch dock has the left edge).
        QVERIFY2(plot->width() >= 360 && plot->width() > table->width() && plot->height() >= 140,
                 qPrintable(QString("the plot is %1 x %2, the table %3 wide")
                                .arg(plot->width())
                                .arg(plot->height())
                                .arg(table->width())));
    }

    // 14. New Project is empty: no title, description, throughput, buffers,
    // steps or checks of vector_add end up in the user's own project; its
    // kernel stub compiles, and the Log says where the templates are.
    void newProjectIsEmpty()
    {
        QTemporaryDir dir;
        EngineClient engine;
        MainWindow w(&engine);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTest::keySequence(&w, QKeySequence::New);
        QTRY_VERIFY_WITH_TIMEOUT(w.lastCompile().ok, 60000);
        const Project &p = w.project();
        QVERIFY(p.title.isEmpty());
        QVERIFY(p.description.isEmpty());
        QVERIFY(p.throughput.bytes.isEmpty() && p.throughput.flops.isEmpty());
        QVERIFY(p.buffers.isEmpty() && p.scalars.isEmpty() && p.launches.isEmpty() && p.checks.isEmpty());
        QCOMPARE(w.lastCompile().kernels.size(), 1);
        QVERIFY(!w.isProjectModified());
        QVERIFY(w.logView()->toPlainText().contains("File > New from Preset"));
        // Saved, it keeps nothing it did not have: the kernel beside it, no checks.
        KP_VERIFY_RESULT(w.saveProjectTo(dir.filePath("mine.kpg")));
        QVERIFY(QFileInfo::exists(dir.filePath("mine.cu")));
        QFile f(dir.filePath("mine.kpg"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray saved = f.readAll();
        QVERIFY2(!saved.contains("checks") && !saved.contains("12*n") && !saved.contains("Vector"), saved.constData());
    }

    // 15. Deleting a buffer that a check names says the check is the reason
    // (it said "checks[0].buffer: unknown buffer 'c'").
    void deletingABufferACheckNamesSaysTheCheck()
    {
        EngineClient engine;
        MainWindow w(&engine);
        QVERIFY(openShownCompiled(w, ":/presets/vector_add/vector_add.kpg"));
        const int c = 2;
        QCOMPARE(w.project().buffers[c].name, QString("c"));
        const QString check = w.project().checks.value(0).displayName();
        BuffersPanel *bp = w.buffersPanel();
        bp->selectBuffer(c);
        QTest::mouseClick(bp->findChild<QToolButton *>("deleteBuffer"), Qt::LeftButton);
        QTRY_COMPARE(bp->messageLabel()->text(),
                     QString("checks[0] (%1) uses buffer c: remove or edit that check first.").arg(check));
        QCOMPARE(w.project().buffers.size(), 3);
        QVERIFY(!w.isProjectModified());
    }
};

QTEST_MAIN(TestNewUser)
#include "tst_newuser.moc"
