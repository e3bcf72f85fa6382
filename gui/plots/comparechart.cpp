#include "plots/comparechart.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QLegend>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>

#include <algorithm>

namespace Kp {

namespace {

QString plainNumber(double v)
{
    return QString::number(v, 'g', QLocale::FloatingPointShortest);
}

QString csvField(const QString &s)
{
    if (!s.contains(QLatin1Char(',')) && !s.contains(QLatin1Char('"')) && !s.contains(QLatin1Char('\n'))) {
        return s;
    }
    return QLatin1Char('"') + QString(s).replace(QLatin1String("\""), QLatin1String("\"\"")) + QLatin1Char('"');
}

} // namespace

CompareChart::CompareChart(QWidget *parent)
    : ChartWidget(parent)
{
    m_categories = new QBarCategoryAxis;
    m_categories->setVisible(false);
    chart()->addAxis(m_categories, Qt::AlignBottom);
    m_valueAxis = addValueAxis(Qt::AlignLeft);
    // The title says what bars and whiskers are; a legend of one entry adds nothing.
    chart()->legend()->hide();
}

void CompareChart::clear(const QString &message)
{
    m_records.clear();
    m_medians = nullptr;
    m_numbers.clear();
    m_categories->clear();
    reset(message);
}

void CompareChart::showRuns(const QList<RunRecord> &records)
{
    clear();
    QList<const RunRecord *> shown;
    for (const RunRecord &r : records) {
        if (!r.result.samplesMs.isEmpty() || r.result.stats.count > 0) {
            shown << &r;
        }
    }
    const qsizetype left = records.size() - shown.size();
    if (shown.isEmpty()) {
        reset(records.isEmpty()
                  ? QString()
                  : QStringLiteral("None of the %1 selected runs has timing samples").arg(records.size()));
        return;
    }

    double slowest = 0;
    double top = 0;
    for (const RunRecord *r : shown) {
        const TimingStats st = r->stats();
        slowest = std::max(slowest, st.medianMs);
        top = std::max(top, st.maxMs);
    }
    m_unit = timeUnitFor(slowest);
    const double k = m_unit.perMs;
    const ChartColors c = colors();

    auto *set = new QBarSet(QStringLiteral("median"));
    set->setColor(c.primary);
    set->setBorderColor(c.primary.darker(130));
    set->setLabelColor(c.dark ? QColor(Qt::black) : QColor(Qt::white));
    QStringList categories;
    for (const RunRecord *r : shown) {
        set->append(r->stats().medianMs * k);
        // Categories must be unique; two runs may well share a label.
        QString label = r->displayLabel();
        if (categories.contains(label)) {
            label += QStringLiteral(" (#%1)").arg(r->number);
        }
        categories << label;
        m_numbers << r->number;
    }
    auto *bars = new QBarSeries;
    bars->append(set);
    bars->setBarWidth(0.6);
    bars->setLabelsVisible(true);
    // At the base, the label stays clear of the whisker that crosses the bar's top.
    bars->setLabelsPosition(QAbstractBarSeries::LabelsInsideBase);
    bars->setLabelsPrecision(3);
    bars->setLabelsFormat(QStringLiteral("@value ") + m_unit.name);
    chart()->addSeries(bars);

    m_categories->append(categories);
    m_categories->setVisible(true);
    setUpAxis(m_valueAxis, QStringLiteral("time (%1)").arg(m_unit.name), 0, top * k * 1.1, false,
              int(plotSize().height()));
    bars->attachAxis(m_categories);
    bars->attachAxis(m_valueAxis);

    // One path per run: bottom cap, the line from min to max, top cap.
    QPen pen(c.dark ? c.foreground : c.foreground.lighter(150), 1.5);
    const double cap = 0.08;
    for (qsizetype i = 0; i < shown.size(); ++i) {
        const TimingStats st = shown[i]->stats();
        const double x = double(i);
        auto *whisker = new QLineSeries;
        whisker->setPen(pen);
        whisker->append(x - cap, st.minMs * k);
        whisker->append(x + cap, st.minMs * k);
        whisker->append(x, st.minMs * k);
        whisker->append(x, st.maxMs * k);
        whisker->append(x - cap, st.maxMs * k);
        whisker->append(x + cap, st.maxMs * k);
        chart()->addSeries(whisker);
        whisker->attachAxis(m_categories);
        whisker->attachAxis(m_valueAxis);
    }

    QString detail = QStringLiteral("bars: median; whiskers: min to max");
    if (left > 0) {
        detail += QStringLiteral("; %1 selected run(s) without samples not shown").arg(left);
    }
    setTitle(QStringLiteral("%1 runs compared").arg(shown.size()), detail);
    m_medians = set;
    m_records = records;
    applyColors();
    layOutNow();
}

void CompareChart::applyColors()
{
    ChartWidget::applyColors();
    if (m_categories) {
        m_categories->setLabelsBrush(colors().foreground);
        m_categories->setGridLineColor(colors().grid);
    }
    if (m_medians && m_medians->color() != colors().primary) {
        // Another theme: draw the same runs in its colours.
        const QList<RunRecord> records = m_records;
        showRuns(records);
    }
}

QByteArray CompareChart::csvData() const
{
    if (!m_medians) {
        return {};
    }
    QStringList lines{QStringLiteral("run,label,samples,median_ms,min_ms,max_ms")};
    const QStringList names = labels();
    int i = 0;
    for (const RunRecord &r : m_records) {
        if (!m_numbers.contains(r.number) || i >= names.size()) {
            continue;
        }
        const TimingStats st = r.stats();
        lines << QStringLiteral("%1,%2,%3,%4,%5,%6")
                     .arg(r.number)
                     .arg(csvField(names[i]))
                     .arg(st.count)
                     .arg(plainNumber(st.medianMs), plainNumber(st.minMs), plainNumber(st.maxMs));
        ++i;
    }
    return (lines.join(QLatin1Char('\n')) + QLatin1Char('\n')).toUtf8();
}

int CompareChart::entryCount() const
{
    return m_medians ? int(m_medians->count()) : 0;
}

QStringList CompareChart::labels() const
{
    return m_medians ? m_categories->categories() : QStringList();
}

QList<double> CompareChart::mediansMs() const
{
    QList<double> medians;
    for (int i = 0; i < entryCount(); ++i) {
        medians << m_medians->at(i) / m_unit.perMs;
    }
    return medians;
}

DistributionChart::DistributionChart(QWidget *parent)
    : ChartWidget(parent)
{
    m_xAxis = addValueAxis(Qt::AlignBottom);
    m_yAxis = addValueAxis(Qt::AlignLeft);
    m_a = new QLineSeries;
    m_b = new QLineSeries;
    m_medianA = new QLineSeries;
    m_medianB = new QLineSeries;
    for (QLineSeries *s : {m_a, m_b, m_medianA, m_medianB}) {
        chart()->addSeries(s);
        s->attachAxis(m_xAxis);
        s->attachAxis(m_yAxis);
    }
    DistributionChart::applyColors();
    showMessage(tr("Choose two runs to compare"));
}

void DistributionChart::applyColors()
{
    ChartWidget::applyColors();
    if (!m_a) {
        return;
    }
    const ChartColors c = colors();
    m_a->setPen(QPen(c.primary, 2));
    m_b->setPen(QPen(c.secondary, 2));
    m_medianA->setPen(QPen(c.primary, 1.5, Qt::DashLine));
    m_medianB->setPen(QPen(c.secondary, 1.5, Qt::DashLine));
}

void DistributionChart::clear(const QString &message)
{
    m_edgesMs.clear();
    m_countsA.clear();
    m_countsB.clear();
    for (QLineSeries *s : {m_a, m_b, m_medianA, m_medianB}) {
        s->clear();
    }
    setTitle({}, {});
    showMessage(message);
}

void DistributionChart::showPair(const RunRecord &a, const RunRecord &b)
{
    clear();
    const QList<double> &sa = a.result.samplesMs;
    const QList<double> &sb = b.result.samplesMs;
    if (sa.isEmpty() || sb.isEmpty()) {
        showMessage(tr("Both runs need timing samples: %1 has %2, %3 has %4")
                        .arg(a.displayLabel())
                        .arg(sa.size())
                        .arg(b.displayLabel())
                        .arg(sb.size()));
        return;
    }
    const TimingStats stA = a.stats();
    const TimingStats stB = b.stats();
    double lo = std::min(stA.minMs, stB.minMs);
    double hi = std::max(stA.maxMs, stB.maxMs);
    if (!(hi > lo)) {
        lo -= std::max(std::abs(lo) * 0.005, 1e-9);
        hi += std::max(std::abs(hi) * 0.005, 1e-9);
    }
    const int bins = std::clamp(std::max(TimingChart::binCountFor(sa), TimingChart::binCountFor(sb)) * 3 / 2, 10, 60);
    const double width = (hi - lo) / bins;
    m_countsA = QList<int>(bins, 0);
    m_countsB = QList<int>(bins, 0);
    for (double v : sa) {
        m_countsA[std::clamp(int((v - lo) / width), 0, bins - 1)] += 1;
    }
    for (double v : sb) {
        m_countsB[std::clamp(int((v - lo) / width), 0, bins - 1)] += 1;
    }
    for (int i = 0; i <= bins; ++i) {
        m_edgesMs << lo + i * width;
    }
    m_unit = timeUnitFor(std::max(stA.medianMs, stB.medianMs));
    const double k = m_unit.perMs;
    // Fractions of each run's samples, so runs of different lengths compare.
    const auto outline = [&](const QList<int> &counts, double total) {
        QList<QPointF> xy;
        xy << QPointF(m_edgesMs.first() * k, 0);
        for (int i = 0; i < bins; ++i) {
            const double f = 100.0 * counts[i] / total;
            xy << QPointF(m_edgesMs[i] * k, f) << QPointF(m_edgesMs[i + 1] * k, f);
        }
        xy << QPointF(m_edgesMs.last() * k, 0);
        return xy;
    };
    const QList<QPointF> pa = outline(m_countsA, double(sa.size()));
    const QList<QPointF> pb = outline(m_countsB, double(sb.size()));
    double top = 1;
    for (const QPointF &p : pa + pb) {
        top = std::max(top, p.y());
    }
    top *= 1.1;
    m_a->replace(pa);
    m_b->replace(pb);
    m_a->setName(QStringLiteral("A %1").arg(a.displayLabel()));
    m_b->setName(QStringLiteral("B %1").arg(b.displayLabel()));
    m_medianA->replace({QPointF(stA.medianMs * k, 0), QPointF(stA.medianMs * k, top)});
    m_medianB->replace({QPointF(stB.medianMs * k, 0), QPointF(stB.medianMs * k, top)});
    m_medianA->setName(QStringLiteral("median A %1").arg(formatDuration(stA.medianMs)));
    m_medianB->setName(QStringLiteral("median B %1").arg(formatDuration(stB.medianMs)));
    setUpAxis(m_xAxis, QStringLiteral("time (%1)").arg(m_unit.name), lo * k, hi * k, false, int(plotSize().width()));
    setUpAxis(m_yAxis, QStringLiteral("% of samples"), 0, top, false, int(plotSize().height()));
    setTitle(QStringLiteral("#%1 against #%2").arg(b.number).arg(a.number),
             QStringLiteral("A median %1, B median %2, %3 and %4 samples")
                 .arg(formatDuration(stA.medianMs), formatDuration(stB.medianMs))
                 .arg(sa.size())
                 .arg(sb.size()));
    showMessage(QString());
    layOutNow();
}

QByteArray DistributionChart::csvData() const
{
    if (m_countsA.isEmpty()) {
        return {};
    }
    QByteArray csv = "bin,from_ms,to_ms,a,b\n";
    for (qsizetype i = 0; i < m_countsA.size(); ++i) {
        csv += QByteArray::number(i) + ',' + plainNumber(m_edgesMs[i]).toLatin1() + ',' +
               plainNumber(m_edgesMs[i + 1]).toLatin1() + ',' + QByteArray::number(m_countsA[i]) + ',' +
               QByteArray::number(m_countsB[i]) + '\n';
    }
    return csv;
}

} // namespace Kp
