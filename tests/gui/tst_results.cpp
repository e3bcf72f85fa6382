// The run history and its charts, offscreen: the table's text, CSV and JSON
// exports read back, the charts' data, PNG/SVG exports, and the panel
// switching charts as rows are selected.

#include "client/engineclient.h"
#include "core/format.h"
#include "panels/results/resultspanel.h"
#include "plots/comparechart.h"
#include "plots/timingchart.h"
#include "run/runjson.h"
#include "shell/docks.h"
#include "shell/mainwindow.h"
#include "shell/theme.h"
#include "workbench/runhistory.h"

#include <QAbstractItemModelTester>
#include <QDockWidget>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenu>
#include <QRandomGenerator>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace Kp;

namespace {

/** A run whose samples are mean - d, mean, mean + d: median mean, noise d / mean. */
RunRecord symmetricRun(double medianMs, double noise)
{
    const double d = medianMs * noise;
    RunRecord r;
    r.kernel = QStringLiteral("vectorAdd");
    r.grid = {4096, 1, 1};
    r.block = {256, 1, 1};
    r.defines = QStringList{QStringLiteral("T=float"), QStringLiteral("UNROLL")};
    r.label = QStringLiteral("block=256");
    r.result.device = QStringLiteral("NVIDIA H200 (0)");
    r.result.timed = true;
    r.result.timingMode = QStringLiteral("cold");
    r.result.samplesMs = {medianMs - d, medianMs, medianMs + d};
    r.result.stats = computeStats(r.result.samplesMs);
    r.result.bytes = 12582912;
    r.result.bytesPerSecond = 1.57e12;
    return r;
}

/** Samples as a GPU gives them: a bell around medianMs, a few slow outliers. */
RunRecord realisticRun(qint64 block, double centreMs, int count, quint32 seed)
{
    QRandomGenerator rng(seed);
    RunRecord r;
    r.kernel = QStringLiteral("vectorAdd");
    r.block = {block, 1, 1};
    r.grid = {(1 << 20) / block, 1, 1};
    r.label = QStringLiteral("block=%1").arg(block);
    r.result.device = QStringLiteral("NVIDIA H200 (0)");
    r.result.timed = true;
    r.result.timingMode = QStringLiteral("cold");
    for (int i = 0; i < count; ++i) {
        // The sum of four uniforms is close enough to a normal distribution.
        double u = 0;
        for (int j = 0; j < 4; ++j) {
            u += rng.generateDouble();
        }
        double v = centreMs * (1 + 0.03 * (u - 2) * std::sqrt(3.0));
        if (rng.bounded(40) == 0) {
            v *= 1.12 + 0.1 * rng.generateDouble();
        }
        r.result.samplesMs << v;
    }
    r.result.stats = computeStats(r.result.samplesMs);
    r.result.bytes = 12.0 * (1 << 20);
    r.result.bytesPerSecond = r.result.bytes / (r.result.stats.medianMs / 1000);
    r.result.converged = false;
    r.result.timingNote = QStringLiteral("%1 samples; the noise stayed above the bound").arg(count);
    return r;
}

RunRecord failedRun(qint64 block)
{
    RunRecord r;
    r.kernel = QStringLiteral("vectorAdd");
    r.block = {block, 1, 1};
    r.grid = {(1 << 20) / block, 1, 1};
    r.label = QStringLiteral("block=%1").arg(block);
    r.result.error = Error{QStringLiteral("kpg-worker"), Error::Code::Fault, QStringLiteral("cuLaunchKernel"),
                           QStringLiteral("too many resources requested for launch")};
    r.result.failedStep = 0;
    return r;
}

QString display(const RunHistoryModel &m, int row, int column, int role = Qt::DisplayRole)
{
    return m.data(m.index(row, column), role).toString();
}

} // namespace

class TestResults : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void formatDuration_data()
    {
        QTest::addColumn<double>("ms");
        QTest::addColumn<QString>("text");
        QTest::newRow("microseconds") << 0.00803 << "8.03 us";
        QTest::newRow("nanoseconds") << 0.000512 << "512 ns";
        QTest::newRow("milliseconds") << 1.2 << "1.20 ms";
        QTest::newRow("tens of ms") << 12.345 << "12.3 ms";
        QTest::newRow("hundreds of us") << 0.1234 << "123 us";
        QTest::newRow("rounds up into the next unit") << 0.0009997 << "1.00 us";
        QTest::newRow("seconds stay in ms") << 2500.0 << "2500 ms";
    }
    void formatDuration()
    {
        QFETCH(double, ms);
        QFETCH(QString, text);
        QCOMPARE(Kp::formatDuration(ms), text);
    }

    void formatRate_data()
    {
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("unit");
        QTest::addColumn<QString>("text");
        QTest::newRow("TB/s") << 1.57e12 << "B/s"
                              << "1.57 TB/s";
        QTest::newRow("GB/s") << 8.5e11 << "B/s"
                              << "850 GB/s";
        QTest::newRow("GFLOP/s") << 1.31e11 << "FLOP/s"
                                 << "131 GFLOP/s";
        QTest::newRow("no prefix") << 12.0 << "B/s"
                                   << "12.0 B/s";
    }
    void formatRate()
    {
        QFETCH(double, value);
        QFETCH(QString, unit);
        QFETCH(QString, text);
        QCOMPARE(Kp::formatRate(value, unit), text);
    }

    void compactDim()
    {
        QCOMPARE(compactDim3({4096, 1, 1}), QString("4096"));
        QCOMPARE(compactDim3({16, 16, 1}), QString("16x16"));
        QCOMPARE(compactDim3({8, 1, 4}), QString("8x1x4"));
        QCOMPARE(compactDim3({1, 1, 1}), QString("1"));
    }

    void modelPassesTester()
    {
        RunHistoryModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.append(symmetricRun(0.00803, 0.0351));
        model.append(failedRun(1024));
        model.append(realisticRun(128, 0.008, 200, 1));
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.columnCount(), int(RunHistoryModel::ColumnCount));
        for (int row = 0; row < model.rowCount(); ++row) {
            for (int col = 0; col < model.columnCount(); ++col) {
                for (int role : {int(Qt::DisplayRole), int(Qt::ToolTipRole), int(RunHistoryModel::SortRole)}) {
                    model.data(model.index(row, col), role);
                }
            }
        }
        model.clear();
        QCOMPARE(model.rowCount(), 0);
        // Numbers go on after a clear, so "#3" always means the same run.
        model.append(symmetricRun(0.00803, 0.0351));
        QCOMPARE(model.record(0).number, 4);
    }

    void displayStrings()
    {
        RunHistoryModel model;
        RunRecord both = symmetricRun(0.00803, 0.0351);
        both.result.flopsPerSecond = 1.31e11;
        model.append(symmetricRun(0.00803, 0.0351));
        model.append(failedRun(1024));
        model.append(both);

        QCOMPARE(display(model, 0, RunHistoryModel::NumberColumn), QString("1"));
        QCOMPARE(display(model, 0, RunHistoryModel::KernelColumn), QString("vectorAdd"));
        QCOMPARE(display(model, 0, RunHistoryModel::GridColumn), QString("4096"));
        QCOMPARE(display(model, 0, RunHistoryModel::BlockColumn), QString("256"));
        QCOMPARE(display(model, 0, RunHistoryModel::BlockColumn, Qt::ToolTipRole), QString("(256, 1, 1)"));
        QCOMPARE(display(model, 0, RunHistoryModel::DefinesColumn), QString("T=float UNROLL"));
        QCOMPARE(display(model, 0, RunHistoryModel::MedianColumn), QString("8.03 us"));
        QCOMPARE(display(model, 0, RunHistoryModel::NoiseColumn), QString("3.51 %"));
        QCOMPARE(display(model, 0, RunHistoryModel::ThroughputColumn), QString("1.57 TB/s"));
        QCOMPARE(display(model, 0, RunHistoryModel::SamplesColumn), QString("3"));
        QCOMPARE(display(model, 0, RunHistoryModel::StatusColumn), QString("ok"));
        QVERIFY(display(model, 0, RunHistoryModel::MedianColumn, Qt::ToolTipRole).contains("min 7.75 us"));
        QCOMPARE(display(model, 0, RunHistoryModel::TimeColumn), model.record(0).when.toString("HH:mm:ss"));

        // The failed run stays, with its error.
        QCOMPARE(model.record(1).number, 2);
        QCOMPARE(display(model, 1, RunHistoryModel::StatusColumn), QString("fault"));
        const QString tip = display(model, 1, RunHistoryModel::StatusColumn, Qt::ToolTipRole);
        QVERIFY2(tip.contains("too many resources requested for launch"), qPrintable(tip));
        QVERIFY2(tip.contains("cuLaunchKernel"), qPrintable(tip));
        QCOMPARE(display(model, 1, RunHistoryModel::MedianColumn), QString());
        QCOMPARE(display(model, 1, RunHistoryModel::NoiseColumn), QString());
        QCOMPARE(display(model, 1, RunHistoryModel::SamplesColumn), QString("0"));
        QCOMPARE(display(model, 1, RunHistoryModel::BlockColumn), QString("1024"));

        QCOMPARE(display(model, 2, RunHistoryModel::ThroughputColumn), QString("1.57 TB/s, 131 GFLOP/s"));
        QCOMPARE(model.headerData(RunHistoryModel::MedianColumn, Qt::Horizontal).toString(), QString("Median"));
    }

    void sortsNumbersAsNumbers()
    {
        RunHistoryModel model;
        model.append(symmetricRun(0.0095, 0.01));
        model.append(failedRun(1024));
        model.append(symmetricRun(0.012, 0.01));
        model.append(symmetricRun(0.0008, 0.01));
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(RunHistoryModel::SortRole);
        proxy.sort(RunHistoryModel::MedianColumn, Qt::AscendingOrder);
        QStringList order;
        for (int row = 0; row < proxy.rowCount(); ++row) {
            order << proxy.index(row, RunHistoryModel::NumberColumn).data().toString();
        }
        // 800 ns < 9.50 us < 12.0 us, as times, not as text; the failed run last.
        QCOMPARE(order, QStringList({"4", "1", "3", "2"}));
    }

    void csvExport()
    {
        RunHistoryModel model;
        RunRecord quoted = symmetricRun(0.00803, 0.0351);
        quoted.label = QStringLiteral("tile=16, \"fast\"");
        model.append(symmetricRun(0.00803, 0.0351));
        model.append(failedRun(1024));
        model.append(quoted);
        QTemporaryDir dir;
        const QString path = dir.filePath("runs.csv");
        KP_VERIFY_RESULT(model.exportCsv(path));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 4);
        const QStringList header = lines[0].split(',');
        const auto field = [&](int line, const char *name) {
            return lines[line].split(',').value(header.indexOf(QLatin1String(name)));
        };
        QCOMPARE(header.size(), lines[1].split(',').size());
        QCOMPARE(field(1, "number"), QString("1"));
        QCOMPARE(field(1, "kernel"), QString("vectorAdd"));
        QCOMPARE(field(1, "grid"), QString("4096x1x1"));
        QCOMPARE(field(1, "status"), QString("ok"));
        QCOMPARE(field(1, "defines"), QString("T=float UNROLL"));
        QCOMPARE(field(1, "median_ms").toDouble(), 0.00803);
        QCOMPARE(field(1, "samples"), QString("3"));
        QCOMPARE(field(1, "bytes_per_second").toDouble(), 1.57e12);
        QVERIFY(std::abs(field(1, "noise").toDouble() - 0.0351) < 1e-12);
        QCOMPARE(QDateTime::fromString(field(1, "time"), Qt::ISODateWithMs), model.record(0).when);
        QCOMPARE(field(2, "status"), QString("fault"));
        QCOMPARE(field(2, "error"), QString("too many resources requested for launch"));
        QCOMPARE(field(2, "median_ms"), QString());
        QCOMPARE(field(2, "samples"), QString("0"));
        // A label with a comma and quotes is quoted as RFC 4180 says.
        QVERIFY2(lines[3].contains(R"("tile=16, ""fast""")"), qPrintable(lines[3]));
    }

    void jsonExport()
    {
        RunHistoryModel model;
        const RunRecord run = realisticRun(128, 0.008, 200, 7);
        model.append(run);
        model.append(failedRun(1024));
        QTemporaryDir dir;
        const QString path = dir.filePath("runs.json");
        KP_VERIFY_RESULT(model.exportJson(path));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QJsonParseError err;
        const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &err);
        QCOMPARE(err.error, QJsonParseError::NoError);
        QVERIFY(doc.isArray());
        const QJsonArray runs = doc.array();
        QCOMPARE(runs.size(), 2);
        const QJsonObject first = runs[0].toObject();
        QCOMPARE(first["number"].toInt(), 1);
        QCOMPARE(first["label"].toString(), QString("block=128"));
        QCOMPARE(first["status"].toString(), QString("ok"));
        QCOMPARE(first["block"].toArray(), QJsonArray({128, 1, 1}));
        QCOMPARE(first["stats"].toObject()["medianMs"].toDouble(), run.result.stats.medianMs);
        const QJsonArray samples = first["samplesMs"].toArray();
        QCOMPARE(samples.size(), 200);
        for (int i = 0; i < samples.size(); ++i) {
            QCOMPARE(samples[i].toDouble(), run.result.samplesMs[i]);
        }
        const QJsonObject second = runs[1].toObject();
        QCOMPARE(second["status"].toString(), QString("fault"));
        QCOMPARE(second["error"].toObject()["code"].toString(), QString("fault"));
        QCOMPARE(second["error"].toObject()["message"].toString(), QString("too many resources requested for launch"));
        QCOMPARE(second["samplesMs"].toArray().size(), 0);
        // Each run also carries its result in kpg run --json's form.
        QCOMPARE(first["result"].toObject(), runResultToJson(run.result));
        QCOMPARE(first["result"].toObject()["timing"].toObject()["samplesMs"].toArray(), samples);
        QCOMPARE(second["result"].toObject()["error"].toObject()["code"].toString(), QString("fault"));
    }

    void exportToBadPathFails()
    {
        RunHistoryModel model;
        model.append(symmetricRun(0.00803, 0.0351));
        const Status s = model.exportCsv("/nonexistent/dir/runs.csv");
        QVERIFY(!s.ok());
        QVERIFY2(s.error().message.contains("/nonexistent/dir/runs.csv"), qPrintable(s.error().message));
        QVERIFY(!model.exportJson("/nonexistent/dir/runs.json").ok());
    }

    void samplesChart()
    {
        RunRecord run = realisticRun(128, 0.008, 200, 3);
        run.number = 5;
        TimingChart chart;
        chart.resize(640, 400);
        chart.showSamples(run);
        QCOMPARE(chart.mode(), TimingChart::Mode::Samples);
        QCOMPARE(chart.runNumber(), 5);
        QCOMPARE(chart.pointCount(), 200);
        QCOMPARE(chart.unit(), QString("us"));
        const auto [lo, hi] = chart.timeAxisRangeMs();
        QVERIFY2(lo <= run.result.stats.minMs && hi >= run.result.stats.maxMs,
                 qPrintable(QString("axis %1..%2, samples %3..%4")
                                .arg(lo)
                                .arg(hi)
                                .arg(run.result.stats.minMs)
                                .arg(run.result.stats.maxMs)));
        // The axis hugs the samples instead of starting at zero.
        QVERIFY(lo > 0.5 * run.result.stats.minMs);
        QVERIFY(chart.title().contains("min " + Kp::formatDuration(run.result.stats.minMs)));
        QVERIFY(chart.title().contains("max " + Kp::formatDuration(run.result.stats.maxMs)));
        QVERIFY(chart.message().isEmpty());
    }

    /** Many samples are drawn as columns of min/max: every outlier stays in view, whatever the count. */
    void samplesChartDecimates()
    {
        RunRecord run = realisticRun(256, 0.0077, 100000, 21);
        // Two lone outliers, one fast and one slow, far from each other.
        run.result.samplesMs[12345] = 0.0200;
        run.result.samplesMs[87654] = 0.0010;
        run.result.stats = computeStats(run.result.samplesMs);
        TimingChart chart;
        chart.resize(640, 300);
        chart.showSamples(run);
        QVERIFY(chart.decimated());
        QCOMPARE(chart.pointCount(), 2 * TimingChart::kColumns);
        const auto [lo, hi] = chart.timeAxisRangeMs();
        QVERIFY(lo <= 0.0010 && hi >= 0.0200);
        QVERIFY2(chart.title().contains("100000 samples"), qPrintable(chart.title()));

        // Few samples: each one a dot.
        chart.showSamples(realisticRun(256, 0.0077, TimingChart::kMaxMarkers, 22));
        QVERIFY(!chart.decimated());
        QCOMPARE(chart.pointCount(), TimingChart::kMaxMarkers);
    }

    void decimate()
    {
        const QList<double> samples{5, 1, 7, 3, 2, 9, 4, 8, 6, 0};
        // Two columns of five: (2, min 1, max 7) and (7, min 0, max 9), times the scale.
        const QList<QPointF> two = TimingChart::decimate(samples, 2, 10);
        QCOMPARE(two, QList<QPointF>({{2, 10}, {2, 70}, {7, 0}, {7, 90}}));
        // Three columns of 3, 3 and 4 samples.
        const QList<QPointF> three = TimingChart::decimate(samples, 3);
        QCOMPARE(three, QList<QPointF>({{1, 1}, {1, 7}, {4, 2}, {4, 9}, {7.5, 0}, {7.5, 8}}));
        // No more samples than columns: every sample as it is.
        QCOMPARE(TimingChart::decimate(samples, 10).size(), 10);
        QCOMPARE(TimingChart::decimate(samples, 10)[5], QPointF(5, 9));
        QVERIFY(TimingChart::decimate({}, 10).isEmpty());
        // Random samples: the drawn extremes are the samples' extremes.
        QRandomGenerator rng(5);
        QList<double> many;
        for (int i = 0; i < 54321; ++i) {
            many << rng.generateDouble();
        }
        const QList<QPointF> drawn = TimingChart::decimate(many, 1000);
        QCOMPARE(drawn.size(), 2000);
        double lo = 2;
        double hi = -1;
        for (const QPointF &p : drawn) {
            lo = std::min(lo, p.y());
            hi = std::max(hi, p.y());
        }
        QCOMPARE(lo, *std::min_element(many.cbegin(), many.cend()));
        QCOMPARE(hi, *std::max_element(many.cbegin(), many.cend()));
    }

    /** Every chart's data as CSV: the samples (all of them), the bins, the bars. */
    void chartCsv()
    {
        QTemporaryDir dir;
        const RunRecord a = realisticRun(128, 0.008, 3000, 5);
        TimingChart samples;
        samples.showSamples(a);
        KP_VERIFY_RESULT(samples.exportCsv(dir.filePath("s.csv")));
        QFile s(dir.filePath("s.csv"));
        QVERIFY(s.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = s.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 3001);
        QCOMPARE(lines[0], QByteArray("sample,time_ms"));
        QCOMPARE(lines[2999].split(',')[1].toDouble(), a.result.samplesMs[2998]);

        TimingChart histogram;
        histogram.showHistogram(a);
        const QList<QByteArray> bins = histogram.csvData().trimmed().split('\n');
        QCOMPARE(bins.size(), histogram.binCounts().size() + 1);
        int total = 0;
        for (qsizetype i = 1; i < bins.size(); ++i) {
            total += bins[i].split(',')[3].toInt();
        }
        QCOMPARE(total, 3000);

        CompareChart compare;
        RunRecord b = realisticRun(256, 0.0077, 200, 6);
        b.number = 2;
        RunRecord a1 = a;
        a1.number = 1;
        compare.showRuns({a1, failedRun(1024), b});
        const QByteArray csv = compare.csvData();
        QVERIFY2(csv.startsWith("run,label,samples,median_ms,min_ms,max_ms\n1,block=128,3000,"), csv.constData());
        QCOMPARE(csv.count('\n'), 3);

        // Nothing shown, nothing to write, and a message that says so.
        TimingChart empty;
        const Status none = empty.exportCsv(dir.filePath("none.csv"));
        QVERIFY(!none.ok());
        QVERIFY2(none.error().message.contains("no data"), qPrintable(none.error().message));
        QVERIFY(!QFile::exists(dir.filePath("none.csv")));
    }

    /** The context menu offers PNG, SVG and CSV; CSV only while there is data. */
    void chartContextMenu()
    {
        TimingChart chart;
        chart.resize(500, 300);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        const auto menuTexts = [&chart] {
            QStringList texts;
            QTimer::singleShot(0, &chart, [&texts] {
                auto *menu = qobject_cast<QMenu *>(QApplication::activePopupWidget());
                if (menu) {
                    for (QAction *a : menu->actions()) {
                        if (!a->isSeparator()) {
                            texts << QString("%1%2").arg(a->text(), a->isEnabled() ? "" : " (off)");
                        }
                    }
                    menu->close();
                }
            });
            QContextMenuEvent event(QContextMenuEvent::Mouse, QPoint(100, 100), chart.mapToGlobal(QPoint(100, 100)));
            QApplication::sendEvent(&chart, &event);
            return texts;
        };
        QCOMPARE(menuTexts(), QStringList({"Save Chart as PNG... (off)", "Save Chart as SVG... (off)",
                                           "Save Data as CSV... (off)"}));
        chart.showHistogram(realisticRun(128, 0.008, 300, 5));
        QCOMPARE(menuTexts(), QStringList({"Save Chart as PNG...", "Save Chart as SVG...", "Save Data as CSV..."}));
    }

    void samplesChartOfFailedRun()
    {
        TimingChart chart;
        RunRecord run = failedRun(1024);
        run.number = 4;
        chart.showSamples(run);
        QCOMPARE(chart.mode(), TimingChart::Mode::Empty);
        QCOMPARE(chart.pointCount(), 0);
        QVERIFY2(chart.message().contains("too many resources requested for launch"), qPrintable(chart.message()));
        QVERIFY(chart.message().startsWith("#4 vectorAdd (block=1024) failed (fault)"));
    }

    void histogram_data()
    {
        QTest::addColumn<int>("count");
        QTest::addColumn<double>("centreMs");
        QTest::newRow("200 samples around 8 us") << 200 << 0.008;
        QTest::newRow("10000 samples around 1.2 ms") << 10000 << 1.2;
        QTest::newRow("one sample") << 1 << 0.5;
    }
    void histogram()
    {
        QFETCH(int, count);
        QFETCH(double, centreMs);
        const RunRecord run = realisticRun(256, centreMs, count, 11);
        TimingChart chart;
        chart.showHistogram(run);
        QCOMPARE(chart.mode(), TimingChart::Mode::Histogram);
        const QList<int> counts = chart.binCounts();
        QCOMPARE(counts.size(), TimingChart::binCountFor(run.result.samplesMs));
        QCOMPARE(std::accumulate(counts.cbegin(), counts.cend(), 0), count);
        const QList<double> edges = chart.binEdgesMs();
        QCOMPARE(edges.size(), counts.size() + 1);
        QVERIFY(edges.first() <= run.result.stats.minMs);
        QVERIFY(edges.last() >= run.result.stats.maxMs);
        const auto [lo, hi] = chart.timeAxisRangeMs();
        QVERIFY(lo <= run.result.stats.minMs && hi >= run.result.stats.maxMs);
    }

    void binCount_data()
    {
        QTest::addColumn<QList<double>>("samples");
        QTest::addColumn<int>("bins");
        QTest::newRow("empty") << QList<double>{} << 1;
        QTest::newRow("all equal") << QList<double>{2.0, 2.0, 2.0} << 1;
        // IQR 0 (most samples equal) but a spread: fixed 30 bins.
        QTest::newRow("zero IQR") << QList<double>{1, 1, 1, 1, 1, 1, 1, 2} << 30;
        // 0..99: IQR 49.5, width 2*49.5/100^(1/3) = 21.3, 99/21.3 -> 5 bins.
        QList<double> ramp;
        for (int i = 0; i < 100; ++i) {
            ramp << i;
        }
        QTest::newRow("ramp of 100") << ramp << 5;
    }
    void binCount()
    {
        QFETCH(QList<double>, samples);
        QFETCH(int, bins);
        QCOMPARE(TimingChart::binCountFor(samples), bins);
    }

    void compareChart()
    {
        QList<RunRecord> runs{realisticRun(64, 0.0094, 200, 1), realisticRun(128, 0.0080, 200, 2), failedRun(1024),
                              realisticRun(256, 0.0077, 200, 3)};
        for (int i = 0; i < runs.size(); ++i) {
            runs[i].number = i + 1;
        }
        CompareChart chart;
        chart.showRuns(runs);
        QCOMPARE(chart.entryCount(), 3);
        QCOMPARE(chart.labels(), QStringList({"block=64", "block=128", "block=256"}));
        QCOMPARE(chart.runNumbers(), QList<int>({1, 2, 4}));
        QCOMPARE(chart.unit(), QString("us"));
        const QList<double> medians = chart.mediansMs();
        QCOMPARE(medians.size(), 3);
        const QList<int> from{0, 1, 3};
        for (int i = 0; i < 3; ++i) {
            QVERIFY(std::abs(medians[i] - runs[from[i]].result.stats.medianMs) < 1e-12);
        }
        QVERIFY2(chart.title().contains("1 selected run(s) without samples"), qPrintable(chart.title()));

        // Same label twice, or none: still one distinct bar each.
        runs[1].label = runs[0].label;
        runs[3].label.clear();
        chart.showRuns(runs);
        QCOMPARE(chart.labels(), QStringList({"block=64", "block=64 (#2)", "#4"}));

        chart.showRuns({failedRun(1024)});
        QCOMPARE(chart.entryCount(), 0);
        QVERIFY(!chart.message().isEmpty());
    }

    void chartExports_data()
    {
        QTest::addColumn<int>("which");
        QTest::newRow("samples") << 0;
        QTest::newRow("histogram") << 1;
        QTest::newRow("compare") << 2;
    }
    void chartExports()
    {
        QFETCH(int, which);
        const RunRecord a = realisticRun(128, 0.008, 200, 5);
        const RunRecord b = realisticRun(256, 0.0077, 200, 6);
        TimingChart timing;
        CompareChart compare;
        ChartWidget *chart = &timing;
        if (which == 0) {
            timing.showSamples(a);
        } else if (which == 1) {
            timing.showHistogram(a);
        } else {
            compare.showRuns({a, b});
            chart = &compare;
        }
        chart->resize(500, 300);
        QTemporaryDir dir;
        const QString png = dir.filePath("chart.png");
        KP_VERIFY_RESULT(chart->exportPng(png, QSize(800, 450)));
        QImage image;
        QVERIFY(image.load(png, "PNG"));
        QCOMPARE(image.size(), QSize(800, 450));
        // Something was drawn: not one colour all over.
        const QRgb corner = image.pixel(0, 0);
        bool drawn = false;
        for (int y = 0; y < image.height() && !drawn; y += 7) {
            for (int x = 0; x < image.width() && !drawn; x += 7) {
                drawn = image.pixel(x, y) != corner;
            }
        }
        QVERIFY(drawn);

        const QString svg = dir.filePath("chart.svg");
        KP_VERIFY_RESULT(chart->exportSvg(svg, QSize(800, 450)));
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        QVERIFY(text.startsWith("<?xml"));
        QVERIFY(text.contains("<svg"));
        QVERIFY(text.contains("</svg>"));
        // Exporting at another size leaves the chart on screen as it was.
        QCOMPARE(chart->toImage().size(), chart->size());
    }

    void panelSwitchesCharts()
    {
        ResultsPanel panel;
        panel.resize(900, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QVERIFY(!panel.timingChart()->message().isEmpty());

        panel.addRun(realisticRun(64, 0.0094, 200, 1));
        panel.addRun(realisticRun(128, 0.0080, 200, 2));
        panel.addRun(failedRun(1024));
        panel.addRun(realisticRun(256, 0.0077, 200, 3));
        QCOMPARE(panel.model()->rowCount(), 4);
        // The newest run is selected and shown.
        QCOMPARE(panel.selectedRows(), QList<int>({3}));
        QCOMPARE(panel.currentTab(), ResultsPanel::Tab::Samples);
        QCOMPARE(panel.timingChart()->mode(), TimingChart::Mode::Samples);
        QCOMPARE(panel.timingChart()->runNumber(), 4);
        // Charts out of view are drawn when their tab is chosen, not with every run.
        QCOMPARE(panel.histogramChart()->mode(), TimingChart::Mode::Empty);
        QCOMPARE(panel.compareChart()->entryCount(), 0);
        panel.setCurrentTab(ResultsPanel::Tab::Histogram);
        QCOMPARE(panel.histogramChart()->mode(), TimingChart::Mode::Histogram);
        QCOMPARE(panel.histogramChart()->runNumber(), 4);
        panel.setCurrentTab(ResultsPanel::Tab::Samples);

        // Click row 1, then Ctrl+click rows 2 and 4: three selected, compare.
        QTableView *table = panel.table();
        const auto click = [table](int row, Qt::KeyboardModifiers mods) {
            const QRect rect = table->visualRect(table->model()->index(row, RunHistoryModel::KernelColumn));
            QTest::mouseClick(table->viewport(), Qt::LeftButton, mods, rect.center());
        };
        click(0, Qt::NoModifier);
        QCOMPARE(panel.selectedRows(), QList<int>({0}));
        QCOMPARE(panel.timingChart()->runNumber(), 1);
        click(1, Qt::ControlModifier);
        QCOMPARE(panel.currentTab(), ResultsPanel::Tab::Compare);
        click(3, Qt::ControlModifier);
        QCOMPARE(panel.selectedRows(), QList<int>({0, 1, 3}));
        QCOMPARE(panel.compareChart()->entryCount(), 3);
        QCOMPARE(panel.compareChart()->runNumbers(), QList<int>({1, 2, 4}));
        // Samples show the run clicked last.
        panel.setCurrentTab(ResultsPanel::Tab::Samples);
        QCOMPARE(panel.timingChart()->runNumber(), 4);
        panel.setCurrentTab(ResultsPanel::Tab::Compare);

        // A run added while comparing joins the comparison.
        panel.addRun(realisticRun(512, 0.0079, 200, 4));
        QCOMPARE(panel.selectedRows(), QList<int>({0, 1, 3, 4}));
        QCOMPARE(panel.compareChart()->entryCount(), 4);
        QCOMPARE(panel.currentTab(), ResultsPanel::Tab::Compare);

        // Back to one run: back to its samples.
        panel.selectRows({2});
        QCOMPARE(panel.currentTab(), ResultsPanel::Tab::Samples);
        QCOMPARE(panel.timingChart()->mode(), TimingChart::Mode::Empty);
        QVERIFY(panel.timingChart()->message().contains("failed (fault)"));

        // A tab picked by hand stays while the selection changes within one run.
        panel.setCurrentTab(ResultsPanel::Tab::Histogram);
        panel.selectRows({1});
        QCOMPARE(panel.currentTab(), ResultsPanel::Tab::Histogram);
        QCOMPARE(panel.histogramChart()->runNumber(), 2);

        // Sorted by median, the selection still names model rows.
        table->sortByColumn(RunHistoryModel::MedianColumn, Qt::AscendingOrder);
        panel.selectRows({0, 3});
        QCOMPARE(panel.selectedRows(), QList<int>({3, 0}));
        QCOMPARE(panel.compareChart()->runNumbers(), QList<int>({4, 1}));

        panel.clearHistory();
        QCOMPARE(panel.model()->rowCount(), 0);
        QVERIFY(panel.selectedRows().isEmpty());
        QCOMPARE(panel.timingChart()->mode(), TimingChart::Mode::Empty);
    }

    void panelExports()
    {
        ResultsPanel panel;
        panel.resize(900, 700);
        panel.addRun(realisticRun(128, 0.008, 200, 2));
        panel.addRun(failedRun(1024));
        QTemporaryDir dir;
        KP_VERIFY_RESULT(panel.exportHistoryCsv(dir.filePath("h.csv")));
        KP_VERIFY_RESULT(panel.exportHistoryJson(dir.filePath("h.json")));
        QFile json(dir.filePath("h.json"));
        QVERIFY(json.open(QIODevice::ReadOnly));
        QCOMPARE(QJsonDocument::fromJson(json.readAll()).array().size(), 2);
        panel.selectRows({0});
        KP_VERIFY_RESULT(panel.exportChartPng(dir.filePath("c.png"), QSize(300, 200)));
        QCOMPARE(QImage(dir.filePath("c.png")).size(), QSize(300, 200));
        panel.setCurrentTab(ResultsPanel::Tab::Histogram);
        KP_VERIFY_RESULT(panel.exportChartSvg(dir.filePath("c.svg")));
        QFile svg(dir.filePath("c.svg"));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        QVERIFY(svg.readAll().startsWith("<?xml"));
    }

    /**
     * The Results dock of a 1280x800 window after runs of 2,000 samples, in
     * both themes: no axis title or tick label is cut short ("ti...", "..."),
     * and the dark theme draws dark charts. KPG_SCREENSHOT_DIR=dir keeps
     * window-results-light.png and window-results-dark.png.
     */
    void readableInTheWindowAt1280x800_data()
    {
        QTest::addColumn<QString>("theme");
        QTest::newRow("light") << "light";
        QTest::newRow("dark") << "dark";
    }
    void readableInTheWindowAt1280x800()
    {
        QFETCH(QString, theme);
        applyTheme(theme);
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(":/presets/heat/heat.kpg"));
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto *panel = w.docks().panel<ResultsPanel>(PanelId::Results);
        QVERIFY(panel);
        panel->addRun(realisticRun(128, 0.24, 2000, 7));
        panel->addRun(realisticRun(256, 0.23, 2000, 8));
        w.findChild<QDockWidget *>("resultsDock")->raise();
        const QString dir = qEnvironmentVariable("KPG_SCREENSHOT_DIR");
        const QList<ResultsPanel::Tab> tabs{ResultsPanel::Tab::Samples, ResultsPanel::Tab::Histogram,
                                            ResultsPanel::Tab::Compare};
        for (ResultsPanel::Tab tab : tabs) {
            if (tab == ResultsPanel::Tab::Compare) {
                panel->selectRows({0, 1});
            }
            panel->setCurrentTab(tab);
            auto *chart = qobject_cast<ChartWidget *>(panel->chartTabs()->currentWidget());
            QVERIFY(chart);
            // The chart lays its axes out once the dock has its size: wait for
            // that (a fixed pause failed on a busy machine), then every label is whole.
            const auto cutShort = [chart] {
                QStringList cut;
                for (const QString &t : chart->visibleTexts()) {
                    if (t.endsWith(QLatin1String("...")) || t.endsWith(QChar(0x2026))) {
                        cut << t;
                    }
                }
                return cut;
            };
            QTRY_VERIFY2_WITH_TIMEOUT(chart->visibleTexts().size() > 5 && cutShort().isEmpty(),
                                      qPrintable(QString("tab %1 at %2x%3: cut short: %4; all texts: %5")
                                                     .arg(int(tab))
                                                     .arg(chart->width())
                                                     .arg(chart->height())
                                                     .arg(cutShort().join(" | "), chart->visibleTexts().join(" | "))),
                                      10000);
            if (!dir.isEmpty()) {
                QVERIFY(w.grab().save(QString("%1/window-results-%2-%3.png").arg(dir, theme).arg(int(tab))));
            }
            // The chart's background follows the theme: dark in the dark one.
            const QImage image = chart->grab().toImage();
            const int lightness = QColor(image.pixel(4, image.height() / 2)).lightness();
            QVERIFY2(theme == "dark" ? lightness < 100 : lightness > 150, qPrintable(QString::number(lightness)));
        }
        applyTheme("light");
    }

    /** Renders the panel as a user sees it; KPG_SCREENSHOT_DIR=dir keeps results.png and compare.png. */
    void screenshots()
    {
        ResultsPanel panel;
        panel.resize(1000, 760);
        panel.addRun(realisticRun(64, 0.0094, 200, 1));
        panel.addRun(realisticRun(128, 0.0080, 200, 2));
        panel.addRun(realisticRun(256, 0.0077, 200, 3));
        panel.addRun(failedRun(1024));
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const QString dir = qEnvironmentVariable("KPG_SCREENSHOT_DIR");
        // No event loop between a change and its export or grab: what is drawn
        // must not depend on deferred deletes having run.
        panel.selectRows({1});
        const QImage single = panel.grab().toImage();
        panel.setCurrentTab(ResultsPanel::Tab::Histogram);
        const QImage histogram = panel.grab().toImage();
        panel.setCurrentTab(ResultsPanel::Tab::Samples);
        panel.selectRows({3});
        const QImage failed = panel.grab().toImage();
        panel.selectRows({0, 1, 2});
        const QImage compare = panel.grab().toImage();
        QVERIFY(!single.isNull() && !compare.isNull());
        QVERIFY(single != compare && single != histogram);
        if (!dir.isEmpty()) {
            QVERIFY(single.save(dir + "/results.png"));
            QVERIFY(histogram.save(dir + "/histogram.png"));
            QVERIFY(failed.save(dir + "/failed.png"));
            QVERIFY(compare.save(dir + "/compare.png"));
            KP_VERIFY_RESULT(panel.exportChartPng(dir + "/compare-export.png", QSize(1200, 700)));
            KP_VERIFY_RESULT(panel.exportChartSvg(dir + "/compare-export.svg", QSize(1200, 700)));
        }
    }
};

QTEST_MAIN(TestResults)
#include "tst_results.moc"
