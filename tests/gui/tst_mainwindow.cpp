// The main window, offscreen: the editor, the CUDA lexer, the status line,
// and --screenshot as a user would run it.

#include "client/engineclient.h"
#include "cuda/deviceinfo.h"
#include "cuda/nvrtcapi.h"
#include "editor/codeeditor.h"
#include "editor/cudalexer.h"
#include "editor/ptxview.h"
#include "recordedaccess.h"
#include "screenshot.h"
#include "shell/docks.h"
#include "shell/mainwindow.h"
#include "shell/windowplacement.h"
#include "testutil.h"
#include "workbench/accessmap.h"
#include "workbench/compilecontroller.h"
#include "workbench/devices.h"
#include "workbench/projectdocument.h"
#include "workbench/workbench.h"

#include <QAbstractButton>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QGuiApplication>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QScreen>
#include <QSettings>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextEdit>
#include <QTimer>
#include <QTreeWidget>
#include <Qsci/qsciscintilla.h>
#include <QtTest>

using namespace Kp;

class TestMainWindow : public QObject
{
    Q_OBJECT

private:
    static QString presetSource()
    {
        QFile f(KPG_SOURCE_DIR "/presets/vector_add/vector_add.cu");
        return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
    }

    /** What a panel shows, widget by widget: texts, items, cells and enabled states, in the tree's order. */
    static QStringList shownBy(QWidget *panel)
    {
        QStringList out;
        QList<QWidget *> widgets{panel};
        widgets += panel->findChildren<QWidget *>();
        for (QWidget *w : widgets) {
            QString line = QString::fromLatin1(w->metaObject()->className()) + QLatin1Char(' ') + w->objectName() +
                           (w->isEnabled() ? QString() : QStringLiteral(" (disabled)"));
            if (auto *label = qobject_cast<QLabel *>(w)) {
                line += QStringLiteral(": ") + label->text();
            } else if (auto *button = qobject_cast<QAbstractButton *>(w)) {
                line +=
                    QStringLiteral(": ") + button->text() + (button->isChecked() ? QStringLiteral(" [x]") : QString());
            } else if (auto *edit = qobject_cast<QLineEdit *>(w)) {
                line += QStringLiteral(": ") + edit->text();
            } else if (auto *combo = qobject_cast<QComboBox *>(w)) {
                line += QStringLiteral(": ") + combo->currentText() + QStringLiteral(" of ") +
                        QString::number(combo->count());
            } else if (auto *text = qobject_cast<QPlainTextEdit *>(w)) {
                // The Log's lines without their times: the two windows logged a second apart at times.
                static const QRegularExpression stamp(QStringLiteral(R"(^\[\d\d:\d\d:\d\d\] )"),
                                                      QRegularExpression::MultilineOption);
                line += QStringLiteral(": ") + text->toPlainText().remove(stamp);
            } else if (auto *rich = qobject_cast<QTextEdit *>(w)) {
                line += QStringLiteral(": ") + rich->toPlainText();
            } else if (auto *sci = qobject_cast<QsciScintilla *>(w)) {
                line += QStringLiteral(": ") + sci->text();
            } else if (auto *view = qobject_cast<QAbstractItemView *>(w); view && view->model()) {
                const QAbstractItemModel *m = view->model();
                line += QStringLiteral(": %1 x %2").arg(m->rowCount()).arg(m->columnCount());
                for (int r = 0; r < qMin(m->rowCount(), 50); ++r) {
                    for (int c = 0; c < m->columnCount(); ++c) {
                        line += QLatin1Char('|') + m->index(r, c).data().toString();
                    }
                }
            }
            out << line;
        }
        return out;
    }

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void opensWithPreset()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openSource(":/presets/vector_add/vector_add.cu"));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(!presetSource().isEmpty());
        QCOMPARE(w.editor()->text(), presetSource());
        QVERIFY(w.windowTitle().startsWith("vector_add.cu"));
        QVERIFY(!w.editor()->isModified());
    }

    // A GPU found while a project opens recompiles for its arch ("auto" means
    // the device's); whenever it lands (before the open, right after it, or
    // while the first compile runs) the project's own compile must land, once
    // settled, or the window waits for ever (seen on a GPU: a Launch panel
    // saying "does not compile (0 errors)" and --run never starting).
    void compileLandsWhenTheDeviceIsFound_data()
    {
        QTest::addColumn<int>("when");
        QTest::newRow("before the open") << 0;
        QTest::newRow("right after the open") << 1;
        QTest::newRow("after the next turn of the event loop") << 2;
        QTest::newRow("50 ms after the open") << 3;
        QTest::newRow("twice") << 4;
    }
    void compileLandsWhenTheDeviceIsFound()
    {
        QFETCH(int, when);
        EngineClient engine;
        MainWindow w(&engine);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        CompileController &compile = w.workbench().compile();
        if (when == 0) {
            compile.setDevice(8, 6);
        }
        KP_VERIFY_RESULT(w.openProject(QStringLiteral(":/presets/vector_add/vector_add.kpg")));
        if (when == 1 || when == 4) {
            compile.setDevice(8, 6);
        }
        if (when == 2) {
            QTimer::singleShot(0, &w, [&compile] { compile.setDevice(8, 6); });
        }
        bool lateDeviceFound = when < 3; // the 50 ms one has not come yet
        if (when == 3 || when == 4) {
            QTimer::singleShot(50, &w, [&compile, &lateDeviceFound] {
                compile.setDevice(9, 0);
                lateDeviceFound = true;
            });
        }
        // Settled after the last device found: a warm cache answers the first compile within 50 ms.
        QTRY_VERIFY_WITH_TIMEOUT(lateDeviceFound && !compile.isPending() && w.lastCompile().ok &&
                                     !w.lastCompile().kernels.isEmpty() &&
                                     w.lastCompile().kernels.first().name == QLatin1String("vectorAdd"),
                                 30000);
        // The project's text is in the editor and the document, not the
        // start page's empty one (it once replaced the project's source).
        QCOMPARE(w.editor()->text(), presetSource());
        QCOMPARE(w.workbench().document().project().sourceText, presetSource());
        QTRY_VERIFY_WITH_TIMEOUT(w.workbench().document().compiled().ok, 5000);
        QVERIFY(!w.workbench().document().validation().error);
        QCOMPARE(w.lastCompile().arch, when >= 3 ? QString("sm_90") : QString("sm_86"));
    }

    // A window size saved on a larger screen opens inside this one, its
    // status bar and right docks on screen.
    void restoredSizeFromALargerScreenFitsThisOne()
    {
        const QRect avail = QGuiApplication::primaryScreen()->availableGeometry();
        {
            EngineClient engine;
            MainWindow big(&engine);
            big.setGeometry(avail.x() + 40, avail.y() + 40, avail.width() * 2, avail.height() * 2);
            QSettings().setValue(QStringLiteral("window/geometry"), big.saveGeometry());
        }
        EngineClient engine;
        MainWindow w(&engine);
        QSettings().remove(QStringLiteral("window/geometry"));
        // Within the screen, or as small as the docks allow on a screen narrower than that.
        const QSize most = avail.size().expandedTo(w.minimumSizeHint());
        QVERIFY2(avail.contains(w.geometry().topLeft()) && w.width() <= most.width() && w.height() <= most.height() &&
                     (w.width() > avail.width() || w.geometry().right() <= avail.right()) &&
                     (w.height() > avail.height() || w.geometry().bottom() <= avail.bottom()),
                 qPrintable(QStringLiteral("%1,%2 %3x%4 outside %5x%6")
                                .arg(w.x())
                                .arg(w.y())
                                .arg(w.width())
                                .arg(w.height())
                                .arg(avail.width())
                                .arg(avail.height())));
    }

    // The first window on a screen only a little wider than the docks need:
    // centred at 90 % and then raised to its minimum, it ran off the right
    // edge of a 1024 x 700 screen; it is placed at its final size now.
    void firstWindowStaysInsideTheScreen_data()
    {
        QTest::addColumn<QRect>("available");
        QTest::addColumn<QSize>("minimum");
        QTest::addColumn<QRect>("expected");
        QTest::newRow("1024 x 700, minimum 1008 wide")
            << QRect(0, 0, 1024, 700) << QSize(1008, 600) << QRect(8, 35, 1008, 630);
        QTest::newRow("1280 x 800, room to spare")
            << QRect(0, 0, 1280, 800) << QSize(1008, 600) << QRect(64, 40, 1152, 720);
        QTest::newRow("a second screen at x 1920, a panel on top")
            << QRect(1920, 32, 1024, 736) << QSize(1008, 700) << QRect(1928, 50, 1008, 700);
        QTest::newRow("narrower than the docks: the top-left corner on screen")
            << QRect(0, 0, 800, 600) << QSize(1008, 640) << QRect(0, 0, 1008, 640);
    }
    void firstWindowStaysInsideTheScreen()
    {
        QFETCH(QRect, available);
        QFETCH(QSize, minimum);
        QFETCH(QRect, expected);
        QCOMPARE(WindowPlacement::initialGeometry(available, minimum), expected);
    }

    void highlightsCuda_data()
    {
        QTest::addColumn<QString>("word");
        QTest::addColumn<int>("style");
        QTest::newRow("execution space") << "__global__" << int(QsciLexerCPP::Keyword);
        QTest::newRow("restrict") << "__restrict__" << int(QsciLexerCPP::Keyword);
        QTest::newRow("c++ keyword") << "const" << int(QsciLexerCPP::Keyword);
        QTest::newRow("built-in variable") << "threadIdx" << int(QsciLexerCPP::KeywordSet2);
        QTest::newRow("blockDim") << "blockDim" << int(QsciLexerCPP::KeywordSet2);
        QTest::newRow("comment") << "Vector add" << int(QsciLexerCPP::CommentLine);
        QTest::newRow("plain identifier") << "vectorAdd(" << int(QsciLexerCPP::Identifier);
    }
    void highlightsCuda()
    {
        QFETCH(QString, word);
        QFETCH(int, style);
        // The editor alone: no window, no engine, no worker process.
        CodeEditor editor;
        editor.setText(presetSource());
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        QCOMPARE(QString(editor.lexer()->language()), QString("CUDA"));
        QVERIFY(qobject_cast<CudaLexer *>(editor.lexer()));
        // Styling is lazy; make Scintilla style the whole document.
        editor.SendScintilla(QsciScintilla::SCI_COLOURISE, 0, -1);
        const int pos = editor.text().toUtf8().indexOf(word.toUtf8());
        QVERIFY(pos >= 0);
        QCOMPARE(editor.styleAt(pos), style);
    }

    void editorFontIsMonospaced()
    {
        CodeEditor editor;
        const QFontMetrics fm(editor.lexer()->font(QsciLexerCPP::Identifier));
        QCOMPARE(fm.horizontalAdvance("iiii"), fm.horizontalAdvance("MMMM"));
    }

    void statusWithoutDriver()
    {
        qputenv("KPG_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
        EngineClient engine;
        MainWindow w(&engine);
        w.show();
        w.refreshDeviceStatus();
        QTRY_VERIFY_WITH_TIMEOUT(w.deviceStatusKnown(), 15000);
        qunsetenv("KPG_CUDA_DRIVER");
        auto *label = w.findChild<QLabel *>("deviceStatus");
        QVERIFY(label);
        QCOMPARE(label->text(), QString("No NVIDIA driver found: compile-only mode"));
        QVERIFY(label->toolTip().contains("/nonexistent/libcuda.so.1"));
    }

    void statusSaysWhatMachineHas()
    {
        EngineClient engine;
        const Result<DeviceList> truth = engine.listDevicesSync();
        MainWindow w(&engine);
        w.show();
        w.refreshDeviceStatus();
        QTRY_VERIFY_WITH_TIMEOUT(w.deviceStatusKnown(), 15000);
        if (truth) {
            const DeviceInfo &d = truth->devices.first();
            QVERIFY2(w.deviceStatusText().startsWith(d.name), qPrintable(w.deviceStatusText()));
            QVERIFY(w.deviceStatusText().contains(QString("compute %1.%2").arg(d.ccMajor).arg(d.ccMinor)));
        } else if (truth.error().code == Error::Code::NoDriver) {
            QCOMPARE(w.deviceStatusText(), QString("No NVIDIA driver found: compile-only mode"));
        } else {
            QCOMPARE(w.deviceStatusText(), QString("No CUDA device found: compile-only mode"));
        }
        // NVRTC is opened off the GUI thread; the label says what it found once it has.
        auto *nvrtc = w.findChild<QLabel *>("nvrtcStatus");
        QVERIFY(nvrtc);
        const Result<const NvrtcApi *> api = NvrtcApi::instance();
        QTRY_COMPARE(nvrtc->text(), api ? QString("NVRTC %1").arg((*api)->versionString()) : QString("No NVRTC here"));
        QCOMPARE(nvrtc->toolTip().isEmpty(), false);
    }

    void openMissingFileKeepsText()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openSource(":/presets/vector_add/vector_add.cu"));
        w.editor()->append("\n// my edit\n");
        const QString before = w.editor()->text();
        const Status s = w.openSource("/nonexistent/kernel.cu");
        QVERIFY(!s.ok());
        QVERIFY2(s.error().message.contains("/nonexistent/kernel.cu"), qPrintable(s.error().message));
        QCOMPARE(w.editor()->text(), before);
    }

    void compilerCrashCostsOneMessage()
    {
        // NVRTC 13.0 corrupts its heap and aborts on a 256 KiB kernel name. It
        // runs in the compile process, so the window keeps its text and goes on.
        EngineClient engine;
        MainWindow w(&engine);
        QSignalSpy compiled(&w, &MainWindow::compileFinished);
        KP_VERIFY_RESULT(w.openSource(":/presets/vector_add/vector_add.cu"));
        w.show();
        QVERIFY(compiled.wait(30000));
        QVERIFY(w.lastCompile().ok);
        const QString hostile = "__global__ void " + QString(256 * 1024, QLatin1Char('k')) + "(int *a) { a[0] = 1; }\n";
        w.editor()->setText(hostile);
        QVERIFY(compiled.wait(60000));
        QVERIFY(!w.lastCompile().ok);
        QVERIFY(w.lastCompile().errorCount() > 0);
        QVERIFY2(w.lastCompile().diagnostics.first().message.contains("the compiler crashed on this source"),
                 qPrintable(w.lastCompile().diagnostics.first().message));
        QCOMPARE(w.editor()->text(), hostile);
        QVERIFY(w.isVisible());
        // The next compile gets a fresh compiler process and works.
        w.editor()->setText(presetSource());
        QVERIFY(compiled.wait(30000));
        QVERIFY2(w.lastCompile().ok, qPrintable(w.lastCompile().log));
    }

    void errorWithoutALineIsShown()
    {
        // An unclosed brace: NVRTC says "At end of source" with no line. The
        // error goes under the last line and into Problems; never "0 errors".
        QTemporaryDir dir;
        const QString path = dir.filePath("unclosed.cu");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("__global__ void k(int *a)\n{\n    if (a) {\n        a[0] = 1;\n}\n");
        f.close();
        EngineClient engine;
        MainWindow w(&engine);
        QSignalSpy compiled(&w, &MainWindow::compileFinished);
        KP_VERIFY_RESULT(w.openSource(path));
        QVERIFY(compiled.wait(30000));
        QVERIFY(!w.lastCompile().ok);
        QVERIFY(w.lastCompile().errorCount() > 0);
        const int last = w.editor()->lines() - 1;
        QVERIFY(w.editor()->markedLines(Diagnostic::Severity::Error).contains(last));
        QVERIFY2(w.editor()->annotationAt(last).contains("At end of source"),
                 qPrintable(w.editor()->annotationAt(last)));
        bool listed = false;
        for (int i = 0; i < w.problems()->topLevelItemCount(); ++i) {
            listed = listed || w.problems()->topLevelItem(i)->text(3).contains("At end of source");
        }
        QVERIFY(listed);
    }

    void compileAnnotatesErrors()
    {
        EngineClient engine;
        MainWindow w(&engine);
        QSignalSpy compiled(&w, &MainWindow::compileFinished);
        KP_VERIFY_RESULT(w.openSource(":/presets/vector_add/vector_add.cu"));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(compiled.count() == 1 || compiled.wait(30000));
        QVERIFY2(w.lastCompile().ok, qPrintable(w.lastCompile().log));
        QVERIFY(w.editor()->markedLines(Diagnostic::Severity::Error).isEmpty());
        QCOMPARE(w.kernelsTable()->rowCount(), 1);
        QCOMPARE(w.kernelsTable()->item(0, 0)->text(), QString("vectorAdd"));
        QVERIFY(w.kernelsTable()->item(0, 1)->text().toInt() > 0); // registers from ptxas
        QVERIFY(!w.ptxView()->lineMap().isEmpty());

        // The user types a mistake on line 14 (0-based 13): "c[i] = a[i] + b[i];" -> "+ bogus;"
        const int line = 13;
        QVERIFY(w.editor()->text(line).contains("c[i] = a[i] + b[i];"));
        w.editor()->setSelection(line, 0, line, w.editor()->text(line).size() - 1);
        w.editor()->replaceSelectedText("        c[i] = a[i] + bogus;");
        QVERIFY(compiled.wait(30000));
        QVERIFY(!w.lastCompile().ok);
        QCOMPARE(w.editor()->markedLines(Diagnostic::Severity::Error), QList<int>{line});
        QVERIFY2(w.editor()->annotationAt(line).contains("identifier \"bogus\" is undefined"),
                 qPrintable(w.editor()->annotationAt(line)));
        QCOMPARE(w.problems()->topLevelItemCount(), 1);
        QTreeWidgetItem *item = w.problems()->topLevelItem(0);
        QCOMPARE(item->text(1), QString::number(line + 1));
        QCOMPARE(item->text(2), QString("23"));

        // Clicking the problem puts the cursor on it.
        w.editor()->setCursorPosition(0, 0);
        Q_EMIT w.problems()->itemActivated(item, 0);
        int l = -1, c = -1;
        w.editor()->getCursorPosition(&l, &c);
        QCOMPARE(l, line);
        QCOMPARE(c, 22);

        // Fixing it clears the annotation.
        w.editor()->setSelection(line, 0, line, w.editor()->text(line).size() - 1);
        w.editor()->replaceSelectedText("        c[i] = a[i] + b[i];");
        QVERIFY(compiled.wait(30000));
        QVERIFY(w.lastCompile().ok);
        QVERIFY(w.editor()->annotationAt(line).isEmpty());
        QVERIFY(w.editor()->markedLines(Diagnostic::Severity::Error).isEmpty());
        QCOMPARE(w.problems()->topLevelItemCount(), 0);
    }

    void typingBurstCompilesOnce()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openSource(":/presets/vector_add/vector_add.cu"));
        QSignalSpy compiled(&w, &MainWindow::compileFinished);
        QVERIFY(compiled.wait(30000));
        compiled.clear();
        // Ten keystrokes within the debounce (each restarts it; no event loop
        // turn between them, so no timer can fire): only the final text is shown.
        for (int i = 0; i < 10; ++i) {
            w.editor()->append(QString("\n// edit %1").arg(i));
        }
        QVERIFY(w.compileController()->isPending());
        QVERIFY(compiled.wait(30000));
        // Settled: no compile waits for its pause or is in flight, so none can land later.
        QVERIFY(!w.compileController()->isPending());
        QCOMPARE(compiled.count(), 1);
        QVERIFY(w.lastCompile().ok);
    }

    // Every panel is built after the window's first paint (shell/docks.h),
    // and so are the first compile and NVRTC's opening: the first paint
    // waits for none of them. Built after the project opened, each panel
    // shows what one built with the window shows (the same texts, items,
    // cells and enabled states), and every dock keeps its place.
    void panelsBuiltAfterTheFirstPaintShowWhatTheWindowHas_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1280x800") << QSize(1280, 800);
        QTest::newRow("1024x700") << QSize(1024, 700);
    }
    void panelsBuiltAfterTheFirstPaintShowWhatTheWindowHas()
    {
        QFETCH(QSize, size);
        EngineClient engine;
        MainWindow eager(&engine);
        eager.docks().buildAll();
        MainWindow late(&engine);
        // No paint of the editor until the test says so: the late panels wait.
        late.editor()->viewport()->setUpdatesEnabled(false);
        QSignalSpy eagerSass(&eager, &MainWindow::sassFinished);
        QSignalSpy lateSass(&late, &MainWindow::sassFinished);
        QSignalSpy painted(&late, &MainWindow::firstPainted);
        for (MainWindow *w : {&eager, &late}) {
            w->resize(size);
            KP_VERIFY_RESULT(
                w->openProject(QStringLiteral(":/presets/convolution_separable/convolution_separable.kpg")));
            w->show(); // both before the event loop turns: a window not shown then builds every panel
        }
        for (MainWindow *w : {&eager, &late}) {
            QVERIFY(QTest::qWaitForWindowExposed(w));
        }
        // Shown, its editor not painted: the late window has built nothing and
        // compiled nothing (a window never painted waits 2 s at most).
        QCOMPARE(painted.count(), 0);
        const QList<PanelId> all{PanelId::Launch,      PanelId::Inspector, PanelId::Log,         PanelId::Problems,
                                 PanelId::Kernels,     PanelId::Ptx,       PanelId::Sass,        PanelId::Buffers,
                                 PanelId::Results,     PanelId::Checks,    PanelId::Description, PanelId::Project,
                                 PanelId::Sweep,       PanelId::Occupancy, PanelId::Compare,     PanelId::Memory,
                                 PanelId::MemoryAccess};
        for (PanelId id : all) {
            QVERIFY2(!late.docks().isBuilt(id), qPrintable(late.docks().dock(id)->objectName()));
        }
        QVERIFY(!late.workbench().compile().hasAnswer() && !late.workbench().compile().isPending());
        QSignalSpy allBuilt(&late.docks(), &Docks::allBuilt);
        late.editor()->viewport()->setUpdatesEnabled(true); // the first paint: the rest follows
        QVERIFY(allBuilt.wait(5000));
        QCOMPARE(painted.count(), 1);
        for (MainWindow *w : {&eager, &late}) {
            w->refreshDeviceStatus(); // as the program's start does
        }
        QTRY_VERIFY_WITH_TIMEOUT(eager.workbench().compile().hasAnswer() && !eager.workbench().compile().isPending() &&
                                     eager.workbench().document().compiled().ok && eager.workbench().devices().known(),
                                 30000);
        QVERIFY(eagerSass.count() > 0 || eagerSass.wait(30000));
        QTRY_VERIFY_WITH_TIMEOUT(late.workbench().compile().hasAnswer() && !late.workbench().compile().isPending() &&
                                     late.workbench().document().compiled().ok && late.workbench().devices().known(),
                                 30000);
        QVERIFY(lateSass.count() > 0 || lateSass.wait(30000));
        QCoreApplication::processEvents();
        for (PanelId id : all) {
            QCOMPARE(shownBy(late.docks().panel(id)), shownBy(eager.docks().panel(id)));
        }
        for (QDockWidget *d : eager.docks().all()) {
            auto *other = late.findChild<QDockWidget *>(d->objectName());
            QVERIFY(other);
            QCOMPARE(other->isVisible(), d->isVisible());
            QTRY_COMPARE(other->geometry(), d->geometry()); // the default layout is shared out again
        }
    }

    // A window shown but never painted (started minimized, on another
    // desktop) starts its second half after 2 s anyway: the compile and the
    // panels never wait for a paint that may not come.
    void aWindowNeverPaintedStillCompiles()
    {
        EngineClient engine;
        MainWindow w(&engine);
        w.editor()->viewport()->setUpdatesEnabled(false);
        QSignalSpy settled(&w, &MainWindow::firstPainted);
        QSignalSpy compiled(&w, &MainWindow::compileFinished);
        KP_VERIFY_RESULT(w.openProject(QStringLiteral(":/presets/vector_add/vector_add.kpg")));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(settled.count(), 0);
        QVERIFY(settled.wait(5000));
        QVERIFY(compiled.count() > 0 || compiled.wait(30000));
        QTRY_VERIFY(w.docks().allBuiltNow());
    }

    // A window never shown (a test, a scripted start) builds them in the
    // event loop's first turn.
    void panelsOfAWindowNotShownAreBuiltInTheFirstTurn()
    {
        EngineClient engine;
        MainWindow w(&engine);
        QVERIFY(!w.docks().isBuilt(PanelId::Checks));
        QTRY_VERIFY(w.docks().isBuilt(PanelId::Checks) && w.docks().isBuilt(PanelId::MemoryAccess));
        // A request to a panel not built yet reaches it: the panel is built
        // for it and handed the request it was built during.
        MainWindow asked(&engine);
        QVERIFY(!asked.docks().isBuilt(PanelId::MemoryAccess));
        asked.workbench().requestTouches(QStringLiteral("out"), 123457);
        QVERIFY(asked.docks().isBuilt(PanelId::MemoryAccess));
        auto *touches =
            asked.docks().panel(PanelId::MemoryAccess)->findChild<QTreeWidget *>(QStringLiteral("accessTouches"));
        QVERIFY(touches);
        QCOMPARE(touches->topLevelItemCount(), 1);
        QVERIFY2(touches->topLevelItem(0)->text(0).contains(QLatin1String("No memory-access analysis")),
                 qPrintable(touches->topLevelItem(0)->text(0)));
        // And panel() builds one on demand.
        MainWindow other(&engine);
        QVERIFY(!other.docks().isBuilt(PanelId::Sweep));
        QVERIFY(other.docks().panel(PanelId::Sweep));
        QVERIFY(other.docks().isBuilt(PanelId::Sweep));
    }

    void ptxFollowsSelection()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openSource(":/presets/vector_add/vector_add.cu"));
        QSignalSpy compiled(&w, &MainWindow::compileFinished);
        QVERIFY(compiled.wait(30000));
        // Line 14 holds c[i] = a[i] + b[i]: its PTX has the load, add and store.
        w.editor()->setSelection(13, 0, 13, 5);
        const QList<int> marked = w.ptxView()->highlightedLines();
        QVERIFY(!marked.isEmpty());
        QString ptxText;
        for (int l : marked) {
            ptxText += w.ptxView()->text(l - 1);
        }
        QVERIFY2(ptxText.contains("add.f32"), qPrintable(ptxText));
        QVERIFY2(ptxText.contains("st.global.f32"), qPrintable(ptxText));
        // And back: a PTX line maps to its source line.
        QCOMPARE(w.ptxView()->lineMap().sourceLine(marked.first()), 14);
    }

    void sassView()
    {
        EngineClient engine;
        MainWindow w(&engine);
        QSignalSpy sass(&w, &MainWindow::sassFinished);
        KP_VERIFY_RESULT(w.openSource(":/presets/vector_add/vector_add.cu"));
        QVERIFY(sass.count() > 0 || sass.wait(30000));
        const QString text = w.sassView()->text();
        if (PtxLineMap::findDisassembler().isEmpty()) {
            QVERIFY2(text.contains("SASS needs nvdisasm or cuobjdump"), qPrintable(text));
            return;
        }
        QVERIFY2(text.contains("vectorAdd"), qPrintable(text.left(2000)));
        QVERIFY2(text.contains("FADD"), qPrintable(text.left(4000)));
        if (PtxLineMap::findDisassembler().endsWith("nvdisasm")) {
            // The add on line 14 shows up in its SASS lines.
            w.editor()->setSelection(13, 0, 13, 5);
            QString marked;
            for (int l : w.sassView()->highlightedLines()) {
                marked += w.sassView()->text(l - 1);
            }
            QVERIFY2(marked.contains("FADD"), qPrintable(marked));
        }
    }

    // Who touched a cell, asked from the Inspector in a 1024x700 window:
    // the Memory Access dock comes forward with the threads in sight, beside
    // the table (the list was once under the table, below the fold of the
    // short bottom dock, and the question seemed to go unanswered).
    void whoTouchedIsInSightInASmallWindow()
    {
        EngineClient engine;
        MainWindow w(&engine);
        w.resize(1024, 700);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        // transpose_naive's buffers are in and out, as the recorded launch's.
        KP_VERIFY_RESULT(w.openProject(QStringLiteral(":/presets/transpose_naive/transpose_naive.kpg")));
        w.workbench().access().setReport(KpTest::recordedReport());
        w.workbench().requestTouches(QStringLiteral("out"), 2049);
        auto *touches = w.findChild<QTreeWidget *>(QStringLiteral("accessTouches"));
        QVERIFY(touches);
        QTRY_VERIFY(touches->isVisible());
        QCOMPARE(touches->topLevelItemCount(), 1);
        QCOMPARE(touches->topLevelItem(0)->text(0), QStringLiteral("written"));
        const QRect row = touches->visualItemRect(touches->topLevelItem(0));
        QVERIFY(!row.isEmpty());
        // The row is on screen: not clipped away by the dock's scroll area
        // (once the panels built after the first paint have taken their places).
        QTRY_VERIFY(touches->viewport()->visibleRegion().contains(row.center()));
        const QRegion seen = touches->viewport()->visibleRegion();
        QVERIFY2(seen.contains(row.center()), qPrintable(QStringLiteral("row at %1,%2; visible %3x%4")
                                                             .arg(row.center().x())
                                                             .arg(row.center().y())
                                                             .arg(seen.boundingRect().width())
                                                             .arg(seen.boundingRect().height())));
        auto *table = w.findChild<QTableWidget *>(QStringLiteral("accessTable"));
        QVERIFY(table && !table->visibleRegion().isEmpty()); // the table stays in sight beside it
        // The Inspector's line about its buffer is whole in its narrow dock (it was cut at the edge).
        auto *info = w.findChild<QLabel *>(QStringLiteral("bufferInfo"));
        QVERIFY(info);
        QTRY_VERIFY(info->text().contains(QStringLiteral("MiB")));
        const QRect need =
            info->fontMetrics().boundingRect(QRect(0, 0, info->width(), 1000), Qt::TextWordWrap, info->text());
        QVERIFY2(need.width() <= info->width() && need.height() <= info->height(),
                 qPrintable(QStringLiteral("'%1' needs %2x%3, has %4x%5")
                                .arg(info->text())
                                .arg(need.width())
                                .arg(need.height())
                                .arg(info->width())
                                .arg(info->height())));
        QVERIFY(info->mapTo(&w, QPoint(info->width(), 0)).x() <= w.width());
        KpTest::screenshot(&w, QStringLiteral("who-touched-1024x700"));
    }

    void screenshotOption()
    {
        QTemporaryDir dir;
        const QString png = dir.filePath("window.png");
        const KpTest::Run r =
            KpTest::run("kernel-playground", {"--screenshot", png}, {"QT_QPA_PLATFORM=offscreen"}, 60000);
        QCOMPARE(r.exitCode, 0);
        QImage img(png);
        QVERIFY2(!img.isNull(), qPrintable(r.err));
        QVERIFY(img.width() >= 800 && img.height() >= 500);
        // Not a blank picture: the editor's text and the status bar give many colours.
        QSet<QRgb> colours;
        for (int y = 0; y < img.height(); y += 4) {
            for (int x = 0; x < img.width(); x += 4) {
                colours.insert(img.pixel(x, y));
            }
        }
        QVERIFY2(colours.size() > 20, qPrintable(QString::number(colours.size())));
    }

    // --echo-log copies the Log panel's lines to stderr as they come; without it they stay in the panel.
    void echoLogWritesTheLogToStandardError()
    {
        QTemporaryDir dir;
        const QString png = dir.filePath("w.png");
        const QStringList args{"--preset", "saxpy", "--screenshot", png};
        const KpTest::Run quiet = KpTest::run("kernel-playground", args, {"QT_QPA_PLATFORM=offscreen"}, 60000);
        QCOMPARE(quiet.exitCode, 0);
        QVERIFY2(!quiet.err.contains("Opened preset saxpy"), qPrintable(quiet.err));
        const KpTest::Run echoed =
            KpTest::run("kernel-playground", args + QStringList{"--echo-log"}, {"QT_QPA_PLATFORM=offscreen"}, 60000);
        QCOMPARE(echoed.exitCode, 0);
        QVERIFY2(echoed.err.contains("Opened preset saxpy"), qPrintable(echoed.err));
    }

    // The panels drawn with Qt Charts come from kpg_charts.so (shell/chartpanels.h), which the
    // program loads when they are built: the build tree's loads, and a missing one is one message.
    void theChartPanelsComeFromTheirModule()
    {
        QTemporaryDir dir;
        const QStringList args{
            "--preset", "vector_add", "--show", "compare", "--echo-log", "--screenshot", dir.filePath("charts.png")};
        const KpTest::Run missing =
            KpTest::run("kernel-playground", args,
                        {"QT_QPA_PLATFORM=offscreen", "KPG_CHARTS_MODULE=/nonexistent/kpg_charts.so"}, 60000);
        QCOMPARE(missing.exitCode, 0); // the rest of the window works
        QVERIFY2(missing.err.contains("The chart panels (Results, Compare, Occupancy) could not be loaded: "
                                      "/nonexistent/kpg_charts.so"),
                 qPrintable(missing.err));
        QCOMPARE(missing.err.count("could not be loaded"), 1); // once, not per panel
        const KpTest::Run loaded = KpTest::run("kernel-playground", args, {"QT_QPA_PLATFORM=offscreen"}, 60000);
        QCOMPARE(loaded.exitCode, 0);
        QVERIFY2(loaded.err.contains("Opened preset vector_add"), qPrintable(loaded.err));
        QVERIFY2(!loaded.err.contains("could not be loaded"), qPrintable(loaded.err));
    }

    void screenshotToBadPathFails()
    {
        const KpTest::Run r = KpTest::run("kernel-playground", {"--screenshot", "/nonexistent/dir/x.png"},
                                          {"QT_QPA_PLATFORM=offscreen"}, 60000);
        QVERIFY(r.exitCode != 0);
        QVERIFY2(r.err.contains("cannot write screenshot /nonexistent/dir/x.png"), qPrintable(r.err));
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
