#pragma once

#include "core/format.h"
#include "core/result.h"
#include "workbench/runhistory.h"

#include <QColor>
#include <QImage>
#include <QList>
#include <QPalette>
#include <QPointF>
#include <QSize>
#include <QString>
#include <QWidget>

#include <utility>

// Qt Charts stays behind these declarations: only gui/plots/ includes it.
QT_BEGIN_NAMESPACE
class QAreaSeries;
class QChart;
class QContextMenuEvent;
class QChartView;
class QLabel;
class QLineSeries;
class QPainter;
class QResizeEvent;
class QStackedLayout;
class QValueAxis;
QT_END_NAMESPACE

namespace Kp {

/** Colours of a chart, taken from the widget's palette, so charts follow the light and dark themes. */
struct ChartColors
{
    QColor background; ///< the chart's and the plot area's
    QColor foreground; ///< text, axis titles and labels
    QColor grid;
    QColor axisLine;
    QColor primary;   ///< the first data series (samples, bars)
    QColor secondary; ///< the second (a comparison's candidate)
    QColor accent;    ///< marks: medians, the current choice
    bool dark = false;

    static ChartColors fromPalette(const QPalette &palette);
};

/**
 * A chart in a widget, and exports of it at any size: PNG, SVG and its data
 * as CSV, also from its context menu. Shows a message in place of the chart
 * when there is nothing to plot. Colours follow the palette (the light and
 * dark themes). GUI thread only.
 */
class ChartWidget : public QWidget
{
    Q_OBJECT
public:
    explicit ChartWidget(QWidget *parent = nullptr);
    ~ChartWidget() override;

    /** The chart's title as plain text (it may be shown on two lines). */
    QString title() const;
    /** The message shown instead of the chart; empty while a chart is shown. */
    QString message() const;

    /** The chart drawn at size (the widget's size when empty), as it would look on screen. */
    QImage toImage(QSize size = {});
    /** Writes toImage(size) as a PNG, atomically. */
    Status exportPng(const QString &path, QSize size = {});
    /** Writes the chart drawn at size as SVG (QSvgGenerator), atomically. */
    Status exportSvg(const QString &path, QSize size = {});
    /** Writes csvData(), atomically; an error when the chart shows no data. */
    Status exportCsv(const QString &path) const;
    /** The data behind the chart as CSV, a header line first (every sample, not what is drawn); empty when none. */
    virtual QByteArray csvData() const { return {}; }

    /** Every text the chart draws now (title, axis titles, tick labels, legend), as drawn: cut ones end in "...". */
    QStringList visibleTexts() const;
    ChartColors colors() const { return m_colors; }

    /** The context menu's exports, as "Save Chart as PNG..." does them: a file dialog, then a message on failure. */
    void exportPngWithDialog();
    void exportSvgWithDialog();
    void exportCsvWithDialog();

protected:
    /**
     * Removes every series, hides the axes, and shows message (when not
     * empty) instead of the chart. Axes are kept and reused: Qt Charts deletes
     * a removed axis' drawing only once the event loop runs, so an export
     * right after a change would show both.
     */
    void reset(const QString &message = {});
    /** Shows message instead of the chart (empty: the chart), keeping the series. */
    void showMessage(const QString &message);
    /** Lays the chart out now, not on the next turn of the event loop, so a grab right after a change shows it. */
    void layOutNow();
    /** Sets a title: a bold first line and an optional second line. */
    void setTitle(const QString &heading, const QString &detail);
    QChart *chart() const { return m_chart; }
    /** Adds a value axis to the chart, hidden until setUpAxis() shows it. */
    QValueAxis *addValueAxis(Qt::Alignment alignment);
    /**
     * Shows axis over lo..hi with ticks at round steps (integers: whole
     * numbers only), as many as fit in about `pixels` of axis length.
     */
    static void setUpAxis(QValueAxis *axis, const QString &title, double lo, double hi, bool integers,
                          int pixels = 400);
    /** Plot area pixels along x and y (estimated from the widget's size before the first layout). */
    QSizeF plotSize() const;
    /** Colours the chart, its axes and legend from the palette; subclasses colour their series and call it. */
    virtual void applyColors();

    /** Shows the legend when the chart is at least kLegendMinHeight tall (on screen or exported); default on. */
    void setLegendWanted(bool wanted);
    /** The legend also needs this much width (a legend of many entries); default 0. */
    void setLegendMinWidth(int width);
    static constexpr int kLegendMinHeight = 240;

    void changeEvent(QEvent *event) override;
    void contextMenuEvent(QContextMenuEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    void render(QPainter *painter, QSize size);
    /** The title on one line, with as much of its detail as fits in width pixels. */
    void fitTitle(int width);
    /** Title and legend for a chart drawn at size (the widget, or an export). */
    void fitToSize(QSize size);

    QChart *m_chart = nullptr; ///< owned by m_view
    QChartView *m_view = nullptr;
    QLabel *m_message = nullptr;
    QStackedLayout *m_stack = nullptr;
    QString m_plainTitle;
    QString m_titleHeading;
    QString m_titleDetail;
    bool m_wantLegend = true;
    int m_legendMinWidth = 0;
    bool m_retickQueued = false; ///< a re-choice of the ticks after a resize is on its way
    ChartColors m_colors;
};

/**
 * Timing samples of one run: either the samples in the order they were
 * taken, with the median as a line, or their histogram. Times are shown in
 * the unit that suits the run's median (ns, us or ms). Above
 * kMaxMarkers samples the samples view draws each pixel column's fastest
 * and slowest sample (min/max decimation), so a run of 100,000 samples
 * costs what one of a thousand does.
 */
class TimingChart : public ChartWidget
{
    Q_OBJECT
public:
    enum class Mode {
        Empty,     ///< nothing shown (or a message: a failed run, a run without samples)
        Samples,   ///< sample index against time
        Histogram, ///< samples per time bin
    };
    /** Up to this many samples each is drawn as a dot; above, columns of min/max. */
    static constexpr int kMaxMarkers = 600;
    /** Columns of the decimated samples view (at least the plot's width in pixels). */
    static constexpr int kColumns = 1000;

    explicit TimingChart(QWidget *parent = nullptr);

    /** Sample index against time; the median is a horizontal line; min and max are in the title. */
    void showSamples(const RunRecord &record);
    /** The samples' histogram with Freedman–Diaconis bins (binCountFor()), the median as a vertical line. */
    void showHistogram(const RunRecord &record);
    /** Shows nothing but message. */
    void clear(const QString &message = {});

    Mode mode() const { return m_mode; }
    /** Number of the run shown; 0 when none. */
    int runNumber() const { return m_runNumber; }
    /** The time unit of the axis: "ns", "us" or "ms". */
    QString unit() const { return m_unit.name; }
    /** Points of the samples series as drawn (Samples mode): every sample, or two per column when decimated. */
    int pointCount() const;
    /** True when the samples view draws columns of min/max rather than every sample. */
    bool decimated() const { return m_decimated; }
    /** The time axis' range, converted back to milliseconds (the y axis for samples, x for the histogram). */
    std::pair<double, double> timeAxisRangeMs() const;
    /** Samples per bin as drawn (Histogram mode). */
    QList<int> binCounts() const;
    /** Bin edges in milliseconds, binCounts().size() + 1 of them (Histogram mode). */
    QList<double> binEdgesMs() const { return m_binEdgesMs; }
    /** Samples: index and time of every sample; histogram: each bin's edges and count. */
    QByteArray csvData() const override;

    /** Freedman–Diaconis bin count (width 2 IQR / n^(1/3)), kept within 5..50; 30 when the IQR is 0. */
    static int binCountFor(const QList<double> &samplesMs);

    /**
     * Min/max decimation: samples split into `columns` runs of consecutive
     * samples (as even as can be), each giving its centre index and its
     * smallest and largest value, in that order, as two points (x, min) and
     * (x, max). Fewer samples than columns: each sample once. Pure.
     */
    static QList<QPointF> decimate(const QList<double> &samples, int columns, double scale = 1);

protected:
    void applyColors() override;

private:
    /** Shows why record has nothing to plot, and returns false; true when it has samples. */
    bool prepare(const RunRecord &record);
    /** Hides every series (each mode shows its own). */
    void hideSeries();

    Mode m_mode = Mode::Empty;
    int m_runNumber = 0;
    TimeUnit m_unit;
    bool m_decimated = false;
    QList<double> m_samplesMs;        ///< of the run shown, for the CSV
    QLineSeries *m_points = nullptr;  ///< every sample as a dot (few samples); owned by the chart
    QLineSeries *m_columns = nullptr; ///< empty: names the columns in the legend and maps them (m_columnLines draws)
    class ColumnLines;
    ColumnLines *m_columnLines = nullptr; ///< min/max per column (many samples), a child item of the chart
    QLineSeries *m_median = nullptr;
    QLineSeries *m_barOutline = nullptr; ///< the histogram's bars, the upper series of m_bars
    QAreaSeries *m_bars = nullptr;
    QValueAxis *m_xAxis = nullptr; ///< owned by the chart
    QValueAxis *m_yAxis = nullptr;
    QValueAxis *m_timeAxis = nullptr; ///< m_yAxis for samples, m_xAxis for the histogram
    QList<double> m_binEdgesMs;
    QList<int> m_binCounts;
};

} // namespace Kp
