#pragma once

#include "core/result.h"

#include <QByteArray>
#include <QIODevice>
#include <QList>
#include <QObject>
#include <QString>

class QSocketNotifier;

namespace Kp {

/**
 * One end of a connected Unix-domain stream socket as a QIODevice: what the
 * Supervisor reads the local worker's frames from and writes requests to.
 * Written on the socket calls and QSocketNotifier rather than QLocalSocket so
 * the GUI process does not load Qt Network and the libraries it brings
 * (Kerberos among them) before its first paint (docs/ARCHITECTURE.md, "Start,
 * measured"); the worker, whose start nobody watches, keeps QLocalSocket.
 * Writes never block: what the socket does not take at once is queued and
 * sent as it drains; bytesWritten() comes from the event loop, never from
 * inside write(). The thread that made it only.
 */
class LocalChannel : public QIODevice
{
    Q_OBJECT
public:
    /** Takes a connected, non-blocking socket descriptor; closes it when closed or destroyed. */
    explicit LocalChannel(int fd, QObject *parent = nullptr);
    ~LocalChannel() override;

    bool isSequential() const override { return true; }
    qint64 bytesAvailable() const override;
    qint64 bytesToWrite() const override;
    bool waitForBytesWritten(int msecs) override;
    bool waitForReadyRead(int msecs) override;
    void close() override;
    /** Sends what is queued as far as the socket takes it now, without waiting. */
    void flush();
    bool isConnected() const { return m_fd >= 0 && !m_peerGone && !m_sendFailed; }

Q_SIGNALS:
    /** The peer closed its end or the connection broke; emitted once, after the last readyRead(). */
    void disconnected();

protected:
    qint64 readData(char *data, qint64 maxSize) override;
    qint64 writeData(const char *data, qint64 size) override;

private:
    /** Reads what the socket holds; false at its end or on an error (then disconnected() follows). */
    bool drainSocket();
    /** Writes queued bytes until the socket would block; the bytes sent. */
    qint64 sendQueued();
    /** sendQueued() from write() and flush(): bytesWritten() (or the end) from the event loop, not in the call. */
    void sendQueuedLater();
    /** bytesWritten() for what was sent and not yet said; disconnected() after a failed send. */
    void report();
    void peerGone();

    int m_fd = -1;
    bool m_peerGone = false;
    QSocketNotifier *m_readNotifier = nullptr;
    QSocketNotifier *m_writeNotifier = nullptr;
    QByteArray m_in;
    qsizetype m_inPos = 0;
    QList<QByteArray> m_out; ///< chunks not yet sent; the first from m_outPos
    qsizetype m_outPos = 0;
    qint64 m_outBytes = 0;
    qint64 m_unreported = 0;     ///< sent, not yet reported by bytesWritten()
    bool m_reportQueued = false; ///< report() is queued (sendQueuedLater())
    bool m_sendFailed = false;   ///< a send failed: the connection is over
};

/**
 * A listening Unix-domain socket in a folder only this user can enter,
 * accepting connections from processes of the same user (SO_PEERCRED):
 * path() is what the worker is told to connect to (kpg-worker --connect).
 * The socket file and its folder go when it is destroyed.
 */
class LocalListener : public QObject
{
    Q_OBJECT
public:
    explicit LocalListener(QObject *parent = nullptr);
    ~LocalListener() override;

    /** Creates the folder and the socket under the temporary folder; the error says which step failed and why. */
    Status listen(const QString &stem);
    QString path() const { return m_path; }
    /** Stops accepting; the socket file and folder go. */
    void close();

Q_SIGNALS:
    /** A peer of this user connected; the channel is the receiver's (parented to nobody). */
    void connected(Kp::LocalChannel *channel);

private:
    void accept();

    int m_fd = -1;
    QString m_dir;
    QString m_path;
    QSocketNotifier *m_notifier = nullptr;
};

} // namespace Kp
