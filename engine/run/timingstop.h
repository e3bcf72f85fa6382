#pragma once

#include <QString>

#include <deque>
#include <map>

namespace Kp {

/** Why a timed run stopped taking samples. */
enum class StopCriterion {
    None,       ///< still sampling
    Noise,      ///< relative noise under the bound, with enough samples and GPU time (nvbench's stdrel)
    Entropy,    ///< the sample distribution stopped changing (nvbench's entropy criterion)
    MaxSamples, ///< the sample cap
    TimeLimit,  ///< the timing time-out (wall clock)
    Profiler,   ///< a CUDA profiler is attached: one sample, the profiler's numbers are the ones to read
};

/** "noise", "entropy", "max-samples", "time-limit", "profiler" (the JSON's timing.stoppedBy); "" for None. */
QString stopCriterionName(StopCriterion c);
StopCriterion stopCriterionFromName(const QString &name);

/** The knobs of SampleStopper; the first five are the project's "timing" fields. */
struct StopRule
{
    int minSamples = 10;
    int maxSamples = 10000;
    double minSeconds = 0.5; ///< GPU time the noise criterion waits for
    double maxNoise = 0.005; ///< stdev / mean
    double timeoutSeconds = 15.0;
    bool entropy = true;
    /** nvbench's defaults: the entropy's slope over the window at most 0.048 degrees, its fit r^2 at least 0.36. */
    double maxAngleDeg = 0.048;
    double minR2 = 0.36;
    int window = 299; ///< entropy values the regression looks at (nvbench's ring buffer)
};

/**
 * Decides when a timed run has enough samples. Fed one sample (milliseconds)
 * at a time, it answers after each with the criterion that ends sampling,
 * checked in this order:
 *
 * 1. noise: at least minSamples samples and minSeconds of summed sample time,
 *    and stdev / mean <= maxNoise;
 * 2. entropy (when rule.entropy): at least minSamples samples and a full
 *    window; after every even sample, the Shannon entropy (bits) of the
 *    samples seen so far, as a histogram of their exact values, is tracked
 *    over the last `window` samples; a least-squares line through those
 *    entropies (x = sample index) whose slope is at most maxAngleDeg degrees
 *    (atan of bits per sample) and whose r^2 is at least minR2 means more
 *    samples no longer change the distribution. A window of identical
 *    entropies (every sample the same value) is a perfect flat fit (r^2 = 1);
 *    nvbench leaves r^2 undefined there and never stops on it. It does not
 *    wait for minSeconds: that bound keeps a low noise estimate from being
 *    taken from a short burst, while this criterion already asks the
 *    distribution to stay put over its whole window, and waiting 0.5 s of
 *    GPU time is what sent every few-microsecond kernel to the sample cap;
 * 3. max samples: maxSamples samples;
 * 4. time limit: wallSeconds >= timeoutSeconds.
 *
 * Event times are quantised (the driver's timer ticks), so a short kernel's
 * samples take a few dozen distinct values and the entropy settles early; a
 * long kernel's noise usually falls under the bound first.
 */
class SampleStopper
{
public:
    explicit SampleStopper(const StopRule &rule);

    void add(double sample);
    /** The criterion that stops sampling after the samples so far, given the wall time spent; None to go on. */
    StopCriterion check(double wallSeconds);

    /** One line for people: how many samples, why it stopped, the numbers the rule looked at. */
    QString note(StopCriterion c) const;

    int count() const { return m_count; }
    double sum() const { return m_mean * m_count; }
    double noise() const;
    double entropy() const;
    double slopeDeg() const { return m_slopeDeg; }
    double r2() const { return m_r2; }
    const StopRule &rule() const { return m_rule; }

private:
    bool entropySettled();

    StopRule m_rule;
    int m_count = 0;
    double m_mean = 0; ///< Welford
    double m_m2 = 0;
    std::map<double, qint64> m_histogram;
    double m_sumCountLog = 0; ///< sum over values of c * log2(c)
    std::deque<double> m_entropies;
    double m_slopeDeg = 0;
    double m_r2 = 0;
};

/**
 * The environment variable that shows a CUDA profiler's injection, as
 * "NAME=value": the driver's CUDA_INJECTION64_PATH, or Nsight's own
 * NV_TPS_LAUNCH_TOKEN and NV_NSIGHT_INJECTION_TRANSPORT_TYPE (ncu 2025
 * follows a process tree with these and no CUDA_INJECTION64_PATH). Empty
 * when none is set.
 */
QString profilerInjectionVariable();

/**
 * Whether a CUDA profiler or tracer (Nsight Compute, Nsight Systems) is
 * injected into this process (profilerInjectionVariable()). KPG_PROFILING=1
 * or 0 overrides the guess. `why` gets the reason in words.
 */
bool cudaToolAttached(QString *why = nullptr);

} // namespace Kp
