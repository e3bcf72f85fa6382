#pragma once

// The result of grading one submission of one exercise, its JSON (a line of
// the journal and an item of --json), the CSV, the text table and the
// summary per exercise (docs/labs.md, "Reading the results").

#include "core/result.h"

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <cmath>
#include <limits>

namespace Kp::Grade {

enum class Outcome {
    Pass,         ///< compiled, ran, every check passed (and fast enough when the exercise asks)
    Fail,         ///< a check failed, or the kernel does not fit the exercise (no such kernel, ...)
    Slow,         ///< checks passed, the speed ratio is below the exercise's "speedup"
    CompileError, ///< the submission does not compile
    Fault,        ///< the kernel faulted (or the worker died under it)
    Timeout,      ///< a launch ran past the time limit and was stopped
    NotSubmitted, ///< no EXERCISE.cu in the student's folder
    NoGpu,        ///< compiled and bound, but there is no GPU to run it on
    Refused,      ///< the file was not read: a link outside, not a regular file, too large
    Error,        ///< grading itself failed (the reference faulted, an internal error)
    NotGraded,    ///< a Slurm task that should have graded it failed
    PrintfFlood,  ///< the kernel printed more than the printf buffer holds (output cut)
};

/** "pass", "fail", "slow", "compile-error", ... (JSON, CSV and the journal). */
QString outcomeKey(Outcome o);
/** "pass", "FAIL", "too slow", "compile error", ... (the table). */
QString outcomeText(Outcome o);
std::optional<Outcome> outcomeFromKey(const QString &key);
/** Outcomes every exercise row of the summary counts, in table order. */
const QList<Outcome> &allOutcomes();

struct GradeItem
{
    QString student;
    QString exercise;
    Outcome outcome = Outcome::Error;
    /** One line saying why, for anything but a pass: the failed check, the first compile error, the fault. */
    QString detail;
    QString failedCheck;       ///< the first failing check's name
    QString firstMismatch;     ///< "[3] (x=3): got 1, expected 2"
    QStringList compileErrors; ///< "vector_add.cu:4:12: message", the submitted file's line numbers
    QByteArray sha256;         ///< of the submitted file; a resumed grading regrades a changed file
    int device = -1;           ///< the GPU it ran on
    double medianMs = std::numeric_limits<double>::quiet_NaN();
    double referenceMs = std::numeric_limits<double>::quiet_NaN();
    double speedRatio = std::numeric_limits<double>::quiet_NaN(); ///< referenceMs / medianMs
    double minSpeedup = 0;                                        ///< the exercise's target (0: none)
    // Where the time went (bench_grade reports the shares).
    double compileMs = 0; ///< the compile stage's wall time
    double runMs = 0;     ///< runProjectWithChecks's wall time (compile cache hit, bind, runs, checks)
    double restartMs = 0; ///< waiting for a fresh worker at the start of this item
    /**
     * A fresh worker was started for this item after the last one ended: in
     * this item when it faulted or hung (Runner restarts the worker at once),
     * else at its start.
     */
    bool workerRestarted = false;
    // Integrity and credit (docs/labs.md, "Points and policies").
    int checksPassed = 0;           ///< of the exercise's checks that ran
    int checksTotal = 0;            ///< the exercise's checks (0 when none ran)
    bool failedCheckHidden = false; ///< the failed check is a hidden one: feedback names no details
    QString wroteOutside;           ///< "wrote outside `out` (element 1000, 4 bytes past the end)"; empty: none
    QStringList flags;              ///< for the instructor: "12.5x the reference: suspiciously fast", ...
    QStringList memoryFindings;     ///< --sanitize memcheck's findings in words
    double timeLimitSeconds = 0;    ///< the launch time limit it ran under (0: not run)
    QString foundIn;                ///< "alice/lab1/": the file was found below the student's folder; empty: at its top

    QString key() const { return student + QLatin1Char('/') + exercise; }
    QJsonObject toJson() const;
    static std::optional<GradeItem> fromJson(const QJsonObject &o);
};

/** Text with control characters (terminal escapes, bidi overrides) shown as '?': for every stream. */
QString printableText(QString s);

/** The per-exercise line of the summary. */
struct ExerciseSummary
{
    QString exercise;
    int submissions = 0; ///< items with a submitted file
    int passed = 0;
    QHash<Outcome, int> counts;
    double medianSpeedRatio = std::numeric_limits<double>::quiet_NaN(); ///< over the passing timed items
};

QList<ExerciseSummary> summarize(const QStringList &exercises, const QList<GradeItem> &items);

/** Sorted by student, then exercise. */
void sortItems(QList<GradeItem> *items);

/** The table: a block per student, a line per exercise, then the summary. No colour; ASCII only. */
QString tableText(const QStringList &exercises, const QList<GradeItem> &items);

/** CSV (RFC 4180), a header then a row per item; text that a spreadsheet would run as a formula is quoted with '. */
QByteArray csvText(const QList<GradeItem> &items);

/** The --json document: lab, exercises, students, results, summary. */
QJsonObject gradingJson(const QString &lab, const QString &submissions, const QStringList &exercises,
                        const QStringList &students, const QList<GradeItem> &items, bool timing);

/**
 * The journal: a JSON object per line, appended as each item finishes. The
 * first line is a header {"kpgGradeJournal": 1, "lab": ...}; every other
 * line is an item. A line cut short by a killed process is skipped.
 */
class Journal
{
public:
    /** Opens path for appending; starts it over (writes the header) unless `resume` and it exists. */
    Status open(const QString &path, const QString &lab, bool resume);
    /** Appends one item and flushes it to the file. Thread-safe. */
    Status append(const GradeItem &item);
    const QString &path() const { return m_path; }

    /**
     * The items of a journal, the last line for an item winning; a missing
     * file is an empty list. *labOut gets the header's lab. A damaged line
     * (cut short by an interrupted write, not JSON, control characters, not a
     * result) is skipped with one line in *warnings ("the journal PATH, line
     * N: ..."); when its student and exercise can still be read from it, the
     * item's earlier lines are dropped too, so that it is graded again rather
     * than taken from an older line. *lineOf gets each item's line number (1
     * is the first line), for the caller's own warnings.
     */
    static Result<QList<GradeItem>> read(const QString &path, QString *labOut = nullptr,
                                         QStringList *warnings = nullptr, QHash<QString, int> *lineOf = nullptr);

private:
    QString m_path;
    int m_fd = -1;

public:
    Journal() = default;
    Journal(const Journal &) = delete;
    Journal &operator=(const Journal &) = delete;
    ~Journal();
};

} // namespace Kp::Grade
