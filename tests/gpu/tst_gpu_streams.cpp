// On a machine with an NVIDIA GPU: the streams presets through `kpg run`
// (docs/streams.md). The chunked copy/compute overlap on 4 streams against
// 1 stream (the ratio is printed, and must be clearly below 1), every
// event-measured step inside the timeline's total, the 4-stream results
// equal to the 1-stream results bit for bit, the trace file, the
// producer/consumer preset's checks, and the graph replay's buffers equal
// to the step-by-step run's.

#include "testutil.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

class TestGpuStreams : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;

    static QString preset(const QString &name) { return QStringLiteral(KPG_SOURCE_DIR "/presets/%1/%1.kpg").arg(name); }

    QJsonObject run(const QString &name, const QStringList &extra = {})
    {
        const QString saveDir = m_dir.filePath(name);
        const KpTest::Run r =
            KpTest::run("kpg", QStringList{"run", preset(name), "--json", "-", "--save-buffers", saveDir} + extra);
        if (r.exitCode != 0) {
            qWarning("kpg run %s exited %d: %s", qPrintable(name), r.exitCode, qPrintable(r.err));
        }
        return QJsonDocument::fromJson(r.out.toUtf8()).object();
    }

    QByteArray saved(const QString &name, const QString &buffer)
    {
        QFile f(m_dir.filePath(name + QLatin1Char('/') + buffer + QStringLiteral(".npy")));
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }

    /** Every span starts at or after the pass's start and ends by its total. */
    static void verifyInsideTotal(const QJsonObject &timeline)
    {
        const double total = timeline.value("totalMs").toDouble();
        QVERIFY(total > 0);
        const QJsonArray spans = timeline.value("spans").toArray();
        QVERIFY(!spans.isEmpty());
        for (const QJsonValue &v : spans) {
            const QJsonObject s = v.toObject();
            const double start = s.value("startMs").toDouble();
            const double end = s.value("endMs").toDouble();
            // Event times have a resolution of about half a microsecond.
            QVERIFY2(start >= -0.001 && end <= total + 0.001 && start <= end,
                     qPrintable(QStringLiteral("%1: %2 to %3 ms, total %4 ms")
                                    .arg(s.value("label").toString())
                                    .arg(start)
                                    .arg(end)
                                    .arg(total)));
        }
    }

private Q_SLOTS:
    void initTestCase()
    {
        const KpTest::Run r = KpTest::run("kpg", {"devices"});
        if (r.exitCode == 69) {
            QSKIP(qPrintable(QStringLiteral("no GPU: %1").arg(r.err.trimmed())));
        }
        QCOMPARE(r.exitCode, 0);
        QVERIFY(m_dir.isValid());
    }

    void overlapFourStreamsAgainstOne()
    {
        const QString trace = m_dir.filePath("overlap_4.json");
        const QJsonObject one = run("overlap_1");
        const QJsonObject four = run("overlap_4", {"--trace", trace});
        QVERIFY(one.value("ok").toBool());
        QVERIFY(four.value("ok").toBool());
        QVERIFY(one.value("checksPassed").toBool());
        QVERIFY(four.value("checksPassed").toBool());
        QVERIFY2(four.value("warnings").toArray().isEmpty(),
                 qPrintable(QJsonDocument(four.value("warnings").toArray()).toJson()));

        const double m1 = one.value("timing").toObject().value("medianMs").toDouble();
        const double m4 = four.value("timing").toObject().value("medianMs").toDouble();
        const QJsonObject t1 = one.value("timeline").toObject();
        const QJsonObject t4 = four.value("timeline").toObject();
        const double ratio = m4 / m1;
        qInfo("overlap: median %.3f ms on 4 streams, %.3f ms on 1 stream: ratio %.3f; timeline total %.3f against "
              "%.3f ms, overlap %.2fx against %.2fx",
              m4, m1, ratio, t4.value("totalMs").toDouble(), t1.value("totalMs").toDouble(),
              t4.value("overlap").toDouble(), t1.value("overlap").toDouble());
        QVERIFY2(ratio < 0.85, qPrintable(QStringLiteral("4 streams take %1 of 1 stream's time").arg(ratio)));
        QCOMPARE(t4.value("streams").toInt(), 4);
        QVERIFY(t4.value("overlap").toDouble() > t1.value("overlap").toDouble());

        verifyInsideTotal(t1);
        verifyInsideTotal(t4);

        // The same answer whatever the streams: bit for bit.
        const QByteArray c1 = saved("overlap_1", "c");
        QVERIFY(c1.size() > 16 * 1024 * 1024);
        QVERIFY(c1 == saved("overlap_4", "c"));

        // The trace: trace-event JSON with a lane per stream and per copy direction.
        QFile f(trace);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject doc = QJsonDocument::fromJson(f.readAll()).object();
        const QJsonArray events = doc.value("traceEvents").toArray();
        QStringList lanes;
        int complete = 0;
        for (const QJsonValue &v : events) {
            const QJsonObject e = v.toObject();
            if (e.value("ph").toString() == QLatin1String("M") && e.value("name").toString() == "thread_name") {
                lanes << e.value("args").toObject().value("name").toString();
            }
            complete += e.value("ph").toString() == QLatin1String("X");
        }
        QVERIFY2(lanes.contains("copy engine HtoD") && lanes.contains("copy engine DtoH") &&
                     lanes.contains("stream pipe.3"),
                 qPrintable(lanes.join(", ")));
        // 16 chunks of 3 steps, the 32 copies a second time on their engine's lane.
        QCOMPARE(complete, 16 * 3 + 32);
    }

    void producerConsumer()
    {
        const QJsonObject o = run("producer_consumer");
        QVERIFY(o.value("ok").toBool());
        QVERIFY(o.value("checksPassed").toBool());
        verifyInsideTotal(o.value("timeline").toObject());
        QCOMPARE(o.value("timeline").toObject().value("streams").toInt(), 2);
    }

    void graphReplay()
    {
        const QJsonObject o = run("graph_replay");
        QVERIFY(o.value("ok").toBool());
        QVERIFY(o.value("checksPassed").toBool());
        const QJsonObject g = o.value("graph").toObject();
        qInfo("graph: %.1f us per replay of 101 steps against %.1f us launched one by one (%d of each)",
              g.value("replayUs").toDouble(), g.value("launchedUs").toDouble(), g.value("replays").toInt());
        QVERIFY(g.value("replayUs").toDouble() > 0);
        QVERIFY(g.value("launchedUs").toDouble() > 0);
        QVERIFY(g.value("compared").toBool());
        QVERIFY2(g.value("differs").toArray().isEmpty(),
                 qPrintable(QJsonDocument(g.value("differs").toArray()).toJson()));
        // The step-by-step run's buffers are the ones saved; a replay left the same bytes (compared above).
        QVERIFY(!saved("graph_replay", "v").isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestGpuStreams)
#include "tst_gpu_streams.moc"
