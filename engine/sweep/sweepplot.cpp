#include "sweepplot.h"

#include <QMap>

#include <cmath>

namespace Kp {

Result<int> sweepAxisIndex(const QList<SweepAxis> &axes, const QString &name, const QString &option)
{
    QStringList names;
    for (qsizetype i = 0; i < axes.size(); ++i) {
        if (axes[i].name == name) {
            return int(i);
        }
        names << axes[i].name;
    }
    return Error{QStringLiteral("sweep"),
                 Error::Code::Usage,
                 {},
                 QStringLiteral("%1 %2: not an axis of this sweep (its axes: %3)").arg(option, name, names.join(", "))};
}

namespace {

bool isPowerOfTwo(double v)
{
    return v >= 1 && std::abs(std::log2(v) - std::round(std::log2(v))) < 1e-9;
}

/** The axis's values as numbers, or nullopt when one is not a number (float, double, an expression). */
std::optional<QVector<double>> numericValues(const SweepAxis &a)
{
    QVector<double> out;
    for (const QString &v : a.values) {
        bool ok = false;
        const double d = v.trimmed().toDouble(&ok);
        if (!ok) {
            return std::nullopt;
        }
        out << d;
    }
    return out;
}

} // namespace

Result<Plot::Figure> sweepFigure(const QString &title, const QList<SweepAxis> &axes,
                                 const QList<SweepPointResult> &points, const SweepPlotOptions &options)
{
    if (axes.isEmpty()) {
        return Error{
            QStringLiteral("sweep"), Error::Code::Usage, {}, QStringLiteral("a sweep without axes has no plot")};
    }
    const int xi = options.xAxis;
    if (xi < 0 || xi >= axes.size()) {
        return Error{
            QStringLiteral("sweep"), Error::Code::Usage, {}, QStringLiteral("no axis %1 to plot along").arg(xi)};
    }
    int si = options.seriesAxis;
    if (si == -2) {
        si = -1;
        for (int i = 0; i < axes.size(); ++i) {
            if (i != xi) {
                si = i;
                break;
            }
        }
    }
    if (si == xi) {
        si = -1;
    }
    const bool throughput = options.y == SweepPlotOptions::Y::Throughput;
    bool flops = false;
    for (const SweepPointResult &p : points) {
        flops = flops || p.flopsPerSecond() > 0;
    }
    const auto yOf = [&](const SweepPointResult &p) -> double {
        if (!p.timed()) {
            return std::nan("");
        }
        if (!throughput) {
            return p.medianUs();
        }
        const double v = flops ? p.flopsPerSecond() : p.bytesPerSecond();
        return v > 0 ? v : std::nan("");
    };
    QString yTitle = throughput ? (flops ? QStringLiteral("throughput (FLOP/s)") : QStringLiteral("throughput (B/s)"))
                                : QStringLiteral("median time (us)");
    if (throughput) {
        bool any = false;
        for (const SweepPointResult &p : points) {
            any = any || std::isfinite(yOf(p));
        }
        if (!any && !points.isEmpty()) {
            return Error{QStringLiteral("sweep"),
                         Error::Code::Usage,
                         {},
                         QStringLiteral("no point has a throughput: the project gives no throughput.bytes or "
                                        "throughput.flops (docs/kpg-project.md)")};
        }
    }

    Plot::Figure f;
    f.title = title;
    const SweepAxis &xa = axes[xi];
    const std::optional<QVector<double>> xnum = numericValues(xa);
    f.x.title = xa.name;
    if (!xnum) {
        f.x.categories = xa.values;
    } else {
        bool pow2 = xa.values.size() > 1;
        for (double v : *xnum) {
            pow2 = pow2 && isPowerOfTwo(v);
        }
        f.x.logBase = pow2 ? 2 : 0;
    }
    const auto xOf = [&](const SweepPointResult &p) {
        const QString v = p.point.values.value(xi);
        const qsizetype k = xa.values.indexOf(v);
        return xnum ? (k >= 0 ? (*xnum)[k] : v.toDouble()) : double(k);
    };
    f.y.title = yTitle;
    f.y.si = throughput;

    if (options.heatmap) {
        if (si < 0) {
            return Error{QStringLiteral("sweep"),
                         Error::Code::Usage,
                         {},
                         QStringLiteral("a heatmap needs two axes; this sweep has one")};
        }
        f.kind = Plot::Kind::Heatmap;
        f.y.title = axes[si].name;
        f.heatmap.xLabels = xa.values;
        f.heatmap.yLabels = axes[si].values;
        f.heatmap.valueTitle = yTitle;
        f.heatmap.lowIsGood = !throughput;
        f.heatmap.values.fill(std::nan(""), xa.values.size() * axes[si].values.size());
        for (const SweepPointResult &p : points) {
            const qsizetype i = xa.values.indexOf(p.point.values.value(xi));
            const qsizetype j = axes[si].values.indexOf(p.point.values.value(si));
            const double v = yOf(p);
            if (i >= 0 && j >= 0 && std::isfinite(v)) {
                // With further axes, a cell shows the best of its points.
                double &cell = f.heatmap.values[j * xa.values.size() + i];
                cell = std::isfinite(cell) ? (throughput ? std::max(cell, v) : std::min(cell, v)) : v;
            }
        }
        return f;
    }

    // One line per combination of the other axes' values, in the sweep's order.
    QList<QString> order;
    QMap<QString, Plot::Series> lines;
    QMap<QString, Plot::Series> occupancy;
    for (const SweepPointResult &p : points) {
        QStringList key;
        if (si >= 0) {
            key << QStringLiteral("%1=%2").arg(axes[si].name, p.point.values.value(si));
        }
        for (int a = 0; a < axes.size(); ++a) {
            if (a != xi && a != si) {
                key << QStringLiteral("%1=%2").arg(axes[a].name, p.point.values.value(a));
            }
        }
        const QString name = key.join(QLatin1Char(' '));
        if (!lines.contains(name)) {
            order << name;
            lines[name].name = name.isEmpty() ? yTitle : name;
        }
        const double y = yOf(p);
        if (!std::isfinite(y)) {
            continue;
        }
        lines[name].points << QPointF(xOf(p), y);
        lines[name].labels << p.label;
        if (!p.run.run.steps.isEmpty()) {
            Plot::Series &o = occupancy[name];
            o.points << QPointF(xOf(p), p.run.run.steps.first().occupancy.ratio);
            o.labels << p.label;
        }
    }
    for (const QString &name : order) {
        f.series << lines[name];
    }
    if (order.size() == 1 && occupancy.contains(order.first())) {
        Plot::Series o = occupancy[order.first()];
        o.name = QStringLiteral("occupancy");
        o.secondaryY = true;
        f.series << o;
        f.hasY2 = true;
        f.y2.title = QStringLiteral("occupancy");
        f.y2.percent = true;
        f.y2.min = 0;
        f.y2.max = 1.05;
    }
    if (throughput && options.ceilings) {
        const DeviceCeilings &c = *options.ceilings;
        if (flops) {
            f.hlines << Plot::HLine{c.fp32FlopsPerSecond,
                                    QStringLiteral("FP32 peak %1 TFLOP/s").arg(c.fp32FlopsPerSecond / 1e12, 0, 'f', 1)};
            f.hlines << Plot::HLine{c.fp64FlopsPerSecond,
                                    QStringLiteral("FP64 peak %1 TFLOP/s").arg(c.fp64FlopsPerSecond / 1e12, 0, 'f', 1)};
        } else {
            f.hlines << Plot::HLine{c.bytesPerSecond,
                                    QStringLiteral("copy %1 TB/s").arg(c.bytesPerSecond / 1e12, 0, 'f', 2)};
        }
    }
    return f;
}

Plot::Figure rooflineFigure(const QString &title, const QList<SweepPointResult> &points, const DeviceCeilings &c)
{
    Plot::Figure f;
    f.kind = Plot::Kind::Roofline;
    f.title = title;
    f.x.title = QStringLiteral("arithmetic intensity (FLOP/byte)");
    f.y.title = QStringLiteral("achieved FLOP/s");
    f.roofline.bytesPerSecond = c.bytesPerSecond;
    f.roofline.roofs = {{QStringLiteral("FP32"), c.fp32FlopsPerSecond}, {QStringLiteral("FP64"), c.fp64FlopsPerSecond}};
    for (const SweepPointResult &p : points) {
        const RunResult &r = p.run.run;
        if (p.timed() && r.flops > 0 && r.bytes > 0) {
            f.roofline.points << Plot::Roofline::Point{r.flops / r.bytes, r.flopsPerSecond, p.label};
        }
    }
    return f;
}

} // namespace Kp
