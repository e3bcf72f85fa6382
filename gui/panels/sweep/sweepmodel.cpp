#include "sweepmodel.h"

#include <QBrush>
#include <QColor>

namespace Kp {

SweepResultsModel::SweepResultsModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

void SweepResultsModel::setAxes(const QList<SweepAxis> &axes)
{
    beginResetModel();
    m_axes = axes;
    m_results.clear();
    endResetModel();
}

void SweepResultsModel::clear()
{
    beginResetModel();
    m_results.clear();
    endResetModel();
}

void SweepResultsModel::append(const SweepPointResult &result)
{
    const int row = int(m_results.size());
    beginInsertRows({}, row, row);
    m_results << result;
    endInsertRows();
}

int SweepResultsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_results.size());
}

int SweepResultsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_axes.size()) + int(Reason) + 1;
}

QVariant SweepResultsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    if (section < m_axes.size()) {
        return m_axes[section].name;
    }
    static const char *names[] = {"status",    "median (us)", "min (us)", "max (us)", "noise",  "throughput",
                                  "occupancy", "registers",   "spills",   "checks",   "device", "skipped / failed"};
    const int c = section - int(m_axes.size());
    return c >= 0 && c <= int(Reason) ? QString::fromLatin1(names[c]) : QVariant();
}

namespace {

QString si(double v, const QString &unit)
{
    static const struct
    {
        double scale;
        const char *prefix;
    } prefixes[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
    for (const auto &p : prefixes) {
        if (v >= p.scale) {
            return QString::number(v / p.scale, 'f', 2) + QLatin1Char(' ') + QLatin1String(p.prefix) + unit;
        }
    }
    return QString::number(v, 'f', 2) + QLatin1Char(' ') + unit;
}

} // namespace

QVariant SweepResultsModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_results.size()) {
        return {};
    }
    const SweepPointResult &p = m_results[index.row()];
    const RunResult &r = p.run.run;
    const StepResult *step = r.steps.isEmpty() ? nullptr : &r.steps.first();
    const int col = index.column();
    const bool sort = role == Qt::UserRole;
    if (role != Qt::DisplayRole && !sort && role != Qt::ToolTipRole && role != Qt::ForegroundRole) {
        return {};
    }
    if (col < m_axes.size()) {
        const QString v = p.point.values.value(col);
        if (sort) {
            bool ok = false;
            const double d = v.toDouble(&ok);
            return ok ? QVariant(d) : QVariant(v);
        }
        return role == Qt::DisplayRole || role == Qt::ToolTipRole ? QVariant(v) : QVariant();
    }
    const auto c = Column(col - m_axes.size());
    if (role == Qt::ForegroundRole) {
        if (c == Status || c == Checks) {
            if (p.status == QLatin1String("failed") || p.status == QLatin1String("check-failed")) {
                return QBrush(QColor(0xe0, 0x55, 0x55));
            }
            if (p.status == QLatin1String("skipped")) {
                return QBrush(QColor(0x99, 0x99, 0x99));
            }
        }
        return {};
    }
    const bool timed = p.timed();
    // Untimed points sort after every timed one.
    const double never = 1e300;
    switch (c) {
    case Status: return p.status;
    case Median:
        return sort    ? QVariant(timed ? r.stats.medianMs : never)
               : timed ? QVariant(QString::number(r.stats.medianMs * 1000, 'f', 3))
                       : QVariant();
    case Min:
        return sort    ? QVariant(timed ? r.stats.minMs : never)
               : timed ? QVariant(QString::number(r.stats.minMs * 1000, 'f', 3))
                       : QVariant();
    case Max:
        return sort    ? QVariant(timed ? r.stats.maxMs : never)
               : timed ? QVariant(QString::number(r.stats.maxMs * 1000, 'f', 3))
                       : QVariant();
    case Noise:
        return sort    ? QVariant(timed ? r.stats.noise : never)
               : timed ? QVariant(QString::number(r.stats.noise * 100, 'f', 2) + QStringLiteral(" %"))
                       : QVariant();
    case Throughput: {
        const double v = p.flopsPerSecond() > 0 ? p.flopsPerSecond() : p.bytesPerSecond();
        if (sort) {
            return v;
        }
        if (v <= 0) {
            return {};
        }
        return p.flopsPerSecond() > 0 ? si(v, QStringLiteral("FLOP/s")) : si(v, QStringLiteral("B/s"));
    }
    case Occupancy:
        return sort   ? QVariant(step ? step->occupancy.ratio : -1)
               : step ? QVariant(QString::number(step->occupancy.ratio * 100, 'f', 0) + QStringLiteral(" %"))
                      : QVariant();
    case Registers:
        return sort ? QVariant(step ? step->limits.numRegs : -1) : step ? QVariant(step->limits.numRegs) : QVariant();
    case Spills: {
        int spills = -1;
        if (p.run.compiled && !r.steps.isEmpty()) {
            for (const KernelInfo &k : p.run.compiled->kernels) {
                if (k.loweredName == step->loweredName || k.name == step->kernel) {
                    spills = k.resources.spillStores + k.resources.spillLoads;
                }
            }
        }
        return sort ? QVariant(spills) : spills >= 0 ? QVariant(spills) : QVariant();
    }
    case Checks:
        if (!p.run.ran || r.error) {
            return sort ? QVariant(-1) : QVariant();
        }
        return sort ? QVariant(p.run.checksPassed() ? 1 : 0)
                    : QVariant(p.run.checks.isEmpty() ? tr("none")
                               : p.run.checksPassed() ? tr("passed")
                                                      : tr("failed"));
    case Device: return p.run.ran ? QVariant(p.device) : QVariant();
    case Reason: return p.reason;
    }
    return {};
}

} // namespace Kp
