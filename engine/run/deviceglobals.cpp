#include "deviceglobals.h"

#include <QHash>
#include <QMutex>
#include <QRegularExpression>
#include <QSet>
#include <QStringView>

namespace Kp {

namespace {

QList<PtxGlobal> scanGlobals(const QByteArray &ptx)
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

QList<PtxGlobal> scanUnfilledUse(const QByteArray &ptx, const QList<PtxGlobal> &globals, const QString &entry)
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
    // The body's names, each a whole run of [A-Za-z0-9_$]: a variable is
    // used when its name is one of them. One pass, not one search per
    // variable (a toolkit header declares hundreds: 784 with cub took 17 ms).
    const QStringView body = QStringView(text).mid(open, end - open);
    QSet<QStringView> names;
    const auto nameChar = [](QChar c) {
        return (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z') || (c >= u'0' && c <= u'9') || c == u'_' ||
               c == u'$';
    };
    for (qsizetype i = 0; i < body.size();) {
        if (!nameChar(body[i])) {
            ++i;
            continue;
        }
        qsizetype j = i;
        while (j < body.size() && nameChar(body[j])) {
            ++j;
        }
        names.insert(body.mid(i, j - i));
        i = j;
    }
    QList<PtxGlobal> out;
    for (const PtxGlobal &g : globals) {
        if (!g.initialised && names.contains(QStringView(g.name))) {
            out << g;
        }
    }
    return out;
}

/**
 * What the scans above found in the last few modules. Every run asks them
 * again of the same PTX (a Play frame prepares its run anew), and with a
 * toolkit header the PTX is large: the regular expressions over it cost a
 * frame's budget. A module is known by its text (shared, not copied).
 */
struct PtxScans
{
    QByteArray ptx;
    QList<PtxGlobal> globals;
    QHash<QString, QList<PtxGlobal>> unfilledUse; // entry -> globals
};

QMutex g_scansMutex;
QList<PtxScans> g_scans; // newest first, a few

/** The scans of ptx, made now if it is not among the last few (g_scansMutex held). */
PtxScans &scansOf(const QByteArray &ptx)
{
    for (qsizetype i = 0; i < g_scans.size(); ++i) {
        if (g_scans[i].ptx == ptx) {
            if (i > 0) {
                g_scans.move(i, 0);
            }
            return g_scans.first();
        }
    }
    g_scans.prepend(PtxScans{ptx, scanGlobals(ptx), {}});
    while (g_scans.size() > 4) {
        g_scans.removeLast();
    }
    return g_scans.first();
}

} // namespace

QList<PtxGlobal> ptxGlobals(const QByteArray &ptx)
{
    QMutexLocker lock(&g_scansMutex);
    return scansOf(ptx).globals;
}

QList<PtxGlobal> unfilledGlobalsUsedBy(const QByteArray &ptx, const QString &entry)
{
    QMutexLocker lock(&g_scansMutex);
    PtxScans &scans = scansOf(ptx);
    auto it = scans.unfilledUse.find(entry);
    if (it == scans.unfilledUse.end()) {
        it = scans.unfilledUse.insert(entry, scanUnfilledUse(ptx, scans.globals, entry));
    }
    return *it;
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
