#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

namespace Kp {

/**
 * Which PTX lines came from which source lines, from the .file/.loc
 * directives that -lineinfo puts in the PTX. Lines are 1-based on both sides.
 */
class PtxLineMap
{
public:
    PtxLineMap() = default;
    /** sourceFile: the program name ("kernel.cu"); .loc lines for other files are ignored. */
    PtxLineMap(const QByteArray &ptx, const QString &sourceFile);

    /**
     * The same for SASS from nvdisasm --print-line-info, whose
     * '//## File "kernel.cu", line 12' comments precede the instructions.
     */
    static PtxLineMap fromSass(const QByteArray &sass, const QString &sourceFile);

    /** The source line a PTX line came from, or 0. */
    int sourceLine(int ptxLine) const;
    /** Every PTX line that came from source lines [first, last]. */
    QList<int> ptxLines(int firstSourceLine, int lastSourceLine) const;
    bool isEmpty() const { return m_sourceOfPtx.isEmpty(); }

    /** nvdisasm (preferred: it prints line info) or cuobjdump, from the toolkit or PATH; empty if neither. */
    static QString findDisassembler();

private:
    QList<int> m_sourceOfPtx; // index: ptx line - 1
};

} // namespace Kp
