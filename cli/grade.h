#pragma once

// kpg grade: what cli/grade.cpp (grading on this host) and
// cli/gradeslurm.cpp (grading as a Slurm job array) share.

#include "grade/graderesult.h"
#include "grade/lab.h"

#include <QString>
#include <QStringList>

namespace Kp::Cli {

struct GradeArgs
{
    QString lab;
    QString submissions;
    QString csv;
    QString json;
    QString journal; ///< --journal, else derived from --json/--csv (journalPath())
    int jobs = 0;    ///< 0: one per GPU
    int compileJobs = 0;
    bool resume = false;
    double timeout = 0;
    bool timing = true;
    QString devices; ///< --devices LIST as written
    QString only;    ///< --only as written
    bool requireGpu = false;
    bool noSandbox = false;
    QString seedSalt;      ///< --seed-salt as written (TEXT or @FILE); empty: LAB/grading-salt when it exists
    bool sanitize = false; ///< --sanitize memcheck
    QString plagiarism;    ///< --plagiarism FILE: the similarity report (CSV)
    QString gradebook;     ///< --gradebook FILE: a row per student
    QString feedback;      ///< --feedback DIR: STUDENT.md and STUDENT.html
    QString gradescope;    ///< --gradescope OUT: results.json (one student) or OUT/STUDENT/results.json
    bool autolab = false;  ///< --autolab: Autolab's score line last on stdout
    QString manifest;      ///< --manifest FILE: student,time for the late penalty (else the files' times)
    // --slurm
    bool slurm = false;
    QString partition;
    int gpusPerTask = 1;
    int tasks = 0; ///< 0: one per student, at most 16
    QString slurmDir;
    QStringList sbatchArgs;
    int pollSeconds = 2;
};

/** The journal a grading appends to: --journal, else beside --json or --csv, else LAB-grade.journal.jsonl here. */
QString journalPath(const GradeArgs &a, const Grade::Lab &lab);

/**
 * The results of the chosen students from a journal's items (and the
 * not-graded items given), sorted; prints the table, writes --csv and --json
 * atomically, and returns the exit code of a finished grading: 0, or 75 when
 * an item could not be graded (error, not graded), 74 when an output cannot
 * be written.
 */
int finishGrading(const GradeArgs &a, const Grade::Lab &lab, const QList<Grade::Student> &students,
                  QList<Grade::GradeItem> items);

/** The salt a grading mixes into the seeds: --seed-salt TEXT or @FILE, else LAB/grading-salt, else none. */
Result<QString> seedSaltFor(const GradeArgs &a, const Grade::Lab &lab);

/** kpg grade --slurm (cli/gradeslurm.cpp). */
int gradeWithSlurm(const GradeArgs &a, const Grade::Lab &lab, const QList<Grade::Student> &students);

} // namespace Kp::Cli
