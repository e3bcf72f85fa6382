#pragma once

#include "core/result.h"
#include "plot/plot.h"
#include "run/ceilings.h"
#include "sweep/sweeprunner.h"

#include <optional>

namespace Kp {

/** What a sweep's plot shows (`kpg sweep --plot`, the Sweep panel). */
struct SweepPlotOptions
{
    enum class Y { Time, Throughput };
    Y y = Y::Time;
    int xAxis = 0;        ///< the axis along x
    int seriesAxis = -2;  ///< one line per value of this axis; -1: none; -2: the second axis when there is one
    bool heatmap = false; ///< x against the series axis, coloured by y
    std::optional<DeviceCeilings> ceilings; ///< drawn as lines on a throughput plot
};

/** Finds an axis by name ("block.x"); messages list the sweep's axes. */
Result<int> sweepAxisIndex(const QList<SweepAxis> &axes, const QString &name, const QString &option);

/**
 * The figure of a sweep: y (median time or throughput) against the x axis,
 * one line per value of the series axis (and of any further axes), the
 * occupancy of the first step on a second y axis when there is a single
 * line, the device ceilings as horizontal lines on a throughput plot; or a
 * heatmap of x against the series axis. Points that were not timed are left
 * out (a heatmap shows them empty). Hovering names each point's values.
 */
Result<Plot::Figure> sweepFigure(const QString &title, const QList<SweepAxis> &axes,
                                 const QList<SweepPointResult> &points, const SweepPlotOptions &options);

/**
 * A roofline: each timed point that has both throughput.flops and
 * throughput.bytes, placed by its arithmetic intensity and FLOP/s, under
 * the measured bandwidth and FP32/FP64 roofs.
 */
Plot::Figure rooflineFigure(const QString &title, const QList<SweepPointResult> &points,
                            const DeviceCeilings &ceilings);

} // namespace Kp
