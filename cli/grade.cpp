// kpg grade: grades a class's submissions against a lab's exercises on the
// GPUs of this host (docs/labs.md); --slurm hands the same work to a Slurm
// job array (cli/gradeslurm.cpp).

#include "grade.h"

#include "client/engineclient.h"
#include "cliutil.h"
#include "compile/sandbox.h"
#include "core/safefile.h"
#include "grade/gradeexport.h"
#include "grade/grader.h"
#include "grade/integrity.h"
#include "grade/policy.h"
#include "projectcli.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSet>
#include <QThread>

#include <cmath>

#include <unistd.h>

namespace Kp::Cli {

using namespace Kp::Grade;

namespace {

/** Outcomes that say something final about the submission; the others are graded again by --resume. */
bool isFinal(Outcome o)
{
    return o != Outcome::NoGpu && o != Outcome::Error && o != Outcome::NotGraded;
}

int badInput(const QString &message)
{
    err() << "kpg: " << message << "\n";
    err().flush();
    return Exit::BadInput;
}

int unavailable(const QString &message)
{
    err() << "kpg: " << message << "\n";
    err().flush();
    return Exit::Unavailable;
}

/** The progress line on stderr: rewritten in place on a terminal, a line per item otherwise. */
class Progress
{
public:
    Progress(int total, int already)
        : m_total(total)
        , m_done(already)
        , m_tty(::isatty(2) == 1)
    {
        m_clock.start();
    }

    void finished(const GradeItem &i)
    {
        ++m_done;
        ++m_new;
        m_counts[i.outcome] += 1;
        if (m_tty) {
            QStringList parts;
            for (Outcome o : allOutcomes()) {
                if (m_counts.value(o)) {
                    parts << QStringLiteral("%1 %2").arg(m_counts.value(o)).arg(outcomeText(o));
                }
            }
            const double s = double(m_clock.elapsed()) / 1000;
            const double rate = s > 0 ? m_new / s : 0;
            const int left = m_total - m_done;
            QString eta = rate > 0 ? QStringLiteral(", %1 s left").arg(qRound(left / rate)) : QString();
            err() << "\r\033[K[" << m_done << "/" << m_total << "] " << parts.join(QStringLiteral(", "))
                  << QStringLiteral(" (%1/s%2)").arg(QString::number(rate, 'f', 1), eta);
        } else {
            // Names are the students' own folder names: no terminal escapes reach the log.
            QString line = QStringLiteral("[%1/%2] %3/%4: %5")
                               .arg(m_done)
                               .arg(m_total)
                               .arg(printableText(i.student), printableText(i.exercise), outcomeText(i.outcome));
            if (std::isfinite(i.speedRatio)) {
                line += QStringLiteral(" (%1x)").arg(QString::number(i.speedRatio, 'f', 2));
            }
            err() << line << "\n";
        }
        err().flush();
    }

    void end()
    {
        if (m_tty && m_new > 0) {
            err() << "\n";
            err().flush();
        }
    }

private:
    int m_total;
    int m_done;
    int m_new = 0;
    bool m_tty;
    QHash<Outcome, int> m_counts;
    QElapsedTimer m_clock;
};

/** Parses "0,2,3" against the GPUs found. */
Result<QList<int>> parseDevices(const QString &value, int count)
{
    QList<int> list;
    for (const QString &part : value.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int d = part.trimmed().toInt(&ok);
        if (!ok || d < 0) {
            return Error{QStringLiteral("grade"),
                         Error::Code::Usage,
                         {},
                         QStringLiteral("--devices takes GPU numbers separated by commas (0,1), not '%1'").arg(value)};
        }
        if (d >= count) {
            return Error{QStringLiteral("grade"),
                         Error::Code::NoDevice,
                         {},
                         QStringLiteral("--devices %1: this machine has %2 GPU%3")
                             .arg(value)
                             .arg(count)
                             .arg(count == 1 ? "" : "s")};
        }
        if (!list.contains(d)) {
            list << d;
        }
    }
    if (list.isEmpty()) {
        return Error{QStringLiteral("grade"),
                     Error::Code::Usage,
                     {},
                     QStringLiteral("--devices takes GPU numbers separated by commas (0,1), not '%1'").arg(value)};
    }
    return list;
}

} // namespace

namespace {

/**
 * Whether a journal may live beside this output: a file that is or will be a
 * regular file, not "-", /dev/stdout, a pipe or a terminal (where
 * "/dev/stdout.journal.jsonl" would be a surprise, or fail).
 */
bool besideOk(const QString &output)
{
    if (output.isEmpty() || output == QLatin1String("-") || output.startsWith(QLatin1String("/dev/")) ||
        output.startsWith(QLatin1String("/proc/"))) {
        return false;
    }
    const QFileInfo fi(output);
    return !fi.exists() || fi.isFile();
}

} // namespace

QString journalPath(const GradeArgs &a, const Lab &lab)
{
    if (!a.journal.isEmpty()) {
        return a.journal;
    }
    if (besideOk(a.json)) {
        return a.json + QStringLiteral(".journal.jsonl");
    }
    if (besideOk(a.csv)) {
        return a.csv + QStringLiteral(".journal.jsonl");
    }
    return lab.name + QStringLiteral("-grade.journal.jsonl");
}

Result<QString> seedSaltFor(const GradeArgs &a, const Lab &lab)
{
    QString file;
    if (a.seedSalt.startsWith(QLatin1Char('@'))) {
        file = a.seedSalt.mid(1);
    } else if (!a.seedSalt.isEmpty()) {
        return a.seedSalt;
    } else if (const QString beside = QDir(lab.dir).filePath(QStringLiteral("grading-salt"));
               QFileInfo::exists(beside)) {
        file = beside;
    } else {
        return QString();
    }
    const Result<QByteArray> bytes = readRegularFile(file, 4096, QStringLiteral("the seed salt"));
    if (!bytes) {
        return Error{QStringLiteral("grade"),
                     Error::Code::BadInput,
                     {},
                     QStringLiteral("--seed-salt: ") + bytes.error().message};
    }
    const QString salt = QString::fromUtf8(*bytes).trimmed();
    if (salt.isEmpty()) {
        return Error{QStringLiteral("grade"),
                     Error::Code::BadInput,
                     {},
                     QStringLiteral("--seed-salt: %1 is empty; write a secret line of text in it").arg(file)};
    }
    return salt;
}

namespace {

/** When each student handed in: the manifest's time, else the newest of their submitted files' times. */
Result<QHash<QString, QDateTime>> submissionTimes(const GradeArgs &a, const Lab &lab, const QList<Student> &students,
                                                  const QStringList &ignore)
{
    if (!a.manifest.isEmpty()) {
        const Result<QByteArray> bytes = readRegularFile(a.manifest, 64 * 1024 * 1024, QStringLiteral("the manifest"));
        if (!bytes) {
            return Error{QStringLiteral("grade"),
                         Error::Code::BadInput,
                         {},
                         QStringLiteral("--manifest: ") + bytes.error().message};
        }
        return parseManifest(*bytes, a.manifest);
    }
    QHash<QString, QDateTime> times;
    for (const Student &s : students) {
        if (s.dir.isEmpty()) {
            continue;
        }
        QDateTime newest;
        for (const Exercise &e : lab.exercises) {
            // The file graded, also one found deeper in the student's folder.
            const Submission sub =
                readSubmission(s, e.name, QFileInfo(a.submissions).absoluteFilePath(), nullptr, ignore);
            const QFileInfo fi(sub.file);
            if (sub.state == Submission::State::Ok && fi.isFile() &&
                (!newest.isValid() || fi.lastModified() > newest)) {
                newest = fi.lastModified();
            }
        }
        if (newest.isValid()) {
            times.insert(s.name, newest);
        }
    }
    return times;
}

/** The plagiarism report and its summary line; the gradebook, feedback, Gradescope and Autolab exports. */
int writeExports(const GradeArgs &a, const Lab &lab, const QList<Student> &students, const QList<GradeItem> &items)
{
    int code = Exit::Ok;
    QStringList exercises;
    for (const Exercise &e : lab.exercises) {
        exercises << e.name;
    }
    const Result<LabPolicy> policy = loadPolicy(lab.dir, exercises);
    if (!policy) {
        err() << "kpg: " << policy.error().message << "\n";
        return Exit::BadInput;
    }
    // Plagiarism: always the summary line, the pairs in a file when asked.
    const QString root = QFileInfo(a.submissions).absoluteFilePath();
    QList<ExerciseSources> sources;
    for (const Exercise &e : lab.exercises) {
        ExerciseSources es;
        es.exercise = e.name;
        es.starter = e.project.sourceText;
        for (const Student &s : students) {
            const Submission sub = readSubmission(s, e.name, root, nullptr, policy->ignore);
            if (sub.state == Submission::State::Ok) {
                es.sources.insert(s.name, sub.source);
                es.sha256Hex.insert(s.name, sub.sha256);
            }
        }
        sources << es;
    }
    const QList<SimilarPair> pairs = findSimilar(sources);
    int identical = 0;
    for (const SimilarPair &p : pairs) {
        identical += p.identical ? 1 : 0;
    }
    if (!pairs.isEmpty()) {
        err() << "kpg: plagiarism: " << pairs.size() << " pair" << (pairs.size() == 1 ? "" : "s")
              << " of alike submissions (" << identical
              << " identical); most alike: " << printableText(pairs.first().studentA) << " and "
              << printableText(pairs.first().studentB) << ", " << pairs.first().exercise << ", "
              << QString::number(pairs.first().similarity, 'f', 2)
              << (a.plagiarism.isEmpty() ? QStringLiteral(" (--plagiarism FILE lists them)") : QString()) << "\n";
    } else {
        err() << "kpg: plagiarism: no alike submissions\n";
    }
    err().flush();
    if (!a.plagiarism.isEmpty() &&
        !writeText(a.plagiarism, similarityCsv(pairs), QStringLiteral("the plagiarism report"))) {
        code = Exit::CannotWrite;
    }
    if (a.gradebook.isEmpty() && a.feedback.isEmpty() && a.gradescope.isEmpty() && !a.autolab) {
        return code;
    }
    const Result<QHash<QString, QDateTime>> times = submissionTimes(a, lab, students, policy->ignore);
    if (!times) {
        err() << "kpg: " << times.error().message << "\n";
        return Exit::BadInput;
    }
    QStringList names;
    for (const Student &s : students) {
        names << s.name;
    }
    const QList<StudentGrade> grades = gradebook(names, exercises, items, *policy, *times);
    if (!a.gradebook.isEmpty() &&
        !writeText(a.gradebook, gradebookCsv(exercises, grades), QStringLiteral("the gradebook"))) {
        code = Exit::CannotWrite;
    }
    auto feedbackOf = [&](const StudentGrade &g) {
        Feedback f;
        f.student = g.student;
        f.lab = lab.name;
        f.grade = g;
        f.policy = *policy;
        for (const GradeItem &i : items) {
            if (i.student == g.student) {
                f.items << i;
            }
        }
        return f;
    };
    // Students' names become file names only when plain; others are skipped with a note.
    auto fileSafe = [](const QString &name) { return isPlainName(name); };
    if (!a.feedback.isEmpty()) {
        QDir().mkpath(a.feedback);
        for (const StudentGrade &g : grades) {
            if (!fileSafe(g.student)) {
                err() << "kpg: --feedback: no file for the student '" << printableText(g.student)
                      << "' (the name is not usable as a file name)\n";
                continue;
            }
            const Feedback f = feedbackOf(g);
            if (!writeText(QDir(a.feedback).filePath(g.student + QStringLiteral(".md")), feedbackMarkdown(f).toUtf8(),
                           QStringLiteral("the feedback")) ||
                !writeText(QDir(a.feedback).filePath(g.student + QStringLiteral(".html")), feedbackHtml(f).toUtf8(),
                           QStringLiteral("the feedback"))) {
                code = Exit::CannotWrite;
            }
        }
    }
    if (!a.gradescope.isEmpty()) {
        double seconds = 0;
        for (const GradeItem &i : items) {
            seconds += (i.compileMs + i.runMs) / 1000;
        }
        if (grades.size() == 1) {
            if (!writeText(a.gradescope,
                           QJsonDocument(gradescopeResults(feedbackOf(grades.first()), seconds))
                               .toJson(QJsonDocument::Indented),
                           QStringLiteral("the Gradescope results"))) {
                code = Exit::CannotWrite;
            }
        } else {
            for (const StudentGrade &g : grades) {
                if (!fileSafe(g.student)) {
                    continue;
                }
                const QString dir = QDir(a.gradescope).filePath(g.student);
                QDir().mkpath(dir);
                if (!writeText(QDir(dir).filePath(QStringLiteral("results.json")),
                               QJsonDocument(gradescopeResults(feedbackOf(g), seconds)).toJson(QJsonDocument::Indented),
                               QStringLiteral("the Gradescope results"))) {
                    code = Exit::CannotWrite;
                }
            }
        }
    }
    if (a.autolab) {
        // Autolab reads the last line of the autograder's output.
        for (const StudentGrade &g : grades) {
            if (grades.size() > 1) {
                out() << printableText(g.student) << ": ";
            }
            out() << autolabScoreLine(exercises, g) << "\n";
        }
        out().flush();
    }
    return code;
}

} // namespace

int finishGrading(const GradeArgs &a, const Lab &lab, const QList<Student> &students, QList<GradeItem> items)
{
    QSet<QString> wanted;
    QStringList studentNames;
    QStringList exercises;
    for (const Exercise &e : lab.exercises) {
        exercises << e.name;
    }
    for (const Student &s : students) {
        studentNames << s.name;
        for (const QString &e : exercises) {
            wanted.insert(s.name + QLatin1Char('/') + e);
        }
    }
    QList<GradeItem> chosen;
    QSet<QString> seen;
    for (const GradeItem &i : items) {
        if (wanted.contains(i.key()) && !seen.contains(i.key())) {
            seen.insert(i.key());
            chosen << i;
        }
    }
    sortItems(&chosen);

    // The JSON on stdout (-, /dev/stdout) keeps stdout to itself: the table goes to stderr.
    const bool jsonOnStdout = a.json == QLatin1String("-") || a.json == QLatin1String("/dev/stdout");
    QTextStream &o = jsonOnStdout ? err() : out();
    o << tableText(exercises, chosen);
    o.flush();

    int code = Exit::Ok;
    int incomplete = 0;
    int noGpu = 0;
    for (const GradeItem &i : chosen) {
        incomplete += (i.outcome == Outcome::Error || i.outcome == Outcome::NotGraded) ? 1 : 0;
        noGpu += i.outcome == Outcome::NoGpu ? 1 : 0;
    }
    if (chosen.size() < wanted.size()) {
        incomplete += int(wanted.size() - chosen.size());
    }
    if (noGpu > 0) {
        err() << "kpg: " << noGpu << " submission" << (noGpu == 1 ? " was" : "s were")
              << " compiled and bound but not run: no GPU (--require-gpu makes that an error)\n";
    }
    if (incomplete > 0) {
        err() << "kpg: " << incomplete << " submission" << (incomplete == 1 ? "" : "s")
              << " could not be graded; run the same command with --resume to grade them again\n";
        code = Exit::Incomplete;
    }
    err().flush();
    if (!a.csv.isEmpty() && !writeText(a.csv, csvText(chosen), QStringLiteral("the CSV"))) {
        code = Exit::CannotWrite;
    }
    if (!a.json.isEmpty() && !writeText(a.json,
                                        QJsonDocument(gradingJson(lab.dir, QFileInfo(a.submissions).absoluteFilePath(),
                                                                  exercises, studentNames, chosen, a.timing))
                                            .toJson(QJsonDocument::Indented),
                                        QStringLiteral("the JSON result"))) {
        code = Exit::CannotWrite;
    }
    if (const int c = writeExports(a, lab, students, chosen); c != Exit::Ok) {
        code = c;
    }
    return code;
}

int gradeCommand(const QStringList &given)
{
    // --option=value is the same as --option value.
    QStringList args;
    for (const QString &s : given) {
        const qsizetype eq = s.indexOf(QLatin1Char('='));
        if (s.startsWith(QLatin1String("--")) && eq > 2) {
            args << s.left(eq) << s.mid(eq + 1);
        } else {
            args << s;
        }
    }
    // Kernels of strangers run in workers under Landlock too (docs/security.md,
    // "Worker sandbox"); KPG_WORKER_SANDBOX=0 turns it off, as for debugging the driver.
    if (qEnvironmentVariable("KPG_WORKER_SANDBOX") != QLatin1String("0")) {
        Sandbox::setWorkerSandboxed(true);
    }
    GradeArgs a;
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString &s = args[i];
        auto value = [&](QString *outValue) {
            if (i + 1 >= args.size()) {
                return false;
            }
            *outValue = args[++i];
            return true;
        };
        auto positive = [&](const QString &v, int *outInt, int min) {
            bool ok = false;
            *outInt = v.toInt(&ok);
            return ok && *outInt >= min;
        };
        QString v;
        if (s == QLatin1String("--resume")) {
            a.resume = true;
        } else if (s == QLatin1String("--no-timing")) {
            a.timing = false;
        } else if (s == QLatin1String("--require-gpu")) {
            a.requireGpu = true;
        } else if (s == QLatin1String("--no-sandbox")) {
            a.noSandbox = true;
        } else if (s == QLatin1String("--slurm")) {
            a.slurm = true;
        } else if (s == QLatin1String("--autolab")) {
            a.autolab = true;
        } else if (s.startsWith(QLatin1String("--")) && s != QLatin1String("--")) {
            static const QStringList withValue{
                QStringLiteral("--submissions"), QStringLiteral("--csv"),           QStringLiteral("--json"),
                QStringLiteral("--journal"),     QStringLiteral("--jobs"),          QStringLiteral("--compile-jobs"),
                QStringLiteral("--timeout"),     QStringLiteral("--devices"),       QStringLiteral("--only"),
                QStringLiteral("--partition"),   QStringLiteral("--gpus-per-task"), QStringLiteral("--tasks"),
                QStringLiteral("--slurm-dir"),   QStringLiteral("--sbatch-arg"),    QStringLiteral("--poll"),
                QStringLiteral("--seed-salt"),   QStringLiteral("--sanitize"),      QStringLiteral("--plagiarism"),
                QStringLiteral("--gradebook"),   QStringLiteral("--feedback"),      QStringLiteral("--gradescope"),
                QStringLiteral("--manifest")};
            if (!withValue.contains(s)) {
                return usageError(QStringLiteral("grade: unknown option '%1'").arg(s));
            }
            if (!value(&v)) {
                return usageError(QStringLiteral("grade: %1 needs a value").arg(s));
            }
            if (s == QLatin1String("--submissions")) {
                a.submissions = v;
            } else if (s == QLatin1String("--seed-salt")) {
                if (v.trimmed().isEmpty()) {
                    return usageError(QStringLiteral("grade: --seed-salt takes a secret text or @FILE, not nothing"));
                }
                a.seedSalt = v;
            } else if (s == QLatin1String("--sanitize")) {
                if (v != QLatin1String("memcheck")) {
                    return usageError(QStringLiteral("grade: --sanitize takes memcheck, not '%1'").arg(v));
                }
                a.sanitize = true;
            } else if (s == QLatin1String("--plagiarism")) {
                a.plagiarism = v;
            } else if (s == QLatin1String("--gradebook")) {
                a.gradebook = v;
            } else if (s == QLatin1String("--feedback")) {
                a.feedback = v;
            } else if (s == QLatin1String("--gradescope")) {
                a.gradescope = v;
            } else if (s == QLatin1String("--manifest")) {
                a.manifest = v;
            } else if (s == QLatin1String("--csv")) {
                a.csv = v;
            } else if (s == QLatin1String("--json")) {
                a.json = v;
            } else if (s == QLatin1String("--journal")) {
                a.journal = v;
            } else if (s == QLatin1String("--devices")) {
                a.devices = v;
            } else if (s == QLatin1String("--only")) {
                a.only = v;
            } else if (s == QLatin1String("--partition")) {
                a.partition = v;
            } else if (s == QLatin1String("--slurm-dir")) {
                a.slurmDir = v;
            } else if (s == QLatin1String("--sbatch-arg")) {
                a.sbatchArgs << v;
            } else if (s == QLatin1String("--timeout")) {
                bool ok = false;
                a.timeout = v.toDouble(&ok);
                if (!ok || !(a.timeout > 0)) {
                    return usageError(
                        QStringLiteral("grade: --timeout takes a positive number of seconds, not '%1'").arg(v));
                }
            } else {
                int *target = s == QLatin1String("--jobs")            ? &a.jobs
                              : s == QLatin1String("--compile-jobs")  ? &a.compileJobs
                              : s == QLatin1String("--gpus-per-task") ? &a.gpusPerTask
                              : s == QLatin1String("--tasks")         ? &a.tasks
                                                                      : &a.pollSeconds;
                const int min = s == QLatin1String("--gpus-per-task") ? 0 : 1;
                if (!positive(v, target, min)) {
                    return usageError(QStringLiteral("grade: %1 takes a whole number of at least %2, not '%3'")
                                          .arg(s)
                                          .arg(min)
                                          .arg(v));
                }
            }
        } else if (a.lab.isEmpty()) {
            a.lab = s;
        } else {
            return usageError(QStringLiteral("grade: one lab at a time ('%1' and '%2')").arg(a.lab, s));
        }
    }
    if (a.lab.isEmpty() || a.submissions.isEmpty()) {
        return usageError(QStringLiteral("grade: give a lab folder and --submissions DIR (kpg grade LAB "
                                         "--submissions DIR)"));
    }
    if (!a.slurm && (!a.partition.isEmpty() || a.tasks || !a.slurmDir.isEmpty() || !a.sbatchArgs.isEmpty())) {
        return usageError(QStringLiteral("grade: --partition, --tasks, --slurm-dir and --sbatch-arg go with --slurm"));
    }

    const Result<Lab> loaded = loadLab(a.lab);
    if (!loaded) {
        return badInput(loaded.error().message);
    }
    const Lab &lab = *loaded;
    QStringList exerciseNames;
    for (const Exercise &e : lab.exercises) {
        exerciseNames << e.name;
    }
    const Result<LabPolicy> policy = loadPolicy(lab.dir, exerciseNames);
    if (!policy) {
        return badInput(policy.error().message);
    }
    const Result<QString> salt = seedSaltFor(a, lab);
    if (!salt) {
        return badInput(salt.error().message);
    }
    if (!a.manifest.isEmpty()) {
        // A bad manifest is found before anything is graded, not after.
        const Result<QByteArray> bytes = readRegularFile(a.manifest, 64 * 1024 * 1024, QStringLiteral("the manifest"));
        if (!bytes) {
            return badInput(QStringLiteral("--manifest: ") + bytes.error().message);
        }
        if (const Result<QHash<QString, QDateTime>> m = parseManifest(*bytes, a.manifest); !m) {
            return badInput(m.error().message);
        }
    }
    QStringList skipped;
    const Result<QList<Student>> found = findStudents(a.submissions, &skipped, policy->ignore);
    if (!found) {
        return badInput(found.error().message);
    }
    if (!skipped.isEmpty()) {
        err() << "kpg: note: not student folders, skipped: " << printableText(skipped.join(QStringLiteral(", ")))
              << "\n";
    }
    QList<Student> students = *found;
    if (!a.only.isEmpty()) {
        const Result<QStringList> names = parseStudentList(a.only);
        if (!names) {
            return usageError(QStringLiteral("grade: ") + names.error().message);
        }
        QList<Student> chosen;
        for (const QString &n : *names) {
            auto it = std::find_if(students.cbegin(), students.cend(), [&](const Student &st) { return st.name == n; });
            if (it == students.cend()) {
                return usageError(
                    QStringLiteral("grade: --only: no student folder '%1' in %2").arg(printableText(n), a.submissions));
            }
            chosen << *it;
        }
        students = chosen;
    }
    for (const Student &s : students) {
        if (!s.refused.isEmpty()) {
            err() << "kpg: " << printableText(s.name) << ": " << printableText(s.refused) << "\n";
        }
    }
    err().flush();

    if (a.slurm) {
        return gradeWithSlurm(a, lab, students);
    }

    // What is already graded (--resume): an item stays when its outcome is
    // final and the student's file is the one graded.
    const QString journalFile = journalPath(a, lab);
    QList<GradeItem> kept;
    QHash<QString, GradeItem> previous;
    if (a.resume) {
        QString journalLab;
        QStringList warnings;
        QHash<QString, int> lineOf;
        const Result<QList<GradeItem>> old = Journal::read(journalFile, &journalLab, &warnings, &lineOf);
        if (!old) {
            return badInput(QStringLiteral("--resume: ") + old.error().message);
        }
        if (!journalLab.isEmpty() && journalLab != lab.dir) {
            return badInput(QStringLiteral("--resume: the journal %1 is of the lab %2, not %3; give another "
                                           "--journal or leave out --resume")
                                .arg(journalFile, journalLab, lab.dir));
        }
        QSet<QString> studentNames;
        for (const Student &s : *found) {
            studentNames.insert(s.name);
        }
        for (const GradeItem &i : *old) {
            // A result of no student or exercise of this grading is someone
            // else's line (an edited or mixed-up journal): never trusted.
            const QString who =
                !studentNames.contains(i.student) ? QStringLiteral("the student '%1' has no folder in %2")
                                                        .arg(printableText(i.student), a.submissions)
                : !exerciseNames.contains(i.exercise)
                    ? QStringLiteral("the exercise '%1' is not in the lab").arg(printableText(i.exercise))
                    : QString();
            if (!who.isEmpty()) {
                warnings << QStringLiteral("the journal %1, line %2: %3; ignored")
                                .arg(journalFile)
                                .arg(lineOf.value(i.key()))
                                .arg(who);
                continue;
            }
            previous.insert(i.key(), i);
        }
        for (const QString &w : warnings) {
            err() << "kpg: warning: " << printableText(w) << "\n";
        }
    }
    QList<GradeTask> tasks;
    bool anyToCompile = false;
    const LinkIndex links = LinkIndex::build(QFileInfo(a.submissions).absoluteFilePath());
    for (const Student &s : students) {
        for (const Exercise &e : lab.exercises) {
            GradeTask t{s.name, &e,
                        readSubmission(s, e.name, QFileInfo(a.submissions).absoluteFilePath(), &links, policy->ignore)};
            const auto prev = previous.constFind(s.name + QLatin1Char('/') + e.name);
            if (prev != previous.cend() && isFinal(prev->outcome) && prev->sha256 == t.submission.sha256) {
                kept << *prev;
                continue;
            }
            anyToCompile = anyToCompile || t.submission.state == Submission::State::Ok;
            tasks << t;
        }
    }
    const int total = int(students.size() * lab.exercises.size());
    if (a.resume) {
        err() << "kpg: resuming: " << kept.size() << " of " << total << " already graded in " << journalFile << "\n";
    }

    if (anyToCompile && !a.noSandbox) {
        if (Status s = requireCompilerSandbox(QStringLiteral("grade"),
                                              QStringLiteral("grade: submissions are other people's code, compiled"));
            !s) {
            return unavailable(s.error().message);
        }
    }

    // The GPUs: one probe, then a worker per job.
    GraderOptions options;
    options.timing = a.timing;
    options.timeoutSeconds = a.timeout;
    options.seedSalt = *salt;
    options.policy = *policy;
    options.sanitize = a.sanitize;
    QString noGpuReason;
    if (!tasks.isEmpty()) {
        EngineClient probe;
        const Result<DeviceList> devices = probe.listDevicesSync();
        const int count = devices ? int(devices->devices.size()) : 0;
        if (!devices || count == 0) {
            noGpuReason = devices ? QStringLiteral("no GPU found") : devices.error().message;
            if (a.requireGpu || !a.devices.isEmpty()) {
                return unavailable(QStringLiteral("grade: no GPU to grade on: ") + noGpuReason);
            }
            err() << "kpg: " << noGpuReason << "; submissions are compiled and bound, not run\n";
        } else {
            if (a.devices.isEmpty()) {
                for (int d = 0; d < count; ++d) {
                    options.devices << d;
                }
            } else {
                const Result<QList<int>> chosen = parseDevices(a.devices, count);
                if (!chosen) {
                    return chosen.error().code == Error::Code::Usage
                               ? usageError(QStringLiteral("grade: ") + chosen.error().message)
                               : unavailable(QStringLiteral("grade: ") + chosen.error().message);
                }
                options.devices = *chosen;
            }
            options.ccMajor = devices->devices[options.devices.first()].ccMajor;
            options.ccMinor = devices->devices[options.devices.first()].ccMinor;
        }
    }
    options.jobs = a.jobs > 0 ? a.jobs : std::max<int>(1, int(options.devices.size()));
    options.compileJobs =
        a.compileJobs > 0 ? a.compileJobs : std::clamp(QThread::idealThreadCount() - options.jobs, 1, 16);

    Grader grader(lab, options);
    if (!tasks.isEmpty()) {
        if (Status s = grader.prepare(); !s) {
            err() << "kpg: " << s.error().message << "\n";
            err().flush();
            return Exit::forError(s.error());
        }
    }
    // Only once the lab has proven itself: a broken exercise leaves the last journal as it was.
    if (!a.resume) {
        if (const Result<QList<GradeItem>> old = Journal::read(journalFile); old && !old->isEmpty()) {
            err() << "kpg: starting the journal " << journalFile << " over (it held " << old->size()
                  << " results; --resume keeps them)\n";
        }
    }
    Journal journal;
    if (Status s = journal.open(journalFile, lab.dir, a.resume); !s) {
        err() << "kpg: " << s.error().message << "\n";
        return Exit::CannotWrite;
    }
    QList<GradeItem> items = kept;
    if (!tasks.isEmpty()) {
        Progress progress(total, int(kept.size()));
        bool journalFailed = false;
        grader.run(tasks, [&](const GradeItem &i) {
            items << i;
            if (Status s = journal.append(i); !s && !journalFailed) {
                journalFailed = true;
                err() << "\nkpg: " << s.error().message << " (the grading goes on; --resume will not know these)\n";
            }
            progress.finished(i);
        });
        progress.end();
    }
    return finishGrading(a, lab, students, items);
}

int labCommand(const QStringList &args)
{
    if (args.isEmpty() || args.first() != QLatin1String("export-starter")) {
        return usageError(
            QStringLiteral("lab: the one subcommand is export-starter (kpg lab export-starter LAB OUTDIR)"));
    }
    if (args.size() != 3) {
        return usageError(QStringLiteral("lab export-starter: give the lab folder and a new folder for the students' "
                                         "copy (kpg lab export-starter LAB OUTDIR)"));
    }
    const Result<Lab> lab = loadLab(args[1]);
    if (!lab) {
        return badInput(lab.error().message);
    }
    QStringList written;
    if (Status s = exportStarter(*lab, args[2], &written); !s) {
        err() << "kpg: " << s.error().message << "\n";
        err().flush();
        return s.error().code == Error::Code::BadInput ? Exit::BadInput : Exit::CannotWrite;
    }
    out() << "wrote the students' copy of " << lab->name << " to " << args[2] << " (" << lab->exercises.size()
          << " exercise" << (lab->exercises.size() == 1 ? "" : "s") << ", " << written.size() << " files)\n";
    return Exit::Ok;
}

} // namespace Kp::Cli
