#pragma once

#include "core/result.h"
#include "run/runtypes.h"
#include "run/trace.h"

#include <QSize>
#include <QString>
#include <QWidget>

class QPainter;

namespace Kp {

/**
 * A run's timeline (docs/streams.md): a lane per stream and per copy engine
 * direction, each step a bar from its measured start to its end, painted with
 * QPainter. The wheel zooms around the pointer, dragging pans, a double-click
 * fits the whole pass; hovering a bar shows the step, its duration and its
 * bytes and GB/s or its launch configuration. Above the lanes: the total
 * against the steps added up. GUI thread only.
 */
class TimelineView : public QWidget
{
    Q_OBJECT
public:
    explicit TimelineView(QWidget *parent = nullptr);

    /** Shows the run's timeline (a hint when it has none). */
    void showRun(const RunResult &result, const QString &title);
    void clear(const QString &hint);

    const QList<TimelineLane> &lanes() const { return m_lanes; }
    /** The visible range, milliseconds from the pass's start. */
    double viewStartMs() const { return m_startMs; }
    double viewEndMs() const { return m_endMs; }
    void setView(double startMs, double endMs);
    /** The span under a point of the widget, or -1. */
    int spanAt(const QPoint &pos) const;
    /** What hovering span i says. */
    QString spanText(int i) const;

    Status exportPng(const QString &path, QSize size = {});
    Status exportSvg(const QString &path, QSize size = {});
    /** The Chrome trace of the shown run (engine/run/trace). */
    Status exportTrace(const QString &path) const;

    QSize sizeHint() const override { return {640, 220}; }
    QSize minimumSizeHint() const override { return {240, 120}; }

protected:
    void paintEvent(QPaintEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void contextMenuEvent(QContextMenuEvent *event) override;

private:
    void paint(QPainter &p, const QRect &area) const;
    QRect laneRect(int lane, const QRect &area) const;
    double xToMs(double x, const QRect &area) const;
    double msToX(double ms, const QRect &area) const;

    RunResult m_result;
    QString m_title;
    QString m_hint;
    QList<TimelineLane> m_lanes;
    double m_startMs = 0;
    double m_endMs = 1;
    bool m_dragging = false;
    QPoint m_dragFrom;
    double m_dragStartMs = 0;
};

} // namespace Kp
