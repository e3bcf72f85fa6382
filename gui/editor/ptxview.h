#pragma once

#include "compile/ptxmap.h"

#include <Qsci/qsciscintilla.h>

namespace Kp {

/** Read-only, highlighted PTX, with the lines from the selected source lines marked. */
class PtxView : public QsciScintilla
{
    Q_OBJECT
public:
    explicit PtxView(QWidget *parent = nullptr);

    void setPtx(const QByteArray &ptx, const QString &sourceFile);
    /** Any assembly text with its own line map (SASS). */
    void setAssembly(const QByteArray &text, const PtxLineMap &map);
    const PtxLineMap &lineMap() const { return m_map; }

    /** Marks the PTX lines generated from source lines [first, last]; returns how many. */
    int highlightSourceLines(int first, int last);
    /** PTX lines currently marked (1-based). */
    QList<int> highlightedLines() const { return m_highlighted; }

Q_SIGNALS:
    /** The user put the cursor on a PTX line that came from this source line. */
    void sourceLineSelected(int sourceLine);

private:
    PtxLineMap m_map;
    QList<int> m_highlighted;
    int m_marker = 0;
};

} // namespace Kp
