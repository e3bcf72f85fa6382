#include "client/localsocket.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QSocketNotifier>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <utility>

namespace Kp {

namespace {

/** Bytes read from the socket per call: a frame's piece of buffer data (1 MiB) in a few calls. */
constexpr qsizetype kReadChunk = 256 * 1024;

Error socketError(const QString &message)
{
    Error e;
    e.where = QStringLiteral("engine");
    e.code = Error::Code::WorkerStart;
    e.message = message;
    return e;
}

QString errnoText(int err)
{
    return QString::fromLocal8Bit(std::strerror(err));
}

/** Waits for events on fd up to the rest of msecs (-1: no limit); false on a timeout or an error. */
bool waitFor(int fd, short events, int msecs, const QElapsedTimer &since)
{
    for (;;) {
        const int left = msecs < 0 ? -1 : int(qMax<qint64>(0, msecs - since.elapsed()));
        pollfd p{fd, events, 0};
        const int n = ::poll(&p, 1, left);
        if (n > 0) {
            return true;
        }
        if (n == 0 || errno != EINTR) {
            return false;
        }
    }
}

} // namespace

LocalChannel::LocalChannel(int fd, QObject *parent)
    : QIODevice(parent)
    , m_fd(fd)
{
    // Unbuffered: this class keeps its own read buffer, which readyRead() and
    // bytesAvailable() describe exactly.
    QIODevice::open(QIODevice::ReadWrite | QIODevice::Unbuffered);
    m_readNotifier = new QSocketNotifier(fd, QSocketNotifier::Read, this);
    connect(m_readNotifier, &QSocketNotifier::activated, this, [this] {
        const qint64 before = bytesAvailable();
        const bool open = drainSocket();
        if (bytesAvailable() > before) {
            Q_EMIT readyRead();
        }
        if (!open) {
            peerGone();
        }
    });
    m_writeNotifier = new QSocketNotifier(fd, QSocketNotifier::Write, this);
    m_writeNotifier->setEnabled(false);
    connect(m_writeNotifier, &QSocketNotifier::activated, this, [this] {
        m_unreported += sendQueued();
        report();
    });
}

LocalChannel::~LocalChannel()
{
    if (m_fd >= 0) {
        ::close(m_fd);
    }
}

qint64 LocalChannel::bytesAvailable() const
{
    return m_in.size() - m_inPos;
}

qint64 LocalChannel::bytesToWrite() const
{
    return m_outBytes;
}

void LocalChannel::close()
{
    if (m_fd >= 0) {
        m_readNotifier->setEnabled(false);
        m_writeNotifier->setEnabled(false);
        ::close(m_fd);
        m_fd = -1;
    }
    m_out.clear();
    m_outBytes = 0;
    m_outPos = 0;
    m_unreported = 0;
    QIODevice::close();
}

bool LocalChannel::drainSocket()
{
    if (m_fd < 0 || m_peerGone) {
        return false;
    }
    if (m_inPos > 0 && m_inPos == m_in.size()) {
        m_in.clear();
        m_inPos = 0;
    }
    for (;;) {
        const qsizetype had = m_in.size();
        m_in.resize(had + kReadChunk);
        const ssize_t n = ::read(m_fd, m_in.data() + had, size_t(kReadChunk));
        m_in.resize(had + qMax<ssize_t>(0, n));
        if (n > 0) {
            continue;
        }
        if (n == 0) {
            return false; // the peer closed its end
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return true;
        }
        setErrorString(errnoText(errno));
        return false;
    }
}

qint64 LocalChannel::readData(char *data, qint64 maxSize)
{
    const qint64 n = qMin(maxSize, bytesAvailable());
    if (n > 0) {
        std::memcpy(data, m_in.constData() + m_inPos, size_t(n));
        m_inPos += n;
    }
    if (m_inPos == m_in.size()) {
        m_in.clear();
        m_inPos = 0;
    }
    // At the end of a closed connection QIODevice expects -1.
    return n == 0 && m_peerGone ? -1 : n;
}

qint64 LocalChannel::writeData(const char *data, qint64 size)
{
    if (m_fd < 0 || m_peerGone || m_sendFailed) {
        setErrorString(QStringLiteral("the connection is closed"));
        return -1;
    }
    if (size > 0) {
        m_out.append(QByteArray(data, size));
        m_outBytes += size;
        sendQueuedLater();
    }
    return size;
}

void LocalChannel::flush()
{
    sendQueuedLater();
}

void LocalChannel::sendQueuedLater()
{
    // Sent now, said later: a receiver of bytesWritten() that writes again
    // (the Supervisor's upload pump) must not run inside its own write(),
    // as QIODevice's sockets promise.
    m_unreported += sendQueued();
    if ((m_unreported > 0 || m_sendFailed) && !m_reportQueued) {
        m_reportQueued = true;
        QMetaObject::invokeMethod(
            this,
            [this] {
                m_reportQueued = false;
                report();
            },
            Qt::QueuedConnection);
    }
}

void LocalChannel::report()
{
    if (const qint64 sent = std::exchange(m_unreported, 0); sent > 0) {
        Q_EMIT bytesWritten(sent);
    }
    if (m_sendFailed) {
        peerGone();
    }
}

qint64 LocalChannel::sendQueued()
{
    qint64 sent = 0;
    while (!m_out.isEmpty() && m_fd >= 0) {
        const QByteArray &chunk = m_out.first();
        // MSG_NOSIGNAL: a worker that died must not take this process with SIGPIPE.
        const ssize_t n =
            ::send(m_fd, chunk.constData() + m_outPos, size_t(chunk.size() - m_outPos), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                break;
            }
            setErrorString(errnoText(errno));
            m_out.clear();
            m_outBytes = 0;
            m_outPos = 0;
            m_sendFailed = true; // report() says so: the connection is gone
            break;
        }
        sent += n;
        m_outBytes -= n;
        m_outPos += n;
        if (m_outPos == chunk.size()) {
            m_out.removeFirst();
            m_outPos = 0;
        }
    }
    m_writeNotifier->setEnabled(!m_out.isEmpty() && m_fd >= 0);
    return sent;
}

void LocalChannel::peerGone()
{
    if (m_peerGone) {
        return;
    }
    m_peerGone = true;
    m_readNotifier->setEnabled(false);
    m_writeNotifier->setEnabled(false);
    Q_EMIT readChannelFinished();
    Q_EMIT disconnected();
}

bool LocalChannel::waitForBytesWritten(int msecs)
{
    QElapsedTimer since;
    since.start();
    while (!m_out.isEmpty() && m_fd >= 0 && !m_peerGone) {
        if (!waitFor(m_fd, POLLOUT, msecs, since)) {
            return false;
        }
        m_unreported += sendQueued();
        report();
    }
    return m_out.isEmpty();
}

bool LocalChannel::waitForReadyRead(int msecs)
{
    QElapsedTimer since;
    since.start();
    const qint64 before = bytesAvailable();
    while (m_fd >= 0 && !m_peerGone) {
        if (!waitFor(m_fd, POLLIN, msecs, since)) {
            return false;
        }
        const bool open = drainSocket();
        if (bytesAvailable() > before) {
            Q_EMIT readyRead();
            if (!open) {
                peerGone();
            }
            return true;
        }
        if (!open) {
            peerGone();
            return false;
        }
    }
    return false;
}

LocalListener::LocalListener(QObject *parent)
    : QObject(parent)
{
}

LocalListener::~LocalListener()
{
    close();
}

Status LocalListener::listen(const QString &stem)
{
    close();
    // A folder only this user can enter holds the socket: no other user can
    // connect to it, and no name in the shared temporary folder can be taken
    // over by someone else first.
    QByteArray dir = QFile::encodeName(QDir::tempPath() + QLatin1Char('/') + stem + QStringLiteral("-XXXXXX"));
    if (!::mkdtemp(dir.data())) {
        return socketError(QStringLiteral("cannot create a folder for the worker's socket under %1: %2")
                               .arg(QDir::tempPath(), errnoText(errno)));
    }
    m_dir = QFile::decodeName(dir);
    const QByteArray path = dir + "/socket";
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (size_t(path.size()) >= sizeof(address.sun_path)) {
        const QString where = m_dir;
        close();
        return socketError(QStringLiteral("the worker's socket path %1/socket is longer than the %2 bytes a socket "
                                          "path may have; set TMPDIR to a shorter folder")
                               .arg(where)
                               .arg(sizeof(address.sun_path) - 1));
    }
    std::memcpy(address.sun_path, path.constData(), size_t(path.size()));
    m_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (m_fd < 0 || ::bind(m_fd, reinterpret_cast<const sockaddr *>(&address), sizeof(address)) != 0 ||
        ::listen(m_fd, 4) != 0) {
        const int err = errno;
        close();
        return socketError(QStringLiteral("cannot open the local socket %1 for kpg-worker: %2")
                               .arg(QFile::decodeName(path), errnoText(err)));
    }
    m_path = QFile::decodeName(path);
    m_notifier = new QSocketNotifier(m_fd, QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, &LocalListener::accept);
    return Unit{};
}

void LocalListener::accept()
{
    while (m_fd >= 0) { // a receiver of connected() may have closed the listener
        const int fd = ::accept4(m_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EINTR) {
                continue;
            }
            return; // EAGAIN: none left; anything else: the next activation tries again
        }
        ucred peer{};
        socklen_t length = sizeof(peer);
        if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 || peer.uid != ::getuid()) {
            ::close(fd); // another user's process: the folder's mode should have kept it out
            continue;
        }
        Q_EMIT connected(new LocalChannel(fd));
    }
}

void LocalListener::close()
{
    if (m_notifier) {
        // Later, not now: close() is called from connected()'s receivers,
        // inside the notifier's own activation.
        m_notifier->setEnabled(false);
        m_notifier->deleteLater();
        m_notifier = nullptr;
    }
    if (m_fd >= 0) {
        ::close(m_fd);
        m_fd = -1;
    }
    if (!m_path.isEmpty()) {
        ::unlink(QFile::encodeName(m_path).constData());
        m_path.clear();
    }
    if (!m_dir.isEmpty()) {
        ::rmdir(QFile::encodeName(m_dir).constData());
        m_dir.clear();
    }
}

} // namespace Kp
