#pragma once

#include <QList>
#include <QString>

namespace Kp {

/** Five numbers of a sample set; quantiles interpolate linearly (type 7, as numpy's default). */
struct SampleSummary
{
    int count = 0;
    double min = 0;
    double q1 = 0;
    double median = 0;
    double q3 = 0;
    double max = 0;
};

SampleSummary summarize(QList<double> samples);

enum class Verdict { Same, Faster, Slower, Ambiguous };

/** "same", "faster", "slower", "ambiguous". */
QString verdictName(Verdict v);

struct CompareRule
{
    /** Differences of the medians under this fraction of the baseline's median are never called faster or slower. */
    double minRelativeDifference = 0.01;
    /** Fewer samples than this on either side: ambiguous. */
    int minSamples = 5;
};

/**
 * The verdict on candidate B against baseline A, both sets of times (lower is
 * faster), and the numbers it was judged on. The rule, after nvbench's robust
 * comparison (docs/compare.md states it for people):
 *
 * - d = (median(B) - median(A)) / median(A), the relative difference;
 * - each side's interval is [min, q3]: the fastest sample up to the third
 *   quartile. A run's slow tail (preemption, clock changes) lies above q3 and
 *   is left out; its fast edge is the best the kernel did;
 * - gap = (min(A) - q3(B)) / median(A) when B's interval lies wholly below
 *   A's, (min(B) - q3(A)) / median(A) when wholly above, else the (negative)
 *   overlap of the two intervals over median(A);
 *
 * 1. fewer than minSamples samples on a side, or a median <= 0: ambiguous;
 * 2. |d| < minRelativeDifference: same (even when the intervals are apart:
 *    a consistent difference that small is not one worth acting on);
 * 3. the intervals are apart (gap > 0): faster when B's lies below, slower
 *    when above;
 * 4. otherwise (they overlap and the medians differ by the threshold or
 *    more): ambiguous, the difference cannot be confirmed.
 */
struct Comparison
{
    Verdict verdict = Verdict::Ambiguous;
    SampleSummary a;
    SampleSummary b;
    double relativeDifference = 0; ///< d
    double gap = 0;                ///< > 0: the intervals are apart by this fraction of median(A)
    double ratio = 0;              ///< median(A) / median(B): > 1 when B is faster
    CompareRule rule;
    QString reason; ///< one line: the rule's numbers in words
};

Comparison compareSamples(const QList<double> &baseline, const QList<double> &candidate, const CompareRule &rule = {});

} // namespace Kp
