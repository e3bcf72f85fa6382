#pragma once

#include "core/format.h"
#include "core/result.h"
#include "results/runhistory.h"

#include <QImage>
#include <QList>
#include <QSize>
#include <QString>
#include <QWidget>

#include <utility>

// Qt Charts stays behind these declarations: only gui/plots/ includes it.
QT_BEGIN_NAMESPACE
class QAreaSeries;
class QChart;
class QChartView;
class QLabel;
class QLineSeries;
class QPainter;
class QStackedLayout;
class QValueAxis;
QT_END_NAMESPACE

namespace Kp {

/**
 * A chart in a widget, and exports of it at any size. Shows a message in
 * place of the chart when there is nothing to plot. GUI thread only.
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

protected:
    /**
     * Removes every series, hides the axes, and shows message (when not
     * empty) instead of the chart. Axes are kept and reused: Qt Charts deletes
     * a removed axis' drawing only once the event loop runs, so an export
     * right after a change would show both.
     */
    void reset(const QString &message = {});
    /** Lays the chart out now, not on the next turn of the event loop, so a grab right after a change shows it. */
    void layOutNow();
    /** Sets a title: a bold first line and an optional second line. */
    void setTitle(const QString &heading, const QString &detail);
    QChart *chart() const { return m_chart; }
    /** Adds a value axis to the chart, hidden until setUpAxis() shows it. */
    QValueAxis *addValueAxis(Qt::Alignment alignment);
    /** Shows axis over lo..hi with ticks at round steps (integers: whole numbers only). */
    static void setUpAxis(QValueAxis *axis, const QString &title, double lo, double hi, bool integers);

private:
    void render(QPainter *painter, QSize size);

    QChart *m_chart = nullptr; ///< owned by m_view
    QChartView *m_view = nullptr;
    QLabel *m_message = nullptr;
    QStackedLayout *m_stack = nullptr;
    QString m_plainTitle;
};

/**
 * Timing samples of one run: either the samples in the order they were
 * taken, with the median as a line, or their histogram. Times are shown in
 * the unit that suits the run's median (ns, us or ms).
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
    /** Points of the samples series as drawn (Samples mode). */
    int pointCount() const;
    /** The time axis' range, converted back to milliseconds (the y axis for samples, x for the histogram). */
    std::pair<double, double> timeAxisRangeMs() const;
    /** Samples per bin as drawn (Histogram mode). */
    QList<int> binCounts() const;
    /** Bin edges in milliseconds, binCounts().size() + 1 of them (Histogram mode). */
    QList<double> binEdgesMs() const { return m_binEdgesMs; }

    /** Freedman–Diaconis bin count (width 2 IQR / n^(1/3)), kept within 5..50; 30 when the IQR is 0. */
    static int binCountFor(const QList<double> &samplesMs);

private:
    /** Clears the chart; returns false (showing why) when record has no samples to plot. */
    bool prepare(const RunRecord &record);

    Mode m_mode = Mode::Empty;
    int m_runNumber = 0;
    TimeUnit m_unit;
    QLineSeries *m_samples = nullptr; ///< owned by the chart, null outside Samples mode
    QAreaSeries *m_bars = nullptr;    ///< owned by the chart, null outside Histogram mode
    QValueAxis *m_xAxis = nullptr;    ///< owned by the chart
    QValueAxis *m_yAxis = nullptr;
    QValueAxis *m_timeAxis = nullptr; ///< m_yAxis for samples, m_xAxis for the histogram
    QList<double> m_binEdgesMs;
};

} // namespace Kp
