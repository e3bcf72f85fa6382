// kpg-worker: the GPU child process. It connects back to the engine's local
// socket, then answers one request at a time until told to shut down or until
// the engine goes away. Everything a user's kernel can poison lives here.

#include "compile/sandbox.h"
#include "protocol.h"
#include "workerservice.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QLocalSocket>

#include <cstdio>

#include <csignal>
#include <sys/prctl.h>
#include <unistd.h>

using namespace Kp;

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
    if (at < 0 || at + 1 >= args.size()) {
        std::fprintf(stderr,
                     "usage: kpg-worker --connect SOCKET-NAME\n"
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
    if (args.contains(QStringLiteral("--sandbox"))) {
        // Defence in depth (docs/security.md): from here the process reads
        // only the driver's files and writes nowhere; the socket is open.
        QStringList libraryDirs;
        const QString driver = qEnvironmentVariable("KPG_CUDA_DRIVER");
        if (driver.contains(QLatin1Char('/'))) {
            libraryDirs << QFileInfo(driver).absolutePath();
        }
        libraryDirs << qEnvironmentVariable("LD_LIBRARY_PATH").split(QLatin1Char(':'), Qt::SkipEmptyParts);
        libraryDirs << QCoreApplication::applicationDirPath();
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
            const Protocol::Message answer = service.handle(next->value());
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
