#include "gradeexport.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <cmath>

namespace Kp::Grade {

namespace {

QByteArray csvCell(const QString &text)
{
    QString s = printableText(text);
    if (!s.isEmpty() && QStringLiteral("=+-@").contains(s.front())) {
        s.prepend(QLatin1Char('\'')); // a spreadsheet must not run a student's name
    }
    if (s.contains(QLatin1Char(',')) || s.contains(QLatin1Char('"')) || s.contains(QLatin1Char('\''))) {
        s = QLatin1Char('"') + s.replace(QLatin1Char('"'), QStringLiteral("\"\"")) + QLatin1Char('"');
    }
    return s.toUtf8();
}

QString points(double v)
{
    // Two decimals at most, without trailing zeros: 7.5, 10, 3.33.
    return QString::number(std::round(v * 100) / 100, 'g', 12);
}

QString markdownEscaped(const QString &text)
{
    QString out;
    for (const QChar c : printableText(text)) {
        if (QStringLiteral("\\`*_{}[]()#+-.!|<>&").contains(c)) {
            out += QLatin1Char('\\');
        }
        out += c;
    }
    return out;
}

/** What one item says, as lines of plain text (escaped by the caller). */
struct ItemText
{
    QString outcome;
    QStringList lines;  ///< "Failed check: ...", ...
    QStringList errors; ///< compile errors, a line each
};

ItemText itemText(const GradeItem &i)
{
    ItemText t;
    t.outcome = outcomeText(i.outcome);
    if (!i.foundIn.isEmpty()) {
        t.lines << QStringLiteral("Found in %1 (graded from there).").arg(i.foundIn);
    }
    if (!i.wroteOutside.isEmpty()) {
        t.lines << QStringLiteral("Memory: ") + i.wroteOutside;
    }
    if (i.outcome == Outcome::Fail && !i.failedCheck.isEmpty()) {
        if (i.failedCheckHidden) {
            t.lines << QStringLiteral("Failed a hidden test (its details are not shown).");
        } else {
            t.lines << QStringLiteral("Failed check: ") + i.failedCheck;
            if (!i.firstMismatch.isEmpty()) {
                t.lines << QStringLiteral("First mismatch: ") + i.firstMismatch;
            }
        }
    } else if (i.outcome != Outcome::Pass && i.outcome != Outcome::CompileError && !i.detail.isEmpty() &&
               i.wroteOutside.isEmpty()) {
        t.lines << i.detail;
    }
    if (i.outcome == Outcome::CompileError) {
        t.errors = i.compileErrors;
    }
    for (const QString &m : i.memoryFindings) {
        t.lines << QStringLiteral("Memory check: ") + m;
    }
    if (std::isfinite(i.speedRatio)) {
        t.lines << QStringLiteral("Speed: %1x the reference%2")
                       .arg(QString::number(i.speedRatio, 'f', 2),
                            i.minSpeedup > 0 ? QStringLiteral(" (the exercise asks for %1x)").arg(i.minSpeedup)
                                             : QString());
    }
    return t;
}

/** Lines joined with newlines, each with its control characters replaced. */
QString printableLines(const QStringList &lines)
{
    QStringList out;
    for (const QString &l : lines) {
        out << printableText(l);
    }
    return out.join(QLatin1Char('\n'));
}

QString htmlEscaped(const QString &text)
{
    return printableText(text).toHtmlEscaped();
}

} // namespace

QByteArray gradebookCsv(const QStringList &exercises, const QList<StudentGrade> &grades)
{
    QByteArray out = "student,total,max,late_penalty_percent";
    for (const QString &e : exercises) {
        out += ',' + csvCell(e);
    }
    out += "\r\n";
    for (const StudentGrade &g : grades) {
        out += csvCell(g.student) + ',' + points(g.total).toUtf8() + ',' + points(g.max).toUtf8() + ',' +
               points(g.latePercent).toUtf8();
        for (const QString &e : exercises) {
            out += ',' + points(g.points.value(e)).toUtf8();
        }
        out += "\r\n";
    }
    return out;
}

QString feedbackMarkdown(const Feedback &f)
{
    QString md = QStringLiteral("# %1: %2\n\n").arg(markdownEscaped(f.lab), markdownEscaped(f.student));
    md += QStringLiteral("**Total: %1 of %2**").arg(points(f.grade.total), points(f.grade.max));
    if (f.grade.latePercent > 0) {
        md +=
            QStringLiteral(" (%1 before a late penalty of %2 %)").arg(points(f.grade.raw), points(f.grade.latePercent));
    }
    md += QStringLiteral("\n\n");
    for (const GradeItem &i : f.items) {
        const ExercisePolicy &p = f.policy.exercise(i.exercise);
        const ItemText t = itemText(i);
        md += QStringLiteral("## %1: %2 (%3 of %4 points)\n\n")
                  .arg(markdownEscaped(i.exercise), markdownEscaped(t.outcome),
                       points(f.grade.points.value(i.exercise)), points(p.points * p.weight));
        for (const QString &l : t.lines) {
            md += QStringLiteral("- ") + markdownEscaped(l) + QLatin1Char('\n');
        }
        if (!t.errors.isEmpty()) {
            // A fenced block shows compiler output as it is; a fence inside it cannot end the block early
            // because backticks are replaced.
            md += QStringLiteral("\n```\n");
            for (const QString &e : t.errors) {
                md += printableText(e).replace(QLatin1Char('`'), QLatin1Char('\'')) + QLatin1Char('\n');
            }
            md += QStringLiteral("```\n");
        }
        md += QLatin1Char('\n');
    }
    return md;
}

QString feedbackHtml(const Feedback &f)
{
    QString h =
        QStringLiteral("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%1: %2</title></head>\n<body>\n")
            .arg(htmlEscaped(f.lab), htmlEscaped(f.student));
    h += QStringLiteral("<h1>%1: %2</h1>\n").arg(htmlEscaped(f.lab), htmlEscaped(f.student));
    h += QStringLiteral("<p><strong>Total: %1 of %2</strong>").arg(points(f.grade.total), points(f.grade.max));
    if (f.grade.latePercent > 0) {
        h +=
            QStringLiteral(" (%1 before a late penalty of %2 %)").arg(points(f.grade.raw), points(f.grade.latePercent));
    }
    h += QStringLiteral("</p>\n");
    for (const GradeItem &i : f.items) {
        const ExercisePolicy &p = f.policy.exercise(i.exercise);
        const ItemText t = itemText(i);
        h += QStringLiteral("<h2>%1: %2 (%3 of %4 points)</h2>\n")
                 .arg(htmlEscaped(i.exercise), htmlEscaped(t.outcome), points(f.grade.points.value(i.exercise)),
                      points(p.points * p.weight));
        if (!t.lines.isEmpty()) {
            h += QStringLiteral("<ul>\n");
            for (const QString &l : t.lines) {
                h += QStringLiteral("<li>") + htmlEscaped(l) + QStringLiteral("</li>\n");
            }
            h += QStringLiteral("</ul>\n");
        }
        if (!t.errors.isEmpty()) {
            h += QStringLiteral("<pre>") + htmlEscaped(t.errors.join(QLatin1Char('\n'))) + QStringLiteral("</pre>\n");
        }
    }
    h += QStringLiteral("</body></html>\n");
    return h;
}

QJsonObject gradescopeResults(const Feedback &f, double executionSeconds)
{
    QJsonArray tests;
    int number = 0;
    for (const GradeItem &i : f.items) {
        const ExercisePolicy &p = f.policy.exercise(i.exercise);
        const ItemText t = itemText(i);
        QStringList out{QStringLiteral("Outcome: ") + t.outcome};
        out += t.lines;
        out += t.errors;
        QJsonObject test{{QStringLiteral("name"), printableText(i.exercise)},
                         {QStringLiteral("number"), QString::number(++number)},
                         {QStringLiteral("score"), std::round(f.grade.points.value(i.exercise) * 100) / 100},
                         {QStringLiteral("max_score"), p.points * p.weight},
                         {QStringLiteral("status"),
                          i.outcome == Outcome::Pass ? QStringLiteral("passed") : QStringLiteral("failed")},
                         {QStringLiteral("output"), printableLines(out)},
                         // A hidden check's failure is shown once grades are published, not before.
                         {QStringLiteral("visibility"),
                          i.failedCheckHidden ? QStringLiteral("after_published") : QStringLiteral("visible")}};
        tests.append(test);
    }
    QString output = QStringLiteral("Total: %1 of %2").arg(points(f.grade.total), points(f.grade.max));
    if (f.grade.latePercent > 0) {
        output += QStringLiteral(" (late penalty %1 %)").arg(points(f.grade.latePercent));
    }
    return QJsonObject{{QStringLiteral("score"), std::round(f.grade.total * 100) / 100},
                       {QStringLiteral("execution_time"), int(std::ceil(executionSeconds))},
                       {QStringLiteral("output"), output},
                       {QStringLiteral("visibility"), QStringLiteral("visible")},
                       {QStringLiteral("stdout_visibility"), QStringLiteral("hidden")},
                       {QStringLiteral("tests"), tests}};
}

QByteArray autolabScoreLine(const QStringList &exercises, const StudentGrade &grade)
{
    QJsonObject scores;
    for (const QString &e : exercises) {
        scores.insert(printableText(e), std::round(grade.points.value(e) * 100) / 100);
    }
    return QJsonDocument(QJsonObject{{QStringLiteral("scores"), scores}}).toJson(QJsonDocument::Compact);
}

} // namespace Kp::Grade
