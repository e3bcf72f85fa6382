#include "lab.h"

#include "check/checkspec.h"
#include "compile/compiler.h"
#include "core/safefile.h"
#include "grade/integrity.h"
#include "project/pathpolicy.h"
#include "project/projectio.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>

#include <algorithm>

#include <sys/stat.h>

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
        for (qsizetype k = 0; k < p->checks.size(); ++k) {
            const QJsonValue hidden = p->checks[k].unknown.value(QStringLiteral("hidden"));
            if (!hidden.isUndefined() && !hidden.isBool()) {
                Error err = badInput(QStringLiteral("%1: checks[%2].hidden: must be true (the check runs only in "
                                                    "grading and is left out of the starter copy) or false")
                                         .arg(file)
                                         .arg(k));
                err.path = QStringLiteral("checks[%1].hidden").arg(k);
                return err;
            }
        }
        e.project = std::move(p).value();
        lab.exercises << e;
    }
    std::sort(lab.exercises.begin(), lab.exercises.end(),
              [](const Exercise &a, const Exercise &b) { return a.name < b.name; });
    return lab;
}

Result<QList<Student>> findStudents(const QString &dirPath, QStringList *skipped, const QStringList &ignore)
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
        if (e.fileName().startsWith(QLatin1Char('.')) || ignore.contains(e.fileName())) {
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
            // Inside, it is someone else's work graded twice.
            const QString other = QDir(root).relativeFilePath(target);
            students << Student{e.fileName(),
                                {},
                                QStringLiteral("the student folder is a symbolic link to '%1': the same files as %1; "
                                               "not graded as this student's work")
                                    .arg(other)};
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

Submission readSubmission(const Student &student, const QString &exercise, const QString &submissionsDir,
                          const LinkIndex *links, const QStringList &ignore)
{
    Submission s;
    const QString fileName = exercise + QStringLiteral(".cu");
    s.path = student.name + QLatin1Char('/') + fileName;
    if (!student.refused.isEmpty()) {
        s.state = Submission::State::Refused;
        s.why = student.refused;
        return s;
    }
    QString file = QDir(student.dir).filePath(fileName);
    QFileInfo fi(file);
    if (!fi.exists() && !fi.isSymLink()) {
        // Not at the top: a zip unpacked with its folders keeps it deeper
        // (alice/lab1/transpose.cu). One file of that name is the answer.
        QStringList found;
        for (const QString &rel : filesUnder(student.dir, ignore)) {
            if (QFileInfo(rel).fileName() == fileName) {
                found << rel;
            }
        }
        if (found.isEmpty()) {
            s.state = Submission::State::Missing;
            return s;
        }
        if (found.size() > 1) {
            QStringList named;
            for (const QString &rel : found) {
                named << student.name + QLatin1Char('/') + rel;
            }
            s.state = Submission::State::Refused;
            s.why = QStringLiteral("%1 files named %2 in the student's folder (%3) and none at its top; keep the one "
                                   "to grade (or move it to %4)")
                        .arg(found.size())
                        .arg(fileName, named.join(QStringLiteral(", ")), s.path);
            return s;
        }
        s.path = student.name + QLatin1Char('/') + found.first();
        s.foundIn = student.name + QLatin1Char('/') + QFileInfo(found.first()).path() + QLatin1Char('/');
        file = QDir(student.dir).filePath(found.first());
        fi = QFileInfo(file);
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
        if (!isInside(target, student.dir)) {
            s.state = Submission::State::Refused;
            s.why = QStringLiteral("a symbolic link: same file as %1; not graded as this student's work")
                        .arg(QDir(root).relativeFilePath(target));
            return s;
        }
    } else if (fi.isFile()) {
        // A hard link is the same file under two names: another student's
        // file, or one outside the submissions folder that a link was made to.
        struct stat st
        {
        };
        if (::lstat(QFile::encodeName(file).constData(), &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1) {
            const QStringList others = links ? links->sameFileAs(file) : QStringList();
            s.state = Submission::State::Refused;
            s.why = !others.isEmpty()
                        ? QStringLiteral("a hard link: same file as %1; not graded as this student's work")
                              .arg(others.join(QStringLiteral(", ")))
                        : QStringLiteral("a hard link (%1 names for one file), the others not in the student's "
                                         "folder; it is not read")
                              .arg(quint64(st.st_nlink));
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
    s.file = file;
    s.source = QString::fromUtf8(*bytes);
    s.sha256 = QCryptographicHash::hash(*bytes, QCryptographicHash::Sha256).toHex();
    return s;
}

Status exportStarter(const Lab &lab, const QString &outDir, QStringList *written)
{
    const QFileInfo out(outDir);
    if (out.exists() &&
        (!out.isDir() || !QDir(outDir).isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden))) {
        return badInput(QStringLiteral("export-starter: '%1' exists and is not an empty folder; the students' copy "
                                       "goes into a new or empty one")
                            .arg(outDir));
    }
    if (!QDir().mkpath(outDir)) {
        return badInput(QStringLiteral("export-starter: cannot make the folder '%1'").arg(outDir));
    }
    for (const Exercise &e : lab.exercises) {
        Project p = e.project;
        QList<CheckSpec> kept;
        for (const CheckSpec &c : p.checks) {
            // Hidden checks are the grader's; reference checks need the
            // reference, which students do not get.
            if (c.unknown.value(QStringLiteral("hidden")).toBool(false) || c.kind == CheckSpec::Kind::Reference) {
                continue;
            }
            kept << c;
        }
        p.checks = kept;
        p.reference.reset();
        p.grading.reset();
        const QString dir = QDir(outDir).filePath(e.name);
        if (!QDir().mkpath(dir)) {
            return badInput(QStringLiteral("export-starter: cannot make the folder '%1'").arg(dir));
        }
        // The starter under the name students hand in.
        p.sourceFile = e.name + QStringLiteral(".cu");
        const QString kpg = QDir(dir).filePath(e.name + QStringLiteral(".kpg"));
        if (Status st = saveProject(p, kpg); !st) {
            return st;
        }
        if (Status st = saveProjectSource(p, kpg); !st) {
            return st;
        }
        if (written) {
            *written << kpg << QDir(dir).filePath(p.sourceFile);
        }
        // Files the inputs and the students' checks read, copied as they are.
        QStringList files;
        for (const BufferSpec &b : p.buffers) {
            if (!b.init.file.isEmpty()) {
                files << b.init.file;
            }
        }
        for (const CheckSpec &c : p.checks) {
            if (c.kind == CheckSpec::Kind::Npy) {
                files << c.npy;
            }
        }
        files.removeDuplicates();
        for (const QString &f : files) {
            const QString from = QDir(e.project.dir()).filePath(f);
            const QString to = QDir(dir).filePath(f);
            const Result<QByteArray> bytes =
                readRegularFile(from, 1024ll * 1024 * 1024, QStringLiteral("an exercise file"));
            if (!bytes) {
                return bytes.error();
            }
            QDir().mkpath(QFileInfo(to).absolutePath());
            QFile file(to);
            if (!file.open(QIODevice::WriteOnly | QIODevice::NewOnly) || file.write(*bytes) != bytes->size()) {
                return badInput(QStringLiteral("export-starter: cannot write '%1'").arg(to));
            }
            if (written) {
                *written << to;
            }
        }
    }
    return Unit{};
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
