#include "sweepplotview.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

namespace Kp {

SweepPlotView::SweepPlotView(QWidget *parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setObjectName(QStringLiteral("sweepPlot"));
}

void SweepPlotView::setFigure(const Plot::Figure &figure)
{
    m_figure = figure;
    update();
}

Plot::Palette SweepPlotView::plotPalette() const
{
    return palette().color(QPalette::Window).lightness() < 128 ? Plot::Palette::dark() : Plot::Palette::light();
}

void SweepPlotView::paintEvent(QPaintEvent *)
{
    QPainter g(this);
    Plot::render(g, QRectF(rect()), m_figure, plotPalette());
}

void SweepPlotView::hoverAt(const QPointF &pos)
{
    const std::optional<Plot::Hit> hit = Plot::hitTest(m_figure, QRectF(rect()), pos);
    m_hover = hit ? hit->text : QString();
    if (hit) {
        QToolTip::showText(mapToGlobal(pos.toPoint()), m_hover, this);
    } else {
        QToolTip::hideText();
    }
}

void SweepPlotView::mouseMoveEvent(QMouseEvent *event)
{
    hoverAt(event->position());
}

void SweepPlotView::leaveEvent(QEvent *)
{
    m_hover.clear();
}

} // namespace Kp
