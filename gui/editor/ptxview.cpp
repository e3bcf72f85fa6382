#include "ptxview.h"

#include "codeeditor.h"

#include <Qsci/qscilexercpp.h>

namespace Kp {

namespace {
class PtxLexer : public QsciLexerCPP
{
public:
    explicit PtxLexer(QObject *parent)
        : QsciLexerCPP(parent)
    {
    }
    const char *language() const override { return "PTX"; }
    const char *keywords(int set) const override
    {
        // '.' is not part of a word for this lexer, so directives match without it.
        if (set == 1) {
            return "version target address_size visible entry func param reg local global shared const "
                   "align file loc maxntid reqntid minnctapersm pragma extern weak b8 b16 b32 b64 u8 u16 u32 u64 "
                   "s8 s16 s32 s64 f16 f32 f64 pred v2 v4 ptr";
        }
        if (set == 2) {
            return "ld st mov add sub mul mad fma div rem min max neg abs and or xor not shl shr cvt cvta setp "
                   "selp bra ret exit bar call atom red shfl vote sqrt rsqrt rcp ex2 lg2 sin cos membar fence "
                   "wide lo hi rn rz approx ftz sat nc gt lt ge le eq ne "
                   // SASS
                   "LDC LDG STG LDS STS S2R S2UR IMAD IADD3 ISETP FADD FMUL FFMA MOV EXIT BRA BAR ULDC "
                   "SHF LEA LOP3 SEL NOP HFMA2 IMAD_WIDE ISETP_GE FSETP MUFU RET CS2R";
        }
        return nullptr;
    }
};
} // namespace

PtxView::PtxView(QWidget *parent)
    : QsciScintilla(parent)
{
    auto *lexer = new PtxLexer(this);
    const QFont mono = monospaceFont();
    lexer->setDefaultFont(mono);
    lexer->setFont(mono);
    lexer->setColor(QColor(0x0033b3), QsciLexerCPP::Keyword);
    lexer->setColor(QColor(0x00627a), QsciLexerCPP::KeywordSet2);
    lexer->setColor(QColor(0x6a737d), QsciLexerCPP::CommentLine);
    lexer->setColor(QColor(0x1750eb), QsciLexerCPP::Number);
    setLexer(lexer);
    setReadOnly(true);
    setMarginType(0, QsciScintilla::NumberMargin);
    setMarginLineNumbers(0, true);
    setMarginWidth(0, QStringLiteral("00000"));
    setMarginsFont(mono);
    m_marker = markerDefine(QsciScintilla::Background, 3);
    setMarkerBackgroundColor(QColor(255, 236, 160), m_marker);
    setCaretLineVisible(true);
    setCaretLineBackgroundColor(QColor(0xf3f6fa));
    connect(this, &QsciScintilla::cursorPositionChanged, this, [this](int line, int) {
        if (hasFocus()) {
            if (const int s = m_map.sourceLine(line + 1); s > 0) {
                Q_EMIT sourceLineSelected(s);
            }
        }
    });
}

void PtxView::setPtx(const QByteArray &ptx, const QString &sourceFile)
{
    const int first = firstVisibleLine();
    setReadOnly(false);
    setText(QString::fromLatin1(ptx));
    setReadOnly(true);
    setFirstVisibleLine(first); // recompiles while typing must not make the view jump
    m_map = PtxLineMap(ptx, sourceFile);
    m_highlighted.clear();
}

void PtxView::setAssembly(const QByteArray &text, const PtxLineMap &map)
{
    const int first = firstVisibleLine();
    setReadOnly(false);
    setText(QString::fromLatin1(text));
    setReadOnly(true);
    setFirstVisibleLine(first);
    m_map = map;
    m_highlighted.clear();
}

int PtxView::highlightSourceLines(int first, int last)
{
    markerDeleteAll(m_marker);
    m_highlighted = m_map.ptxLines(first, last);
    for (int l : m_highlighted) {
        markerAdd(l - 1, m_marker);
    }
    if (!m_highlighted.isEmpty()) {
        ensureLineVisible(m_highlighted.first() - 1);
    }
    return int(m_highlighted.size());
}

} // namespace Kp
