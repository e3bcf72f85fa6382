#pragma once

#include <QString>

namespace Kp {

struct Occupancy;

// Text for numbers that the GUI, kpg and the logs show to people. One place,
// so a size, a time or a rate reads the same everywhere. Pure functions of
// their arguments: any thread may call them.

/** "139.8 GiB", "12.0 MiB", "3.5 KiB", "512 B": binary prefixes, one decimal. */
QString formatBytes(qint64 bytes);

/** A unit for durations: its name and how many of it make one millisecond. */
struct TimeUnit
{
    QString name; ///< "ns", "us" or "ms"
    double perMs = 1;
};

/** The unit in which ms reads best: ns below 1 us, us below 1 ms, ms above. */
TimeUnit timeUnitFor(double ms);

/** A duration with three significant digits and the unit chosen for it: "8.03 us", "512 ns", "1.20 ms". */
QString formatDuration(double ms);

/**
 * A rate with a decimal prefix and three significant digits. unit is the
 * whole unit per second, "B/s" or "FLOP/s":
 * formatRate(1.57e12, "B/s") == "1.57 TB/s", formatRate(2.5e11, "FLOP/s") == "250 GFLOP/s".
 */
QString formatRate(double perSecond, const QString &unit);

/** The CUDA version the driver reports as an int, as people write it: 13000 -> "13.0", 12040 -> "12.4". */
QString cudaVersionString(int version);

/**
 * "100 % (8 blocks/SM, 64 of 64 warps), limited by warps; 12 registers/thread":
 * the theoretical occupancy of a launch and what bounds it.
 */
QString occupancyText(const Occupancy &occupancy, int registersPerThread);

} // namespace Kp
