// The Supervisor's end of the local worker's socket (client/localsocket.h):
// bytes both ways in order under back-pressure, the peer's end seen after its
// last bytes, the folder kept from other users, and a listener that cleans up.

#include "client/localsocket.h"

#include <QDir>
#include <QFileInfo>
#include <QLocalSocket>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTest>

#include <cerrno>
#include <cstring>
#include <memory>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace Kp;

class TstLocalSocket : public QObject
{
    Q_OBJECT

private:
    /** A listener and, connected to it, a QLocalSocket (as kpg-worker connects) and the accepted channel. */
    struct Pair
    {
        LocalListener listener;
        QLocalSocket peer;
        std::unique_ptr<LocalChannel> channel;
    };

    static std::unique_ptr<Pair> connectPair()
    {
        auto p = std::make_unique<Pair>();
        const Status s = p->listener.listen(QStringLiteral("kpg-test"));
        if (!s) {
            qWarning("%s", qPrintable(s.error().message));
            return nullptr;
        }
        QObject::connect(&p->listener, &LocalListener::connected, &p->listener,
                         [raw = p.get()](LocalChannel *c) { raw->channel.reset(c); });
        p->peer.connectToServer(p->listener.path());
        if (!p->peer.waitForConnected(5000) || !QTest::qWaitFor([&] { return p->channel != nullptr; }, 5000)) {
            return nullptr;
        }
        return p;
    }

    static QByteArray randomBytes(qsizetype n, quint32 seed)
    {
        QByteArray b(n, Qt::Uninitialized);
        QRandomGenerator rng(seed);
        rng.fillRange(reinterpret_cast<quint32 *>(b.data()), n / 4);
        return b;
    }

private Q_SLOTS:
    void bytesBothWaysUnderBackPressure()
    {
        auto p = connectPair();
        QVERIFY(p);
        // 24 MiB from the channel: far beyond the socket's buffer, so most of
        // it queues and goes out as the peer reads (bytesWritten() reports it).
        const QByteArray out = randomBytes(24 << 20, 7);
        QSignalSpy written(p->channel.get(), &QIODevice::bytesWritten);
        QCOMPARE(p->channel->write(out.left(5 << 20)), qint64(5 << 20));
        QCOMPARE(p->channel->write(out.mid(5 << 20)), qint64(out.size() - (5 << 20)));
        QVERIFY(p->channel->bytesToWrite() > 0);
        QByteArray got;
        QVERIFY(QTest::qWaitFor(
            [&] {
                got += p->peer.readAll();
                return got.size() >= out.size();
            },
            20000));
        QVERIFY(got == out);
        QCOMPARE(p->channel->bytesToWrite(), qint64(0));
        qint64 reported = 0;
        for (const QList<QVariant> &args : written) {
            reported += args.at(0).toLongLong();
        }
        QCOMPARE(reported, qint64(out.size()));

        // 9 MiB to the channel, read as readyRead() announces it.
        const QByteArray in = randomBytes(9 << 20, 11);
        QByteArray received;
        connect(p->channel.get(), &QIODevice::readyRead, this, [&] { received += p->channel->readAll(); });
        p->peer.write(in);
        QVERIFY(QTest::qWaitFor(
            [&] {
                p->peer.flush();
                return received.size() >= in.size();
            },
            20000));
        QVERIFY(received == in);
    }

    // As QIODevice's sockets promise: bytesWritten() never comes from inside write(), so a
    // receiver that writes again (the Supervisor's upload pump) is never re-entered.
    void bytesWrittenNeverComesFromInsideWrite()
    {
        auto p = connectPair();
        QVERIFY(p);
        bool inWrite = false;
        int nested = 0;
        qint64 reported = 0;
        int writes = 0;
        const QByteArray frame = randomBytes(1 << 20, 13);
        const auto writeOne = [&] {
            inWrite = true;
            p->channel->write(frame);
            inWrite = false;
            ++writes;
        };
        connect(p->channel.get(), &QIODevice::bytesWritten, this, [&](qint64 n) {
            nested += inWrite ? 1 : 0;
            reported += n;
            while (writes < 16 && p->channel->bytesToWrite() < (4 << 20)) {
                writeOne(); // as the pump does: more while little is queued
            }
        });
        writeOne();
        QByteArray got;
        QVERIFY(QTest::qWaitFor(
            [&] {
                got += p->peer.readAll();
                return got.size() >= 16 * frame.size();
            },
            20000));
        QCOMPARE(writes, 16);
        QCOMPARE(got.size(), 16 * frame.size());
        QVERIFY(QTest::qWaitFor([&] { return reported == got.size(); }, 5000));
        QCOMPARE(nested, 0);
    }

    void thePeersEndComesAfterItsLastBytes()
    {
        auto p = connectPair();
        QVERIFY(p);
        QByteArray received;
        QList<QString> order;
        connect(p->channel.get(), &QIODevice::readyRead, this, [&] {
            received += p->channel->readAll();
            order << QStringLiteral("read");
        });
        QSignalSpy gone(p->channel.get(), &LocalChannel::disconnected);
        connect(p->channel.get(), &LocalChannel::disconnected, this, [&] { order << QStringLiteral("gone"); });
        p->peer.write("last words");
        p->peer.flush();
        p->peer.disconnectFromServer();
        QVERIFY(gone.wait(5000));
        QCOMPARE(received, QByteArray("last words"));
        QCOMPARE(order.last(), QStringLiteral("gone"));
        QVERIFY(!p->channel->isConnected());
        // Writing to a closed connection fails at once, with no signal from the system.
        QCOMPARE(p->channel->write("x"), qint64(-1));
        QCOMPARE(gone.count(), 1);
    }

    void aWriteToAPeerThatDiedIsAnEndNotACrash()
    {
        auto p = connectPair();
        QVERIFY(p);
        QSignalSpy gone(p->channel.get(), &LocalChannel::disconnected);
        p->peer.abort();
        // Without MSG_NOSIGNAL the second write would raise SIGPIPE and end this test.
        p->channel->write(randomBytes(1 << 20, 3));
        QVERIFY(gone.count() == 1 || gone.wait(5000));
        QVERIFY(!p->channel->isConnected());
    }

    void waitsWithoutAnEventLoop()
    {
        auto p = connectPair();
        QVERIFY(p);
        p->peer.write("ping");
        p->peer.flush();
        QVERIFY(p->channel->waitForReadyRead(5000));
        QCOMPARE(p->channel->readAll(), QByteArray("ping"));
        p->channel->write(randomBytes(8 << 20, 5));
        // Nobody reads: the queue cannot drain, so the wait ends at its time limit.
        QVERIFY(!p->channel->waitForBytesWritten(200));
        QVERIFY(p->channel->bytesToWrite() > 0);
    }

    void theSocketsFolderIsThisUsersAndGoesWithTheListener()
    {
        QString path;
        QString dir;
        {
            LocalListener listener;
            const Status s = listener.listen(QStringLiteral("kpg-test"));
            KP_VERIFY_RESULT(s);
            path = listener.path();
            dir = QFileInfo(path).absolutePath();
            QVERIFY(QFileInfo::exists(path));
            QCOMPARE(QFileInfo(dir).permissions() & (QFile::ReadGroup | QFile::ExeGroup | QFile::ReadOther |
                                                     QFile::ExeOther | QFile::WriteGroup | QFile::WriteOther),
                     QFileDevice::Permissions());
            if (::geteuid() == 0) {
                // Another user (nobody) cannot reach the socket: the child reports connect()'s errno.
                const pid_t child = ::fork();
                if (child == 0) {
                    if (::setgid(65534) != 0 || ::setuid(65534) != 0) {
                        _exit(100);
                    }
                    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
                    sockaddr_un a{};
                    a.sun_family = AF_UNIX;
                    const QByteArray p8 = path.toLocal8Bit();
                    std::memcpy(a.sun_path, p8.constData(), size_t(p8.size()));
                    _exit(::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0 ? 0 : errno);
                }
                int status = 0;
                QCOMPARE(::waitpid(child, &status, 0), child);
                QVERIFY(WIFEXITED(status));
                QCOMPARE(WEXITSTATUS(status), EACCES);
            }
        }
        QVERIFY(!QFileInfo::exists(path));
        QVERIFY(!QFileInfo::exists(dir));
    }

    void aTooLongTemporaryFolderIsNamed()
    {
        const QByteArray saved = qgetenv("TMPDIR");
        const QString longDir = QDir::tempPath() + QLatin1Char('/') + QString(90, QLatin1Char('d'));
        QVERIFY(QDir().mkpath(longDir));
        qputenv("TMPDIR", longDir.toLocal8Bit());
        LocalListener listener;
        const Status s = listener.listen(QStringLiteral("kpg-test"));
        qputenv("TMPDIR", saved);
        QDir(longDir).removeRecursively();
        QVERIFY(!s);
        QVERIFY2(s.error().message.contains(QLatin1String("TMPDIR")), qPrintable(s.error().message));
        QVERIFY2(s.error().message.contains(QLatin1String("longer than")), qPrintable(s.error().message));
    }
};

QTEST_GUILESS_MAIN(TstLocalSocket)
#include "tst_localsocket.moc"
