#pragma once

#include "core/format.h"
#include "plots/timingchart.h"
#include "workbench/runhistory.h"

#include <QList>
#include <QString>
#include <QStringList>

QT_BEGIN_NAMESPACE
class QBarCategoryAxis;
class QBarSet;
class QLineSeries;
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

/**
 * Two runs' sample distributions overlaid: histograms over common bins,
 * baseline A and candidate B in two colours, each median a vertical line.
 * Costs the same for 100,000 samples as for 100 (at most 60 bins). GUI
 * thread only.
 */
class DistributionChart : public ChartWidget
{
    Q_OBJECT
public:
    explicit DistributionChart(QWidget *parent = nullptr);

    /** a is the baseline, b the candidate; runs without samples give a message instead. */
    void showPair(const RunRecord &a, const RunRecord &b);
    void clear(const QString &message = {});

    /** Samples per common bin, of A and of B. */
    QList<int> countsA() const { return m_countsA; }
    QList<int> countsB() const { return m_countsB; }
    /** bin, from_ms, to_ms, a, b. */
    QByteArray csvData() const override;

protected:
    void applyColors() override;

private:
    TimeUnit m_unit;
    QList<double> m_edgesMs;
    QList<int> m_countsA;
    QList<int> m_countsB;
    QLineSeries *m_a = nullptr; ///< owned by the chart
    QLineSeries *m_b = nullptr;
    QLineSeries *m_medianA = nullptr;
    QLineSeries *m_medianB = nullptr;
    QValueAxis *m_xAxis = nullptr;
    QValueAxis *m_yAxis = nullptr;
};

} // namespace Kp
