#include "lab.h"

#include "compile/compiler.h"
#include "core/safefile.h"
#include "project/pathpolicy.h"
#include "project/projectio.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>

#include <algorithm>

namespace Kp::Grade {

namespace {

Error badInput(const QString &message)
{
    return Error{QStringLiteral("grade"), Error::Code::BadInput, {}, message};
}

/** Whether canonical path `p` is `dir` or inside it (both canonical). */
bool isInside(const QString &p, const QString &dir)
{
    return p == dir || p.startsWith(dir.endsWith(QLatin1Char('/')) ? dir : dir + QLatin1Char('/'));
}

} // namespace

const Exercise *Lab::exercise(const QString &n) const
{
    for (const Exercise &e : exercises) {
        if (e.name == n) {
            return &e;
        }
    }
    return nullptr;
}

bool isPlainName(const QString &name)
{
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_][A-Za-z0-9_.+-]*$"));
    return name.size() <= 200 && plain.match(name).hasMatch();
}

Result<Lab> loadLab(const QString &dirPath)
{
    const QFileInfo info(dirPath);
    if (!info.exists()) {
        return badInput(QStringLiteral("lab '%1': no such folder").arg(dirPath));
    }
    if (!info.isDir()) {
        return badInput(QStringLiteral("lab '%1': not a folder (a lab is a folder of .kpg exercises)").arg(dirPath));
    }
    Lab lab;
    lab.dir = info.canonicalFilePath();
    lab.name = QFileInfo(lab.dir).fileName();
    const QDir dir(lab.dir);
    QStringList files;
    for (const QString &f : dir.entryList({QStringLiteral("*.kpg")}, QDir::Files | QDir::Readable, QDir::Name)) {
        files << dir.filePath(f);
    }
    for (const QString &sub : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        const QString kpg = dir.filePath(sub + QLatin1Char('/') + sub + QStringLiteral(".kpg"));
        if (QFileInfo(kpg).isFile()) {
            files << kpg;
        }
    }
    if (files.isEmpty()) {
        return badInput(QStringLiteral("lab '%1': no exercises: expected NAME.kpg files in the folder, or "
                                       "NAME/NAME.kpg in sub-folders (docs/labs.md)")
                            .arg(dirPath));
    }
    for (const QString &file : files) {
        Exercise e;
        e.name = QFileInfo(file).completeBaseName();
        e.path = file;
        if (!isPlainName(e.name)) {
            return badInput(QStringLiteral("%1: the exercise name '%2' cannot name a submitted file; use letters, "
                                           "digits, '_', '-', '.' and '+'")
                                .arg(file, e.name));
        }
        if (const Exercise *other = lab.exercise(e.name)) {
            return badInput(
                QStringLiteral("%1: the exercise '%2' is already defined by %3").arg(file, e.name, other->path));
        }
        Result<Project> p = loadProject(file, PathScope::ProjectFolder);
        if (!p) {
            Error err = p.error();
            err.code = Error::Code::BadInput;
            return err;
        }
        if (p->checks.isEmpty()) {
            Error err = badInput(QStringLiteral("%1: the exercise has no checks, so a submission cannot be graded "
                                                "(add a \"checks\" array; see docs/checks.md)")
                                     .arg(file));
            err.path = QStringLiteral("checks");
            return err;
        }
        e.project = std::move(p).value();
        lab.exercises << e;
    }
    std::sort(lab.exercises.begin(), lab.exercises.end(),
              [](const Exercise &a, const Exercise &b) { return a.name < b.name; });
    return lab;
}

Result<QList<Student>> findStudents(const QString &dirPath, QStringList *skipped)
{
    const QFileInfo info(dirPath);
    if (!info.exists()) {
        return badInput(QStringLiteral("--submissions '%1': no such folder").arg(dirPath));
    }
    if (!info.isDir()) {
        return badInput(
            QStringLiteral("--submissions '%1': not a folder (expected a folder per student)").arg(dirPath));
    }
    const QString root = info.canonicalFilePath();
    const QDir dir(root);
    QList<Student> students;
    const QFileInfoList entries = dir.entryInfoList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System, QDir::Name);
    for (const QFileInfo &e : entries) {
        if (e.fileName().startsWith(QLatin1Char('.'))) {
            continue;
        }
        if (e.isSymLink()) {
            const QString target = e.canonicalFilePath();
            if (target.isEmpty() || !QFileInfo(target).isDir()) {
                if (skipped) {
                    *skipped << e.fileName();
                }
                continue;
            }
            if (!isInside(target, root)) {
                students << Student{e.fileName(),
                                    {},
                                    QStringLiteral("the student folder is a symbolic link to '%1', outside the "
                                                   "submissions folder; it is not read")
                                        .arg(e.symLinkTarget())};
                continue;
            }
            students << Student{e.fileName(), target, {}};
            continue;
        }
        if (!e.isDir()) {
            if (skipped) {
                *skipped << e.fileName();
            }
            continue;
        }
        students << Student{e.fileName(), e.canonicalFilePath(), {}};
    }
    if (students.isEmpty()) {
        return badInput(QStringLiteral("--submissions '%1': no student folders in it (expected one folder per "
                                       "student, holding EXERCISE.cu files)")
                            .arg(dirPath));
    }
    return students;
}

Submission readSubmission(const Student &student, const QString &exercise, const QString &submissionsDir)
{
    Submission s;
    s.path = student.name + QLatin1Char('/') + exercise + QStringLiteral(".cu");
    if (!student.refused.isEmpty()) {
        s.state = Submission::State::Refused;
        s.why = student.refused;
        return s;
    }
    const QString file = QDir(student.dir).filePath(exercise + QStringLiteral(".cu"));
    const QFileInfo fi(file);
    if (!fi.exists() && !fi.isSymLink()) {
        s.state = Submission::State::Missing;
        return s;
    }
    if (fi.isSymLink()) {
        const QString target = fi.canonicalFilePath();
        const QString root = QFileInfo(submissionsDir).canonicalFilePath();
        if (target.isEmpty()) {
            s.state = Submission::State::Refused;
            s.why = QStringLiteral("a symbolic link to '%1', which does not exist").arg(fi.symLinkTarget());
            return s;
        }
        if (!isInside(target, root)) {
            s.state = Submission::State::Refused;
            s.why = QStringLiteral("a symbolic link to '%1', outside the submissions folder; it is not read")
                        .arg(fi.symLinkTarget());
            return s;
        }
    }
    const Result<QByteArray> bytes = readRegularFile(file, Compiler::kMaxSourceBytes, QStringLiteral("a submission"));
    if (!bytes) {
        s.state = Submission::State::Refused;
        s.why = bytes.error().message;
        return s;
    }
    s.state = Submission::State::Ok;
    s.source = QString::fromUtf8(*bytes);
    s.sha256 = QCryptographicHash::hash(*bytes, QCryptographicHash::Sha256).toHex();
    return s;
}

Result<QStringList> parseStudentList(const QString &value)
{
    QStringList names;
    if (value.startsWith(QLatin1Char('@'))) {
        const Result<QByteArray> bytes =
            readRegularFile(value.mid(1), 16 * 1024 * 1024, QStringLiteral("the list of students"));
        if (!bytes) {
            return Error{
                QStringLiteral("grade"), Error::Code::Usage, {}, QStringLiteral("--only: ") + bytes.error().message};
        }
        for (const QString &line : QString::fromUtf8(*bytes).split(QLatin1Char('\n'))) {
            const QString t = line.trimmed();
            if (!t.isEmpty() && !t.startsWith(QLatin1Char('#'))) {
                names << t;
            }
        }
    } else {
        for (const QString &n : value.split(QLatin1Char(','))) {
            if (!n.trimmed().isEmpty()) {
                names << n.trimmed();
            }
        }
    }
    if (names.isEmpty()) {
        return Error{QStringLiteral("grade"),
                     Error::Code::Usage,
                     {},
                     QStringLiteral("--only: no student names in '%1'").arg(value)};
    }
    names.removeDuplicates();
    return names;
}

} // namespace Kp::Grade
