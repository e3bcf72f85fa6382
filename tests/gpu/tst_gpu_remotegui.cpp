// On a machine with an NVIDIA GPU: the window switched to an ssh target (the
// test's own sshd on 127.0.0.1, tests/common/sshserver.h) runs vector add on
// the GPU behind it, names the host in the device line, shows the upload's
// progress and gives the same result as a local run; back on this machine,
// the project and the history are still there.

#include "client/engineclient.h"
#include "cuda/deviceinfo.h"
#include "gpurun.h"
#include "shell/mainwindow.h"
#include "sshserver.h"
#include "testutil.h"
#include "workbench/devices.h"
#include "workbench/projectdocument.h"
#include "workbench/runhistory.h"
#include "workbench/workbench.h"

#include <QLabel>
#include <QSignalSpy>
#include <QtTest>

#include <cstring>
#include <memory>

using namespace Kp;

class TestGpuRemoteGui : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<KpTest::SshServer> m_ssh;

    static QByteArray runVectorAdd(MainWindow &w, RunResult &result)
    {
        QSignalSpy done(&w, &MainWindow::runFinished);
        w.runNow();
        if (!done.wait(120000)) {
            return {};
        }
        result = w.runs().last();
        const HostBuffer *c = w.hostBuffers().find(QStringLiteral("c"));
        return c ? QByteArray(static_cast<const char *>(c->memory.data()), qsizetype(c->memory.size())) : QByteArray();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        if (const std::optional<QString> why = KpTest::noGpu()) {
            QSKIP(qPrintable(*why));
        }
        m_ssh = std::make_unique<KpTest::SshServer>();
        const QString failure = m_ssh->start();
        if (!failure.isEmpty()) {
            QSKIP(qPrintable(failure));
        }
        qputenv("KPG_SSH_CONFIG", m_ssh->path(QStringLiteral("ssh_config")).toUtf8());
    }

    void cleanupTestCase() { m_ssh.reset(); }

    void vectorAddOverSsh()
    {
        EngineClient engine;
        MainWindow w(&engine);
        w.show();
        Devices &devices = w.workbench().devices();
        devices.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(devices.known(), 60000);
        QVERIFY(devices.canRun());
        const QString gpu = devices.list().devices.first().name;
        QSignalSpy compiled(&w, &MainWindow::compileFinished);
        KP_VERIFY_RESULT(w.openProject(QStringLiteral(":/presets/vector_add/vector_add.kpg")));
        QVERIFY(compiled.wait(30000));
        RunResult local;
        const QByteArray localC = runVectorAdd(w, local);
        QVERIFY2(!local.error && !localC.isEmpty(), qPrintable(local.error ? local.error->message : QString()));

        const QString target = m_ssh->target(KpTest::program(QStringLiteral("kpg-worker")));
        KP_VERIFY_RESULT(devices.setTarget(target));
        QTRY_VERIFY_WITH_TIMEOUT(devices.known(), 60000);
        QVERIFY2(devices.canRun(), qPrintable(devices.whyNoRun()));
        auto *label = w.findChild<QLabel *>(QStringLiteral("deviceStatus"));
        QVERIFY2(label->text().startsWith(QStringLiteral("127.0.0.1: ") + gpu), qPrintable(label->text()));
        QCOMPARE(devices.deviceLabel(devices.list().devices.first()), QStringLiteral("127.0.0.1: GPU 0, ") + gpu);

        // The inputs go once, with progress to their end; the result is the local run's.
        QSignalSpy progress(&devices, &Devices::transferProgress);
        std::memset(w.hostBuffers().find(QStringLiteral("c"))->memory.data(), 0, localC.size());
        RunResult remote;
        const QByteArray remoteC = runVectorAdd(w, remote);
        QVERIFY2(!remote.error, qPrintable(remote.error ? remote.error->message : QString()));
        QCOMPARE(remoteC, localC);
        bool uploadEnded = false;
        for (const QList<QVariant> &p : std::as_const(progress)) {
            uploadEnded = uploadEnded || (p.at(2).toBool() && p.at(0).toLongLong() == p.at(1).toLongLong());
        }
        QVERIFY(uploadEnded);
        QTRY_COMPARE_WITH_TIMEOUT(w.workbench().history().rowCount(), 2, 10000);

        KP_VERIFY_RESULT(devices.setTarget(QStringLiteral("local")));
        QTRY_VERIFY_WITH_TIMEOUT(devices.known(), 60000);
        QVERIFY(devices.canRun());
        QCOMPARE(w.workbench().history().rowCount(), 2);
    }
};

QTEST_MAIN(TestGpuRemoteGui)
#include "tst_gpu_remotegui.moc"
