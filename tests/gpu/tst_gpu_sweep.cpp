// On a machine with an NVIDIA GPU: `kpg sweep` over the block size of vector
// add (one configuration the device cannot run, listed as skipped with the
// reason) and over the tile size of the tiled matrix multiply (template
// argument and block zipped, recompiling per tile), both complete, timed and
// checked.

#include "testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

class TestGpuSweep : public QObject
{
    Q_OBJECT

    QJsonObject sweep(const QStringList &args, QString *out)
    {
        const KpTest::Run r = KpTest::run("kpg", QStringList{"sweep"} + args + QStringList{"--json", "-"});
        *out = r.err;
        if (r.exitCode != 0) {
            qWarning("kpg sweep exited %d: %s", r.exitCode, qPrintable(r.err));
        }
        return QJsonDocument::fromJson(r.out.toUtf8()).object();
    }

private Q_SLOTS:
    void initTestCase()
    {
        const KpTest::Run r = KpTest::run("kpg", {"devices"});
        if (r.exitCode == 69) {
            QSKIP(qPrintable(QStringLiteral("no GPU: %1").arg(r.err.trimmed())));
        }
        QCOMPARE(r.exitCode, 0);
    }

    void vectorAddBlockSizes()
    {
        QString log;
        const QJsonObject o = sweep({QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg"), "--axis",
                                     "block.x=32,64,128,256,512,1024,2048"},
                                    &log);
        const QJsonArray points = o.value("points").toArray();
        QCOMPARE(points.size(), 7);
        QVERIFY(o.value("complete").toBool());
        QVERIFY(!o.value("device").toString().isEmpty());
        for (qsizetype i = 0; i < 6; ++i) {
            const QJsonObject p = points[i].toObject();
            QVERIFY2(p.value("status").toString() == QLatin1String("ok"), qPrintable(log));
            QVERIFY(p.value("checksPassed").toBool());
            const QJsonObject t = p.value("timing").toObject();
            QVERIFY(t.value("medianMs").toDouble() > 0);
            QVERIFY(t.value("count").toInt() < 10000);
            QCOMPARE(p.value("steps").toArray().first().toObject().value("block").toObject().value("x").toInt(),
                     32 << i);
        }
        // 2048 threads per block: skipped, with the reason, not failed.
        const QJsonObject big = points[6].toObject();
        QCOMPARE(big.value("status").toString(), QStringLiteral("skipped"));
        QVERIFY2(big.value("reason").toString().contains("2048"), qPrintable(big.value("reason").toString()));
    }

    void tiledMatmulTileSizes()
    {
        QString log;
        const QJsonObject o =
            sweep({QStringLiteral(KPG_SOURCE_DIR "/presets/matmul_tiled/matmul_tiled.kpg"), "--axis",
                   "template.0=8,16,32", "--axis", "block.x=8,16,32", "--axis", "block.y=8,16,32", "--zip"},
                  &log);
        const QJsonArray points = o.value("points").toArray();
        QCOMPARE(points.size(), 3);
        for (const QJsonValue &v : points) {
            const QJsonObject p = v.toObject();
            QVERIFY2(p.value("status").toString() == QLatin1String("ok"), qPrintable(log));
            QVERIFY(p.value("checksPassed").toBool());
            QVERIFY(p.value("timing").toObject().value("medianMs").toDouble() > 0);
            QVERIFY(!p.value("compileCached").toBool()); // each tile is its own compile
        }
        QCOMPARE(points[2].toObject().value("steps").toArray().first().toObject().value("kernel").toString(),
                 QStringLiteral("matmul_tiled<32>"));
    }
};

QTEST_GUILESS_MAIN(TestGpuSweep)
#include "tst_gpu_sweep.moc"
