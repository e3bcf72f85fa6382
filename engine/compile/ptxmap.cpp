#include "ptxmap.h"

#include <QRegularExpression>
#include <QSet>
#include <QStandardPaths>

#include "compiler.h"

#include <QDir>
#include <QFileInfo>

namespace Kp {

PtxLineMap::PtxLineMap(const QByteArray &ptx, const QString &sourceFile)
{
    static const QRegularExpression file(QStringLiteral(R"(^\s*\.file\s+(\d+)\s+"([^"]*)\")"));
    static const QRegularExpression loc(QStringLiteral(R"(^\s*\.loc\s+(\d+)\s+(\d+))"));
    const QList<QByteArray> lines = ptx.split('\n');
    // .file directives come after the code that uses them, so read them first.
    QSet<int> ours;
    for (const QByteArray &raw : lines) {
        if (const auto m = file.match(QString::fromLatin1(raw)); m.hasMatch()) {
            const QString name = m.captured(2);
            if (name == sourceFile || name.endsWith(QLatin1Char('/') + sourceFile)) {
                ours.insert(m.captured(1).toInt());
            }
        }
    }
    int current = 0;
    m_sourceOfPtx.reserve(lines.size());
    for (const QByteArray &raw : lines) {
        const QString l = QString::fromLatin1(raw);
        const QString t = l.trimmed();
        if (const auto m = loc.match(l); m.hasMatch()) {
            current = ours.contains(m.captured(1).toInt()) ? m.captured(2).toInt() : 0;
        } else if (t == QLatin1String("}") || t.startsWith(QLatin1String(".visible")) ||
                   t.startsWith(QLatin1String(".entry")) || t.startsWith(QLatin1String(".file"))) {
            current = 0; // a new function starts without a location
        }
        m_sourceOfPtx.append(current);
    }
}

int PtxLineMap::sourceLine(int ptxLine) const
{
    return ptxLine >= 1 && ptxLine <= m_sourceOfPtx.size() ? m_sourceOfPtx[ptxLine - 1] : 0;
}

QList<int> PtxLineMap::ptxLines(int first, int last) const
{
    QList<int> out;
    for (qsizetype i = 0; i < m_sourceOfPtx.size(); ++i) {
        const int s = m_sourceOfPtx[i];
        // The .loc line itself maps to its own source line too, which reads well.
        if (s >= first && s <= last && s > 0) {
            out.append(int(i) + 1);
        }
    }
    return out;
}

} // namespace Kp

namespace Kp {

PtxLineMap PtxLineMap::fromSass(const QByteArray &sass, const QString &sourceFile)
{
    static const QRegularExpression info(QStringLiteral(R"re(//## File "([^"]*)", line (\d+))re"));
    PtxLineMap map;
    int current = 0;
    for (const QByteArray &raw : sass.split('\n')) {
        const QString l = QString::fromLatin1(raw);
        if (const auto m = info.match(l); m.hasMatch()) {
            const QString name = m.captured(1);
            const bool ours = name == sourceFile || name.endsWith(QLatin1Char('/') + sourceFile);
            current = ours ? m.captured(2).toInt() : 0;
        } else if (l.trimmed().startsWith(QLatin1String(".text.")) ||
                   l.trimmed().startsWith(QLatin1String(".section"))) {
            current = 0;
        }
        map.m_sourceOfPtx.append(current);
    }
    return map;
}

QString PtxLineMap::findDisassembler()
{
    QStringList dirs;
    for (const QString &inc : Compiler::toolkitIncludeDirs()) {
        if (!inc.endsWith(QLatin1String("/cccl"))) {
            dirs << QFileInfo(inc).dir().filePath(QStringLiteral("bin"));
        }
    }
    for (const char *tool : {"nvdisasm", "cuobjdump"}) {
        const QString name = QString::fromLatin1(tool);
        for (const QString &d : dirs) {
            const QString path = QDir(d).filePath(name);
            if (QFileInfo(path).isExecutable()) {
                return path;
            }
        }
        const QString onPath = QStandardPaths::findExecutable(name);
        if (!onPath.isEmpty()) {
            return onPath;
        }
    }
    return {};
}

} // namespace Kp
