#include "exercise.h"

#include "core/safefile.h"
#include "grade/lab.h"
#include "grade/policy.h"
#include "kernel/starter.h"
#include "project/projectio.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include <cmath>

namespace Kp {

namespace {

constexpr qint64 kMaxDataFile = 1024ll * 1024 * 1024; // as kpg lab export-starter copies them
constexpr qint64 kMaxPolicy = 1024 * 1024;

Error badInput(const QString &message, const QString &path = {})
{
    Error e{QStringLiteral("exercise"), Error::Code::BadInput, {}, message};
    e.path = path;
    return e;
}

Status writeBytes(const QString &path, const QByteArray &bytes, QStringList *written)
{
    if (Status s = writeOutput(path, bytes, QStringLiteral("the exercise")); !s) {
        return s;
    }
    *written << path;
    return Unit{};
}

/** Whether a folder holds nothing (or does not exist). */
bool isEmptyDir(const QString &dir)
{
    return !QFileInfo::exists(dir) || QDir(dir).isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden);
}

/**
 * Empties dir for a new copy of exercise name: only a folder that holds
 * NAME.kpg (an exercise of that name, which this replaces) or nothing is
 * ever removed, so a mistyped folder costs nobody their files.
 */
Status clearExerciseDir(const QString &dir, const QString &name)
{
    const QFileInfo info(dir);
    if (!info.exists() && !info.isSymLink()) {
        return Unit{};
    }
    if (info.isSymLink() || !info.isDir()) {
        return badInput(QStringLiteral("'%1' exists and is not a folder; choose another exercise name").arg(dir));
    }
    if (isEmptyDir(dir)) {
        return Unit{};
    }
    if (!QFileInfo(QDir(dir).filePath(name + QStringLiteral(".kpg"))).isFile()) {
        return badInput(QStringLiteral("'%1' already holds files that are not the exercise %2 (no %2.kpg in it); "
                                       "choose another exercise name or folder")
                            .arg(dir, name));
    }
    if (!QDir(dir).removeRecursively()) {
        return badInput(QStringLiteral("cannot replace '%1': it could not be removed").arg(dir));
    }
    return Unit{};
}

/** grading.json with the exercise's points set, the other keys as they were. */
Result<QByteArray> policyWithPoints(const QString &file, const QString &name, double points)
{
    QJsonObject root;
    if (QFileInfo::exists(file)) {
        const Result<QByteArray> bytes = readRegularFile(file, kMaxPolicy, QStringLiteral("the grading policy"));
        if (!bytes) {
            return bytes.error();
        }
        QJsonParseError pe;
        const QJsonDocument doc = QJsonDocument::fromJson(*bytes, &pe);
        if (!doc.isObject()) {
            return badInput(QStringLiteral("%1: not a JSON object (%2); fix or remove it, and save the exercise again")
                                .arg(file, pe.error != QJsonParseError::NoError
                                               ? pe.errorString()
                                               : QStringLiteral("another JSON value")));
        }
        root = doc.object();
    }
    QJsonObject exercises = root.value(QStringLiteral("exercises")).toObject();
    QJsonObject mine = exercises.value(name).toObject();
    mine.insert(QStringLiteral("points"), points);
    exercises.insert(name, mine);
    root.insert(QStringLiteral("exercises"), exercises);
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

} // namespace

Status copyRegularFile(const QString &from, const QString &to, qint64 maxBytes, const QString &what)
{
    Result<std::unique_ptr<QFile>> in = openRegularFile(from, maxBytes, what);
    if (!in) {
        return badInput(QStringLiteral("cannot copy %1: %2").arg(from, in.error().message));
    }
    QSaveFile out(to);
    if (!out.open(QIODevice::WriteOnly)) {
        return badInput(QStringLiteral("cannot write %1: %2").arg(to, out.errorString()));
    }
    qint64 total = 0;
    while (true) {
        const QByteArray chunk = (*in)->read(1 << 20);
        if (chunk.isEmpty()) {
            break;
        }
        total += chunk.size();
        if (total > maxBytes || out.write(chunk) != chunk.size()) {
            out.cancelWriting();
            return badInput(QStringLiteral("cannot copy %1 to %2").arg(from, to));
        }
    }
    if (!out.commit()) {
        return badInput(QStringLiteral("cannot write %1: %2").arg(to, out.errorString()));
    }
    return Unit{};
}

bool sameContents(const QString &a, const QString &b)
{
    QFile fa(a);
    QFile fb(b);
    if (!fa.open(QIODevice::ReadOnly) || !fb.open(QIODevice::ReadOnly) || fa.size() != fb.size()) {
        return false;
    }
    QCryptographicHash ha(QCryptographicHash::Sha256);
    QCryptographicHash hb(QCryptographicHash::Sha256);
    return ha.addData(&fa) && hb.addData(&fb) && ha.result() == hb.result();
}

QString defaultStudentsDir(const QString &labDir)
{
    const QString clean = QDir::cleanPath(labDir);
    return clean + QStringLiteral("-students");
}

bool exerciseExists(const QString &labDir, const QString &name)
{
    return !isEmptyDir(QDir(labDir).filePath(name));
}

Result<SavedExercise> saveExercise(const Project &project, const ExerciseTarget &target)
{
    const QString name = target.name.trimmed();
    if (name.isEmpty()) {
        return badInput(QStringLiteral("exercise name: empty; students hand in NAME.cu, so the exercise needs a name"));
    }
    if (!Grade::isPlainName(name)) {
        return badInput(QStringLiteral("exercise name '%1': students hand in %1.cu, so use letters, digits, '_', "
                                       "'-', '.' and '+' (no spaces or slashes)")
                            .arg(name));
    }
    if (!std::isfinite(target.points) || target.points < 0 || target.points > 1e6) {
        return badInput(QStringLiteral("points: %1 is not allowed; from 0 to 1000000").arg(target.points));
    }
    if (target.labDir.trimmed().isEmpty()) {
        return badInput(QStringLiteral("lab folder: empty; choose the folder that holds the lab's exercises"));
    }
    if (project.checks.isEmpty()) {
        return badInput(QStringLiteral("the project has no checks, so a submission cannot be graded; add one in "
                                       "the Project dock's Checks tab"),
                        QStringLiteral("checks"));
    }
    if (!project.compile.includeDirs.isEmpty()) {
        return badInput(QStringLiteral("the project compiles with include folders (%1); an exercise is confined to "
                                       "its own folder, so put the headers in the kernel or remove the folders")
                            .arg(project.compile.includeDirs.join(QStringLiteral(", "))),
                        QStringLiteral("compile.includeDirs"));
    }
    const QString studentsRoot =
        target.studentsDir.trimmed().isEmpty() ? defaultStudentsDir(target.labDir) : target.studentsDir.trimmed();
    if (QDir::cleanPath(QFileInfo(studentsRoot).absoluteFilePath()) ==
        QDir::cleanPath(QFileInfo(target.labDir).absoluteFilePath())) {
        return badInput(QStringLiteral("students' copy '%1': the lab folder itself; the students' copy must not hold "
                                       "the reference, so it goes to another folder")
                            .arg(studentsRoot));
    }

    if (!QDir().mkpath(target.labDir)) {
        return badInput(QStringLiteral("lab folder '%1': cannot make it").arg(target.labDir));
    }
    const QString labDir = QFileInfo(target.labDir).canonicalFilePath();
    const QString exDir = QDir(labDir).filePath(name);
    if (exerciseExists(labDir, name) && !target.replace) {
        return badInput(
            QStringLiteral("'%1' already exists; save again with Replace to overwrite the exercise").arg(exDir));
    }
    if (Status s = clearExerciseDir(exDir, name); !s) {
        return s.error();
    }
    if (!QDir().mkpath(exDir)) {
        return badInput(QStringLiteral("cannot make the folder '%1'").arg(exDir));
    }

    SavedExercise saved;
    saved.instructorDir = exDir;
    Project e = project;
    e.path.clear();
    // The project's files, each copied beside the exercise under its own name.
    const QDir from(project.dir());
    const QString kpgName = name + QStringLiteral(".kpg");
    QHash<QString, QString> taken{{kpgName, QStringLiteral("the exercise")},
                                  {QStringLiteral("starter.cu"), QStringLiteral("the starter")}};
    const auto copyIn = [&](const QString &file, const QString &newName, const QString &what) -> Result<QString> {
        if (project.path.isEmpty() && QFileInfo(file).isRelative()) {
            return badInput(QStringLiteral("%1 '%2' is found beside the project's file, and the project is not saved "
                                           "yet; save it first (File > Save As) next to that file")
                                .arg(what, file));
        }
        const QString source = from.absoluteFilePath(file);
        const QString to = newName.isEmpty() ? QFileInfo(file).fileName() : newName;
        if (taken.contains(to) && taken.value(to) != source) {
            return badInput(QStringLiteral("%1 '%2' and %3 would both be %4 in the exercise's folder; rename one")
                                .arg(what, file, taken.value(to), to));
        }
        if (!taken.contains(to)) {
            taken.insert(to, source);
            if (Status s = copyRegularFile(source, QDir(exDir).filePath(to), kMaxDataFile, what); !s) {
                return badInput(QStringLiteral("%1 '%2': %3").arg(what, file, s.error().message));
            }
            saved.written << QDir(exDir).filePath(to);
        }
        return to;
    };

    e.sourceFile = QStringLiteral("starter.cu");
    if (target.solutionAsReference) {
        // The editor holds the instructor's solution: it becomes the
        // reference, and the students get its kernels with empty bodies.
        if (e.reference && !e.reference->sourceFile.isEmpty()) {
            return badInput(QStringLiteral("the project already names its reference kernel ('%1'), so the source is "
                                           "the students' starter; clear the Lab tab's Reference kernel to save the "
                                           "source as the solution")
                                .arg(e.reference->sourceFile),
                            QStringLiteral("reference.source"));
        }
        const Starter starter = starterSource(project.sourceText);
        if (starter.kernels == 0) {
            return badInput(QStringLiteral("the source has no __global__ kernel with a body, so there is nothing to "
                                           "empty for the students' starter"),
                            QStringLiteral("source"));
        }
        if (Status s = writeBytes(QDir(exDir).filePath(QStringLiteral("reference.cu")), project.sourceText.toUtf8(),
                                  &saved.written);
            !s) {
            return s.error();
        }
        taken.insert(QStringLiteral("reference.cu"), QStringLiteral("the reference kernel"));
        ReferenceSpec reference = e.reference.value_or(ReferenceSpec{});
        reference.sourceFile = QStringLiteral("reference.cu");
        reference.sourceText = project.sourceText;
        e.reference = reference;
        e.sourceText = starter.source;
    } else if (e.reference && !e.reference->sourceFile.isEmpty()) {
        const Result<QString> to =
            copyIn(e.reference->sourceFile, QStringLiteral("reference.cu"), QStringLiteral("the reference kernel"));
        if (!to) {
            return to.error();
        }
        e.reference->sourceFile = *to;
    }
    for (BufferSpec &b : e.buffers) {
        if (!b.init.file.isEmpty()) {
            const Result<QString> to = copyIn(b.init.file, {}, QStringLiteral("buffer %1's file").arg(b.name));
            if (!to) {
                return to.error();
            }
            b.init.file = *to;
        }
    }
    for (CheckSpec &c : e.checks) {
        if (c.kind == CheckSpec::Kind::Npy && !c.npy.isEmpty()) {
            const Result<QString> to = copyIn(c.npy, {}, QStringLiteral("check '%1''s file").arg(c.displayName()));
            if (!to) {
                return to.error();
            }
            c.npy = *to;
        }
    }
    const QString kpg = QDir(exDir).filePath(kpgName);
    if (Status s = saveProjectSource(e, kpg); !s) {
        return s.error();
    }
    saved.written << QDir(exDir).filePath(e.sourceFile);
    if (Status s = saveProject(e, kpg); !s) {
        return s.error();
    }
    saved.written << kpg;

    // The points, then the lab and its policy read back exactly as kpg grade reads them.
    saved.policyFile = QDir(labDir).filePath(Grade::policyFileName());
    const Result<QByteArray> policy = policyWithPoints(saved.policyFile, name, target.points);
    if (!policy) {
        return policy.error();
    }
    const Result<Grade::Lab> lab = Grade::loadLab(labDir);
    if (!lab) {
        return lab.error();
    }
    QStringList names;
    for (const Grade::Exercise &x : lab->exercises) {
        names << x.name;
    }
    if (const Result<Grade::LabPolicy> p = Grade::parsePolicy(*policy, saved.policyFile, names); !p) {
        return p.error();
    }
    if (Status s = writeBytes(saved.policyFile, *policy, &saved.written); !s) {
        return s.error();
    }

    // The students' copy: export-starter's, of this exercise alone, made
    // aside and then moved in, so the other exercises' copies stay.
    const Grade::Exercise *mine = lab->exercise(name);
    if (!mine) {
        return badInput(QStringLiteral("'%1' was written but the lab does not list it as an exercise").arg(kpg));
    }
    Grade::Lab one = *lab;
    one.exercises = {*mine};
    if (!QDir().mkpath(studentsRoot)) {
        return badInput(QStringLiteral("students' copy '%1': cannot make the folder").arg(studentsRoot));
    }
    const QString students = QFileInfo(studentsRoot).canonicalFilePath();
    const QString staging = QDir(students).filePath(QStringLiteral(".export-") + name);
    if (QFileInfo::exists(staging) && !QDir(staging).removeRecursively()) {
        return badInput(QStringLiteral("cannot remove the leftover folder '%1'").arg(staging));
    }
    QStringList exported;
    if (Status s = Grade::exportStarter(one, staging, &exported); !s) {
        QDir(staging).removeRecursively();
        return s.error();
    }
    saved.studentsDir = QDir(students).filePath(name);
    if (Status s = clearExerciseDir(saved.studentsDir, name); !s) {
        QDir(staging).removeRecursively();
        return s.error();
    }
    if (!QDir().rename(QDir(staging).filePath(name), saved.studentsDir)) {
        QDir(staging).removeRecursively();
        return badInput(QStringLiteral("cannot move the students' copy into '%1'").arg(saved.studentsDir));
    }
    QDir(staging).removeRecursively();
    for (const QString &f : exported) {
        saved.written << saved.studentsDir + f.mid(QDir(staging).filePath(name).size());
    }
    return saved;
}

} // namespace Kp
