// On a machine with an NVIDIA GPU: Analyze Memory Access in the window as a
// user does it (the panel's Analyze button), then the editor's heat margin
// on the transposes (the naive one's column store red, the shared one's tile
// column red, the padded one all green), and the Inspector's "Who touched
// this cell?" on transpose_naive's output against the kernel's index
// arithmetic. With KPG_TEST_SCREENSHOTS=DIR the window is saved after each.

#include "client/engineclient.h"
#include "editor/accessheat.h"
#include "editor/codeeditor.h"
#include "gpurun.h"
#include "panels/access/accesspanel.h"
#include "panels/inspector/buffergridmodel.h"
#include "panels/inspector/bufferinspector.h"
#include "panels/inspector/imageview.h"
#include "screenshot.h"
#include "shell/docks.h"
#include "shell/mainwindow.h"
#include "testutil.h"
#include "workbench/accessmap.h"
#include "workbench/devices.h"
#include "workbench/workbench.h"

#include <QAction>
#include <QDir>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTreeWidget>
#include <QtTest>

#include <optional>

using namespace Kp;
using KpTest::screenshot;

class TestGpuAccessGui : public QObject
{
    Q_OBJECT

    /** Opens preset in w and records its first step through the panel's Analyze; fails the test when it does not. */
    static void analyze(MainWindow &w, const QString &preset, std::shared_ptr<const AccessReport> &report)
    {
        QSignalSpy compiled(&w, &MainWindow::compileFinished);
        KP_VERIFY_RESULT(w.openProject(QStringLiteral(":/presets/%1/%1.kpg").arg(preset)));
        QVERIFY2(compiled.wait(30000), "the preset did not compile within 30 s");
        Devices &devices = w.workbench().devices();
        w.refreshDeviceStatus(); // as the program's start does
        QTRY_VERIFY_WITH_TIMEOUT(devices.known(), 30000);
        QVERIFY2(devices.canRun(), qPrintable(devices.whyNoRun()));
        // Built now if the window has not built it yet (its panels follow the first paint).
        auto *panel = w.docks().panel<AccessPanel>(PanelId::MemoryAccess);
        QVERIFY(panel);
        auto *button = panel->findChild<QPushButton *>(QStringLiteral("analyzeAccess"));
        QTRY_VERIFY_WITH_TIMEOUT(button->isEnabled(), 30000);
        std::optional<AccessOutcome> outcome;
        QMetaObject::Connection c =
            connect(&w.workbench(), &Workbench::accessFinished, [&outcome](const AccessOutcome &o) { outcome = o; });
        button->click();
        QTRY_VERIFY_WITH_TIMEOUT(outcome.has_value(), 180000);
        disconnect(c);
        QVERIFY2(outcome->report, qPrintable(outcome->error.message));
        report = outcome->report;
    }

    /**
     * Records transpose_naive's launch in w (at 1280x800) and shows its out
     * in the Inspector, which it returns; nullptr, with the test failed,
     * when any of that does not happen.
     */
    static BufferInspector *inspectTransposeOutput(MainWindow &w)
    {
        w.resize(1280, 800);
        w.show();
        std::shared_ptr<const AccessReport> report;
        analyze(w, QStringLiteral("transpose_naive"), report);
        if (QTest::currentTestFailed()) {
            return nullptr;
        }
        auto *inspector = w.findChild<BufferInspector *>(QStringLiteral("inspector"));
        if (!inspector) {
            QTest::qFail("the window has no inspector", __FILE__, __LINE__);
            return nullptr;
        }
        inspector->showBuffer(QStringLiteral("out"));
        return inspector;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        if (const std::optional<QString> why = KpTest::noGpu()) {
            QSKIP(qPrintable(*why));
        }
    }

    void heatOfTheTransposes_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QList<int>>("lines");
        QTest::addColumn<QStringList>("heats");
        QTest::newRow("naive: the column store is red")
            << "transpose_naive" << QList<int>{14} << QStringList{"over 4x the ideal"};
        QTest::newRow("shared: coalesced both ways, the tile's column read is red")
            << "transpose_shared" << QList<int>{23, 33} << QStringList{"ideal", "over 4x the ideal"};
        QTest::newRow("padded: all at the ideal")
            << "transpose_padded" << QList<int>{19, 28} << QStringList{"ideal", "ideal"};
    }
    void heatOfTheTransposes()
    {
        QFETCH(QString, preset);
        QFETCH(QList<int>, lines);
        QFETCH(QStringList, heats);
        EngineClient engine;
        MainWindow w(&engine);
        w.resize(1280, 800);
        w.show();
        std::shared_ptr<const AccessReport> report;
        analyze(w, preset, report);
        if (QTest::currentTestFailed()) {
            return;
        }
        auto *editor = w.findChild<CodeEditor *>(QStringLiteral("editor"));
        auto *margin = editor->findChild<AccessHeatMargin *>();
        QVERIFY(margin);
        QVERIFY(!margin->isStale());
        for (int i = 0; i < lines.size(); ++i) {
            const std::optional<AccessHeat> h = margin->heatAt(lines[i]);
            QVERIFY2(h, qPrintable(QStringLiteral("line %1 has no marker").arg(lines[i])));
            QVERIFY2(accessHeatName(*h) == heats[i], qPrintable(margin->toolTipAt(lines[i])));
        }
        editor->ensureLineVisible(lines.last() - 1);
        screenshot(&w, QStringLiteral("access-%1").arg(preset));
        // An edit greys them.
        editor->insertAt(QStringLiteral("\n"), 0, 0);
        QVERIFY(margin->isStale());
        QCOMPARE(margin->staleLines().size(), report->summary.lines.size());
    }

    // Colour by the warp that wrote, from a real launch of the naive
    // transpose: thread (x, y) writes out[600 x + y], and each row of a
    // 32x8 block is one warp, so neighbours along x (a whole row of out
    // apart) share a colour and neighbours along y do not; the hover names
    // the writer. Drawn over the image view as well.
    void colourByTheWarpThatWroteTheTranspose()
    {
        EngineClient engine;
        MainWindow w(&engine);
        BufferInspector *inspector = inspectTransposeOutput(w);
        if (!inspector) {
            return; // the test has failed, saying why
        }
        auto *byWarp = inspector->findChild<QAction *>(QStringLiteral("colourByWarp"));
        QVERIFY(byWarp);
        QTRY_VERIFY2(byWarp->isEnabled(), qPrintable(byWarp->toolTip()));
        byWarp->trigger();
        BufferGridModel *grid = inspector->gridModel();
        const auto colour = [grid](qint64 e) {
            return grid->data(grid->indexOfElement(e), Qt::BackgroundRole).value<QColor>();
        };
        const qint64 x = 37, y = 413; // block (1, 51), thread (5, 5): warp 5 of its block
        const qint64 e = x * 600 + y;
        QTRY_VERIFY(grid->data(grid->indexOfElement(e), Qt::BackgroundRole).isValid());
        QCOMPARE(colour(e + 600), colour(e)); // x + 1: the same warp
        QVERIFY(colour(e + 1) != colour(e));  // y + 1: the next warp of the block
        const QString tip = grid->data(grid->indexOfElement(e), Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains("block (1, 51, 0) thread (5, 5, 0)"), qPrintable(tip));
        inspector->setCurrentTab(BufferInspector::Tab::Image);
        QVERIFY(inspector->imageView()->showsOwners());
        screenshot(&w, QStringLiteral("access-colour-by-warp"));
    }

    // transpose_naive: thread (x, y) writes out[x * 600 + y]; x = 32 bx + tx, y = 8 by + ty.
    void whoWroteACellOfTheTranspose_data()
    {
        QTest::addColumn<qint64>("element");
        QTest::newRow("out[0]") << qint64(0);
        QTest::newRow("out[601]") << qint64(601);
        QTest::newRow("out[123457]") << qint64(123457);
        QTest::newRow("the last cell") << qint64(1000 * 600 - 1);
    }
    void whoWroteACellOfTheTranspose()
    {
        QFETCH(qint64, element);
        EngineClient engine;
        MainWindow w(&engine);
        BufferInspector *inspector = inspectTransposeOutput(w);
        if (!inspector) {
            return; // the test has failed, saying why
        }
        inspector->gridView()->setCurrentIndex(inspector->gridModel()->indexOfElement(element));
        auto *who = inspector->findChild<QAction *>(QStringLiteral("whoTouched"));
        QVERIFY2(who->isEnabled(), qPrintable(who->toolTip()));
        who->trigger();
        auto *touches = w.findChild<AccessPanel *>(QStringLiteral("access"))
                            ->findChild<QTreeWidget *>(QStringLiteral("accessTouches"));
        QCOMPARE(touches->topLevelItemCount(), 1); // written once, by one thread
        const qint64 x = element / 600, y = element % 600;
        const QTreeWidgetItem *t = touches->topLevelItem(0);
        QCOMPARE(t->text(0), QStringLiteral("written"));
        QCOMPARE(t->text(1), QStringLiteral("(%1, %2, 0)").arg(x / 32).arg(y / 8));
        QCOMPARE(t->text(2), QStringLiteral("(%1, %2, 0)").arg(x % 32).arg(y % 8));
        QCOMPARE(t->text(3), QStringLiteral("14"));
        screenshot(&w, QStringLiteral("access-who-wrote-out-%1").arg(element));
    }
};

QTEST_MAIN(TestGpuAccessGui)
#include "tst_gpu_accessgui.moc"
