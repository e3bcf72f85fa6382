// The Target chooser (docs/remote.md): the status bar's menu and the
// Settings > Target dialog over the one Devices owner, offscreen with real
// widgets, a real OpenSSH server on 127.0.0.1 (tests/common/sshserver.h) and
// a port nothing listens on for the failure. The dialog's Test answers what
// `kpg devices --target X` answers; switching the target moves the workers
// and keeps the document, its buffers and the run history.

#include "buffers/sharedmemory.h"
#include "client/engineclient.h"
#include "compile/compiletypes.h"
#include "core/format.h"
#include "editor/codeeditor.h"
#include "guitestutil.h"
#include "run/runrequest.h"
#include "shell/devicestatus.h"
#include "shell/mainwindow.h"
#include "shell/statusbar.h"
#include "shell/targetdialog.h"
#include "sshserver.h"
#include "testutil.h"
#include "workbench/devices.h"
#include "workbench/projectdocument.h"
#include "workbench/runhistory.h"
#include "workbench/workbench.h"
#include "worker/protocol.h"

#include <QCborMap>
#include <QCborValue>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTcpServer>
#include <QToolButton>
#include <QtTest>

#include <cstring>
#include <memory>

using namespace Kp;
using KpTest::waitCompiled;

class TestTargetChooser : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<KpTest::SshServer> m_ssh;
    QString m_startFailure;

    void needSsh()
    {
        if (!m_startFailure.isEmpty()) {
            if (m_startFailure.contains(QLatin1String("not found"))) {
                QSKIP(qPrintable(m_startFailure));
            }
            QFAIL(qPrintable(m_startFailure));
        }
    }

    QString sshTarget() const { return m_ssh->target(KpTest::program(QStringLiteral("kpg-worker"))); }

    // A port on 127.0.0.1 nothing listens on.
    static QString closedPortTarget()
    {
        QTcpServer probe;
        probe.listen(QHostAddress::LocalHost, 0);
        const quint16 port = probe.serverPort();
        probe.close();
        return QStringLiteral("ssh://127.0.0.1:%1").arg(port);
    }

    static QStringList menuTexts(QMenu *menu)
    {
        QStringList out;
        for (QAction *a : menu->actions()) {
            out << (a->isSeparator() ? QStringLiteral("-") : a->text());
        }
        return out;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        // No GPU on purpose, so the suite means the same on every machine
        // (the remote worker, started by sshd, does not see this variable).
        qputenv("KPG_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
        m_ssh = std::make_unique<KpTest::SshServer>();
        m_startFailure = m_ssh->start();
        if (m_startFailure.isEmpty()) {
            qputenv("KPG_SSH_CONFIG", m_ssh->path(QStringLiteral("ssh_config")).toUtf8());
        }
    }

    void cleanupTestCase() { m_ssh.reset(); }

    void init()
    {
        QSettings().clear();
        qunsetenv("KPG_TARGET");
    }

    void recentTargets_data()
    {
        QTest::addColumn<QStringList>("inSettings"); // written as they are, before
        QTest::addColumn<QStringList>("remembered"); // then remembered in this order
        QTest::addColumn<QStringList>("expected");

        QTest::newRow("newest first") << QStringList{} << QStringList{"ssh://a", "ssh://b"}
                                      << QStringList{"ssh://b", "ssh://a"};
        QTest::newRow("the same target once, moved to the front")
            << QStringList{} << QStringList{"ssh://a", "ssh://b", "ssh://a"} << QStringList{"ssh://a", "ssh://b"};
        QTest::newRow("local is not kept")
            << QStringList{} << QStringList{"local", "ssh://a", ""} << QStringList{"ssh://a"};
        QTest::newRow("a wrong target is not kept")
            << QStringList{} << QStringList{"ssh://a:99999", "ssh://a"} << QStringList{"ssh://a"};
        QTest::newRow("at most eight") << QStringList{}
                                       << QStringList{"ssh://h1", "ssh://h2", "ssh://h3", "ssh://h4", "ssh://h5",
                                                      "ssh://h6", "ssh://h7", "ssh://h8", "ssh://h9"}
                                       << QStringList{"ssh://h9", "ssh://h8", "ssh://h7", "ssh://h6",
                                                      "ssh://h5", "ssh://h4", "ssh://h3", "ssh://h2"};
        QTest::newRow("a hand-edited settings file: wrong entries skipped")
            << QStringList{"ssh://-oProxyCommand=x", "slurm:partition=gpu", "tcp://x", "slurm:partition=gpu"}
            << QStringList{} << QStringList{"slurm:partition=gpu"};
    }

    void recentTargets()
    {
        QFETCH(QStringList, inSettings);
        QFETCH(QStringList, remembered);
        QFETCH(QStringList, expected);
        if (!inSettings.isEmpty()) {
            QSettings().setValue(QStringLiteral("targets/recent"), inSettings);
        }
        for (const QString &t : remembered) {
            Devices::rememberTarget(t);
        }
        QCOMPARE(Devices::recentTargets(), expected);
    }

    void deviceLabel_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("host");
        QTest::addColumn<QString>("label");
        QTest::newRow("local") << "local"
                               << ""
                               << "GPU 0: NVIDIA H200";
        QTest::newRow("ssh names the host") << "ssh://ana@lab-gpu-01:2222/opt/kpg/bin/kpg-worker"
                                            << "lab-gpu-01"
                                            << "lab-gpu-01: GPU 0, NVIDIA H200";
        QTest::newRow("slurm names the partition") << "slurm:partition=gpu,gpus=1"
                                                   << "slurm gpu"
                                                   << "slurm gpu: GPU 0, NVIDIA H200";
        QTest::newRow("a wrong target names nothing") << "ssh://lab:0"
                                                      << ""
                                                      << "GPU 0: NVIDIA H200";
    }

    void deviceLabel()
    {
        QFETCH(QString, target);
        QFETCH(QString, host);
        QFETCH(QString, label);
        DeviceInfo d;
        d.ordinal = 0;
        d.name = QStringLiteral("NVIDIA H200");
        QCOMPARE(Devices::hostOf(target), host);
        QCOMPARE(Devices::deviceLabel(host, d), label);
    }

    // Test in the dialog answers what kpg devices --target answers: the
    // GPUs, or its one message.
    void dialogTest_data()
    {
        QTest::addColumn<QString>("target"); // "@ssh": the test's sshd; "@closed": a port nothing listens on
        QTest::addColumn<bool>("asKpg");     // the answer equals kpg devices --target's
        QTest::addColumn<QString>("words");

        QTest::newRow("sshd answers (no driver there)") << "@ssh" << true << "";
        QTest::newRow("nothing on the port") << "@closed" << true << "host unreachable";
        QTest::newRow("this machine") << "local" << true << "";
        QTest::newRow("port out of range")
            << "ssh://lab-gpu-01:99999" << false
            << "target 'ssh://lab-gpu-01:99999': the port '99999' must be a number from 1 to 65535";
        QTest::newRow("host like an option") << "ssh://-oProxyCommand=sh" << false << "may not start with '-'";
    }

    void dialogTest()
    {
        QFETCH(QString, target);
        QFETCH(bool, asKpg);
        QFETCH(QString, words);
        if (target.startsWith(QLatin1Char('@'))) {
            needSsh();
        }
        target = target == QLatin1String("@ssh")      ? sshTarget()
                 : target == QLatin1String("@closed") ? closedPortTarget()
                                                      : target;
        EngineClient engine;
        MainWindow w(&engine);
        TargetDialog dialog(w.workbench().devices(), &w, true);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        QTest::keyClicks(dialog.urlField(), target);
        QSignalSpy tested(&dialog, &TargetDialog::tested);
        QTest::mouseClick(dialog.testButton(), Qt::LeftButton);
        QVERIFY(tested.count() == 1 || tested.wait(90000));
        const QString shown = dialog.resultLabel()->text();
        if (!words.isEmpty()) {
            QVERIFY2(shown.contains(words), qPrintable(shown));
        }
        if (asKpg) {
            const KpTest::Run kpg =
                KpTest::run(QStringLiteral("kpg"), {QStringLiteral("devices"), QStringLiteral("--target"), target});
            if (kpg.exitCode == 0) {
                // The GPUs: each named as kpg names it.
                for (const QString &line : kpg.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts).mid(0, 1)) {
                    QVERIFY2(!line.isEmpty(), qPrintable(kpg.out));
                }
                QVERIFY2(shown.contains(QLatin1String("CUDA ")), qPrintable(shown));
            } else {
                QVERIFY2(kpg.err.startsWith(QLatin1String("kpg: ")), qPrintable(kpg.err));
                const QString message = kpg.err.mid(5).trimmed();
                QCOMPARE(shown.section(QStringLiteral("\n("), 0, 0), message);
                QVERIFY2(shown.contains(QLatin1String("answered in ")), qPrintable(shown));
            }
        }
        // Testing touched nothing of the window: its target is what it was.
        QCOMPARE(w.workbench().devices().target(), QStringLiteral("local"));
        QVERIFY(Devices::recentTargets().isEmpty());
    }

    // Use Target moves the workers (the same EngineClient objects) and keeps
    // the document, its buffers and the run history; the status bar names
    // the host, the tooltip the query's time and the round trip; the menu
    // brings the window back to this machine.
    void switchKeepsTheWork()
    {
        needSsh();
        const QString target = sshTarget();
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/vector_add/vector_add.kpg"));
        QVERIFY(waitCompiled(w));
        Workbench &wb = w.workbench();
        Devices &devices = wb.devices();
        wb.devices().refresh();
        QTRY_VERIFY_WITH_TIMEOUT(devices.known(), 60000);
        RunRecord record;
        record.kernel = QStringLiteral("vectorAdd");
        wb.history().append(record);
        const QString text = w.editor()->text();
        const HostBuffer *a = wb.document().hostBuffers().find(QStringLiteral("a"));
        QVERIFY(a);
        const quint64 memoryId = a->memory.id();
        const QByteArray contents(static_cast<const char *>(a->memory.data()), 4096);
        EngineClient *primary = &devices.primary();

        TargetDialog dialog(devices, &w, true);
        dialog.show();
        QTest::keyClicks(dialog.urlField(), target);
        QSignalSpy changed(&devices, &Devices::changed);
        QTest::mouseClick(dialog.useButton(), Qt::LeftButton);
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        QCOMPARE(devices.target(), target);
        QTRY_VERIFY_WITH_TIMEOUT(devices.known(), 60000);

        auto *label = w.findChild<QLabel *>(QStringLiteral("deviceStatus"));
        auto *button = w.findChild<QToolButton *>(QStringLiteral("targetChooser"));
        QVERIFY(label && button);
        QVERIFY2(label->text().startsWith(QLatin1String("127.0.0.1: ")), qPrintable(label->text()));
        if (devices.answer().ok()) {
            QVERIFY(label->text().contains(devices.list().devices.first().name));
        } else {
            QCOMPARE(label->text(), QStringLiteral("127.0.0.1: No NVIDIA driver found: compile-only mode"));
            QVERIFY2(label->toolTip().contains(target + QStringLiteral(": No NVIDIA driver")),
                     qPrintable(label->toolTip()));
        }
        QCOMPARE(button->text(), QStringLiteral("127.0.0.1"));
        QVERIFY2(label->toolTip().contains(QStringLiteral("Target ") + target), qPrintable(label->toolTip()));
        QVERIFY2(label->toolTip().contains(QLatin1String("Devices query: ")), qPrintable(label->toolTip()));
        QTRY_VERIFY2_WITH_TIMEOUT(label->toolTip().contains(QLatin1String("Round trip to 127.0.0.1: ")),
                                  qPrintable(label->toolTip()), 30000);
        QVERIFY(devices.roundTripMs() > 0 && devices.queryMs() >= devices.roundTripMs());

        // Everything else is as it was.
        QCOMPARE(&devices.primary(), primary);
        QCOMPARE(w.editor()->text(), text);
        QCOMPARE(wb.history().rowCount(), 1);
        const HostBuffer *after = wb.document().hostBuffers().find(QStringLiteral("a"));
        QVERIFY(after);
        QCOMPARE(after->memory.id(), memoryId);
        QCOMPARE(QByteArray(static_cast<const char *>(after->memory.data()), 4096), contents);
        QCOMPARE(qEnvironmentVariable("KPG_TARGET"), target); // workers made elsewhere follow
        QCOMPARE(Devices::recentTargets(), QStringList{target});
        QCOMPARE(QSettings().value(QStringLiteral("targets/current")).toString(), target);

        // The status bar's menu: this machine, the recent target (chosen), Add Target.
        QMenu *menu = button->menu();
        Q_EMIT menu->aboutToShow();
        QCOMPARE(menuTexts(menu), (QStringList{"local (this machine)", target, "-", "Add Target…"}));
        QVERIFY(menu->actions().at(1)->isChecked());
        menu->actions().at(0)->trigger();
        QCOMPARE(devices.target(), QStringLiteral("local"));
        QTRY_VERIFY_WITH_TIMEOUT(devices.known(), 60000);
        QVERIFY2(!label->text().startsWith(QLatin1String("127.0.0.1")), qPrintable(label->text()));
        QCOMPARE(button->text(), QStringLiteral("local"));
        QCOMPARE(qEnvironmentVariable("KPG_TARGET"), QStringLiteral("local"));
        QCOMPARE(wb.history().rowCount(), 1);
    }

    // A target nobody answers on: the status bar says so in one line, the
    // tooltip has the one message, and nothing else changes.
    void unreachableTarget()
    {
        needSsh();
        const QString target = closedPortTarget();
        EngineClient engine;
        MainWindow w(&engine);
        Devices &devices = w.workbench().devices();
        KP_VERIFY_RESULT(devices.setTarget(target));
        QTRY_VERIFY_WITH_TIMEOUT(devices.known(), 60000);
        auto *label = w.findChild<QLabel *>(QStringLiteral("deviceStatus"));
        QCOMPARE(label->text(), target + QStringLiteral(" unavailable: compile-only mode"));
        QVERIFY2(label->toolTip().contains(target + QStringLiteral(": host unreachable")),
                 qPrintable(label->toolTip()));
        QVERIFY(!devices.canRun());
        QVERIFY2(devices.whyNoRun().contains(QLatin1String("host unreachable")), qPrintable(devices.whyNoRun()));
        // A wrong spec changes nothing and says why.
        const Status wrong = devices.setTarget(QStringLiteral("tcp://lab"));
        QVERIFY(!wrong.ok());
        QVERIFY2(wrong.error().message.contains(QLatin1String("expected 'local', ssh://")),
                 qPrintable(wrong.error().message));
        QCOMPARE(devices.target(), target);
    }

    // The program on a machine without NVRTC (forced: KPG_NVRTC_LIBRARY names
    // no library) and an ssh target compiles there by itself: kernel-playground
    // installs remote compiling at start. The compile it shows is in the
    // compile cache, which only a compile that happened fills.
    void programCompilesOnTheTarget()
    {
        needSsh();
        QTemporaryDir work;
        const QString cache = work.filePath(QStringLiteral("cache"));
        const QString shot = work.filePath(QStringLiteral("shot.png"));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("KPG_NVRTC_LIBRARY"), QStringLiteral("/nonexistent/libnvrtc.so.13"));
        env.insert(QStringLiteral("KPG_TARGET"), sshTarget());
        env.insert(QStringLiteral("KPG_CACHE_DIR"), cache);
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), work.filePath(QStringLiteral("config")));
        QProcess p;
        p.setProcessEnvironment(env);
        p.start(KpTest::program(QStringLiteral("kernel-playground")),
                {QStringLiteral("--preset"), QStringLiteral("saxpy"), QStringLiteral("--screenshot"), shot});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        QVERIFY(QFileInfo::exists(shot));
        QList<CompileResult> results;
        for (const QFileInfo &f : QDir(cache).entryInfoList({QStringLiteral("*.cbor")}, QDir::Files)) {
            QFile file(f.filePath());
            QVERIFY(file.open(QIODevice::ReadOnly));
            const QVariantMap m = QCborValue::fromCbor(file.readAll()).toMap().toVariantMap();
            results << CompileResult::fromVariant(m.value(QStringLiteral("result")).toMap());
        }
        QVERIFY2(!results.isEmpty(), qPrintable(QString::fromLocal8Bit(p.readAllStandardError())));
        for (const CompileResult &r : std::as_const(results)) {
            QVERIFY2(r.ok, qPrintable(r.log));
            QVERIFY(!r.ptx.isEmpty());
            QCOMPARE(r.kernels.value(0).name, QStringLiteral("saxpy"));
        }
    }

    // A large upload to a remote worker shows its progress in the status
    // bar, beside Abort, and the bar goes once everything went.
    void transferProgress()
    {
        needSsh();
        EngineClient engine;
        MainWindow w(&engine);
        Devices &devices = w.workbench().devices();
        KP_VERIFY_RESULT(devices.setTarget(sshTarget()));
        QTRY_VERIFY_WITH_TIMEOUT(devices.known(), 60000);
        auto *bar = w.findChild<QProgressBar *>(QStringLiteral("transferProgress"));
        QVERIFY(bar);
        QVERIFY(bar->isHidden());
        const qint64 bytes = 64 * 1024 * 1024;
        Result<SharedMemory> a = SharedMemory::create(bytes, QStringLiteral("a"));
        QVERIFY(a.ok());
        std::memset(a.value().data(), 1, size_t(bytes));
        RunRequest r;
        RunBuffer b;
        b.name = QStringLiteral("a");
        b.path = a->path();
        b.id = a->id();
        b.bytes = a->size();
        r.buffers << b;
        QSignalSpy progress(&devices, &Devices::transferProgress);
        std::optional<Reply> answer;
        devices.primary().request(Protocol::Type::Prepare, r.toPrepareVariant(), this,
                                  [&answer](const Reply &reply) { answer = reply; });
        QVERIFY(progress.wait(60000));
        QCOMPARE(progress.first().at(1).toLongLong(), bytes);
        QCOMPARE(progress.first().at(2).toBool(), true);
        QCOMPARE(bar->format(), QStringLiteral("Sending %1 of %2").arg(formatBytes(0), formatBytes(bytes)));
        QVERIFY(!bar->isHidden());
        QTRY_VERIFY_WITH_TIMEOUT(answer.has_value(), 120000);
        QCOMPARE(progress.last().at(0).toLongLong(), bytes); // the last report is the whole
        QVERIFY(bar->isHidden());
    }
};

QTEST_MAIN(TestTargetChooser)
#include "tst_targetchooser.moc"
