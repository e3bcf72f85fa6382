// On a machine with an NVIDIA GPU: `kpg sweep` over the block size of vector
// add (one configuration the device cannot run, listed as skipped with the
// reason) and over the tile size of the tiled matrix multiply (template
// argument and block zipped, recompiling per tile), both complete, timed and
// checked.

#include "testutil.h"

#include <QDir>
#include <QFile>
#include <QImage>
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

    void plotsAndCsv()
    {
        // A block-size sweep drawn as PNG and SVG, its table as CSV, and the
        // roofline of the tiled matmul (which gives throughput.flops and .bytes).
        QTemporaryDir dir;
        const QString png = dir.filePath("vector_add.png"), svg = dir.filePath("vector_add.svg"),
                      csv = dir.filePath("vector_add.csv");
        const KpTest::Run r =
            KpTest::run("kpg", {"sweep", QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg"), "--axis",
                                "block.x=32:1024:pow2", "--plot", png, "--csv", csv, "--plot-y", "throughput"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + r.out));
        const QImage img(png);
        QCOMPARE(img.size(), QSize(900, 560));
        QFile c(csv);
        QVERIFY(c.open(QIODevice::ReadOnly));
        const QList<QByteArray> rows = c.readAll().trimmed().split('\n');
        QCOMPARE(rows.size(), 7);
        for (qsizetype i = 1; i < rows.size(); ++i) {
            QVERIFY2(rows[i].contains(",ok,"), rows[i].constData());
        }
        const KpTest::Run s =
            KpTest::run("kpg", {"sweep", QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg"), "--axis",
                                "block.x=64,256", "--plot", svg, "--plot-theme", "dark"});
        QVERIFY2(s.exitCode == 0, qPrintable(s.err));
        QFile sf(svg);
        QVERIFY(sf.open(QIODevice::ReadOnly));
        QVERIFY(sf.readAll().contains("<svg"));

        const QString roof = dir.filePath("roofline.png");
        const KpTest::Run m =
            KpTest::run("kpg", {"sweep", QStringLiteral(KPG_SOURCE_DIR "/presets/matmul_tiled/matmul_tiled.kpg"),
                                "--axis", "template.0=8,16,32", "--axis", "block.x=8,16,32", "--axis",
                                "block.y=8,16,32", "--zip", "--roofline", roof, "--plot", dir.filePath("m.png")});
        QVERIFY2(m.exitCode == 0, qPrintable(m.err));
        QVERIFY(!QImage(roof).isNull());
    }

    void projectAxesAndDevices()
    {
        // The project's own "sweep" axes, when no --axis is given.
        QTemporaryDir dir;
        QFile in(QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg"));
        QVERIFY(in.open(QIODevice::ReadOnly));
        QJsonObject o = QJsonDocument::fromJson(in.readAll()).object();
        o.insert("sweep", QJsonObject{{"axes", QJsonArray{"block.x=128,256"}}});
        for (const QString &f : QDir(QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add")).entryList(QDir::Files)) {
            QFile::copy(QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/") + f, dir.filePath(f));
        }
        const QString project = dir.filePath("swept.kpg");
        QFile out(project);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QJsonDocument(o).toJson());
        out.close();
        QString log;
        const QJsonObject r = sweep({project}, &log);
        QCOMPARE(r.value("points").toArray().size(), 2);
        QVERIFY2(r.value("complete").toBool(), qPrintable(log));
        QCOMPARE(r.value("points").toArray()[0].toObject().value("deviceIndex").toInt() >= 0, true);

        // A GPU that does not exist is refused before anything runs.
        const KpTest::Run bad = KpTest::run("kpg", {"sweep", project, "--device", "99"});
        QCOMPARE(bad.exitCode, 64);
        QVERIFY2(bad.err.contains("--device 99: this machine has"), qPrintable(bad.err));
    }
};

QTEST_MAIN(TestGpuSweep)
#include "tst_gpu_sweep.moc"
