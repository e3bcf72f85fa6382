#pragma once

#include "core/format.h"
#include "plots/timingchart.h"
#include "results/runhistory.h"

#include <QList>
#include <QString>
#include <QStringList>

QT_BEGIN_NAMESPACE
class QBarCategoryAxis;
class QBarSet;
class QValueAxis;
QT_END_NAMESPACE

namespace Kp {

/**
 * Several runs side by side: each run's median as a bar, labelled with
 * RunRecord::displayLabel(), and a whisker from its fastest to its slowest
 * sample. Runs without samples (failed ones) are left out and counted in the
 * title. GUI thread only.
 */
class CompareChart : public ChartWidget
{
    Q_OBJECT
public:
    explicit CompareChart(QWidget *parent = nullptr);

    /** Shows records in the order given. */
    void showRuns(const QList<RunRecord> &records);
    /** Shows nothing but message. */
    void clear(const QString &message = {});

    /** Bars drawn, one per run with samples. */
    int entryCount() const;
    /** The bars' labels, in order; a label used twice gets the run's number added. */
    QStringList labels() const;
    /** The bars' heights, converted back to milliseconds. */
    QList<double> mediansMs() const;
    /** Numbers of the runs drawn, in order. */
    QList<int> runNumbers() const { return m_numbers; }
    /** The unit of the value axis: "ns", "us" or "ms" (chosen from the slowest median). */
    QString unit() const { return m_unit.name; }
    /** One line per bar: run, label, samples, median, min, max (milliseconds). */
    QByteArray csvData() const override;

protected:
    void applyColors() override;

private:
    QList<RunRecord> m_records;               ///< as last shown, to redraw in another theme
    QBarSet *m_medians = nullptr;             ///< owned by the chart
    QBarCategoryAxis *m_categories = nullptr; ///< owned by the chart
    QValueAxis *m_valueAxis = nullptr;        ///< owned by the chart
    TimeUnit m_unit;
    QList<int> m_numbers;
};

} // namespace Kp
