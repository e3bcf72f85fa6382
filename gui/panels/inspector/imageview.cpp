#include "imageview.h"

#include "buffergridmodel.h"

#include "access/ownerimage.h"
#include "core/parallel.h"
#include "run/runner.h"

#include <QFontMetrics>
#include <QMouseEvent>
#include <QPainter>
#include <QPixmap>
#include <QWheelEvent>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace Kp {

namespace {

QString tripleText(const Dim3 &d)
{
    return QStringLiteral("(%1, %2, %3)").arg(d[0]).arg(d[1]).arg(d[2]);
}

QBrush checkerBrush()
{
    QPixmap pm(16, 16);
    pm.fill(QColor(200, 200, 200));
    QPainter p(&pm);
    p.fillRect(0, 0, 8, 8, QColor(150, 150, 150));
    p.fillRect(8, 8, 8, 8, QColor(150, 150, 150));
    return QBrush(pm);
}

int channel8(float v, float scale)
{
    const float f = v * scale;
    if (!(f > 0.0f)) {
        return 0; // also NaN
    }
    return f >= 255.0f ? 255 : static_cast<int>(f + 0.5f);
}

} // namespace

// ---- the view ---------------------------------------------------------

ImageView::ImageView(QWidget *parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setFocusPolicy(Qt::WheelFocus);
    setMinimumSize(64, 64);
}

ImageView::~ImageView() = default;

void ImageView::setBuffer(std::shared_ptr<const HostBuffer> buffer)
{
    m_buffer = std::move(buffer);
    rebuildSource();
}

void ImageView::setSource(std::shared_ptr<const ImageSource> source)
{
    m_buffer.reset();
    const QSize before = m_source ? QSize(int(m_source->geometry().width), int(m_source->geometry().height)) : QSize();
    m_source = std::move(source);
    const QSize after = m_source ? QSize(int(m_source->geometry().width), int(m_source->geometry().height)) : QSize();
    if (before != after) {
        m_autoFit = true;
    }
    m_autoLimits = {std::numeric_limits<double>::quiet_NaN(), 0};
    invalidateColors();
    if (m_hoverPos.x() >= 0) {
        m_hoverPixel = {-2, -2};
        updateHover(m_hoverPos);
    }
}

void ImageView::rebuildSource()
{
    std::shared_ptr<const HostBuffer> keep = m_buffer;
    m_ownersShown =
        keep && m_owners && m_owners->buffer == keep->spec.name && m_owners->elements() == keep->elementCount();
    setSource(!keep           ? nullptr
              : m_ownersShown ? std::shared_ptr<const ImageSource>(std::make_shared<OwnerImageSource>(
                                    keep, m_owners, m_ownerColour, m_width1D, m_slice))
                              : std::make_shared<BufferImageSource>(keep, m_width1D, m_slice));
    m_buffer = std::move(keep);
}

bool ImageView::legendMeansSomething() const
{
    // Threads and warps are spread over the map to tell neighbours apart: no scale to read.
    return !m_ownersShown || m_ownerColour == OwnerColour::FirstAccess;
}

void ImageView::setOwners(std::shared_ptr<const CellOwners> owners, OwnerColour colour)
{
    m_owners = std::move(owners);
    m_ownerColour = colour;
    if (m_buffer) {
        rebuildSource();
    }
}

void ImageView::setWidth1D(qint64 width)
{
    width = std::max<qint64>(0, width);
    if (width == m_width1D) {
        return;
    }
    m_width1D = width;
    if (m_buffer) {
        rebuildSource();
    }
}

void ImageView::setSlice(qint64 z)
{
    z = std::max<qint64>(0, z);
    if (z == m_slice) {
        return;
    }
    m_slice = z;
    if (m_buffer) {
        rebuildSource();
    }
}

void ImageView::refresh()
{
    if (m_buffer) {
        rebuildSource();
        return;
    }
    m_autoLimits = {std::numeric_limits<double>::quiet_NaN(), 0};
    invalidateColors();
}

void ImageView::invalidateColors()
{
    m_mapperValid = false;
    m_cacheStale = true;
    update();
}

void ImageView::setColormap(Colormap map)
{
    if (map != m_colormap) {
        m_colormap = map;
        invalidateColors();
    }
}

void ImageView::setAutoRange(bool on)
{
    if (on != m_autoRange) {
        m_autoRange = on;
        invalidateColors();
    }
}

void ImageView::setRange(double lo, double hi)
{
    m_autoRange = false;
    m_lo = lo;
    m_hi = hi;
    invalidateColors();
}

void ImageView::setChannels(int mask)
{
    mask &= AllChannels;
    if (mask != m_channels) {
        m_channels = mask;
        // The auto range of a vector type follows the channel shown.
        m_autoLimits = {std::numeric_limits<double>::quiet_NaN(), 0};
        invalidateColors();
    }
}

void ImageView::setLaunch(const Dim3 &grid, const Dim3 &block)
{
    m_hasLaunch = true;
    m_grid = grid;
    m_block = block;
    if (m_hoverPos.x() >= 0) {
        Q_EMIT hovered(hoverText(m_hoverPos));
    }
}

void ImageView::clearLaunch()
{
    m_hasLaunch = false;
}

std::pair<double, double> ImageView::range() const
{
    if (!m_autoRange) {
        return {m_lo, m_hi};
    }
    if (std::isnan(m_autoLimits.first) && m_source) {
        int component = -1;
        if (m_source->geometry().kind == PixelKind::Vector) {
            component = m_channels ? std::countr_zero(unsigned(m_channels)) : 0;
            component = std::min(component, m_source->geometry().components - 1);
        }
        auto r = m_source->finiteRange(component);
        if (std::isnan(r.first) || std::isnan(r.second)) {
            r = {0, 1};
        }
        m_autoLimits = r;
    }
    return std::isnan(m_autoLimits.first) ? std::pair<double, double>{0, 1} : m_autoLimits;
}

void ImageView::ensureMapper() const
{
    if (!m_mapperValid) {
        const auto [lo, hi] = range();
        m_mapper = ColorMapper(m_colormap, lo, hi);
        if (m_ownersShown) {
            m_mapper.setNanColor(qRgb(72, 72, 72)); // a cell no thread touched: quiet, not an alarm
        }
        m_mapperValid = true;
    }
}

void ImageView::convertRow(const float *values, qsizetype n, QRgb *out) const
{
    const ImageGeometry &g = m_source->geometry();
    const int comps = g.components;
    switch (g.kind) {
    case PixelKind::Scalar:
        for (qsizetype i = 0; i < n; ++i) {
            out[i] = m_mapper.map(values[i]);
        }
        return;
    case PixelKind::Vector: {
        const int c = std::min(m_channels ? std::countr_zero(unsigned(m_channels)) : 0, comps - 1);
        for (qsizetype i = 0; i < n; ++i) {
            out[i] = m_mapper.map(values[i * comps + c]);
        }
        return;
    }
    case PixelKind::Rgba8:
    case PixelKind::RgbaFloat: break;
    }
    const float scale = g.kind == PixelKind::Rgba8 ? 1.0f : 255.0f;
    const int mask = m_channels;
    const bool single = mask != 0 && (mask & (mask - 1)) == 0;
    const int singleChannel = single ? std::countr_zero(unsigned(mask)) : 0;
    const bool alpha = (mask & Alpha) && comps == 4;
    for (qsizetype i = 0; i < n; ++i) {
        const float *v = values + i * comps;
        if (single) {
            // One channel alone reads best as gray (RenderDoc does the same).
            const int k = singleChannel < comps ? channel8(v[singleChannel], scale) : (singleChannel == 3 ? 255 : 0);
            out[i] = qRgb(k, k, k);
            continue;
        }
        const int r = (mask & Red) ? channel8(v[0], scale) : 0;
        const int gr = (mask & Green) && comps > 1 ? channel8(v[1], scale) : 0;
        const int b = (mask & Blue) && comps > 2 ? channel8(v[2], scale) : 0;
        const int a = alpha ? channel8(v[3], scale) : 255;
        out[i] = a == 255 ? qRgb(r, gr, b) : qPremultiply(qRgba(r, gr, b, a));
    }
}

void ImageView::setCacheLimit(qint64 pixels)
{
    m_cacheLimit = std::max<qint64>(0, pixels);
    m_cache = QImage();
    m_cacheStale = true;
    update();
}

void ImageView::buildCache()
{
    const ImageGeometry &g = m_source->geometry();
    m_cache = QImage(int(g.width), int(g.height), QImage::Format_ARGB32_Premultiplied);
    if (m_cache.isNull()) {
        return; // out of memory: paint converts per frame instead
    }
    std::vector<qint64> xs(std::size_t(g.width));
    for (qint64 x = 0; x < g.width; ++x) {
        xs[std::size_t(x)] = x;
    }
    // Rows in parallel: a 1024 x 1024 buffer is a million colour lookups, and
    // this runs in the paint after every run and Play frame (bench_gui). The
    // source's reads and the mapper are const; each chunk writes its own rows.
    uchar *bits = m_cache.bits(); // detached here, on this thread
    const qsizetype stride = m_cache.bytesPerLine();
    parallelFor(g.height, threadsFor(g.width * g.height), [&](qint64 begin, qint64 end) {
        std::vector<float> values(std::size_t(g.width * g.components));
        for (qint64 y = begin; y < end; ++y) {
            auto *line = reinterpret_cast<QRgb *>(bits + y * stride);
            const qint64 len = g.rowLength(y);
            m_source->read(y, xs.data(), len, values.data());
            convertRow(values.data(), len, line);
            std::fill(line + len, line + g.width, QRgb(0));
        }
    });
    m_cacheStale = false;
}

double ImageView::minZoom() const
{
    if (!m_source || m_source->geometry().isEmpty() || width() <= 0 || height() <= 0) {
        return 1e-6;
    }
    const ImageGeometry &g = m_source->geometry();
    const double fit = std::min(double(width()) / double(g.width), double(height()) / double(g.height));
    return std::max(1e-6, std::min(1.0, fit) / 4);
}

void ImageView::setView(double zoom, QPointF origin)
{
    m_zoom = std::clamp(zoom, 1e-6, maxZoom());
    m_origin = origin;
    m_autoFit = false;
    update();
    Q_EMIT viewChanged();
    if (m_hoverPos.x() >= 0) {
        updateHover(m_hoverPos);
    }
}

void ImageView::zoomAt(double factor, QPointF widgetPos)
{
    const double z = std::clamp(m_zoom * factor, minZoom(), maxZoom());
    setView(z, widgetPos - (widgetPos - m_origin) * (z / m_zoom));
}

void ImageView::panBy(QPointF delta)
{
    setView(m_zoom, m_origin + delta);
}

bool ImageView::applyFit()
{
    if (!m_source || m_source->geometry().isEmpty() || width() <= 0 || height() <= 0) {
        return false;
    }
    const ImageGeometry &g = m_source->geometry();
    double z = std::min(double(width()) / double(g.width), double(height()) / double(g.height));
    if (z >= 1) {
        z = std::floor(z); // whole screen pixels per image pixel keep the pixels even
    }
    m_zoom = std::clamp(z, 1e-6, maxZoom());
    m_origin = QPointF(std::round((width() - double(g.width) * m_zoom) / 2),
                       std::round((height() - double(g.height) * m_zoom) / 2));
    return true;
}

void ImageView::fitToWindow()
{
    // Keep fitting while the dock is laid out, until the user zooms or pans.
    m_autoFit = true;
    if (applyFit()) {
        update();
        Q_EMIT viewChanged();
        if (m_hoverPos.x() >= 0) {
            updateHover(m_hoverPos);
        }
    }
}

void ImageView::centerOn(qint64 x, qint64 y)
{
    setView(m_zoom, QPointF(width() / 2.0 - (double(x) + 0.5) * m_zoom, height() / 2.0 - (double(y) + 0.5) * m_zoom));
}

QPoint ImageView::pixelAt(QPointF widgetPos) const
{
    if (!m_source || m_source->geometry().isEmpty()) {
        return {-1, -1};
    }
    const ImageGeometry &g = m_source->geometry();
    const double x = std::floor((widgetPos.x() - m_origin.x()) / m_zoom);
    const double y = std::floor((widgetPos.y() - m_origin.y()) / m_zoom);
    if (x < 0 || y < 0 || x >= double(g.width) || y >= double(g.height)) {
        return {-1, -1};
    }
    return {int(x), int(y)};
}

qint64 ImageView::elementAt(QPoint widgetPos) const
{
    // The pixel painted at that screen pixel, as for the hover line.
    const QPoint px = pixelAt(QPointF(widgetPos) + QPointF(0.5, 0.5));
    if (px.x() < 0 || !m_source->geometry().contains(px.x(), px.y())) {
        return -1;
    }
    return m_source->geometry().elementIndex(px.x(), px.y());
}

QString ImageView::hoverText(QPoint widgetPos) const
{
    // The pixel painted at that screen pixel: paint samples screen pixel centres.
    const QPoint px = pixelAt(QPointF(widgetPos) + QPointF(0.5, 0.5));
    if (px.x() < 0) {
        return {};
    }
    const ImageGeometry &g = m_source->geometry();
    if (!g.contains(px.x(), px.y())) {
        return {};
    }
    QString s = g.dims == 3 ? QStringLiteral("x %1, y %2, z %3").arg(px.x()).arg(px.y()).arg(g.slice)
                            : QStringLiteral("x %1, y %2").arg(px.x()).arg(px.y());
    s += QStringLiteral(", index %1: %2").arg(g.elementIndex(px.x(), px.y())).arg(m_source->valueText(px.x(), px.y()));
    if (m_hasLaunch) {
        const ThreadIndex t = threadForElement(m_grid, m_block, g.dims, g.coordinates(px.x(), px.y()), g.extents,
                                               g.pixelIndex(px.x(), px.y()));
        if (t.covered) {
            s += QStringLiteral(" | blockIdx %1, threadIdx %2 (if one thread per element)")
                     .arg(tripleText(t.blockIdx), tripleText(t.threadIdx));
        } else {
            s += QStringLiteral(" | no thread of grid %1 x block %2 (if one thread per element)")
                     .arg(tripleText(m_grid), tripleText(m_block));
        }
    }
    return s;
}

void ImageView::updateHover(QPoint pos)
{
    m_hoverPos = pos;
    QPoint px = pixelAt(QPointF(pos) + QPointF(0.5, 0.5));
    if (px.x() >= 0 && !m_source->geometry().contains(px.x(), px.y())) {
        px = {-1, -1};
    }
    if (px != m_hoverPixel) {
        m_hoverPixel = px;
        update();
        Q_EMIT hovered(hoverText(pos));
    }
}

void ImageView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), QColor(48, 48, 48));
    if (!m_source || m_source->geometry().isEmpty()) {
        p.setPen(QColor(200, 200, 200));
        p.drawText(rect(), Qt::AlignCenter, tr("No image"));
        return;
    }
    if (m_autoFit) {
        applyFit();
    }
    const ImageGeometry &g = m_source->geometry();
    ensureMapper();
    const bool wantCache = g.width * g.height <= m_cacheLimit;
    if (!wantCache) {
        m_cache = QImage();
    } else if (m_cacheStale || m_cache.isNull()) {
        buildCache();
    }
    const bool cached = wantCache && !m_cache.isNull();
    const double visiblePixels = std::min(double(g.width), double(width()) / m_zoom + 2) *
                                 std::min(double(g.height), double(height()) / m_zoom + 2);
    const bool byMax =
        m_reduceByMax && m_zoom < 1 && g.kind == PixelKind::Scalar && visiblePixels <= 16.0 * 1024 * 1024;

    // Screen pixels whose centres fall inside the image, and the image
    // pixel each one shows: the same floor((p + 0.5 - origin) / zoom) as
    // pixelAt(), so the hover line always names the pixel painted there.
    const double z = m_zoom;
    const double ox = m_origin.x();
    const double oy = m_origin.y();
    const auto sourceOf = [z](int d, double o, qint64 extent) {
        return std::clamp<qint64>(qint64(std::floor((d + 0.5 - o) / z)), 0, extent - 1);
    };
    const auto edge = [](double v, int lo, int hi) { return int(std::clamp(std::ceil(v), double(lo), double(hi))); };
    const int dx0 = edge(ox - 0.5, 0, width());
    const int dx1 = edge(ox + double(g.width) * z - 0.5, dx0, width());
    const int dy0 = edge(oy - 0.5, 0, height());
    const int dy1 = edge(oy + double(g.height) * z - 0.5, dy0, height());
    if (dx1 <= dx0 || dy1 <= dy0) {
        return;
    }
    const int fw = dx1 - dx0;
    const int fh = dy1 - dy0;
    if (m_frame.width() != fw || m_frame.height() != fh) {
        m_frame = QImage(fw, fh, QImage::Format_ARGB32_Premultiplied);
    }
    m_frameOrigin = QPoint(dx0, dy0);
    if (byMax) {
        fillFrameByMax(dx0, dy0, fw, fh);
        p.drawImage(dx0, dy0, m_frame);
        if (m_legend && legendMeansSomething()) {
            drawLegend(p);
        }
        return;
    }
    m_columns.clear();
    m_columnSlot.resize(std::size_t(fw));
    for (int i = 0; i < fw; ++i) {
        const qint64 sx = sourceOf(dx0 + i, ox, g.width);
        if (m_columns.empty() || m_columns.back() != sx) {
            m_columns.push_back(sx);
        }
        m_columnSlot[std::size_t(i)] = int(m_columns.size() - 1);
    }
    const qsizetype unique = qsizetype(m_columns.size());
    m_values.resize(std::size_t(unique * g.components));
    m_rowColors.resize(std::size_t(unique));
    qint64 previous = -1;
    for (int r = 0; r < fh; ++r) {
        auto *dst = reinterpret_cast<QRgb *>(m_frame.scanLine(r));
        const qint64 sy = sourceOf(dy0 + r, oy, g.height);
        if (sy == previous) {
            std::memcpy(dst, m_frame.constScanLine(r - 1), std::size_t(fw) * sizeof(QRgb));
            continue;
        }
        previous = sy;
        const qint64 len = g.rowLength(sy);
        const qsizetype valid = std::lower_bound(m_columns.begin(), m_columns.end(), len) - m_columns.begin();
        if (cached) {
            const auto *src = reinterpret_cast<const QRgb *>(m_cache.constScanLine(int(sy)));
            for (qsizetype k = 0; k < valid; ++k) {
                m_rowColors[std::size_t(k)] = src[m_columns[std::size_t(k)]];
            }
        } else {
            m_source->read(sy, m_columns.data(), valid, m_values.data());
            convertRow(m_values.data(), valid, m_rowColors.data());
        }
        std::fill(m_rowColors.begin() + valid, m_rowColors.end(), QRgb(0));
        for (int i = 0; i < fw; ++i) {
            dst[i] = m_rowColors[std::size_t(m_columnSlot[std::size_t(i)])];
        }
    }
    const bool translucent =
        (g.kind == PixelKind::Rgba8 || g.kind == PixelKind::RgbaFloat) && g.components == 4 && (m_channels & Alpha);
    if (translucent) {
        static const QBrush checker = checkerBrush();
        p.fillRect(QRect(dx0, dy0, fw, fh), checker);
    }
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    p.drawImage(dx0, dy0, m_frame);

    if (z >= textZoom()) {
        drawValues(p, m_columns.front(), m_columns.back(), sourceOf(dy0, oy, g.height),
                   sourceOf(dy1 - 1, oy, g.height));
    }
    if (m_hoverPixel.x() >= 0) {
        QRectF box(ox + m_hoverPixel.x() * z, oy + m_hoverPixel.y() * z, z, z);
        if (z < 5) {
            // Too small to see: a marker of fixed size around it.
            box = QRectF(box.center() - QPointF(3, 3), QSizeF(6, 6));
        }
        p.setRenderHint(QPainter::Antialiasing, false);
        p.setBrush(Qt::NoBrush);
        p.setPen(QPen(Qt::black, 1));
        p.drawRect(box.adjusted(-1, -1, 0, 0));
        p.setPen(QPen(Qt::white, 1));
        p.drawRect(box.adjusted(0, 0, -1, -1));
    }
    if (m_legend && legendMeansSomething() && (g.kind == PixelKind::Scalar || g.kind == PixelKind::Vector)) {
        drawLegend(p);
    }
}

void ImageView::fillFrameByMax(int dx0, int dy0, int fw, int fh)
{
    // Screen pixel d covers image pixels [floor((d - o) / z), floor((d + 1 - o) / z)),
    // at least one: every image pixel in view lands in exactly one screen pixel.
    const ImageGeometry &g = m_source->geometry();
    const double z = m_zoom;
    const auto cover = [z](int d, double o, qint64 extent) {
        const qint64 a = std::clamp<qint64>(qint64(std::floor((d - o) / z)), 0, extent - 1);
        const qint64 b = std::clamp<qint64>(qint64(std::floor((d + 1 - o) / z)), a + 1, extent);
        return std::pair<qint64, qint64>(a, b);
    };
    std::vector<std::pair<qint64, qint64>> spans(static_cast<std::size_t>(fw));
    for (int i = 0; i < fw; ++i) {
        spans[std::size_t(i)] = cover(dx0 + i, m_origin.x(), g.width);
    }
    const qint64 first = spans.front().first;
    const qint64 last = spans.back().second;
    m_columns.resize(std::size_t(last - first));
    for (qint64 x = first; x < last; ++x) {
        m_columns[std::size_t(x - first)] = x;
    }
    m_values.resize(m_columns.size());
    std::vector<float> best(static_cast<std::size_t>(fw));
    std::vector<char> any(static_cast<std::size_t>(fw));
    for (int r = 0; r < fh; ++r) {
        const auto [ya, yb] = cover(dy0 + r, m_origin.y(), g.height);
        std::fill(best.begin(), best.end(), -std::numeric_limits<float>::infinity());
        std::fill(any.begin(), any.end(), char(0));
        for (qint64 y = ya; y < yb; ++y) {
            const qint64 len = std::clamp<qint64>(g.rowLength(y) - first, 0, last - first);
            m_source->read(y, m_columns.data(), len, m_values.data());
            for (int i = 0; i < fw; ++i) {
                const qint64 a = spans[std::size_t(i)].first - first;
                const qint64 b = std::min(spans[std::size_t(i)].second - first, len);
                float m = best[std::size_t(i)];
                for (qint64 k = a; k < b; ++k) {
                    const float v = m_values[std::size_t(k)];
                    m = (v > m || v != v) && m == m ? v : m; // NaN wins: it must show
                }
                best[std::size_t(i)] = m;
                any[std::size_t(i)] = char(any[std::size_t(i)] || b > a);
            }
        }
        auto *dst = reinterpret_cast<QRgb *>(m_frame.scanLine(r));
        for (int i = 0; i < fw; ++i) {
            dst[i] = any[std::size_t(i)] ? m_mapper.map(best[std::size_t(i)]) : QRgb(0);
        }
    }
}

void ImageView::drawLegend(QPainter &p)
{
    if (width() < 160 || height() < 80) {
        return;
    }
    static QImage bars[3];
    QImage &bar = bars[int(m_colormap)];
    if (bar.isNull()) {
        bar = QImage(256, 1, QImage::Format_RGB32);
        const auto &table = colormapTable(m_colormap);
        for (int i = 0; i < 256; ++i) {
            bar.setPixel(i, 0, table[std::size_t(i)]);
        }
    }
    QFont f = font();
    f.setPixelSize(11);
    p.setFont(f);
    const QFontMetrics fm(f);
    const int barWidth = std::min(200, width() / 3);
    const QRect box(width() - barWidth - 20, height() - fm.height() - 26, barWidth + 12, fm.height() + 18);
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(0, 0, 0, 160));
    p.drawRoundedRect(box, 3, 3);
    const QRect barRect(box.left() + 6, box.top() + 6, barWidth, 8);
    p.drawImage(barRect, bar);
    p.setPen(Qt::white);
    const QRect labels(barRect.left(), barRect.bottom() + 2, barWidth, fm.height());
    p.drawText(labels, Qt::AlignLeft | Qt::AlignVCenter, QString::number(m_mapper.low(), 'g', 4));
    p.drawText(labels, Qt::AlignRight | Qt::AlignVCenter, QString::number(m_mapper.high(), 'g', 4));
    if (m_colormap == Colormap::Diverging) {
        p.drawText(labels, Qt::AlignHCenter | Qt::AlignVCenter, QStringLiteral("0"));
    }
}

void ImageView::setReduceByMax(bool on)
{
    if (on != m_reduceByMax) {
        m_reduceByMax = on;
        update();
    }
}

void ImageView::setLegendVisible(bool on)
{
    if (on != m_legend) {
        m_legend = on;
        update();
    }
}

void ImageView::drawValues(QPainter &p, qint64 sx0, qint64 sx1, qint64 sy0, qint64 sy1)
{
    const ImageGeometry &g = m_source->geometry();
    const double z = m_zoom;
    QFont f = font();
    f.setPixelSize(std::clamp(int(z / 5), 8, 14));
    p.setFont(f);
    const QFontMetrics fm(f);
    for (qint64 y = sy0; y <= sy1; ++y) {
        for (qint64 x = sx0; x <= sx1; ++x) {
            if (!g.contains(x, y)) {
                continue;
            }
            const QRectF cell(m_origin.x() + double(x) * z, m_origin.y() + double(y) * z, z, z);
            // Black or white, whichever stands out on the pixel's colour.
            QRgb under = qRgb(0, 0, 0);
            const QPoint local = cell.center().toPoint() - m_frameOrigin;
            if (m_frame.valid(local)) {
                under = m_frame.pixel(local);
            }
            const int luma = (qRed(under) * 299 + qGreen(under) * 587 + qBlue(under) * 114) / 1000;
            p.setPen(luma > 140 ? Qt::black : Qt::white);
            const QStringList lines = m_source->cellText(x, y);
            const double lineHeight = fm.height();
            const double top = cell.center().y() - lineHeight * double(lines.size()) / 2;
            for (qsizetype i = 0; i < lines.size(); ++i) {
                const QRectF lineRect(cell.left() + 2, top + lineHeight * double(i), z - 4, lineHeight);
                p.drawText(lineRect, Qt::AlignCenter, fm.elidedText(lines[i], Qt::ElideRight, int(z - 4)));
            }
        }
    }
}

void ImageView::resizeEvent(QResizeEvent *)
{
    if (m_autoFit) {
        applyFit();
    }
}

void ImageView::wheelEvent(QWheelEvent *event)
{
    const int dy = event->angleDelta().y();
    if (dy != 0) {
        zoomAt(std::pow(1.25, dy / 120.0), event->position());
    }
    event->accept();
}

void ImageView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        m_dragging = true;
        m_lastDrag = event->position();
        setCursor(Qt::ClosedHandCursor);
    }
}

void ImageView::mouseMoveEvent(QMouseEvent *event)
{
    if (m_dragging) {
        const QPointF pos = event->position();
        panBy(pos - m_lastDrag);
        m_lastDrag = pos;
    }
    updateHover(event->position().toPoint());
}

void ImageView::mouseReleaseEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        m_dragging = false;
        unsetCursor();
    }
}

void ImageView::mouseDoubleClickEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        fitToWindow();
    }
}

void ImageView::leaveEvent(QEvent *)
{
    m_hoverPos = {-1, -1};
    if (m_hoverPixel.x() >= 0) {
        m_hoverPixel = {-1, -1};
        update();
    }
    Q_EMIT hovered(QString());
}

} // namespace Kp
