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
#include "compile/sandbox.h"
#include "cuda/nvrtcapi.h"
#include "worker/protocol.h"

#include <QByteArray>
#include <QFile>
#include <QStringList>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <sys/prctl.h>
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
void testHooks(const QByteArray &source)
{
    if (qEnvironmentVariableIntValue("KPG_COMPILER_TEST_HOOKS") != 1) {
        return;
    }
    if (source.contains("#pragma kpg_test_crash")) {
        std::abort();
    }
    if (source.contains("#pragma kpg_test_hang")) {
        for (;;) {
            ::pause();
        }
    }
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

    // NVRTC is opened before the sandbox closes in (same library as the
    // parent's: KPG_NVRTC_LIBRARY is set by it); its builtins library is
    // opened at compile time, which the policy's exec folders allow.
    const Result<const NvrtcApi *> nv = NvrtcApi::instance();

    // What the C library and NVRTC may read about the machine and this
    // process: the CPU count and topology, memory, the time zone. This
    // process's own /proc entry only (/proc/self resolves to it here), never
    // other processes'. Not the GPU's device nodes nor the driver's JIT cache:
    // NVRTC would use them to answer repeated PTX, which our own cache does
    // (docs/ARCHITECTURE.md, "Cost, measured").
    policy.readDirs << QStringLiteral("/proc/self") << QStringLiteral("/sys/devices/system/cpu");
    policy.readFiles << QStringLiteral("/proc/cpuinfo") << QStringLiteral("/proc/meminfo")
                     << QStringLiteral("/proc/stat") << QStringLiteral("/etc/localtime");
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
        decoder.feed(QByteArray(buffer, n));
        while (auto next = decoder.next()) {
            if (!next->ok()) {
                std::fprintf(stderr, "kpg-compiler: %s\n", qPrintable(next->error().toString()));
                return 65;
            }
            const Protocol::Message &m = next->value();
            Protocol::Message answer;
            if (m.type == Protocol::Type::Hello) {
                answer = Protocol::reply(m, sandbox);
            } else if (m.type == Protocol::Type::Shutdown) {
                writeAll(out, Protocol::encode(Protocol::reply(m, {})));
                return 0;
            } else if (m.type == QLatin1String("compile")) {
                if (!nv) {
                    answer = Protocol::errorReply(m, nv.error());
                } else {
                    const NvrtcJob job = NvrtcJob::fromVariant(m.body);
                    testHooks(job.source);
                    const Result<NvrtcOutput> r = runNvrtcJob(**nv, job);
                    answer = r ? Protocol::reply(m, r->toVariant()) : Protocol::errorReply(m, r.error());
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
