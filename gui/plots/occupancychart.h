#pragma once

#include "occupancy/occupancy.h"
#include "plots/timingchart.h"

#include <QList>
#include <QString>

namespace Kp {

/**
 * Occupancy against one launch parameter (block size, registers per
 * thread, shared memory per block): the occupancy as a thick line, what each
 * limit alone would allow as thin dashed lines (so the one the thick line
 * runs along is the limiting factor), and the current choice as a vertical
 * line. GUI thread only.
 */
class OccupancyChart : public ChartWidget
{
    Q_OBJECT
public:
    explicit OccupancyChart(QWidget *parent = nullptr);

    /**
     * Shows points (x in xUnit: threads, registers or bytes, shown in KiB
     * when bytes) with the current choice at currentX; its result names the
     * limit in the title.
     */
    void showCurve(const QString &heading, const QString &xTitle, const QList<OccupancyPoint> &points, int currentX,
                   const OccupancyResult &current, bool bytes = false);

    int pointCount() const { return int(m_points.size()); }
    int currentX() const { return m_currentX; }
    /** Occupancy of the curve at x (0..1), -1 when x is not one of its points. */
    double occupancyAt(int x) const;
    /** x, blocks per SM, occupancy and blocks under each limit, one line per point. */
    QByteArray csvData() const override;

protected:
    void applyColors() override;

private:
    QList<OccupancyPoint> m_points;
    int m_currentX = 0;
    bool m_bytes = false;
    QLineSeries *m_occupancy = nullptr; ///< owned by the chart
    QList<QLineSeries *> m_limits;      ///< warps, blocks, registers, shared memory
    QLineSeries *m_current = nullptr;
    QValueAxis *m_xAxis = nullptr;
    QValueAxis *m_yAxis = nullptr;
};

} // namespace Kp
