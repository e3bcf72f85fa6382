// On a machine with an NVIDIA GPU: the worker lists it with its real compute
// capability and memory, checked against nvidia-smi when that is installed.

#include "client/engineclient.h"
#include "cuda/deviceinfo.h"
#include "testutil.h"
#include "worker/protocol.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>
#include <QtTest>

using namespace Kp;

class TestGpuDevices : public QObject
{
    Q_OBJECT

private:
    DeviceList m_list;

private Q_SLOTS:
    void initTestCase()
    {
        EngineClient client;
        const Reply r = client.requestSync(Protocol::Type::ListDevices);
        if (!r) {
            if (r.error().code == Error::Code::NoDriver || r.error().code == Error::Code::NoDevice) {
                QSKIP(qPrintable(QStringLiteral("no GPU: %1").arg(r.error().message)));
            }
            QFAIL(qPrintable(r.error().toString()));
        }
        m_list = DeviceList::fromVariant(r.value());
    }

    void devicesArePlausible()
    {
        QVERIFY(!m_list.devices.isEmpty());
        QVERIFY2(m_list.driverVersion >= 12000, qPrintable(QString::number(m_list.driverVersion)));
        for (const DeviceInfo &d : m_list.devices) {
            QVERIFY(!d.name.isEmpty());
            QVERIFY2(d.ccMajor >= 5 && d.ccMajor <= 20, qPrintable(d.computeCapability()));
            QVERIFY(d.smCount > 0);
            QVERIFY(d.totalMemoryBytes > qint64(1) << 30);
            QCOMPARE(d.warpSize, 32);
            QVERIFY(d.maxThreadsPerBlock >= 1024);
            QVERIFY(d.uuid.startsWith("GPU-"));
            QVERIFY(!d.pciBusId.isEmpty());
        }
    }

    void matchesNvidiaSmi()
    {
        const QString smi = QStandardPaths::findExecutable("nvidia-smi");
        if (smi.isEmpty()) {
            QSKIP("nvidia-smi is not installed; nothing to compare with");
        }
        QProcess p;
        p.start(smi, {"--query-gpu=uuid,name,compute_cap,memory.total", "--format=csv,noheader,nounits"});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        const QStringList lines = QString::fromUtf8(p.readAllStandardOutput()).trimmed().split('\n');
        // CUDA_VISIBLE_DEVICES may hide some; every device we list must be one nvidia-smi lists.
        QVERIFY(lines.size() >= m_list.devices.size());
        for (const DeviceInfo &d : m_list.devices) {
            bool found = false;
            for (const QString &line : lines) {
                const QStringList f = line.split(',');
                if (f.size() < 4 || f[0].trimmed() != d.uuid) {
                    continue;
                }
                found = true;
                QCOMPARE(f[1].trimmed(), d.name);
                QCOMPARE(f[2].trimmed(), d.computeCapability());
                const double smiMiB = f[3].trimmed().toDouble();
                const double ourMiB = double(d.totalMemoryBytes) / (1024.0 * 1024.0);
                QVERIFY2(qAbs(smiMiB - ourMiB) / smiMiB < 0.02,
                         qPrintable(QString("nvidia-smi %1 MiB, driver %2 MiB").arg(smiMiB).arg(ourMiB)));
            }
            QVERIFY2(found, qPrintable("nvidia-smi does not list " + d.uuid));
        }
    }

    void kpgDevicesJson()
    {
        const KpTest::Run r = KpTest::run("kpg", {"devices", "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const QJsonArray devices = doc.value("devices").toArray();
        QCOMPARE(devices.size(), m_list.devices.size());
        for (int i = 0; i < devices.size(); ++i) {
            const QJsonObject o = devices[i].toObject();
            QCOMPARE(o.value("name").toString(), m_list.devices[i].name);
            QCOMPARE(o.value("computeCapability").toString(), m_list.devices[i].computeCapability());
            QCOMPARE(o.value("smCount").toInt(), m_list.devices[i].smCount);
            QCOMPARE(qint64(o.value("totalMemoryBytes").toDouble()), m_list.devices[i].totalMemoryBytes);
        }
        QVERIFY(doc.value("driver").toObject().value("version").toInt() >= 12000);
    }

    void compileAutoArchIsTheDevice()
    {
        // "auto" compiles for the GPU's own architecture (when NVRTC knows it).
        const KpTest::Run r =
            KpTest::run("kpg", {"compile", KPG_SOURCE_DIR "/presets/vector_add/vector_add.cu", "--json", "--no-cache"});
        if (r.exitCode == 65) {
            QSKIP("the preset source is not at its build-time path on this machine");
        }
        QCOMPARE(r.exitCode, 0);
        const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const QString want = m_list.devices.first().arch();
        if (doc.contains("note")) {
            QVERIFY2(doc.value("note").toString().contains(want), qPrintable(doc.value("note").toString()));
        } else {
            QCOMPARE(doc.value("arch").toString(), want);
        }
        QCOMPARE(doc.value("kernels").toArray().first().toObject().value("loweredName").toString(),
                 QString("vectorAdd"));
    }
};

QTEST_GUILESS_MAIN(TestGpuDevices)
#include "tst_gpu_devices.moc"
