// The main window as a new user meets it, offscreen with no GPU: it fits a
// 1280x800 screen with every panel readable, the editor's menu keys (zoom,
// find, replace, go to line, redo) do what the menus say instead of typing,
// Help lists the keys and the versions, compile-only mode is said on the
// buttons, and the command line refuses what it does not know.

#include "client/engineclient.h"
#include "editor/codeeditor.h"
#include "editor/findbar.h"
#include "guitestutil.h"
#include "panels/buffers/bufferspanel.h"
#include "panels/buffers/initeditor.h"
#include "panels/launch/launchpanel.h"
#include "panels/problems/problemspanel.h"
#include "panels/results/resultspanel.h"
#include "shell/docks.h"
#include "shell/mainwindow.h"
#include "shell/windowplacement.h"
#include "testutil.h"
#include "workbench/projectdocument.h"
#include "workbench/runhistory.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QHash>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QToolButton>
#include <QTreeWidget>
#include <QtTest>

#include <algorithm>

using namespace Kp;
using KpTest::chooseByKeys;
using KpTest::comboItems;
using KpTest::openShownCompiled;
using KpTest::typeAndEnter;
using KpTest::waitCompiled;

class TestWindow : public QObject
{
    Q_OBJECT

private:
    static QString widgetName(const QWidget *w)
    {
        return QStringLiteral("%1 '%2'").arg(QString::fromLatin1(w->metaObject()->className()), w->objectName());
    }

    /** Fails unless w is shown, not squeezed to nothing, and lies wholly inside dock. */
    static bool fullyInside(const QWidget *w, const QDockWidget *dock, QString *why)
    {
        const QRect r(w->mapTo(dock, QPoint(0, 0)), w->size());
        if (!w->isVisible() || w->width() < 16 || w->height() < 12) {
            *why = QStringLiteral("%1 in %2 is hidden or squeezed: %3x%4")
                       .arg(widgetName(w), dock->objectName())
                       .arg(w->width())
                       .arg(w->height());
            return false;
        }
        if (!dock->rect().contains(r)) {
            *why = QStringLiteral("%1 at (%2, %3, %4x%5) is cut off by %6 (%7x%8)")
                       .arg(widgetName(w))
                       .arg(r.x())
                       .arg(r.y())
                       .arg(r.width())
                       .arg(r.height())
                       .arg(dock->objectName())
                       .arg(dock->width())
                       .arg(dock->height());
            return false;
        }
        return true;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        qputenv("KPG_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
    }

    // 5. The first window fits the screen it opens on; its minimum fits 90 % of 1280x800.
    void firstWindowFitsTheScreen()
    {
        const QSize small = WindowPlacement::initialSize(QRect(0, 0, 1280, 770)); // 1280x800 less a panel
        QVERIFY(small.width() <= 1152 && small.height() <= 693);
        QCOMPARE(WindowPlacement::initialSize(QRect(0, 0, 2560, 1400)), QSize(1600, 960));
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/heat/heat.kpg"));
        const QSize min = w.minimumSizeHint();
        QVERIFY2(min.width() <= small.width() && min.height() <= small.height(),
                 qPrintable(QStringLiteral("minimum %1x%2").arg(min.width()).arg(min.height())));
        const QRect avail = w.screen()->availableGeometry();
        QVERIFY(w.width() <= qMax(avail.width() * 9 / 10, min.width()));
    }

    // 5. At 1280x800 every dock's key widgets are wholly visible in it.
    void everyPanelReadableAt1280x800_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1280x800") << QSize(1280, 800);
        QTest::newRow("first window on a 1280x800 screen") << WindowPlacement::initialSize(QRect(0, 0, 1280, 770));
    }
    void everyPanelReadableAt1280x800()
    {
        QFETCH(QSize, size);
        EngineClient engine;
        MainWindow w(&engine);
        QVERIFY(openShownCompiled(w, ":/presets/heat/heat.kpg", size));
        QTest::qWait(50); // the docks get their share after the first show
        QCOMPARE(w.size(), size);
        // The editor takes the spare room: wider than any side panel.
        QVERIFY2(w.editor()->width() >= 400, qPrintable(QString::number(w.editor()->width())));
        QVERIFY2(w.editor()->height() >= 380, qPrintable(QString::number(w.editor()->height())));
        auto *problems = w.findChild<QDockWidget *>("problemsDock");
        QVERIFY2(problems->height() <= size.height() * 30 / 100, qPrintable(QString::number(problems->height())));

        LaunchPanel *lp = w.launchPanel();
        BuffersPanel *bp = w.buffersPanel();
        using WL = QList<QWidget *>;
        const QList<QPair<QString, QList<QWidget *>>> docks = {
            {"launchDock",
             WL{lp->stepChooser(), lp->addStepButton(), lp->moveStepDownButton(), lp->kernelChooser(),
                lp->blockField(2), lp->gridField(0), lp->gridField(1), lp->resolvedLabel(), lp->repeatCount(),
                lp->swapField(), lp->argumentTable(), lp->bindingEditor(4), lp->findChild<QComboBox *>("timingMode"),
                lp->findChild<QSpinBox *>("minSamples"), lp->runButton(), lp->playButton(), lp->stepOnceButton()}},
            {"buffersDock",
             WL{bp->table(), bp->scalarTable(), bp->initEditor()->kindChooser(), bp->initEditor()->field("expr"),
                bp->findChild<QToolButton *>("addBuffer"), bp->findChild<QToolButton *>("exportBuffer"),
                bp->findChild<QToolButton *>("deleteScalar")}},
            {"problemsDock", WL{w.problems()}},
            {"kernelsDock", WL{w.kernelsTable()}},
            {"resultsDock", WL{w.docks().panel<ResultsPanel>(PanelId::Results)}},
            {"logDock", WL{w.logView()}},
            {"ptxDock", WL{w.findChild<QWidget *>("ptx")}},
            {"inspectorDock", WL{w.findChild<QWidget *>("bufferChooser"), w.findChild<QWidget *>("tabs"),
                                 w.findChild<QWidget *>("stats")}},
        };
        for (const auto &[name, widgets] : docks) {
            auto *dock = w.findChild<QDockWidget *>(name);
            QVERIFY2(dock, qPrintable(name));
            dock->raise();
            QTest::qWait(20);
            for (QWidget *widget : widgets) {
                QVERIFY2(widget, qPrintable(name));
                QString why;
                QVERIFY2(fullyInside(widget, dock, &why), qPrintable(why));
            }
        }
        // The argument table shows every parameter of heat_step without scrolling.
        QTableWidget *args = lp->argumentTable();
        QVERIFY(args->viewport()->rect().contains(args->visualItemRect(args->item(4, 0))));
    }

    // 6. Ctrl+=, Ctrl++, Ctrl+- and Ctrl+0 zoom; none types into the source, and no key press is bound twice.
    void zoomKeysZoomAndTypeNothing()
    {
        EngineClient engine;
        MainWindow w(&engine);
        QVERIFY(openShownCompiled(w, ":/presets/heat/heat.kpg"));
        CodeEditor *e = w.editor();
        const QString text = e->text();
        e->setFocus();
        e->setCursorPosition(18, 10);
        const auto zoom = [e] { return int(e->SendScintilla(QsciScintilla::SCI_GETZOOM)); };
        QTest::keyClick(e, Qt::Key_Equal, Qt::ControlModifier);
        QCOMPARE(zoom(), 1);
        QTest::keyClick(e, Qt::Key_Plus, Qt::ControlModifier);
        QCOMPARE(zoom(), 2);
        QTest::keyClick(e, Qt::Key_Minus, Qt::ControlModifier);
        QCOMPARE(zoom(), 1);
        QTest::keyClick(e, Qt::Key_0, Qt::ControlModifier);
        QCOMPARE(zoom(), 0);
        QCOMPARE(e->text(), text);
        QVERIFY(!e->isModified());
        auto *zoomIn = w.findChild<QAction *>("zoomInAction");
        QVERIFY(zoomIn);
        QVERIFY(zoomIn->shortcuts().contains(QKeySequence("Ctrl+=")));
        // One press, one sequence: X11 reads Ctrl+Shift+= as Ctrl+Shift+=, Ctrl++
        // and Ctrl+Shift++ at once, and two of them on the window's actions
        // made it ambiguous (Ctrl++ did nothing). Shift+= is + and Shift+- is _
        // on the layouts the menus assume.
        const auto press = [](QKeySequence k) {
            QKeyCombination c = k[0];
            Qt::Key key = c.key();
            Qt::KeyboardModifiers mods = c.keyboardModifiers();
            if (mods & Qt::ShiftModifier) {
                key = key == Qt::Key_Equal ? Qt::Key_Plus : key == Qt::Key_Minus ? Qt::Key_Underscore : key;
                if (key == Qt::Key_Plus || key == Qt::Key_Underscore) {
                    mods &= ~Qt::ShiftModifier;
                }
            }
            return QKeySequence(QKeyCombination(mods, key)).toString();
        };
        QHash<QString, QString> owner;
        for (QAction *a : w.findChildren<QAction *>()) {
            for (const QKeySequence &k : a->shortcuts()) {
                const QString p = press(k);
                QVERIFY2(!owner.contains(p), qPrintable(QStringLiteral("%1 (%2) and %3 take the same key press %4")
                                                            .arg(a->text(), k.toString(), owner.value(p), p)));
                owner.insert(p, QStringLiteral("%1 (%2)").arg(a->text(), k.toString()));
            }
        }
    }

    // 7. The View menu lists the panels by name, the Timeline among them (it
    // was in build order, without the Timeline); choosing it shows Results'
    // Timeline tab.
    void viewMenuInOrderWithTimeline()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/heat/heat.kpg"));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto *view = w.findChild<QMenu *>("viewMenu");
        QVERIFY(view);
        QStringList names;
        for (QAction *a : view->actions()) {
            if (a->isSeparator()) {
                break;
            }
            names << a->text().remove(QLatin1Char('&'));
        }
        QStringList sorted = names;
        std::sort(sorted.begin(), sorted.end(),
                  [](const QString &a, const QString &b) { return QString::localeAwareCompare(a, b) < 0; });
        QCOMPARE(names, sorted);
        QCOMPARE(names.size(), int(w.docks().all().size()) + 1);
        QVERIFY(names.contains("Timeline"));
        w.docks().dock(PanelId::Log)->raise();
        w.findChild<QAction *>("timelineAction")->trigger();
        auto *results = w.docks().panel<ResultsPanel>(PanelId::Results);
        QVERIFY(results);
        QCOMPARE(results->currentTab(), ResultsPanel::Tab::Timeline);
        QTRY_VERIFY(!w.docks().dock(PanelId::Results)->visibleRegion().isEmpty());
    }

    // 8. Edit > Find, Replace, Go to Line and Redo on their usual keys.
    void findReplaceGotoAndRedo()
    {
        EngineClient engine;
        MainWindow w(&engine);
        QVERIFY(openShownCompiled(w, ":/presets/heat/heat.kpg"));
        CodeEditor *e = w.editor();
        e->setFocus();
        e->setCursorPosition(0, 0);
        // At 1024 pixels, with the three side docks, the editor is narrower
        // than the whole bar once was.
        w.resize(1024, 700);
        QCoreApplication::processEvents();
        const int width = w.width();
        QTest::keyClick(e, Qt::Key_F, Qt::ControlModifier);
        FindBar *bar = w.findBar();
        QVERIFY(bar->isVisible());
        QCoreApplication::processEvents();
        QCOMPARE(w.width(), width); // the bar fits the editor's width, never widens the window
        QVERIFY(bar->findField()->hasFocus());
        QVERIFY(!bar->replaceField()->isVisible());
        QTest::keyClicks(bar->findField(), "lap");
        QTest::keyClick(bar->findField(), Qt::Key_Return);
        QCOMPARE(e->selectedText(), QString("lap"));
        int line = 0, index = 0;
        e->getCursorPosition(&line, &index);
        QCOMPARE(line, 18);                                      // const float lap = ...
        QCOMPARE(bar->statusLabel()->text(), QString("1 of 2")); // which match of how many
        QTest::keyClick(bar->findField(), Qt::Key_Return);
        e->getCursorPosition(&line, &index);
        QCOMPARE(line, 19); // ... + alpha * lap;
        QCOMPARE(bar->statusLabel()->text(), QString("2 of 2"));
        QTest::keyClick(bar->findField(), Qt::Key_Escape);
        QVERIFY(!bar->isVisible());
        QVERIFY(e->hasFocus());
        QVERIFY(!w.isRunning());

        // Replace all, undone and redone as one step with Ctrl+Z and Ctrl+Shift+Z.
        const QString before = e->text();
        QTest::keyClick(e, Qt::Key_H, Qt::ControlModifier);
        QVERIFY(bar->replaceField()->isVisible());
        bar->findField()->selectAll();
        QTest::keyClicks(bar->findField(), "lap");
        QTest::keyClicks(bar->replaceField(), "laplacian");
        auto *all = bar->findChild<QPushButton *>("replaceAll");
        QVERIFY(all && all->isVisible());
        QTest::mouseClick(all, Qt::LeftButton);
        QCOMPARE(bar->statusLabel()->text(), QString("2 replaced"));
        const QString after = e->text();
        QCOMPARE(after.count("laplacian"), 2);
        e->setFocus();
        QTest::keyClick(e, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(e->text(), before);
        QTest::keyClick(e, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(e->text(), after);

        // Go to line: a dialog asks; line 8 is the kernel's first line.
        QTimer::singleShot(0, this, [] {
            auto *dialog = qobject_cast<QInputDialog *>(QApplication::activeModalWidget());
            if (dialog) {
                dialog->setIntValue(8);
                dialog->accept();
            }
        });
        QTest::keyClick(e, Qt::Key_G, Qt::ControlModifier);
        e->getCursorPosition(&line, &index);
        QCOMPARE(line, 7);
        QCOMPARE(e->text(), after); // no "g" typed
    }

    // 8. Help lists the keys; About says the versions; the controls explain themselves.
    void helpShortcutsAboutAndTooltips()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        const auto list = w.shortcutList();
        const auto keysOf = [&](const QString &action) {
            for (const auto &[name, keys] : list) {
                if (name == action) {
                    return keys;
                }
            }
            return QString();
        };
        QCOMPARE(keysOf("Find"), QString("Ctrl+F"));
        QCOMPARE(keysOf("Replace"), QString("Ctrl+H"));
        QCOMPARE(keysOf("Go to Line"), QString("Ctrl+G"));
        QCOMPARE(keysOf("Redo"), QString("Ctrl+Shift+Z, Ctrl+Y"));
        QVERIFY(keysOf("Zoom In").startsWith("Ctrl+="));
        QCOMPARE(keysOf("Reset Zoom"), QString("Ctrl+0"));
        QVERIFY(keysOf("Run").startsWith("Ctrl+Return"));
        const QString about = w.aboutText();
        QVERIFY2(about.contains(QString::fromLatin1(qVersion())), qPrintable(about));
        QVERIFY2(about.contains("NVRTC</td><td>1"), qPrintable(about)); // a version number, not "not found"
        QVERIFY(about.contains("CUDA driver"));
        // Help > Documentation: the copy beside the program (the build tree mirrors the installed layout).
        QCOMPARE(QFileInfo(MainWindow::documentationPath()).fileName(), QString("README.md"));
        // A build folder outside the source tree still finds the source tree's
        // copy, and when nothing is found the message says where it looked.
        const QStringList looked = MainWindow::documentationCandidates();
        QVERIFY2(looked.contains(QDir::cleanPath(KPG_SOURCE_DIR "/README.md")), qPrintable(looked.join('\n')));
        QVERIFY(looked.first().endsWith("share/doc/kernel-playground/README.md"));
        for (const QString &path : looked) {
            QVERIFY2(MainWindow::documentationMissingText().contains(path), qPrintable(path));
        }
        QStringList menus;
        for (QAction *a : w.menuBar()->actions()) {
            menus << a->text();
        }
        QCOMPARE(menus, (QStringList{"&File", "&Edit", "&Build", "&View", "&Settings", "&Help"}));
        LaunchPanel *lp = w.launchPanel();
        for (QWidget *widget :
             QList<QWidget *>{lp->runButton(), lp->findChild<QComboBox *>("timingMode"),
                              lp->findChild<QSpinBox *>("minSamples"), lp->blockField(0), lp->gridField(0),
                              lp->findChild<QLabel *>("occupancy"), lp->playButton(), lp->stepOnceButton()}) {
            QVERIFY2(widget->toolTip().size() > 20, qPrintable(widget->objectName()));
        }
    }

    // 7. Compile-only mode: Run, Play and Step say why they cannot run; a failed
    // run's row keeps its grid and block; Play returns from Pause.
    void compileOnlyModeIsSaidOnTheButtons()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        QVERIFY(waitCompiled(w));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        LaunchPanel *lp = w.launchPanel();
        QVERIFY(lp->runButton()->isEnabled());
        // Play before the GPU is known: the frame fails and the button is Play again.
        QTest::mouseClick(lp->playButton(), Qt::LeftButton);
        QVERIFY(lp->playButton()->isChecked());
        QCOMPARE(lp->playButton()->text(), QString("Pause"));
        QSignalSpy done(&w, &MainWindow::runFinished);
        QVERIFY(done.wait(30000));
        QTRY_VERIFY(!lp->playButton()->isChecked());
        QCOMPARE(lp->playButton()->text(), QString("Play"));
        // A failed Run's history row: the launch it was, and the status in words.
        w.runNow();
        QVERIFY(done.wait(30000));
        auto *results = w.docks().panel<ResultsPanel>(PanelId::Results);
        QTRY_COMPARE(results->model()->rowCount(), 2);
        const RunRecord &rec = results->model()->record(1);
        QVERIFY(rec.failed());
        QCOMPARE(rec.grid, (Dim3{4096, 1, 1}));
        QCOMPARE(rec.block, (Dim3{256, 1, 1}));
        auto *status = w.findChild<QLabel *>("compileStatus");
        QVERIFY2(status->text().startsWith("Run failed: No NVIDIA driver found"), qPrintable(status->text()));
        // Once the device status is known, the buttons say why they are off.
        QSignalSpy device(&w, &MainWindow::deviceStatusChanged);
        w.refreshDeviceStatus();
        QVERIFY(device.wait(30000));
        for (QPushButton *b : {lp->runButton(), lp->playButton(), lp->stepOnceButton()}) {
            QVERIFY2(!b->isEnabled(), qPrintable(b->objectName()));
            QVERIFY2(b->toolTip().contains("Running needs an NVIDIA driver"), qPrintable(b->toolTip()));
        }
        QVERIFY(!w.findChild<QAction *>("runAction")->isEnabled());
    }

    // 15. Polish: the View menu's titles, heat's alpha, the title of a preset, New's question.
    void polish()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/heat/heat.kpg"));
        QVERIFY(waitCompiled(w));
        QVERIFY(w.windowTitle().startsWith("heat.kpg (preset)"));
        auto *launchDock = w.findChild<QDockWidget *>("launchDock");
        QCOMPARE(launchDock->toggleViewAction()->text(),
                 QString("Launch")); // one word: no "&" for a tab bar to take as a mnemonic
        QTableWidget *scalars = w.buffersPanel()->scalarTable();
        QCOMPARE(scalars->item(2, 0)->text(), QString("alpha"));
        QCOMPARE(scalars->item(2, 2)->text(), QString("0.24"));
        QCOMPARE(w.buffersPanel()->table()->item(1, 3)->text(), QString("zeros"));
        QCOMPARE(w.document()->suggestedBaseName(), QString("heat"));
        // New with unsaved changes asks Save, Discard or Cancel, as Quit does; Cancel keeps everything.
        w.launchPanel()->blockField(0)->setText("16");
        Q_EMIT w.launchPanel()->blockField(0)->editingFinished();
        QTRY_VERIFY(w.isProjectModified());
        QMessageBox::StandardButtons offered;
        QTimer::singleShot(0, this, [&offered] {
            if (auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget())) {
                offered = box->standardButtons();
                box->button(QMessageBox::Cancel)->click();
            }
        });
        QAction *newAction = nullptr;
        for (QAction *a : w.menuBar()->actions().first()->menu()->actions()) {
            if (a->text() == "&New Project") {
                newAction = a;
            }
        }
        QVERIFY(newAction);
        newAction->trigger();
        QCOMPARE(offered, QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
        QCOMPARE(w.project().launches[0].block.first(), QString("16"));
    }

    // 15. Problems are listed by line, not in the compiler's order; a header click sorts.
    void problemsSortedByLine()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openSource(":/presets/vector_add/vector_add.cu"));
        QVERIFY(waitCompiled(w));
        const auto diag = [](int line, Diagnostic::Severity s, const QString &text) {
            Diagnostic d;
            d.file = "vector_add.cu";
            d.line = line;
            d.column = 1;
            d.severity = s;
            d.message = text;
            return d;
        };
        auto *problems = qobject_cast<ProblemsPanel *>(w.problems());
        QVERIFY(problems);
        problems->setDiagnostics({diag(12, Diagnostic::Severity::Error, "twelve"),
                                  diag(3, Diagnostic::Severity::Warning, "three"),
                                  diag(9, Diagnostic::Severity::Error, "nine")},
                                 "vector_add.cu");
        QStringList order;
        for (int i = 0; i < problems->topLevelItemCount(); ++i) {
            order << problems->topLevelItem(i)->text(3);
        }
        QCOMPARE(order, (QStringList{"three", "nine", "twelve"}));
        problems->sortByColumn(0, Qt::AscendingOrder); // by severity: errors first
        QCOMPARE(problems->topLevelItem(2)->text(3), QString("three"));
    }

    /** Every folder of presets/, in the order the program lists them. */
    static QStringList presetNames()
    {
        return QDir(QStringLiteral(KPG_SOURCE_DIR "/presets")).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
    }

    // 14. The command line refuses what it does not know, and lists what it does.
    void commandLineValidation_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("theme") << QStringList{"--theme", "purple"}
                               << "--theme: unknown theme 'purple'; allowed: system, light, dark";
        QTest::newRow("show") << QStringList{"--show", "nosuch"}
                              << "--show: no panel 'nosuch'; panels: problems, kernels, ptx, sass, launch, buffers, "
                                 "inspector, results, log";
        QTest::newRow("preset") << QStringList{"--preset", "nosuch"}
                                << "--preset: no preset 'nosuch'; presets: " + presetNames().join(", ");
        QTest::newRow("inspect") << QStringList{"--preset", "vector_add", "--inspect", "zzz"}
                                 << "--inspect: no buffer 'zzz' in vector_add.kpg; buffers: a, b, c";
        QTest::newRow("inspect view") << QStringList{"--inspect", "a:spectrum"}
                                      << "--inspect: unknown view 'spectrum'; views: grid, image, diff";
        QTest::newRow("hover") << QStringList{"--hover", "3"} << "--hover: expected X,Y";
    }
    void commandLineValidation()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const KpTest::Run r = KpTest::run("kernel-playground", args, {"QT_QPA_PLATFORM=offscreen"}, 60000);
        QCOMPARE(r.exitCode, 64);
        QVERIFY2(r.err.contains("kernel-playground: " + message), qPrintable(r.err));
    }

    void commandLineHelpNamesProjects()
    {
        const KpTest::Run r = KpTest::run("kernel-playground", {"--help"}, {"QT_QPA_PLATFORM=offscreen"}, 60000);
        QCOMPARE(r.exitCode, 0);
        // The help wraps its lines: compare the words.
        const QString help = r.out.simplified();
        QVERIFY2(help.contains("A project (.kpg) or a CUDA kernel source (.cu, .cuh) to open."), qPrintable(help));
        QVERIFY(help.contains("Bring a panel to the front: problems, kernels, ptx, sass, launch, buffers"));
        QVERIFY2(help.contains("Open a preset: " + presetNames().join(", ")), qPrintable(help));
    }
};

QTEST_MAIN(TestWindow)
#include "tst_window.moc"
