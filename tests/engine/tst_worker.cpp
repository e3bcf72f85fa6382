// The real kpg-worker: its handshake on a raw socket, and EngineClient's
// supervision (start on demand, death, time-outs, superseding, restarts).

#include "client/engineclient.h"
#include "compile/sandbox.h"
#include "testutil.h"
#include "worker/protocol.h"

#include <QElapsedTimer>
#include <QLocalServer>
#include <QLocalSocket>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <optional>

using namespace Kp;
using namespace Kp::Protocol;

class TestWorker : public QObject
{
    Q_OBJECT

private:
    // A worker on a socket of the test's own, without EngineClient in between.
    struct RawWorker
    {
        QLocalServer server;
        QProcess process;
        QLocalSocket *socket = nullptr;
        FrameDecoder decoder;

        ~RawWorker()
        {
            if (process.state() != QProcess::NotRunning) {
                process.kill();
                process.waitForFinished();
            }
        }
        bool start(const QStringList &extraArgs = {})
        {
            const QString name = QStringLiteral("kpg-test-%1").arg(QCoreApplication::applicationPid());
            QLocalServer::removeServer(name);
            if (!server.listen(name)) {
                return false;
            }
            process.start(KpTest::program("kpg-worker"), QStringList{"--connect", server.fullServerName()} + extraArgs);
            if (!server.waitForNewConnection(10000)) {
                return false;
            }
            socket = server.nextPendingConnection();
            return socket != nullptr;
        }
        Result<Message> ask(const Message &m)
        {
            socket->write(encode(m));
            socket->flush();
            QElapsedTimer t;
            t.start();
            while (t.elapsed() < 10000) {
                if (auto next = decoder.next()) {
                    return *next;
                }
                if (!socket->waitForReadyRead(100) && socket->state() != QLocalSocket::ConnectedState) {
                    break;
                }
                decoder.feed(socket->readAll());
            }
            return Error{"test", Error::Code::Timeout, {}, "no answer from kpg-worker"};
        }
    };

private Q_SLOTS:
    void rawHandshake()
    {
        RawWorker w;
        QVERIFY(w.start());
        auto hello = w.ask(Message{kVersion, Type::Hello, 1, {{"protocol", kVersion}}});
        KP_VERIFY_RESULT(hello);
        QCOMPARE(hello->type, Type::Reply);
        QCOMPARE(hello->id, quint64(1));
        QCOMPARE(hello->body.value("protocol").toInt(), kVersion);
        QCOMPARE(hello->body.value("pid").toLongLong(), w.process.processId());

        auto ping = w.ask(Message{kVersion, Type::Ping, 2, {}});
        KP_VERIFY_RESULT(ping);
        QCOMPARE(ping->type, Type::Reply);
        QCOMPARE(ping->id, quint64(2));

        auto bye = w.ask(Message{kVersion, Type::Shutdown, 3, {}});
        KP_VERIFY_RESULT(bye);
        QCOMPARE(bye->type, Type::Reply);
        QVERIFY(w.process.waitForFinished(5000));
        QCOMPARE(w.process.exitStatus(), QProcess::NormalExit);
        QCOMPARE(w.process.exitCode(), 0);
    }

    // Issue 28: kpg-worker's opt-in Landlock sandbox, checked without a GPU:
    // the worker starts, answers, and cannot open a file outside its policy.
    void sandboxedWorker_data()
    {
        QTest::addColumn<bool>("sandboxed");
        QTest::newRow("--sandbox") << true;
        QTest::newRow("not sandboxed (the default)") << false;
    }
    void sandboxedWorker()
    {
        QFETCH(bool, sandboxed);
        if (sandboxed && Sandbox::landlockAbi() <= 0) {
            QSKIP("Landlock is not available on this kernel (landlock_create_ruleset reports no ABI)");
        }
        QTemporaryDir dir;
        QFile secret(dir.filePath("secret.txt"));
        QVERIFY(secret.open(QIODevice::WriteOnly));
        secret.write("not for the worker\n");
        secret.close();

        qputenv("KPG_WORKER_TEST_HOOKS", "1");
        RawWorker w;
        const bool started = w.start(sandboxed ? QStringList{"--sandbox"} : QStringList{});
        qunsetenv("KPG_WORKER_TEST_HOOKS");
        QVERIFY(started);
        auto hello = w.ask(Message{kVersion, Type::Hello, 1, {{"protocol", kVersion}}});
        KP_VERIFY_RESULT(hello);
        const QVariantMap state = hello->body.value("sandbox").toMap();
        QCOMPARE(state.value("sandboxed").toBool(), sandboxed);
        if (sandboxed) {
            QCOMPARE(state.value("landlockAbi").toInt(), Sandbox::landlockAbi());
        }

        for (const QString &file : {secret.fileName(), QStringLiteral("/etc/passwd")}) {
            auto probe = w.ask(Message{kVersion, Type::Ping, 2, {{"testRead", file}}});
            KP_VERIFY_RESULT(probe);
            QCOMPARE(probe->body.value("testRead").toString(),
                     sandboxed ? QStringLiteral("Permission denied") : QStringLiteral("read"));
        }

        // Without a GPU the driver is missing either way: the same definite answer.
        auto devices = w.ask(Message{kVersion, Type::ListDevices, 3, {}});
        KP_VERIFY_RESULT(devices);
        if (devices->type == Type::ErrorReply) {
            const Error e = Error::fromVariant(devices->body);
            QVERIFY2(e.code == Error::Code::NoDriver || e.code == Error::Code::NoDevice, qPrintable(e.toString()));
            QVERIFY2(e.message.startsWith("No "), qPrintable(e.message));
        }
        auto bye = w.ask(Message{kVersion, Type::Shutdown, 4, {}});
        KP_VERIFY_RESULT(bye);
        QVERIFY(w.process.waitForFinished(5000));
        QCOMPARE(w.process.exitCode(), 0);
    }

    void sandboxedWorkerThroughTheEngine()
    {
        // KPG_WORKER_SANDBOX=1: the engine starts kpg-worker --sandbox, which answers as usual.
        if (Sandbox::landlockAbi() <= 0) {
            QSKIP("Landlock is not available on this kernel (landlock_create_ruleset reports no ABI)");
        }
        qputenv("KPG_WORKER_SANDBOX", "1");
        qputenv("KPG_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
        EngineClient client;
        const Result<DeviceList> r = client.listDevicesSync(15000);
        qunsetenv("KPG_CUDA_DRIVER");
        qunsetenv("KPG_WORKER_SANDBOX");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, Error::Code::NoDriver);
        QVERIFY2(r.error().message.startsWith("No NVIDIA driver found"), qPrintable(r.error().message));
        KP_VERIFY_RESULT(client.requestSync(Type::Ping));
    }

    void rawRefusals_data()
    {
        QTest::addColumn<int>("version");
        QTest::addColumn<QString>("type");
        QTest::addColumn<QVariantMap>("body");
        QTest::addColumn<QString>("expected");
        QTest::newRow("hello from a newer engine")
            << kVersion << Type::Hello << QVariantMap{{"protocol", 99}} << "engine speaks version 99";
        QTest::newRow("hello without a version")
            << kVersion << Type::Hello << QVariantMap{} << "engine speaks version -1";
        QTest::newRow("message of another version")
            << kVersion + 1 << Type::Ping << QVariantMap{} << "request uses version 2";
        QTest::newRow("unknown request") << kVersion << "launchRockets" << QVariantMap{}
                                         << "unknown request type 'launchRockets'";
    }
    void rawRefusals()
    {
        QFETCH(int, version);
        QFETCH(QString, type);
        QFETCH(QVariantMap, body);
        QFETCH(QString, expected);
        RawWorker w;
        QVERIFY(w.start());
        auto r = w.ask(Message{version, type, 5, body});
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->type, Type::ErrorReply);
        QCOMPARE(r->id, quint64(5));
        const Error e = Error::fromVariant(r->body);
        QCOMPARE(e.code, Error::Code::Protocol);
        QVERIFY2(e.message.contains(expected), qPrintable(e.message));
        // A refused request leaves the worker serving.
        auto ping = w.ask(Message{kVersion, Type::Ping, 6, {}});
        KP_VERIFY_RESULT(ping);
        QCOMPARE(ping->type, Type::Reply);
    }

    void rawGarbageEndsWorker()
    {
        RawWorker w;
        QVERIFY(w.start());
        w.socket->write(QByteArray("\x00\x00\x00\x03\xff\xff\xff", 7));
        w.socket->flush();
        QVERIFY(w.process.waitForFinished(5000));
        QCOMPARE(w.process.exitCode(), 65);
        QVERIFY(w.process.readAllStandardError().contains("malformed CBOR"));
    }

    void startsOnDemand()
    {
        EngineClient client;
        QCOMPARE(client.workerPid(), 0); // nothing runs before the first request
        QSignalSpy started(&client, &EngineClient::workerStarted);
        const Reply r = client.requestSync(Type::Ping);
        KP_VERIFY_RESULT(r);
        const qint64 pid = r->value("pid").toLongLong();
        QVERIFY(pid > 0);
        QVERIFY(pid != QCoreApplication::applicationPid());
        QCOMPARE(client.workerPid(), pid);
        QVERIFY(KpTest::processAlive(pid));
        QTRY_COMPARE(started.count(), 1);
        QCOMPARE(started.first().first().toLongLong(), pid);
        // The same worker serves the next request.
        const Reply again = client.requestSync(Type::Ping);
        KP_VERIFY_RESULT(again);
        QCOMPARE(again->value("pid").toLongLong(), pid);
    }

    void listDevicesAnswers()
    {
        // With or without a GPU the answer is definite: devices, or why not.
        EngineClient client;
        const Reply r = client.requestSync(Type::ListDevices);
        if (r) {
            QVERIFY(!r->value("devices").toList().isEmpty());
            QVERIFY(r->value("driverVersion").toInt() >= 12000);
        } else {
            QVERIFY2(r.error().code == Error::Code::NoDriver || r.error().code == Error::Code::NoDevice,
                     qPrintable(r.error().toString()));
            QVERIFY(r.error().message.startsWith("No "));
        }
    }

    void listDevicesSyncWithoutDriver()
    {
        // kpg's typed call: no driver is a definite NoDriver, and quickly.
        qputenv("KPG_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
        EngineClient client;
        QElapsedTimer t;
        t.start();
        const Result<DeviceList> r = client.listDevicesSync(15000);
        qunsetenv("KPG_CUDA_DRIVER");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, Error::Code::NoDriver);
        QVERIFY2(t.elapsed() < 10000, qPrintable(QString::number(t.elapsed())));
        QVERIFY2(r.error().message.startsWith("No NVIDIA driver found"), qPrintable(r.error().message));
    }

    void listDevicesTyped()
    {
        // With or without a GPU: the same answer as the raw request, typed, on
        // the context's thread.
        EngineClient client;
        QObject context;
        std::optional<Result<DeviceList>> got;
        client.listDevices(&context, [&](const Result<DeviceList> &r) {
            QCOMPARE(QThread::currentThread(), context.thread());
            got = r;
        });
        QTRY_VERIFY_WITH_TIMEOUT(got.has_value(), 30000);
        if (got->ok()) {
            QVERIFY(!got->value().devices.isEmpty());
        } else {
            QVERIFY2(got->error().code == Error::Code::NoDriver || got->error().code == Error::Code::NoDevice,
                     qPrintable(got->error().toString()));
        }
    }

    void noDriver()
    {
        qputenv("KPG_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
        EngineClient client;
        const Reply r = client.requestSync(Type::ListDevices);
        qunsetenv("KPG_CUDA_DRIVER");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, Error::Code::NoDriver);
        QVERIFY2(r.error().message.startsWith("No NVIDIA driver found: /nonexistent/libcuda.so.1 could not be loaded"),
                 qPrintable(r.error().message));
        // The worker is still fine for anything that needs no GPU.
        KP_VERIFY_RESULT(client.requestSync(Type::Ping));
    }

    void killedMidRequest()
    {
        EngineClient client;
        const Reply first = client.requestSync(Type::Ping);
        KP_VERIFY_RESULT(first);
        const qint64 pid = first->value("pid").toLongLong();

        QObject context;
        std::optional<Reply> got;
        QSignalSpy exited(&client, &EngineClient::workerExited);
        client.request(Type::Sleep, {{"ms", 20000}}, &context, [&](const Reply &r) { got = r; });
        QTest::qWait(200); // the sleep is now running in the worker
        QCOMPARE(::kill(static_cast<pid_t>(pid), SIGKILL), 0);
        QTRY_VERIFY_WITH_TIMEOUT(got.has_value(), 5000);
        QVERIFY(!got->ok());
        QCOMPARE(got->error().code, Error::Code::WorkerDied);
        QVERIFY2(got->error().message.contains("kpg-worker crashed (killed by a signal) while running 'sleep'"),
                 qPrintable(got->error().message));
        QTRY_COMPARE(exited.count(), 1);

        const Reply next = client.requestSync(Type::Ping);
        KP_VERIFY_RESULT(next);
        const qint64 fresh = next->value("pid").toLongLong();
        QVERIFY(fresh > 0);
        QVERIFY(fresh != pid);
        QVERIFY(!KpTest::processAlive(pid));
    }

    void crashInWorker()
    {
        EngineClient client;
        const Reply r = client.requestSync(Type::Crash);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, Error::Code::WorkerDied);
        QVERIFY2(r.error().message.contains("while running 'crash'"), qPrintable(r.error().message));
        KP_VERIFY_RESULT(client.requestSync(Type::Ping));
    }

    void queuedRequestsSurviveADeath()
    {
        // Requests waiting behind the one that killed the worker run on a fresh one.
        EngineClient client;
        std::optional<Reply> a, b;
        QObject context;
        client.request(Type::Crash, {}, &context, [&](const Reply &r) { a = r; });
        client.request(Type::Ping, {}, &context, [&](const Reply &r) { b = r; });
        QTRY_VERIFY_WITH_TIMEOUT(a && b, 10000);
        QCOMPARE(a->error().code, Error::Code::WorkerDied);
        KP_VERIFY_RESULT(*b);
    }

    void timeoutKillsAndRestarts()
    {
        EngineClient client;
        const qint64 pid = client.requestSync(Type::Ping)->value("pid").toLongLong();
        QElapsedTimer t;
        t.start();
        const Reply r = client.requestSync(Type::Sleep, {{"ms", 30000}}, RequestOptions{300, {}});
        QVERIFY(t.elapsed() < 5000);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, Error::Code::Timeout);
        QVERIFY2(r.error().message.contains("'sleep' did not finish within 300 ms"), qPrintable(r.error().message));
        const Reply next = client.requestSync(Type::Ping);
        KP_VERIFY_RESULT(next);
        QVERIFY(next->value("pid").toLongLong() != pid);
        QTRY_VERIFY(!KpTest::processAlive(pid));
    }

    void tagsSupersede()
    {
        EngineClient client;
        QObject context;
        QList<std::pair<int, Reply>> replies;
        client.request(Type::Sleep, {{"ms", 300}}, &context, [&](const Reply &r) { replies.append({0, r}); });
        for (int i = 1; i <= 3; ++i) {
            client.request(
                Type::Ping, {}, &context,
                [&, i](const Reply &r) {
                    replies.append({i, r});
                },
                RequestOptions{30000, "compile"});
        }
        QTRY_COMPARE_WITH_TIMEOUT(replies.size(), 4, 10000);
        int cancelled = 0;
        for (const auto &[i, r] : replies) {
            if (i == 0 || i == 3) {
                KP_VERIFY_RESULT(r);
            } else {
                QCOMPARE(r.error().code, Error::Code::Cancelled);
                ++cancelled;
            }
        }
        QCOMPARE(cancelled, 2);
    }

    void destroyedContextGetsNothing()
    {
        EngineClient client;
        bool called = false;
        auto *context = new QObject;
        client.request(Type::Sleep, {{"ms", 200}}, context, [&](const Reply &) { called = true; });
        delete context;
        KP_VERIFY_RESULT(client.requestSync(Type::Ping)); // runs after the sleep
        QTest::qWait(50);
        QVERIFY(!called);
    }

    void missingWorkerBinary()
    {
        qputenv("KPG_WORKER", "/nonexistent/kpg-worker");
        EngineClient client;
        const Reply r = client.requestSync(Type::Ping);
        qunsetenv("KPG_WORKER");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, Error::Code::WorkerStart);
        QVERIFY2(r.error().message.contains("cannot start kpg-worker (/nonexistent/kpg-worker)"),
                 qPrintable(r.error().message));
        // Once the binary is back where it belongs, the same client recovers.
        KP_VERIFY_RESULT(client.requestSync(Type::Ping));
    }

    void workerDyingBeforeHandshake()
    {
        // A program that exits at once must fail the request, not respawn forever.
        qputenv("KPG_WORKER", "/bin/false");
        EngineClient client;
        const Reply r = client.requestSync(Type::Ping);
        qunsetenv("KPG_WORKER");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, Error::Code::WorkerStart);
        QVERIFY2(r.error().message.contains("exited with code 1 before it answered"), qPrintable(r.error().message));
    }

    void shutdownEndsWorker()
    {
        qint64 pid = 0;
        {
            EngineClient client;
            pid = client.requestSync(Type::Ping)->value("pid").toLongLong();
            QVERIFY(KpTest::processAlive(pid));
            // A request still in flight must not stall the shutdown.
            client.request(Type::Sleep, {{"ms", 60000}}, nullptr, [](const Reply &) {});
            QTest::qWait(100);
        }
        QVERIFY(!KpTest::processAlive(pid));
    }
};

QTEST_GUILESS_MAIN(TestWorker)
#include "tst_worker.moc"
