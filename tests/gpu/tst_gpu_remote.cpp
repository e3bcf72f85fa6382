// Every preset through an ssh target (the test's own sshd on 127.0.0.1,
// tests/common/sshserver.h) gives the buffers a local run gives, byte for
// byte: the same kpg run, with --target, as a user of a remote GPU types it
// (docs/remote.md). A buffer that two local runs already disagree on (a float
// reduction by atomics, whose order is the hardware's) is compared by the
// project's own checks instead, which the remote run must pass.

#include "sshserver.h"
#include "testutil.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

namespace {

QString presetsDir()
{
    return QStringLiteral(KPG_SOURCE_DIR "/presets");
}

/** The files a --save-buffers folder holds: name -> contents. */
QHash<QString, QByteArray> savedBuffers(const QString &dir)
{
    QHash<QString, QByteArray> out;
    for (const QString &name : QDir(dir).entryList(QDir::Files)) {
        QFile f(QDir(dir).filePath(name));
        if (f.open(QIODevice::ReadOnly)) {
            out.insert(name, f.readAll());
        }
    }
    return out;
}

} // namespace

class TestGpuRemote : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<KpTest::SshServer> m_ssh;
    QString m_target;

    KpTest::Run kpgRun(const QString &project, const QString &saveTo, bool remote)
    {
        QStringList args{QStringLiteral("run"), project, QStringLiteral("--no-timing"),
                         QStringLiteral("--save-buffers"), saveTo};
        if (remote) {
            args << QStringLiteral("--target") << m_target;
        }
        return KpTest::run(QStringLiteral("kpg"), args, {}, 300000);
    }

private Q_SLOTS:
    void initTestCase()
    {
        const KpTest::Run devices = KpTest::run(QStringLiteral("kpg"), {QStringLiteral("devices")});
        if (devices.exitCode != 0) {
            QSKIP(qPrintable(QStringLiteral("no GPU: %1").arg(devices.err.trimmed())));
        }
        m_ssh = std::make_unique<KpTest::SshServer>();
        const QString failure = m_ssh->start();
        if (!failure.isEmpty()) {
            QSKIP(qPrintable(failure));
        }
        qputenv("KPG_SSH_CONFIG", m_ssh->path(QStringLiteral("ssh_config")).toUtf8());
        m_target = m_ssh->target(KpTest::program(QStringLiteral("kpg-worker")));
        const KpTest::Run remote =
            KpTest::run(QStringLiteral("kpg"), {QStringLiteral("devices"), QStringLiteral("--target"), m_target});
        QVERIFY2(remote.exitCode == 0, qPrintable(remote.err + QStringLiteral("\nsshd: ") + m_ssh->log()));
    }

    void cleanupTestCase() { m_ssh.reset(); }

    void presetsGiveTheLocalBuffers_data()
    {
        QTest::addColumn<QString>("project");
        QDirIterator it(presetsDir(), {QStringLiteral("*.kpg")}, QDir::Files, QDirIterator::Subdirectories);
        QStringList projects;
        while (it.hasNext()) {
            const QString path = it.next();
            if (!path.contains(QLatin1String("/broken/"))) {
                projects << path;
            }
        }
        projects.sort();
        for (const QString &p : projects) {
            QTest::newRow(qPrintable(QFileInfo(p).completeBaseName())) << p;
        }
    }

    void presetsGiveTheLocalBuffers()
    {
        QFETCH(QString, project);
        QTemporaryDir tmp;
        const QString local = tmp.filePath(QStringLiteral("local"));
        const QString remote = tmp.filePath(QStringLiteral("remote"));
        const KpTest::Run l = kpgRun(project, local, false);
        QVERIFY2(l.exitCode == 0, qPrintable(l.err));
        const KpTest::Run r = kpgRun(project, remote, true);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + QStringLiteral("\nsshd: ") + m_ssh->log()));
        const QHash<QString, QByteArray> a = savedBuffers(local);
        const QHash<QString, QByteArray> b = savedBuffers(remote);
        QVERIFY(!a.isEmpty());
        QCOMPARE(QStringList(b.keys()).size(), QStringList(a.keys()).size());
        QStringList differ;
        for (auto it = a.cbegin(); it != a.cend(); ++it) {
            QVERIFY2(b.contains(it.key()), qPrintable(it.key()));
            if (b.value(it.key()) != it.value()) {
                differ << it.key();
            }
        }
        if (differ.isEmpty()) {
            return;
        }
        // Only buffers a second local run also changes may differ; the project's
        // checks, run on the target, must still pass.
        const QString again = tmp.filePath(QStringLiteral("again"));
        QVERIFY2(kpgRun(project, again, false).exitCode == 0, qPrintable(project));
        const QHash<QString, QByteArray> c = savedBuffers(again);
        for (const QString &name : std::as_const(differ)) {
            QVERIFY2(c.value(name) != a.value(name),
                     qPrintable(QStringLiteral("%1 differs through ssh, though two local runs agree on it").arg(name)));
        }
        const KpTest::Run checked =
            KpTest::run(QStringLiteral("kpg"), {QStringLiteral("check"), project, QStringLiteral("--target"), m_target},
                        {}, 300000);
        QVERIFY2(checked.exitCode == 0, qPrintable(checked.out + checked.err));
        qInfo("%s: %s differ from run to run (checks pass on the target)", qPrintable(QFileInfo(project).fileName()),
              qPrintable(differ.join(QStringLiteral(", "))));
    }
};

QTEST_GUILESS_MAIN(TestGpuRemote)
#include "tst_gpu_remote.moc"
