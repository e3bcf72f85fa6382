// Kernel Playground as a desktop program starts it: one version for every
// program (the CMake project's), `kernel-playground FILE.kpg` with a path
// relative to the current folder (what a terminal or a file manager's %f
// passes), a clear message for a missing or broken file, and Help > About with
// the versions of everything it runs on and the licence.

#include "client/engineclient.h"
#include "shell/mainwindow.h"
#include "testutil.h"

#include <QFile>
#include <QProcess>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

using namespace Kp;

namespace {

struct Started
{
    int exitCode = -1;
    QProcess::ExitStatus status = QProcess::CrashExit;
    QString out;
    QString err;
};

/** Runs a program from the build in `dir`, with `set` added to and `unset` removed from the environment. */
Started start(const QString &name, const QStringList &args, const QString &dir, const QStringList &set = {},
              const QStringList &unset = {})
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const QString &kv : set) {
        env.insert(kv.section(QLatin1Char('='), 0, 0), kv.section(QLatin1Char('='), 1));
    }
    for (const QString &k : unset) {
        env.remove(k);
    }
    p.setProcessEnvironment(env);
    p.setWorkingDirectory(dir);
    p.start(KpTest::program(name), args);
    Started r;
    if (!p.waitForFinished(90000)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("timed out");
        return r;
    }
    r.exitCode = p.exitCode();
    r.status = p.exitStatus();
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

bool copyPreset(const QString &name, const QString &to)
{
    for (const QString &ext : {QStringLiteral(".kpg"), QStringLiteral(".cu")}) {
        if (!QFile::copy(QStringLiteral(KPG_SOURCE_DIR "/presets/%1/%1%2").arg(name, ext),
                         to + QLatin1Char('/') + name + ext)) {
            return false;
        }
    }
    return true;
}

} // namespace

class TestDesktop : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Every program says the one version, CMake's project(VERSION), and the
    // GUI does so without a display (as on a server, or in a package's test).
    void everyProgramHasTheProjectVersion_data()
    {
        QTest::addColumn<QString>("program");
        QTest::addColumn<QString>("prefix");
        QTest::newRow("kernel-playground") << "kernel-playground"
                                           << "kernel-playground ";
        QTest::newRow("kpg") << "kpg"
                             << "kpg ";
        QTest::newRow("kpg-worker") << "kpg-worker"
                                    << "kpg-worker ";
        QTest::newRow("kpg-compiler") << "kpg-compiler"
                                      << "kpg-compiler ";
    }
    void everyProgramHasTheProjectVersion()
    {
        QFETCH(QString, program);
        QFETCH(QString, prefix);
        const Started r =
            start(program, {"--version"}, QDir::tempPath(), {}, {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.startsWith(prefix + QStringLiteral(KPG_VERSION) + (program == "kernel-playground" ? "\n" : " ")),
                 qPrintable(r.out + r.err));
        QVERIFY(QStringLiteral(KPG_VERSION).contains(QRegularExpression(R"(^\d+\.\d+\.\d+$)")));
    }

    // A project named relative to the current folder opens, and is
    // remembered by its full path (so "reopen the last project" finds it
    // from anywhere).
    void opensAProjectRelativeToTheCurrentFolder()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(QDir(dir.path()).mkpath("work/config"));
        const QString work = dir.filePath("work");
        QVERIFY(copyPreset("saxpy", work));
        const Started r = start("kernel-playground", {"saxpy.kpg", "--screenshot", "shot.png"}, work,
                                {"QT_QPA_PLATFORM=offscreen", "XDG_CONFIG_HOME=" + work + "/config"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QImage shot(work + "/shot.png");
        QVERIFY2(shot.width() >= 640 && shot.height() >= 400, qPrintable(r.err));
        QSettings settings(work + "/config/KernelPlayground/kernel-playground.conf", QSettings::IniFormat);
        QCOMPARE(settings.value("lastProject").toString(), work + "/saxpy.kpg");
        QCOMPARE(settings.value("recentProjects").toStringList().value(0), work + "/saxpy.kpg");
    }

    // A file that is not there, or not a project, ends with 65 and says
    // which file and what is wrong with it.
    void refusesAMissingOrBrokenFile_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QByteArray>("contents");
        QTest::addColumn<QString>("message");
        QTest::newRow("missing") << "nosuch.kpg" << QByteArray() << "nosuch.kpg: no such file";
        QTest::newRow("not JSON") << "broken.kpg" << QByteArray("{\"version\": 1, \"kernel\": ") << "broken.kpg: ";
        QTest::newRow("a folder") << "folder.kpg" << QByteArray() << "folder.kpg: is a folder, not a project file";
    }
    void refusesAMissingOrBrokenFile()
    {
        QFETCH(QString, file);
        QFETCH(QByteArray, contents);
        QFETCH(QString, message);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        if (!contents.isEmpty()) {
            QFile f(dir.filePath(file));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(contents);
        } else if (file.startsWith("folder")) {
            QVERIFY(QDir(dir.path()).mkdir(file));
        }
        const Started r = start("kernel-playground", {file}, dir.path(), {"QT_QPA_PLATFORM=offscreen"});
        QCOMPARE(r.exitCode, 65);
        // The full path, so the message is clear wherever it is read.
        QVERIFY2(r.err.contains(QRegularExpression("(^|\n)kernel-playground: " +
                                                   QRegularExpression::escape(dir.filePath(message)))),
                 qPrintable(r.err));
        QVERIFY2(r.err.trimmed().size() > QString("kernel-playground: " + dir.filePath(file) + ": ").size() + 5,
                 qPrintable(r.err));
    }

    // Help > About: the version, Qt's, NVRTC's and the driver's (or that
    // there is none), and the licence.
    void aboutNamesVersionsAndLicence()
    {
        EngineClient engine;
        MainWindow w(&engine);
        w.refreshDeviceStatus();
        QTRY_VERIFY_WITH_TIMEOUT(w.deviceStatusKnown(), 30000);
        const QString about = w.aboutText();
        QVERIFY2(about.contains("Kernel Playground " KPG_VERSION), qPrintable(about));
        QVERIFY2(about.contains(QString::fromLatin1(qVersion())), qPrintable(about));
        QVERIFY2(about.contains(QRegularExpression("NVRTC</td><td>\\d+\\.\\d+")), qPrintable(about));
        // A CUDA version where a driver answered, else that none was found.
        QVERIFY2(about.contains(QRegularExpression("CUDA driver</td><td>(\\d+\\.\\d+|none found)<")),
                 qPrintable(about));
        QVERIFY2(about.contains("Licence</td><td>MIT"), qPrintable(about));
        QVERIFY(QFileInfo(KPG_SOURCE_DIR "/LICENSE").isFile());
    }
};

QTEST_MAIN(TestDesktop)
#include "tst_desktop.moc"
