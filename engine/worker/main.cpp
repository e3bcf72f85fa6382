// kpg-worker: the GPU child process. It connects back to the engine's local
// socket, then answers one request at a time until told to shut down or until
// the engine goes away. Everything a user's kernel can poison lives here.
// With --stdio (a remote target: started by ssh or srun, docs/remote.md) the
// same frames travel on standard input and output instead of a socket, and
// the buffers' bytes travel in them too (StdioBridge).

#include "compile/sandbox.h"
#include "cuda/driverapi.h"
#include "protocol.h"
#include "stdiobridge.h"
#include "workerservice.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QLocalSocket>

#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

using namespace Kp;

namespace {

// Tests of a protocol mismatch need a worker that speaks another version;
// only they set these.
void applyTestHooks(WorkerService &service)
{
    if (qEnvironmentVariableIsSet("KPG_WORKER_TEST_HOOKS") && qEnvironmentVariableIsSet("KPG_WORKER_TEST_PROTOCOL")) {
        service.setProtocolVersion(qEnvironmentVariableIntValue("KPG_WORKER_TEST_PROTOCOL"));
    }
}

bool writeAll(int fd, const QByteArray &bytes)
{
    const char *p = bytes.constData();
    qsizetype left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, size_t(left));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        p += n;
        left -= n;
    }
    return true;
}

// A request to a worker whose buffers travel in frames (remote, or
// sandboxed): bufferData pieces fill the bridge's copies and get no answer;
// run and prepare use the copies, and the buffers a run changed go out
// through send before the answer. Empty for a bufferData frame.
std::optional<Protocol::Message> handleWithBridge(Protocol::Message request, StdioBridge &bridge,
                                                  WorkerService &service,
                                                  const std::function<bool(const QByteArray &)> &send)
{
    if (request.type == Protocol::Type::BufferData) {
        bridge.receive(request.body);
        return std::nullopt;
    }
    const bool withBuffers = request.type == Protocol::Type::Run || request.type == Protocol::Type::Prepare;
    Result<QVariantMap> local = withBuffers ? bridge.localize(request.body) : Result<QVariantMap>(request.body);
    if (!local) {
        return Protocol::errorReply(request, local.error());
    }
    request.body = *local;
    Protocol::Message answer = service.handle(request);
    if (request.type == Protocol::Type::Run && answer.type == Protocol::Type::Reply) {
        // The buffers the run changed travel first, so the reply finds them in place.
        bridge.sendChanged(request.id, send);
    }
    return answer;
}

// Frames on stdin and stdout. Standard output is taken for the frames before
// anything else runs: GpuSession points descriptor 1 at a memfd to catch the
// kernels' printf, and a stray write there would corrupt the stream.
int serveStdio()
{
    const int in = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
    const int out = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    const int devNull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (in < 0 || out < 0 || devNull < 0) {
        std::fprintf(stderr, "kpg-worker: cannot set up the standard streams: %s\n", std::strerror(errno));
        return 69;
    }
    ::dup2(devNull, STDIN_FILENO);
    ::dup2(devNull, STDOUT_FILENO);
    // Pipes of 1 MiB instead of 64 KiB: buffer frames of megabytes then move
    // in a few large reads and writes (a socket or file refuses; that is fine).
    ::fcntl(in, F_SETPIPE_SZ, 1 << 20);
    ::fcntl(out, F_SETPIPE_SZ, 1 << 20);

    Protocol::FrameDecoder decoder;
    WorkerService service;
    applyTestHooks(service);
    StdioBridge bridge;
    const auto send = [out](const QByteArray &frame) { return writeAll(out, frame); };
    QByteArray chunk(1 << 20, Qt::Uninitialized);
    for (;;) {
        const ssize_t n = ::read(in, chunk.data(), size_t(chunk.size()));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return 0; // the engine closed the connection or it dropped
        }
        decoder.feed(QByteArrayView(chunk.constData(), qsizetype(n)));
        while (auto next = decoder.next()) {
            if (!next->ok()) {
                std::fprintf(stderr, "kpg-worker: %s\n", qPrintable(next->error().toString()));
                return 65;
            }
            const std::optional<Protocol::Message> answer =
                handleWithBridge(std::move(*next).value(), bridge, service, send);
            if (!answer) {
                continue;
            }
            if (!send(Protocol::encode(*answer))) {
                return 0;
            }
            if (service.mustExit()) {
                std::fflush(stderr);
                _exit(3);
            }
            if (service.shutdownRequested()) {
                return 0;
            }
        }
    }
}

} // namespace

int main(int argc, char **argv)
{
    // If the engine dies without closing the socket, do not linger on the GPU.
    prctl(PR_SET_PDEATHSIG, SIGKILL);

    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("kpg-worker"));
    QCoreApplication::setApplicationVersion(QStringLiteral(KPG_VERSION));

    const QStringList args = QCoreApplication::arguments();
    const qsizetype at = args.indexOf(QStringLiteral("--connect"));
    if (args.contains(QStringLiteral("--version"))) {
        std::printf("kpg-worker %s (protocol %d)\n", KPG_VERSION, Protocol::kVersion);
        return 0;
    }
    if (args.size() == 2 && args.at(1) == QLatin1String("--stdio")) {
        return serveStdio();
    }
    if (at < 0 || at + 1 >= args.size()) {
        std::fprintf(stderr,
                     "usage: kpg-worker --connect SOCKET-NAME\n"
                     "       kpg-worker --stdio   (frames on standard input and output: a remote target)\n"
                     "kpg-worker is started by kernel-playground and kpg; it is not meant to be run by hand.\n");
        return 64;
    }

    QLocalSocket socket;
    socket.connectToServer(args.at(at + 1));
    if (!socket.waitForConnected(10000)) {
        std::fprintf(stderr, "kpg-worker: cannot connect to %s: %s\n", qPrintable(args.at(at + 1)),
                     qPrintable(socket.errorString()));
        return 69;
    }

    Protocol::FrameDecoder decoder;
    WorkerService service;
    applyTestHooks(service);
    StdioBridge bridge;
    const bool sandboxed = args.contains(QStringLiteral("--sandbox"));
    if (sandboxed) {
        // Defence in depth (docs/security.md): from here the process reads
        // only the driver's files and writes nowhere; the socket is open.
        QStringList libraryDirs;
        const QString driver = qEnvironmentVariable("KPG_CUDA_DRIVER");
        if (driver.contains(QLatin1Char('/'))) {
            libraryDirs << QFileInfo(driver).absolutePath();
        }
        libraryDirs << qEnvironmentVariable("LD_LIBRARY_PATH").split(QLatin1Char(':'), Qt::SkipEmptyParts);
        libraryDirs << QCoreApplication::applicationDirPath();
        // cuInit first, unrestricted: it is where libcuda reads and creates
        // what it needs outside the policy (shown on a GPU host: under the
        // policy cuInit fails with CUDA_ERROR_OPERATING_SYSTEM). What runs
        // after it, the kernels' contexts, modules and launches, needs only
        // the device nodes. A driver that fails here fails the same way later,
        // with the message the session gives.
        (void)DriverApi::instance();
        QVariantMap state{{QStringLiteral("sandboxed"), false}};
        if (const Status s = Sandbox::restrictFileSystem(Sandbox::workerPolicy(libraryDirs)); !s) {
            state.insert(QStringLiteral("reason"), s.error().message);
            std::fprintf(stderr, "kpg-worker: not sandboxed: %s\n", qPrintable(s.error().message));
        } else {
            state.insert(QStringLiteral("sandboxed"), true);
            state.insert(QStringLiteral("landlockAbi"), Sandbox::landlockAbi());
        }
        service.setSandboxState(state);
    }
    // Blocking I/O is right here: the worker does one thing at a time, and a
    // GPU call in progress blocks it anyway.
    while (socket.state() == QLocalSocket::ConnectedState) {
        if (!socket.waitForReadyRead(-1)) {
            break; // engine closed the connection or went away
        }
        decoder.feed(socket.readAll());
        while (auto next = decoder.next()) {
            if (!next->ok()) {
                std::fprintf(stderr, "kpg-worker: %s\n", qPrintable(next->error().toString()));
                return 65;
            }
            Protocol::Message answer;
            if (!sandboxed) {
                answer = service.handle(next->value());
            } else {
                // Sandboxed, the worker cannot map the engine's memory by its
                // /proc path (Landlock denies reaching into another process):
                // the buffers travel in frames, as to a remote worker.
                const auto send = [&socket](const QByteArray &frame) {
                    socket.write(frame);
                    while (socket.bytesToWrite() > (4 << 20) && socket.waitForBytesWritten(5000)) {
                    }
                    return socket.state() == QLocalSocket::ConnectedState;
                };
                std::optional<Protocol::Message> reply =
                    handleWithBridge(std::move(*next).value(), bridge, service, send);
                if (!reply) {
                    continue;
                }
                answer = std::move(*reply);
            }
            socket.write(Protocol::encode(answer));
            socket.flush();
            while (socket.bytesToWrite() > 0 && socket.waitForBytesWritten(5000)) {
            }
            if (service.mustExit()) {
                // The CUDA context is poisoned; the engine starts a fresh worker.
                socket.disconnectFromServer();
                std::fflush(stderr);
                _exit(3);
            }
            if (service.shutdownRequested()) {
                socket.disconnectFromServer();
                return 0;
            }
        }
    }
    return 0;
}
