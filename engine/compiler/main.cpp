// kpg-compiler: the NVRTC child process. NVRTC can abort its process (a
// 256 KiB identifier corrupts its heap), compile for minutes or never end (a
// macro bomb), and it reads any file a source #includes. So the GUI and kpg
// never call nvrtcCompileProgram themselves: they send an NvrtcJob here.
//
// Why a program of its own and not a mode of kpg-worker: kpg-worker links the
// CUDA driver and owns the GPU context, which a compile must never share
// (a compile killed for its time limit would take the context with it), it
// runs beside a compile (Run compiles, then launches), and it needs device
// files the sandbox here denies. This program links only kpg_engine and
// opens only NVRTC.
//
// It talks over its stdin and stdout in the kpg-worker frame format
// (engine/worker/protocol.h), one request at a time: "hello" (the sandbox's
// state), "compile" (an NvrtcJob; the reply is an NvrtcOutput), "shutdown".

#include "compile/nvrtcjob.h"
#include "compile/remotenvrtc.h"
#include "compile/sandbox.h"
#include "cuda/nvrtcapi.h"
#include "worker/protocol.h"

#include <QByteArray>
#include <QFile>
#include <QRegularExpression>
#include <QStringList>

#include <algorithm>
#include <atomic>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

using namespace Kp;

namespace {

bool writeAll(int fd, const QByteArray &bytes)
{
    qsizetype done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.constData() + done, size_t(bytes.size() - done));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        done += n;
    }
    return true;
}

// Test-only hooks, so tests can make this process crash or hang on demand
// without depending on a particular NVRTC's bugs.
void testHooks(const NvrtcJob &job)
{
    if (qEnvironmentVariableIntValue("KPG_COMPILER_TEST_HOOKS") != 1) {
        return;
    }
    const QByteArray &source = job.source;
    if (source.contains("#pragma kpg_test_crash")) {
        std::abort();
    }
    // kpg_test_hang_retry: only the compile the parent retries with -rdc=true
    // (a kernel that launches kernels) hangs; the first attempt answers.
    const bool retry = job.options.contains(QStringLiteral("-rdc=true"));
    if (source.contains("#pragma kpg_test_hang_retry") ? retry : source.contains("#pragma kpg_test_hang")) {
        for (;;) {
            ::pause();
        }
    }
}

// The exit status that tells the parent a compile ran out of its memory
// limit and NVRTC aborted instead of reporting it (CompilerProcess).
constexpr int kMemoryExit = 86;
std::atomic<bool> g_limited{false};

void onFatalSignal(int sig)
{
    // Under the address-space limit an allocation inside NVRTC that throws
    // std::bad_alloc, or a failed mmap it does not check, ends here. If a
    // fresh 16 MiB mapping fails too, the process is at its limit: say so with
    // the exit status (only async-signal-safe calls here: mmap, _exit).
    if (g_limited.load()) {
        void *p = ::mmap(nullptr, 16u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            _exit(kMemoryExit);
        }
    }
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

/**
 * Lowers this process's address-space limit (the soft one; the hard limit
 * stays, so the next job may raise it again) to mib MiB for one compile, and
 * back to unlimited when the guard ends. mib <= 0: no limit.
 */
struct MemoryLimit
{
    rlimit saved{};
    bool set = false;
    explicit MemoryLimit(qint64 mib)
    {
        if (mib <= 0 || ::getrlimit(RLIMIT_AS, &saved) != 0) {
            return;
        }
        rlimit r = saved;
        const rlim_t bytes = rlim_t(mib) << 20;
        r.rlim_cur = saved.rlim_max == RLIM_INFINITY ? bytes : std::min<rlim_t>(bytes, saved.rlim_max);
        set = ::setrlimit(RLIMIT_AS, &r) == 0;
        g_limited = set;
    }
    ~MemoryLimit()
    {
        if (set) {
            g_limited = false;
            ::setrlimit(RLIMIT_AS, &saved);
        }
    }
};

/**
 * NVRTC's own words for an allocation that failed under the limit: the status,
 * or a log line that ends "): catastrophic error: out of memory" (a source
 * cannot make a line end so: its own text is quoted after the message).
 */
bool ranOutOfMemory(const NvrtcOutput &out)
{
    static const QRegularExpression line(QStringLiteral("\\): catastrophic error: out of memory\\s*$"),
                                         QRegularExpression::MultilineOption);
    return out.status == 1 /* NVRTC_ERROR_OUT_OF_MEMORY */ || line.match(out.log).hasMatch();
}

} // namespace

int main(int argc, char **argv)
{
    // Die with the parent. PDEATHSIG fires when the parent *thread* ends, and
    // the parent may start us from a pool thread, so a watchdog also checks
    // that the parent process is still the one that started us.
    const pid_t parent = ::getppid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) {
        return 0;
    }
    std::thread([parent] {
        for (;;) {
            ::usleep(200 * 1000);
            if (::getppid() != parent) {
                _exit(0);
            }
        }
    }).detach();

    Sandbox::FsPolicy policy;
    QStringList args;
    for (int i = 1; i < argc; ++i) {
        args << QString::fromLocal8Bit(argv[i]);
    }
    if (args.contains(QStringLiteral("--version"))) {
        std::printf("kpg-compiler %s (protocol %d)\n", KPG_VERSION, Protocol::kVersion);
        return 0;
    }
    if (!args.contains(QStringLiteral("--serve"))) {
        std::fprintf(stderr, "usage: kpg-compiler --serve [--read DIR] [--exec DIR] [--file FILE] [--write DIR] "
                             "[--no-sandbox]\n"
                             "kpg-compiler is started by kernel-playground and kpg; it is not meant to be run by "
                             "hand.\n");
        return 64;
    }
    for (qsizetype i = 0; i + 1 < args.size(); ++i) {
        const QString &a = args.at(i);
        QStringList *list = a == QLatin1String("--read")    ? &policy.readDirs
                            : a == QLatin1String("--exec")  ? &policy.execDirs
                            : a == QLatin1String("--file")  ? &policy.readFiles
                            : a == QLatin1String("--write") ? &policy.writeDirs
                                                            : nullptr;
        if (list) {
            *list << args.at(++i);
        }
    }

    // The protocol owns the original stdout; anything NVRTC or a library
    // prints goes to stderr instead of corrupting a frame.
    const int out = ::dup(1);
    ::dup2(2, 1);

    for (const int sig : {SIGABRT, SIGSEGV, SIGBUS}) {
        ::signal(sig, onFatalSignal);
    }

    // NVRTC is opened before the sandbox closes in (same library as the
    // parent's: KPG_NVRTC_LIBRARY is set by it); its builtins library is
    // opened at compile time, which the policy's exec folders allow.
    const Result<const NvrtcApi *> nv = NvrtcApi::instance();

    // --remote: started over ssh by a machine without NVRTC (client/remotecompile):
    // no parent here knows this machine's folders, so it sets its own sandbox
    // and tells the engine its NVRTC in the hello (compile/remotenvrtc).
    // The ssh command made TMPDIR a private folder, which it removes after us.
    QVariantMap remoteInfo;
    if (args.contains(QStringLiteral("--remote"))) {
        if (nv) {
            policy = RemoteNvrtc::ownPolicy(**nv, qEnvironmentVariable("TMPDIR"));
            remoteInfo = RemoteNvrtc::describe(**nv);
        } else {
            remoteInfo.insert(QStringLiteral("nvrtcError"), nv.error().toVariant());
        }
    }

    // Nothing of /proc or /sys: the process's environment, command line and
    // memory map, other processes and the machine's details stay out of reach
    // of an #include, so no diagnostic can echo them. NVRTC was shown to need
    // none of them (strace of compiles with the toolkit's headers, a
    // precompiled header, -G and the builtins library: the only such read,
    // /sys/devices/system/cpu/possible, happens at start, before this point;
    // docs/security.md). Not the GPU's device nodes nor the driver's JIT cache
    // either: our own cache answers repeated PTX (docs/ARCHITECTURE.md, "Cost,
    // measured"). The time zone file is kept: it holds nothing of the user.
    policy.readFiles << QStringLiteral("/etc/localtime");
    if (const QByteArray extra = qgetenv("KPG_COMPILER_SANDBOX_READ"); !extra.isEmpty()) {
        // Diagnostics only: more folders to read (or write, below), ':'-separated.
        policy.readDirs << QString::fromLocal8Bit(extra).split(QLatin1Char(':'), Qt::SkipEmptyParts);
    }
    if (const QByteArray extra = qgetenv("KPG_COMPILER_SANDBOX_WRITE"); !extra.isEmpty()) {
        policy.writeDirs << QString::fromLocal8Bit(extra).split(QLatin1Char(':'), Qt::SkipEmptyParts);
    }
    QVariantMap sandbox{{QStringLiteral("sandboxed"), false}};
    if (args.contains(QStringLiteral("--no-sandbox"))) {
        sandbox.insert(QStringLiteral("reason"), QStringLiteral("turned off (KPG_COMPILER_SANDBOX=0)"));
    } else if (const Status s = Sandbox::restrictFileSystem(policy); !s) {
        sandbox.insert(QStringLiteral("reason"), s.error().message);
    } else {
        sandbox.insert(QStringLiteral("sandboxed"), true);
        sandbox.insert(QStringLiteral("landlockAbi"), Sandbox::landlockAbi());
    }

    Protocol::FrameDecoder decoder;
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(0, buffer, sizeof(buffer));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return 0; // the parent closed the pipe
        }
        decoder.feed(QByteArrayView(buffer, n));
        while (auto next = decoder.next()) {
            if (!next->ok()) {
                std::fprintf(stderr, "kpg-compiler: %s\n", qPrintable(next->error().toString()));
                return 65;
            }
            const Protocol::Message &m = next->value();
            Protocol::Message answer;
            if (m.type == Protocol::Type::Hello) {
                QVariantMap hello = sandbox;
                hello.insert(remoteInfo);
                answer = Protocol::reply(m, hello);
            } else if (m.type == Protocol::Type::Shutdown) {
                writeAll(out, Protocol::encode(Protocol::reply(m, {})));
                return 0;
            } else if (m.type == QLatin1String("compile")) {
                if (!nv) {
                    answer = Protocol::errorReply(m, nv.error());
                } else {
                    const NvrtcJob job = NvrtcJob::fromVariant(m.body);
                    const qint64 limitMiB = m.body.value(QStringLiteral("memoryLimitMiB")).toLongLong();
                    Result<NvrtcOutput> r = NvrtcOutput{};
                    bool exceeded = false;
                    {
                        const MemoryLimit limit(limitMiB);
                        testHooks(job);
                        r = runNvrtcJob(**nv, job);
                        exceeded = limit.set && r && ranOutOfMemory(*r);
                    }
                    if (r) {
                        QVariantMap body = r->toVariant();
                        if (exceeded) {
                            body.insert(QStringLiteral("memoryExceeded"), true);
                        }
                        answer = Protocol::reply(m, body);
                    } else {
                        answer = Protocol::errorReply(m, r.error());
                    }
                }
            } else {
                answer = Protocol::errorReply(m, Error{QStringLiteral("kpg-compiler"),
                                                       Error::Code::Protocol,
                                                       {},
                                                       QStringLiteral("unknown request '%1'").arg(m.type)});
            }
            if (!writeAll(out, Protocol::encode(answer))) {
                return 0;
            }
        }
    }
}
