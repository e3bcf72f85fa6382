// kpg as a user runs it: exit codes, messages and JSON.

#include "testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

class TestCli : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void exitCodes_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("stdoutHas");
        QTest::addColumn<QString>("stderrHas");
        QTest::newRow("version") << QStringList{"--version"} << 0 << "kpg 0."
                                 << "";
        QTest::newRow("help") << QStringList{"--help"} << 0 << "devices [--json]"
                              << "";
        QTest::newRow("help lists exit codes") << QStringList{"-h"} << 0 << "69 no GPU"
                                               << "";
        QTest::newRow("subcommand help") << QStringList{"devices", "--help"} << 0 << "Usage: kpg"
                                         << "";
        QTest::newRow("no command") << QStringList{} << 64 << ""
                                    << "no command given";
        QTest::newRow("unknown command") << QStringList{"frobnicate"} << 64 << ""
                                         << "unknown command 'frobnicate'";
        QTest::newRow("unknown option") << QStringList{"--frob"} << 64 << ""
                                        << "unknown option '--frob'";
        QTest::newRow("devices unknown option") << QStringList{"devices", "--xml"} << 64 << ""
                                                << "devices: unknown option '--xml' (allowed: --json)";
    }
    void exitCodes()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, stdoutHas);
        QFETCH(QString, stderrHas);
        const KpTest::Run r = KpTest::run("kpg", args);
        QCOMPARE(r.status, QProcess::NormalExit);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.out.contains(stdoutHas), qPrintable(r.out));
        QVERIFY2(r.err.contains(stderrHas), qPrintable(r.err));
    }

    void devicesWithoutDriver()
    {
        const KpTest::Run r = KpTest::run("kpg", {"devices"}, {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"});
        QCOMPARE(r.exitCode, 69);
        QVERIFY(r.out.isEmpty());
        // One line that says what is missing.
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY2(r.err.startsWith("kpg: No NVIDIA driver found: /nonexistent/libcuda.so.1 could not be loaded"),
                 qPrintable(r.err));
    }

    void devicesJsonWithoutDriver()
    {
        const KpTest::Run r = KpTest::run("kpg", {"devices", "--json"}, {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"});
        QCOMPARE(r.exitCode, 69);
        QJsonParseError pe;
        const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8(), &pe).object();
        QCOMPARE(pe.error, QJsonParseError::NoError);
        QCOMPARE(doc.value("error").toObject().value("code").toString(), QString("no-driver"));
        QVERIFY(doc.value("devices").toArray().isEmpty());
        QVERIFY(doc.contains("nvrtc"));
    }

    void devicesJsonWithoutNvrtc()
    {
        // NVRTC missing is reported, never fatal for listing devices.
        const KpTest::Run r =
            KpTest::run("kpg", {"devices", "--json"},
                        {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1", "KPG_NVRTC_LIBRARY=/nonexistent/libnvrtc.so"});
        const QJsonObject nvrtc = QJsonDocument::fromJson(r.out.toUtf8()).object().value("nvrtc").toObject();
        QCOMPARE(nvrtc.value("error").toObject().value("code").toString(), QString("no-compiler"));
        QVERIFY(nvrtc.value("error").toObject().value("message").toString().startsWith("NVRTC not found"));
    }

    void devicesWithNvrtcFromToolkit()
    {
        const KpTest::Run r = KpTest::run("kpg", {"devices", "--json"}, {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"});
        const QJsonObject nvrtc = QJsonDocument::fromJson(r.out.toUtf8()).object().value("nvrtc").toObject();
        if (nvrtc.contains("error")) {
            QSKIP("no NVRTC library on this machine");
        }
        QVERIFY(QRegularExpression("^1[2-9]\\.[0-9]+$").match(nvrtc.value("version").toString()).hasMatch());
    }

    void missingWorker()
    {
        const KpTest::Run r = KpTest::run("kpg", {"devices"}, {"KPG_WORKER=/nonexistent/kpg-worker"});
        QCOMPARE(r.exitCode, 69);
        QVERIFY2(r.err.contains("cannot start kpg-worker (/nonexistent/kpg-worker)"), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
