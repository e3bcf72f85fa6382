// On a machine with an NVIDIA GPU: the device ceilings (engine/run/ceilings.h)
// are measured by the worker, cached, read back from the cache, and printed
// by `kpg devices --ceilings`. On an H200 they must lie within 15 % of what
// was measured there before (copy 3.85 TB/s, FP32 FMA 56 TFLOP/s); on H100
// and H200 FP64 must be about half of FP32. Elsewhere the figures are printed.

#include "client/engineclient.h"
#include "run/ceilings.h"
#include "testutil.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace Kp;

class TestGpuCeilings : public QObject
{
    Q_OBJECT

private:
    DeviceList m_list;

private Q_SLOTS:
    void initTestCase()
    {
        EngineClient client;
        const Result<DeviceList> r = client.listDevicesSync();
        if (!r) {
            if (r.error().code == Error::Code::NoDriver || r.error().code == Error::Code::NoDevice) {
                QSKIP(qPrintable(QStringLiteral("no GPU: %1").arg(r.error().message)));
            }
            QFAIL(qPrintable(r.error().toString()));
        }
        m_list = *r;
        QFile::remove(ceilingsCachePath());
    }

    void measureThenCache()
    {
        EngineClient engine;
        const DeviceInfo &d = m_list.devices.first();
        bool fromCache = true;
        const Result<DeviceCeilings> c = deviceCeilings(engine, d, m_list.driverVersion, false, &fromCache);
        QVERIFY2(c, c ? "" : qPrintable(c.error().toString()));
        QVERIFY(!fromCache);
        qInfo("%s: copy %.3f TB/s (%lld MiB buffers), FP32 %.2f TFLOP/s, FP64 %.2f TFLOP/s, ridge %.1f FLOP/byte",
              qPrintable(d.name), c->bytesPerSecond / 1e12, c->copyBytes >> 20, c->fp32FlopsPerSecond / 1e12,
              c->fp64FlopsPerSecond / 1e12, c->ridgeFp32());
        QVERIFY(c->valid());
        const bool h200 = d.name.contains(QLatin1String("H200"));
        const bool h100 = d.name.contains(QLatin1String("H100"));
        if (h200) {
            QVERIFY2(qAbs(c->bytesPerSecond / 3.85e12 - 1) <= 0.15, "copy bandwidth off by more than 15 %");
        }
        if (d.ccMajor == 9 && d.ccMinor == 0 && d.clockRateKHz > 0) {
            // Hopper: 128 FP32 FMA lanes per SM, two FLOP each, at the SM clock the
            // driver reports (the H200 SXM's 132 SMs at 1.98 GHz: 66.9 TFLOP/s).
            const double peak = double(d.smCount) * 128 * 2 * d.clockRateKHz * 1e3;
            const double ratio = c->fp32FlopsPerSecond / peak;
            QVERIFY2(ratio > 0.8 && ratio < 1.02,
                     qPrintable(QStringLiteral("FP32 FMA rate %1 of the peak %2 TFLOP/s").arg(ratio).arg(peak / 1e12)));
        }
        if (h200 || h100) {
            const double ratio = c->fp64FlopsPerSecond / c->fp32FlopsPerSecond;
            QVERIFY2(qAbs(ratio / 0.5 - 1) <= 0.15, qPrintable(QStringLiteral("FP64/FP32 = %1").arg(ratio)));
        }

        // The second ask is the cache's answer, with the same figures.
        const Result<DeviceCeilings> again = deviceCeilings(engine, d, m_list.driverVersion, false, &fromCache);
        QVERIFY(again);
        QVERIFY(fromCache);
        QCOMPARE(again->bytesPerSecond, c->bytesPerSecond);
        QCOMPARE(again->measuredAt, c->measuredAt);
    }

    void cli()
    {
        const KpTest::Run r =
            KpTest::run(QStringLiteral("kpg"), {QStringLiteral("devices"), QStringLiteral("--ceilings")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QLatin1String("ceilings: copy")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QLatin1String("(cached")), qPrintable(r.out));

        const KpTest::Run j = KpTest::run(QStringLiteral("kpg"), {QStringLiteral("devices"), QStringLiteral("--json")});
        QVERIFY2(j.exitCode == 0, qPrintable(j.err));
        const QJsonObject dev =
            QJsonDocument::fromJson(j.out.toUtf8()).object().value("devices").toArray().first().toObject();
        const QJsonObject c = dev.value("ceilings").toObject();
        QVERIFY2(c.value("bytesPerSecond").toDouble() > 1e11, qPrintable(j.out));
        QVERIFY(c.value("fp32FlopsPerSecond").toDouble() > 1e12);

        const KpTest::Run m =
            KpTest::run(QStringLiteral("kpg"), {QStringLiteral("devices"), QStringLiteral("--remeasure")});
        QVERIFY2(m.exitCode == 0, qPrintable(m.err));
        QVERIFY2(m.out.contains(QLatin1String("(measured now)")), qPrintable(m.out));
        qInfo("%s", qPrintable(m.out));
    }
};

QTEST_GUILESS_MAIN(TestGpuCeilings)
#include "tst_gpu_ceilings.moc"
