#pragma once

#include "core/result.h"

#include <QColor>
#include <QImage>
#include <QList>
#include <QPointF>
#include <QRectF>
#include <QSize>
#include <QString>
#include <QStringList>
#include <QVector>

#include <optional>

class QPainter;

namespace Kp::Plot {

/**
 * Pictures of measurements drawn straight with QPainter: no Qt Widgets, no
 * Qt Charts, so `kpg` draws the same picture as the GUI and tests can check
 * its pixels. Three kinds: lines of a value against one axis (one line per
 * value of a second axis, an optional second y axis on the right, horizontal
 * ceiling lines), a heatmap over two axes, and a log-log roofline.
 */
enum class Kind { Lines, Heatmap, Roofline };

struct Palette
{
    QColor background, plotBackground, axis, grid, text, mutedText, ceiling;
    QList<QColor> series;
    static Palette light();
    /** Matches the GUI's dark theme (gui/app/theme). */
    static Palette dark();
};

struct Axis
{
    QString title;
    /** 0: linear; 2: log2 (powers of two, ticks at each power); 10: log10 (ticks at decades). */
    int logBase = 0;
    std::optional<double> min, max; ///< fixed range; otherwise from the data
    bool percent = false;           ///< tick labels as percentages of 1 (occupancy)
    bool si = false;                ///< tick labels with SI prefixes (1.5G, 20T)
    /** Named positions: x = 0, 1, ... is categories[x] (template arguments such as float, double). */
    QStringList categories;
};

struct Series
{
    QString name;
    QVector<QPointF> points; ///< a line plot sorts them by x
    QStringList labels;      ///< optional, per point: what hovering names
    bool secondaryY = false; ///< against the right-hand axis (drawn dashed)
};

/** A horizontal line across the plot: a measured ceiling. */
struct HLine
{
    double y = 0;
    QString label;
    bool secondaryY = false;
};

struct Heatmap
{
    QStringList xLabels, yLabels;
    QVector<double> values; ///< row-major, yLabels.size() rows of xLabels.size(); NaN: no value
    QString valueTitle;
    bool logColor = false;
    bool lowIsGood = true; ///< times: the bright end of the colour map is the smallest value
};

struct Roofline
{
    double bytesPerSecond = 0; ///< the slanted bandwidth roof
    struct Roof
    {
        QString name;
        double flopsPerSecond = 0;
    };
    QList<Roof> roofs; ///< flat compute roofs (FP32, FP64); the first one's ridge is marked
    struct Point
    {
        double intensity = 0; ///< FLOP per byte
        double flopsPerSecond = 0;
        QString label;
    };
    QList<Point> points;
};

struct Figure
{
    Kind kind = Kind::Lines;
    QString title;
    Axis x, y, y2;
    bool hasY2 = false;
    QList<Series> series;
    QList<HLine> hlines;
    Heatmap heatmap;
    Roofline roofline;
};

/** What lies under a position: a series' point, a heatmap cell or a roofline point. */
struct Hit
{
    int series = -1; ///< Lines: the series; Heatmap: the row; Roofline: -1
    int index = -1;  ///< the point (Lines, Roofline) or the column (Heatmap)
    QString text;    ///< what a tooltip says
};

/** Draws the figure into rect. */
void render(QPainter &painter, const QRectF &rect, const Figure &figure, const Palette &palette);
/** The item nearest pos within radius pixels, in the same layout render() used for rect. */
std::optional<Hit> hitTest(const Figure &figure, const QRectF &rect, const QPointF &pos, double radius = 8);
/** The plotting area inside rect (the axes' box), as render() lays it out. */
QRectF plotArea(const Figure &figure, const QRectF &rect);

QImage renderImage(const Figure &figure, const QSize &size, const Palette &palette, qreal devicePixelRatio = 1);
QByteArray renderSvg(const Figure &figure, const QSize &size, const Palette &palette);
/** The figure's data, one row per point or cell. */
QByteArray toCsv(const Figure &figure);

/** Whether save() can write path: a Usage error naming it unless it ends .png, .svg or .csv. */
Status checkFormat(const QString &path);

/** Writes PNG, SVG or CSV by path's extension (.png, .svg, .csv); anything else is refused. */
Status save(const QString &path, const Figure &figure, const QSize &size, const Palette &palette);

/** Tick positions of an axis over [lo, hi] (exposed for tests). */
QVector<double> ticks(const Axis &axis, double lo, double hi, int maxTicks = 8);
/** A tick's label. */
QString tickLabel(const Axis &axis, double v);

/**
 * Per pixel column, the first, minimum, maximum and last point of a line
 * sorted by x: what a line of many more points than pixels looks like, in at
 * most four points per column. xToPixel maps x to a column.
 */
QVector<QPointF> decimate(const QVector<QPointF> &sorted, double x0, double x1, int columns, bool logX = false);

} // namespace Kp::Plot
