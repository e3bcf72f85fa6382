// The formatters every program shares (engine/core/format.h): sizes, times,
// rates, the driver's CUDA version and the occupancy line.

#include "core/format.h"
#include "run/runtypes.h"

#include <QtTest>

using namespace Kp;

class TestFormat : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void bytes_data()
    {
        QTest::addColumn<qint64>("bytes");
        QTest::addColumn<QString>("text");
        QTest::newRow("zero") << qint64(0) << "0 B";
        QTest::newRow("bytes") << qint64(512) << "512 B";
        QTest::newRow("just under KiB") << qint64(1023) << "1023 B";
        QTest::newRow("KiB") << qint64(3584) << "3.5 KiB";
        QTest::newRow("MiB") << qint64(12) * 1024 * 1024 << "12.0 MiB";
        QTest::newRow("H200") << qint64(150117924864) << "139.8 GiB";
    }
    void bytes()
    {
        QFETCH(qint64, bytes);
        QFETCH(QString, text);
        QCOMPARE(formatBytes(bytes), text);
    }

    void duration_data()
    {
        QTest::addColumn<double>("ms");
        QTest::addColumn<QString>("text");
        QTest::newRow("nanoseconds") << 0.000512 << "512 ns";
        QTest::newRow("microseconds") << 0.00803 << "8.03 us";
        QTest::newRow("rounds up into us") << 0.0009997 << "1.00 us";
        QTest::newRow("milliseconds") << 1.2 << "1.20 ms";
        QTest::newRow("seconds stay in ms") << 2500.0 << "2500 ms";
    }
    void duration()
    {
        QFETCH(double, ms);
        QFETCH(QString, text);
        QCOMPARE(formatDuration(ms), text);
    }

    void timeUnit_data()
    {
        QTest::addColumn<double>("ms");
        QTest::addColumn<QString>("name");
        QTest::addColumn<double>("perMs");
        QTest::newRow("ns") << 0.0005 << "ns" << 1e6;
        QTest::newRow("us") << 0.5 << "us" << 1e3;
        QTest::newRow("ms") << 5.0 << "ms" << 1.0;
        QTest::newRow("negative uses magnitude") << -0.5 << "us" << 1e3;
    }
    void timeUnit()
    {
        QFETCH(double, ms);
        QFETCH(QString, name);
        QFETCH(double, perMs);
        const TimeUnit u = timeUnitFor(ms);
        QCOMPARE(u.name, name);
        QCOMPARE(u.perMs, perMs);
    }

    void rate_data()
    {
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("unit");
        QTest::addColumn<QString>("text");
        QTest::newRow("TB/s") << 1.57e12 << "B/s"
                              << "1.57 TB/s";
        QTest::newRow("GB/s") << 8.5e11 << "B/s"
                              << "850 GB/s";
        QTest::newRow("GFLOP/s") << 2.5e11 << "FLOP/s"
                                 << "250 GFLOP/s";
        QTest::newRow("no prefix") << 12.0 << "B/s"
                                   << "12.0 B/s";
        QTest::newRow("rounds up into the next prefix") << 999.7e9 << "B/s"
                                                        << "1.00 TB/s";
    }
    void rate()
    {
        QFETCH(double, value);
        QFETCH(QString, unit);
        QFETCH(QString, text);
        QCOMPARE(formatRate(value, unit), text);
    }

    void cudaVersion_data()
    {
        QTest::addColumn<int>("version");
        QTest::addColumn<QString>("text");
        QTest::newRow("13.0") << 13000 << "13.0";
        QTest::newRow("12.4") << 12040 << "12.4";
        QTest::newRow("12.9") << 12090 << "12.9";
        QTest::newRow("none") << 0 << "0.0";
    }
    void cudaVersion()
    {
        QFETCH(int, version);
        QFETCH(QString, text);
        QCOMPARE(cudaVersionString(version), text);
    }

    void occupancy_data()
    {
        QTest::addColumn<double>("ratio");
        QTest::addColumn<int>("blocks");
        QTest::addColumn<int>("active");
        QTest::addColumn<QString>("limiter");
        QTest::addColumn<int>("registers");
        QTest::addColumn<QString>("text");
        QTest::newRow("full") << 1.0 << 8 << 64 << "warps" << 12
                              << "100 % (8 blocks/SM, 64 of 64 warps), limited by warps; 12 registers/thread";
        QTest::newRow("half") << 0.5 << 2 << 32 << "registers" << 128
                              << "50 % (2 blocks/SM, 32 of 64 warps), limited by registers; 128 registers/thread";
    }
    void occupancy()
    {
        QFETCH(double, ratio);
        QFETCH(int, blocks);
        QFETCH(int, active);
        QFETCH(QString, limiter);
        QFETCH(int, registers);
        QFETCH(QString, text);
        Occupancy o;
        o.ratio = ratio;
        o.blocksPerSm = blocks;
        o.activeWarps = active;
        o.maxWarps = 64;
        o.limiter = limiter;
        QCOMPARE(occupancyText(o, registers), text);
    }
};

QTEST_GUILESS_MAIN(TestFormat)
#include "tst_format.moc"
