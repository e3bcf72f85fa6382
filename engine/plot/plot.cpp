#include "plot.h"

#include "core/safefile.h"

#include <QBuffer>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>
#include <QSvgGenerator>

#include <algorithm>
#include <cmath>
#include <limits>

namespace Kp::Plot {

Palette Palette::light()
{
    Palette p;
    p.background = QColor(0xff, 0xff, 0xff);
    p.plotBackground = QColor(0xfb, 0xfb, 0xfc);
    p.axis = QColor(0x40, 0x40, 0x48);
    p.grid = QColor(0xe2, 0xe4, 0xe8);
    p.text = QColor(0x1e, 0x1e, 0x24);
    p.mutedText = QColor(0x55, 0x58, 0x60);
    p.ceiling = QColor(0xc0, 0x39, 0x2b);
    p.series = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c), QColor(0xd6, 0x27, 0x28),
                QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b), QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f),
                QColor(0xbc, 0xbd, 0x22), QColor(0x17, 0xbe, 0xcf)};
    return p;
}

Palette Palette::dark()
{
    Palette p;
    p.background = QColor(0x1e, 0x1f, 0x22);
    p.plotBackground = QColor(0x25, 0x26, 0x2a);
    p.axis = QColor(0xa0, 0xa4, 0xac);
    p.grid = QColor(0x36, 0x38, 0x3e);
    p.text = QColor(0xdc, 0xde, 0xe2);
    p.mutedText = QColor(0xa8, 0xab, 0xb2);
    p.ceiling = QColor(0xff, 0x6b, 0x5b);
    p.series = {QColor(0x4c, 0xa3, 0xff), QColor(0xff, 0xa6, 0x4d), QColor(0x5c, 0xd6, 0x6a), QColor(0xff, 0x6b, 0x6b),
                QColor(0xc3, 0x9b, 0xff), QColor(0xd9, 0xa0, 0x7a), QColor(0xff, 0x8f, 0xd2), QColor(0xb0, 0xb0, 0xb0),
                QColor(0xe0, 0xe0, 0x50), QColor(0x4d, 0xe0, 0xf0)};
    return p;
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double fwd(const Axis &a, double v)
{
    if (a.logBase == 0) {
        return v;
    }
    return v > 0 ? std::log(v) / std::log(double(a.logBase)) : kNaN;
}

double inv(const Axis &a, double t)
{
    return a.logBase == 0 ? t : std::pow(double(a.logBase), t);
}

QString siNumber(double v)
{
    const double a = std::abs(v);
    static const struct
    {
        double scale;
        const char *prefix;
    } prefixes[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
    for (const auto &p : prefixes) {
        if (a >= p.scale) {
            return QString::number(v / p.scale, 'g', 3) + QLatin1String(p.prefix);
        }
    }
    return QString::number(v, 'g', 3);
}

/** Viridis, sampled at 9 points: readable in both themes and for colour-blind eyes. */
QColor colormap(double t)
{
    static const QColor stops[] = {QColor(0x44, 0x01, 0x54), QColor(0x47, 0x2c, 0x7a), QColor(0x3b, 0x51, 0x8b),
                                   QColor(0x2c, 0x71, 0x8e), QColor(0x21, 0x90, 0x8d), QColor(0x27, 0xad, 0x81),
                                   QColor(0x5c, 0xc8, 0x63), QColor(0xaa, 0xdc, 0x32), QColor(0xfd, 0xe7, 0x25)};
    t = std::clamp(t, 0.0, 1.0) * 8.0;
    const int i = std::min(7, int(t));
    const double f = t - i;
    const QColor &a = stops[i];
    const QColor &b = stops[i + 1];
    return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * f),
                            float(a.greenF() + (b.greenF() - a.greenF()) * f),
                            float(a.blueF() + (b.blueF() - a.blueF()) * f));
}

struct Range
{
    double lo = std::numeric_limits<double>::infinity();
    double hi = -std::numeric_limits<double>::infinity();
    void add(double t)
    {
        if (std::isfinite(t)) {
            lo = std::min(lo, t);
            hi = std::max(hi, t);
        }
    }
    bool valid() const { return lo <= hi; }
};

/** Everything render() and hitTest() agree on. */
struct Layout
{
    QRectF rect, area;
    QFont font, titleFont;
    double fontPx = 11;
    Axis x, y, y2;
    double xlo = 0, xhi = 1, ylo = 0, yhi = 1, y2lo = 0, y2hi = 1; // transformed (log) units
    double legendTop = 0, legendHeight = 0;
    double colorbarWidth = 0;

    double px(double v) const
    {
        const double t = fwd(x, v);
        return area.left() + (t - xlo) / (xhi - xlo) * area.width();
    }
    double py(double v, bool secondary = false) const
    {
        const Axis &a = secondary ? y2 : y;
        const double lo = secondary ? y2lo : ylo, hi = secondary ? y2hi : yhi;
        const double t = fwd(a, v);
        return area.bottom() - (t - lo) / (hi - lo) * area.height();
    }
};

void finishRange(const Axis &a, Range &r, bool zeroBased)
{
    if (!a.categories.isEmpty()) {
        r.lo = -0.5;
        r.hi = a.categories.size() - 0.5;
        return;
    }
    if (!r.valid()) {
        r.lo = a.logBase ? 0 : 0;
        r.hi = 1;
    }
    if (a.min) {
        r.lo = fwd(a, *a.min);
    }
    if (a.max) {
        r.hi = fwd(a, *a.max);
    }
    if (a.logBase) {
        if (!a.min) {
            r.lo = a.logBase == 10 ? std::floor(r.lo) : r.lo - 0.25;
        }
        if (!a.max) {
            r.hi = a.logBase == 10 ? std::ceil(r.hi) : r.hi + 0.25;
        }
        if (r.hi - r.lo < 1e-9) {
            r.lo -= 0.5;
            r.hi += 0.5;
        }
        return;
    }
    if (zeroBased && !a.min && r.lo >= 0) {
        r.lo = 0;
    }
    if (r.hi - r.lo < 1e-300) {
        const double pad = r.hi == 0 ? 1 : std::abs(r.hi) * 0.1;
        r.lo -= a.min ? 0 : pad;
        r.hi += pad;
    } else if (!a.max) {
        r.hi += (r.hi - r.lo) * 0.06;
    }
}

QStringList legendEntries(const Figure &f)
{
    QStringList names;
    if (f.kind == Kind::Lines) {
        for (const Series &s : f.series) {
            if (!s.name.isEmpty()) {
                names << s.name;
            }
        }
    } else if (f.kind == Kind::Roofline) {
        if (f.roofline.bytesPerSecond > 0) {
            names << QStringLiteral("memory %1B/s").arg(siNumber(f.roofline.bytesPerSecond));
        }
        for (const Roofline::Roof &r : f.roofline.roofs) {
            names << QStringLiteral("%1 %2FLOP/s").arg(r.name, siNumber(r.flopsPerSecond));
        }
    }
    return names;
}

/** The legend's rows of entries (swatch + text), wrapped to width. */
QList<QList<int>> legendRows(const QStringList &names, const QFontMetricsF &fm, double width, double swatch)
{
    QList<QList<int>> rows;
    double x = 0;
    for (int i = 0; i < names.size(); ++i) {
        const double w = swatch + fm.horizontalAdvance(names[i]) + fm.height();
        if (rows.isEmpty() || (x + w > width && x > 0)) {
            rows.append(QList<int>{});
            x = 0;
        }
        rows.last().append(i);
        x += w;
    }
    return rows;
}

Layout layout(const Figure &f, const QRectF &rect)
{
    Layout L;
    L.rect = rect;
    L.x = f.x;
    L.y = f.y;
    L.y2 = f.y2;
    L.fontPx = std::clamp(std::min(rect.width(), rect.height() * 1.4) / 36.0, 10.0, 15.0);
    L.font.setPixelSize(int(std::round(L.fontPx)));
    L.titleFont = L.font;
    L.titleFont.setPixelSize(int(std::round(L.fontPx * 1.2)));
    L.titleFont.setBold(true);
    const QFontMetricsF fm(L.font);
    const QFontMetricsF tfm(L.titleFont);
    const double pad = L.fontPx * 0.6;

    Range xr, yr, y2r;
    if (f.kind == Kind::Lines) {
        for (const Series &s : f.series) {
            for (const QPointF &p : s.points) {
                if (!std::isfinite(p.y())) {
                    continue;
                }
                xr.add(fwd(f.x, p.x()));
                (s.secondaryY ? y2r : yr).add(fwd(s.secondaryY ? f.y2 : f.y, p.y()));
            }
        }
        for (const HLine &h : f.hlines) {
            (h.secondaryY ? y2r : yr).add(fwd(h.secondaryY ? f.y2 : f.y, h.y));
        }
        finishRange(f.x, xr, false);
        finishRange(f.y, yr, true);
        finishRange(f.y2, y2r, true);
    } else if (f.kind == Kind::Heatmap) {
        xr = {-0.5, std::max(0.5, f.heatmap.xLabels.size() - 0.5)};
        yr = {-0.5, std::max(0.5, f.heatmap.yLabels.size() - 0.5)};
        L.x.logBase = L.y.logBase = 0;
    } else {
        L.x.logBase = L.y.logBase = 10;
        L.x.si = L.y.si = true;
        const Roofline &r = f.roofline;
        for (const Roofline::Point &p : r.points) {
            xr.add(fwd(L.x, p.intensity));
            yr.add(fwd(L.y, p.flopsPerSecond));
        }
        for (const Roofline::Roof &roof : r.roofs) {
            yr.add(fwd(L.y, roof.flopsPerSecond * 2));
            if (r.bytesPerSecond > 0) {
                xr.add(fwd(L.x, roof.flopsPerSecond / r.bytesPerSecond * 4));
                xr.add(fwd(L.x, roof.flopsPerSecond / r.bytesPerSecond / 8));
            }
        }
        if (r.bytesPerSecond > 0 && xr.valid()) {
            yr.add(fwd(L.y, r.bytesPerSecond * std::pow(10.0, xr.lo)));
        }
        finishRange(L.x, xr, false);
        finishRange(L.y, yr, false);
    }
    L.xlo = xr.lo;
    L.xhi = xr.hi;
    L.ylo = yr.lo;
    L.yhi = yr.hi;
    L.y2lo = y2r.lo;
    L.y2hi = y2r.hi;

    // Margins from what must fit: the widest tick label, the axis titles
    // (one line each, never elided), the title and the legend's rows.
    double yLabelW = 0;
    if (f.kind == Kind::Heatmap) {
        for (const QString &s : f.heatmap.yLabels) {
            yLabelW = std::max(yLabelW, fm.horizontalAdvance(s));
        }
    } else {
        for (double t : ticks(L.y, L.ylo, L.yhi)) {
            yLabelW = std::max(yLabelW, fm.horizontalAdvance(tickLabel(L.y, t)));
        }
    }
    double y2LabelW = 0;
    if (f.hasY2 && f.kind == Kind::Lines) {
        for (double t : ticks(L.y2, L.y2lo, L.y2hi)) {
            y2LabelW = std::max(y2LabelW, fm.horizontalAdvance(tickLabel(L.y2, t)));
        }
    }
    if (f.kind == Kind::Heatmap) {
        L.colorbarWidth = L.fontPx * 1.2;
        // The colour bar's labels: the extreme values.
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (double v : f.heatmap.values) {
            if (std::isfinite(v)) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
        }
        for (double v : {lo, hi}) {
            if (std::isfinite(v)) {
                y2LabelW = std::max(y2LabelW, fm.horizontalAdvance(siNumber(v)));
            }
        }
    }
    const double left = rect.left() + pad + (L.y.title.isEmpty() ? 0 : fm.height() + pad) + yLabelW + pad;
    double right = rect.right() - pad;
    if (f.hasY2 && f.kind == Kind::Lines) {
        right -= y2LabelW + pad + (L.y2.title.isEmpty() ? 0 : fm.height() + pad);
    } else if (f.kind == Kind::Heatmap) {
        right -= L.colorbarWidth + pad + y2LabelW + pad + (f.heatmap.valueTitle.isEmpty() ? 0 : fm.height() + pad);
    } else {
        // Room for the last tick label, centred on the right edge.
        right -= fm.horizontalAdvance(QStringLiteral("0000")) / 2;
    }
    double top = rect.top() + pad;
    if (!f.title.isEmpty()) {
        top += tfm.height() + pad * 0.5;
    }
    const QStringList legend = legendEntries(f);
    if (!legend.isEmpty()) {
        const QList<QList<int>> rows = legendRows(legend, fm, right - left, L.fontPx * 1.6);
        L.legendTop = top;
        L.legendHeight = rows.size() * fm.height() * 1.15;
        top += L.legendHeight + pad * 0.5;
    }
    top += fm.height() * 0.5; // the top tick label's upper half
    double bottom = rect.bottom() - pad - fm.height() - pad * 0.5;
    if (!L.x.title.isEmpty()) {
        bottom -= fm.height() + pad * 0.5;
    }
    L.area = QRectF(QPointF(left, top), QPointF(std::max(left + 10, right), std::max(top + 10, bottom)));
    return L;
}

QColor seriesColor(const Palette &p, int i)
{
    return p.series.isEmpty() ? p.text : p.series[i % p.series.size()];
}

void drawAxes(QPainter &g, const Figure &f, const Layout &L, const Palette &pal)
{
    const QFontMetricsF fm(L.font);
    g.setFont(L.font);
    const double pad = L.fontPx * 0.6;
    QPen gridPen(pal.grid, 1);
    QPen axisPen(pal.axis, 1);
    const double tick = L.fontPx * 0.35;

    // x ticks
    if (f.kind == Kind::Heatmap) {
        const int n = f.heatmap.xLabels.size();
        // Labels that do not fit side by side are thinned, never elided.
        double widest = 0;
        for (const QString &s : f.heatmap.xLabels) {
            widest = std::max(widest, fm.horizontalAdvance(s));
        }
        const double cell = L.area.width() / std::max(1, n);
        const int every = std::max(1, int(std::ceil((widest + pad) / std::max(1.0, cell))));
        g.setPen(pal.text);
        for (int i = 0; i < n; i += every) {
            const double cx = L.area.left() + (i + 0.5) * cell;
            const QString &s = f.heatmap.xLabels[i];
            g.drawText(QPointF(cx - fm.horizontalAdvance(s) / 2, L.area.bottom() + pad * 0.5 + fm.ascent()), s);
        }
        const int m = f.heatmap.yLabels.size();
        const double rowH = L.area.height() / std::max(1, m);
        const int everyY = std::max(1, int(std::ceil(fm.height() / std::max(1.0, rowH))));
        for (int j = 0; j < m; j += everyY) {
            const double cy = L.area.bottom() - (j + 0.5) * rowH;
            const QString &s = f.heatmap.yLabels[j];
            g.drawText(
                QPointF(L.area.left() - pad * 0.5 - fm.horizontalAdvance(s), cy + fm.ascent() / 2 - fm.descent() / 2),
                s);
        }
    } else {
        const QVector<double> xt = ticks(L.x, L.xlo, L.xhi);
        double lastRight = -1e300;
        for (double t : xt) {
            const double xx = L.area.left() + (t - L.xlo) / (L.xhi - L.xlo) * L.area.width();
            g.setPen(gridPen);
            g.drawLine(QPointF(xx, L.area.top()), QPointF(xx, L.area.bottom()));
            g.setPen(axisPen);
            g.drawLine(QPointF(xx, L.area.bottom()), QPointF(xx, L.area.bottom() + tick));
            const QString s = tickLabel(L.x, inv(L.x, t));
            const double w = fm.horizontalAdvance(s);
            if (xx - w / 2 < lastRight + pad * 0.5) {
                continue; // would overlap its neighbour
            }
            g.setPen(pal.text);
            g.drawText(QPointF(xx - w / 2, L.area.bottom() + tick + fm.ascent()), s);
            lastRight = xx + w / 2;
        }
        for (double t : ticks(L.y, L.ylo, L.yhi)) {
            const double yy = L.area.bottom() - (t - L.ylo) / (L.yhi - L.ylo) * L.area.height();
            g.setPen(gridPen);
            g.drawLine(QPointF(L.area.left(), yy), QPointF(L.area.right(), yy));
            g.setPen(axisPen);
            g.drawLine(QPointF(L.area.left() - tick, yy), QPointF(L.area.left(), yy));
            const QString s = tickLabel(L.y, inv(L.y, t));
            g.setPen(pal.text);
            g.drawText(
                QPointF(L.area.left() - tick - 2 - fm.horizontalAdvance(s), yy + fm.ascent() / 2 - fm.descent() / 2),
                s);
        }
        if (f.hasY2 && f.kind == Kind::Lines) {
            for (double t : ticks(L.y2, L.y2lo, L.y2hi)) {
                const double yy = L.area.bottom() - (t - L.y2lo) / (L.y2hi - L.y2lo) * L.area.height();
                g.setPen(axisPen);
                g.drawLine(QPointF(L.area.right(), yy), QPointF(L.area.right() + tick, yy));
                g.setPen(pal.mutedText);
                g.drawText(QPointF(L.area.right() + tick + 2, yy + fm.ascent() / 2 - fm.descent() / 2),
                           tickLabel(L.y2, inv(L.y2, t)));
            }
        }
    }
    g.setPen(axisPen);
    g.setBrush(Qt::NoBrush);
    g.drawRect(L.area);

    // Axis titles, whole: the layout reserved a line for each.
    g.setPen(pal.text);
    if (!L.x.title.isEmpty()) {
        const double w = fm.horizontalAdvance(L.x.title);
        g.drawText(QPointF(L.area.center().x() - w / 2, L.rect.bottom() - pad - fm.descent()), L.x.title);
    }
    const auto vertical = [&](const QString &text, double x, QColor color) {
        g.save();
        g.setPen(color);
        g.translate(x, L.area.center().y());
        g.rotate(-90);
        g.drawText(QPointF(-fm.horizontalAdvance(text) / 2, 0), text);
        g.restore();
    };
    if (!L.y.title.isEmpty()) {
        vertical(L.y.title, L.rect.left() + pad + fm.ascent(), pal.text);
    }
    if (f.hasY2 && f.kind == Kind::Lines && !L.y2.title.isEmpty()) {
        vertical(L.y2.title, L.rect.right() - pad - fm.descent(), pal.mutedText);
    }
    if (!f.title.isEmpty()) {
        g.setFont(L.titleFont);
        const QFontMetricsF tfm(L.titleFont);
        g.drawText(QPointF(L.area.left(), L.rect.top() + pad + tfm.ascent()), f.title);
        g.setFont(L.font);
    }
}

void drawLegend(QPainter &g, const Figure &f, const Layout &L, const Palette &pal)
{
    const QStringList names = legendEntries(f);
    if (names.isEmpty()) {
        return;
    }
    const QFontMetricsF fm(L.font);
    const double swatch = L.fontPx * 1.6;
    const QList<QList<int>> rows = legendRows(names, fm, L.area.width(), swatch);
    double y = L.legendTop;
    for (const QList<int> &row : rows) {
        double x = L.area.left();
        for (int i : row) {
            QColor c;
            Qt::PenStyle style = Qt::SolidLine;
            if (f.kind == Kind::Lines) {
                // The i-th named series: find its index.
                int k = -1;
                for (int s = 0, named = -1; s < f.series.size(); ++s) {
                    if (!f.series[s].name.isEmpty() && ++named == i) {
                        k = s;
                        break;
                    }
                }
                c = f.series[k].secondaryY ? pal.mutedText : seriesColor(pal, k);
                style = f.series[k].secondaryY ? Qt::DashLine : Qt::SolidLine;
            } else {
                // Entry 0 is the memory roof, entry k the (k-1)-th compute roof, as drawRoofline colours them.
                c = i <= 1 ? pal.ceiling : seriesColor(pal, i);
                style = i <= 1 ? Qt::SolidLine : Qt::DashLine;
            }
            QPen pen(c, 2, style);
            g.setPen(pen);
            const double cy = y + fm.height() / 2;
            g.drawLine(QPointF(x, cy), QPointF(x + swatch * 0.8, cy));
            g.setPen(pal.text);
            g.drawText(QPointF(x + swatch, y + fm.ascent()), names[i]);
            x += swatch + fm.horizontalAdvance(names[i]) + fm.height();
        }
        y += fm.height() * 1.15;
    }
}

void drawLines(QPainter &g, const Figure &f, const Layout &L, const Palette &pal)
{
    g.save();
    g.setClipRect(L.area.adjusted(-1, -1, 1, 1));
    const double marker = std::max(2.5, L.fontPx * 0.28);
    const int columns = std::max(1, int(L.area.width()));
    for (int si = 0; si < f.series.size(); ++si) {
        const Series &s = f.series[si];
        QVector<QPointF> pts;
        pts.reserve(s.points.size());
        for (const QPointF &p : s.points) {
            if (std::isfinite(p.x()) && std::isfinite(p.y()) && std::isfinite(fwd(L.x, p.x())) &&
                std::isfinite(fwd(s.secondaryY ? L.y2 : L.y, p.y()))) {
                pts.append(p);
            }
        }
        std::stable_sort(pts.begin(), pts.end(), [](const QPointF &a, const QPointF &b) { return a.x() < b.x(); });
        const bool many = pts.size() > 2 * columns;
        if (many) {
            pts = decimate(pts, inv(L.x, L.xlo), inv(L.x, L.xhi), columns, L.x.logBase != 0);
        }
        QPolygonF line;
        line.reserve(pts.size());
        for (const QPointF &p : pts) {
            line.append(QPointF(L.px(p.x()), L.py(p.y(), s.secondaryY)));
        }
        // A second-axis line (occupancy) in the muted colour: it is context, not a measurement.
        const QColor c = s.secondaryY ? pal.mutedText : seriesColor(pal, si);
        QPen pen(c, many ? 1.0 : 2.0, s.secondaryY ? Qt::DashLine : Qt::SolidLine);
        pen.setJoinStyle(Qt::RoundJoin);
        g.setPen(pen);
        g.setBrush(Qt::NoBrush);
        g.drawPolyline(line);
        if (!many) {
            g.setPen(QPen(c, 1));
            g.setBrush(s.secondaryY ? QBrush(pal.plotBackground) : QBrush(c));
            for (const QPointF &p : line) {
                g.drawEllipse(p, marker, marker);
            }
        }
    }
    g.restore();

    // Ceilings: a dashed line with its name above its right end.
    const QFontMetricsF fm(L.font);
    for (const HLine &h : f.hlines) {
        const double yy = L.py(h.y, h.secondaryY);
        if (!std::isfinite(yy) || yy < L.area.top() - 0.5 || yy > L.area.bottom() + 0.5) {
            continue;
        }
        g.setPen(QPen(pal.ceiling, 1.5, Qt::DashLine));
        g.drawLine(QPointF(L.area.left(), yy), QPointF(L.area.right(), yy));
        if (!h.label.isEmpty()) {
            g.setPen(pal.ceiling);
            const double w = fm.horizontalAdvance(h.label);
            const double ty =
                yy - 3 - fm.descent() < L.area.top() + fm.ascent() ? yy + 3 + fm.ascent() : yy - 3 - fm.descent();
            g.drawText(QPointF(L.area.right() - w - 4, ty), h.label);
        }
    }
}

void drawHeatmap(QPainter &g, const Figure &f, const Layout &L, const Palette &pal)
{
    const Heatmap &h = f.heatmap;
    const int nx = h.xLabels.size(), ny = h.yLabels.size();
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (double v : h.values) {
        if (std::isfinite(v) && (!h.logColor || v > 0)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    const auto norm = [&](double v) {
        if (!(hi > lo)) {
            return 0.5;
        }
        double t = h.logColor ? (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) : (v - lo) / (hi - lo);
        return h.lowIsGood ? 1 - t : t;
    };
    const double cw = L.area.width() / std::max(1, nx), ch = L.area.height() / std::max(1, ny);
    const QFontMetricsF fm(L.font);
    g.setFont(L.font);
    for (int j = 0; j < ny; ++j) {
        for (int i = 0; i < nx; ++i) {
            const double v = h.values.value(j * nx + i, kNaN);
            const QRectF cell(L.area.left() + i * cw, L.area.bottom() - (j + 1) * ch, cw, ch);
            if (!std::isfinite(v)) {
                g.fillRect(cell, pal.plotBackground);
                continue;
            }
            const QColor c = colormap(norm(v));
            g.fillRect(cell, c);
            const QString s = siNumber(v);
            if (fm.horizontalAdvance(s) + 4 < cw && fm.height() < ch) {
                const double luma = 0.299 * c.redF() + 0.587 * c.greenF() + 0.114 * c.blueF();
                g.setPen(luma > 0.5 ? QColor(0x10, 0x10, 0x10) : QColor(0xf0, 0xf0, 0xf0));
                g.drawText(cell, Qt::AlignCenter, s);
            }
        }
    }
    // The colour bar, bright end where the best values are.
    const double pad = L.fontPx * 0.6;
    const QRectF bar(L.area.right() + pad, L.area.top(), L.colorbarWidth, L.area.height());
    for (int k = 0; k < int(bar.height()); ++k) {
        const double t = 1 - k / std::max(1.0, bar.height() - 1);
        g.setPen(colormap(h.lowIsGood ? 1 - t : t));
        g.drawLine(QPointF(bar.left(), bar.top() + k), QPointF(bar.right(), bar.top() + k));
    }
    g.setPen(pal.axis);
    g.drawRect(bar);
    g.setPen(pal.text);
    if (std::isfinite(lo)) {
        g.drawText(QPointF(bar.right() + 3, bar.top() + fm.ascent()), siNumber(hi));
        g.drawText(QPointF(bar.right() + 3, bar.bottom()), siNumber(lo));
    }
    if (!h.valueTitle.isEmpty()) {
        g.save();
        g.translate(L.rect.right() - pad - fm.descent(), L.area.center().y());
        g.rotate(-90);
        g.drawText(QPointF(-fm.horizontalAdvance(h.valueTitle) / 2, 0), h.valueTitle);
        g.restore();
    }
}

void drawRoofline(QPainter &g, const Figure &f, const Layout &L, const Palette &pal)
{
    const Roofline &r = f.roofline;
    const QFontMetricsF fm(L.font);
    const double xmin = inv(L.x, L.xlo), xmax = inv(L.x, L.xhi);
    g.save();
    g.setClipRect(L.area);
    for (int i = 0; i < r.roofs.size(); ++i) {
        const Roofline::Roof &roof = r.roofs[i];
        const double ridge = r.bytesPerSecond > 0 ? roof.flopsPerSecond / r.bytesPerSecond : xmin;
        const QColor c = i == 0 ? pal.ceiling : seriesColor(pal, i + 1);
        g.setPen(QPen(c, 2, i == 0 ? Qt::SolidLine : Qt::DashLine));
        g.drawLine(QPointF(L.px(std::max(ridge, xmin)), L.py(roof.flopsPerSecond)),
                   QPointF(L.area.right(), L.py(roof.flopsPerSecond)));
    }
    if (r.bytesPerSecond > 0) {
        const double top = r.roofs.isEmpty() ? r.bytesPerSecond * xmax : r.roofs.first().flopsPerSecond;
        const double xEnd = std::min(xmax, top / r.bytesPerSecond);
        g.setPen(QPen(pal.ceiling, 2));
        g.drawLine(QPointF(L.px(xmin), L.py(r.bytesPerSecond * xmin)),
                   QPointF(L.px(xEnd), L.py(r.bytesPerSecond * xEnd)));
    }
    g.restore();
    // The ridge point of the first roof, labelled.
    if (r.bytesPerSecond > 0 && !r.roofs.isEmpty()) {
        const double ridge = r.roofs.first().flopsPerSecond / r.bytesPerSecond;
        const QPointF p(L.px(ridge), L.py(r.roofs.first().flopsPerSecond));
        if (L.area.contains(p)) {
            g.setPen(QPen(pal.ceiling, 1));
            g.setBrush(pal.ceiling);
            g.drawEllipse(p, 4, 4);
            const QString s = QStringLiteral("ridge %1 FLOP/B").arg(QString::number(ridge, 'g', 3));
            g.setPen(pal.text);
            g.drawText(
                QPointF(std::min(p.x() + 6, L.area.right() - fm.horizontalAdvance(s) - 2), p.y() + fm.ascent() + 4), s);
        }
    }
    const double marker = std::max(3.0, L.fontPx * 0.35);
    const bool label = r.points.size() <= 12;
    // Labels already drawn: a label that would overlap one of them moves
    // down a line at a time (points of one kernel share its intensity and
    // sit close together), and is left out when no place near it is free.
    QList<QRectF> placed;
    for (int i = 0; i < r.points.size(); ++i) {
        const Roofline::Point &pt = r.points[i];
        if (!(pt.intensity > 0 && pt.flopsPerSecond > 0)) {
            continue;
        }
        const QPointF p(L.px(pt.intensity), L.py(pt.flopsPerSecond));
        const QColor c = seriesColor(pal, 0);
        g.setPen(QPen(pal.background, 1));
        g.setBrush(c);
        g.drawEllipse(p, marker, marker);
        if (label && !pt.label.isEmpty()) {
            // Right of the point, or left of it where the plot ends.
            const double w = fm.horizontalAdvance(pt.label);
            const double x = p.x() + marker + 2 + w <= L.area.right() ? p.x() + marker + 2 : p.x() - marker - 2 - w;
            const double h = fm.height();
            for (int tries = 0; tries < 5; ++tries) { // up to two lines off; further would name another point
                // Alternately below and above the point, further each time.
                const double dy = (tries % 2 ? -1 : 1) * ((tries + 1) / 2) * h;
                const QRectF box(x, p.y() - marker - fm.ascent() + dy, w, h);
                const bool free =
                    std::none_of(placed.cbegin(), placed.cend(), [&box](const QRectF &o) { return o.intersects(box); });
                if (free && L.area.contains(box)) {
                    placed << box;
                    g.setPen(pal.text);
                    g.drawText(QPointF(x, p.y() - marker + dy), pt.label);
                    break;
                }
            }
        }
    }
}

QString csvCell(QString s)
{
    if (s.contains(QLatin1Char(',')) || s.contains(QLatin1Char('"')) || s.contains(QLatin1Char('\n'))) {
        s.replace(QLatin1String("\""), QLatin1String("\"\""));
        return QLatin1Char('"') + s + QLatin1Char('"');
    }
    return s;
}

} // namespace

QVector<double> ticks(const Axis &axis, double lo, double hi, int maxTicks)
{
    QVector<double> out;
    if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) {
        return out;
    }
    if (!axis.categories.isEmpty()) {
        for (int i = std::max(0, int(std::ceil(lo))); i <= std::min(int(axis.categories.size()) - 1, int(hi)); ++i) {
            out.append(i);
        }
        return out;
    }
    if (axis.logBase) {
        // Every power (of 2 or 10), thinned to every k-th when there are too many.
        const double first = std::ceil(lo - 1e-9), last = std::floor(hi + 1e-9);
        const int count = int(last - first) + 1;
        const int step = std::max(1, int(std::ceil(double(count) / maxTicks)));
        for (double t = first; t <= last + 1e-9; t += step) {
            out.append(t);
        }
        return out;
    }
    const double raw = (hi - lo) / std::max(1, maxTicks);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
        if (m * mag >= raw) {
            step = m * mag;
            break;
        }
    }
    for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) {
        out.append(std::abs(t) < step * 1e-9 ? 0.0 : t);
    }
    return out;
}

QString tickLabel(const Axis &axis, double v)
{
    if (!axis.categories.isEmpty()) {
        const int i = int(std::round(v));
        return i >= 0 && i < axis.categories.size() ? axis.categories[i] : QString();
    }
    if (axis.percent) {
        return QString::number(v * 100, 'g', 3) + QLatin1Char('%');
    }
    if (axis.si) {
        return siNumber(v);
    }
    if (axis.logBase == 2 && v >= 1) {
        const double r = std::round(v);
        if (r < 1e7) {
            return QString::number(qint64(r));
        }
        return QStringLiteral("2^%1").arg(int(std::round(std::log2(v))));
    }
    return QString::number(v, 'g', 4);
}

QVector<QPointF> decimate(const QVector<QPointF> &sorted, double x0, double x1, int columns, bool logX)
{
    QVector<QPointF> out;
    if (sorted.isEmpty() || columns <= 0) {
        return out;
    }
    const auto tx = [logX](double v) { return logX ? std::log(v) : v; };
    const double a = tx(x0), b = tx(x1);
    const double scale = b > a ? columns / (b - a) : 0;
    out.reserve(std::min<qsizetype>(sorted.size(), qsizetype(columns) * 4 + 4));
    qsizetype i = 0;
    while (i < sorted.size()) {
        const qint64 col = qint64(std::floor((tx(sorted[i].x()) - a) * scale));
        const QPointF first = sorted[i];
        QPointF lo = first, hi = first, last = first;
        qsizetype j = i + 1;
        while (j < sorted.size() && qint64(std::floor((tx(sorted[j].x()) - a) * scale)) == col) {
            const QPointF &p = sorted[j];
            if (p.y() < lo.y()) {
                lo = p;
            }
            if (p.y() > hi.y()) {
                hi = p;
            }
            last = p;
            ++j;
        }
        out.append(first);
        // Min and max in the order they came, so the line does not zigzag backwards.
        if (lo.x() <= hi.x()) {
            out.append(lo);
            out.append(hi);
        } else {
            out.append(hi);
            out.append(lo);
        }
        out.append(last);
        i = j;
    }
    return out;
}

QRectF plotArea(const Figure &figure, const QRectF &rect)
{
    return layout(figure, rect).area;
}

void render(QPainter &g, const QRectF &rect, const Figure &f, const Palette &pal)
{
    const Layout L = layout(f, rect);
    g.save();
    g.setRenderHint(QPainter::Antialiasing, true);
    g.setRenderHint(QPainter::TextAntialiasing, true);
    g.fillRect(rect, pal.background);
    g.fillRect(L.area, pal.plotBackground);
    if (f.kind == Kind::Heatmap) {
        drawHeatmap(g, f, L, pal);
    }
    drawAxes(g, f, L, pal);
    drawLegend(g, f, L, pal);
    if (f.kind == Kind::Lines) {
        drawLines(g, f, L, pal);
    } else if (f.kind == Kind::Roofline) {
        drawRoofline(g, f, L, pal);
    }
    g.restore();
}

std::optional<Hit> hitTest(const Figure &f, const QRectF &rect, const QPointF &pos, double radius)
{
    const Layout L = layout(f, rect);
    if (f.kind == Kind::Heatmap) {
        if (!L.area.contains(pos)) {
            return std::nullopt;
        }
        const int nx = f.heatmap.xLabels.size(), ny = f.heatmap.yLabels.size();
        const int i = std::clamp(int((pos.x() - L.area.left()) / L.area.width() * nx), 0, nx - 1);
        const int j = std::clamp(int((L.area.bottom() - pos.y()) / L.area.height() * ny), 0, ny - 1);
        if (nx == 0 || ny == 0) {
            return std::nullopt;
        }
        const double v = f.heatmap.values.value(j * nx + i, kNaN);
        return Hit{j, i,
                   QStringLiteral("%1=%2  %3=%4: %5")
                       .arg(f.x.title, f.heatmap.xLabels[i], f.y.title, f.heatmap.yLabels[j],
                            std::isfinite(v) ? QString::number(v, 'g', 4) : QStringLiteral("no value"))};
    }
    double best = radius * radius;
    std::optional<Hit> hit;
    if (f.kind == Kind::Lines) {
        for (int s = 0; s < f.series.size(); ++s) {
            const Series &ser = f.series[s];
            for (int i = 0; i < ser.points.size(); ++i) {
                const QPointF p(L.px(ser.points[i].x()), L.py(ser.points[i].y(), ser.secondaryY));
                const double d = (p.x() - pos.x()) * (p.x() - pos.x()) + (p.y() - pos.y()) * (p.y() - pos.y());
                if (d <= best) {
                    best = d;
                    const QString label = ser.labels.value(i);
                    hit =
                        Hit{s, i,
                            (label.isEmpty() ? QStringLiteral("%1=%2").arg(f.x.title, tickLabel(f.x, ser.points[i].x()))
                                             : label) +
                                QStringLiteral(": %1 %2").arg(QString::number(ser.points[i].y(), 'g', 4),
                                                              ser.secondaryY ? f.y2.title : f.y.title)};
                }
            }
        }
    } else {
        for (int i = 0; i < f.roofline.points.size(); ++i) {
            const Roofline::Point &pt = f.roofline.points[i];
            const QPointF p(L.px(pt.intensity), L.py(pt.flopsPerSecond));
            const double d = (p.x() - pos.x()) * (p.x() - pos.x()) + (p.y() - pos.y()) * (p.y() - pos.y());
            if (d <= best) {
                best = d;
                hit = Hit{-1, i,
                          QStringLiteral("%1: %2 FLOP/B, %3FLOP/s")
                              .arg(pt.label, QString::number(pt.intensity, 'g', 3), siNumber(pt.flopsPerSecond))};
            }
        }
    }
    return hit;
}

QImage renderImage(const Figure &figure, const QSize &size, const Palette &palette, qreal dpr)
{
    QImage image(size * dpr, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(dpr);
    image.fill(palette.background);
    QPainter g(&image);
    render(g, QRectF(QPointF(0, 0), QSizeF(size)), figure, palette);
    return image;
}

QByteArray renderSvg(const Figure &figure, const QSize &size, const Palette &palette)
{
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setTitle(figure.title);
    svg.setDescription(QStringLiteral("Kernel Playground"));
    {
        QPainter g(&svg);
        render(g, QRectF(QPointF(0, 0), QSizeF(size)), figure, palette);
    }
    return buffer.data();
}

QByteArray toCsv(const Figure &f)
{
    QStringList lines;
    if (f.kind == Kind::Lines) {
        lines << QStringLiteral("series,%1,%2,label").arg(csvCell(f.x.title), csvCell(f.y.title));
        for (const Series &s : f.series) {
            for (int i = 0; i < s.points.size(); ++i) {
                lines << QStringLiteral("%1,%2,%3,%4")
                             .arg(csvCell(s.name), QString::number(s.points[i].x(), 'g', 10),
                                  QString::number(s.points[i].y(), 'g', 10), csvCell(s.labels.value(i)));
            }
        }
        for (const HLine &h : f.hlines) {
            lines << QStringLiteral("%1,,%2,ceiling").arg(csvCell(h.label), QString::number(h.y, 'g', 10));
        }
    } else if (f.kind == Kind::Heatmap) {
        lines << QStringLiteral("%1,%2,%3").arg(csvCell(f.y.title), csvCell(f.x.title), csvCell(f.heatmap.valueTitle));
        const int nx = f.heatmap.xLabels.size();
        for (int j = 0; j < f.heatmap.yLabels.size(); ++j) {
            for (int i = 0; i < nx; ++i) {
                const double v = f.heatmap.values.value(j * nx + i, kNaN);
                lines << QStringLiteral("%1,%2,%3")
                             .arg(csvCell(f.heatmap.yLabels[j]), csvCell(f.heatmap.xLabels[i]),
                                  std::isfinite(v) ? QString::number(v, 'g', 10) : QString());
            }
        }
    } else {
        lines << QStringLiteral("label,flops_per_byte,flops_per_second");
        for (const Roofline::Point &p : f.roofline.points) {
            lines << QStringLiteral("%1,%2,%3")
                         .arg(csvCell(p.label), QString::number(p.intensity, 'g', 10),
                              QString::number(p.flopsPerSecond, 'g', 10));
        }
        lines << QStringLiteral("memory roof,,%1").arg(QString::number(f.roofline.bytesPerSecond, 'g', 10));
        for (const Roofline::Roof &r : f.roofline.roofs) {
            lines << QStringLiteral("%1 roof,,%2").arg(csvCell(r.name), QString::number(r.flopsPerSecond, 'g', 10));
        }
    }
    return (lines.join(QLatin1Char('\n')) + QLatin1Char('\n')).toUtf8();
}

Status checkFormat(const QString &path)
{
    const QString ext = QFileInfo(path).suffix().toLower();
    if (ext == QLatin1String("png") || ext == QLatin1String("svg") || ext == QLatin1String("csv")) {
        return Unit{};
    }
    return Error{QStringLiteral("plot"),
                 Error::Code::Usage,
                 {},
                 QStringLiteral("%1: a plot is written as .png, .svg or .csv, not '%2'")
                     .arg(path, ext.isEmpty() ? QStringLiteral("(no extension)") : QLatin1Char('.') + ext)};
}

Status save(const QString &path, const Figure &figure, const QSize &size, const Palette &palette)
{
    if (const Status s = checkFormat(path); !s) {
        return s;
    }
    const QString ext = QFileInfo(path).suffix().toLower();
    if (ext == QLatin1String("png")) {
        QByteArray bytes;
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        renderImage(figure, size, palette).save(&buffer, "PNG");
        return writeOutput(path, bytes, QStringLiteral("the plot"));
    }
    if (ext == QLatin1String("svg")) {
        return writeOutput(path, renderSvg(figure, size, palette), QStringLiteral("the plot"));
    }
    if (ext == QLatin1String("csv")) {
        return writeOutput(path, toCsv(figure), QStringLiteral("the plot's data"));
    }
    return Unit{}; // unreachable: checkFormat allows only the three
}

} // namespace Kp::Plot
