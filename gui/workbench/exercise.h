#pragma once

// "Save as exercise": the open project written into a lab as kpg grade reads
// it (docs/labs.md), with the students' copy beside it. No widgets: the
// Project dock's dialog asks the questions, this writes the files.

#include "core/result.h"
#include "project/project.h"

#include <QString>
#include <QStringList>

namespace Kp {

/** Where and how an exercise is saved. */
struct ExerciseTarget
{
    QString labDir;      ///< the instructor's lab folder; made when missing
    QString name;        ///< the exercise's name: NAME/NAME.kpg, and the NAME.cu students hand in
    double points = 10;  ///< grading.json's "points" for the exercise
    QString studentsDir; ///< the students' copy of the lab; NAME/ in it is replaced
    /** Replace LAB/NAME when it already holds an exercise of that name (never another folder). */
    bool replace = false;
    /**
     * The project's source is the instructor's solution: saved as the
     * exercise's reference.cu, and the starter is the same source with every
     * kernel's body emptied (kernel/starter). Off: the source is the starter,
     * and the reference is the one the project names, if any.
     */
    bool solutionAsReference = false;
};

/** What saveExercise wrote. */
struct SavedExercise
{
    QString instructorDir; ///< LAB/NAME: the project, starter.cu, reference.cu and the data files
    QString studentsDir;   ///< STUDENTS/NAME: kpg lab export-starter's copy of this exercise
    QString policyFile;    ///< LAB/grading.json
    QStringList written;   ///< every file written, instructor's first
};

/**
 * Copies the regular file from (opened as core/safefile's openRegularFile
 * opens it: no FIFO, device or folder, at most maxBytes) to to, in chunks,
 * atomically. BadInput "cannot copy FROM: REASON".
 */
Status copyRegularFile(const QString &from, const QString &to, qint64 maxBytes, const QString &what);

/** Whether two files hold the same bytes (false when either cannot be read). */
bool sameContents(const QString &a, const QString &b);

/** The folder the students' copy of a lab goes to by default: "LAB-students" beside it. */
QString defaultStudentsDir(const QString &labDir);

/** Whether LAB/NAME exists with something in it (saving then needs ExerciseTarget::replace). */
bool exerciseExists(const QString &labDir, const QString &name);

/**
 * Writes project as exercise target.name of the lab target.labDir: LAB/NAME/NAME.kpg
 * whose source is starter.cu (the project's kernel, what students start from),
 * its reference kernel as reference.cu and the files its buffers and .npy
 * checks read, each under its own name beside it (a lab is loaded confined to
 * the exercise's folder). Sets the exercise's points in LAB/grading.json
 * (keeping the rest of the file), loads the lab and its policy back as
 * kpg grade will, and exports the students' copy of this exercise with
 * Grade::exportStarter (no hidden checks, no reference, no grading settings)
 * into target.studentsDir/NAME. BadInput naming the field or file and what
 * is wrong: a name students cannot hand in, no checks, include folders, a
 * reference or data file that cannot be read, LAB/NAME taken. Reads the
 * project's files relative to project.dir(). GUI thread or any, one at a time per lab.
 */
Result<SavedExercise> saveExercise(const Project &project, const ExerciseTarget &target);

} // namespace Kp
