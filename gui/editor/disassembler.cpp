#include "disassembler.h"

#include <QProcess>
#include <QTemporaryFile>

namespace Kp {

Disassembler::Disassembler(QObject *parent)
    : QObject(parent)
{
}

Disassembler::~Disassembler()
{
    // A disassembler still running is killed by its QProcess destructor, which
    // emits finished() while this object is half destroyed: cut those
    // connections first.
    for (QProcess *proc : findChildren<QProcess *>(Qt::FindDirectChildrenOnly)) {
        proc->disconnect(this);
        // Ended and reaped here rather than by QProcess's destructor, which
        // would warn that it destroys a running process.
        proc->kill();
        proc->waitForFinished(1000);
    }
}

void Disassembler::disassemble(const CompileResult &r, const QString &sourceFile)
{
    static const QString tool = PtxLineMap::findDisassembler();
    const quint64 generation = ++m_generation;
    if (r.cubin.isEmpty()) {
        Q_EMIT finished(tr("// No SASS: arch %1 is virtual; choose an sm_XX arch.\n").arg(r.arch).toUtf8(), {});
        return;
    }
    if (tool.isEmpty()) {
        Q_EMIT finished(tr("// SASS needs nvdisasm or cuobjdump from the CUDA Toolkit;\n"
                           "// neither is in the toolkit's bin folder or on PATH.\n")
                            .toUtf8(),
                        {});
        return;
    }
    auto *file = new QTemporaryFile(this);
    if (!file->open() || file->write(r.cubin) != r.cubin.size() || !file->flush()) {
        delete file;
        Q_EMIT finished(tr("// Cannot write the cubin to a temporary file for the disassembler.\n").toUtf8(), {});
        return;
    }
    auto *proc = new QProcess(this);
    const bool nvdisasm = tool.endsWith(QLatin1String("nvdisasm"));
    connect(proc, &QProcess::finished, this, [this, proc, file, generation, nvdisasm, sourceFile](int code) {
        const QByteArray out = proc->readAllStandardOutput();
        const QByteArray err = proc->readAllStandardError();
        proc->deleteLater();
        file->deleteLater();
        if (generation != m_generation) {
            return; // superseded
        }
        if (code != 0) {
            Q_EMIT finished("// disassembler failed: " + err, {});
        } else {
            Q_EMIT finished(out, nvdisasm ? PtxLineMap::fromSass(out, sourceFile) : PtxLineMap());
        }
    });
    proc->start(tool, nvdisasm ? QStringList{QStringLiteral("--print-line-info"), QStringLiteral("--print-code"),
                                             file->fileName()}
                               : QStringList{QStringLiteral("-sass"), file->fileName()});
}

} // namespace Kp
