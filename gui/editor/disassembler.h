#pragma once

#include "compile/compiletypes.h"
#include "compile/ptxmap.h"

#include <QObject>

namespace Kp {

/**
 * SASS for a compile result: nvdisasm --print-line-info (or cuobjdump) on
 * the cubin, in a child process so the GUI never waits on it. A newer
 * request supersedes an older one still running (its output is dropped).
 * GUI thread only.
 */
class Disassembler : public QObject
{
    Q_OBJECT
public:
    explicit Disassembler(QObject *parent = nullptr);
    ~Disassembler() override;

    /** Disassembles result's cubin; finished() brings the text, or says why there is none. */
    void disassemble(const CompileResult &result, const QString &sourceFile);

Q_SIGNALS:
    /** The SASS (or a comment saying why there is none) and its map to source lines. */
    void finished(const QByteArray &text, const PtxLineMap &map);

private:
    quint64 m_generation = 0;
};

} // namespace Kp
