#include "panels/results/timelineview.h"

#include "core/safefile.h"

#include <QBuffer>
#include <QContextMenuEvent>
#include <QFileDialog>
#include <QImage>
#include <QMenu>
#include <QMessageBox>
#include <QMouseEvent>
#include <QPainter>
#include <QSvgGenerator>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace Kp {

namespace {

constexpr int kHeader = 22;      ///< the summary line
constexpr int kLabelWidth = 130; ///< lane names
constexpr int kAxis = 18;        ///< the time axis at the bottom
constexpr int kLaneGap = 4;

QColor kindColor(const QString &kind, const QString &direction)
{
    if (direction == QLatin1String("HtoD")) {
        return QColor(0x2e, 0x86, 0xde);
    }
    if (direction == QLatin1String("DtoH")) {
        return QColor(0x8e, 0x44, 0xad);
    }
    if (kind == QLatin1String("memset")) {
        return QColor(0x7f, 0x8c, 0x8d);
    }
    if (kind == QLatin1String("record") || kind == QLatin1String("wait")) {
        return QColor(0xe6, 0x7e, 0x22);
    }
    return QColor(0x27, 0xae, 0x60);
}

Error viewError(const QString &message)
{
    return Error{QStringLiteral("timeline"), Error::Code::BadInput, {}, message};
}

} // namespace

TimelineView::TimelineView(QWidget *parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setObjectName(QStringLiteral("timelineView"));
    m_hint = tr("No timeline yet: a timed run draws every step here");
}

void TimelineView::clear(const QString &hint)
{
    m_result = RunResult{};
    m_lanes.clear();
    m_hint = hint;
    update();
}

void TimelineView::showRun(const RunResult &result, const QString &title)
{
    m_result = result;
    m_title = title;
    m_lanes = timelineLanes(result.timeline);
    m_hint = result.timeline.isEmpty()
                 ? (result.timed ? tr("This run has no timeline") : tr("Untimed runs have no timeline: time the run"))
                 : QString();
    setView(0, std::max(1e-6, result.timelineTotalMs));
}

void TimelineView::setView(double startMs, double endMs)
{
    const double total = std::max(1e-6, m_result.timelineTotalMs);
    const double width = std::clamp(endMs - startMs, total * 1e-4, total * 1.5);
    m_startMs = std::clamp(startMs, -total * 0.25, total);
    m_endMs = m_startMs + width;
    update();
}

QRect TimelineView::laneRect(int lane, const QRect &area) const
{
    const int lanes = std::max<int>(1, int(m_lanes.size()));
    const int h = std::max(8, (area.height() - kHeader - kAxis) / lanes - kLaneGap);
    return QRect(area.left() + kLabelWidth, area.top() + kHeader + lane * (h + kLaneGap),
                 area.width() - kLabelWidth - 8, h);
}

double TimelineView::msToX(double ms, const QRect &area) const
{
    const QRect r = laneRect(0, area);
    return r.left() + (ms - m_startMs) / (m_endMs - m_startMs) * r.width();
}

double TimelineView::xToMs(double x, const QRect &area) const
{
    const QRect r = laneRect(0, area);
    return m_startMs + (x - r.left()) / std::max(1, r.width()) * (m_endMs - m_startMs);
}

int TimelineView::spanAt(const QPoint &pos) const
{
    for (qsizetype l = 0; l < m_lanes.size(); ++l) {
        const QRect r = laneRect(int(l), rect());
        if (pos.y() < r.top() || pos.y() > r.bottom()) {
            continue;
        }
        for (int i : m_lanes[l].spans) {
            const TimelineSpan &t = m_result.timeline[i];
            const double x0 = msToX(t.startMs, rect());
            const double x1 = std::max(x0 + 2, msToX(t.endMs, rect()));
            if (pos.x() >= x0 - 1 && pos.x() <= x1 + 1) {
                return i;
            }
        }
    }
    return -1;
}

QString TimelineView::spanText(int i) const
{
    const TimelineSpan &t = m_result.timeline[i];
    return QStringLiteral("step %1: %2\nstream %3\n%4 to %5 us\n%6")
        .arg(t.step + 1)
        .arg(t.label, t.stream)
        .arg(t.startMs * 1000, 0, 'f', 1)
        .arg(t.endMs * 1000, 0, 'f', 1)
        .arg(spanDetail(t));
}

void TimelineView::paint(QPainter &p, const QRect &area) const
{
    const QPalette &pal = palette();
    p.setRenderHint(QPainter::Antialiasing, false);
    if (!m_hint.isEmpty()) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(area, Qt::AlignCenter | Qt::TextWordWrap, m_hint);
        return;
    }
    const TimelineSummary s = summarizeTimeline(m_result);
    p.setPen(pal.color(QPalette::WindowText));
    p.drawText(QRect(area.left() + 4, area.top(), area.width() - 8, kHeader), Qt::AlignVCenter | Qt::AlignLeft,
               tr("%1: total %2 us, the steps add up to %3 us (%4x%5)")
                   .arg(m_title)
                   .arg(s.totalMs * 1000, 0, 'f', 1)
                   .arg(s.stepsMs * 1000, 0, 'f', 1)
                   .arg(s.overlap, 0, 'f', 2)
                   .arg(s.overlap > 1.05 ? tr(": overlapped") : tr(": nothing overlapped")));
    for (qsizetype l = 0; l < m_lanes.size(); ++l) {
        const QRect r = laneRect(int(l), area);
        p.fillRect(r, pal.color(l % 2 ? QPalette::AlternateBase : QPalette::Base));
        p.setPen(pal.color(QPalette::WindowText));
        p.drawText(QRect(area.left() + 4, r.top(), kLabelWidth - 8, r.height()), Qt::AlignVCenter | Qt::AlignLeft,
                   m_lanes[l].name);
        p.save();
        p.setClipRect(r);
        for (int i : m_lanes[l].spans) {
            const TimelineSpan &t = m_result.timeline[i];
            const double x0 = msToX(t.startMs, area);
            const double x1 = std::max(x0 + 1.5, msToX(t.endMs, area));
            const QRectF bar(x0, r.top() + 2, x1 - x0, r.height() - 4);
            const QColor c = kindColor(t.kind, t.direction);
            p.fillRect(bar, c);
            p.setPen(c.darker(140));
            p.drawRect(bar);
            if (bar.width() > 40) {
                p.setPen(Qt::white);
                p.drawText(bar.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft,
                           p.fontMetrics().elidedText(t.label, Qt::ElideRight, int(bar.width()) - 6));
            }
        }
        p.restore();
    }
    // The axis: about six ticks at round microsecond values.
    const QRect first = laneRect(0, area);
    const int axisY = area.bottom() - kAxis + 2;
    p.setPen(pal.color(QPalette::Mid));
    p.drawLine(first.left(), axisY, first.right(), axisY);
    const double spanUs = (m_endMs - m_startMs) * 1000;
    const double raw = spanUs / 6;
    const double mag = std::pow(10.0, std::floor(std::log10(std::max(raw, 1e-6))));
    double step = mag;
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        if (mag * m >= raw) {
            step = mag * m;
            break;
        }
    }
    p.setPen(pal.color(QPalette::WindowText));
    for (double us = std::ceil(m_startMs * 1000 / step) * step; us <= m_endMs * 1000; us += step) {
        const double x = msToX(us / 1000, area);
        p.drawLine(QPointF(x, axisY), QPointF(x, axisY + 3));
        p.drawText(QRectF(x - 40, axisY + 2, 80, kAxis - 2), Qt::AlignHCenter | Qt::AlignTop,
                   QStringLiteral("%1 us").arg(us, 0, 'g', 6));
    }
}

void TimelineView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    paint(p, rect());
}

void TimelineView::wheelEvent(QWheelEvent *event)
{
    if (m_lanes.isEmpty()) {
        return;
    }
    const double at = xToMs(event->position().x(), rect());
    const double factor = event->angleDelta().y() > 0 ? 0.8 : 1.25;
    setView(at - (at - m_startMs) * factor, at + (m_endMs - at) * factor);
    event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        m_dragging = true;
        m_dragFrom = event->pos();
        m_dragStartMs = m_startMs;
    }
}

void TimelineView::mouseMoveEvent(QMouseEvent *event)
{
    if (m_dragging) {
        const double perPixel = (m_endMs - m_startMs) / std::max(1, laneRect(0, rect()).width());
        const double width = m_endMs - m_startMs;
        const double start = m_dragStartMs - (event->pos().x() - m_dragFrom.x()) * perPixel;
        setView(start, start + width);
        return;
    }
    const int i = spanAt(event->pos());
    if (i >= 0) {
        QToolTip::showText(event->globalPosition().toPoint(), spanText(i), this);
    } else {
        QToolTip::hideText();
    }
}

void TimelineView::mouseReleaseEvent(QMouseEvent *)
{
    m_dragging = false;
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent *)
{
    setView(0, std::max(1e-6, m_result.timelineTotalMs));
}

void TimelineView::contextMenuEvent(QContextMenuEvent *event)
{
    if (m_lanes.isEmpty()) {
        return;
    }
    QMenu menu(this);
    const auto save = [this](const QString &caption, const QString &name, const QString &filter, auto write) {
        const QString path = QFileDialog::getSaveFileName(this, caption, name, filter);
        if (path.isEmpty()) {
            return;
        }
        if (const Status s = write(path); !s) {
            QMessageBox::warning(this, caption, s.error().message);
        }
    };
    menu.addAction(tr("Timeline as PNG..."), this, [this, save] {
        save(tr("Export timeline as PNG"), QStringLiteral("timeline.png"), tr("PNG images (*.png)"),
             [this](const QString &p) { return exportPng(p); });
    });
    menu.addAction(tr("Timeline as SVG..."), this, [this, save] {
        save(tr("Export timeline as SVG"), QStringLiteral("timeline.svg"), tr("SVG images (*.svg)"),
             [this](const QString &p) { return exportSvg(p); });
    });
    menu.addAction(tr("Chrome trace (Perfetto)..."), this, [this, save] {
        save(tr("Export timeline as a Chrome trace"), QStringLiteral("trace.json"), tr("JSON files (*.json)"),
             [this](const QString &p) { return exportTrace(p); });
    });
    menu.addAction(tr("Fit the whole pass"), this, [this] { setView(0, std::max(1e-6, m_result.timelineTotalMs)); });
    menu.exec(event->globalPos());
}

Status TimelineView::exportPng(const QString &path, QSize size)
{
    if (size.isEmpty()) {
        size = this->size();
    }
    QImage image(size, QImage::Format_ARGB32);
    image.fill(palette().color(QPalette::Window));
    QPainter painter(&image);
    paint(painter, QRect(QPoint(0, 0), size));
    painter.end();
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    if (!image.save(&buffer, "PNG")) {
        return viewError(QStringLiteral("cannot write %1: the PNG could not be encoded").arg(path));
    }
    return writeOutput(path, png, QStringLiteral("the timeline"));
}

Status TimelineView::exportSvg(const QString &path, QSize size)
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
    generator.setResolution(logicalDpiY());
    generator.setTitle(m_title);
    generator.setDescription(QStringLiteral("Kernel Playground timeline"));
    QPainter painter(&generator);
    painter.fillRect(QRect(QPoint(0, 0), size), palette().color(QPalette::Window));
    paint(painter, QRect(QPoint(0, 0), size));
    painter.end();
    return writeOutput(path, buffer.data(), QStringLiteral("the timeline"));
}

Status TimelineView::exportTrace(const QString &path) const
{
    return writeOutput(path, chromeTraceJson(m_result, m_title), QStringLiteral("the trace"));
}

} // namespace Kp
