#include "deviceglobals.h"

#include <QRegularExpression>

namespace Kp {

QList<PtxGlobal> ptxGlobals(const QByteArray &ptx)
{
    // Module scope: declarations start their line; inside a function they are indented.
    static const QRegularExpression decl(
        QStringLiteral("^(?:\\.visible\\s+|\\.weak\\s+|\\.common\\s+)?\\.(global|const)\\s+(?:\\.align\\s+\\d+\\s+)?"
                       "(?:\\.v(\\d)\\s+)?\\.(\\w+)\\s+([A-Za-z_$][\\w$]*)\\s*((?:\\[[^\\]]*\\]\\s*)*)(=)?"),
        QRegularExpression::MultilineOption);
    static const QRegularExpression extent(QStringLiteral("\\[\\s*(\\d*)\\s*\\]"));
    QList<PtxGlobal> out;
    for (auto it = decl.globalMatch(QString::fromLatin1(ptx)); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        PtxGlobal g;
        g.name = m.captured(4);
        if (g.name.startsWith(QLatin1Char('$'))) {
            continue; // "$str": printf's format strings
        }
        g.constant = m.captured(1) == QLatin1String("const");
        g.initialised = !m.captured(6).isEmpty();
        // .b8/.u16/.f32/.s64/.b128: the digits are the width in bits.
        const QString type = m.captured(3);
        const int bits = type.mid(1).toInt();
        qint64 bytes = bits >= 8 && bits % 8 == 0 ? bits / 8 : -1;
        if (bytes > 0 && !m.captured(2).isEmpty()) {
            bytes *= m.captured(2).toInt();
        }
        for (auto e = extent.globalMatch(m.captured(5)); bytes > 0 && e.hasNext();) {
            const QString n = e.next().captured(1);
            bool ok = false;
            const qint64 count = n.toLongLong(&ok);
            bytes = ok && count >= 0 && count < (qint64(1) << 40) && bytes < (qint64(1) << 40) ? bytes * count : -1;
        }
        g.bytes = bytes;
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

const PtxGlobal *findPtxGlobal(const QList<PtxGlobal> &globals, const QString &symbol)
{
    QStringList names{symbol};
    const QStringList parts = symbol.split(QStringLiteral("::"));
    if (parts.size() == 1) {
        names << QStringLiteral("_ZL%1%2").arg(symbol.size()).arg(symbol);
    } else {
        QString mangled = QStringLiteral("_ZN");
        for (const QString &p : parts) {
            mangled += QString::number(p.size()) + p;
        }
        names << mangled + QLatin1Char('E');
    }
    for (const QString &n : names) {
        for (const PtxGlobal &g : globals) {
            if (g.name == n) {
                return &g;
            }
        }
    }
    return nullptr;
}

QString ptxGlobalSourceName(const QString &ptxName)
{
    // <length><identifier> pieces after _ZL or _ZN (ending in E); anything
    // else (template arguments, other encodings) is left as it is.
    const bool nested = ptxName.startsWith(QLatin1String("_ZN"));
    if (!nested && !ptxName.startsWith(QLatin1String("_ZL"))) {
        return ptxName;
    }
    qsizetype i = 3;
    QString last;
    while (i < ptxName.size() && ptxName[i].isDigit()) {
        qsizetype j = i;
        while (j < ptxName.size() && ptxName[j].isDigit()) {
            ++j;
        }
        const qsizetype len = QStringView(ptxName).mid(i, j - i).toLongLong();
        if (len <= 0 || j + len > ptxName.size()) {
            return ptxName;
        }
        last = ptxName.mid(j, len);
        i = j + len;
    }
    const bool complete = nested ? i == ptxName.size() - 1 && ptxName.endsWith(QLatin1Char('E')) : i == ptxName.size();
    return complete && !last.isEmpty() ? last : ptxName;
}

QString ptxGlobalText(const PtxGlobal &g)
{
    return QStringLiteral("%1 variable '%2'%3")
        .arg(g.constant ? QStringLiteral("__constant__") : QStringLiteral("__device__"), g.name,
             g.bytes >= 0 ? QStringLiteral(" (%1 bytes)").arg(g.bytes) : QString());
}

} // namespace Kp
