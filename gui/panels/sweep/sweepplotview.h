#pragma once

#include "plot/plot.h"

#include <QWidget>

namespace Kp {

/**
 * Shows an engine/plot figure (the same picture `kpg sweep --plot` writes)
 * and names the point under the pointer: a tooltip and hoverText(). The
 * palette follows the application's (dark theme: Plot::Palette::dark()).
 */
class SweepPlotView : public QWidget
{
    Q_OBJECT
public:
    explicit SweepPlotView(QWidget *parent = nullptr);

    void setFigure(const Plot::Figure &figure);
    const Plot::Figure &figure() const { return m_figure; }
    /** What hovering names now (empty when nothing is under the pointer). */
    QString hoverText() const { return m_hover; }
    /** Hovers a position as the mouse would (tests, screenshots). */
    void hoverAt(const QPointF &pos);
    Plot::Palette plotPalette() const;

    QSize sizeHint() const override { return {520, 320}; }
    QSize minimumSizeHint() const override { return {240, 160}; }

protected:
    void paintEvent(QPaintEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;

private:
    Plot::Figure m_figure;
    QString m_hover;
};

} // namespace Kp
