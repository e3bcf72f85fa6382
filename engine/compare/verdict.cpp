#include "verdict.h"

#include <algorithm>
#include <cmath>

namespace Kp {

namespace {

double quantile(const QList<double> &sorted, double p)
{
    const double pos = p * double(sorted.size() - 1);
    const qsizetype lo = qsizetype(std::floor(pos));
    const qsizetype hi = qMin(lo + 1, sorted.size() - 1);
    return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}

QString pct(double fraction)
{
    return QStringLiteral("%1 %").arg(fraction * 100, 0, 'f', 2);
}

QString interval(const SampleSummary &s)
{
    return QStringLiteral("[%1, %2]").arg(s.min, 0, 'g', 6).arg(s.q3, 0, 'g', 6);
}

} // namespace

SampleSummary summarize(QList<double> samples)
{
    SampleSummary s;
    s.count = int(samples.size());
    if (samples.isEmpty()) {
        return s;
    }
    std::sort(samples.begin(), samples.end());
    s.min = samples.front();
    s.max = samples.back();
    s.q1 = quantile(samples, 0.25);
    s.median = quantile(samples, 0.5);
    s.q3 = quantile(samples, 0.75);
    return s;
}

QString verdictName(Verdict v)
{
    switch (v) {
    case Verdict::Same: return QStringLiteral("same");
    case Verdict::Faster: return QStringLiteral("faster");
    case Verdict::Slower: return QStringLiteral("slower");
    case Verdict::Ambiguous: return QStringLiteral("ambiguous");
    }
    return {};
}

Comparison compareSamples(const QList<double> &baseline, const QList<double> &candidate, const CompareRule &rule)
{
    Comparison c;
    c.rule = rule;
    c.a = summarize(baseline);
    c.b = summarize(candidate);
    if (c.a.count < rule.minSamples || c.b.count < rule.minSamples) {
        c.verdict = Verdict::Ambiguous;
        c.reason = QStringLiteral("too few samples to judge (%1 and %2; at least %3 each)")
                       .arg(c.a.count)
                       .arg(c.b.count)
                       .arg(rule.minSamples);
        return c;
    }
    if (!(c.a.median > 0) || !(c.b.median > 0)) {
        c.verdict = Verdict::Ambiguous;
        c.reason = QStringLiteral("a median is not positive (%1 and %2)").arg(c.a.median).arg(c.b.median);
        return c;
    }
    // Denormal medians (5e-324 ms) overflow the ratio to inf, which once printed "infx".
    if (!std::isfinite(c.a.median / c.b.median) || !std::isfinite(c.b.median / c.a.median)) {
        c.verdict = Verdict::Ambiguous;
        c.reason = QStringLiteral("the medians %1 and %2 are too far apart to give a ratio (a time below a "
                                  "picosecond is not a GPU measurement)")
                       .arg(c.a.median, 0, 'g', 6)
                       .arg(c.b.median, 0, 'g', 6);
        return c;
    }
    c.relativeDifference = (c.b.median - c.a.median) / c.a.median;
    c.ratio = c.a.median / c.b.median;
    const bool below = c.b.q3 < c.a.min;
    const bool above = c.a.q3 < c.b.min;
    if (below) {
        c.gap = (c.a.min - c.b.q3) / c.a.median;
    } else if (above) {
        c.gap = (c.b.min - c.a.q3) / c.a.median;
    } else {
        c.gap = -(qMin(c.a.q3, c.b.q3) - qMax(c.a.min, c.b.min)) / c.a.median;
    }
    const QString numbers =
        QStringLiteral("medians %1 and %2 (d = %3), [min, q3] %4 and %5 (%6 %7)")
            .arg(c.a.median, 0, 'g', 6)
            .arg(c.b.median, 0, 'g', 6)
            .arg((c.relativeDifference >= 0 ? QStringLiteral("+") : QString()) + pct(c.relativeDifference))
            .arg(interval(c.a), interval(c.b))
            .arg(c.gap > 0 ? QStringLiteral("apart by") : QStringLiteral("overlapping by"))
            .arg(pct(std::abs(c.gap)));
    if (std::abs(c.relativeDifference) < rule.minRelativeDifference) {
        c.verdict = Verdict::Same;
        c.reason = QStringLiteral("|d| under %1: %2").arg(pct(rule.minRelativeDifference), numbers);
    } else if (below || above) {
        c.verdict = below ? Verdict::Faster : Verdict::Slower;
        c.reason =
            QStringLiteral("|d| at least %1 and the intervals apart: %2").arg(pct(rule.minRelativeDifference), numbers);
    } else {
        c.verdict = Verdict::Ambiguous;
        c.reason = QStringLiteral("|d| at least %1 but the intervals overlap, so the difference cannot be "
                                  "confirmed: %2")
                       .arg(pct(rule.minRelativeDifference), numbers);
    }
    return c;
}

} // namespace Kp
