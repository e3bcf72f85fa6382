#pragma once

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QString>

#include <signal.h>

namespace KpTest {

/** The toolkit's ptxas ($CUDA_HOME, /usr/local/cuda, then PATH); empty when there is none. */
inline QString ptxasPath()
{
    for (const QString &dir : {qEnvironmentVariable("CUDA_HOME"), QStringLiteral("/usr/local/cuda")}) {
        if (!dir.isEmpty() && QFileInfo::exists(dir + QStringLiteral("/bin/ptxas"))) {
            return dir + QStringLiteral("/bin/ptxas");
        }
    }
    return QStandardPaths::findExecutable(QStringLiteral("ptxas"));
}

/** A program built next to the test (every executable lands in build/bin). */
inline QString program(const QString &name)
{
    return QDir(QCoreApplication::applicationDirPath()).filePath(name);
}

struct Run
{
    int exitCode = -1;
    QProcess::ExitStatus status = QProcess::CrashExit;
    QString out;
    QString err;
};

/** Runs a program to completion with extra environment variables. */
inline Run run(const QString &name, const QStringList &args, const QStringList &env = {}, int timeoutMs = 120000)
{
    QProcess p;
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    for (const QString &kv : env) {
        const qsizetype eq = kv.indexOf(QLatin1Char('='));
        e.insert(kv.left(eq), kv.mid(eq + 1));
    }
    p.setProcessEnvironment(e);
    p.start(program(name), args);
    Run r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("timed out");
        return r;
    }
    r.exitCode = p.exitCode();
    r.status = p.exitStatus();
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

/** True while a process with this pid exists. */
inline bool processAlive(qint64 pid)
{
    return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) == 0;
}

} // namespace KpTest
