#include "client/remotecompile.h"

#include "compile/nvrtcjob.h"
#include "core/execargs.h"
#include "worker/protocol.h"

#include <QDeadlineTimer>
#include <QProcessEnvironment>
#include <QStandardPaths>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <memory>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace Kp {

namespace {
constexpr qsizetype kMaxReplyBytes = 512ll * 1024 * 1024; // as a local kpg-compiler's: huge PTX
constexpr qsizetype kStderrKeep = 4096;

Error compileError(Error::Code code, const QString &message)
{
    return Error{QStringLiteral("kpg-compiler"), code, {}, message};
}
} // namespace

RemoteCompiler::RemoteCompiler(Target target)
    : m_target(std::move(target))
{
}

RemoteCompiler::~RemoteCompiler()
{
    QMutexLocker lock(&m_mutex);
    stop();
}

void RemoteCompiler::drainStderr()
{
    char buffer[4096];
    for (;;) {
        const ssize_t n = m_err >= 0 ? ::read(m_err, buffer, sizeof(buffer)) : -1;
        if (n <= 0) {
            return;
        }
        m_stderr.append(buffer, n);
        if (m_stderr.size() > kStderrKeep) {
            m_stderr.remove(0, m_stderr.size() - kStderrKeep);
        }
    }
}

Status RemoteCompiler::start()
{
    const QStringList command = m_target.compilerCommand();
    if (command.isEmpty()) {
        return compileError(
            Error::Code::NoCompiler,
            QStringLiteral("%1: compiling on the target needs an ssh target").arg(m_target.displayName()));
    }
    QString program = command.first();
    if (!program.contains(QLatin1Char('/'))) {
        const QString found = QStandardPaths::findExecutable(program);
        if (found.isEmpty()) {
            return compileError(
                Error::Code::WorkerStart,
                QStringLiteral("%1: cannot start %2: not found on PATH").arg(m_target.displayName(), program));
        }
        program = found;
    }
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        return compileError(Error::Code::WorkerStart, QStringLiteral("socketpair: %1").arg(std::strerror(errno)));
    }
    int err[2];
    if (::pipe2(err, O_CLOEXEC) != 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return compileError(Error::Code::WorkerStart, QStringLiteral("pipe: %1").arg(std::strerror(errno)));
    }
    // ssh gets the user's whole environment: its agent, its config, its home.
    const ExecArgs exec(program, command.mid(1), QProcessEnvironment::systemEnvironment());
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, exec.argv()[0], &actions, nullptr, exec.argv(), exec.envp());
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    ::close(err[1]);
    if (spawned != 0) {
        ::close(fds[0]);
        ::close(err[0]);
        return compileError(
            Error::Code::WorkerStart,
            QStringLiteral("%1: cannot start %2: %3").arg(m_target.displayName(), program, std::strerror(spawned)));
    }
    m_pid = pid;
    m_fd = fds[0];
    m_err = err[0];
    ::fcntl(m_err, F_SETFL, ::fcntl(m_err, F_GETFL) | O_NONBLOCK);
    m_stderr.clear();

    const Result<QVariantMap> hello = exchange({}, Protocol::Type::Hello, kStartTimeoutMs);
    if (!hello) {
        return hello.error();
    }
    if (hello->contains(QStringLiteral("nvrtcError"))) {
        Error e = Error::fromVariant(hello->value(QStringLiteral("nvrtcError")).toMap());
        stop();
        e.message = QStringLiteral("%1: no NVRTC there either: %2").arg(m_target.displayName(), e.message);
        return e;
    }
    if (!hello->contains(QStringLiteral("nvrtcVersion"))) {
        stop();
        return compileError(Error::Code::Protocol,
                            QStringLiteral("%1: the remote kpg-compiler does not compile for other machines (an older "
                                           "version?); install this version there")
                                .arg(m_target.displayName()));
    }
    NvrtcElsewhere info;
    info.where = m_target.displayName();
    info.version = hello->value(QStringLiteral("nvrtcVersion")).toString();
    info.libraryPath = hello->value(QStringLiteral("nvrtcLibrary")).toString();
    for (const QVariant &a : hello->value(QStringLiteral("archs")).toList()) {
        info.archs << a.toInt();
    }
    info.includeDirs = hello->value(QStringLiteral("includeDirs")).toStringList();
    info.sandbox =
        hello->value(QStringLiteral("sandboxed")).toBool()
            ? QStringLiteral("sandboxed (Landlock ABI %1)").arg(hello->value(QStringLiteral("landlockAbi")).toInt())
            : QStringLiteral("not sandboxed: %1").arg(hello->value(QStringLiteral("reason")).toString());
    info.run = [this](const NvrtcJob &job, int timeoutMs) { return run(job, timeoutMs); };
    m_info = info;
    return Unit{};
}

Result<NvrtcElsewhere> RemoteCompiler::nvrtc()
{
    QMutexLocker lock(&m_mutex);
    if (m_fd < 0 || !m_info) {
        if (const Status s = start(); !s) {
            return s.error();
        }
    }
    return *m_info;
}

Result<NvrtcOutput> RemoteCompiler::run(const NvrtcJob &job, int timeoutMs)
{
    QMutexLocker lock(&m_mutex);
    if (m_fd < 0) {
        if (const Status s = start(); !s) {
            return s.error();
        }
    }
    const Result<QVariantMap> answer = exchange(job.toVariant(), QStringLiteral("compile"), timeoutMs);
    if (!answer) {
        return answer.error();
    }
    return NvrtcOutput::fromVariant(*answer);
}

Result<QVariantMap> RemoteCompiler::exchange(const QVariantMap &body, const QString &type, int timeoutMs)
{
    Protocol::Message request;
    request.type = type;
    request.id = m_nextId++;
    request.body = body;
    const QByteArray frame = Protocol::encode(request);
    qsizetype sent = 0;
    QDeadlineTimer deadline(timeoutMs > 0 ? qint64(timeoutMs) : qint64(-1));
    Protocol::FrameDecoder decoder(kMaxReplyBytes);
    const bool starting = type == Protocol::Type::Hello;
    while (true) {
        pollfd p[2] = {{m_fd, short(POLLIN | (sent < frame.size() ? POLLOUT : 0)), 0}, {m_err, POLLIN, 0}};
        const qint64 left = deadline.remainingTime();
        if (left == 0) {
            stop();
            return compileError(Error::Code::Timeout,
                                QStringLiteral("%1: the remote kpg-compiler did not answer '%2' within %3 s")
                                    .arg(m_target.displayName(), type)
                                    .arg(timeoutMs / 1000));
        }
        const int r = ::poll(p, m_err >= 0 ? 2 : 1, left < 0 ? -1 : int(qMin<qint64>(left, 1 << 30)));
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            continue;
        }
        if (p[1].revents) {
            drainStderr();
            if (p[1].revents & (POLLHUP | POLLERR)) {
                ::close(m_err);
                m_err = -1;
            }
        }
        if (p[0].revents & POLLOUT) {
            const ssize_t n =
                ::send(m_fd, frame.constData() + sent, size_t(frame.size() - sent), MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                sent += n;
            } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                return endedError(stop(), !starting, type);
            }
        }
        if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            char buffer[65536];
            const ssize_t n = ::recv(m_fd, buffer, sizeof(buffer), MSG_DONTWAIT);
            if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                continue;
            }
            if (n <= 0) {
                return endedError(stop(), !starting, type);
            }
            decoder.feed(QByteArrayView(buffer, n));
            if (auto next = decoder.next()) {
                if (!next->ok()) {
                    stop();
                    Error e = next->error();
                    e.message = QStringLiteral("%1: the remote kpg-compiler sent a malformed message (%2)")
                                    .arg(m_target.displayName(), e.message);
                    return e;
                }
                const Protocol::Message &m = next->value();
                if (m.type == Protocol::Type::ErrorReply) {
                    Error e = Error::fromVariant(m.body);
                    e.message = m_target.displayName() + QStringLiteral(": ") + e.message;
                    return e;
                }
                return m.body;
            }
        }
    }
}

int RemoteCompiler::stop()
{
    int status = -1;
    if (m_fd >= 0) {
        ::close(m_fd); // ssh sees the end of its input; the remote kpg-compiler ends with it
        m_fd = -1;
    }
    if (m_pid > 0) {
        // Give ssh a moment to report why it ended (its stderr), then make sure.
        QDeadlineTimer wait(2000);
        while (::waitpid(m_pid, &status, WNOHANG) == 0 && !wait.hasExpired()) {
            drainStderr();
            ::usleep(10 * 1000);
        }
        if (status == -1) {
            ::kill(m_pid, SIGKILL);
            ::waitpid(m_pid, &status, 0);
        }
        m_pid = 0;
    }
    drainStderr();
    if (m_err >= 0) {
        ::close(m_err);
        m_err = -1;
    }
    m_info.reset();
    return status;
}

Error RemoteCompiler::endedError(int status, bool started, const QString &during)
{
    const int exitCode = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    const QString text = QString::fromLocal8Bit(m_stderr);
    const QString last = text.trimmed().section(QLatin1Char('\n'), -1);
    if (!started && (exitCode == 127 || exitCode == 126)) {
        const QStringList words = m_target.compilerCommand();
        return compileError(
            Error::Code::WorkerStart,
            QStringLiteral("%1: the remote kpg-compiler %2 (it is taken from the folder of the "
                           "target's kpg-worker; install the bundle or the .deb there): %3")
                .arg(m_target.displayName(),
                     exitCode == 127 ? QStringLiteral("is missing") : QStringLiteral("cannot be executed"), last));
    }
    QString explained = m_target.explainFailure(text, exitCode, started);
    explained.replace(QLatin1String("kpg-worker crashed"), QLatin1String("kpg-compiler crashed"));
    if (explained.isEmpty()) {
        explained = QStringLiteral("%1: the remote kpg-compiler ended%2")
                        .arg(m_target.displayName(), last.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(last));
    }
    return compileError(started ? Error::Code::WorkerDied : Error::Code::WorkerStart,
                        started ? QStringLiteral("%1 while running '%2'").arg(explained, during) : explained);
}

void RemoteCompiler::install()
{
    Compiler::setNvrtcFallback([](const Error &localError) -> Result<NvrtcElsewhere> {
        const Result<Target> target = Target::fromEnvironment();
        if (!target || target->compilerCommand().isEmpty()) {
            Error e = localError;
            if (target && target->kind == Target::Kind::Slurm) {
                e.message += QStringLiteral("; compiling on the target needs an ssh target or a Slurm login node "
                                            "(via=ssh://...): a Slurm node is not allocated for compiling");
            }
            return e;
        }
        // One connection per target for the process, kept warm like a local kpg-compiler.
        static QMutex mutex;
        static std::map<QString, std::unique_ptr<RemoteCompiler>> compilers;
        RemoteCompiler *compiler = nullptr;
        {
            QMutexLocker lock(&mutex);
            std::unique_ptr<RemoteCompiler> &slot = compilers[target->spec];
            if (!slot) {
                slot = std::make_unique<RemoteCompiler>(*target);
            }
            compiler = slot.get();
        }
        return compiler->nvrtc();
    });
}

} // namespace Kp
