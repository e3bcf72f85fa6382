// Panels built as the dock table builds them, Panel(Workbench &), with no
// MainWindow: each follows the Workbench's signals by itself.

#include "panelfixture.h"
#include "testutil.h"

#include "panels/checks/checkspanel.h"
#include "panels/kernels/kernelstable.h"
#include "panels/launch/launchpanel.h"
#include "panels/log/logpanel.h"
#include "panels/occupancy/occupancyview.h"
#include "panels/problems/problemspanel.h"
#include "panels/sweep/sweeppanel.h"
#include "shell/docks.h"
#include "shell/mainwindow.h"
#include "workbench/selection.h"

#include <QAbstractScrollArea>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QTabBar>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>

using namespace Kp;
using namespace KpTest;

namespace {

/** A field's text up to this long (a number, a name) must show whole; a longer expression scrolls in its field. */
constexpr int kShortText = 16;

/** Where w sits inside the scroll area that holds it, if any: a widget outside the viewport is behind a scroll bar. */
bool hiddenByScrolling(QWidget *w, QWidget *dock)
{
    for (QWidget *p = w->parentWidget(); p && p != dock; p = p->parentWidget()) {
        if (auto *area = qobject_cast<QAbstractScrollArea *>(p)) {
            const QRect r(w->mapTo(area->viewport(), QPoint(0, 0)), w->size());
            return !area->viewport()->rect().contains(r);
        }
    }
    return false;
}

/**
 * The widgets of dock that show less than their whole text: a label or a
 * button narrower (or, wrapping, shorter) than its text, a field narrower
 * than its text, a table column narrower than its header or its cells, or
 * any of them behind a scroll bar. Empty when everything reads.
 */
QStringList cutTexts(QDockWidget *dock)
{
    QStringList out;
    const QString where = dock->objectName() + QStringLiteral(": ");
    const auto name = [](QWidget *w, const QString &text) {
        return QStringLiteral("%1 '%2'").arg(
            w->objectName().isEmpty() ? QString::fromLatin1(w->metaObject()->className()) : w->objectName(),
            text.left(40));
    };
    // A panel in a scroll area fits its width: nothing of it hides behind a horizontal scroll bar.
    if (auto *scroll = qobject_cast<QScrollArea *>(dock->widget());
        scroll && scroll->horizontalScrollBar()->maximum() > 0) {
        out << where + QStringLiteral("scrolls sideways: %1 wide, needs %2")
                           .arg(scroll->viewport()->width())
                           .arg(scroll->widget()->minimumSizeHint().width());
    }
    for (QWidget *w : dock->findChildren<QWidget *>()) {
        if (!w->isVisibleTo(dock) || w->visibleRegion().isEmpty() || qobject_cast<QTabBar *>(w->parentWidget())) {
            continue;
        }
        if (auto *label = qobject_cast<QLabel *>(w); label && !label->text().isEmpty()) {
            const bool fits = label->wordWrap() ? label->heightForWidth(label->width()) <= label->height() + 1
                                                : label->sizeHint().width() <= label->width() + 1;
            if (!fits || hiddenByScrolling(label, dock)) {
                out << where + name(label, label->text()) +
                           QStringLiteral(" %1x%2, needs %3x%4")
                               .arg(label->width())
                               .arg(label->height())
                               .arg(label->sizeHint().width())
                               .arg(label->wordWrap() ? label->heightForWidth(label->width())
                                                      : label->sizeHint().height());
            }
        } else if (auto *button = qobject_cast<QAbstractButton *>(w); button && !button->text().isEmpty()) {
            if (button->sizeHint().width() > button->width() + 1 || hiddenByScrolling(button, dock)) {
                out << where + name(button, button->text()) +
                           QStringLiteral(" %1 wide, needs %2").arg(button->width()).arg(button->sizeHint().width());
            }
        } else if (auto *edit = qobject_cast<QLineEdit *>(w); edit && !edit->text().isEmpty() &&
                                                              edit->text().size() <= kShortText &&
                                                              !qobject_cast<QComboBox *>(edit->parentWidget()) &&
                                                              !qobject_cast<QAbstractSpinBox *>(edit->parentWidget())) {
            const int room = edit->width() - 12; // the frame and the text margins
            if (edit->fontMetrics().horizontalAdvance(edit->text()) > room) {
                out << where + name(edit, edit->text()) + QStringLiteral(" %1 wide").arg(edit->width());
            }
        } else if (auto *table = qobject_cast<QTableView *>(w); table && table->model()) {
            QHeaderView *h = table->horizontalHeader();
            for (int c = 0; c < table->model()->columnCount(); ++c) {
                if (h->isSectionHidden(c)) {
                    continue;
                }
                int need = h->sectionSizeHint(c);
                for (int r = 0; r < qMin(50, table->model()->rowCount()); ++r) {
                    const QModelIndex i = table->model()->index(r, c);
                    const bool wraps = table->wordWrap() &&
                                       table->verticalHeader()->sectionResizeMode(0) == QHeaderView::ResizeToContents;
                    if (!table->indexWidget(i) && !wraps) {
                        need = qMax(need, table->fontMetrics().horizontalAdvance(i.data().toString()) + 8);
                    }
                }
                const bool inView = table->columnViewportPosition(c) + h->sectionSize(c) <= table->viewport()->width();
                const bool shown = table->columnViewportPosition(c) < table->viewport()->width();
                // Data wider than the view scrolls, as in any table; what shows must read.
                // The scalars table is three short columns beside the buffers: all of it in view.
                const bool fits = table->objectName() == QLatin1String("scalars");
                if ((shown && h->sectionSize(c) + 2 < need) || (!inView && (c == 0 || fits))) {
                    out << where + name(table, table->model()->headerData(c, Qt::Horizontal).toString()) +
                               QStringLiteral(" column %1 wide, needs %2%3")
                                   .arg(h->sectionSize(c))
                                   .arg(need)
                                   .arg(inView ? QString() : QStringLiteral(", out of view"));
                }
            }
        }
    }
    return out;
}

} // namespace

class TestPanels : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    // A compile lands in Problems and Kernels through the Workbench alone.
    void compileReachesProblemsAndKernels()
    {
        PanelFixture f;
        ProblemsPanel problems(f.wb);
        KernelsTable kernels(f.wb);
        QVERIFY(f.open(QStringLiteral(":/presets/vector_add/vector_add.kpg")));
        QCOMPARE(kernels.rowCount(), 1);
        QCOMPARE(kernels.item(0, 0)->text(), f.wb.document().project().launches.value(0).kernel);
        QCOMPARE(problems.topLevelItemCount(), 0);
        // A broken source: its error on its line.
        QSignalSpy settled(&f.wb.compile(), &CompileController::settled);
        f.wb.compile().setTextSource([] { return QStringLiteral("__global__ void k(float *a) {\n  a[0] = b;\n}\n"); });
        f.wb.compile().compileNow();
        QVERIFY(settled.wait(60000));
        QVERIFY(problems.topLevelItemCount() >= 1);
        QVERIFY2(problems.topLevelItem(0)->text(0).contains(QLatin1String("2")) ||
                     problems.topLevelItem(0)->text(1).contains(QLatin1String("2")),
                 "the error is on line 2");
    }

    // A struct passed by value shows as the project writes it, and editing
    // another argument keeps it (it was shown as 0, and the next edit of any
    // argument wrote 0 over it).
    void structArgumentSurvivesEditingAnother()
    {
        PanelFixture f;
        LaunchPanel launch(f.wb);
        QVERIFY(f.open(QStringLiteral(":/presets/struct_params/struct_params.kpg")));
        auto *args = launch.findChild<QTableWidget *>(QStringLiteral("arguments"));
        QVERIFY(args);
        QTRY_COMPARE(args->rowCount(), 4);
        // The rows exist from the project before the compile answers; its
        // kernel list rebuilds them with types (on a busy machine after this
        // point), so wait for the types before holding on to a row's editor.
        QTRY_VERIFY_WITH_TIMEOUT(args->item(0, 1) && !args->item(0, 1)->text().isEmpty(), 60000);
        auto *shown = qobject_cast<QComboBox *>(args->cellWidget(0, 2));
        QVERIFY(shown);
        QCOMPARE(shown->currentText(), QStringLiteral("Transform {2, {1, -3}, 10}"));
        // Edit n's binding to a literal, as a user types it.
        auto *n = qobject_cast<QComboBox *>(args->cellWidget(3, 2));
        QVERIFY(n && n->isEditable());
        n->setEditText(QStringLiteral("5000"));
        QMetaObject::invokeMethod(n->lineEdit(), "editingFinished");
        QTRY_COMPARE(f.wb.document().project().launches.value(0).args.value(3).value, 5000.0);
        const ArgBinding t = f.wb.document().project().launches.value(0).args.value(0);
        QVERIFY(t.isAggregate());
        QCOMPARE(t.values, (QList<double>{2, 1, -3, 10}));
        // A vector value typed as an array is one too.
        shown->setEditText(QStringLiteral("[3, 0.5, 0.25, 7]"));
        QMetaObject::invokeMethod(shown->lineEdit(), "editingFinished");
        QTRY_COMPARE(f.wb.document().project().launches.value(0).args.value(0).values,
                     (QList<double>{3, 0.5, 0.25, 7}));
    }

    // The Checks panel says what a project's checks are before any run.
    void checksPanelNotesTheProjectsChecks()
    {
        PanelFixture f;
        ChecksPanel checks(f.wb);
        QVERIFY(f.wb.document().openProject(QStringLiteral(":/presets/vector_add/vector_add.kpg")));
        auto *note = checks.findChild<QLabel *>();
        QVERIFY(note);
        QVERIFY2(note->text().contains(QLatin1String("check")), qPrintable(note->text()));
    }

    // Log lines from anywhere in the workbench reach the Log panel.
    void logFollowsTheWorkbench()
    {
        PanelFixture f;
        LogPanel log(f.wb);
        f.wb.log(QStringLiteral("a line for the log"));
        QVERIFY(log.toPlainText().contains(QLatin1String("a line for the log")));
    }

    // The Occupancy view follows the step selected in the Selection, not a Launch panel.
    void occupancyFollowsTheSelectedStep()
    {
        PanelFixture f;
        OccupancyView view(f.wb);
        QVERIFY(f.open(QStringLiteral(":/presets/heat/heat.kpg")));
        const Validation &v = f.wb.document().validation();
        QVERIFY(!v.steps.isEmpty());
        f.wb.selection().setStep(0);
        QCOMPARE(view.currentUse().blockThreads, v.steps[0].threadsPerBlock);
    }

    // A sweep started right after typing sweeps the text as typed, not the
    // document's copy from before the compile pause (it synced nothing once).
    void sweepTakesTheEditorsTextAsItIsNow()
    {
        PanelFixture f;
        SweepPanel sweep(f.wb);
        QVERIFY(f.open(QStringLiteral(":/presets/vector_add/vector_add.kpg")));
        const QString typed = f.wb.document().project().sourceText + QStringLiteral("\n// typed just now\n");
        f.wb.compile().setTextSource([typed] { return typed; });
        f.wb.compile().textEdited(); // within the pause: nothing compiled or synced yet
        QVERIFY(f.wb.document().project().sourceText != typed);
        sweep.setAxes({QStringLiteral("block.x=64,128")}, false);
        KP_VERIFY_RESULT(sweep.start());
        QCOMPARE(f.wb.document().project().sourceText, typed);
        sweep.abort();
    }

    // Every dock of the table comes forward and has room at a lab laptop's
    // and a projector's size, and its widgets show their whole text: labels,
    // buttons, fields and table headers are neither cut nor behind a scroll
    // bar (Launch's "Resolves to", Buffers' Seed and Max, the scalars'
    // values, Sweep's buttons and the Inspector's stats line were).
    void everyDockOfTheTableShows_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<QString>("project");
        // heat: a 2-D expression init and a repeat; vector_add: random inits, a check, a throughput.
        for (const char *preset : {"heat", "vector_add"}) {
            const QString path = QStringLiteral(":/presets/%1/%1.kpg").arg(QLatin1String(preset));
            QTest::newRow(qPrintable(QStringLiteral("1280x800 %1").arg(QLatin1String(preset))))
                << QSize(1280, 800) << path;
            QTest::newRow(qPrintable(QStringLiteral("1024x700 %1").arg(QLatin1String(preset))))
                << QSize(1024, 700) << path;
        }
    }
    void everyDockOfTheTableShows()
    {
        QFETCH(QSize, size);
        QFETCH(QString, project);
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(project));
        w.resize(size);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTRY_VERIFY_WITH_TIMEOUT(w.lastCompile().ok, 60000); // the kernels' rows are filled
        // The window itself fits: no dock's minimum makes it wider or taller than the screen.
        QString mins; // which dock's minimum widened the window, when one did
        for (QDockWidget *d : w.docks().all()) {
            mins += QStringLiteral(" %1 %2x%3")
                        .arg(d->objectName())
                        .arg(d->minimumSizeHint().width())
                        .arg(d->minimumSizeHint().height());
        }
        QTRY_VERIFY2(w.width() <= size.width() && w.height() <= size.height(),
                     qPrintable(QStringLiteral("%1x%2").arg(w.width()).arg(w.height()) + mins));
        const QList<QDockWidget *> docks = w.docks().all();
        QCOMPARE(docks.size(), 17); // the dock table's rows
        QStringList cut;
        for (QDockWidget *dock : docks) {
            dock->show();
            dock->raise();
            QTRY_VERIFY2(dock->isVisible() && !dock->visibleRegion().isEmpty(), qPrintable(dock->objectName()));
            QWidget *panel = dock->widget();
            QVERIFY2(panel->width() >= 120 && panel->height() >= 80,
                     qPrintable(
                         QStringLiteral("%1: %2x%3").arg(dock->objectName()).arg(panel->width()).arg(panel->height())));
            QVERIFY2(dock->geometry().right() <= w.width() && dock->geometry().bottom() <= w.height(),
                     qPrintable(dock->objectName()));
            QApplication::processEvents();
            // Every dock in view, not only the one raised: raising a bottom
            // dock once squeezed the launch panel's "Resolves to".
            for (QDockWidget *shown : docks) {
                if (!shown->visibleRegion().isEmpty()) {
                    for (const QString &c : cutTexts(shown)) {
                        if (!cut.contains(c)) {
                            cut << c;
                        }
                    }
                }
            }
        }
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QLatin1Char('\n'))));
    }

    // Opening another project asks about unsaved edits first, as New and Quit
    // do (Open Recent lost them without a word once); Cancel keeps them.
    void openRecentAsksBeforeReplacingUnsavedEdits()
    {
        QTemporaryDir dir;
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(QStringLiteral(":/presets/vector_add/vector_add.kpg")));
        const QString saved = dir.filePath(QStringLiteral("mine.kpg"));
        KP_VERIFY_RESULT(w.saveProjectTo(saved));
        KP_VERIFY_RESULT(w.openProject(QStringLiteral(":/presets/heat/heat.kpg")));
        w.launchPanel()->blockField(0)->setText(QStringLiteral("16"));
        Q_EMIT w.launchPanel()->blockField(0)->editingFinished();
        QTRY_VERIFY(w.isProjectModified());
        QAction *recent = nullptr;
        for (QAction *menu : w.menuBar()->actions()) {
            for (QAction *a : menu->menu()->actions()) {
                if (a->menu() && a->text() == QStringLiteral("Open &Recent")) {
                    for (QAction *r : a->menu()->actions()) {
                        if (r->text() == saved) {
                            recent = r;
                        }
                    }
                }
            }
        }
        QVERIFY2(recent, "the saved project is in Open Recent");
        const auto answer = [this](QMessageBox::StandardButton button, QMessageBox::StandardButtons *offered) {
            QTimer::singleShot(0, this, [button, offered] {
                if (auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget())) {
                    *offered = box->standardButtons();
                    box->button(button)->click();
                }
            });
        };
        QMessageBox::StandardButtons offered;
        answer(QMessageBox::Cancel, &offered);
        recent->trigger();
        QCOMPARE(offered, QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
        QVERIFY(w.isProjectModified());
        QCOMPARE(w.project().launches[0].block.first(), QStringLiteral("16"));
        QVERIFY(w.project().path.startsWith(QLatin1String(":/presets/heat")));
        offered = {};
        answer(QMessageBox::Discard, &offered);
        recent->trigger();
        QVERIFY(offered != QMessageBox::StandardButtons{});
        QCOMPARE(QFileInfo(w.project().path).canonicalFilePath(), QFileInfo(saved).canonicalFilePath());
    }

    // "Raise me" goes through one policy: within a run a failed check outranks
    // a guard hit, which outranks the run's result; what the user asks for always wins.
    void oneRaisePolicy()
    {
        EngineClient engine;
        MainWindow w(&engine);
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        Docks &docks = w.docks();
        const auto front = [&](PanelId id) { return !docks.dock(id)->visibleRegion().isEmpty(); };
        w.workbench().requestAttention(PanelId::Checks, Attention::CheckFailed);
        QTRY_VERIFY(front(PanelId::Checks));
        w.workbench().requestAttention(PanelId::Results, Attention::RunResult);
        QTest::qWait(0);
        QVERIFY2(front(PanelId::Checks), "a run's result does not hide its failed check");
        w.workbench().requestAttention(PanelId::Log, Attention::UserAsked);
        QTRY_VERIFY(front(PanelId::Log));
    }
};

QTEST_MAIN(TestPanels)
#include "tst_panels.moc"
