#pragma once

// A lab (a folder of exercises) and a class's submissions (a folder per
// student), as `kpg grade` reads them (docs/labs.md). Submissions are someone
// else's files: every name is checked to stay inside the submissions folder
// and every file is read through core/safefile.

#include "core/result.h"
#include "project/project.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace Kp::Grade {

class LinkIndex;

/** One exercise: a .kpg whose base name names it and names the file a student submits (NAME.cu). */
struct Exercise
{
    QString name; ///< "vector_add" for vector_add.kpg
    QString path; ///< the .kpg
    Project project;
};

struct Lab
{
    QString dir;
    QString name;              ///< the folder's name
    QList<Exercise> exercises; ///< sorted by name
    const Exercise *exercise(const QString &name) const;
};

/**
 * Reads a lab: every `*.kpg` directly in dir, and `NAME/NAME.kpg` for each
 * sub-folder NAME (an exercise with its starter, reference and data in a
 * folder of its own). Each is loaded confined to its folder
 * (PathScope::ProjectFolder) and must have checks. BadInput naming the file
 * and what is wrong; also for a folder with no exercise or two of one name.
 */
Result<Lab> loadLab(const QString &dir);

/** Whether name is usable as an exercise or student name in files and tables. */
bool isPlainName(const QString &name);

struct Student
{
    QString name; ///< the folder's name
    QString dir;  ///< the folder (canonical), empty when refused
    /** Why the folder is not read (a link leading outside the submissions folder); empty when fine. */
    QString refused;
};

/**
 * The student folders in dir, sorted by name: every sub-folder not starting
 * with '.' nor named in ignore (zip residue: "__MACOSX"). A student folder
 * that is a symbolic link is never followed: it is listed with `refused` set,
 * naming the other student's folder when it leads to one. Plain files in dir
 * are skipped and named in *skipped. BadInput when dir is not a readable
 * folder or holds no student folder.
 */
Result<QList<Student>> findStudents(const QString &dir, QStringList *skipped = nullptr, const QStringList &ignore = {});

/** What reading one submitted file gave. */
struct Submission
{
    enum class State { Ok, Missing, Refused };
    State state = State::Missing;
    QString path;      ///< STUDENT/EXERCISE.cu, or STUDENT/lab1/EXERCISE.cu when found deeper
    QString file;      ///< the file read, when Ok
    QString foundIn;   ///< "alice/lab1/" when the file was found below the student's folder; else empty
    QString source;    ///< the text when Ok
    QString why;       ///< when Refused: what is wrong with the file
    QByteArray sha256; ///< hex of the bytes when Ok
};

/**
 * Reads STUDENT/EXERCISE.cu: a regular file of the student's own (or a
 * link to one in the student's own folder) within the source size limit.
 * When it is not there, the one file of that name below the student's folder
 * is read (alice/lab1/transpose.cu, alice/Submission/transpose.cu: a zip
 * unpacked with its folders), with foundIn set; the walk never follows a
 * link to a folder and skips dot entries and the names in ignore (zip
 * residue); two or more such files are Refused naming them all.
 * A link or hard link to another student's file is Refused "same file as
 * bob/x.cu"; a hard link to a file outside the submissions folder, links
 * leading outside, and anything but a regular file are Refused with the
 * reason; a missing file is Missing. links names hard links' other sides.
 */
Submission readSubmission(const Student &student, const QString &exercise, const QString &submissionsDir,
                          const LinkIndex *links = nullptr, const QStringList &ignore = {});

/**
 * Writes the students' copy of a lab to outDir: for each exercise its .kpg
 * without hidden checks, without the reference (and the checks that compare
 * with it) and without the grading settings, its starter as NAME.cu, and the
 * files the remaining checks and inputs read. Never the reference, the
 * grading policy or a salt. BadInput when outDir exists and is not empty.
 */
Status exportStarter(const Lab &lab, const QString &outDir, QStringList *written = nullptr);

/**
 * Parses --only: names separated by commas, or "@FILE" with one name a line
 * (blank lines and lines starting with '#' skipped).
 */
Result<QStringList> parseStudentList(const QString &value);

} // namespace Kp::Grade
