#include "deviceglobals.h"

#include <QRegularExpression>

namespace Kp {

QList<PtxGlobal> ptxGlobals(const QByteArray &ptx)
{
    // Module scope: declarations start their line; inside a function they are indented.
    static const QRegularExpression decl(QStringLiteral("^(?:\\.visible\\s+|\\.weak\\s+|\\.common\\s+)?\\.(global|"
                                                        "const)\\s+(?:\\.align\\s+\\d+\\s+)?(?:\\.v\\d\\s+)?"
                                                        "\\.\\w+\\s+([A-Za-z_$][\\w$]*)\\s*(\\[[^\\]]*\\])*\\s*(=)?"),
                                         QRegularExpression::MultilineOption);
    QList<PtxGlobal> out;
    for (auto it = decl.globalMatch(QString::fromLatin1(ptx)); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        PtxGlobal g;
        g.name = m.captured(2);
        if (g.name.startsWith(QLatin1Char('$'))) {
            continue; // "$str": printf's format strings
        }
        g.constant = m.captured(1) == QLatin1String("const");
        g.initialised = !m.captured(4).isEmpty();
        out << g;
    }
    return out;
}

QList<PtxGlobal> unfilledGlobalsUsedBy(const QByteArray &ptx, const QString &entry)
{
    const QString text = QString::fromLatin1(ptx);
    const QRegularExpression head(
        QStringLiteral("^(?:\\.visible\\s+|\\.weak\\s+)?\\.entry\\s+%1\\s*\\(").arg(QRegularExpression::escape(entry)),
        QRegularExpression::MultilineOption);
    const QRegularExpressionMatch hm = head.match(text);
    if (!hm.hasMatch()) {
        return {};
    }
    // The body: from the first '{' after the parameter list to its matching '}'.
    const qsizetype open = text.indexOf(QLatin1Char('{'), text.indexOf(QLatin1Char(')'), hm.capturedEnd()));
    if (open < 0) {
        return {};
    }
    int depth = 0;
    qsizetype end = open;
    for (; end < text.size(); ++end) {
        if (text[end] == QLatin1Char('{')) {
            ++depth;
        } else if (text[end] == QLatin1Char('}') && --depth == 0) {
            break;
        }
    }
    const QString body = text.mid(open, end - open);
    QList<PtxGlobal> out;
    for (const PtxGlobal &g : ptxGlobals(ptx)) {
        if (g.initialised) {
            continue;
        }
        const QRegularExpression use(QStringLiteral("(?<![\\w$])%1(?![\\w$])").arg(QRegularExpression::escape(g.name)));
        if (use.match(body).hasMatch()) {
            out << g;
        }
    }
    return out;
}

} // namespace Kp
