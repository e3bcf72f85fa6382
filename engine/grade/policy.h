#pragma once

// A lab's grading policy (docs/labs.md, "Points and policies"): points and
// weights per exercise, partial credit by check and by speed, the late
// penalty, the per-submission time limit, the suspicious-speed flag and the
// names of zip residue to ignore. Read from `grading.json` in the lab folder
// when there is one; every field has a default, so a lab without it grades
// as before with 10 points an exercise. Pure values and functions; any thread.

#include "core/result.h"
#include "grade/graderesult.h"

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace Kp::Grade {

/** How one exercise is scored. */
struct ExercisePolicy
{
    double points = 10; ///< what a full answer earns
    double weight = 1;  ///< the exercise's points count this many times in the total
    /** Checks earn their share of the correctness points each; off: all checks or nothing. */
    bool partialByCheck = false;
    /**
     * The part of the points that rides on speed (0..1); the rest is for
     * correctness. Speed credit is 1 at a ratio of speedTarget or more, the
     * ratio / speedTarget below it, never under speedFloor; it is only given
     * when every check passed.
     */
    double speedShare = 0;
    double speedTarget = 1;
    double speedFloor = 0;
};

struct LatePolicy
{
    QDateTime deadline;        ///< invalid: no late penalty
    double graceMinutes = 0;   ///< later than the deadline by at most this is on time
    double perDayPercent = 10; ///< of the student's total, for each started day late
    double capPercent = 100;   ///< at most this much is taken off
};

struct TimeLimitPolicy
{
    /** A launch may take this many times the reference's slowest launch ... */
    double factor = 5;
    /** ... but at least this long (start-up, a cold cache) ... */
    double minSeconds = 1;
    /** ... and at most this long; 0: the exercise's own "timeout". */
    double capSeconds = 0;
};

struct LabPolicy
{
    QString file; ///< where it was read from; empty: the defaults
    ExercisePolicy defaults;
    QHash<QString, ExercisePolicy> exercises;
    LatePolicy late;
    TimeLimitPolicy timeLimit;
    /**
     * Grading fills the checked outputs with a sentinel before every launch
     * of the step that writes them (run/sentinel.h) and before every timing
     * sample, checks what the timed launches left, and times a run on fresh
     * inputs too. Off only for exercises whose kernels add into their
     * outputs rather than overwrite them.
     */
    bool antiGaming = true;
    /** Speed ratios above this are flagged for a look (cached answers, timer tricks); 0: never. */
    double flagSpeedRatio = 10;
    /** Names in the submissions folder that are never students or submissions (zip residue). */
    QStringList ignore{QStringLiteral("__MACOSX"), QStringLiteral(".ipynb_checkpoints"), QStringLiteral(".DS_Store")};

    const ExercisePolicy &exercise(const QString &name) const;
};

/** The name of the policy file in a lab folder. */
inline QString policyFileName()
{
    return QStringLiteral("grading.json");
}

/**
 * Parses a policy (the text of grading.json); exercises are the lab's, and a
 * policy naming another is refused. BadInput naming the field, the value and
 * what is allowed.
 */
Result<LabPolicy> parsePolicy(const QByteArray &json, const QString &file, const QStringList &exercises);

/** LAB/grading.json when it exists, else the defaults. */
Result<LabPolicy> loadPolicy(const QString &labDir, const QStringList &exercises);

/** The points an item earns before its weight and the late penalty (0..points). */
double itemPoints(const GradeItem &item, const ExercisePolicy &policy);

/** Percent taken off a total handed in at `submitted`; 0 when on time or without a deadline. */
double latePenaltyPercent(const QDateTime &submitted, const LatePolicy &late);

/**
 * A submissions manifest: CSV with a header naming `student` and `time`
 * columns (ISO 8601, e.g. 2026-03-01T23:59:00Z; a time without a zone is
 * UTC), one row per student. BadInput naming the line.
 */
Result<QHash<QString, QDateTime>> parseManifest(const QByteArray &csv, const QString &file);

/** The seconds a launch of a submission may take, from the reference's slowest launch (ms; NaN: unknown). */
double timeLimitSeconds(const TimeLimitPolicy &policy, double referenceLaunchMs, double exerciseTimeoutSeconds);

/** One student's line of the gradebook. */
struct StudentGrade
{
    QString student;
    QHash<QString, double> points; ///< per exercise, weighted, before the late penalty
    double raw = 0;                ///< the sum of points
    double latePercent = 0;
    double total = 0; ///< raw less the late penalty
    double max = 0;   ///< what a full grade is
    QDateTime submitted;
};

/** The gradebook: a line per student in `students` order. */
QList<StudentGrade> gradebook(const QStringList &students, const QStringList &exercises, const QList<GradeItem> &items,
                              const LabPolicy &policy, const QHash<QString, QDateTime> &submitted);

} // namespace Kp::Grade
