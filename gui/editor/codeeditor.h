#pragma once

#include "compile/compiletypes.h"

#include <QFont>
#include <Qsci/qsciscintilla.h>
#include <Qsci/qscistyle.h>

class QsciAPIs;

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
    ~CodeEditor() override;

    CudaLexer *cudaLexer() const { return m_lexer; }

    /** The style Scintilla gave the character at a byte position (tests and tooltips). */
    int styleAt(int position) const;

    /**
     * Shows diagnostics for this file: an annotation under each line and a
     * margin marker; diagnostics for other files and without a line are left
     * to the problems list.
     */
    void setDiagnostics(const QList<Diagnostic> &diagnostics, const QString &fileName);
    /** Lines (0-based) that carry an error / warning marker now. */
    QList<int> markedLines(Diagnostic::Severity severity) const;
    /** The annotation text under a line (0-based). */
    QString annotationAt(int line) const { return annotation(line); }

    /** Marks source lines [first, last] (1-based) as the origin of a selected PTX line. */
    void highlightLines(int first, int last);

    /**
     * Actions whose shortcuts win over typing here. QScintilla claims every
     * key with text (Ctrl+= would type "="); a key that a menu action owns
     * is left to the action, as in any editor.
     */
    void addOverridingActions(const QList<QAction *> &actions) { m_overriding << actions; }

protected:
    bool event(QEvent *event) override;
    /** Follows palette changes (the light/dark theme switch). */
    void changeEvent(QEvent *event) override;

private:
    void updateMarginWidth();
    void applyPaletteColours();

    CudaLexer *m_lexer = nullptr;
    QsciAPIs *m_apis = nullptr;
    bool m_apisPreparing = false;
    int m_errorMarker = 0;
    int m_warningMarker = 0;
    int m_highlightMarker = 0;
    QsciStyle *m_errorStyle = nullptr;
    QsciStyle *m_warningStyle = nullptr;
    QList<QAction *> m_overriding;
};

} // namespace Kp
