#pragma once

#include "sweep/sweeprunner.h"

#include <QAbstractTableModel>

namespace Kp {

/**
 * The Sweep panel's table: one row per landed point, appended with
 * beginInsertRows so that a point arriving never resets the view (the GUI
 * stays responsive as a sweep streams in). Qt::UserRole gives numbers to
 * sort by; Qt::DisplayRole the text.
 */
class SweepResultsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { Status, Median, Min, Max, Noise, Throughput, Occupancy, Registers, Spills, Checks, Device, Reason };
    explicit SweepResultsModel(QObject *parent = nullptr);

    void setAxes(const QList<SweepAxis> &axes);
    const QList<SweepAxis> &axes() const { return m_axes; }
    void clear();
    void append(const SweepPointResult &result);
    const QList<SweepPointResult> &results() const { return m_results; }
    /** The column of a fixed column (after the axes). */
    int column(Column c) const { return int(m_axes.size()) + int(c); }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    QList<SweepAxis> m_axes;
    QList<SweepPointResult> m_results;
};

} // namespace Kp
