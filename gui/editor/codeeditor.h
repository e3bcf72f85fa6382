#pragma once

#include <QFont>
#include <Qsci/qsciscintilla.h>

namespace Kp {

class CudaLexer;

/**
 * A monospaced font that exists on this machine. QFontDatabase's FixedFont is
 * not enough: without a fontconfig alias for "monospace" it falls back to a
 * proportional face, which ruins code alignment.
 */
QFont monospaceFont();

/** The kernel editor: QScintilla set up for CUDA C (lexer, margins, indentation). */
class CodeEditor : public QsciScintilla
{
    Q_OBJECT
public:
    explicit CodeEditor(QWidget *parent = nullptr);

    CudaLexer *cudaLexer() const { return m_lexer; }

    /** The style Scintilla gave the character at a byte position (tests and tooltips). */
    int styleAt(int position) const;

private:
    void updateMarginWidth();

    CudaLexer *m_lexer = nullptr;
};

} // namespace Kp
