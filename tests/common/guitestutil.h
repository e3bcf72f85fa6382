#pragma once

// What GUI tests do with the main window as a user would: wait for the
// compile of what was typed, type into a field, pick from a combo box.

#include "shell/mainwindow.h"

#include <QApplication>
#include <QComboBox>
#include <QLineEdit>
#include <QSignalSpy>
#include <QStringList>
#include <QtTest>

namespace KpTest {

/** Waits for the next compile of the editor's text to land (true) or 30 s to pass (false). */
inline bool waitCompiled(Kp::MainWindow &w, int timeoutMs = 30000)
{
    QSignalSpy spy(&w, &Kp::MainWindow::compileFinished);
    return spy.wait(timeoutMs);
}

/**
 * Opens a project in the window, shows the window and waits for the project's
 * first compile: where most walks start. False, with the reason as a
 * warning, when one of the three fails.
 */
[[nodiscard]] inline bool openShownCompiled(Kp::MainWindow &w, const QString &project, QSize size = {})
{
    // Listening from before the open: the compile it starts may land while
    // the window is being shown (a spy made after the exposure missed it).
    QSignalSpy compiled(&w, &Kp::MainWindow::compileFinished);
    if (const Kp::Status opened = w.openProject(project); !opened) {
        qWarning("cannot open %s: %s", qPrintable(project), qPrintable(opened.error().message));
        return false;
    }
    if (size.isValid()) {
        w.resize(size);
    }
    w.show();
    if (!QTest::qWaitForWindowExposed(&w)) {
        qWarning("the window was not exposed");
        return false;
    }
    return !compiled.isEmpty() || compiled.wait(30000);
}

/** Types text into a line edit as a user does: focus, (select all, delete,) keys, Enter. */
inline void typeAndEnter(QLineEdit *edit, const QString &text, bool clear = true)
{
    edit->setFocus();
    if (clear) {
        edit->selectAll();
        QTest::keyClick(edit, Qt::Key_Delete);
    }
    QTest::keyClicks(edit, text);
    QTest::keyClick(edit, Qt::Key_Return);
}

/** Chooses an item of a combo box by typing its first letters, as a user does with the keyboard. */
inline void chooseByKeys(QComboBox *combo, const QString &text)
{
    // Typed letters add up to one search within the keyboard interval: start a fresh one.
    QTest::qWait(QApplication::keyboardInputInterval() + 50);
    combo->setFocus();
    QTest::keyClicks(combo, text);
}

/** The texts of a combo box's items, in order. */
inline QStringList comboItems(const QComboBox *combo)
{
    QStringList out;
    for (int i = 0; i < combo->count(); ++i) {
        out << combo->itemText(i);
    }
    return out;
}

} // namespace KpTest
