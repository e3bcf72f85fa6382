#include "codeeditor.h"

#include "cudalexer.h"
#include "typing.h"

#include <QAction>
#include <QEvent>
#include <QFontDatabase>
#include <QKeyEvent>
#include <Qsci/qsciapis.h>

#include <algorithm>

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
    new EditorTyping(this); // braceless if/for bodies, undo by word
    setBraceMatching(QsciScintilla::SloppyBraceMatch);
    setCaretLineVisible(true);
    const bool dark = palette().color(QPalette::Base).lightness() < 128;
    setEolMode(QsciScintilla::EolUnix);

    setMarginsFont(monospaceFont());
    setMarginType(0, QsciScintilla::NumberMargin);
    setMarginLineNumbers(0, true);
    setFolding(QsciScintilla::BoxedTreeFoldStyle, 2);
    applyPaletteColours();
    // Grow the horizontal scroll range with the longest line instead of a fixed 2000 px.
    SendScintilla(SCI_SETSCROLLWIDTH, 1);
    SendScintilla(SCI_SETSCROLLWIDTHTRACKING, 1);
    connect(this, &QsciScintilla::linesChanged, this, &CodeEditor::updateMarginWidth);
    updateMarginWidth();

    // Margin 1: error and warning markers. Margin 2 is folding. Margin 3 and
    // markers 8 to 12 belong to the memory-access heat (accessheat.h).
    setMarginType(1, QsciScintilla::SymbolMargin);
    setMarginWidth(1, 14);
    setMarginSensitivity(1, false);
    m_errorMarker = markerDefine(QsciScintilla::Circle, 0);
    setMarkerBackgroundColor(QColor(0xd73a49), m_errorMarker);
    setMarkerForegroundColor(QColor(0xd73a49), m_errorMarker);
    m_warningMarker = markerDefine(QsciScintilla::Circle, 1);
    setMarkerBackgroundColor(QColor(0xe3a008), m_warningMarker);
    setMarkerForegroundColor(QColor(0xe3a008), m_warningMarker);
    m_highlightMarker = markerDefine(QsciScintilla::Background, 4);
    setMarkerBackgroundColor(dark ? QColor(0x4a4020) : QColor(255, 236, 160), m_highlightMarker);
    setAnnotationDisplay(QsciScintilla::AnnotationIndented);
    QFont annotationFont = monospaceFont();
    annotationFont.setItalic(true);
    m_errorStyle = new QsciStyle(-1, QStringLiteral("kpg-error"), dark ? QColor(0xffa198) : QColor(0x9a1b1b),
                                 dark ? QColor(0x3c1f1f) : QColor(0xfde8e8), annotationFont);
    m_warningStyle = new QsciStyle(-1, QStringLiteral("kpg-warning"), dark ? QColor(0xf2cc60) : QColor(0x7a5200),
                                   dark ? QColor(0x3a3220) : QColor(0xfff5d6), annotationFont);

    // Completion and call tips for CUDA words and the common intrinsics.
    auto *apis = new QsciAPIs(m_lexer);
    for (int set : {1, 2}) {
        for (const QString &w :
             QString::fromLatin1(m_lexer->keywords(set)).split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
            apis->add(w);
        }
    }
    for (const char *tip : {
             "atomicAdd(T *address, T val) -> T: old value",
             "atomicCAS(T *address, T compare, T val) -> T: old value",
             "atomicExch(T *address, T val) -> T: old value",
             "atomicMax(T *address, T val) -> T: old value",
             "atomicMin(T *address, T val) -> T: old value",
             "__shfl_sync(unsigned mask, T var, int srcLane, int width=warpSize) -> T",
             "__shfl_down_sync(unsigned mask, T var, unsigned delta, int width=warpSize) -> T",
             "__shfl_up_sync(unsigned mask, T var, unsigned delta, int width=warpSize) -> T",
             "__shfl_xor_sync(unsigned mask, T var, int laneMask, int width=warpSize) -> T",
             "__ballot_sync(unsigned mask, int predicate) -> unsigned",
             "__syncthreads() -> void: barrier for the whole block",
             "__syncwarp(unsigned mask=0xffffffff) -> void",
             "__ldg(const T *address) -> T: load through the read-only cache",
             "__popc(unsigned x) -> int: number of set bits",
             "__fmaf_rn(float a, float b, float c) -> float",
             "make_float4(float x, float y, float z, float w) -> float4",
             "printf(const char *format, ...) -> int",
         }) {
        apis->add(QString::fromLatin1(tip));
    }
    // QsciAPIs prepares on its own thread; destroying it before that ends
    // gives the thread 500 ms and then aborts the program (QScintilla's
    // worker destructor), which a busy machine can exceed: ~CodeEditor lets
    // an unfinished preparation outlive the editor instead.
    m_apis = apis;
    connect(apis, &QsciAPIs::apiPreparationFinished, this, [this] { m_apisPreparing = false; });
    connect(apis, &QsciAPIs::apiPreparationCancelled, this, [this] { m_apisPreparing = false; });
    m_apisPreparing = true;
    apis->prepare();
    setAutoCompletionSource(QsciScintilla::AcsAll);
    setAutoCompletionThreshold(3);
    setAutoCompletionCaseSensitivity(true);
    setCallTipsStyle(QsciScintilla::CallTipsNoContext);
    setCallTipsVisible(0);
}

void CodeEditor::applyPaletteColours()
{
    const bool dark = palette().color(QPalette::Base).lightness() < 128;
    setCaretLineBackgroundColor(dark ? QColor(0x2a2f36) : QColor(0xf3f6fa));
    setMarginsForegroundColor(palette().color(QPalette::PlaceholderText));
    setMarginsBackgroundColor(palette().color(QPalette::Window));
    setFoldMarginColors(palette().color(QPalette::Window), palette().color(QPalette::Window));
}

bool CodeEditor::event(QEvent *event)
{
    if (event->type() == QEvent::ShortcutOverride) {
        const QKeySequence pressed(static_cast<QKeyEvent *>(event)->keyCombination());
        for (const QAction *a : std::as_const(m_overriding)) {
            for (const QKeySequence &k : a->shortcuts()) {
                if (k.matches(pressed) == QKeySequence::ExactMatch) {
                    event->ignore(); // not an override: the shortcut goes to the action
                    return true;
                }
            }
        }
    }
    return QsciScintilla::event(event);
}

void CodeEditor::changeEvent(QEvent *event)
{
    QsciScintilla::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && m_lexer) {
        m_lexer->applyPalette(palette());
        applyPaletteColours();
        if (m_highlightMarker >= 0) {
            const bool dark = palette().color(QPalette::Base).lightness() < 128;
            setMarkerBackgroundColor(dark ? QColor(0x4a4020) : QColor(255, 236, 160), m_highlightMarker);
        }
    }
}

CodeEditor::~CodeEditor()
{
    if (m_apisPreparing && m_apis && m_lexer) {
        // Let the preparation finish on its own. Its thread reads the lexer
        // (word separators), so the lexer outlives the editor with its APIs
        // and both are deleted once the thread is done (an editor destroyed
        // within milliseconds of its creation crashed there otherwise).
        setLexer(nullptr);
        m_lexer->setParent(nullptr);
        QObject *lexer = m_lexer;
        connect(m_apis, &QsciAPIs::apiPreparationFinished, lexer, &QObject::deleteLater);
        connect(m_apis, &QsciAPIs::apiPreparationCancelled, lexer, &QObject::deleteLater);
    }
}

void CodeEditor::setDiagnostics(const QList<Diagnostic> &diagnostics, const QString &fileName)
{
    clearAnnotations();
    markerDeleteAll(m_errorMarker);
    markerDeleteAll(m_warningMarker);
    QMap<int, QList<const Diagnostic *>> byLine;
    for (const Diagnostic &d : diagnostics) {
        if (d.line > 0 && d.file == fileName && d.line <= lines()) {
            byLine[d.line - 1].append(&d);
        } else if (d.line == 0 && (d.file.isEmpty() || d.file == fileName)) {
            // No line from NVRTC: "At end of source" goes under the last line,
            // everything else at the top, so no error is only in Problems.
            const bool atEnd = d.message.startsWith(QLatin1String("At end of source"));
            byLine[atEnd ? qMax(0, lines() - 1) : 0].append(&d);
        }
    }
    for (auto it = byLine.cbegin(); it != byLine.cend(); ++it) {
        QStringList texts;
        bool error = false;
        for (const Diagnostic *d : it.value()) {
            error = error || d->severity == Diagnostic::Severity::Error;
            const QString col = d->column > 0 ? QStringLiteral("col %1: ").arg(d->column) : QString();
            texts << QStringLiteral("%1: %2%3").arg(Diagnostic::severityName(d->severity), col, d->message);
        }
        annotate(it.key(), texts.join(QLatin1Char('\n')), error ? *m_errorStyle : *m_warningStyle);
        markerAdd(it.key(), error ? m_errorMarker : m_warningMarker);
    }
}

QList<int> CodeEditor::markedLines(Diagnostic::Severity severity) const
{
    const int marker = severity == Diagnostic::Severity::Error ? m_errorMarker : m_warningMarker;
    QList<int> out;
    for (int line = markerFindNext(0, 1u << marker); line >= 0; line = markerFindNext(line + 1, 1u << marker)) {
        out.append(line);
    }
    return out;
}

void CodeEditor::highlightLines(int first, int last)
{
    markerDeleteAll(m_highlightMarker);
    for (int l = first; l <= last && first > 0; ++l) {
        markerAdd(l - 1, m_highlightMarker);
    }
    if (first > 0) {
        ensureLineVisible(first - 1);
    }
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
