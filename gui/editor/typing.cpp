#include "typing.h"

#include <Qsci/qsciscintilla.h>

#include <QRegularExpression>

namespace Kp {

namespace {

/** The line without a trailing // comment and surrounding blanks (a // inside a string is rare in kernels). */
QString codeOf(const QString &line)
{
    const qsizetype comment = line.indexOf(QLatin1String("//"));
    return (comment >= 0 ? line.left(comment) : line).trimmed();
}

/** Whether the parentheses of text close where it ends: `for (int i = 0; i < n; ++i)`. */
bool endsWithClosedParens(const QString &text, qsizetype open)
{
    int depth = 0;
    for (qsizetype i = open; i < text.size(); ++i) {
        if (text[i] == QLatin1Char('(')) {
            ++depth;
        } else if (text[i] == QLatin1Char(')')) {
            if (--depth == 0) {
                return i == text.size() - 1;
            }
        }
    }
    return false;
}

} // namespace

EditorTyping::EditorTyping(QsciScintilla *editor)
    : QObject(editor)
    , m_editor(editor)
{
    // Runs after QScintilla's own handler (connected in its constructor), so
    // it corrects the indent QScintilla gave the new line.
    connect(editor, &QsciScintilla::SCN_CHARADDED, this, &EditorTyping::charAdded);
}

bool EditorTyping::isBracelessHeader(const QString &line)
{
    const QString code = codeOf(line);
    static const QRegularExpression bare(QStringLiteral("^(?:\\}\\s*)?(?:else|do)$"));
    if (bare.match(code).hasMatch()) {
        return true;
    }
    static const QRegularExpression header(QStringLiteral("^(?:\\}\\s*)?(?:else\\s+)?(?:if|for|while)\\s*\\("));
    const QRegularExpressionMatch m = header.match(code);
    return m.hasMatch() && endsWithClosedParens(code, m.capturedEnd() - 1);
}

void EditorTyping::charAdded(int ch)
{
    if (ch == '\n' || ch == '\r') {
        int line = 0;
        int index = 0;
        m_editor->getCursorPosition(&line, &index);
        indentNewLine(line);
    }
    const bool boundary = ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == ';' || ch == ',' || ch == '(' ||
                          ch == ')' || ch == '{' || ch == '}' || ch == '[' || ch == ']';
    if (boundary) {
        // An empty undo action is a boundary in Scintilla's undo history:
        // the next keystroke starts a new step instead of joining this one.
        m_editor->beginUndoAction();
        m_editor->endUndoAction();
    }
}

void EditorTyping::indentNewLine(int line)
{
    if (line < 1) {
        return;
    }
    const int width = m_editor->indentationWidth() > 0 ? m_editor->indentationWidth() : m_editor->tabWidth();
    const QString previous = m_editor->text(line - 1);
    int wanted = -1;
    // A line ending in '{' opens a block whatever the lexer has styled yet
    // (QScintilla's own rule waits for the styling, which a fast typist outruns).
    if (isBracelessHeader(previous) || codeOf(previous).endsWith(QLatin1Char('{'))) {
        wanted = m_editor->indentation(line - 1) + width;
    } else if (line >= 2 && isBracelessHeader(m_editor->text(line - 2))) {
        // The header's one statement is done (it ends the line): back to the header's indent.
        const QString statement = codeOf(previous);
        if (statement.endsWith(QLatin1Char(';')) && !statement.startsWith(QLatin1Char('{'))) {
            wanted = m_editor->indentation(line - 2);
        }
    }
    const int now = m_editor->indentation(line);
    if (wanted < 0 || wanted == now) {
        return;
    }
    int cursorLine = 0;
    int index = 0;
    m_editor->getCursorPosition(&cursorLine, &index);
    m_editor->setIndentation(line, wanted);
    if (cursorLine == line && index >= now) {
        m_editor->setCursorPosition(line, index - now + wanted);
    }
}

} // namespace Kp
