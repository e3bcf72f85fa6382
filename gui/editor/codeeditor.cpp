#include "codeeditor.h"

#include "cudalexer.h"

#include <QFontDatabase>

namespace Kp {

QFont monospaceFont()
{
    static const QFont font = [] {
        const QStringList families = QFontDatabase::families();
        for (const char *name : {"JetBrains Mono", "Cascadia Mono", "Source Code Pro", "DejaVu Sans Mono",
                                 "Liberation Mono", "Noto Sans Mono", "Ubuntu Mono"}) {
            if (families.contains(QLatin1String(name))) {
                QFont f(QString::fromLatin1(name));
                f.setPointSizeF(QFontDatabase::systemFont(QFontDatabase::FixedFont).pointSizeF());
                return f;
            }
        }
        QFont f = QFontDatabase::systemFont(QFontDatabase::FixedFont);
        f.setStyleHint(QFont::Monospace);
        f.setFixedPitch(true);
        return f;
    }();
    return font;
}

CodeEditor::CodeEditor(QWidget *parent)
    : QsciScintilla(parent)
{
    m_lexer = new CudaLexer(this);
    m_lexer->applyPalette(palette());
    setLexer(m_lexer);
    setUtf8(true);

    setIndentationsUseTabs(false);
    setTabWidth(4);
    setIndentationWidth(4);
    setAutoIndent(true);
    setBackspaceUnindents(true);
    setBraceMatching(QsciScintilla::SloppyBraceMatch);
    setCaretLineVisible(true);
    const bool dark = palette().color(QPalette::Base).lightness() < 128;
    setCaretLineBackgroundColor(dark ? QColor(0x2a2f36) : QColor(0xf3f6fa));
    setEolMode(QsciScintilla::EolUnix);

    setMarginsFont(monospaceFont());
    setMarginType(0, QsciScintilla::NumberMargin);
    setMarginLineNumbers(0, true);
    setMarginsForegroundColor(palette().color(QPalette::PlaceholderText));
    setMarginsBackgroundColor(palette().color(QPalette::Window));
    setFolding(QsciScintilla::BoxedTreeFoldStyle, 2);
    setFoldMarginColors(palette().color(QPalette::Window), palette().color(QPalette::Window));
    // Grow the horizontal scroll range with the longest line instead of a fixed 2000 px.
    SendScintilla(SCI_SETSCROLLWIDTH, 1);
    SendScintilla(SCI_SETSCROLLWIDTHTRACKING, 1);
    connect(this, &QsciScintilla::linesChanged, this, &CodeEditor::updateMarginWidth);
    updateMarginWidth();
}

int CodeEditor::styleAt(int position) const
{
    return static_cast<int>(SendScintilla(SCI_GETSTYLEAT, static_cast<unsigned long>(position)));
}

void CodeEditor::updateMarginWidth()
{
    // Room for the widest line number plus a little air, so numbers never clip.
    setMarginWidth(0, QStringLiteral("0%1").arg(qMax(lines(), 100)));
}

} // namespace Kp
