#pragma once

#include "core/result.h"
#include "project/project.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace Kp {

/**
 * One axis of a sweep, from `NAME=V1,V2,...` or `NAME=A:B[:STEP|:pow2]`
 * (docs/sweep.md). NAME is one of:
 *
 * - `block.x`, `block.y`, `block.z`: that extent of every launch step's block;
 * - `grid.x`, `grid.y`, `grid.z`: that extent of every step's grid (values
 *   may be expressions: `grid.x=ceil_div(n, block.x),1024`; commas inside
 *   parentheses belong to the expression);
 * - `define.NAME`: the macro NAME, compiled as `-DNAME=value`;
 * - `template.I`: the I-th (0-based) template argument of every launch whose
 *   kernel is a template instance (`matmul<16>`);
 * - `scalar.NAME` or a bare NAME: the project scalar NAME.
 */
struct SweepAxis
{
    enum class Kind { Block, Grid, Define, Template, Scalar };
    QString name; ///< as written, e.g. "block.x"
    Kind kind = Kind::Scalar;
    int component = 0; ///< Block/Grid: 0..2; Template: the argument index
    QString key;       ///< Define: the macro; Scalar: the scalar's name
    QStringList values;

    /** Define and template axes change the compiled code; the others only the launch. */
    bool recompiles() const { return kind == Kind::Define || kind == Kind::Template; }
};

/** The most values one axis may have (a range is counted before anything is allocated). */
constexpr qsizetype kMaxSweepAxisValues = 100000;
/** The most axes a sweep may have (`--axis` given more often, or a project's "sweep.axes"). */
constexpr qsizetype kMaxSweepAxes = 16;
/** The most points a sweep may have: the product of the axes' lengths, or their common length zipped. */
constexpr int kMaxSweepPoints = 100000;

/** Parses one --axis argument; messages name the argument and say what is allowed. */
Result<SweepAxis> parseSweepAxis(const QString &spec);

/** Checks an axis against the project: the scalar exists, the launches have that template argument. */
Status checkSweepAxis(const SweepAxis &axis, const Project &project);

/** One configuration: a value per axis, in the axes' order. */
struct SweepPoint
{
    QStringList values;
};

/**
 * The points of a sweep: the cartesian product (the last axis varies fastest)
 * or, with zip, the i-th value of every axis together (all axes must have the
 * same number of values). Refused above maxPoints and kMaxSweepAxes.
 */
Result<QList<SweepPoint>> expandSweep(const QList<SweepAxis> &axes, bool zip, int maxPoints = kMaxSweepPoints);

/** The project with the point's values applied. */
Result<Project> applySweepPoint(const Project &project, const QList<SweepAxis> &axes, const SweepPoint &point);

/** The values of the recompiling axes: two points with the same key share a compiled module. */
QString sweepCompileKey(const QList<SweepAxis> &axes, const SweepPoint &point);

/** "block.x=128 define.TILE=16" */
QString sweepPointLabel(const QList<SweepAxis> &axes, const SweepPoint &point);

/**
 * Whether a point's error means the configuration cannot run (skipped, with
 * the error's message as the reason: too many threads per block, too much
 * shared memory for this kernel's registers, a grid of 0) rather than that
 * it ran and failed (a fault, a time-out, a compile error).
 */
bool sweepErrorIsSkip(const Error &error);

} // namespace Kp
