#pragma once

// What a grading hands to people and to course systems (docs/labs.md,
// "Exports"): the gradebook CSV (a row per student), the feedback a student
// reads (Markdown and HTML), Gradescope's results.json and Autolab's score
// line. Pure functions of the results and the policy; any thread.

#include "grade/graderesult.h"
#include "grade/policy.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

namespace Kp::Grade {

/** `student,total,max,late_penalty_percent,EX1,EX2,...`, a row per student; points with up to 2 decimals. */
QByteArray gradebookCsv(const QStringList &exercises, const QList<StudentGrade> &grades);

/** One student's feedback: their grade, and per exercise the outcome and why. */
struct Feedback
{
    QString student;
    QString lab;
    StudentGrade grade;
    QList<GradeItem> items; ///< this student's, in exercise order
    LabPolicy policy;
};

/**
 * Markdown: a heading, the total, and a section per exercise with the
 * outcome, the failed check and its first mismatch (with coordinates), the
 * compile errors with their lines, the memory findings and the speed ratio.
 * A hidden check's name and mismatch are not shown. Every piece of text
 * from a submission or a name has its control characters replaced, and
 * Markdown's own characters in it are escaped.
 */
QString feedbackMarkdown(const Feedback &f);

/** The same as a self-contained HTML page (everything escaped; no scripts, no external resources). */
QString feedbackHtml(const Feedback &f);

/**
 * Gradescope's results.json for one student (the autograder specification:
 * top-level score and tests, each test with score, max_score, name, output
 * and visibility). A test per exercise; an exercise whose failed check is
 * hidden shows "failed a hidden test" only, and is "after_published".
 */
QJsonObject gradescopeResults(const Feedback &f, double executionSeconds);

/** Autolab's score line: {"scores": {"EXERCISE": points, ...}} (weighted, before the late penalty). */
QByteArray autolabScoreLine(const QStringList &exercises, const StudentGrade &grade);

} // namespace Kp::Grade
