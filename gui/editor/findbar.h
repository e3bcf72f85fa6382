#pragma once

#include <QList>
#include <QWidget>

class QLabel;
class QLineEdit;
class QPushButton;
class QToolButton;
class QsciScintilla;

namespace Kp {

/**
 * Find and Replace under the editor, as in Qt Creator: Ctrl+F opens it on
 * the selected word, Enter finds the next match (Shift+Enter the previous),
 * Esc closes it and returns to the editor. Replace is the same bar with a
 * second field. A found match is counted: "3 of 12". GUI thread only.
 */
class FindBar : public QWidget
{
    Q_OBJECT
public:
    explicit FindBar(QsciScintilla *editor, QWidget *parent = nullptr);

    /** Shows the bar (with the replace field when replace is true) and focuses the search field. */
    void open(bool replace);
    /** Finds the next (or previous) match from the cursor, wrapping around; false when there is none. */
    bool findNext(bool backwards = false);
    /** Replaces the current match, if the selection is one, and finds the next. */
    void replaceOne();
    /** Replaces every match in the text as one undo step; returns how many. */
    int replaceAll();

    QLineEdit *findField() const { return m_find; }
    QLineEdit *replaceField() const { return m_replace; }
    QLabel *statusLabel() const { return m_status; }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

    /** Where the matches of the search text start, in bytes of the UTF-8 text, as Scintilla counts. */
    QList<int> matchPositions() const;

private:
    bool selectionMatches() const;

    QsciScintilla *m_editor;
    QLineEdit *m_find = nullptr;
    QLineEdit *m_replace = nullptr;
    QToolButton *m_case = nullptr;
    QToolButton *m_word = nullptr;
    QLabel *m_status = nullptr;
    QWidget *m_replaceRow = nullptr;
};

} // namespace Kp
