#include "client/workerprocess.h"

#include "core/execargs.h"
#include "run/timingstop.h"

#include <QFile>
#include <QSocketNotifier>
#include <QTimer>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace Kp {

WorkerProcess::WorkerProcess(QObject *parent)
    : QObject(parent)
{
}

WorkerProcess::~WorkerProcess()
{
    if (m_pid > 0 && !m_ended) {
        ::kill(pid_t(m_pid), SIGKILL);
        reap(true);
    }
    if (m_pidfd >= 0) {
        ::close(m_pidfd);
    }
    if (m_stderrFd >= 0) {
        ::close(m_stderrFd);
    }
}

bool WorkerProcess::usePosixSpawn()
{
    const QString choice = qEnvironmentVariable("KPG_WORKER_SPAWN");
    if (choice == QLatin1String("posix")) {
        return true;
    }
    if (choice == QLatin1String("qprocess")) {
        return false;
    }
    return !profilerInjectionVariable().isEmpty();
}

QIODevice *WorkerProcess::channel() const
{
    return m_stdio ? m_qprocess : nullptr;
}

void WorkerProcess::start()
{
    if (m_stdio || !usePosixSpawn()) {
        m_qprocess = new QProcess(this);
        m_qprocess->setProgram(m_program);
        m_qprocess->setArguments(m_arguments);
        m_qprocess->setProcessEnvironment(m_env);
        if (!m_stdio) {
            m_qprocess->setStandardOutputFile(QProcess::nullDevice());
        } else {
            // In the child before exec (only a system call): 1 MiB pipes to ssh
            // instead of 64 KiB, so buffer frames of megabytes need fewer wake-ups.
            m_qprocess->setChildProcessModifier([] {
                ::fcntl(STDIN_FILENO, F_SETPIPE_SZ, 1 << 20);
                ::fcntl(STDOUT_FILENO, F_SETPIPE_SZ, 1 << 20);
            });
        }
        connect(m_qprocess, &QProcess::readyReadStandardError, this, &WorkerProcess::readyReadStandardError);
        connect(m_qprocess, &QProcess::errorOccurred, this, &WorkerProcess::errorOccurred);
        connect(m_qprocess, &QProcess::finished, this, &WorkerProcess::finished);
        m_qprocess->start();
        return;
    }
    const auto failed = [this](const QString &why) {
        m_error = why;
        m_ended = true;
        // As QProcess does: the error comes from the event loop, after start() returned.
        QTimer::singleShot(0, this, [this] { Q_EMIT errorOccurred(QProcess::FailedToStart); });
    };
    int err[2];
    if (::pipe2(err, O_CLOEXEC) != 0) {
        failed(QStringLiteral("pipe: %1").arg(QString::fromLocal8Bit(std::strerror(errno))));
        return;
    }
    const ExecArgs exec(m_program, m_arguments, m_env);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    pid_t pid = -1;
    // posix_spawnp: a bare program name is looked for on PATH, as QProcess does.
    const int rc = posix_spawnp(&pid, exec.argv()[0], &actions, nullptr, exec.argv(), exec.envp());
    posix_spawn_file_actions_destroy(&actions);
    ::close(err[1]);
    if (rc != 0) {
        ::close(err[0]);
        failed(QString::fromLocal8Bit(std::strerror(rc)));
        return;
    }
    m_pid = pid;
    m_stderrFd = err[0];
    ::fcntl(m_stderrFd, F_SETFL, ::fcntl(m_stderrFd, F_GETFL) | O_NONBLOCK);
    m_stderrNotifier = new QSocketNotifier(m_stderrFd, QSocketNotifier::Read, this);
    connect(m_stderrNotifier, &QSocketNotifier::activated, this, &WorkerProcess::readStderr);
    // A pidfd becomes readable when the process ends (Linux 5.3); without one, a timer polls.
    m_pidfd = int(::syscall(SYS_pidfd_open, pid, 0));
    const auto ended = [this] {
        if (reap(false)) {
            readStderr();
            Q_EMIT finished();
        }
    };
    if (m_pidfd >= 0) {
        m_endNotifier = new QSocketNotifier(m_pidfd, QSocketNotifier::Read, this);
        connect(m_endNotifier, &QSocketNotifier::activated, this, ended);
    } else {
        auto *poll = new QTimer(this);
        connect(poll, &QTimer::timeout, this, [this, poll, ended] {
            ended();
            if (m_ended) {
                poll->stop();
            }
        });
        poll->start(50);
    }
}

bool WorkerProcess::reap(bool block)
{
    if (m_ended || m_pid <= 0) {
        return m_ended;
    }
    int status = 0;
    pid_t r;
    do {
        r = ::waitpid(pid_t(m_pid), &status, block ? 0 : WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r != pid_t(m_pid)) {
        return false;
    }
    m_ended = true;
    if (WIFEXITED(status)) {
        m_exitCode = WEXITSTATUS(status);
        m_exitStatus = QProcess::NormalExit;
    } else {
        m_exitCode = WIFSIGNALED(status) ? WTERMSIG(status) : -1;
        m_exitStatus = QProcess::CrashExit;
    }
    if (m_endNotifier) {
        m_endNotifier->setEnabled(false);
    }
    return true;
}

void WorkerProcess::readStderr()
{
    if (m_stderrFd < 0) {
        return;
    }
    char buf[4096];
    bool got = false;
    for (;;) {
        const ssize_t n = ::read(m_stderrFd, buf, sizeof buf);
        if (n > 0) {
            m_stderr.append(buf, n);
            got = true;
            continue;
        }
        if (n == 0 && m_stderrNotifier) {
            m_stderrNotifier->setEnabled(false); // the write end is closed: the worker is gone
        }
        break;
    }
    if (got) {
        Q_EMIT readyReadStandardError();
    }
}

QProcess::ProcessState WorkerProcess::state() const
{
    if (m_qprocess) {
        return m_qprocess->state();
    }
    return m_pid > 0 && !m_ended ? QProcess::Running : QProcess::NotRunning;
}

bool WorkerProcess::waitForFinished(int msecs)
{
    if (m_qprocess) {
        return m_qprocess->waitForFinished(msecs);
    }
    if (m_pid <= 0 || m_ended) {
        return m_ended && m_pid > 0;
    }
    if (m_pidfd >= 0) {
        pollfd p{m_pidfd, POLLIN, 0};
        int r;
        do {
            r = ::poll(&p, 1, msecs);
        } while (r < 0 && errno == EINTR);
        if (r <= 0) {
            return false;
        }
        return reap(true);
    }
    for (int waited = 0; waited <= msecs; waited += 10) {
        if (reap(false)) {
            return true;
        }
        ::usleep(10000);
    }
    return false;
}

void WorkerProcess::kill()
{
    if (m_qprocess) {
        m_qprocess->kill();
    } else if (m_pid > 0 && !m_ended) {
        ::kill(pid_t(m_pid), SIGKILL);
    }
}

QByteArray WorkerProcess::readAllStandardError()
{
    if (m_qprocess) {
        return m_qprocess->readAllStandardError();
    }
    readStderr();
    QByteArray out;
    out.swap(m_stderr);
    return out;
}

int WorkerProcess::exitCode() const
{
    return m_qprocess ? m_qprocess->exitCode() : m_exitCode;
}

QProcess::ExitStatus WorkerProcess::exitStatus() const
{
    return m_qprocess ? m_qprocess->exitStatus() : m_exitStatus;
}

QString WorkerProcess::errorString() const
{
    return m_qprocess ? m_qprocess->errorString() : m_error;
}

} // namespace Kp
