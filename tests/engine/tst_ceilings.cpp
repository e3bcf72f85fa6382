// Device ceilings (engine/run/ceilings.h) without a GPU: the kernels compile
// with the real NVRTC, the cache file is written, read back and invalidated
// by another card, driver or clock, a corrupt cache is no cache, and
// `kpg devices --ceilings` says why nothing can be measured here.

#include "compile/compiler.h"
#include "run/ceilings.h"
#include "testutil.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace Kp;

namespace {

DeviceInfo h200(const QString &uuid = QStringLiteral("GPU-1234"))
{
    DeviceInfo d;
    d.ordinal = 0;
    d.name = QStringLiteral("NVIDIA H200");
    d.uuid = uuid;
    d.pciBusId = QStringLiteral("0000:19:00.0");
    d.ccMajor = 9;
    d.clockRateKHz = 1980000;
    d.memoryClockRateKHz = 3201000;
    return d;
}

DeviceCeilings measuredOn(const DeviceInfo &d, int driver, double tbps)
{
    DeviceCeilings c;
    c.deviceName = d.name;
    c.uuid = d.uuid;
    c.pciBusId = d.pciBusId;
    c.driverVersion = driver;
    c.clockKHz = d.clockRateKHz;
    c.memoryClockKHz = d.memoryClockRateKHz;
    c.bytesPerSecond = tbps * 1e12;
    c.fp32FlopsPerSecond = 56.3e12;
    c.fp64FlopsPerSecond = 28.9e12;
    c.copyBytes = 512 << 20;
    c.measuredAt = QStringLiteral("2026-12-03T19:00:00Z");
    return c;
}

} // namespace

class TestCeilings : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void sourceCompiles()
    {
        Compiler compiler;
        CompileRequest req;
        req.source = ceilingsSource();
        req.fileName = QStringLiteral("kpg_ceilings.cu");
        req.deviceCcMajor = 9;
        req.deviceCcMinor = 0;
        const Result<CompileResult> r = compiler.compile(req);
        QVERIFY2(r, r ? "" : qPrintable(r.error().message));
        QVERIFY2(r->ok, qPrintable(r->log));
        QStringList names;
        for (const KernelInfo &k : r->kernels) {
            names << k.loweredName;
        }
        for (const char *k : {"kpg_ceiling_copy", "kpg_ceiling_fma32", "kpg_ceiling_fma64"}) {
            QVERIFY2(names.contains(QLatin1String(k)), qPrintable(names.join(", ")));
        }
        // The FMA chains are real FMAs in the PTX, not folded away.
        QVERIFY(r->ptx.contains("fma.rn.f32"));
        QVERIFY(r->ptx.contains("fma.rn.f64"));
        QVERIFY(r->ptx.contains("ld.global.nc.v4.f32") || r->ptx.contains("ld.global.v4.f32"));
    }

    void requestRoundTrip()
    {
        CeilingsRequest r;
        r.device = 3;
        r.image = QByteArray("\x7f"
                             "ELF...",
                             8);
        r.copyBytes = 123456789;
        r.fmaIterations = 77;
        r.rounds = 4;
        const CeilingsRequest back = CeilingsRequest::fromVariant(r.toVariant());
        QCOMPARE(back.device, 3);
        QCOMPARE(back.image, r.image);
        QCOMPARE(back.copyBytes, qint64(123456789));
        QCOMPARE(back.fmaIterations, 77);
        QCOMPARE(back.rounds, 4);
    }

    void cacheWriteRead()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("sub/ceilings.json"));
        const DeviceInfo d = h200();
        QVERIFY(!readCachedCeilings(path, d, 13000));
        QVERIFY(storeCeilings(path, measuredOn(d, 13000, 3.9)));
        const std::optional<DeviceCeilings> c = readCachedCeilings(path, d, 13000);
        QVERIFY(c);
        QCOMPARE(c->bytesPerSecond, 3.9e12);
        QCOMPARE(c->fp32FlopsPerSecond, 56.3e12);
        QCOMPARE(c->fp64FlopsPerSecond, 28.9e12);
        QCOMPARE(c->measuredAt, QStringLiteral("2026-12-03T19:00:00Z"));
        QVERIFY(qAbs(c->ridgeFp32() - 56.3 / 3.9) < 1e-9);

        // A second card is added beside the first, and both are found.
        const DeviceInfo other = h200(QStringLiteral("GPU-5678"));
        QVERIFY(storeCeilings(path, measuredOn(other, 13000, 3.7)));
        QCOMPARE(readCachedCeilings(path, d, 13000)->bytesPerSecond, 3.9e12);
        QCOMPARE(readCachedCeilings(path, other, 13000)->bytesPerSecond, 3.7e12);
        const QJsonObject doc = QJsonDocument::fromJson([&] {
                                    QFile f(path);
                                    f.open(QIODevice::ReadOnly);
                                    return f.readAll();
                                }())
                                    .object();
        QCOMPARE(doc.value("version").toInt(), 1);
        QCOMPARE(doc.value("devices").toArray().size(), 2);
    }

    void invalidation()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("ceilings.json"));
        const DeviceInfo d = h200();
        QVERIFY(storeCeilings(path, measuredOn(d, 13000, 3.9)));
        // Another driver, another card, another clock: not this measurement.
        QVERIFY(!readCachedCeilings(path, d, 13010));
        QVERIFY(!readCachedCeilings(path, h200(QStringLiteral("GPU-9999")), 13000));
        DeviceInfo slower = d;
        slower.clockRateKHz = 1500000;
        QVERIFY(!readCachedCeilings(path, slower, 13000));
        DeviceInfo otherBus = d;
        otherBus.pciBusId = QStringLiteral("0000:3b:00.0");
        QVERIFY(!readCachedCeilings(path, otherBus, 13000));
        // A clock the worker could not read does not make the entry stale.
        DeviceInfo unknownClock = d;
        unknownClock.clockRateKHz = 0;
        QVERIFY(readCachedCeilings(path, unknownClock, 13000));

        // After a driver update the new figures replace the card's old ones.
        QVERIFY(storeCeilings(path, measuredOn(d, 13010, 3.8)));
        QVERIFY(!readCachedCeilings(path, d, 13000));
        QCOMPARE(readCachedCeilings(path, d, 13010)->bytesPerSecond, 3.8e12);
    }

    void corruptCacheIsNoCache()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("ceilings.json"));
        const DeviceInfo d = h200();
        for (const QByteArray &bad :
             {QByteArray("not json"), QByteArray("{\"version\": 99, \"devices\": []}"),
              QByteArray("{\"version\": 1, \"devices\": [{\"device\": \"NVIDIA H200\"}]}"),
              QByteArray("{\"version\": 1, \"devices\": [{\"device\": \"NVIDIA H200\", \"uuid\": \"GPU-1234\", "
                         "\"pciBusId\": \"0000:19:00.0\", \"driverVersion\": 13000, \"bytesPerSecond\": -1, "
                         "\"fp32FlopsPerSecond\": 1, \"fp64FlopsPerSecond\": 1}]}")}) {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write(bad);
            f.close();
            QVERIFY2(!readCachedCeilings(path, d, 13000), bad.constData());
        }
        // A store over a corrupt file writes a good one.
        QVERIFY(storeCeilings(path, measuredOn(d, 13000, 3.9)));
        QVERIFY(readCachedCeilings(path, d, 13000));
        // A directory where the file should be is no cache, and a store says so.
        const QString folder = dir.filePath(QStringLiteral("asdir"));
        QVERIFY(QDir().mkpath(folder));
        QVERIFY(!readCachedCeilings(folder, d, 13000));
        const Status s = storeCeilings(folder, measuredOn(d, 13000, 3.9));
        QVERIFY(!s);
        QVERIFY2(s.error().message.contains(folder) && s.error().message.contains(QLatin1String("folder")),
                 qPrintable(s.error().message));
    }

    void cacheFolderFollowsTheCompileCache()
    {
        QCOMPARE(ceilingsCachePath(), QDir(Compiler::defaultCacheDir()).filePath(QStringLiteral("ceilings.json")));
        QVERIFY(ceilingsCachePath().startsWith(qEnvironmentVariable("KPG_CACHE_DIR")));
    }

    void cliWithoutGpu()
    {
        // Here there is no driver (CI); on a GPU machine tst_gpu_ceilings covers the command.
        const KpTest::Run probe = KpTest::run(QStringLiteral("kpg"), {QStringLiteral("devices")});
        if (probe.exitCode == 0) {
            QSKIP("a GPU is present; tst_gpu_ceilings measures");
        }
        const KpTest::Run r =
            KpTest::run(QStringLiteral("kpg"), {QStringLiteral("devices"), QStringLiteral("--ceilings")});
        QCOMPARE(r.exitCode, 69);
        QVERIFY2(r.err.contains(QLatin1String("kpg: ")), qPrintable(r.err));
        const KpTest::Run bad =
            KpTest::run(QStringLiteral("kpg"), {QStringLiteral("devices"), QStringLiteral("--ceiling")});
        QCOMPARE(bad.exitCode, 64);
        QVERIFY2(bad.err.contains(QLatin1String("--ceilings")), qPrintable(bad.err));
    }
};

QTEST_GUILESS_MAIN(TestCeilings)
#include "tst_ceilings.moc"
