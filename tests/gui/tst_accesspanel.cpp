// The Memory Access dock on a Workbench (no MainWindow): a recorded report
// shown costliest line first, double-click to the line, who touched a cell
// (asked in the panel, and from the Inspector's grid), the step chooser, and
// Analyze through the real controller, worker and compile on a machine
// without a GPU (the compile and instrumentation happen; the message says
// what is missing).

#include "access/accessrun.h"
#include "editor/accessheat.h"
#include "panelfixture.h"
#include "panels/access/accesspanel.h"
#include "panels/inspector/buffergridmodel.h"
#include "panels/inspector/bufferinspector.h"
#include "panels/inspector/imageview.h"
#include "recordedaccess.h"
#include "screenshot.h"
#include "workbench/accessmap.h"
#include "workbench/devices.h"
#include "workbench/selection.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QStandardItemModel>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTreeWidget>

#include <cmath>
#include <optional>

using namespace Kp;

using KpTest::recordedReport;

class TestAccessPanel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void showsTheCostliestLineFirst()
    {
        KpTest::PanelFixture f;
        AccessPanel panel(f.wb);
        panel.showReport(recordedReport());
        auto *table = panel.findChild<QTableWidget *>(QStringLiteral("accessTable"));
        QVERIFY(table);
        QCOMPARE(table->rowCount(), 3);
        // The column store wastes 28 sectors a request, the shared read 31 wavefronts: the read first.
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("5"));
        QVERIFY2(table->item(0, 7)->text().contains(QLatin1String("32-way bank conflict")),
                 qPrintable(table->item(0, 7)->text()));
        QCOMPARE(table->item(1, 0)->text(), QStringLiteral("4"));
        QVERIFY2(table->item(1, 7)->text().contains(QLatin1String("stride of 1024 floats")),
                 qPrintable(table->item(1, 7)->text()));
        QCOMPARE(table->item(1, 3)->text(), QStringLiteral("32"));
        QCOMPARE(table->item(1, 4)->text(), QStringLiteral("4"));
        QCOMPARE(table->item(2, 0)->text(), QStringLiteral("3"));
        QVERIFY(table->item(2, 7)->text().startsWith(QLatin1String("coalesced")));
        QCOMPARE(table->item(1, 0)->toolTip(), QStringLiteral("out[i * 1024] = v;"));
        // The line's colour is the editor margin's.
        QCOMPARE(table->item(0, 0)->data(Qt::DecorationRole).value<QColor>(),
                 AccessHeatMargin::colour(AccessHeat::Severe));
        QCOMPARE(table->item(2, 0)->data(Qt::DecorationRole).value<QColor>(),
                 AccessHeatMargin::colour(AccessHeat::Ideal));
        auto *summary = panel.findChild<QLabel *>(QStringLiteral("accessSummary"));
        QVERIFY(summary->text().contains(QLatin1String("6 warp requests recorded")));
        QVERIFY2(!summary->text().contains(QLatin1String("slower")), qPrintable(summary->text()));
        // What recording cost, when the report measured it.
        auto timed = std::make_shared<AccessReport>(*recordedReport());
        timed->launchMs = 1.5;
        timed->plainLaunchMs = 0.012;
        panel.showReport(timed);
        QVERIFY2(summary->text().contains(QLatin1String("recording made the launch 125.0x slower (1.500 ms against "
                                                        "0.012 ms)")),
                 qPrintable(summary->text()));
        QCOMPARE(accessCostText(*timed),
                 QStringLiteral("the recorded launch took 1.500 ms, 125.0x the same launch unrecorded (0.012 ms)"));
        panel.showReport(recordedReport());

        QSignalSpy line(&f.wb, &Workbench::showSourceLine);
        Q_EMIT table->cellDoubleClicked(1, 2);
        QCOMPARE(line.size(), 1);
        QCOMPARE(line.first().at(0).toInt(), 4);
    }

    // A source line is shown as it is, never as HTML, in the line's tooltip.
    void sourceLineToolTipIsPlainText_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("tip");
        QTest::newRow("plain code") << "out[i * 1024] = v;"
                                    << "out[i * 1024] = v;";
        QTest::newRow("a template argument named like a tag")
            << "v = load<b>(in, i);"
            << "<p style='white-space:pre'>v = load&lt;b&gt;(in, i);</p>";
        QTest::newRow("an image tag in a comment")
            << "out[i] = v; // <img src=\"file:///etc/hostname\">"
            << "<p style='white-space:pre'>out[i] = v; // &lt;img src=&quot;file:///etc/hostname&quot;&gt;</p>";
    }
    void sourceLineToolTipIsPlainText()
    {
        QFETCH(QString, line);
        QFETCH(QString, tip);
        auto r = std::make_shared<AccessReport>(*recordedReport());
        r->sourceText = QStringLiteral("// k\n\nfloat v = in[i];\n%1\nfloat t = tile[i * 32];\n").arg(line);
        KpTest::PanelFixture f;
        AccessPanel panel(f.wb);
        panel.showReport(r);
        auto *table = panel.findChild<QTableWidget *>(QStringLiteral("accessTable"));
        QCOMPARE(table->item(1, 0)->text(), QStringLiteral("4"));
        QCOMPARE(table->item(1, 0)->toolTip(), tip);
    }

    void findsWhoTouchedACell_data()
    {
        QTest::addColumn<QString>("buffer");
        QTest::addColumn<QString>("element");
        QTest::addColumn<QStringList>("first"); // access, block, thread, line; or the message
        QTest::newRow("read by block 1, thread 5") << "in"
                                                   << "37" << QStringList{"read", "(1, 0, 0)", "(5, 0, 0)", "3"};
        QTest::newRow("written by block 1, thread 2")
            << "out"
            << "2049" << QStringList{"written", "(1, 0, 0)", "(2, 0, 0)", "4"};
        QTest::newRow("untouched") << "out"
                                   << "2" << QStringList{"No thread of the recorded launch touched out[2]"};
        QTest::newRow("not an element") << "in"
                                        << "x" << QStringList{"x is not an element of in (0 to 262143)"};
        QTest::newRow("past the end") << "in"
                                      << "262144" << QStringList{"262144 is not an element of in (0 to 262143)"};
    }
    void findsWhoTouchedACell()
    {
        QFETCH(QString, buffer);
        QFETCH(QString, element);
        QFETCH(QStringList, first);
        KpTest::PanelFixture f;
        AccessPanel panel(f.wb);
        panel.showReport(recordedReport());
        panel.findChild<QComboBox *>(QStringLiteral("accessBuffer"))->setCurrentText(buffer);
        panel.findChild<QLineEdit *>(QStringLiteral("accessElement"))->setText(element);
        panel.findChild<QPushButton *>(QStringLiteral("findTouches"))->click();
        auto *touches = panel.findChild<QTreeWidget *>(QStringLiteral("accessTouches"));
        QCOMPARE(touches->topLevelItemCount(), 1);
        for (int c = 0; c < first.size(); ++c) {
            QCOMPARE(touches->topLevelItem(0)->text(c), first[c]);
        }
    }

    // The Inspector's grid asks the panel (Workbench::requestTouches): the
    // panel picks the buffer and element and lists the threads; the entry is
    // off, saying why, until a report has the buffer.
    void inspectorAsksWhoTouchedACell_data()
    {
        QTest::addColumn<QString>("view"); // where the cell is right-clicked
        QTest::addColumn<QString>("buffer");
        QTest::addColumn<qint64>("element");
        QTest::addColumn<QStringList>("first"); // access, block, thread, line; or the message
        QTest::newRow("grid: out[2049], written by block 1, thread 2")
            << "grid"
            << "out" << qint64(2049) << QStringList{"written", "(1, 0, 0)", "(2, 0, 0)", "4"};
        QTest::newRow("grid: in[37], read by block 1, thread 5")
            << "grid"
            << "in" << qint64(37) << QStringList{"read", "(1, 0, 0)", "(5, 0, 0)", "3"};
        QTest::newRow("grid: out[2], untouched")
            << "grid"
            << "out" << qint64(2) << QStringList{"No thread of the recorded launch touched out[2]"};
        QTest::newRow("image: out[3073], written by block 1, thread 3")
            << "image"
            << "out" << qint64(3073) << QStringList{"written", "(1, 0, 0)", "(3, 0, 0)", "4"};
        QTest::newRow("image: in[63], read by block 1, thread 31")
            << "image"
            << "in" << qint64(63) << QStringList{"read", "(1, 0, 0)", "(31, 0, 0)", "3"};
    }
    void inspectorAsksWhoTouchedACell()
    {
        QFETCH(QString, view);
        QFETCH(QString, buffer);
        QFETCH(qint64, element);
        QFETCH(QStringList, first);
        QList<std::pair<PanelId, Attention>> raised;
        KpTest::PanelFixture f;
        AccessPanel panel(f.wb);
        BufferInspector inspector(f.wb);
        connect(&f.wb, &Workbench::attention, this, [&raised](PanelId p, Attention a) { raised.append({p, a}); });
        // transpose_naive's buffers are in and out, as the recorded launch's.
        QVERIFY(f.open(QStringLiteral(":/presets/transpose_naive/transpose_naive.kpg")));
        inspector.resize(900, 600);
        inspector.show();
        QVERIFY(QTest::qWaitForWindowExposed(&inspector));
        inspector.showBuffer(buffer);
        QCOMPARE(inspector.currentBufferName(), buffer);
        // Right-click the cell where the user sees it; the menu's entry is what they choose.
        const auto menuAt = [&]() -> QAction * {
            if (view == QLatin1String("grid")) {
                inspector.setCurrentTab(BufferInspector::Tab::Grid);
                QTableView *grid = inspector.gridView();
                const QModelIndex index = inspector.gridModel()->indexOfElement(element);
                grid->scrollTo(index);
                Q_EMIT grid->customContextMenuRequested(grid->visualRect(index).center());
                if (inspector.gridModel()->flatIndex(grid->currentIndex()) != element) {
                    return nullptr;
                }
            } else {
                inspector.setCurrentTab(BufferInspector::Tab::Image);
                ImageView *image = inspector.imageView();
                const qint64 width = inspector.currentBuffer()->shape.last();
                const qint64 x = element % width, y = element / width;
                // Zoomed in, with the pixel at (10, 10) to (14, 14) of the view.
                image->setView(4, QPointF(10 - 4.0 * double(x), 10 - 4.0 * double(y)));
                if (image->elementAt(QPoint(11, 11)) != element) {
                    return nullptr;
                }
                Q_EMIT image->customContextMenuRequested(QPoint(11, 11));
            }
            auto *menu = qobject_cast<QMenu *>(QApplication::activePopupWidget());
            if (!menu) {
                return nullptr;
            }
            const QList<QAction *> actions = menu->actions();
            auto *action = actions.isEmpty() ? nullptr : actions.first();
            menu->close();
            return action;
        };
        QAction *who = menuAt();
        QVERIFY(who);
        QCOMPARE(who->objectName(), QStringLiteral("whoTouched"));
        QCOMPARE(who->text(), QStringLiteral("Who touched this cell?"));
        QVERIFY(!who->isEnabled());
        QVERIFY2(who->toolTip().startsWith(QLatin1String("Analyze Memory Access first")), qPrintable(who->toolTip()));

        f.wb.access().setReport(recordedReport());
        QCOMPARE(menuAt(), who);
        QVERIFY2(who->isEnabled(), qPrintable(who->toolTip()));
        raised.clear();
        who->trigger();
        QCOMPARE(raised.size(), 1);
        QCOMPARE(raised.first().first, PanelId::MemoryAccess);
        QCOMPARE(raised.first().second, Attention::UserAsked);
        QCOMPARE(panel.findChild<QComboBox *>(QStringLiteral("accessBuffer"))->currentText(), buffer);
        QCOMPARE(panel.findChild<QLineEdit *>(QStringLiteral("accessElement"))->text(), QString::number(element));
        auto *touches = panel.findChild<QTreeWidget *>(QStringLiteral("accessTouches"));
        QVERIFY(touches->topLevelItemCount() >= 1);
        for (int c = 0; c < first.size(); ++c) {
            QCOMPARE(touches->topLevelItem(0)->text(c), first[c]);
        }

        // Another project: the report described the old one, so the entry is off again.
        QVERIFY(f.open(QStringLiteral(":/presets/saxpy/saxpy.kpg")));
        QVERIFY(!f.wb.access().last());
        QVERIFY(!who->isEnabled());
    }

    // Colour by who touched: the recorded launch's out[1024 t + b] cells take
    // the colour of thread 32 b + t in the grid and the image, untouched ones
    // none; the hover says who; back to values; off for a buffer the launch
    // did not have. The project's buffers are the launch's (2^18 floats).
    void inspectorColoursCellsByWhoTouchedThem()
    {
        QTemporaryDir dir;
        QFile project(dir.filePath(QStringLiteral("t.kpg")));
        QVERIFY(project.open(QIODevice::WriteOnly));
        project.write(R"({"format": "kernel-playground-project", "version": 1,
            "source": {"inline": "__global__ void k(const float *in, float *out) {}\n"},
            "buffers": [{"name": "in", "dtype": "float32", "shape": [512, 512], "init": {"kind": "zeros"}},
                        {"name": "out", "dtype": "float32", "shape": [512, 512], "init": {"kind": "zeros"}},
                        {"name": "other", "dtype": "float32", "shape": [16], "init": {"kind": "zeros"}}],
            "launches": [{"kernel": "k", "grid": [2], "block": [32], "args": ["in", "out"]}]})");
        project.close();
        KpTest::PanelFixture f;
        BufferInspector inspector(f.wb);
        QVERIFY(f.open(project.fileName()));
        inspector.resize(900, 600);
        inspector.show();
        QVERIFY(QTest::qWaitForWindowExposed(&inspector));
        inspector.showBuffer(QStringLiteral("out"));
        auto *byThread = inspector.findChild<QAction *>(QStringLiteral("colourByThread"));
        auto *byValue = inspector.findChild<QAction *>(QStringLiteral("colourByValues"));
        QVERIFY(byThread && byValue);
        QVERIFY(!byThread->isEnabled());
        QVERIFY2(byThread->toolTip().startsWith("Analyze Memory Access"), qPrintable(byThread->toolTip()));

        f.wb.access().setReport(recordedReport());
        QVERIFY(byThread->isEnabled());
        byThread->trigger();
        BufferGridModel *grid = inspector.gridModel();
        const qint64 owned = 1024 * 3 + 1; // block 1, thread 3: global thread 35
        const double shade = std::fmod(35 * 0.6180339887498949, 1.0);
        QCOMPARE(grid->data(grid->indexOfElement(owned), Qt::BackgroundRole).value<QColor>(),
                 BufferGridModel::ownerColor(shade, OwnerColour::Thread));
        QVERIFY(!grid->data(grid->indexOfElement(2), Qt::BackgroundRole).isValid());
        const QString tip = grid->data(grid->indexOfElement(owned), Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains("written first by block (1, 0, 0) thread (3, 0, 0)"), qPrintable(tip));
        inspector.setCurrentTab(BufferInspector::Tab::Image);
        ImageView *image = inspector.imageView();
        QVERIFY(image->showsOwners());
        QVERIFY2(image->source()->valueText(owned % 512, owned / 512).contains("thread (3, 0, 0)"),
                 qPrintable(image->source()->valueText(owned % 512, owned / 512)));
        KpTest::screenshot(&inspector, QStringLiteral("inspector-colour-by-thread"));

        // Another buffer of the launch is coloured too; one it did not have cannot be.
        inspector.showBuffer(QStringLiteral("in"));
        QVERIFY(image->showsOwners());
        inspector.showBuffer(QStringLiteral("other"));
        QVERIFY(!image->showsOwners());
        QVERIFY(!byThread->isEnabled());
        inspector.showBuffer(QStringLiteral("out"));
        byValue->trigger();
        QVERIFY(!image->showsOwners());
        QVERIFY(!grid->data(grid->indexOfElement(owned), Qt::BackgroundRole).isValid());
    }

    // A buffer that fills a __constant__ variable says which, where its size is shown.
    void inspectorNamesTheDeviceVariableABufferFills()
    {
        KpTest::PanelFixture f;
        BufferInspector inspector(f.wb);
        QVERIFY(f.open(QStringLiteral(":/presets/convolution_separable/convolution_separable.kpg")));
        auto *info = inspector.findChild<QLabel *>(QStringLiteral("bufferInfo"));
        QVERIFY(info);
        inspector.showBuffer(QStringLiteral("taps"));
        QCOMPARE(info->text(), QStringLiteral("float32 [17], 68 B, fills c_Kernel"));
        QVERIFY(info->toolTip().contains("device variable c_Kernel"));
        inspector.showBuffer(QStringLiteral("src"));
        QVERIFY2(!info->text().contains("fills"), qPrintable(info->text()));
        QCOMPARE(info->toolTip(), info->text()); // the whole line, where a narrow dock wraps it
    }

    void inspectorEntryOffForABufferTheLaunchDidNotHave()
    {
        KpTest::PanelFixture f;
        AccessPanel panel(f.wb);
        BufferInspector inspector(f.wb);
        QVERIFY(f.open(QStringLiteral(":/presets/saxpy/saxpy.kpg")));
        f.wb.access().setReport(recordedReport());
        inspector.showBuffer(QStringLiteral("Y"));
        inspector.gridView()->setCurrentIndex(inspector.gridModel()->indexOfElement(3));
        QCOMPARE(inspector.currentBufferName(), QStringLiteral("Y"));
        auto *who = inspector.findChild<QAction *>(QStringLiteral("whoTouched"));
        QVERIFY(!who->isEnabled());
        QCOMPARE(who->toolTip(), QStringLiteral("Y was not a buffer of the analysed launch"));
        // Asked anyway (a request from elsewhere), the panel says so instead of guessing.
        f.wb.requestTouches(QStringLiteral("Y"), 3);
        auto *touches = panel.findChild<QTreeWidget *>(QStringLiteral("accessTouches"));
        QCOMPARE(touches->topLevelItemCount(), 1);
        QCOMPARE(touches->topLevelItem(0)->text(0), QStringLiteral("Y was not part of the analysed launch"));
    }

    // The step chooser lists every launch step with the Launch panel's
    // numbers, offers the kernel steps only, and follows the Launch panel's
    // selected step where that is a kernel step.
    void stepChooserListsTheLaunchSteps_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QStringList>("items");
        QTest::addColumn<QString>("offered"); // y or n per item
        QTest::addColumn<int>("selected");    // the Launch panel's step
        QTest::addColumn<int>("chosen");
        QTest::newRow("one kernel step, nothing to choose")
            << "transpose_naive" << QStringList{"1: transpose_naive"} << "y" << 0 << 0;
        QTest::newRow("two kernel steps, the second selected")
            << "convolution_separable" << QStringList{"1: convolutionRowsKernel", "2: convolutionColumnsKernel"} << "yy"
            << 1 << 1;
        QTest::newRow("a chunks step is listed but not offered")
            << "graph_replay" << QStringList{"1: copyIn", "2: chunks (not a kernel)"} << "yn" << 1 << 0;
    }
    void stepChooserListsTheLaunchSteps()
    {
        QFETCH(QString, preset);
        QFETCH(QStringList, items);
        QFETCH(QString, offered);
        QFETCH(int, selected);
        QFETCH(int, chosen);
        KpTest::PanelFixture f;
        AccessPanel panel(f.wb);
        QVERIFY(f.open(QStringLiteral(":/presets/%1/%1.kpg").arg(preset)));
        auto *step = panel.findChild<QComboBox *>(QStringLiteral("accessStep"));
        QCOMPARE(step->count(), items.size());
        auto *model = qobject_cast<QStandardItemModel *>(step->model());
        for (int i = 0; i < items.size(); ++i) {
            QCOMPARE(step->itemText(i), items[i]);
            QCOMPARE(model->item(i)->isEnabled(), offered[i] == QLatin1Char('y'));
        }
        QCOMPARE(step->isEnabled(), items.size() > 1);
        QCOMPARE(panel.chosenStep(), 0);
        f.wb.selection().setStep(selected);
        QCOMPARE(panel.chosenStep(), chosen);
        QCOMPARE(step->currentIndex(), chosen);
    }

    // The chosen step is the one recorded: Analyze sends it through the
    // AccessMap to runAccessMap. Without a GPU the button is off (see
    // analyzeWithoutAGpuSaysWhy); it is turned on here to press it as a user
    // with one would, and the failure names the step. With a GPU, the report
    // is the second kernel's.
    void stepChoiceReachesTheRequest()
    {
        QList<int> started;
        std::optional<AccessOutcome> outcome;
        KpTest::PanelFixture f;
        AccessPanel panel(f.wb);
        QVERIFY(f.open(QStringLiteral(":/presets/convolution_separable/convolution_separable.kpg")));
        auto *step = panel.findChild<QComboBox *>(QStringLiteral("accessStep"));
        step->setCurrentIndex(1);
        connect(&f.wb, &Workbench::accessStarted, this, [&started](int s) { started << s; });
        connect(&f.wb, &Workbench::accessFinished, this, [&outcome](const AccessOutcome &o) { outcome = o; });
        auto *analyze = panel.findChild<QPushButton *>(QStringLiteral("analyzeAccess"));
        analyze->setEnabled(true);
        analyze->click();
        QCOMPARE(started, QList<int>{1});
        QTRY_VERIFY_WITH_TIMEOUT(outcome.has_value(), 120000);
        QCOMPARE(outcome->step, 1);
        if (outcome->report) {
            QCOMPARE(outcome->report->step, 1);
            QCOMPARE(outcome->report->kernel, QStringLiteral("convolutionColumnsKernel"));
        } else {
            auto *summary = panel.findChild<QLabel *>(QStringLiteral("accessSummary"));
            QVERIFY2(summary->text().startsWith(QLatin1String("Step 2 not analysed: ")), qPrintable(summary->text()));
        }
    }

    // "Show in editor" is the access map's switch, which the editor's margin follows.
    void showInEditorIsTheMapsSwitch()
    {
        KpTest::PanelFixture f;
        AccessPanel panel(f.wb);
        auto *box = panel.findChild<QCheckBox *>(QStringLiteral("accessInEditor"));
        QVERIFY(box->isChecked());
        QVERIFY(f.wb.access().showInEditor());
        box->setChecked(false);
        QVERIFY(!f.wb.access().showInEditor());
        f.wb.access().setShowInEditor(true);
        QVERIFY(box->isChecked());
    }

    // Analyze goes through the controller, its own worker and a real compile
    // and instrumentation; without a GPU it ends in one message, and the
    // button says why it is off.
    void analyzeWithoutAGpuSaysWhy()
    {
        KpTest::PanelFixture f;
        AccessPanel panel(f.wb);
        QVERIFY(f.open(QStringLiteral(":/presets/transpose_naive/transpose_naive.kpg")));
        QSignalSpy known(&f.wb.devices(), &Devices::changed);
        f.wb.devices().refresh();
        QVERIFY(f.wb.devices().known() || known.wait(30000));
        if (f.wb.devices().canRun()) {
            QSKIP("a GPU is here: tst_gpu_access records real launches");
        }
        auto *analyze = panel.findChild<QPushButton *>(QStringLiteral("analyzeAccess"));
        QVERIFY(!analyze->isEnabled());
        QVERIFY2(!analyze->toolTip().isEmpty(), "the button says why it is off");
        QSignalSpy done(&f.wb, &Workbench::accessFinished);
        QVERIFY(f.wb.analyzeAccess(0));
        QVERIFY(!f.wb.analyzeAccess(0)); // one at a time
        QVERIFY(done.wait(120000));
        auto *summary = panel.findChild<QLabel *>(QStringLiteral("accessSummary"));
        QVERIFY2(summary->text().startsWith(QLatin1String("Step 1 not analysed: ")), qPrintable(summary->text()));
        QVERIFY2(summary->text().contains(QLatin1String("driver")), qPrintable(summary->text()));
        QVERIFY(!f.wb.access().isRunning());
    }
};

QTEST_MAIN(TestAccessPanel)
#include "tst_accesspanel.moc"
