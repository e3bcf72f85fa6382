#include "logparse.h"

#include <QRegularExpression>

namespace Kp {

namespace {
bool isCaretLine(const QString &l)
{
    const QString t = l.trimmed();
    return t == QLatin1String("^");
}

bool isNoise(const QString &l)
{
    return l.contains(QLatin1String("precompiled header")) ||
           l.startsWith(QLatin1String("Remark: The warnings can be suppressed")) ||
           l.contains(QLatin1String("detected in the compilation of")) ||
           l.startsWith(QLatin1String("Compilation terminated")) || l.startsWith(QLatin1String("ptxas info")) ||
           l.startsWith(QLatin1String("ptxas         ."));
}
} // namespace

QString userLog(const QString &log)
{
    QString text = log;
    while (text.endsWith(QChar(0))) {
        text.chop(1);
    }
    if (!text.contains(QLatin1String("precompiled header"))) {
        return text;
    }
    QStringList kept;
    for (const QString &l : text.split(QLatin1Char('\n'))) {
        if (!l.contains(QLatin1String("precompiled header"))) {
            kept << l;
        }
    }
    return kept.join(QLatin1Char('\n'));
}

QList<Diagnostic> parseDiagnostics(const QString &log)
{
    static const QRegularExpression header(
        QStringLiteral(
            R"(^(.*?)\((\d+)\): (catastrophic error|error|warning|remark|note)(?: #(\d+)(?:-[A-Z])?)?: (.*)$)"),
        QRegularExpression::CaseInsensitiveOption);
    static const QRegularExpression loose(
        QStringLiteral(R"(^(nvrtc|ptxas|nvlink)\s*:?\s*(fatal|error|warning)\s*:\s*(.*)$)"),
        QRegularExpression::CaseInsensitiveOption);

    // Errors NVRTC prints without a file(line) prefix: the end of the source
    // (an unclosed brace or parenthesis) and the command line (-D 1X=2).
    static const QRegularExpression atEnd(
        QStringLiteral(R"(^At end of source: (catastrophic error|error|warning|remark)(?: #(\d+)(?:-[A-Z])?)?: (.*)$)"),
        QRegularExpression::CaseInsensitiveOption);
    static const QRegularExpression commandLine(QStringLiteral(R"(^Command-line (error|warning): (.*)$)"),
                                                QRegularExpression::CaseInsensitiveOption);

    const QStringList lines = log.split(QLatin1Char('\n'));
    QList<Diagnostic> out;
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QString &l = lines[i];
        if (const auto m = loose.match(l); m.hasMatch()) {
            Diagnostic d;
            d.severity = m.captured(2).compare(QLatin1String("warning"), Qt::CaseInsensitive) == 0
                             ? Diagnostic::Severity::Warning
                             : Diagnostic::Severity::Error;
            d.message = m.captured(3).trimmed();
            d.file = m.captured(1).toLower();
            out.append(d);
            continue;
        }
        if (const auto m = atEnd.match(l); m.hasMatch()) {
            Diagnostic d;
            const QString sev = m.captured(1).toLower();
            d.severity = sev.contains(QLatin1String("error")) ? Diagnostic::Severity::Error
                         : sev == QLatin1String("warning")    ? Diagnostic::Severity::Warning
                                                              : Diagnostic::Severity::Remark;
            d.number = m.captured(2).isEmpty() ? -1 : m.captured(2).toInt();
            d.message = QStringLiteral("At end of source: ") + m.captured(3).trimmed();
            out.append(d);
            continue;
        }
        if (const auto m = commandLine.match(l); m.hasMatch()) {
            Diagnostic d;
            d.file = QStringLiteral("<options>");
            d.severity = m.captured(1).compare(QLatin1String("warning"), Qt::CaseInsensitive) == 0
                             ? Diagnostic::Severity::Warning
                             : Diagnostic::Severity::Error;
            d.message = m.captured(2).trimmed();
            out.append(d);
            continue;
        }
        const auto m = header.match(l);
        if (!m.hasMatch() || isNoise(l)) {
            continue;
        }
        Diagnostic d;
        d.file = m.captured(1);
        d.line = m.captured(2).toInt();
        const QString sev = m.captured(3).toLower();
        d.severity = sev.contains(QLatin1String("error")) ? Diagnostic::Severity::Error
                     : sev == QLatin1String("warning")    ? Diagnostic::Severity::Warning
                     : sev == QLatin1String("remark")     ? Diagnostic::Severity::Remark
                                                          : Diagnostic::Severity::Note;
        d.number = m.captured(4).isEmpty() ? -1 : m.captured(4).toInt();
        d.message = m.captured(5).trimmed();
        // The block runs to the next blank line or header.
        qsizetype end = i + 1;
        while (end < lines.size() && !lines[end].trimmed().isEmpty() && !header.match(lines[end]).hasMatch()) {
            ++end;
        }
        qsizetype caret = -1;
        for (qsizetype j = i + 1; j < end; ++j) {
            if (isCaretLine(lines[j])) {
                caret = j;
            }
        }
        if (caret > i + 1) {
            // NVRTC echoes the source line indented by two spaces, caret below it.
            d.column = int(lines[caret].indexOf(QLatin1Char('^'))) - 2 + 1;
            if (d.column < 1) {
                d.column = 1;
            }
        }
        for (qsizetype j = i + 1; j < end; ++j) {
            if (j == caret || j == caret - 1) {
                continue;
            }
            d.message += QLatin1Char('\n') + lines[j].trimmed();
        }
        out.append(d);
        i = end - 1;
    }
    return out;
}

QHash<QString, KernelResources> parsePtxasInfo(const QString &log)
{
    static const QRegularExpression entry(QStringLiteral(R"(Compiling entry function '([^']+)')"));
    static const QRegularExpression props(QStringLiteral(R"(Function properties for (\S+))"));
    static const QRegularExpression stack(QStringLiteral(R"((\d+) bytes stack frame)"));
    static const QRegularExpression spillSt(QStringLiteral(R"((\d+) bytes spill stores)"));
    static const QRegularExpression spillLd(QStringLiteral(R"((\d+) bytes spill loads)"));
    static const QRegularExpression regs(QStringLiteral(R"(Used (\d+) registers)"));
    static const QRegularExpression bars(QStringLiteral(R"(used (\d+) barriers)"));
    static const QRegularExpression smem(QStringLiteral(R"((\d+) bytes smem)"));
    static const QRegularExpression cmem(QStringLiteral(R"((\d+) bytes cmem\[0\])"));

    QHash<QString, KernelResources> out;
    QString entryName;
    QString propsName;
    for (const QString &l : log.split(QLatin1Char('\n'))) {
        if (!l.startsWith(QLatin1String("ptxas"))) {
            continue;
        }
        if (const auto m = entry.match(l); m.hasMatch()) {
            entryName = m.captured(1);
            out[entryName].known = true;
            continue;
        }
        if (const auto m = props.match(l); m.hasMatch()) {
            propsName = m.captured(1);
            continue;
        }
        if (const auto m = stack.match(l); m.hasMatch() && !propsName.isEmpty() && out.contains(propsName)) {
            KernelResources &r = out[propsName];
            r.stackBytes = m.captured(1).toInt();
            r.spillStores = spillSt.match(l).captured(1).toInt();
            r.spillLoads = spillLd.match(l).captured(1).toInt();
            continue;
        }
        if (const auto m = regs.match(l); m.hasMatch() && !entryName.isEmpty()) {
            KernelResources &r = out[entryName];
            r.registers = m.captured(1).toInt();
            r.barriers = bars.match(l).captured(1).toInt();
            r.sharedBytes = smem.match(l).captured(1).toInt();
            r.constBytes = cmem.match(l).captured(1).toInt();
        }
    }
    return out;
}

} // namespace Kp
