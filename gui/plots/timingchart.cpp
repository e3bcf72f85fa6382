#include "plots/timingchart.h"

#include "core/safefile.h"

#include <QAbstractAxis>
#include <QAreaSeries>
#include <QBuffer>
#include <QChart>
#include <QChartView>
#include <QContextMenuEvent>
#include <QFileDialog>
#include <QFontMetricsF>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QResizeEvent>
#include <QStackedLayout>
#include <QSvgGenerator>
#include <QTimer>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace Kp {

namespace {

Error chartError(const QString &message)
{
    return Error{QStringLiteral("plots"), Error::Code::BadInput, {}, message};
}

/** 1, 2, 2.5 or 5 times a power of ten, so that span holds about `ticks` steps. */
double niceStep(double span, int ticks)
{
    const double raw = span / ticks;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double norm = raw / magnitude;
    const double nice = norm < 1.5 ? 1 : norm < 2.25 ? 2 : norm < 3.5 ? 2.5 : norm < 7 ? 5 : 10;
    return nice * magnitude;
}

/** The next smaller step of niceStep()'s sequence (5 -> 2.5 -> 2 -> 1 -> 0.5 ...). */
double smallerStep(double step)
{
    const double magnitude = std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    const double norm = std::round(step / magnitude * 10) / 10;
    if (norm > 2.5) {
        return 2.5 * magnitude;
    }
    if (norm > 2) {
        return 2 * magnitude;
    }
    if (norm > 1) {
        return magnitude;
    }
    return 0.5 * magnitude;
}

QString heading(const RunRecord &r)
{
    QString h = QStringLiteral("#%1 %2").arg(r.number).arg(r.kernel);
    if (!r.label.isEmpty()) {
        h += QStringLiteral(" (%1)").arg(r.label);
    }
    return h;
}

/** a blended towards b by t (0: a, 1: b). */
QColor mix(const QColor &a, const QColor &b, double t)
{
    return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * t),
                            float(a.greenF() + (b.greenF() - a.greenF()) * t),
                            float(a.blueF() + (b.blueF() - a.blueF()) * t));
}

/** Shortest text that reads back as the same double. */
QString plainNumber(double v)
{
    return QString::number(v, 'g', QLocale::FloatingPointShortest);
}

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

ChartColors ChartColors::fromPalette(const QPalette &palette)
{
    ChartColors c;
    c.background = palette.color(QPalette::Base);
    c.foreground = palette.color(QPalette::Text);
    c.dark = c.background.lightness() < 128;
    c.grid = mix(c.background, c.foreground, c.dark ? 0.18 : 0.12);
    c.axisLine = mix(c.background, c.foreground, 0.45);
    // Tableau's blue, orange and red; lighter on a dark background so they keep their contrast.
    c.primary = c.dark ? QColor(0x5d, 0xa5, 0xe8) : QColor(0x1f, 0x77, 0xb4);
    c.secondary = c.dark ? QColor(0xff, 0xa5, 0x4c) : QColor(0xe0, 0x6c, 0x00);
    c.accent = c.dark ? QColor(0xff, 0x6b, 0x6b) : QColor(0xd6, 0x27, 0x28);
    return c;
}

ChartWidget::ChartWidget(QWidget *parent)
    : QWidget(parent)
{
    m_chart = new QChart;
    // Animations would make exports and tests see half-drawn charts.
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setMargins(QMargins(2, 2, 2, 2));
    m_chart->setBackgroundRoundness(0);
    // The dock is short at 1280x800: every pixel of height goes to the plot.
    if (QGraphicsLayout *layout = m_chart->layout()) {
        layout->setContentsMargins(0, 0, 0, 0);
    }
    m_view = new QChartView(m_chart);
    m_view->setRenderHints(QPainter::Antialiasing | QPainter::SmoothPixmapTransform);
    m_view->setMinimumSize(200, 110);
    m_view->setFrameShape(QFrame::NoFrame);
    m_message = new QLabel;
    m_message->setObjectName(QStringLiteral("chartMessage"));
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message->setMargin(12);
    m_stack = new QStackedLayout(this);
    m_stack->addWidget(m_view);
    m_stack->addWidget(m_message);
    ChartWidget::applyColors();
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
    setTitle(message, {});
    showMessage(message);
}

void ChartWidget::showMessage(const QString &message)
{
    // An export of an empty chart still says why it is empty.
    if (!message.isEmpty()) {
        setTitle(message, {});
    }
    m_message->setText(message);
    m_stack->setCurrentWidget(message.isEmpty() ? static_cast<QWidget *>(m_view) : m_message);
}

void ChartWidget::setTitle(const QString &heading, const QString &detail)
{
    m_plainTitle = detail.isEmpty() ? heading : heading + QLatin1Char('\n') + detail;
    m_titleHeading = heading;
    m_titleDetail = detail;
    fitTitle(width());
}

void ChartWidget::fitTitle(int width)
{
    if (m_titleHeading.isEmpty()) {
        m_chart->setTitle({});
        return;
    }
    // One line, as much of the detail as fits (its comma-separated parts from
    // the front): the dock is short, a second line would take the plot's
    // height, and Qt Charts would cut the line at the end with "...".
    QFont bold = m_chart->titleFont();
    bold.setBold(true);
    const QFontMetricsF boldMetrics(bold);
    const QFontMetricsF metrics(m_chart->titleFont());
    const double room = std::max(0, width - 16);
    QStringList parts = m_titleDetail.split(QStringLiteral(", "), Qt::SkipEmptyParts);
    const double headingWidth = boldMetrics.horizontalAdvance(m_titleHeading + QStringLiteral("  "));
    while (!parts.isEmpty() && headingWidth + metrics.horizontalAdvance(parts.join(QStringLiteral(", "))) > room) {
        parts.removeLast();
    }
    QString html = QStringLiteral("<b>%1</b>").arg(m_titleHeading.toHtmlEscaped());
    if (!parts.isEmpty()) {
        html += QStringLiteral("&nbsp;&nbsp;") + parts.join(QStringLiteral(", ")).toHtmlEscaped();
    }
    m_chart->setTitle(html);
}

void ChartWidget::fitToSize(QSize size)
{
    fitTitle(size.width());
    // The legend only where there is height to spare: in the short dock the
    // title says what the lines are.
    m_chart->legend()->setVisible(m_wantLegend && size.height() >= kLegendMinHeight &&
                                  size.width() >= m_legendMinWidth);
}

void ChartWidget::setLegendMinWidth(int width)
{
    m_legendMinWidth = width;
    fitToSize(size());
}

void ChartWidget::setLegendWanted(bool wanted)
{
    m_wantLegend = wanted;
    fitToSize(size());
}

void ChartWidget::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    fitToSize(event->size());
    // The ticks were chosen for the old size: a chart made tall and then
    // squeezed into a short dock kept a tick per 12 pixels, and Qt Charts
    // cut every label to "...". Choose them again once the chart has laid
    // itself out at the new size (it does so after this event).
    if (!m_retickQueued) {
        m_retickQueued = true;
        QTimer::singleShot(0, this, [this] {
            m_retickQueued = false;
            const QSizeF plot = plotSize();
            for (QAbstractAxis *a : m_chart->axes()) {
                auto *axis = qobject_cast<QValueAxis *>(a);
                if (!axis || !axis->isVisible() || axis->tickType() != QValueAxis::TicksDynamic) {
                    continue;
                }
                const bool horizontal = axis->orientation() == Qt::Horizontal;
                setUpAxis(axis, axis->titleText(), axis->min(), axis->max(), axis->labelFormat() == QLatin1String("%d"),
                          int(horizontal ? plot.width() : plot.height()));
            }
        });
    }
}

QValueAxis *ChartWidget::addValueAxis(Qt::Alignment alignment)
{
    auto *axis = new QValueAxis;
    axis->setVisible(false);
    axis->setMinorTickCount(0);
    // Ticks on round numbers rather than at fixed fractions of an arbitrary range.
    axis->setTickType(QValueAxis::TicksDynamic);
    m_chart->addAxis(axis, alignment);
    applyColors();
    return axis;
}

void ChartWidget::setUpAxis(QValueAxis *axis, const QString &title, double lo, double hi, bool integers, int pixels)
{
    if (!(hi > lo)) {
        hi = lo + (integers ? 1 : std::max(std::abs(lo) * 0.01, 1e-9));
    }
    axis->setTitleText(title);
    // About one tick per 70 pixels of a horizontal axis (labels like "0.2345"
    // need that much) and per 30 of a vertical one; at least two ticks in
    // view, three on a vertical axis.
    const bool horizontal = axis->orientation() == Qt::Horizontal;
    const int ticks = std::clamp(pixels / (horizontal ? 70 : 30), horizontal ? 2 : 3, 8);
    double step = niceStep(hi - lo, ticks);
    const auto inView = [lo, hi](double s) { return std::floor(hi / s) - std::ceil(lo / s) + 1; };
    while (inView(step) < (horizontal ? 2 : 3) && step > (hi - lo) * 1e-3) {
        step = smallerStep(step);
    }
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
    // Enough decimals for the step: 0.25 needs two, 0.2 one.
    int decimals = 0;
    if (!integers) {
        while (decimals < 9 && std::abs(step * std::pow(10.0, decimals) - std::round(step * std::pow(10.0, decimals))) >
                                   1e-6 * step * std::pow(10.0, decimals)) {
            ++decimals;
        }
    }
    axis->setLabelFormat(integers ? QStringLiteral("%d") : QStringLiteral("%.%1f").arg(decimals));
    axis->setVisible(true);
}

QSizeF ChartWidget::plotSize() const
{
    const QRectF area = m_chart->plotArea();
    if (area.width() > 20 && area.height() > 20) {
        return area.size();
    }
    // Not laid out yet: the widget less room for labels, titles and the legend.
    const QSize s = size().isEmpty() ? QSize(640, 300) : size();
    return QSizeF(std::max(100, s.width() - 70), std::max(60, s.height() - 80));
}

void ChartWidget::applyColors()
{
    m_colors = ChartColors::fromPalette(palette());
    const ChartColors &c = m_colors;
    m_chart->setBackgroundBrush(c.background);
    m_chart->setBackgroundPen(Qt::NoPen);
    m_chart->setPlotAreaBackgroundVisible(false);
    m_chart->setTitleBrush(c.foreground);
    QFont small = font();
    if (small.pointSizeF() > 0) {
        small.setPointSizeF(std::max(7.0, small.pointSizeF() * 0.9));
    }
    m_chart->setTitleFont(font());
    fitTitle(width());
    m_chart->legend()->setLabelColor(c.foreground);
    m_chart->legend()->setFont(small);
    m_chart->legend()->setBrush(Qt::NoBrush);
    m_chart->legend()->setPen(Qt::NoPen);
    const auto axes = m_chart->axes();
    for (QAbstractAxis *axis : axes) {
        axis->setLabelsBrush(c.foreground);
        axis->setLabelsFont(small);
        axis->setTitleBrush(c.foreground);
        QFont titleFont = small;
        titleFont.setBold(false);
        axis->setTitleFont(titleFont);
        axis->setGridLineColor(c.grid);
        axis->setLinePenColor(c.axisLine);
        axis->setShadesVisible(false);
    }
}

void ChartWidget::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) {
        applyColors();
    }
}

void ChartWidget::contextMenuEvent(QContextMenuEvent *event)
{
    QMenu menu(this);
    const bool shown = message().isEmpty() && !csvData().isEmpty();
    QAction *png = menu.addAction(tr("Save Chart as PNG..."), this, &ChartWidget::exportPngWithDialog);
    QAction *svg = menu.addAction(tr("Save Chart as SVG..."), this, &ChartWidget::exportSvgWithDialog);
    menu.addSeparator();
    QAction *csv = menu.addAction(tr("Save Data as CSV..."), this, &ChartWidget::exportCsvWithDialog);
    png->setEnabled(shown);
    svg->setEnabled(shown);
    csv->setEnabled(shown);
    menu.exec(event->globalPos());
}

void ChartWidget::exportPngWithDialog()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Save Chart as PNG"), QStringLiteral("chart.png"),
                                                      tr("PNG images (*.png)"));
    if (path.isEmpty()) {
        return;
    }
    if (Status s = exportPng(path, QSize(1200, 700)); !s) {
        QMessageBox::warning(this, tr("Save Chart as PNG"), s.error().message);
    }
}

void ChartWidget::exportSvgWithDialog()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Save Chart as SVG"), QStringLiteral("chart.svg"),
                                                      tr("SVG images (*.svg)"));
    if (path.isEmpty()) {
        return;
    }
    if (Status s = exportSvg(path, QSize(1200, 700)); !s) {
        QMessageBox::warning(this, tr("Save Chart as SVG"), s.error().message);
    }
}

void ChartWidget::exportCsvWithDialog()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Save Chart Data as CSV"), QStringLiteral("chart.csv"),
                                                      tr("CSV files (*.csv)"));
    if (path.isEmpty()) {
        return;
    }
    if (Status s = exportCsv(path); !s) {
        QMessageBox::warning(this, tr("Save Chart Data as CSV"), s.error().message);
    }
}

Status ChartWidget::exportCsv(const QString &path) const
{
    const QByteArray csv = csvData();
    if (csv.isEmpty()) {
        return chartError(QStringLiteral("cannot write %1: the chart shows no data").arg(path));
    }
    if (Status s = writeOutput(path, csv, QStringLiteral("the chart's data")); !s) {
        return chartError(s.error().message);
    }
    return Unit{};
}

QStringList ChartWidget::visibleTexts() const
{
    QStringList texts;
    if (!m_chart->scene() || !message().isEmpty()) {
        return texts;
    }
    const auto items = m_chart->scene()->items();
    for (const QGraphicsItem *item : items) {
        if (!item->isVisible()) {
            continue;
        }
        QString text;
        if (const auto *t = dynamic_cast<const QGraphicsTextItem *>(item)) {
            text = t->toPlainText();
        } else if (const auto *st = dynamic_cast<const QGraphicsSimpleTextItem *>(item)) {
            text = st->text();
        }
        if (!text.trimmed().isEmpty()) {
            texts << text;
        }
    }
    return texts;
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
    fitToSize(size);
    m_chart->setGeometry(QRectF(old.topLeft(), QSizeF(size)));
    layOutNow();
    painter->setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing | QPainter::SmoothPixmapTransform);
    m_chart->scene()->render(painter, QRectF(QPointF(0, 0), QSizeF(size)), QRectF(old.topLeft(), QSizeF(size)));
    fitToSize(this->size());
    m_chart->setGeometry(old);
    layOutNow();
}

QImage ChartWidget::toImage(QSize size)
{
    if (size.isEmpty()) {
        size = this->size();
    }
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(m_colors.background);
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
    painter.fillRect(QRect(QPoint(0, 0), size), m_colors.background);
    render(&painter, size);
    painter.end();

    if (Status s = writeOutput(path, buffer.data(), QStringLiteral("the chart")); !s) {
        return chartError(s.error().message);
    }
    return Unit{};
}

/**
 * The decimated samples: each column's fastest and slowest sample joined by
 * one vertical line, painted straight onto the plot area. As a QLineSeries
 * the same 2,000 points cost half of a run's landing in Results: Qt Charts
 * strokes a series' whole path into a hover shape on every change
 * (LineChartItem::updateGeometry), and this chart needs no hover. The
 * series m_columns stays, empty, for the legend and the axes' mapping.
 */
class TimingChart::ColumnLines : public QGraphicsItem
{
public:
    ColumnLines(QChart *chart, QAbstractSeries *mappedBy)
        : QGraphicsItem(chart)
        , m_chart(chart)
        , m_mappedBy(mappedBy)
    {
        setAcceptedMouseButtons(Qt::NoButton);
        // Above the grid and axis lines, below the series (the median line).
        setZValue(3.5);
        setVisible(false);
    }
    void setPoints(QList<QPointF> points)
    {
        m_points = std::move(points);
        update();
    }
    void clear() { setPoints({}); }
    qsizetype count() const { return m_points.size(); }
    void setPen(const QPen &pen)
    {
        m_pen = pen;
        update();
    }
    /** The plot area moved or the axes' ranges changed: the lines are drawn anew. */
    void replot()
    {
        prepareGeometryChange();
        update();
    }
    QRectF boundingRect() const override { return m_chart->plotArea(); }
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *, QWidget *) override
    {
        if (m_points.size() < 2) {
            return;
        }
        // Value axes are linear: two points fix the map to the chart's coordinates.
        const QPointF o = m_chart->mapToPosition(QPointF(0, 0), m_mappedBy);
        const QPointF u = m_chart->mapToPosition(QPointF(1, 1), m_mappedBy);
        const double sx = u.x() - o.x();
        const double sy = u.y() - o.y();
        QList<QLineF> lines;
        lines.reserve(m_points.size() / 2);
        for (qsizetype i = 0; i + 1 < m_points.size(); i += 2) {
            const double x = o.x() + sx * m_points[i].x();
            double y0 = o.y() + sy * m_points[i].y();
            double y1 = o.y() + sy * m_points[i + 1].y();
            if (std::abs(y1 - y0) < 1) { // a column of equal samples is still a pixel
                const double mid = 0.5 * (y0 + y1);
                y0 = mid - 0.5;
                y1 = mid + 0.5;
            }
            lines << QLineF(x, y0, x, y1);
        }
        painter->save();
        painter->setClipRect(m_chart->plotArea());
        painter->setPen(m_pen);
        painter->drawLines(lines);
        painter->restore();
    }

private:
    QChart *m_chart;
    QAbstractSeries *m_mappedBy;
    QList<QPointF> m_points;
    QPen m_pen;
};

TimingChart::TimingChart(QWidget *parent)
    : ChartWidget(parent)
{
    m_xAxis = addValueAxis(Qt::AlignBottom);
    m_yAxis = addValueAxis(Qt::AlignLeft);
    // The series live as long as the chart and are filled and shown per mode:
    // creating and attaching series is most of what Qt Charts costs per update.
    // The chart owns what is added to it; the bars' outline is only referenced
    // by the area series, so the widget owns that one.
    m_points = new QLineSeries;
    m_points->setName(QStringLiteral("samples"));
    m_columns = new QLineSeries;
    m_columns->setName(QStringLiteral("samples (fastest and slowest per column)"));
    m_median = new QLineSeries;
    m_barOutline = new QLineSeries(this);
    m_bars = new QAreaSeries(m_barOutline);
    for (QAbstractSeries *s : {static_cast<QAbstractSeries *>(m_bars), static_cast<QAbstractSeries *>(m_points),
                               static_cast<QAbstractSeries *>(m_columns), static_cast<QAbstractSeries *>(m_median)}) {
        chart()->addSeries(s);
        s->attachAxis(m_xAxis);
        s->attachAxis(m_yAxis);
        s->setVisible(false);
    }
    m_columnLines = new ColumnLines(chart(), m_columns);
    connect(chart(), &QChart::plotAreaChanged, this, [this] { m_columnLines->replot(); });
    for (QValueAxis *axis : {m_xAxis, m_yAxis}) {
        connect(axis, &QValueAxis::rangeChanged, this, [this] { m_columnLines->replot(); });
    }
    TimingChart::applyColors();
    showMessage(QString());
}

void TimingChart::applyColors()
{
    ChartWidget::applyColors();
    if (!m_columnLines) {
        return; // the base constructor's call, before the series exist
    }
    const ChartColors c = colors();
    // Not a QScatterSeries: it makes a graphics item per point. A line series
    // with an invisible line and a "light marker" image paints every point in one go.
    m_points->setPen(QPen(Qt::transparent));
    m_points->setLightMarker(markerImage(c.primary, m_points->markerSize()));
    // Cosmetic: one device pixel wide at any scale, drawn by the raster
    // engine's line path instead of stroked with joins (a tenth of the cost
    // for a thousand columns).
    QPen columnPen(c.primary, 1);
    columnPen.setCosmetic(true);
    m_columns->setPen(columnPen); // its legend marker's colour
    m_columnLines->setPen(columnPen);
    m_median->setPen(QPen(c.accent, 2));
    m_bars->setColor(c.dark ? c.primary.darker(160) : c.primary.lighter(150));
    m_bars->setBorderColor(c.primary);
    const auto markers = chart()->legend()->markers(m_points);
    for (QLegendMarker *m : markers) {
        m->setShape(QLegend::MarkerShapeCircle);
        m->setBrush(c.primary);
        m->setPen(QPen(c.primary));
    }
}

void TimingChart::hideSeries()
{
    for (QAbstractSeries *s : {static_cast<QAbstractSeries *>(m_bars), static_cast<QAbstractSeries *>(m_points),
                               static_cast<QAbstractSeries *>(m_columns), static_cast<QAbstractSeries *>(m_median)}) {
        s->setVisible(false);
    }
    m_columnLines->setVisible(false);
}

void TimingChart::clear(const QString &message)
{
    hideSeries();
    // The samples' points go too, not only out of sight: every axis change
    // recomputes each line series' geometry (its path and hover shape) with
    // the points it holds, hidden or not: a new run's axes cost thousands of
    // old points twice over (bench_gui: a 2,000-sample run lands in Results
    // in 3.6 ms instead of 4.4 here).
    m_points->clear();
    m_columnLines->clear();
    m_xAxis->setVisible(false);
    m_yAxis->setVisible(false);
    m_timeAxis = nullptr;
    m_binEdgesMs.clear();
    m_binCounts.clear();
    m_samplesMs.clear();
    m_decimated = false;
    m_mode = Mode::Empty;
    m_runNumber = 0;
    setTitle({}, {});
    showMessage(message);
}

bool TimingChart::prepare(const RunRecord &record)
{
    clear();
    m_runNumber = record.number;
    if (record.failed()) {
        showMessage(
            QStringLiteral("%1 failed (%2): %3")
                .arg(heading(record), Error::codeName(record.result.error->code), record.result.error->toString()));
        return false;
    }
    if (record.result.samplesMs.isEmpty()) {
        QString text = heading(record) + QStringLiteral(": no timing samples");
        if (!record.result.timingNote.isEmpty()) {
            text += QStringLiteral(" (%1)").arg(record.result.timingNote);
        }
        showMessage(text);
        return false;
    }
    m_samplesMs = record.result.samplesMs;
    return true;
}

QList<QPointF> TimingChart::decimate(const QList<double> &samples, int columns, double scale)
{
    const qsizetype n = samples.size();
    QList<QPointF> points;
    if (n <= columns || columns < 1) {
        points.reserve(n);
        for (qsizetype i = 0; i < n; ++i) {
            points << QPointF(double(i), samples[i] * scale);
        }
        return points;
    }
    points.reserve(2 * columns);
    for (int c = 0; c < columns; ++c) {
        const qsizetype from = n * c / columns;
        const qsizetype to = n * (c + 1) / columns;
        double lo = samples[from];
        double hi = lo;
        for (qsizetype i = from + 1; i < to; ++i) {
            lo = std::min(lo, samples[i]);
            hi = std::max(hi, samples[i]);
        }
        const double x = 0.5 * double(from + to - 1);
        points << QPointF(x, lo * scale) << QPointF(x, hi * scale);
    }
    return points;
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
    const QSizeF plot = plotSize();

    const double xMax = std::max<double>(1, double(n - 1));
    const double lo = st.minMs * k;
    const double hi = st.maxMs * k;
    const double pad = hi > lo ? 0.05 * (hi - lo) : std::max(std::abs(hi) * 0.01, 1e-9);
    // Half a sample either side, so the first and last points are not cut in half.
    setUpAxis(m_xAxis, QStringLiteral("sample"), -0.5, xMax + 0.5, true, int(plot.width()));
    setUpAxis(m_yAxis, QStringLiteral("time (%1)").arg(m_unit.name), std::max(0.0, lo - pad), hi + pad, false,
              int(plot.height()));

    // Few samples: every one a dot. Many: per column of pixels the fastest and
    // the slowest sample joined by a line, which keeps every outlier in view
    // and costs the same for 2,000 samples or 100,000.
    const int columns = std::max(kColumns, int(plot.width()));
    m_decimated = n > kMaxMarkers;
    QLineSeries *shown = m_decimated ? m_columns : m_points;
    if (!m_decimated) {
        const qreal markerSize = n > 200 ? 4 : 6;
        if (m_points->markerSize() != markerSize) {
            m_points->setMarkerSize(markerSize);
            m_points->setLightMarker(markerImage(colors().primary, markerSize));
        }
    }
    if (m_decimated) {
        m_columnLines->setPoints(decimate(samples, columns, k));
        m_columnLines->setVisible(true);
    } else {
        m_points->replace(decimate(samples, int(n), k));
    }
    shown->setVisible(true);
    m_median->setName(QStringLiteral("median %1").arg(formatDuration(st.medianMs)));
    m_median->replace({QPointF(0, st.medianMs * k), QPointF(xMax, st.medianMs * k)});
    m_median->setVisible(true);
    setTitle(heading(record), QStringLiteral("%1 samples: median %2, min %3, max %4, noise %5 %")
                                  .arg(n)
                                  .arg(formatDuration(st.medianMs), formatDuration(st.minMs), formatDuration(st.maxMs),
                                       QString::number(st.noise * 100, 'f', 2)));
    m_timeAxis = m_yAxis;
    m_mode = Mode::Samples;
    showMessage(QString());
    layOutNow();
}

int TimingChart::binCountFor(const QList<double> &samplesMs)
{
    const qsizetype n = samplesMs.size();
    if (n < 2) {
        return 1;
    }
    QList<double> values = samplesMs;
    const auto [lowest, highest] = std::minmax_element(values.cbegin(), values.cend());
    const double span = *highest - *lowest;
    if (!(span > 0)) {
        return 1;
    }
    // Two quantiles by selection, not a sort: O(n) for 100,000 samples.
    const auto quantile = [&values, n](double q) {
        const double pos = q * double(n - 1);
        const qsizetype i = qsizetype(std::floor(pos));
        std::nth_element(values.begin(), values.begin() + i, values.end());
        const double a = values[i];
        const double b = i + 1 < n ? *std::min_element(values.begin() + i + 1, values.end()) : a;
        return a + (pos - double(i)) * (b - a);
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
    const QSizeF plot = plotSize();

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
    m_binCounts = QList<int>(bins, 0);
    for (double v : samples) {
        m_binCounts[std::clamp(int((v - lo) / width), 0, bins - 1)] += 1;
    }
    for (int i = 0; i <= bins; ++i) {
        m_binEdgesMs << lo + i * width;
    }
    // Each bar as its own outline (up, across, down), so neighbouring bars stay apart.
    QList<QPointF> outline;
    outline.reserve(4 * bins);
    for (int i = 0; i < bins; ++i) {
        const double a = m_binEdgesMs[i] * k;
        const double b = m_binEdgesMs[i + 1] * k;
        outline << QPointF(a, 0) << QPointF(a, m_binCounts[i]) << QPointF(b, m_binCounts[i]) << QPointF(b, 0);
    }
    m_barOutline->replace(outline);
    m_bars->setName(QStringLiteral("samples per bin (%1 bins of %2)").arg(bins).arg(formatDuration(width)));

    const int maxCount = *std::max_element(m_binCounts.cbegin(), m_binCounts.cend());
    const double yMax = std::max(1.0, std::ceil(maxCount * 1.08));
    m_median->setName(QStringLiteral("median %1").arg(formatDuration(st.medianMs)));
    m_median->replace({QPointF(st.medianMs * k, 0), QPointF(st.medianMs * k, yMax)});

    setUpAxis(m_xAxis, QStringLiteral("time (%1)").arg(m_unit.name), lo * k, hi * k, false, int(plot.width()));
    setUpAxis(m_yAxis, QStringLiteral("samples"), 0, yMax, true, int(plot.height()));
    m_bars->setVisible(true);
    m_median->setVisible(true);
    setTitle(heading(record),
             QStringLiteral("%1 samples: median %2, min %3, max %4")
                 .arg(samples.size())
                 .arg(formatDuration(st.medianMs), formatDuration(st.minMs), formatDuration(st.maxMs)));
    m_timeAxis = m_xAxis;
    m_mode = Mode::Histogram;
    showMessage(QString());
    layOutNow();
}

int TimingChart::pointCount() const
{
    if (m_mode != Mode::Samples) {
        return 0;
    }
    return int(m_decimated ? m_columnLines->count() : m_points->count());
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
    return m_mode == Mode::Histogram ? m_binCounts : QList<int>();
}

QByteArray TimingChart::csvData() const
{
    QByteArray csv;
    if (m_mode == Mode::Samples) {
        csv = "sample,time_ms\n";
        for (qsizetype i = 0; i < m_samplesMs.size(); ++i) {
            csv += QByteArray::number(i) + ',' + plainNumber(m_samplesMs[i]).toLatin1() + '\n';
        }
    } else if (m_mode == Mode::Histogram) {
        csv = "bin,from_ms,to_ms,samples\n";
        for (qsizetype i = 0; i < m_binCounts.size(); ++i) {
            csv += QByteArray::number(i) + ',' + plainNumber(m_binEdgesMs[i]).toLatin1() + ',' +
                   plainNumber(m_binEdgesMs[i + 1]).toLatin1() + ',' + QByteArray::number(m_binCounts[i]) + '\n';
        }
    }
    return csv;
}

} // namespace Kp
