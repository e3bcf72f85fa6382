#include "core/format.h"

#include "run/runtypes.h"

#include <cmath>

namespace Kp {

namespace {

/** Three significant digits for a value in [0, 1000). */
QString threeDigits(double v)
{
    if (v >= 99.95) {
        return QString::number(v, 'f', 0);
    }
    if (v >= 9.995) {
        return QString::number(v, 'f', 1);
    }
    return QString::number(v, 'f', 2);
}

} // namespace

QString formatBytes(qint64 bytes)
{
    const double b = static_cast<double>(bytes);
    if (b >= 1024.0 * 1024 * 1024) {
        return QStringLiteral("%1 GiB").arg(b / (1024.0 * 1024 * 1024), 0, 'f', 1);
    }
    if (b >= 1024.0 * 1024) {
        return QStringLiteral("%1 MiB").arg(b / (1024.0 * 1024), 0, 'f', 1);
    }
    if (b >= 1024.0) {
        return QStringLiteral("%1 KiB").arg(b / 1024.0, 0, 'f', 1);
    }
    return QStringLiteral("%1 B").arg(bytes);
}

TimeUnit timeUnitFor(double ms)
{
    // Thresholds just under 1000 so that 999.7 ns reads "1.00 us", not "1000 ns".
    const double a = std::abs(ms);
    if (a * 1e6 < 999.5) {
        return {QStringLiteral("ns"), 1e6};
    }
    if (a * 1e3 < 999.5) {
        return {QStringLiteral("us"), 1e3};
    }
    return {QStringLiteral("ms"), 1};
}

QString formatDuration(double ms)
{
    const TimeUnit u = timeUnitFor(ms);
    return threeDigits(ms * u.perMs) + QLatin1Char(' ') + u.name;
}

QString formatRate(double perSecond, const QString &unit)
{
    static const char *const prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
    double v = perSecond;
    int i = 0;
    while (std::abs(v) >= 999.5 && i < 6) {
        v /= 1000;
        ++i;
    }
    return threeDigits(v) + QLatin1Char(' ') + QLatin1String(prefixes[i]) + unit;
}

QString cudaVersionString(int version)
{
    return QStringLiteral("%1.%2").arg(version / 1000).arg((version % 1000) / 10);
}

QString occupancyText(const Occupancy &o, int registersPerThread)
{
    return QStringLiteral("%1 % (%2 blocks/SM, %3 of %4 warps), limited by %5; %6 registers/thread")
        .arg(o.ratio * 100, 0, 'f', 0)
        .arg(o.blocksPerSm)
        .arg(o.activeWarps)
        .arg(o.maxWarps)
        .arg(o.limiter)
        .arg(registersPerThread);
}

} // namespace Kp
