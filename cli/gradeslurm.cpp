// kpg grade --slurm: the grading as a Slurm job array (docs/labs.md,
// "Grading on a cluster"). The students are split into chunks; array task K
// runs `kpg grade` on chunk K with its own GPU and journal in a shared
// folder; this process waits for the array, then merges the journals into
// the one table. A task that fails leaves its ungraded students as "not
// graded", with the reason.

#include "cliutil.h"
#include "grade.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QProcess>
#include <QSet>
#include <QStandardPaths>
#include <QThread>

#include "core/safefile.h"

namespace Kp::Cli {

using namespace Kp::Grade;

namespace {

QString shellQuote(const QString &s)
{
    QString q = s;
    q.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
    return QLatin1Char('\'') + q + QLatin1Char('\'');
}

/** Text for inside "..." in sh: \\, ", $ and ` escaped. */
QString doubleQuoted(const QString &s)
{
    QString q;
    for (const QChar c : s) {
        if (c == QLatin1Char('\\') || c == QLatin1Char('"') || c == QLatin1Char('$') || c == QLatin1Char('`')) {
            q += QLatin1Char('\\');
        }
        q += c;
    }
    return q;
}

struct Proc
{
    int exitCode = -1;
    bool started = false;
    QString out;
    QString err;
};

Proc runTool(const QString &program, const QStringList &args, int timeoutMs = 60000)
{
    QProcess p;
    p.start(program, args);
    Proc r;
    r.started = p.waitForStarted(timeoutMs);
    if (!r.started) {
        r.err = p.errorString();
        return r;
    }
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("%1 did not answer within %2 s").arg(program).arg(timeoutMs / 1000);
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

/** The last line of a task's stderr log that says something ("kpg: ..."), for the reason of a failure. */
QString lastLogLine(const QString &path)
{
    const Result<QByteArray> bytes = readRegularFile(path, 64 * 1024 * 1024, QStringLiteral("a task's log"));
    if (!bytes) {
        return QString();
    }
    const QStringList lines = QString::fromUtf8(*bytes).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    for (qsizetype i = lines.size() - 1; i >= 0; --i) {
        const QString l = lines[i].trimmed();
        if (l.startsWith(QLatin1String("kpg: ")) && !l.contains(QLatin1String("--resume"))) {
            return l.mid(5);
        }
    }
    return lines.isEmpty() ? QString() : lines.last().trimmed().left(300);
}

int countLines(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        return 0;
    }
    return int(std::max<qsizetype>(0, f.readAll().count('\n') - 1)); // less the header
}

} // namespace

int gradeWithSlurm(const GradeArgs &a, const Lab &lab, const QList<Student> &students)
{
    const QString sbatch = QStandardPaths::findExecutable(QStringLiteral("sbatch"));
    const QString squeue = QStandardPaths::findExecutable(QStringLiteral("squeue"));
    if (sbatch.isEmpty() || squeue.isEmpty()) {
        err() << "kpg: grade --slurm: " << (sbatch.isEmpty() ? "sbatch" : "squeue")
              << " is not on PATH; run on a Slurm login node, or grade on this host without --slurm\n";
        err().flush();
        return Exit::Unavailable;
    }
    const QString dir = QFileInfo(a.slurmDir.isEmpty() ? journalPath(a, lab) + QStringLiteral(".slurm") : a.slurmDir)
                            .absoluteFilePath();
    QDir d;
    for (const char *sub : {"parts", "logs", "tasks"}) {
        if (!d.mkpath(dir + QLatin1Char('/') + QLatin1String(sub))) {
            err() << "kpg: grade --slurm: cannot make the folder " << dir << "/" << sub << "\n";
            return Exit::CannotWrite;
        }
    }

    // Chunks of consecutive students; the same students and --tasks give the
    // same chunks, so --resume finds each chunk's journal again.
    const int taskCount = int(std::min<qsizetype>(students.size(), a.tasks > 0 ? a.tasks : 16));
    QList<QList<Student>> chunks(taskCount);
    for (qsizetype i = 0; i < students.size(); ++i) {
        chunks[int(i * taskCount / students.size())] << students[i];
    }
    QList<int> toRun;
    for (int k = 0; k < taskCount; ++k) {
        QByteArray names;
        for (const Student &s : chunks[k]) {
            names += s.name.toUtf8() + '\n';
        }
        const QString list = QStringLiteral("%1/tasks/task-%2.txt").arg(dir).arg(k);
        const QString part = QStringLiteral("%1/parts/task-%2.jsonl").arg(dir).arg(k);
        const QString rc = QStringLiteral("%1/parts/task-%2.rc").arg(dir).arg(k);
        bool same = false;
        if (a.resume) {
            const Result<QByteArray> old = readRegularFile(list, 16 * 1024 * 1024, QStringLiteral("a task list"));
            same = old && *old == names;
        }
        if (!same) {
            QFile::remove(part);
            QFile::remove(rc);
        }
        if (same) {
            // A chunk that finished cleanly before is not graded again.
            const Result<QByteArray> code = readRegularFile(rc, 64, QStringLiteral("a task's exit status"));
            if (code && code->trimmed() == "0") {
                continue;
            }
            QFile::remove(rc);
        }
        if (Status s = writeOutput(list, names, QStringLiteral("a task list")); !s) {
            err() << "kpg: " << s.error().message << "\n";
            return Exit::CannotWrite;
        }
        toRun << k;
    }

    // Each task: kpg grade on its chunk, its own journal, its exit status in a file.
    QStringList cmd{shellQuote(QCoreApplication::applicationFilePath()),
                    QStringLiteral("grade"),
                    shellQuote(lab.dir),
                    QStringLiteral("--submissions"),
                    shellQuote(QFileInfo(a.submissions).absoluteFilePath()),
                    QStringLiteral("--only"),
                    QStringLiteral("\"@%1/tasks/task-$k.txt\"").arg(doubleQuoted(dir)),
                    QStringLiteral("--journal"),
                    QStringLiteral("\"%1/parts/task-$k.jsonl\"").arg(doubleQuoted(dir)),
                    QStringLiteral("--resume")};
    if (!a.timing) {
        cmd << QStringLiteral("--no-timing");
    }
    if (a.timeout > 0) {
        cmd << QStringLiteral("--timeout") << QString::number(a.timeout);
    }
    if (a.noSandbox) {
        cmd << QStringLiteral("--no-sandbox");
    }
    if (a.gpusPerTask > 0) {
        // A task that was given GPUs and finds none has failed, not graded.
        cmd << QStringLiteral("--require-gpu");
    }
    if (a.compileJobs > 0) {
        cmd << QStringLiteral("--compile-jobs") << QString::number(a.compileJobs);
    }
    if (!a.seedSalt.isEmpty()) {
        cmd << QStringLiteral("--seed-salt") << shellQuote(a.seedSalt);
    }
    if (a.sanitize) {
        cmd << QStringLiteral("--sanitize") << QStringLiteral("memcheck");
    }
    const QString dirQuoted = doubleQuoted(dir);
    const QString script = QStringLiteral("#!/bin/sh\n"
                                          "# Written by kpg grade --slurm: one array task grades one chunk.\n"
                                          "k=\"$SLURM_ARRAY_TASK_ID\"\n"
                                          "%1\n"
                                          "rc=$?\n"
                                          "echo \"$rc\" > \"%2/parts/task-$k.rc\"\n"
                                          "exit \"$rc\"\n")
                               .arg(cmd.join(QLatin1Char(' ')), dirQuoted);
    const QString scriptPath = dir + QStringLiteral("/grade.sh");
    if (Status s = writeOutput(scriptPath, script.toUtf8(), QStringLiteral("the batch script")); !s) {
        err() << "kpg: " << s.error().message << "\n";
        return Exit::CannotWrite;
    }

    QString jobId;
    if (!toRun.isEmpty()) {
        QStringList ids;
        for (int k : toRun) {
            ids << QString::number(k);
        }
        QStringList args{QStringLiteral("--parsable"),
                         QStringLiteral("--job-name=kpg-grade-") + lab.name,
                         QStringLiteral("--array=") + ids.join(QLatin1Char(',')),
                         QStringLiteral("--ntasks=1"),
                         QStringLiteral("--output=%1/logs/task-%a.out").arg(dir),
                         QStringLiteral("--error=%1/logs/task-%a.err").arg(dir)};
        if (!a.partition.isEmpty()) {
            args << QStringLiteral("--partition=") + a.partition;
        }
        if (a.gpusPerTask > 0) {
            args << QStringLiteral("--gres=gpu:%1").arg(a.gpusPerTask);
        }
        args << a.sbatchArgs << scriptPath;
        const Proc sub = runTool(sbatch, args);
        if (sub.exitCode != 0) {
            err() << "kpg: grade --slurm: sbatch failed: "
                  << (sub.err.trimmed().isEmpty() ? sub.out : sub.err).trimmed() << "\n";
            err().flush();
            return Exit::Unavailable;
        }
        jobId = sub.out.trimmed().section(QLatin1Char(';'), 0, 0);
        err() << "kpg: submitted Slurm job " << jobId << ": " << toRun.size() << " task"
              << (toRun.size() == 1 ? "" : "s") << " for " << students.size() << " students; logs in " << dir
              << "/logs\n";
        err().flush();

        // Wait: the array is done when squeue no longer lists it.
        const int total = int(students.size() * lab.exercises.size());
        int lastDone = -1;
        int squeueFailures = 0;
        for (;;) {
            const Proc q = runTool(squeue, {QStringLiteral("-h"), QStringLiteral("-j"), jobId, QStringLiteral("-o"),
                                            QStringLiteral("%i %T")});
            int done = 0;
            for (int k = 0; k < taskCount; ++k) {
                done += countLines(QStringLiteral("%1/parts/task-%2.jsonl").arg(dir).arg(k));
            }
            if (done != lastDone) {
                err() << "kpg: Slurm job " << jobId << ": " << done << " of " << total << " graded\n";
                err().flush();
                lastDone = done;
            }
            if (q.exitCode == 0 && q.out.trimmed().isEmpty()) {
                break;
            }
            if (q.exitCode != 0) {
                // squeue forgets a finished job after MinJobAge; its "Invalid job id" means gone.
                if (q.err.contains(QLatin1String("Invalid job id")) || ++squeueFailures >= 10) {
                    break;
                }
            }
            QThread::sleep(static_cast<unsigned long>(a.pollSeconds));
        }
    }

    // Merge the parts; a task that failed leaves its missing students "not graded".
    const QString sacct = QStandardPaths::findExecutable(QStringLiteral("sacct"));
    QList<GradeItem> items;
    for (int k = 0; k < taskCount; ++k) {
        // A task's journal is as untrusted as any journal --resume reads: a
        // damaged line, or a result of a student or exercise that is not this
        // task's, is one warning and that submission counts as not graded.
        const QString partFile = QStringLiteral("%1/parts/task-%2.jsonl").arg(dir).arg(k);
        QStringList warnings;
        QHash<QString, int> lineOf;
        const Result<QList<GradeItem>> part = Journal::read(partFile, nullptr, &warnings, &lineOf);
        if (!part) {
            warnings << part.error().message;
        }
        QSet<QString> expected;
        for (const Student &s : chunks[k]) {
            for (const Exercise &e : lab.exercises) {
                expected.insert(s.name + QLatin1Char('/') + e.name);
            }
        }
        QSet<QString> have;
        if (part) {
            for (const GradeItem &i : *part) {
                if (!expected.contains(i.key())) {
                    warnings << QStringLiteral("the journal %1, line %2: '%3' is not a submission of Slurm task %4; "
                                               "ignored")
                                    .arg(partFile)
                                    .arg(lineOf.value(i.key()))
                                    .arg(printableText(i.key()))
                                    .arg(k);
                    continue;
                }
                have.insert(i.key());
                items << i;
            }
        }
        for (const QString &w : warnings) {
            err() << "kpg: warning: " << printableText(w) << "\n";
        }
        const Result<QByteArray> rcText = readRegularFile(QStringLiteral("%1/parts/task-%2.rc").arg(dir).arg(k), 64,
                                                          QStringLiteral("an exit status"));
        const QString log = QStringLiteral("%1/logs/task-%2.err").arg(dir).arg(k);
        QString reason;
        if (!rcText) {
            QString state;
            if (!sacct.isEmpty() && !jobId.isEmpty()) {
                const Proc s = runTool(sacct, {QStringLiteral("-n"), QStringLiteral("-P"), QStringLiteral("-X"),
                                               QStringLiteral("-j"), QStringLiteral("%1_%2").arg(jobId).arg(k),
                                               QStringLiteral("-o"), QStringLiteral("State,ExitCode")});
                if (s.exitCode == 0) {
                    state = s.out.trimmed()
                                .section(QLatin1Char('\n'), 0, 0)
                                .replace(QLatin1Char('|'), QStringLiteral(", exit "));
                }
            }
            reason = state.isEmpty() ? QStringLiteral("it ended without an exit status (cancelled, out of time or "
                                                      "memory?); see %1")
                                           .arg(log)
                                     : QStringLiteral("%1; see %2").arg(state, log);
        } else if (const int code = rcText->trimmed().toInt(); code != 0 && code != Exit::Incomplete) {
            const QString line = lastLogLine(log);
            reason = QStringLiteral("exit code %1%2")
                         .arg(code)
                         .arg(line.isEmpty() ? QString() : QStringLiteral(": ") + line);
        } else {
            reason = QStringLiteral("it wrote no result for this submission");
        }
        for (const Student &s : chunks[k]) {
            for (const Exercise &e : lab.exercises) {
                if (have.contains(s.name + QLatin1Char('/') + e.name)) {
                    continue;
                }
                GradeItem i;
                i.student = s.name;
                i.exercise = e.name;
                i.outcome = Outcome::NotGraded;
                i.detail = QStringLiteral("Slurm task %1 failed: %2").arg(k).arg(reason);
                items << i;
            }
        }
    }
    // The merged results also go to the journal, as a grading on one host leaves them.
    Journal journal;
    if (Status s = journal.open(journalPath(a, lab), lab.dir, false); s) {
        for (const GradeItem &i : items) {
            (void)journal.append(i);
        }
    }
    return finishGrading(a, lab, students, items);
}

} // namespace Kp::Cli
