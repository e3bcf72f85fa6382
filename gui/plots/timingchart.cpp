#include "plots/timingchart.h"

#include "core/safefile.h"
#include <QAreaSeries>
#include <QBuffer>
#include <QChart>
#include <QChartView>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPainter>
#include <QStackedLayout>
#include <QSvgGenerator>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace Kp {

namespace {

Error chartError(const QString &message)
{
    return Error{QStringLiteral("plots"), Error::Code::BadInput, {}, message};
}

/** 1, 2 or 5 times a power of ten, so that span holds about `ticks` steps. */
double niceStep(double span, int ticks)
{
    const double raw = span / ticks;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double norm = raw / magnitude;
    const double nice = norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10;
    return nice * magnitude;
}

QString heading(const RunRecord &r)
{
    QString h = QStringLiteral("#%1 %2").arg(r.number).arg(r.kernel);
    if (!r.label.isEmpty()) {
        h += QStringLiteral(" (%1)").arg(r.label);
    }
    return h;
}

const QColor kSampleColor(0x1f, 0x77, 0xb4);
const QColor kMedianColor(0xd6, 0x27, 0x28);

/** A filled circle to draw at every sample, at four times its size so it stays round when scaled down. */
QImage markerImage(const QColor &color, qreal size)
{
    const int px = int(std::ceil(size * 4));
    QImage image(px, px, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(Qt::NoPen);
    p.setBrush(color);
    p.drawEllipse(QRectF(0.5, 0.5, px - 1, px - 1));
    return image;
}

} // namespace

ChartWidget::ChartWidget(QWidget *parent)
    : QWidget(parent)
{
    m_chart = new QChart;
    // Animations would make exports and tests see half-drawn charts.
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    m_chart->setBackgroundRoundness(0);
    m_view = new QChartView(m_chart);
    m_view->setRenderHints(QPainter::Antialiasing | QPainter::SmoothPixmapTransform);
    m_view->setMinimumSize(200, 110);
    m_message = new QLabel;
    m_message->setObjectName(QStringLiteral("chartMessage"));
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message->setMargin(12);
    m_stack = new QStackedLayout(this);
    m_stack->addWidget(m_view);
    m_stack->addWidget(m_message);
}

ChartWidget::~ChartWidget() = default;

QString ChartWidget::title() const
{
    return m_plainTitle;
}

QString ChartWidget::message() const
{
    return m_stack->currentWidget() == m_message ? m_message->text() : QString();
}

void ChartWidget::reset(const QString &message)
{
    m_chart->removeAllSeries();
    const auto axes = m_chart->axes();
    for (QAbstractAxis *axis : axes) {
        axis->setVisible(false);
    }
    // An export of an empty chart still says why it is empty.
    setTitle(message, {});
    m_message->setText(message);
    m_stack->setCurrentWidget(message.isEmpty() ? static_cast<QWidget *>(m_view) : m_message);
}

void ChartWidget::setTitle(const QString &heading, const QString &detail)
{
    m_plainTitle = detail.isEmpty() ? heading : heading + QLatin1Char('\n') + detail;
    if (heading.isEmpty()) {
        m_chart->setTitle({});
        return;
    }
    QString html = QStringLiteral("<center><b>%1</b>").arg(heading.toHtmlEscaped());
    if (!detail.isEmpty()) {
        html += QStringLiteral("<br>") + detail.toHtmlEscaped();
    }
    html += QStringLiteral("</center>");
    m_chart->setTitle(html);
}

QValueAxis *ChartWidget::addValueAxis(Qt::Alignment alignment)
{
    auto *axis = new QValueAxis;
    axis->setVisible(false);
    axis->setMinorTickCount(0);
    // Ticks on round numbers rather than at fixed fractions of an arbitrary range.
    axis->setTickType(QValueAxis::TicksDynamic);
    m_chart->addAxis(axis, alignment);
    return axis;
}

void ChartWidget::setUpAxis(QValueAxis *axis, const QString &title, double lo, double hi, bool integers)
{
    if (!(hi > lo)) {
        hi = lo + (integers ? 1 : std::max(std::abs(lo) * 0.01, 1e-9));
    }
    axis->setTitleText(title);
    double step = niceStep(hi - lo, 6);
    if (integers) {
        step = std::max(1.0, std::round(step));
    }
    // A new range with the old interval (a histogram's 0..500 samples at a time
    // axis' 0.005) would lay out 100 000 ticks: fixed ticks while it changes.
    axis->setTickType(QValueAxis::TicksFixed);
    axis->setRange(lo, hi);
    axis->setTickAnchor(std::ceil(lo / step) * step);
    axis->setTickInterval(step);
    axis->setTickType(QValueAxis::TicksDynamic);
    const int decimals = integers ? 0 : std::max(0, int(-std::floor(std::log10(step) + 1e-9)));
    axis->setLabelFormat(integers ? QStringLiteral("%d") : QStringLiteral("%.%1f").arg(decimals));
    axis->setVisible(true);
}

void ChartWidget::layOutNow()
{
    // The legend is a widget of its own, laid out after the chart has given it room.
    for (QGraphicsWidget *w :
         {static_cast<QGraphicsWidget *>(m_chart), static_cast<QGraphicsWidget *>(m_chart->legend())}) {
        if (w->layout()) {
            w->layout()->activate();
        }
    }
}

void ChartWidget::render(QPainter *painter, QSize size)
{
    // Draw at the asked size, not the widget's: lay the chart out at that size,
    // paint it, and put it back as it was.
    const QRectF old = m_chart->geometry();
    m_chart->setGeometry(QRectF(old.topLeft(), QSizeF(size)));
    layOutNow();
    painter->setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing | QPainter::SmoothPixmapTransform);
    m_chart->scene()->render(painter, QRectF(QPointF(0, 0), QSizeF(size)), QRectF(old.topLeft(), QSizeF(size)));
    m_chart->setGeometry(old);
    layOutNow();
}

QImage ChartWidget::toImage(QSize size)
{
    if (size.isEmpty()) {
        size = this->size();
    }
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QPainter painter(&image);
    render(&painter, size);
    painter.end();
    return image;
}

Status ChartWidget::exportPng(const QString &path, QSize size)
{
    const QImage image = toImage(size);
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    if (!image.save(&buffer, "PNG")) {
        return chartError(QStringLiteral("cannot write %1: the PNG could not be encoded").arg(path));
    }
    // core/safefile: atomic for a regular file; /dev/null or a FIFO is written into, not replaced.
    if (Status s = writeOutput(path, png, QStringLiteral("the chart")); !s) {
        return chartError(s.error().message);
    }
    return Unit{};
}

Status ChartWidget::exportSvg(const QString &path, QSize size)
{
    if (size.isEmpty()) {
        size = this->size();
    }
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator generator;
    generator.setOutputDevice(&buffer);
    generator.setSize(size);
    generator.setViewBox(QRect(QPoint(0, 0), size));
    // Fonts are in points: at the screen's resolution the text is as large, relative to the chart, as in the PNG.
    generator.setResolution(logicalDpiY());
    generator.setTitle(m_plainTitle);
    generator.setDescription(QStringLiteral("Kernel Playground"));
    QPainter painter(&generator);
    painter.fillRect(QRect(QPoint(0, 0), size), Qt::white);
    render(&painter, size);
    painter.end();

    if (Status s = writeOutput(path, buffer.data(), QStringLiteral("the chart")); !s) {
        return chartError(s.error().message);
    }
    return Unit{};
}

TimingChart::TimingChart(QWidget *parent)
    : ChartWidget(parent)
{
    m_xAxis = addValueAxis(Qt::AlignBottom);
    m_yAxis = addValueAxis(Qt::AlignLeft);
}

void TimingChart::clear(const QString &message)
{
    m_samples = nullptr;
    m_bars = nullptr;
    m_timeAxis = nullptr;
    m_binEdgesMs.clear();
    m_mode = Mode::Empty;
    m_runNumber = 0;
    reset(message);
}

bool TimingChart::prepare(const RunRecord &record)
{
    clear();
    m_runNumber = record.number;
    if (record.failed()) {
        reset(QStringLiteral("%1 failed (%2): %3")
                  .arg(heading(record), Error::codeName(record.result.error->code), record.result.error->toString()));
        return false;
    }
    if (record.result.samplesMs.isEmpty()) {
        QString text = heading(record) + QStringLiteral(": no timing samples");
        if (!record.result.timingNote.isEmpty()) {
            text += QStringLiteral(" (%1)").arg(record.result.timingNote);
        }
        reset(text);
        return false;
    }
    return true;
}

void TimingChart::showSamples(const RunRecord &record)
{
    if (!prepare(record)) {
        return;
    }
    const TimingStats st = record.stats();
    const QList<double> &samples = record.result.samplesMs;
    m_unit = timeUnitFor(st.medianMs);
    const double k = m_unit.perMs;
    const qsizetype n = samples.size();

    // Not a QScatterSeries: it makes a graphics item per point (half a second
    // for 10 000 samples). A line series with an invisible line and a "light
    // marker" image paints every point in one go.
    auto *points = new QLineSeries;
    chart()->addSeries(points);
    points->setName(QStringLiteral("samples"));
    points->setPen(QPen(Qt::transparent));
    const qreal markerSize = n > 2000 ? 3 : 5;
    points->setMarkerSize(markerSize);
    points->setLightMarker(markerImage(kSampleColor, markerSize));
    const auto markers = chart()->legend()->markers(points);
    for (QLegendMarker *m : markers) {
        m->setShape(QLegend::MarkerShapeCircle);
        m->setBrush(kSampleColor);
        m->setPen(QPen(kSampleColor.darker(120)));
    }

    const double xMax = std::max<double>(1, double(n - 1));
    auto *median = new QLineSeries;
    median->setName(QStringLiteral("median %1").arg(formatDuration(st.medianMs)));
    median->setPen(QPen(kMedianColor, 2));
    median->append(0, st.medianMs * k);
    median->append(xMax, st.medianMs * k);

    chart()->addSeries(median);
    const double lo = st.minMs * k;
    const double hi = st.maxMs * k;
    const double pad = hi > lo ? 0.05 * (hi - lo) : std::max(std::abs(hi) * 0.01, 1e-9);
    // Half a sample either side, so the first and last points are not cut in half.
    setUpAxis(m_xAxis, QStringLiteral("sample"), -0.5, xMax + 0.5, true);
    setUpAxis(m_yAxis, QStringLiteral("time (%1)").arg(m_unit.name), std::max(0.0, lo - pad), hi + pad, false);
    for (QAbstractSeries *s : {static_cast<QAbstractSeries *>(points), static_cast<QAbstractSeries *>(median)}) {
        s->attachAxis(m_xAxis);
        s->attachAxis(m_yAxis);
    }
    QList<QPointF> xy;
    xy.reserve(n);
    for (qsizetype i = 0; i < n; ++i) {
        xy << QPointF(double(i), samples[i] * k);
    }
    points->replace(xy);
    setTitle(heading(record), QStringLiteral("%1 samples: median %2, min %3, max %4, noise %5 %")
                                  .arg(n)
                                  .arg(formatDuration(st.medianMs), formatDuration(st.minMs), formatDuration(st.maxMs),
                                       QString::number(st.noise * 100, 'f', 2)));
    m_samples = points;
    m_timeAxis = m_yAxis;
    m_mode = Mode::Samples;
    layOutNow();
}

int TimingChart::binCountFor(const QList<double> &samplesMs)
{
    const qsizetype n = samplesMs.size();
    if (n < 2) {
        return 1;
    }
    QList<double> sorted = samplesMs;
    std::sort(sorted.begin(), sorted.end());
    const double span = sorted.back() - sorted.front();
    if (!(span > 0)) {
        return 1;
    }
    const auto quantile = [&sorted, n](double q) {
        const double pos = q * double(n - 1);
        const qsizetype i = qsizetype(std::floor(pos));
        const qsizetype j = std::min(i + 1, n - 1);
        return sorted[i] + (pos - double(i)) * (sorted[j] - sorted[i]);
    };
    const double iqr = quantile(0.75) - quantile(0.25);
    if (!(iqr > 0)) {
        return 30;
    }
    const double width = 2 * iqr / std::cbrt(double(n));
    return std::clamp(int(std::ceil(span / width)), 5, 50);
}

void TimingChart::showHistogram(const RunRecord &record)
{
    if (!prepare(record)) {
        return;
    }
    const TimingStats st = record.stats();
    const QList<double> &samples = record.result.samplesMs;
    m_unit = timeUnitFor(st.medianMs);
    const double k = m_unit.perMs;

    const int bins = binCountFor(samples);
    double lo = st.minMs;
    double hi = st.maxMs;
    if (!(hi > lo)) {
        // All samples equal: one bin around the value, so it has a width to draw.
        const double half = std::max(std::abs(lo) * 0.005, 1e-9);
        lo -= half;
        hi += half;
    }
    const double width = (hi - lo) / bins;
    QList<int> counts(bins, 0);
    for (double v : samples) {
        counts[std::clamp(int((v - lo) / width), 0, bins - 1)] += 1;
    }
    for (int i = 0; i <= bins; ++i) {
        m_binEdgesMs << lo + i * width;
    }
    // Each bar as its own outline (up, across, down), so neighbouring bars stay apart.
    auto *upper = new QLineSeries;
    for (int i = 0; i < bins; ++i) {
        const double a = m_binEdgesMs[i] * k;
        const double b = m_binEdgesMs[i + 1] * k;
        upper->append(a, 0);
        upper->append(a, counts[i]);
        upper->append(b, counts[i]);
        upper->append(b, 0);
    }
    auto *bars = new QAreaSeries(upper);
    bars->setName(QStringLiteral("samples per bin (%1 bins of %2)").arg(bins).arg(formatDuration(width)));
    bars->setColor(kSampleColor.lighter(150));
    bars->setBorderColor(kSampleColor.darker(120));

    const int maxCount = *std::max_element(counts.cbegin(), counts.cend());
    const double yMax = std::max(1.0, std::ceil(maxCount * 1.08));
    auto *median = new QLineSeries;
    median->setName(QStringLiteral("median %1").arg(formatDuration(st.medianMs)));
    median->setPen(QPen(kMedianColor, 2));
    median->append(st.medianMs * k, 0);
    median->append(st.medianMs * k, yMax);

    chart()->addSeries(bars);
    chart()->addSeries(median);
    setUpAxis(m_xAxis, QStringLiteral("time (%1)").arg(m_unit.name), lo * k, hi * k, false);
    setUpAxis(m_yAxis, QStringLiteral("samples"), 0, yMax, true);
    bars->attachAxis(m_xAxis);
    bars->attachAxis(m_yAxis);
    median->attachAxis(m_xAxis);
    median->attachAxis(m_yAxis);
    setTitle(heading(record),
             QStringLiteral("%1 samples: median %2, min %3, max %4")
                 .arg(samples.size())
                 .arg(formatDuration(st.medianMs), formatDuration(st.minMs), formatDuration(st.maxMs)));
    m_bars = bars;
    m_timeAxis = m_xAxis;
    m_mode = Mode::Histogram;
    layOutNow();
}

int TimingChart::pointCount() const
{
    return m_samples ? int(m_samples->count()) : 0;
}

std::pair<double, double> TimingChart::timeAxisRangeMs() const
{
    if (!m_timeAxis) {
        return {0, 0};
    }
    return {m_timeAxis->min() / m_unit.perMs, m_timeAxis->max() / m_unit.perMs};
}

QList<int> TimingChart::binCounts() const
{
    QList<int> counts;
    if (!m_bars) {
        return counts;
    }
    const QList<QPointF> points = m_bars->upperSeries()->points();
    for (qsizetype i = 1; i < points.size(); i += 4) {
        counts << int(std::lround(points[i].y()));
    }
    return counts;
}

} // namespace Kp
