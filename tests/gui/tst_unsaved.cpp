// Every action that would drop unsaved work asks one question, Save /
// Discard / Cancel, worded the same (MainWindow::maybeSave): New Project,
// New from Preset, Open, Open Recent, a gallery card, closing the window and
// Quit. Each row is the user's steps: edit a project, choose the action,
// answer the question, and see what is left.

#include "client/engineclient.h"
#include "panels/launch/launchpanel.h"
#include "panels/start/presetgallery.h"
#include "shell/mainwindow.h"
#include "testutil.h"
#include "workbench/projectdocument.h"

#include <QApplication>
#include <QFileDialog>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

using namespace Kp;

namespace {

/**
 * Answers the dialogs an action opens while it runs: the first message box
 * with button (recording what it offered and asked), any other dialog (the
 * preset gallery, the file chooser) is cancelled, as a user who changed
 * their mind would.
 */
class Answerer : public QObject
{
public:
    explicit Answerer(QMessageBox::StandardButton button)
        : m_button(button)
    {
        m_timer.setInterval(5);
        connect(&m_timer, &QTimer::timeout, this, [this] {
            QWidget *modal = QApplication::activeModalWidget();
            if (auto *box = qobject_cast<QMessageBox *>(modal)) {
                ++questions;
                offered = box->standardButtons();
                text = box->text();
                box->button(m_button)->click();
            } else if (auto *dialog = qobject_cast<QDialog *>(modal)) {
                cancelled << QString::fromLatin1(dialog->metaObject()->className());
                dialog->reject();
            }
        });
        m_timer.start();
    }

    int questions = 0;
    QMessageBox::StandardButtons offered;
    QString text;
    QStringList cancelled; ///< class names of the other dialogs that came up

private:
    QMessageBox::StandardButton m_button;
    QTimer m_timer;
};

QAction *menuAction(QMainWindow &w, const QString &text)
{
    for (QAction *menu : w.menuBar()->actions()) {
        if (!menu->menu()) {
            continue;
        }
        for (QAction *a : menu->menu()->actions()) {
            if (a->text() == text) {
                return a;
            }
            if (a->menu()) {
                for (QAction *sub : a->menu()->actions()) {
                    if (sub->text() == text) {
                        return sub;
                    }
                }
            }
        }
    }
    return nullptr;
}

} // namespace

class TestUnsaved : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void everyActionAsksTheSameQuestion_data()
    {
        QTest::addColumn<QString>("action");
        QTest::addColumn<int>("answer");
        for (const char *action :
             {"new project", "new from preset", "open", "open recent", "gallery card", "close window", "quit"}) {
            QTest::newRow(qPrintable(QStringLiteral("%1, cancel").arg(QLatin1String(action))))
                << QString::fromLatin1(action) << int(QMessageBox::Cancel);
            QTest::newRow(qPrintable(QStringLiteral("%1, discard").arg(QLatin1String(action))))
                << QString::fromLatin1(action) << int(QMessageBox::Discard);
        }
        QTest::newRow("new project, save") << QStringLiteral("new project") << int(QMessageBox::Save);
    }

    void everyActionAsksTheSameQuestion()
    {
        QFETCH(QString, action);
        QFETCH(int, answer);
        QTemporaryDir dir;
        EngineClient engine;
        MainWindow w(&engine);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        // A project of the user's, saved once (so Open Recent lists it), then edited: block 16.
        const QString mine = dir.filePath(QStringLiteral("mine.kpg"));
        KP_VERIFY_RESULT(w.openProject(QStringLiteral(":/presets/heat/heat.kpg")));
        KP_VERIFY_RESULT(w.saveProjectTo(mine));
        QLineEdit *block = w.launchPanel()->blockField(0);
        block->setText(QStringLiteral("16"));
        Q_EMIT block->editingFinished();
        QTRY_VERIFY(w.isProjectModified());

        Answerer answerer{QMessageBox::StandardButton(answer)};
        if (action == QLatin1String("new project")) {
            QAction *a = menuAction(w, QStringLiteral("&New Project"));
            QVERIFY(a);
            a->trigger();
        } else if (action == QLatin1String("new from preset")) {
            QAction *a = menuAction(w, QStringLiteral("New from &Preset…"));
            QVERIFY(a);
            a->trigger();
        } else if (action == QLatin1String("open")) {
            QAction *a = menuAction(w, QStringLiteral("&Open…"));
            QVERIFY(a);
            a->trigger();
        } else if (action == QLatin1String("open recent")) {
            // The user's own file, as it is on disk (the block as saved).
            QAction *a = menuAction(w, mine);
            QVERIFY2(a, "the saved project is in Open Recent");
            a->trigger();
        } else if (action == QLatin1String("gallery card")) {
            PresetGallery *gallery = w.startPage()->gallery();
            QVERIFY(gallery && gallery->count() > 0);
            Q_EMIT gallery->itemActivated(gallery->item(0));
        } else if (action == QLatin1String("close window")) {
            w.close();
        } else if (action == QLatin1String("quit")) {
            QAction *a = menuAction(w, QStringLiteral("&Quit"));
            QVERIFY(a);
            a->trigger();
        }

        QCOMPARE(answerer.questions, 1);
        QCOMPARE(answerer.offered, QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
        QCOMPARE(answerer.text, QStringLiteral("Save the changes to %1 first?").arg(mine));
        const bool closing = action == QLatin1String("close window") || action == QLatin1String("quit");
        if (answer == QMessageBox::Cancel) {
            // Nothing happened: the edit, the project and the window are as they were.
            QVERIFY(answerer.cancelled.isEmpty());
            QVERIFY(w.isVisible());
            QVERIFY(w.isProjectModified());
            QCOMPARE(w.project().launches.value(0).block.value(0), QStringLiteral("16"));
            QCOMPARE(w.document()->path(), QFileInfo(mine).absoluteFilePath());
            return;
        }
        if (answer == QMessageBox::Save) {
            // Saved, then replaced: the file holds the edit, the window the new project.
            ProjectDocument reread;
            KP_VERIFY_RESULT(reread.openProject(mine));
            QCOMPARE(reread.project().launches.value(0).block.value(0), QStringLiteral("16"));
        }
        // Discard (or Save) let the action go on.
        if (closing) {
            QVERIFY(!w.isVisible());
        } else if (action == QLatin1String("new project")) {
            QVERIFY(w.project().buffers.isEmpty());
            QVERIFY(!w.isProjectModified());
        } else if (action == QLatin1String("new from preset")) {
            QCOMPARE(answerer.cancelled, QStringList{QStringLiteral("Kp::PresetDialog")});
        } else if (action == QLatin1String("open")) {
            QCOMPARE(answerer.cancelled.size(), 1); // the file chooser came up
        } else if (action == QLatin1String("open recent")) {
            QVERIFY(!w.isProjectModified());
            QVERIFY(w.project().launches.value(0).block.value(0) != QStringLiteral("16"));
        } else if (action == QLatin1String("gallery card")) {
            QVERIFY(w.project().path.startsWith(QLatin1String(":/presets/")));
            QVERIFY(!w.isProjectModified());
        }
    }
};

QTEST_MAIN(TestUnsaved)
#include "tst_unsaved.moc"
