// The plotting layer (engine/plot/plot.h): PNG, SVG and CSV files, lines and
// ceilings drawn where their values say (pixel checks), both palettes, the
// heatmap and roofline, hover, ticks, and 100,000 points drawn quickly.

#include "plot/plot.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace Kp;
using namespace Kp::Plot;

namespace {

int colorDistance(QColor a, QColor b)
{
    return std::abs(a.red() - b.red()) + std::abs(a.green() - b.green()) + std::abs(a.blue() - b.blue());
}

/** Whether a pixel near (x, y) (within dy rows) has colour c. */
bool colorNear(const QImage &img, int x, int y, QColor c, int dy = 2, int tolerance = 90)
{
    for (int yy = y - dy; yy <= y + dy; ++yy) {
        if (yy >= 0 && yy < img.height() && colorDistance(img.pixelColor(x, yy), c) <= tolerance) {
            return true;
        }
    }
    return false;
}

/** Block sizes 32..1024 against a time, one line per value of a second axis. */
Figure blockSizeFigure()
{
    Figure f;
    f.title = QStringLiteral("vector_add: median time");
    f.x.title = QStringLiteral("block.x");
    f.x.logBase = 2;
    f.y.title = QStringLiteral("median time (us)");
    QRandomGenerator rng(7);
    for (int s = 0; s < 3; ++s) {
        Series ser;
        ser.name = QStringLiteral("n=%1").arg(1 << (20 + s));
        for (int b = 32; b <= 1024; b *= 2) {
            ser.points << QPointF(b, (s + 1) * (10.0 + rng.bounded(3.0)) + 200.0 / b);
            ser.labels << QStringLiteral("block.x=%1 n=%2").arg(b).arg(1 << (20 + s));
        }
        f.series << ser;
    }
    return f;
}

/** KPG_TEST_PLOT_DIR=folder keeps the pictures for a look. */
void keep(const QString &name, const Figure &f, const Palette &pal, QSize size = QSize(900, 560))
{
    const QString dir = qEnvironmentVariable("KPG_TEST_PLOT_DIR");
    if (!dir.isEmpty()) {
        (void)save(dir + QLatin1Char('/') + name, f, size, pal);
    }
}

} // namespace

class TestPlot : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void filesAreWritten()
    {
        QTemporaryDir dir;
        Figure f = blockSizeFigure();
        f.hasY2 = true;
        f.y2.title = QStringLiteral("occupancy");
        f.y2.percent = true;
        f.y2.min = 0;
        f.y2.max = 1;
        Series occ;
        occ.name = QStringLiteral("occupancy");
        occ.secondaryY = true;
        for (int b = 32; b <= 1024; b *= 2) {
            occ.points << QPointF(b, b >= 256 ? 1.0 : b / 256.0);
        }
        f.series << occ;
        f.hlines << HLine{50, QStringLiteral("ceiling 50"), false};

        const QString png = dir.filePath("sweep.png"), svg = dir.filePath("sweep.svg"), csv = dir.filePath("sweep.csv");
        QVERIFY(save(png, f, QSize(800, 500), Palette::light()));
        QVERIFY(save(svg, f, QSize(800, 500), Palette::dark()));
        QVERIFY(save(csv, f, QSize(800, 500), Palette::light()));
        const QImage img(png);
        QCOMPARE(img.size(), QSize(800, 500));
        QVERIFY2(QFileInfo(png).size() > 5000, qPrintable(QString::number(QFileInfo(png).size())));
        QFile s(svg);
        QVERIFY(s.open(QIODevice::ReadOnly));
        const QByteArray svgText = s.readAll();
        QVERIFY(svgText.startsWith("<?xml"));
        QVERIFY(svgText.contains("<svg"));
        QVERIFY(svgText.contains("block.x"));
        QVERIFY(svgText.contains("ceiling 50"));
        QFile c(csv);
        QVERIFY(c.open(QIODevice::ReadOnly));
        const QList<QByteArray> rows = c.readAll().trimmed().split('\n');
        QCOMPARE(rows.first(), QByteArray("series,block.x,median time (us),label"));
        QCOMPARE(rows.size(), 1 + 4 * 6 + 1); // header, 4 series x 6 points, the ceiling
        QVERIFY(rows[1].startsWith("n=1048576,32,"));
        QVERIFY(rows.last().contains("ceiling"));

        keep(QStringLiteral("lines-light.png"), f, Palette::light());
        keep(QStringLiteral("lines-dark.png"), f, Palette::dark());
        keep(QStringLiteral("lines-small.png"), f, Palette::dark(), QSize(320, 200));
        const Status bad = save(dir.filePath("sweep.jpg"), f, QSize(100, 100), Palette::light());
        QVERIFY(!bad);
        QVERIFY2(bad.error().message.contains(".png, .svg or .csv"), qPrintable(bad.error().message));
    }

    void linesAndCeilingsWhereExpected_data()
    {
        QTest::addColumn<bool>("dark");
        QTest::newRow("light") << false;
        QTest::newRow("dark") << true;
    }
    void linesAndCeilingsWhereExpected()
    {
        QFETCH(bool, dark);
        const Palette pal = dark ? Palette::dark() : Palette::light();
        Figure f;
        f.x.title = QStringLiteral("block.x");
        f.x.logBase = 2;
        f.y.title = QStringLiteral("GB/s");
        f.y.min = 0;
        f.y.max = 120;
        Series s;
        s.name = QStringLiteral("flat");
        for (int b = 32; b <= 1024; b *= 2) {
            s.points << QPointF(b, 30);
        }
        f.series << s;
        f.hlines << HLine{90, QStringLiteral("copy 90 GB/s"), false};
        const QSize size(600, 400);
        const QImage img = renderImage(f, size, pal);
        const QRectF area = plotArea(f, QRectF(QPointF(0, 0), QSizeF(size)));
        QVERIFY(area.width() > 400 && area.height() > 250);
        const auto yOf = [&](double v) { return int(std::round(area.bottom() - v / 120.0 * area.height())); };
        // Between two markers, on the line at 30 and on the ceiling at 90.
        const int x = int(area.left() + area.width() * 0.41);
        QVERIFY2(colorNear(img, x, yOf(30), pal.series.first()), "the series line is not at y = 30");
        QVERIFY2(colorNear(img, int(area.left() + 5), yOf(90), pal.ceiling) ||
                     colorNear(img, int(area.left() + 9), yOf(90), pal.ceiling),
                 "the ceiling is not at y = 90");
        // Nothing of either half way between them: plot background or grid only.
        const QColor mid = img.pixelColor(x, yOf(60) + 3);
        QVERIFY(colorDistance(mid, pal.series.first()) > 60 && colorDistance(mid, pal.ceiling) > 60);
        // The background outside the axes is the palette's.
        QCOMPARE(img.pixelColor(2, 2), pal.background);
    }

    void smallSizesKeepTheirLabels()
    {
        Figure f = blockSizeFigure();
        for (const QSize size : {QSize(320, 200), QSize(240, 160)}) {
            const QRectF rect(QPointF(0, 0), QSizeF(size));
            const QRectF area = plotArea(f, rect);
            QVERIFY(rect.contains(area));
            QVERIFY2(area.width() > size.width() * 0.4, qPrintable(QString::number(area.width())));
            QVERIFY(area.height() > 30);
            // The margins leave room for the widest tick label and the titles.
            QFont font;
            font.setPixelSize(10);
            const QFontMetricsF fm(font);
            QVERIFY(area.left() >= fm.horizontalAdvance(tickLabel(f.y, 60)) + fm.height());
            QVERIFY(size.height() - area.bottom() >= 2 * fm.height());
            const QImage img = renderImage(f, size, Palette::dark());
            QCOMPARE(img.size(), size);
        }
    }

    void ticks()
    {
        Axis log2;
        log2.logBase = 2;
        const QVector<double> t = Plot::ticks(log2, 5, 10); // 32..1024
        QCOMPARE(t.size(), 6);
        QCOMPARE(tickLabel(log2, std::pow(2.0, t.first())), QStringLiteral("32"));
        QCOMPARE(tickLabel(log2, std::pow(2.0, t.last())), QStringLiteral("1024"));
        QCOMPARE(tickLabel(log2, std::pow(2.0, 26)), QStringLiteral("2^26"));
        QVERIFY(Plot::ticks(log2, 0, 30).size() <= 8);
        Axis lin;
        const QVector<double> l = Plot::ticks(lin, 0, 97);
        QCOMPARE(l.first(), 0.0);
        QVERIFY(l.size() >= 4 && l.size() <= 9);
        QCOMPARE(l[1] - l[0], l[2] - l[1]);
        Axis si;
        si.si = true;
        QCOMPARE(tickLabel(si, 2.5e12), QStringLiteral("2.5T"));
        Axis pct;
        pct.percent = true;
        QCOMPARE(tickLabel(pct, 0.5), QStringLiteral("50%"));
    }

    void hundredThousandPoints()
    {
        Figure f;
        f.x.title = QStringLiteral("sample");
        f.y.title = QStringLiteral("time (us)");
        Series s;
        s.name = QStringLiteral("samples");
        QRandomGenerator rng(42);
        s.points.reserve(100000);
        for (int i = 0; i < 100000; ++i) {
            s.points << QPointF(i, 10 + rng.generateDouble() * (i == 54321 ? 80 : 1));
        }
        f.series << s;
        const QVector<QPointF> d = decimate(s.points, 0, 99999, 800);
        QVERIFY2(d.size() <= 4 * 801, qPrintable(QString::number(d.size())));
        // The spike survives decimation.
        double top = 0;
        for (const QPointF &p : d) {
            top = std::max(top, p.y());
        }
        QVERIFY(top > 50);

        QElapsedTimer t;
        t.start();
        const QImage img = renderImage(f, QSize(1000, 600), Palette::light());
        const qint64 ms = t.elapsed();
        qInfo("100,000 points rendered in %lld ms", ms);
        QVERIFY2(ms < 1000, qPrintable(QString::number(ms)));
        // The spike is drawn: some pixel of the series colour in the top third.
        const QRectF area = plotArea(f, QRectF(0, 0, 1000, 600));
        bool found = false;
        for (int x = int(area.left()) + 1; x < int(area.right()) && !found; ++x) {
            for (int y = int(area.top()) + 2; y < int(area.top() + area.height() / 3) && !found; ++y) {
                found = colorDistance(img.pixelColor(x, y), Palette::light().series.first()) < 80;
            }
        }
        QVERIFY(found);
    }

    void hover()
    {
        const Figure f = blockSizeFigure();
        const QRectF rect(0, 0, 800, 500);
        const QRectF area = plotArea(f, rect);
        QVERIFY(!hitTest(f, rect, QPointF(area.left() - 30, area.top() - 30)));
        // Aim at series 2's point at block.x = 128 through the same mapping: find it by scanning.
        std::optional<Hit> found;
        for (int x = int(area.left()); x < int(area.right()) && !found; x += 2) {
            for (int y = int(area.top()); y < int(area.bottom()) && !found; y += 2) {
                const std::optional<Hit> h = hitTest(f, rect, QPointF(x, y), 3);
                if (h && h->series == 2 && h->index == 2) {
                    found = h;
                }
            }
        }
        QVERIFY(found);
        QVERIFY2(found->text.startsWith(QLatin1String("block.x=128 n=4194304: ")), qPrintable(found->text));
    }

    void heatmap()
    {
        Figure f;
        f.kind = Kind::Heatmap;
        f.x.title = QStringLiteral("block.x");
        f.y.title = QStringLiteral("define.TILE");
        f.heatmap.xLabels = {"64", "128", "256", "512"};
        f.heatmap.yLabels = {"8", "16", "32"};
        f.heatmap.valueTitle = QStringLiteral("median time (us)");
        for (int j = 0; j < 3; ++j) {
            for (int i = 0; i < 4; ++i) {
                f.heatmap.values << 100.0 + 10 * i + 50 * j;
            }
        }
        f.heatmap.values[5] = std::numeric_limits<double>::quiet_NaN(); // a skipped point
        const QRectF rect(0, 0, 640, 400);
        const QImage img = renderImage(f, rect.size().toSize(), Palette::dark());
        keep(QStringLiteral("heatmap.png"), f, Palette::dark());
        const QRectF area = plotArea(f, rect);
        const auto cellCenter = [&](int i, int j) {
            return QPoint(int(area.left() + (i + 0.25) * area.width() / 4),
                          int(area.bottom() - (j + 0.25) * area.height() / 3));
        };
        // The fastest cell (0, 0) is the bright end of the map, the slowest the dark end.
        const QColor best = img.pixelColor(cellCenter(0, 0));
        const QColor worst = img.pixelColor(cellCenter(3, 2));
        QVERIFY2(best.lightnessF() > worst.lightnessF() + 0.3,
                 qPrintable(QStringLiteral("%1 vs %2").arg(best.name(), worst.name())));
        QCOMPARE(img.pixelColor(cellCenter(1, 1)), Palette::dark().plotBackground);
        const std::optional<Hit> h = hitTest(f, rect, cellCenter(2, 1));
        QVERIFY(h);
        QCOMPARE(h->text, QStringLiteral("block.x=256  define.TILE=16: 170"));
        const QByteArray csv = toCsv(f);
        QVERIFY(csv.startsWith("define.TILE,block.x,median time (us)\n8,64,100\n"));
        QVERIFY(csv.contains("\n16,128,\n"));
    }

    void roofline()
    {
        Figure f;
        f.kind = Kind::Roofline;
        f.title = QStringLiteral("roofline");
        f.x.title = QStringLiteral("FLOP/byte");
        f.y.title = QStringLiteral("FLOP/s");
        f.roofline.bytesPerSecond = 4e12;
        f.roofline.roofs = {{QStringLiteral("FP32"), 56e12}, {QStringLiteral("FP64"), 28e12}};
        // Points of one kernel share its intensity; the H200's block-size sweep of vector add put three within
        // a few pixels (150 to 160 GFLOP/s): their labels must not be drawn over each other.
        f.roofline.points = {{0.083, 0.3e12, QStringLiteral("vector_add block.x=256")},
                             {32, 20e12, QStringLiteral("matmul TILE=16")},
                             {0.083, 0.16e12, QStringLiteral("block.x=256")},
                             {0.083, 0.155e12, QStringLiteral("block.x=512")},
                             {0.083, 0.146e12, QStringLiteral("block.x=1024")}};
        const QRectF rect(0, 0, 800, 500);
        const QImage img = renderImage(f, rect.size().toSize(), Palette::light());
        keep(QStringLiteral("roofline.png"), f, Palette::light());
        const QRectF area = plotArea(f, rect);
        // The flat FP32 roof at 56 TFLOP/s, far right.
        bool roof = false;
        for (int y = int(area.top()); y < int(area.bottom()) && !roof; ++y) {
            roof = colorDistance(img.pixelColor(int(area.right() - 3), y), Palette::light().ceiling) < 60;
        }
        QVERIFY(roof);
        // Each point is named by hovering.
        bool namedMatmul = false;
        for (int x = int(area.left()); x < int(area.right()) && !namedMatmul; x += 2) {
            for (int y = int(area.top()); y < int(area.bottom()) && !namedMatmul; y += 2) {
                const std::optional<Hit> h = hitTest(f, rect, QPointF(x, y), 3);
                namedMatmul = h && h->index == 1 && h->text.startsWith(QLatin1String("matmul TILE=16: 32 FLOP/B"));
            }
        }
        QVERIFY(namedMatmul);
        const QByteArray csv = toCsv(f);
        QVERIFY(csv.contains("vector_add block.x=256,0.083,3e+11\n"));
        QVERIFY(csv.contains("FP32 roof,,5.6e+13\n"));
        const QByteArray svg = renderSvg(f, QSize(800, 500), Palette::light());
        QVERIFY(svg.contains("ridge 14 FLOP/B"));
    }
};

QTEST_MAIN(TestPlot)
#include "tst_plot.moc"
