#include "plots/occupancychart.h"

#include <QChart>
#include <QLegend>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>

#include <algorithm>
#include <functional>

namespace Kp {

namespace {

const QList<OccupancyLimit> kLimits{OccupancyLimit::Warps, OccupancyLimit::Blocks, OccupancyLimit::Registers,
                                    OccupancyLimit::SharedMemory};

/** Occupancy in percent that one limit alone would allow (capped at 100). */
double percentUnder(const OccupancyResult &r, OccupancyLimit limit)
{
    if (r.maxWarps <= 0) {
        return 0;
    }
    const qint64 warps = qint64(std::min(r.blocksBy(limit), r.maxWarps)) * r.warpsPerBlock;
    return std::min(100.0, 100.0 * double(warps) / r.maxWarps);
}

QString plainNumber(double v)
{
    return QString::number(v, 'g', QLocale::FloatingPointShortest);
}

} // namespace

OccupancyChart::OccupancyChart(QWidget *parent)
    : ChartWidget(parent)
{
    m_xAxis = addValueAxis(Qt::AlignBottom);
    m_yAxis = addValueAxis(Qt::AlignLeft);
    for (OccupancyLimit l : kLimits) {
        auto *s = new QLineSeries;
        s->setName(QStringLiteral("by %1").arg(occupancyLimitName(l)));
        m_limits << s;
    }
    m_occupancy = new QLineSeries;
    m_occupancy->setName(QStringLiteral("occupancy"));
    m_current = new QLineSeries;
    m_current->setName(QStringLiteral("current"));
    QList<QLineSeries *> all = m_limits;
    all << m_occupancy << m_current;
    for (QLineSeries *s : all) {
        chart()->addSeries(s);
        s->attachAxis(m_xAxis);
        s->attachAxis(m_yAxis);
    }
    OccupancyChart::applyColors();
    // Six entries: only where they fit; the tooltip says the same.
    setLegendMinWidth(620);
    setToolTip(tr("Thick line: the occupancy. Dashed: what each limit alone would allow (grey: warps, brown: "
                  "blocks per SM, orange: registers, green: shared memory); the thick line runs along the "
                  "limiting one. Red: the current choice."));
    showMessage(tr("No kernel to show"));
}

void OccupancyChart::applyColors()
{
    ChartWidget::applyColors();
    if (!m_occupancy) {
        return;
    }
    const ChartColors c = colors();
    // One hue per limit, dashed and thin; the occupancy thick on top of them.
    const QList<QColor> hues{c.dark ? QColor(0x9a, 0xa0, 0xa6) : QColor(0x70, 0x70, 0x70), QColor(0x8c, 0x56, 0x4b),
                             c.secondary, QColor(0x2c, 0xa0, 0x2c)};
    for (qsizetype i = 0; i < m_limits.size(); ++i) {
        QPen pen(hues[i], 1.5, Qt::DashLine);
        pen.setCosmetic(true);
        m_limits[i]->setPen(pen);
    }
    QPen main(c.primary, 3);
    main.setCosmetic(true);
    m_occupancy->setPen(main);
    QPen mark(c.accent, 2);
    mark.setCosmetic(true);
    m_current->setPen(mark);
}

void OccupancyChart::showCurve(const QString &heading, const QString &xTitle, const QList<OccupancyPoint> &points,
                               int currentX, const OccupancyResult &current, bool bytes)
{
    m_points = points;
    m_currentX = currentX;
    m_bytes = bytes;
    if (points.isEmpty()) {
        showMessage(tr("Nothing to plot"));
        return;
    }
    const double k = bytes ? 1.0 / 1024 : 1.0;
    // A step line: occupancy holds from one point to the next.
    const auto stepped = [&](const std::function<double(const OccupancyResult &)> &y) {
        QList<QPointF> xy;
        xy.reserve(2 * points.size());
        for (qsizetype i = 0; i < points.size(); ++i) {
            const double v = y(points[i].result);
            if (i > 0) {
                xy << QPointF(points[i].x * k, xy.back().y());
            }
            xy << QPointF(points[i].x * k, v);
        }
        return xy;
    };
    m_occupancy->replace(stepped([](const OccupancyResult &r) { return 100.0 * r.occupancy; }));
    for (qsizetype i = 0; i < kLimits.size(); ++i) {
        const OccupancyLimit l = kLimits[i];
        // A limit that never binds anywhere on this curve (no shared memory at
        // all, say) would lie flat at 100 %: left out.
        bool binds = false;
        for (const OccupancyPoint &p : points) {
            binds = binds || p.result.blocksBy(l) < OccupancyResult::kNoLimit;
        }
        m_limits[i]->replace(binds ? stepped([l](const OccupancyResult &r) { return percentUnder(r, l); })
                                   : QList<QPointF>());
        m_limits[i]->setVisible(binds);
    }
    const double xLo = points.first().x * k;
    const double xHi = points.last().x * k;
    m_current->replace({QPointF(currentX * k, 0), QPointF(currentX * k, 105)});
    m_current->setName(QStringLiteral("current"));
    setUpAxis(m_xAxis, xTitle, xLo, std::max(xHi, xLo + 1), !bytes, int(plotSize().width()));
    setUpAxis(m_yAxis, QStringLiteral("occupancy (%)"), 0, 105, true, int(plotSize().height()));
    QString detail = QStringLiteral("%1 blocks/SM, %2 %").arg(current.blocksPerSm).arg(qRound(current.occupancy * 100));
    detail += current.blocksPerSm > 0 ? QStringLiteral(", limited by %1").arg(occupancyLimitName(current.limiter))
                                      : QStringLiteral(", cannot run: %1").arg(current.problem);
    setTitle(heading, detail);
    showMessage(QString());
    layOutNow();
}

double OccupancyChart::occupancyAt(int x) const
{
    for (const OccupancyPoint &p : m_points) {
        if (p.x == x) {
            return p.result.occupancy;
        }
    }
    return -1;
}

QByteArray OccupancyChart::csvData() const
{
    if (m_points.isEmpty()) {
        return {};
    }
    QByteArray csv = m_bytes ? "shared_bytes" : "x";
    csv += ",blocks_per_sm,occupancy,by_warps,by_blocks,by_registers,by_shared_memory\n";
    for (const OccupancyPoint &p : m_points) {
        const auto limit = [](int v) { return v >= OccupancyResult::kNoLimit ? QByteArray() : QByteArray::number(v); };
        csv += QByteArray::number(p.x) + ',' + QByteArray::number(p.result.blocksPerSm) + ',' +
               plainNumber(p.result.occupancy).toLatin1() + ',' + limit(p.result.byWarps) + ',' +
               limit(p.result.byBlocks) + ',' + limit(p.result.byRegisters) + ',' + limit(p.result.bySharedMemory) +
               '\n';
    }
    return csv;
}

} // namespace Kp
