#pragma once

#include <QObject>
#include <QString>

class QsciScintilla;

namespace Kp {

/**
 * How typing behaves in the kernel editor, beyond QScintilla's own
 * brace-based auto-indent (a decorator parented to the editor):
 *
 * - A line ending in `{` indents the next one step.
 * - Plain C's braceless bodies. After `if (...)`, `for (...)`, `while (...)`,
 *   `else` or `do` with no brace and no statement, the next line is indented
 *   one step; the line after that single statement returns to the header's
 *   indent. A header that carries its statement (`if (i >= n) return;`) does
 *   not indent the next line. (The lexer's block-start keywords are off:
 *   they indented after `if (...) return;` too.)
 * - Undo in words. Scintilla merges all typing into one undo step until the
 *   caret moves elsewhere; a space, tab, newline or punctuation typed ends
 *   the step, so Undo takes back the last word or burst, not a whole retyped
 *   function.
 *
 * GUI thread only.
 */
class EditorTyping : public QObject
{
    Q_OBJECT
public:
    explicit EditorTyping(QsciScintilla *editor);

    /** Whether line (without its comment) is a control header whose body is the next statement. */
    static bool isBracelessHeader(const QString &line);

private:
    void charAdded(int ch);
    void indentNewLine(int line);

    QsciScintilla *m_editor;
};

} // namespace Kp
