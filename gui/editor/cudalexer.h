#pragma once

#include <Qsci/qscilexercpp.h>

namespace Kp {

/**
 * C++ lexing plus CUDA: execution-space and memory qualifiers, launch bounds
 * and the like as keywords; built-in variables, vector types and intrinsics
 * as the second keyword set. Colours follow the widget palette (light/dark).
 */
class CudaLexer : public QsciLexerCPP
{
    Q_OBJECT
public:
    explicit CudaLexer(QObject *parent = nullptr);

    const char *language() const override { return "CUDA"; }
    const char *keywords(int set) const override;
    /**
     * Only labels open an indented block by keyword: QsciLexerCPP's list
     * (if, for, while, else, ...) indented the line after `if (i >= n)
     * return;` too. Braceless bodies are EditorTyping's (typing.h).
     */
    const char *blockStartKeyword(int *style = nullptr) const override;

    /** Re-derives colours from a palette (call when the palette changes). */
    void applyPalette(const QPalette &palette);
};

} // namespace Kp
