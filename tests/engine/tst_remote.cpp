// Remote targets (docs/remote.md): target parsing, the buffers' mirror in
// frames, and kpg-worker --stdio behind a real OpenSSH server on 127.0.0.1
// (tests/common/sshserver.h): devices, a compile-only project round trip,
// buffers sent once, and each failure with its one message.

#include "buffers/sharedmemory.h"
#include "client/engineclient.h"
#include "client/remotebuffers.h"
#include "client/target.h"
#include "core/format.h"
#include "run/runrequest.h"
#include "sshserver.h"
#include "testutil.h"
#include "worker/protocol.h"
#include "worker/stdiobridge.h"

#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <memory>
#include <signal.h>
#include <tuple>

using namespace Kp;

namespace {

QString sourceDir()
{
    return QStringLiteral(KPG_SOURCE_DIR);
}

// The frames of one byte stream, decoded.
QList<Protocol::Message> decodeAll(const QList<QByteArray> &frames)
{
    Protocol::FrameDecoder decoder;
    for (const QByteArray &f : frames) {
        decoder.feed(f);
    }
    QList<Protocol::Message> out;
    while (auto next = decoder.next()) {
        if (!next->ok()) {
            break;
        }
        out << next->value();
    }
    return out;
}

QList<QByteArray> drain(RemoteBuffers &buffers)
{
    QList<QByteArray> frames;
    for (QByteArray f = buffers.nextFrame(); !f.isEmpty(); f = buffers.nextFrame()) {
        frames << f;
    }
    return frames;
}

QVariantMap bodyFor(const QList<const SharedMemory *> &memories)
{
    RunRequest r;
    int i = 0;
    for (const SharedMemory *m : memories) {
        RunBuffer b;
        b.name = QStringLiteral("b%1").arg(i++);
        b.path = m->path();
        b.id = m->id();
        b.bytes = m->size();
        r.buffers << b;
    }
    return r.toPrepareVariant();
}

// Every descendant of a process, with its name: sshd's sessions and the worker under them.
QList<std::pair<qint64, QByteArray>> descendants(qint64 root)
{
    QList<std::pair<qint64, QByteArray>> found;
    QList<qint64> parents{root};
    while (!parents.isEmpty()) {
        const qint64 parent = parents.takeFirst();
        QDirIterator it(QStringLiteral("/proc"), QDir::Dirs | QDir::NoDotAndDotDot);
        while (it.hasNext()) {
            it.next();
            bool isPid = false;
            const qint64 pid = it.fileName().toLongLong(&isPid);
            if (!isPid) {
                continue;
            }
            QFile stat(it.filePath() + QStringLiteral("/stat"));
            if (!stat.open(QIODevice::ReadOnly)) {
                continue;
            }
            const QByteArray text = stat.readAll();
            // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
            const QList<QByteArray> fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
            if (fields.size() > 1 && fields[1].toLongLong() == parent) {
                const qsizetype open = text.indexOf('(');
                found << std::pair{pid, text.mid(open + 1, text.lastIndexOf(')') - open - 1)};
                parents << pid;
            }
        }
    }
    return found;
}

// True while the process sleeps in nanosleep or clock_nanosleep (/proc/PID/syscall).
bool inSleep(qint64 pid)
{
    QFile f(QStringLiteral("/proc/%1/syscall").arg(pid));
    if (!f.open(QIODevice::ReadOnly)) {
        return false;
    }
    const QByteArray nr = f.readAll().split(' ').value(0);
    return nr == "35" || nr == "230";
}

} // namespace

class TestRemote : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<KpTest::SshServer> m_ssh;
    QString m_worker;
    QString m_startFailure;

    QStringList sshEnv(const QString &config = QStringLiteral("ssh_config")) const
    {
        return {QStringLiteral("KPG_SSH_CONFIG=") + m_ssh->path(config)};
    }

    void needSsh()
    {
        if (!m_startFailure.isEmpty()) {
            if (m_startFailure.contains(QLatin1String("not found"))) {
                QSKIP(qPrintable(m_startFailure));
            }
            QFAIL(qPrintable(m_startFailure));
        }
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_worker = KpTest::program(QStringLiteral("kpg-worker"));
        m_ssh = std::make_unique<KpTest::SshServer>();
        m_startFailure = m_ssh->start();
    }

    void cleanupTestCase() { m_ssh.reset(); }

    void parse_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<QString>("expected"); // a word of the error, or of the command line joined by spaces

        QTest::newRow("empty is local") << "" << true << "";
        QTest::newRow("local") << "local" << true << "";
        QTest::newRow("host only") << "ssh://lab-gpu-01" << true << "-- lab-gpu-01 exec 'kpg-worker' --stdio";
        QTest::newRow("user, port and path") << "ssh://ana@lab-gpu-01:2222/opt/kpg/bin/kpg-worker" << true
                                             << "-p 2222 -l ana -- lab-gpu-01 exec '/opt/kpg/bin/kpg-worker' --stdio";
        QTest::newRow("worker under the remote home")
            << "ssh://lab/~/kpg/bin/kpg-worker" << true << "exec \"$HOME\"/'kpg/bin/kpg-worker' --stdio";
        QTest::newRow("quote in the path is quoted")
            << "ssh://lab/opt/it's/kpg-worker" << true << "exec '/opt/it'\\''s/kpg-worker' --stdio";
        QTest::newRow("ipv6") << "ssh://[::1]:22" << true << "-p 22 -- ::1";
        QTest::newRow("batch mode, no escape character") << "ssh://lab" << true << "-T -e none -o BatchMode=yes";
        QTest::newRow("port out of range") << "ssh://lab:65536" << false << "the port '65536' must be a number";
        QTest::newRow("port not a number") << "ssh://lab:ssh" << false << "the port 'ssh' must be a number";
        QTest::newRow("host like an option") << "ssh://-oProxyCommand=x" << false << "may not start with '-'";
        QTest::newRow("user like an option") << "ssh://-l@lab" << false << "the user name '-l'";
        QTest::newRow("no host") << "ssh://:22" << false << "no host name";
        QTest::newRow("newline in the path") << "ssh://lab/a\nb" << false << "control character";
        QTest::newRow("unknown scheme") << "tcp://lab" << false << "expected 'local', ssh://";
        QTest::newRow("slurm defaults") << "slurm:" << true << "srun --ntasks=1 --nodes=1 --unbuffered";
        QTest::newRow("slurm settings")
            << "slurm:partition=gpu,gpus=2,time=1:30:00,account=cs101,wait=5,worker=/opt/kpg/bin/kpg-worker" << true
            << "--immediate=5 --partition=gpu --gres=gpu:2 --time=1:30:00 --account=cs101 /opt/kpg/bin/kpg-worker "
               "--stdio";
        QTest::newRow("slurm through a login node") << "slurm:partition=gpu,via=ssh://ana@login:2200" << true
                                                    << "-p 2200 -l ana -- login exec srun '--ntasks=1'";
        QTest::newRow("slurm unknown setting") << "slurm:queue=gpu" << false << "unknown Slurm setting 'queue'";
        QTest::newRow("slurm bad time") << "slurm:time=soon" << false << "time=soon: expected Slurm's form";
        QTest::newRow("slurm gpus negative") << "slurm:gpus=-1" << false << "gpus=-1: expected a whole number";
        QTest::newRow("slurm partition with a space") << "slurm:partition=a b" << false << "the partition 'a b'";
        QTest::newRow("slurm via with a path") << "slurm:via=ssh://login/x" << false << "via=ssh://login/x";
    }

    void parse()
    {
        QFETCH(QString, spec);
        QFETCH(bool, ok);
        QFETCH(QString, expected);
        const Result<Target> t = Target::parse(spec);
        QCOMPARE(t.ok(), ok);
        if (!ok) {
            QVERIFY2(t.error().message.contains(expected), qPrintable(t.error().message));
            QVERIFY2(t.error().message.contains(spec.trimmed()), qPrintable(t.error().message));
            QCOMPARE(t.error().code, Error::Code::Usage);
            return;
        }
        if (expected.isEmpty()) {
            QVERIFY(!t->isRemote());
            QCOMPARE(t->displayName(), QStringLiteral("local"));
            return;
        }
        const QString command = t->command().join(QLatin1Char(' '));
        QVERIFY2(command.contains(expected), qPrintable(command));
    }

    // The mirror without a network: what the engine sends, the worker's copy
    // receives; what a run changes comes back; unchanged bytes never travel.
    void bufferMirror()
    {
        // 20 MiB of random bytes: frames of at most kBufferChunkBytes, the last one short.
        Result<SharedMemory> a = SharedMemory::create(20 * 1024 * 1024 + 12, QStringLiteral("a"));
        Result<SharedMemory> z = SharedMemory::create(4096 * 3, QStringLiteral("z"));
        QVERIFY(a && z);
        auto *pa = static_cast<quint32 *>(a.value().data());
        QRandomGenerator rng(7);
        rng.fillRange(pa, a->size() / 4);
        const QVariantMap body = bodyFor({&a.value(), &z.value()});

        RemoteBuffers engine;
        StdioBridge worker;
        QVERIFY(engine.begin(body, 5).ok());
        QCOMPARE(engine.uploadBytes(), a->size()); // the zero buffer goes as a marker
        const QList<Protocol::Message> sent = decodeAll(drain(engine));
        const qint64 frames = (a->size() + Protocol::kBufferChunkBytes - 1) / Protocol::kBufferChunkBytes;
        QVERIFY(a->size() % Protocol::kBufferChunkBytes != 0);
        QCOMPARE(sent.size(), frames + 1); // and the zero buffer's marker
        for (const Protocol::Message &m : sent) {
            QCOMPARE(m.type, Protocol::Type::BufferData);
            QCOMPARE(m.id, quint64(5));
            worker.receive(m.body);
        }
        QVERIFY(sent.last().body.value(QStringLiteral("zero")).toBool());
        Result<QVariantMap> local = worker.localize(body);
        QVERIFY2(local.ok(), qPrintable(local ? QString() : local.error().message));
        const QVariantList localBuffers = local->value(QStringLiteral("buffers")).toList();
        QCOMPARE(localBuffers.size(), 2);
        const QString localPath = localBuffers[0].toMap().value(QStringLiteral("path")).toString();
        QVERIFY(localPath != a->path());
        Result<SharedMemory> copy = SharedMemory::open(localPath, a->size());
        QVERIFY(copy.ok());
        QVERIFY(std::memcmp(copy->data(), a->data(), size_t(a->size())) == 0);

        // Play again with nothing changed: no bytes travel either way.
        QVERIFY(engine.begin(body, 6).ok());
        QCOMPARE(engine.uploadBytes(), qint64(0));
        QVERIFY(drain(engine).isEmpty());
        QVERIFY(worker.localize(body).ok());
        QList<QByteArray> back;
        QCOMPARE(worker.sendChanged(6, [&back](const QByteArray &f) { return back << f, true; }), qint64(0));
        QVERIFY(back.isEmpty());

        // A "run" changes the worker's copy of z: it comes back, and only it.
        const QString zPath = worker.localize(body)
                                  ->value(QStringLiteral("buffers"))
                                  .toList()[1]
                                  .toMap()
                                  .value(QStringLiteral("path"))
                                  .toString();
        Result<SharedMemory> zCopy = SharedMemory::open(zPath, z->size());
        QVERIFY(zCopy.ok());
        std::memset(zCopy.value().data(), 0x5a, size_t(z->size()));
        QCOMPARE(worker.sendChanged(7, [&back](const QByteArray &f) { return back << f, true; }), z->size());
        for (const Protocol::Message &m : decodeAll(back)) {
            QCOMPARE(m.id, quint64(7));
            QVERIFY(engine.receive(m.body).ok());
        }
        QCOMPARE(static_cast<const unsigned char *>(z->data())[z->size() - 1], 0x5a);
        QCOMPARE(engine.downloadBytes(), z->size());

        // The engine knows the worker holds the new z: the next run sends nothing.
        QVERIFY(engine.begin(body, 8).ok());
        QCOMPARE(engine.uploadBytes(), qint64(0));
        // The user edits a: all of a goes again.
        pa[0] ^= 1u;
        QVERIFY(engine.begin(body, 9).ok());
        QCOMPARE(engine.uploadBytes(), a->size());

        // A frame out of range is refused, and the next request hears of it.
        worker.receive(QVariantMap{{QStringLiteral("key"), quint64(99)},
                                   {QStringLiteral("bytes"), 4},
                                   {QStringLiteral("offset"), 2},
                                   {QStringLiteral("data"), QByteArray(8, 'x')}});
        const Result<QVariantMap> refused = worker.localize(body);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.contains(QLatin1String("out of range")), qPrintable(refused.error().message));
        // And a frame for a buffer this run lacks is refused by the engine.
        const Status stray = engine.receive(QVariantMap{{QStringLiteral("key"), quint64(12345)},
                                                        {QStringLiteral("bytes"), 4},
                                                        {QStringLiteral("offset"), 0},
                                                        {QStringLiteral("data"), QByteArray(4, 'x')}});
        QVERIFY(!stray.ok());
    }

    // kpg devices on the target answers what the remote says, in words naming
    // the target (no driver on a machine without a GPU).
    void devicesOverSsh()
    {
        needSsh();
        const KpTest::Run local = KpTest::run(QStringLiteral("kpg"), {QStringLiteral("devices")});
        const QString target = m_ssh->target(m_worker);
        const KpTest::Run remote = KpTest::run(
            QStringLiteral("kpg"), {QStringLiteral("devices"), QStringLiteral("--target"), target}, sshEnv());
        QCOMPARE(remote.exitCode, local.exitCode);
        if (local.exitCode == 69) {
            QVERIFY2(remote.err.startsWith(QStringLiteral("kpg: ") + target + QStringLiteral(": No NVIDIA driver")),
                     qPrintable(remote.err + m_ssh->log()));
        } else {
            QCOMPARE(remote.out, local.out);
        }
        // KPG_TARGET is the same choice.
        const KpTest::Run byEnv = KpTest::run(QStringLiteral("kpg"), {QStringLiteral("devices")},
                                              sshEnv() << QStringLiteral("KPG_TARGET=") + target);
        QCOMPARE(byEnv.exitCode, remote.exitCode);
        QCOMPARE(byEnv.err, remote.err);
    }

    // A project compiles here (NVRTC) and its run request goes to the target
    // and back: without a GPU there, the answer is the remote's error.
    void compileOnlyRoundTrip()
    {
        needSsh();
        const QString project = sourceDir() + QStringLiteral("/presets/saxpy/saxpy.kpg");
        const QString target = m_ssh->target(m_worker);
        const KpTest::Run r = KpTest::run(QStringLiteral("kpg"),
                                          {QStringLiteral("run"), project, QStringLiteral("--target=") + target,
                                           QStringLiteral("--json"), QStringLiteral("-")},
                                          sshEnv());
        const QJsonObject json = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QVERIFY2(json.value(QStringLiteral("compile")).toObject().value(QStringLiteral("ok")).toBool(),
                 qPrintable(r.out + r.err));
        const KpTest::Run local = KpTest::run(QStringLiteral("kpg"), {QStringLiteral("run"), project});
        QCOMPARE(r.exitCode, local.exitCode);
        if (local.exitCode == 69) {
            const QJsonObject error = json.value(QStringLiteral("error")).toObject();
            QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("no-driver"));
            QVERIFY2(error.value(QStringLiteral("message")).toString().startsWith(target + QStringLiteral(": ")),
                     qPrintable(r.out));
        }
    }

    // Buffers through a real connection: sent with the first request, not
    // again while unchanged, again once changed; a fresh connection starts over.
    void buffersSentOnce()
    {
        needSsh();
        qputenv("KPG_SSH_CONFIG", m_ssh->path(QStringLiteral("ssh_config")).toUtf8());
        Result<SharedMemory> a = SharedMemory::create(3 * 1024 * 1024, QStringLiteral("a"));
        QVERIFY(a.ok());
        std::memset(a.value().data(), 1, size_t(a->size()));
        const QVariantMap body = bodyFor({&a.value()});
        WorkerLaunch launch;
        launch.target = m_ssh->target(m_worker);
        EngineClient engine(launch);
        // prepare: the buffers go first; without a GPU the worker then says so, with the target's name.
        const Reply first = engine.requestSync(Protocol::Type::Prepare, body);
        QCOMPARE(engine.lastUploadBytes(), a->size());
        if (!first) {
            QVERIFY2(first.error().message.startsWith(launch.target), qPrintable(first.error().message));
        }
        (void)engine.requestSync(Protocol::Type::Prepare, body);
        QCOMPARE(engine.lastUploadBytes(), qint64(0));
        static_cast<char *>(a.value().data())[100] = 2;
        (void)engine.requestSync(Protocol::Type::Prepare, body);
        QCOMPARE(engine.lastUploadBytes(), a->size());
        qunsetenv("KPG_SSH_CONFIG");
    }

    // A large upload reports its progress (bytes sent of the total, ending
    // at the total); aborted while it goes, the request ends with one
    // message saying how far it got, and the next request reconnects.
    void transferProgress_data()
    {
        QTest::addColumn<bool>("abort");
        QTest::newRow("sent to the end") << false;
        QTest::newRow("aborted while sending") << true;
    }

    void transferProgress()
    {
        needSsh();
        QFETCH(bool, abort);
        qputenv("KPG_SSH_CONFIG", m_ssh->path(QStringLiteral("ssh_config")).toUtf8());
        const qint64 bytes = 192 * 1024 * 1024;
        Result<SharedMemory> a = SharedMemory::create(bytes, QStringLiteral("a"));
        QVERIFY(a.ok());
        std::memset(a.value().data(), 1, size_t(bytes));
        const QVariantMap body = bodyFor({&a.value()});
        WorkerLaunch launch;
        launch.target = m_ssh->target(m_worker);
        EngineClient engine(launch);
        const Reply first = engine.requestSync(Protocol::Type::Ping);
        QVERIFY2(first.ok(), qPrintable(first ? QString() : first.error().message));
        const qint64 firstPid = first->value(QStringLiteral("pid")).toLongLong();

        QList<std::tuple<qint64, qint64, bool>> reports;
        connect(&engine, &EngineClient::transferProgress, this, [&](qint64 done, qint64 total, bool upload) {
            reports.append({done, total, upload});
            if (abort && reports.size() == 1) {
                engine.abortCurrent(); // at the first report: nothing but its first frames can have gone
            }
        });
        std::optional<Reply> answer;
        engine.request(
            Protocol::Type::Prepare, body, this, [&answer](const Reply &r) { answer = r; }, RequestOptions{120000, {}});
        QTRY_VERIFY_WITH_TIMEOUT(answer.has_value(), 120000);
        QVERIFY(!reports.isEmpty());
        QCOMPARE(std::get<0>(reports.first()), qint64(0));
        qint64 last = -1;
        for (const auto &[done, total, upload] : reports) {
            QCOMPARE(total, bytes);
            QVERIFY(upload);
            QVERIFY(done >= last); // never backwards
            last = done;
        }
        if (!abort) {
            QCOMPARE(std::get<0>(reports.last()), bytes);
            // The worker holds it now: the same request again sends and reports nothing.
            reports.clear();
            (void)engine.requestSync(Protocol::Type::Prepare, body);
            QCOMPARE(engine.lastUploadBytes(), qint64(0));
            QCoreApplication::processEvents();
            QVERIFY(reports.isEmpty());
            qunsetenv("KPG_SSH_CONFIG");
            return;
        }
        QVERIFY(!answer->ok());
        QCOMPARE(answer->error().code, Error::Code::Cancelled);
        const QString message = answer->error().message;
        QVERIFY2(message.startsWith(launch.target + QStringLiteral(": 'prepare' was aborted while sending its "
                                                                   "buffers (")),
                 qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral(" of %1 sent); the connection was closed and the next request "
                                                 "reconnects")
                                      .arg(formatBytes(bytes))),
                 qPrintable(message));
        QVERIFY(std::get<0>(reports.last()) < bytes);
        // As after a dropped connection: a fresh worker, which is sent everything again.
        const Reply again = engine.requestSync(Protocol::Type::Ping);
        QVERIFY2(again.ok(), qPrintable(again ? QString() : again.error().message));
        QVERIFY(again->value(QStringLiteral("pid")).toLongLong() != firstPid);
        (void)engine.requestSync(Protocol::Type::Prepare, body);
        QCOMPARE(engine.lastUploadBytes(), bytes);
        qunsetenv("KPG_SSH_CONFIG");
    }

    // Without NVRTC here (forced: KPG_NVRTC_LIBRARY names no library), an ssh
    // target compiles: kpg-compiler runs there over its own ssh connection,
    // with the same frames; what it gives equals a local compile.
    void remoteCompile_data()
    {
        QTest::addColumn<QString>("target"); // "@ssh": the test's sshd and worker; "@closed": nothing on the port
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("words"); // in the one error line; empty: the PTX equals the local compile's

        QTest::newRow("compiles on the target") << "@ssh" << 0 << "";
        QTest::newRow("local target: NVRTC's own message") << "local" << 69 << "NVRTC not found";
        QTest::newRow("slurm target without a login node: says why not")
            << "slurm:partition=gpu" << 69 << "compiling on the target needs an ssh target or a Slurm login node";
        QTest::newRow("slurm target compiles on its login node") << "@slurm-via-ssh" << 0 << "";
        QTest::newRow("nothing on the port") << "@closed" << 69 << "host unreachable";
        QTest::newRow("no kpg-compiler there")
            << "@missing" << 69
            << "the remote kpg-compiler is missing (it is taken from the folder of the target's "
               "kpg-worker";
    }

    void remoteCompile()
    {
        needSsh();
        QFETCH(QString, target);
        QFETCH(int, exitCode);
        QFETCH(QString, words);
        if (target == QLatin1String("@ssh")) {
            target = m_ssh->target(m_worker);
        } else if (target == QLatin1String("@slurm-via-ssh")) {
            // The test's sshd as the login node; the worker's folder names kpg-compiler there.
            target = QStringLiteral("slurm:via=ssh://127.0.0.1:%1,worker=%2").arg(m_ssh->port()).arg(m_worker);
        } else if (target == QLatin1String("@missing")) {
            target = m_ssh->target(QStringLiteral("/nonexistent/bin/kpg-worker"));
        } else if (target == QLatin1String("@closed")) {
            QTcpServer probe;
            QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
            target = QStringLiteral("ssh://127.0.0.1:%1").arg(probe.serverPort());
        }
        QTemporaryDir dir;
        const QString source = sourceDir() + QStringLiteral("/presets/saxpy/saxpy.cu");
        const QString ptx = dir.filePath(QStringLiteral("remote.ptx"));
        const KpTest::Run r = KpTest::run(QStringLiteral("kpg"),
                                          {QStringLiteral("compile"), source, QStringLiteral("--target"), target,
                                           QStringLiteral("--no-cache"), QStringLiteral("--ptx"), ptx},
                                          sshEnv() << QStringLiteral("KPG_NVRTC_LIBRARY=/nonexistent/libnvrtc.so.13"));
        QVERIFY2(r.exitCode == exitCode, qPrintable(r.err + r.out));
        if (!words.isEmpty()) {
            const QStringList lines = r.err.trimmed().split(QLatin1Char('\n'));
            QVERIFY2(lines.size() == 1 && lines[0].contains(words), qPrintable(r.err));
            if (target.startsWith(QLatin1String("ssh://"))) {
                QVERIFY2(lines[0].startsWith(QStringLiteral("kpg: ") + target + QStringLiteral(": ")),
                         qPrintable(r.err));
            }
            return;
        }
        const QString localPtx = dir.filePath(QStringLiteral("local.ptx"));
        const KpTest::Run local =
            KpTest::run(QStringLiteral("kpg"), {QStringLiteral("compile"), source, QStringLiteral("--no-cache"),
                                                QStringLiteral("--ptx"), localPtx});
        QCOMPARE(local.exitCode, 0);
        // The same words (but the time it took): arch, NVRTC version, diagnostics, kernels and resources.
        QCOMPARE(r.out.section(QLatin1Char('\n'), 1), local.out.section(QLatin1Char('\n'), 1));
        QCOMPARE(r.out.section(QStringLiteral(" in "), 0, 0), local.out.section(QStringLiteral(" in "), 0, 0));
        QFile a(ptx);
        QFile b(localPtx);
        QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
        // Equal but for the .file directives: NVRTC makes the name absolute
        // from its own working folder, the remote home there (the PTX view
        // matches the file by its name, so both map to the source).
        const auto withoutFiles = [](const QByteArray &ptx, QByteArrayList *files) {
            QByteArrayList kept;
            for (const QByteArray &line : ptx.split('\n')) {
                (line.trimmed().startsWith(".file") ? *files : kept) << line;
            }
            return kept.join('\n');
        };
        QByteArrayList remoteFiles;
        QByteArrayList localFiles;
        const QByteArray remotePtx = withoutFiles(a.readAll(), &remoteFiles);
        QVERIFY(remotePtx.contains(".entry"));
        QCOMPARE(remotePtx, withoutFiles(b.readAll(), &localFiles));
        QCOMPARE(remoteFiles.size(), localFiles.size());
        for (const QByteArray &f : remoteFiles) {
            QVERIFY2(f.endsWith("/saxpy.cu\""), f.constData());
        }

        if (!target.startsWith(QLatin1String("ssh://"))) {
            return; // a Slurm worker needs srun, which the tests' login node lacks (tests/slurm covers it)
        }
        // A project round trip: compiled there, run request there (no GPU here: the remote's error).
        const KpTest::Run run =
            KpTest::run(QStringLiteral("kpg"),
                        {QStringLiteral("run"), sourceDir() + QStringLiteral("/presets/saxpy/saxpy.kpg"),
                         QStringLiteral("--target"), target, QStringLiteral("--json"), QStringLiteral("-")},
                        sshEnv() << QStringLiteral("KPG_NVRTC_LIBRARY=/nonexistent/libnvrtc.so.13"));
        const QJsonObject json = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QVERIFY2(json.value(QStringLiteral("compile")).toObject().value(QStringLiteral("ok")).toBool(),
                 qPrintable(run.out + run.err));
    }

    // The project's own headers are not on the server: they travel with the
    // compile, under the names the #include lines give (nested ones too).
    void remoteCompileWithHeaders()
    {
        needSsh();
        QTemporaryDir dir;
        const auto write = [&dir](const QString &name, const QByteArray &text) {
            QDir().mkpath(QFileInfo(dir.filePath(name)).absolutePath());
            QFile f(dir.filePath(name));
            return f.open(QIODevice::WriteOnly) && f.write(text) == text.size();
        };
        QVERIFY(write(QStringLiteral("common/scale.h"), "#pragma once\n#include \"factor.h\"\n"
                                                        "__device__ inline float scale(float x) { return x * "
                                                        "KP_FACTOR; }\n"));
        QVERIFY(write(QStringLiteral("common/factor.h"), "#pragma once\n#define KP_FACTOR 3.0f\n"));
        QVERIFY(write(QStringLiteral("k.cu"), "#include \"common/scale.h\"\n"
                                              "extern \"C\" __global__ void k(float *p) { p[0] = scale(p[0]); }\n"));
        const KpTest::Run r =
            KpTest::run(QStringLiteral("kpg"),
                        {QStringLiteral("compile"), dir.filePath(QStringLiteral("k.cu")), QStringLiteral("--target"),
                         m_ssh->target(m_worker), QStringLiteral("--no-cache"), QStringLiteral("--ptx"),
                         dir.filePath(QStringLiteral("k.ptx"))},
                        sshEnv() << QStringLiteral("KPG_NVRTC_LIBRARY=/nonexistent/libnvrtc.so.13"));
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        QFile ptx(dir.filePath(QStringLiteral("k.ptx")));
        QVERIFY(ptx.open(QIODevice::ReadOnly));
        // 3.0f, multiplied in: the nested header's define reached the remote NVRTC.
        QVERIFY(ptx.readAll().contains("0f40400000"));
    }

    // Setting another target stops the worker; the next request starts one there.
    void switchTarget()
    {
        needSsh();
        qputenv("KPG_SSH_CONFIG", m_ssh->path(QStringLiteral("ssh_config")).toUtf8());
        WorkerLaunch launch;
        launch.target = QStringLiteral("local");
        EngineClient engine(launch);
        const Reply local = engine.requestSync(Protocol::Type::Ping);
        QVERIFY2(local.ok(), qPrintable(local ? QString() : local.error().message));
        const qint64 localPid = engine.workerPid();
        QVERIFY(KpTest::processAlive(localPid));
        const QString target = m_ssh->target(m_worker);
        engine.setTarget(target);
        QCOMPARE(engine.targetName(), target);
        QTRY_VERIFY_WITH_TIMEOUT(!KpTest::processAlive(localPid), 10000); // the local worker ended
        // The remote worker answers; a crash there names the target, so the request did go there.
        const Reply crash = engine.requestSync(Protocol::Type::Crash);
        QVERIFY(!crash.ok());
        QVERIFY2(crash.error().message.startsWith(target + QStringLiteral(": ")), qPrintable(crash.error().message));
        engine.setTarget(QStringLiteral("local"));
        QVERIFY(engine.requestSync(Protocol::Type::Ping).ok());
        QVERIFY(KpTest::processAlive(engine.workerPid()));
        qunsetenv("KPG_SSH_CONFIG");
    }

    void failures_data()
    {
        QTest::addColumn<QString>("worker"); // "" : the built kpg-worker
        QTest::addColumn<QString>("config");
        QTest::addColumn<bool>("closedPort");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QStringList>("words");

        QTest::newRow("wrong port") << ""
                                    << "ssh_config" << true << 69
                                    << QStringList{"host unreachable", "Connection refused"};
        QTest::newRow("wrong key") << ""
                                   << "ssh_config_wrong_key" << false << 69
                                   << QStringList{"authentication refused", "Permission denied (publickey"};
        QTest::newRow("host key not known")
            << ""
            << "ssh_config_unknown_host" << false << 69 << QStringList{"host key of 127.0.0.1", "not trusted"};
        QTest::newRow("missing worker") << "/nonexistent/kpg-worker"
                                        << "ssh_config" << false << 69
                                        << QStringList{"remote kpg-worker is missing at '/nonexistent/kpg-worker'"};
        QTest::newRow("worker not executable")
            << "@notexec"
            << "ssh_config" << false << 69 << QStringList{"remote kpg-worker cannot be executed"};
        QTest::newRow("no ssh program") << ""
                                        << "@nossh" << false << 69 << QStringList{"cannot start /nonexistent/ssh"};
        QTest::newRow("protocol version mismatch")
            << "@version99"
            << "ssh_config" << false << 70
            << QStringList{"kpg-worker speaks protocol version 99", "the engine speaks version 1"};
    }

    // One message each, naming the target, and the exit code of its kind.
    void failures()
    {
        needSsh();
        QFETCH(QString, worker);
        QFETCH(QString, config);
        QFETCH(bool, closedPort);
        QFETCH(int, exitCode);
        QFETCH(QStringList, words);
        if (worker.isEmpty()) {
            worker = m_worker;
        } else if (worker == QLatin1String("@version99")) {
            // A worker of another protocol version, through the worker's test hook.
            worker = m_ssh->path(QStringLiteral("kpg-worker-v99"));
            QFile script(worker);
            QVERIFY(script.open(QIODevice::WriteOnly));
            script.write(
                QStringLiteral("#!/bin/sh\nKPG_WORKER_TEST_HOOKS=1 KPG_WORKER_TEST_PROTOCOL=99 exec '%1' \"$@\"\n")
                    .arg(m_worker)
                    .toUtf8());
            script.close();
            script.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        } else if (worker == QLatin1String("@notexec")) {
            worker = m_ssh->path(QStringLiteral("kpg-worker-not-executable"));
            QFile f(worker);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("#!/bin/sh\n");
            f.close();
            f.setPermissions(QFile::ReadOwner | QFile::WriteOwner);
        }
        QString target = m_ssh->target(worker);
        if (closedPort) {
            QTcpServer probe;
            QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
            const quint16 port = probe.serverPort();
            probe.close(); // nothing listens there now
            target = QStringLiteral("ssh://127.0.0.1:%1%2").arg(port).arg(worker);
        }
        QStringList env = sshEnv(config == QLatin1String("@nossh") ? QStringLiteral("ssh_config") : config);
        if (config == QLatin1String("@nossh")) {
            env << QStringLiteral("KPG_SSH=/nonexistent/ssh");
        }
        const KpTest::Run r =
            KpTest::run(QStringLiteral("kpg"), {QStringLiteral("devices"), QStringLiteral("--target"), target}, env);
        QCOMPARE(r.exitCode, exitCode);
        const QStringList lines = r.err.trimmed().split(QLatin1Char('\n'));
        QVERIFY2(lines.size() == 1, qPrintable(r.err));
        QVERIFY2(lines[0].startsWith(QStringLiteral("kpg: ") + target + QStringLiteral(": ")), qPrintable(r.err));
        for (const QString &w : words) {
            QVERIFY2(r.err.contains(w), qPrintable(QStringLiteral("'%1' not in: %2").arg(w, r.err)));
        }
    }

    // A time-out and a crash behave as locally: the request fails with the
    // same kind of error, naming the target, and the next request gets a
    // fresh worker on a fresh connection.
    void timeoutAndCrash_data()
    {
        QTest::addColumn<QString>("type");
        QTest::addColumn<int>("timeoutMs");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("words");
        QTest::newRow("time-out") << Protocol::Type::Sleep << 1500 << int(Error::Code::Timeout)
                                  << "'sleep' did not finish within 1500 ms";
        QTest::newRow("crash") << Protocol::Type::Crash << 30000 << int(Error::Code::WorkerDied)
                               << "kpg-worker crashed (killed by a signal) while running 'crash'";
    }

    void timeoutAndCrash()
    {
        needSsh();
        QFETCH(QString, type);
        QFETCH(int, timeoutMs);
        QFETCH(int, code);
        QFETCH(QString, words);
        qputenv("KPG_SSH_CONFIG", m_ssh->path(QStringLiteral("ssh_config")).toUtf8());
        WorkerLaunch launch;
        launch.target = m_ssh->target(m_worker);
        EngineClient engine(launch);
        const Reply first = engine.requestSync(Protocol::Type::Ping);
        QVERIFY2(first.ok(), qPrintable(first ? QString() : first.error().message));
        const qint64 firstPid = first->value(QStringLiteral("pid")).toLongLong();
        const Reply r = engine.requestSync(type, {{QStringLiteral("ms"), 60000}}, RequestOptions{timeoutMs, {}});
        QVERIFY(!r.ok());
        QCOMPARE(int(r.error().code), code);
        QVERIFY2(r.error().message.contains(words), qPrintable(r.error().message));
        QVERIFY2(r.error().message.startsWith(launch.target + QStringLiteral(": ")), qPrintable(r.error().message));
        const Reply again = engine.requestSync(Protocol::Type::Ping);
        QVERIFY2(again.ok(), qPrintable(again ? QString() : again.error().message));
        QVERIFY(again->value(QStringLiteral("pid")).toLongLong() != firstPid);
        qunsetenv("KPG_SSH_CONFIG");
    }

    // The connection dies while the worker is busy: the request fails with
    // "connection dropped" naming the target, and the next one reconnects.
    void connectionDropped()
    {
        needSsh();
        qputenv("KPG_SSH_CONFIG", m_ssh->path(QStringLiteral("ssh_config")).toUtf8());
        WorkerLaunch launch;
        launch.target = m_ssh->target(m_worker);
        EngineClient engine(launch);
        QVERIFY(engine.requestSync(Protocol::Type::Ping).ok());
        std::optional<Reply> answer;
        engine.request(
            Protocol::Type::Sleep, {{QStringLiteral("ms"), 60000}}, this, [&answer](const Reply &r) { answer = r; },
            RequestOptions{120000, {}});
        // Once the worker sleeps (the request has reached it), kill the connection's sshd processes.
        const auto workerSleeping = [this] {
            for (const auto &[pid, name] : descendants(m_ssh->pid())) {
                if (name == "kpg-worker" && inSleep(pid)) {
                    return true;
                }
            }
            return false;
        };
        QTRY_VERIFY_WITH_TIMEOUT(workerSleeping(), 30000);
        for (const auto &[pid, name] : descendants(m_ssh->pid())) {
            if (name.startsWith("sshd")) {
                ::kill(pid_t(pid), SIGKILL);
            }
        }
        QTRY_VERIFY_WITH_TIMEOUT(answer.has_value(), 60000);
        QVERIFY(!answer->ok());
        const QString message = answer->error().message;
        QVERIFY2(message.startsWith(launch.target + QStringLiteral(": the connection dropped")), qPrintable(message));
        QVERIFY2(message.contains(QLatin1String("while running 'sleep'; the next request reconnects")),
                 qPrintable(message));
        QCOMPARE(answer->error().code, Error::Code::WorkerDied);
        // The next request reconnects.
        const Reply again = engine.requestSync(Protocol::Type::Ping);
        QVERIFY2(again.ok(), qPrintable(again ? QString() : again.error().message));
        qunsetenv("KPG_SSH_CONFIG");
    }
};

QTEST_GUILESS_MAIN(TestRemote)
#include "tst_remote.moc"
