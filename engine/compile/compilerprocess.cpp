#include "compilerprocess.h"

#include "compiler.h"
#include "core/execargs.h"
#include "cuda/nvrtcapi.h"
#include "sandbox.h"
#include "worker/protocol.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDeadlineTimer>
#include <QDir>
#include <QFileInfo>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QThread>

#include <algorithm>
#include <optional>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <vector>

#include <dlfcn.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace Kp {

void withoutProfilerInjection(QProcessEnvironment &env)
{
    // `ncu --target-processes all` (and nsys) follow the process tree by
    // preloading their launcher library into every child and pointing the
    // CUDA driver at their injection library. This process never touches the
    // GPU, so there is nothing to profile in it, and Landlock seals it off
    // from the tool's files and sockets right after start: leave it out.
    if (!env.contains(QStringLiteral("CUDA_INJECTION64_PATH"))) {
        return;
    }
    env.remove(QStringLiteral("CUDA_INJECTION64_PATH"));
    env.remove(QStringLiteral("NVTX_INJECTION64_PATH"));
    QStringList kept;
    const QStringList preload =
        env.value(QStringLiteral("LD_PRELOAD")).split(QRegularExpression(QStringLiteral("[ :]")), Qt::SkipEmptyParts);
    for (const QString &lib : preload) {
        const QString name = QFileInfo(lib).fileName();
        if (!lib.contains(QLatin1String("nsight"), Qt::CaseInsensitive) &&
            !name.contains(QLatin1String("Injection"), Qt::CaseInsensitive) &&
            !name.contains(QLatin1String("TreeLauncher"), Qt::CaseInsensitive)) {
            kept << lib;
        }
    }
    if (kept.isEmpty()) {
        env.remove(QStringLiteral("LD_PRELOAD"));
    } else {
        env.insert(QStringLiteral("LD_PRELOAD"), kept.join(QLatin1Char(':')));
    }
}

QProcessEnvironment compilerEnvironment(const QProcessEnvironment &parent)
{
    // Only what the loader, the sanitizers and kpg-compiler itself read. The
    // rest (tokens, paths, a grader's settings) stays out, so no diagnostic can
    // echo it whatever a source manages to make NVRTC print.
    static const char *const kept[] = {"LD_LIBRARY_PATH",
                                       "LD_PRELOAD",
                                       "PATH",
                                       "LANG",
                                       "LC_ALL",
                                       "LC_CTYPE",
                                       "ASAN_OPTIONS",
                                       "UBSAN_OPTIONS",
                                       "LSAN_OPTIONS",
                                       "KPG_COMPILER_TEST_HOOKS",
                                       "KPG_COMPILER_SANDBOX_READ",
                                       "KPG_COMPILER_SANDBOX_WRITE",
                                       "CUDA_INJECTION64_PATH",
                                       "NVTX_INJECTION64_PATH"};
    QProcessEnvironment env;
    for (const char *name : kept) {
        const QString key = QString::fromLatin1(name);
        if (parent.contains(key)) {
            env.insert(key, parent.value(key));
        }
    }
    withoutProfilerInjection(env);
    return env;
}

namespace {

// Replies carry PTX and cubins; a 10,000-kernel source makes tens of MiB.
constexpr quint32 kMaxReplyBytes = 512u * 1024u * 1024u;
constexpr int kStartTimeoutMs = 15000;

Error processError(Error::Code code, const QString &message)
{
    return Error{QStringLiteral("kpg-compiler"), code, {}, message};
}

QString selfDir()
{
    if (QCoreApplication::instance()) {
        return QCoreApplication::applicationDirPath();
    }
    return QFileInfo(QStringLiteral("/proc/self/exe")).canonicalFilePath().section(QLatin1Char('/'), 0, -2);
}

} // namespace

// kpg-compiler's exit status for a compile that NVRTC aborted at the memory limit (engine/compiler/main.cpp).
constexpr int kMemoryExit = 86;

CompilerProcess::CompilerProcess() = default;

QString CompilerProcess::memoryMessage(qint64 mib)
{
    return QStringLiteral("the compiler used more than %1 MiB on this source and was stopped").arg(mib);
}

qint64 CompilerProcess::defaultMemoryLimitMiB()
{
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long pageSize = ::sysconf(_SC_PAGESIZE);
    const qint64 totalMiB = pages > 0 && pageSize > 0 ? (qint64(pages) * pageSize) >> 20 : 0;
    const qint64 parallel = std::clamp<qint64>(QThread::idealThreadCount(), 1, 16);
    return std::clamp<qint64>(totalMiB / 2 / parallel, 2048, 8192);
}

Result<qint64> CompilerProcess::memoryLimitMiB()
{
    const QString text = qEnvironmentVariable("KPG_COMPILER_MEMORY_LIMIT").trimmed();
    if (text.isEmpty()) {
        return defaultMemoryLimitMiB();
    }
    bool ok = false;
    const qint64 mib = text.toLongLong(&ok);
    if (!ok || mib < kMinMemoryLimitMiB || mib > kMaxMemoryLimitMiB) {
        return processError(Error::Code::Usage, QStringLiteral("KPG_COMPILER_MEMORY_LIMIT is the compiler's memory "
                                                               "limit in MiB, a whole number from %1 to %2, not '%3'")
                                                    .arg(kMinMemoryLimitMiB)
                                                    .arg(kMaxMemoryLimitMiB)
                                                    .arg(text));
    }
    return mib;
}

CompilerProcess::~CompilerProcess()
{
    stop();
}

QString CompilerProcess::programPath()
{
    const QString env = qEnvironmentVariable("KPG_COMPILER");
    if (!env.isEmpty()) {
        return env;
    }
    return QDir(selfDir()).filePath(QStringLiteral("kpg-compiler"));
}

QString CompilerProcess::sandboxState() const
{
    QMutexLocker lock(&m_stateMutex);
    return m_sandboxState;
}

void CompilerProcess::cancel()
{
    QMutexLocker lock(&m_stateMutex);
    if (m_waitingHeader) {
        m_cancelled = true; // awaitHeader() sees it; the header is worth finishing
        return;
    }
    // The pid is not reaped while m_pid holds it, so it cannot name another process.
    if (m_busy && m_pid > 0) {
        m_cancelled = true;
        ::kill(m_pid, SIGKILL);
    }
}

void CompilerProcess::stop()
{
    int pid = 0;
    {
        QMutexLocker lock(&m_stateMutex);
        pid = m_pid;
        m_pid = 0;
    }
    if (m_fd >= 0) {
        ::close(m_fd);
        m_fd = -1;
    }
    if (pid > 0) {
        // Killed at once: the child keeps nothing worth a clean exit (the
        // cache is the parent's), and a clean one runs NVRTC's and, where a
        // driver is installed, libcuda's teardown (NVRTC loads it) while
        // every kpg waits on its way out.
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
    m_tempDir.reset();
    m_helloPending = false;
    m_headers.clear();
    m_headerKey.clear();
}

Status CompilerProcess::start(const QStringList &userDirs)
{
    const QString program = programPath();
    if (!QFileInfo(program).isExecutable()) {
        return processError(
            Error::Code::WorkerStart,
            QStringLiteral("cannot start kpg-compiler: %1 is missing; set KPG_COMPILER to its path").arg(program));
    }
    const Result<const NvrtcApi *> nv = NvrtcApi::instance();
    if (!nv) {
        return nv.error();
    }

    // The sandbox: what NVRTC needs, and the user's folders of this job.
    m_tempDir = std::make_unique<QTemporaryDir>(QDir::tempPath() + QStringLiteral("/kpg-compiler-XXXXXX"));
    QStringList args{QStringLiteral("--serve")};
    auto allow = [&args](const char *flag, const QString &path) {
        if (!path.isEmpty() && QFileInfo::exists(path)) {
            args << QString::fromLatin1(flag) << path;
        }
    };
    for (const QString &d : Compiler::toolkitIncludeDirs()) {
        allow("--read", d);
    }
    for (const QString &d : userDirs) {
        allow("--read", d);
    }
    // NVRTC opens libnvrtc-builtins.so while compiling: its folder needs execute.
    // libraryPath may be a bare soname the loader resolved; dladdr names the file.
    QString libFile = (*nv)->libraryPath;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>((*nv)->nvrtcVersion), &info) != 0 && info.dli_fname) {
        libFile = QFile::decodeName(info.dli_fname);
    }
    const QFileInfo lib(libFile);
    allow("--exec", lib.absolutePath());
    allow("--exec", QFileInfo(lib.canonicalFilePath()).absolutePath());
    for (const char *d : {"/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib"}) {
        allow("--exec", QString::fromLatin1(d));
    }
    allow("--file", QStringLiteral("/etc/ld.so.cache"));
    if (m_tempDir->isValid()) {
        allow("--write", m_tempDir->path());
    }
    if (qEnvironmentVariable("KPG_COMPILER_SANDBOX") == QLatin1String("0")) {
        args << QStringLiteral("--no-sandbox");
    }

    QProcessEnvironment env = compilerEnvironment(QProcessEnvironment::systemEnvironment());
    env.insert(QStringLiteral("KPG_NVRTC_LIBRARY"), (*nv)->libraryPath); // the library the cache key names
    if (m_tempDir->isValid()) {
        env.insert(QStringLiteral("TMPDIR"), m_tempDir->path());
    }

    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        return processError(Error::Code::WorkerStart,
                            QStringLiteral("cannot start kpg-compiler: socketpair: %1").arg(std::strerror(errno)));
    }
    const ExecArgs exec(program, args, env);

    pid_t pid = 0;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    const int spawned = posix_spawn(&pid, exec.argv()[0], &actions, nullptr, exec.argv(), exec.envp());
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (spawned != 0) {
        ::close(fds[0]);
        return processError(Error::Code::WorkerStart,
                            QStringLiteral("cannot start %1: %2").arg(program, std::strerror(spawned)));
    }
    {
        QMutexLocker lock(&m_stateMutex);
        m_pid = pid;
    }
    m_fd = fds[0];
    m_userDirs = userDirs;
    m_helloPending = true;
    return Unit{};
}

Status CompilerProcess::finishStart()
{
    m_helloPending = false;
    Protocol::Message hello;
    hello.type = Protocol::Type::Hello;
    hello.id = m_nextId++;
    const Result<QVariantMap> answer = exchange(hello, kStartTimeoutMs);
    if (!answer) {
        stop();
        return processError(Error::Code::WorkerStart,
                            QStringLiteral("kpg-compiler did not start: %1").arg(answer.error().message));
    }
    QString state =
        answer->value(QStringLiteral("sandboxed")).toBool()
            ? QStringLiteral("sandboxed (Landlock ABI %1)").arg(answer->value(QStringLiteral("landlockAbi")).toInt())
            : QStringLiteral("not sandboxed: %1").arg(answer->value(QStringLiteral("reason")).toString());
    {
        QMutexLocker lock(&m_stateMutex);
        // Said once per process of ours, not once per restart.
        static std::atomic<bool> warned{false};
        if (!answer->value(QStringLiteral("sandboxed")).toBool() && !warned.exchange(true)) {
            qWarning("kpg-compiler: %s", qPrintable(state));
        }
        m_sandboxState = state;
    }
    return Unit{};
}

Result<QVariantMap> CompilerProcess::exchange(const Protocol::Message &request, int timeoutMs)
{
    const QByteArray frame = Protocol::encode(request);
    qsizetype sent = 0;
    QDeadlineTimer deadline(timeoutMs > 0 ? qint64(timeoutMs) : qint64(-1));
    Protocol::FrameDecoder decoder(kMaxReplyBytes);
    enum class End { Reply, Died, TimedOut } end = End::Died;
    Result<Protocol::Message> message = processError(Error::Code::Internal, {});
    while (true) {
        pollfd p{m_fd, short(POLLIN | (sent < frame.size() ? POLLOUT : 0)), 0};
        const qint64 left = deadline.remainingTime();
        if (left == 0) {
            end = End::TimedOut;
            break;
        }
        const int r = ::poll(&p, 1, left < 0 ? -1 : int(qMin<qint64>(left, 1 << 30)));
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r == 0) {
            continue; // the deadline check above ends it
        }
        if (p.revents & POLLOUT) {
            const ssize_t n =
                ::send(m_fd, frame.constData() + sent, size_t(frame.size() - sent), MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                sent += n;
            } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                break; // died
            }
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            char buffer[65536];
            const ssize_t n = ::recv(m_fd, buffer, sizeof(buffer), MSG_DONTWAIT);
            if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                continue;
            }
            if (n <= 0) {
                break; // died
            }
            decoder.feed(QByteArrayView(buffer, n));
            if (auto next = decoder.next()) {
                message = *next;
                end = End::Reply;
                break;
            }
        }
    }

    if (end == End::Reply) {
        if (!message) {
            stopAfterFailure();
            return message.error();
        }
        if (message->type == Protocol::Type::ErrorReply) {
            return Error::fromVariant(message->body);
        }
        return message->body;
    }
    if (end == End::TimedOut) {
        {
            QMutexLocker lock(&m_stateMutex);
            if (m_pid > 0) {
                ::kill(m_pid, SIGKILL);
            }
        }
        stopAfterFailure();
        return processError(Error::Code::Timeout, QStringLiteral("timed out"));
    }
    const bool cancelled = m_cancelled.exchange(false);
    const int status = stopAfterFailure();
    if (cancelled) {
        return processError(Error::Code::Cancelled, QStringLiteral("the compile was superseded"));
    }
    if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == kMemoryExit) {
        Error e = processError(Error::Code::WorkerDied, memoryMessage(m_memoryLimitMiB));
        e.apiCall = QStringLiteral("RLIMIT_AS");
        return e;
    }
    return processError(Error::Code::WorkerDied, QStringLiteral("the compiler crashed on this source"));
}

int CompilerProcess::stopAfterFailure()
{
    int status = -1;
    int pid = 0;
    {
        QMutexLocker lock(&m_stateMutex);
        pid = m_pid;
        m_pid = 0;
    }
    if (m_fd >= 0) {
        ::close(m_fd);
        m_fd = -1;
    }
    if (pid > 0) {
        // Dead or broken either way; never leave a half-working child. A child
        // that already exited keeps its own status through the kill.
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
    }
    m_tempDir.reset();
    m_headers.clear();
    m_headerKey.clear();
    return status;
}

Status CompilerProcess::ensureStarted(const QStringList &userDirs, bool greet)
{
    QStringList dirs;
    for (const QString &d : userDirs) {
        const QString canonical = QFileInfo(d).canonicalFilePath();
        dirs << (canonical.isEmpty() ? d : canonical);
    }
    dirs.sort();
    dirs.removeDuplicates();
    if (m_fd >= 0 && dirs != m_userDirs) {
        stop(); // Landlock cannot widen a running process's rights
    }
    if (m_fd < 0) {
        if (const Status s = start(dirs); !s) {
            return s;
        }
    }
    return greet && m_helloPending ? finishStart() : Status(Unit{});
}

Status CompilerProcess::warmUp(const QStringList &userDirs)
{
    QMutexLocker runLock(&m_runMutex); // each job sends its own memory limit
    // Spawned here, greeted by the first run(): meanwhile the child loads
    // NVRTC and applies its sandbox, and this thread does other work.
    return ensureStarted(userDirs, false);
}

Result<NvrtcOutput> CompilerProcess::run(const NvrtcJob &job, const QStringList &userDirs, int timeoutMs,
                                         qint64 memoryLimitMiB)
{
    QMutexLocker runLock(&m_runMutex);
    if (memoryLimitMiB <= 0) {
        const Result<qint64> limit = CompilerProcess::memoryLimitMiB();
        if (!limit) {
            return limit.error();
        }
        memoryLimitMiB = *limit;
    }
    m_memoryLimitMiB = memoryLimitMiB;
    if (const Status s = ensureStarted(userDirs, true); !s) {
        return s.error();
    }
    if (!m_headerKey.isEmpty()) {
        {
            QMutexLocker lock(&m_stateMutex);
            m_cancelled = false; // a cancel() of an earlier job does not end this one's wait
        }
        if (const Status s = awaitHeader(timeoutMs); !s) {
            return s.error();
        }
        if (const Status s = ensureStarted(userDirs, true); !s) { // it may have died making the header
            return s.error();
        }
    }

    // -pch only where this process has the header already; else the job
    // goes without, and the header is made after it answers.
    NvrtcJob sent = job;
    NvrtcJob prefix;
    QByteArray headerKey;
    if (job.options.contains(QStringLiteral("-pch"))) {
        prefix = job.headerPrefix();
        if (!prefix.source.isEmpty()) {
            QCryptographicHash h(QCryptographicHash::Sha256);
            h.addData(prefix.source);
            h.addData(prefix.programName);
            for (const QString &o : prefix.options) {
                h.addData(QByteArrayView("\0", 1));
                h.addData(o.toUtf8());
            }
            for (const auto &[name, text] : prefix.headers) {
                h.addData(QByteArrayView("\1", 1));
                h.addData(name);
                h.addData(QByteArrayView("\1", 1));
                h.addData(text);
            }
            headerKey = h.result();
            if (!m_headers.value(headerKey, false)) {
                sent.options.removeAll(QStringLiteral("-pch"));
            }
            if (m_headers.contains(headerKey)) {
                headerKey.clear(); // made, or failed once: nothing to make
            }
        }
    }

    Protocol::Message request;
    request.type = QStringLiteral("compile");
    request.id = m_nextId++;
    request.body = sent.toVariant();
    request.body.insert(QStringLiteral("memoryLimitMiB"), memoryLimitMiB);
    {
        QMutexLocker lock(&m_stateMutex);
        m_busy = true;
        m_cancelled = false;
    }
    const Result<QVariantMap> answer = exchange(request, timeoutMs);
    {
        QMutexLocker lock(&m_stateMutex);
        m_busy = false;
    }
    if (!answer) {
        return answer.error();
    }
    if (answer->value(QStringLiteral("memoryExceeded")).toBool()) {
        // NVRTC said "out of memory" itself; a fresh process gives the next
        // compile back the memory this one's heap still holds.
        stopAfterFailure();
        Error e = processError(Error::Code::WorkerDied, memoryMessage(memoryLimitMiB));
        e.apiCall = QStringLiteral("RLIMIT_AS");
        return e;
    }
    if (!headerKey.isEmpty()) {
        startHeader(prefix, headerKey, memoryLimitMiB);
    }
    return NvrtcOutput::fromVariant(*answer);
}

void CompilerProcess::startHeader(const NvrtcJob &prefix, const QByteArray &key, qint64 memoryLimitMiB)
{
    Protocol::Message request;
    request.type = QStringLiteral("compile");
    request.id = m_nextId++;
    request.body = prefix.toVariant();
    request.body.insert(QStringLiteral("memoryLimitMiB"), memoryLimitMiB);
    const QByteArray frame = Protocol::encode(request);
    // A few KiB into an idle socket: it fits its buffer at once. One that does
    // not (the child stopped reading) is a broken process.
    qsizetype sent = 0;
    QDeadlineTimer deadline(1000);
    while (sent < frame.size()) {
        pollfd p{m_fd, POLLOUT, 0};
        const int r = ::poll(&p, 1, int(qMax<qint64>(0, deadline.remainingTime())));
        if (r < 0 && errno == EINTR) {
            continue;
        }
        const ssize_t n =
            r > 0 ? ::send(m_fd, frame.constData() + sent, size_t(frame.size() - sent), MSG_NOSIGNAL | MSG_DONTWAIT)
                  : -1;
        if (n > 0) {
            sent += n;
        } else if (r == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            stopAfterFailure();
            return;
        }
    }
    m_headerKey = key;
    m_headerId = request.id;
}

Status CompilerProcess::awaitHeader(int timeoutMs)
{
    {
        QMutexLocker lock(&m_stateMutex);
        m_waitingHeader = true;
    }
    QDeadlineTimer deadline(timeoutMs > 0 ? qint64(timeoutMs) : qint64(-1));
    Protocol::FrameDecoder decoder(kMaxReplyBytes);
    std::optional<Result<Protocol::Message>> reply;
    bool died = false;
    bool cancelled = false;
    while (!reply && !died) {
        if (m_cancelled.exchange(false)) {
            cancelled = true;
            break;
        }
        const qint64 left = deadline.remainingTime();
        if (left == 0) {
            break;
        }
        // Short waits, so a cancel() is heard without a second descriptor to wake this one.
        pollfd p{m_fd, POLLIN, 0};
        const int r = ::poll(&p, 1, int(left < 0 ? 20 : qMin<qint64>(left, 20)));
        if (r <= 0) {
            continue;
        }
        char buffer[65536];
        const ssize_t n = ::recv(m_fd, buffer, sizeof(buffer), MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            continue;
        }
        if (n <= 0) {
            died = true;
            break;
        }
        decoder.feed(QByteArrayView(buffer, n));
        reply = decoder.next();
    }
    {
        QMutexLocker lock(&m_stateMutex);
        m_waitingHeader = false;
    }
    if (cancelled) {
        return processError(Error::Code::Cancelled, QStringLiteral("the compile was superseded"));
    }
    const QByteArray key = m_headerKey;
    m_headerKey.clear();
    if (!reply || !*reply || (*reply)->id != m_headerId) {
        // Died (a crash, or the memory limit), out of time, or out of step:
        // a fresh process for the job; the header is not tried again there.
        stopAfterFailure();
        m_headers.insert(key, false);
        return Unit{};
    }
    const NvrtcOutput out =
        (*reply)->type == Protocol::Type::ErrorReply ? NvrtcOutput{} : NvrtcOutput::fromVariant((*reply)->body);
    if ((*reply)->body.value(QStringLiteral("memoryExceeded")).toBool()) {
        stopAfterFailure(); // as after a job: a fresh process gets its memory back
        m_headers.insert(key, false);
        return Unit{};
    }
    // Made (0), or not needed (13: NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED, it had
    // one already or found nothing to keep); an NVRTC that cannot tell (-1)
    // is trusted when the compile went through. Out of heap or failed: the
    // directives compile without -pch from now on.
    const bool made = (*reply)->type != Protocol::Type::ErrorReply && out.status == 0 &&
                      (out.pchStatus == 0 || out.pchStatus == 13 || out.pchStatus == -1);
    m_headers.insert(key, made);
    return Unit{};
}

} // namespace Kp
