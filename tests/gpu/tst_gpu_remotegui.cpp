// On a machine with an NVIDIA GPU: the window switched to an ssh target (the
// test's own sshd on 127.0.0.1, tests/common/sshserver.h) runs vector add on
// the GPU behind it, names the host in the device line, shows the upload's
// progress and gives the same result as a local run; back on this machine,
// the project and the history are still there.

#include "client/engineclient.h"
#include "cuda/deviceinfo.h"
#include "gpurun.h"
#include "screenshot.h"
#include "shell/mainwindow.h"
#include "sshserver.h"
#include "testutil.h"
#include "workbench/devices.h"
#include "workbench/projectdocument.h"
#include "workbench/runcontroller.h"
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

    /** Runs the open project; the run's result, or an empty array and why in failure. */
    static QByteArray runVectorAdd(MainWindow &w, RunResult &result, QString &failure)
    {
        QSignalSpy done(&w, &MainWindow::runFinished);
        QSignalSpy refused(&w.workbench().runs(), &RunController::failed);
        const qsizetype before = w.runs().size();
        w.runNow();
        if (!done.wait(120000)) {
            failure = QStringLiteral("the run did not finish within 120 s");
            return {};
        }
        // A run refused before it started ends with a message and no result.
        if (w.runs().size() != before + 1) {
            failure = refused.isEmpty() ? QStringLiteral("the run left no result") : refused.first().first().toString();
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
        // The device found above recompiles the window's first document for
        // its arch; that compile may still land after the project is opened,
        // so wait for the project's own kernel rather than the next compile.
        KP_VERIFY_RESULT(w.openProject(QStringLiteral(":/presets/vector_add/vector_add.kpg")));
        QTRY_VERIFY_WITH_TIMEOUT(w.lastCompile().ok && !w.lastCompile().kernels.isEmpty() &&
                                     w.lastCompile().kernels.first().name == QLatin1String("vectorAdd"),
                                 30000);
        RunResult local;
        QString failure;
        const QByteArray localC = runVectorAdd(w, local, failure);
        QVERIFY2(!localC.isEmpty(), qPrintable(failure));
        QVERIFY2(!local.error, qPrintable(local.error ? local.error->message : QString()));

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
        const QByteArray remoteC = runVectorAdd(w, remote, failure);
        QVERIFY2(!remoteC.isEmpty(), qPrintable(failure + QStringLiteral("\nsshd: ") + m_ssh->log()));
        QVERIFY2(!remote.error, qPrintable(remote.error ? remote.error->message : QString()));
        QCOMPARE(remoteC, localC);
        bool uploadEnded = false;
        for (const QList<QVariant> &p : std::as_const(progress)) {
            uploadEnded = uploadEnded || (p.at(2).toBool() && p.at(0).toLongLong() == p.at(1).toLongLong());
        }
        QVERIFY(uploadEnded);
        QTRY_COMPARE_WITH_TIMEOUT(w.workbench().history().rowCount(), 2, 10000);
        // The window on the target: the chooser and the device line in the status bar name the host.
        KpTest::screenshot(&w, QStringLiteral("remote-target"));

        KP_VERIFY_RESULT(devices.setTarget(QStringLiteral("local")));
        QTRY_VERIFY_WITH_TIMEOUT(devices.known(), 60000);
        QVERIFY(devices.canRun());
        QCOMPARE(w.workbench().history().rowCount(), 2);
    }
};

QTEST_MAIN(TestGpuRemoteGui)
#include "tst_gpu_remotegui.moc"
