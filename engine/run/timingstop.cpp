#include "timingstop.h"

#include <QtGlobal>

#include <cmath>

namespace Kp {

namespace {
constexpr double kPi = 3.14159265358979323846;
} // namespace

QString stopCriterionName(StopCriterion c)
{
    switch (c) {
    case StopCriterion::None: return {};
    case StopCriterion::Noise: return QStringLiteral("noise");
    case StopCriterion::Entropy: return QStringLiteral("entropy");
    case StopCriterion::MaxSamples: return QStringLiteral("max-samples");
    case StopCriterion::TimeLimit: return QStringLiteral("time-limit");
    case StopCriterion::Profiler: return QStringLiteral("profiler");
    }
    return {};
}

StopCriterion stopCriterionFromName(const QString &name)
{
    for (StopCriterion c : {StopCriterion::Noise, StopCriterion::Entropy, StopCriterion::MaxSamples,
                            StopCriterion::TimeLimit, StopCriterion::Profiler}) {
        if (stopCriterionName(c) == name) {
            return c;
        }
    }
    return StopCriterion::None;
}

SampleStopper::SampleStopper(const StopRule &rule)
    : m_rule(rule)
{
    m_rule.minSamples = qMax(1, m_rule.minSamples);
    m_rule.maxSamples = qMax(m_rule.minSamples, m_rule.maxSamples);
    m_rule.window = qMax(2, m_rule.window);
}

void SampleStopper::add(double sample)
{
    ++m_count;
    const double delta = sample - m_mean;
    m_mean += delta / m_count;
    m_m2 += delta * (sample - m_mean);

    qint64 &c = m_histogram[sample];
    // c*log2(c) of this value goes from its old count to the new one.
    if (c > 0) {
        m_sumCountLog -= double(c) * std::log2(double(c));
    }
    ++c;
    m_sumCountLog += double(c) * std::log2(double(c));
    m_entropies.push_back(entropy());
    if (m_entropies.size() > size_t(m_rule.window)) {
        m_entropies.pop_front();
    }
}

double SampleStopper::noise() const
{
    if (m_count < 2 || m_mean <= 0) {
        return 0;
    }
    return std::sqrt(m_m2 / (m_count - 1)) / m_mean;
}

double SampleStopper::entropy() const
{
    if (m_count == 0) {
        return 0;
    }
    const double n = m_count;
    return qMax(0.0, std::log2(n) - m_sumCountLog / n);
}

bool SampleStopper::entropySettled()
{
    const size_t n = m_entropies.size();
    double meanX = (double(n) - 1) / 2;
    double meanY = 0;
    for (double y : m_entropies) {
        meanY += y;
    }
    meanY /= double(n);
    double sxx = 0, sxy = 0, syy = 0;
    for (size_t i = 0; i < n; ++i) {
        const double dx = double(i) - meanX;
        const double dy = m_entropies[i] - meanY;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    const double slope = sxy / sxx;
    m_slopeDeg = std::atan(slope) * 180 / kPi;
    // A flat window to rounding: a perfect fit of a flat line.
    m_r2 = syy <= 1e-24 * qMax(1.0, meanY * meanY) ? 1.0 : (sxy * sxy) / (sxx * syy);
    return std::isfinite(m_slopeDeg) && m_slopeDeg <= m_rule.maxAngleDeg && std::isfinite(m_r2) && m_r2 >= m_rule.minR2;
}

StopCriterion SampleStopper::check(double wallSeconds)
{
    if (m_count >= m_rule.minSamples && sum() / 1000.0 >= m_rule.minSeconds && noise() <= m_rule.maxNoise) {
        return StopCriterion::Noise;
    }
    if (m_rule.entropy && m_count >= m_rule.minSamples && m_count % 2 == 0 &&
        m_entropies.size() >= size_t(m_rule.window) && entropySettled()) {
        return StopCriterion::Entropy;
    }
    if (m_count >= m_rule.maxSamples) {
        return StopCriterion::MaxSamples;
    }
    if (wallSeconds >= m_rule.timeoutSeconds) {
        return StopCriterion::TimeLimit;
    }
    return StopCriterion::None;
}

QString SampleStopper::note(StopCriterion c) const
{
    const QString noisePct = QString::number(noise() * 100, 'f', 2);
    const QString bound = QString::number(m_rule.maxNoise * 100, 'f', 2);
    switch (c) {
    case StopCriterion::Noise:
        return QStringLiteral("%1 samples, noise %2 % under the bound of %3 %").arg(m_count).arg(noisePct, bound);
    case StopCriterion::Entropy:
        return QStringLiteral("%1 samples; more samples no longer change the distribution (entropy %2 bits, slope "
                              "%3 deg <= %4 deg, r2 %5 >= %6); noise %7 %")
            .arg(m_count)
            .arg(entropy(), 0, 'f', 3)
            .arg(m_slopeDeg, 0, 'g', 3)
            .arg(m_rule.maxAngleDeg)
            .arg(m_r2, 0, 'f', 2)
            .arg(m_rule.minR2)
            .arg(noisePct);
    case StopCriterion::MaxSamples: {
        // Say what held the noise criterion back: the noise itself, or (a
        // short kernel) too little GPU time for minSeconds, where the noise
        // was already under its bound.
        const QString held =
            noise() <= m_rule.maxNoise
                ? QStringLiteral("the noise (%1 %) was under the bound of %2 %, but the samples added up to %3 s of "
                                 "GPU time, short of minSeconds (%4 s)")
                      .arg(noisePct, bound)
                      .arg(sum() / 1000.0, 0, 'g', 3)
                      .arg(m_rule.minSeconds)
                : QStringLiteral("the noise (%1 %) was still above the bound of %2 %").arg(noisePct, bound);
        return QStringLiteral("stopped at the maximum of %1 samples: %2%3")
            .arg(m_rule.maxSamples)
            .arg(held, m_rule.entropy ? QStringLiteral(", and the distribution had not settled") : QString());
    }
    case StopCriterion::TimeLimit:
        return QStringLiteral("stopped after the timing time-out of %1 s with %2 samples")
            .arg(m_rule.timeoutSeconds)
            .arg(m_count);
    case StopCriterion::Profiler:
        return QStringLiteral("a CUDA profiler is attached: %1 sample%2, without the stream blocker or the L2 flush; "
                              "read the profiler's numbers")
            .arg(m_count)
            .arg(m_count == 1 ? "" : "s");
    case StopCriterion::None: break;
    }
    return {};
}

bool cudaToolAttached(QString *why)
{
    const QByteArray force = qgetenv("KPG_PROFILING");
    if (force == "1" || force == "0") {
        if (why) {
            *why = QStringLiteral("KPG_PROFILING=%1").arg(QString::fromLatin1(force));
        }
        return force == "1";
    }
    const QString injection = profilerInjectionVariable();
    if (why && !injection.isEmpty()) {
        *why = injection;
    }
    return !injection.isEmpty();
}

QString profilerInjectionVariable()
{
    for (const char *var : {"CUDA_INJECTION64_PATH", "NV_TPS_LAUNCH_TOKEN", "NV_NSIGHT_INJECTION_TRANSPORT_TYPE"}) {
        const QByteArray value = qgetenv(var);
        if (!value.isEmpty()) {
            return QStringLiteral("%1=%2").arg(QLatin1String(var), QString::fromLocal8Bit(value));
        }
    }
    return {};
}

} // namespace Kp
