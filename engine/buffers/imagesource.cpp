#include "imagesource.h"

#include "buffers/bufferstats.h"
#include "buffers/elementtext.h"
#include "run/runner.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace Kp {

// ---- geometry ---------------------------------------------------------

ImageGeometry ImageGeometry::of(const HostBuffer &buffer, qint64 width1D, qint64 slice)
{
    ImageGeometry g;
    const DTypeInfo &info = dtypeInfo(buffer.spec.dtype);
    const QList<qint64> &s = buffer.shape;
    const qint64 n = buffer.elementCount();
    if (s.isEmpty() || s.size() > 3 || n <= 0 || !buffer.memory.isValid() || buffer.memory.size() < buffer.byteSize()) {
        return g;
    }
    g.componentType = info.component;
    g.components = info.components;
    const bool floatKind =
        info.kind == ScalarKind::Float || info.kind == ScalarKind::Half || info.kind == ScalarKind::BFloat;
    const bool rgbaRows =
        s.size() == 3 && s[2] == 4 && info.components == 1 && (buffer.spec.dtype == DType::UInt8 || floatKind);
    if (rgbaRows) {
        g.height = s[0];
        g.width = s[1];
        g.pixels = g.width * g.height;
        g.elementsPerPixel = 4;
        g.components = 4;
        g.dims = 2;
        g.extents = {g.width, g.height, 1};
        g.kind = buffer.spec.dtype == DType::UInt8 ? PixelKind::Rgba8 : PixelKind::RgbaFloat;
        return g;
    }
    if (info.components == 1) {
        g.kind = PixelKind::Scalar;
    } else if (buffer.spec.dtype == DType::UChar4) {
        g.kind = PixelKind::Rgba8;
    } else if (buffer.spec.dtype == DType::Float3 || buffer.spec.dtype == DType::Float4) {
        g.kind = PixelKind::RgbaFloat;
    } else {
        g.kind = PixelKind::Vector;
    }
    g.dims = int(s.size());
    switch (g.dims) {
    case 1: {
        qint64 w = width1D > 0 ? width1D : qint64(std::ceil(std::sqrt(double(n))));
        w = std::clamp<qint64>(w, 1, n);
        g.width = w;
        g.height = (n + w - 1) / w;
        g.pixels = n;
        g.extents = {n, 1, 1};
        break;
    }
    case 2:
        g.height = s[0];
        g.width = s[1];
        g.pixels = g.width * g.height;
        g.extents = {g.width, g.height, 1};
        break;
    default:
        g.slice = std::clamp<qint64>(slice, 0, s[0] - 1);
        g.height = s[1];
        g.width = s[2];
        g.pixels = g.width * g.height;
        g.firstPixel = g.slice * g.pixels;
        g.extents = {g.width, g.height, s[0]};
        break;
    }
    return g;
}

qint64 ImageGeometry::rowLength(qint64 y) const
{
    if (y < 0 || y >= height) {
        return 0;
    }
    return y < height - 1 ? width : pixels - y * width;
}

Dim3 ImageGeometry::coordinates(qint64 x, qint64 y) const
{
    switch (dims) {
    case 1: return {y * width + x, 0, 0};
    case 2: return {x, y, 0};
    default: return {x, y, slice};
    }
}

// ---- sources ----------------------------------------------------------

ImageSource::~ImageSource() = default;

namespace {

template<typename T, typename Conv>
void gather(const char *row, const qint64 *xs, qsizetype n, int components, qint64 pixelBytes, float *out, Conv conv)
{
    if (components == 1) {
        for (qsizetype i = 0; i < n; ++i) {
            T v;
            std::memcpy(&v, row + xs[i] * pixelBytes, sizeof(T));
            out[i] = conv(v);
        }
        return;
    }
    for (qsizetype i = 0; i < n; ++i) {
        const char *p = row + xs[i] * pixelBytes;
        for (int c = 0; c < components; ++c) {
            T v;
            std::memcpy(&v, p + c * qint64(sizeof(T)), sizeof(T));
            out[i * components + c] = conv(v);
        }
    }
}

template<typename T> float asFloat(T v)
{
    return static_cast<float>(v);
}

} // namespace

BufferImageSource::BufferImageSource(std::shared_ptr<const HostBuffer> buffer, qint64 width1D, qint64 slice)
    : m_buffer(std::move(buffer))
{
    if (m_buffer) {
        m_geometry = ImageGeometry::of(*m_buffer, width1D, slice);
        m_pixelBytes = qint64(dtypeInfo(m_buffer->spec.dtype).elementBytes()) * m_geometry.elementsPerPixel;
    }
}

const char *BufferImageSource::pixelPointer(qint64 x, qint64 y) const
{
    return static_cast<const char *>(m_buffer->memory.data()) + m_geometry.pixelIndex(x, y) * m_pixelBytes;
}

void BufferImageSource::read(qint64 y, const qint64 *xs, qsizetype n, float *out) const
{
    if (m_geometry.isEmpty() || n <= 0) {
        return;
    }
    const char *row = pixelPointer(0, y);
    const int c = m_geometry.components;
    const qint64 pb = m_pixelBytes;
    switch (m_geometry.componentType) {
    case DType::Int8: gather<std::int8_t>(row, xs, n, c, pb, out, asFloat<std::int8_t>); break;
    case DType::UInt8: gather<std::uint8_t>(row, xs, n, c, pb, out, asFloat<std::uint8_t>); break;
    case DType::Int16: gather<std::int16_t>(row, xs, n, c, pb, out, asFloat<std::int16_t>); break;
    case DType::UInt16: gather<std::uint16_t>(row, xs, n, c, pb, out, asFloat<std::uint16_t>); break;
    case DType::Int32: gather<std::int32_t>(row, xs, n, c, pb, out, asFloat<std::int32_t>); break;
    case DType::UInt32: gather<std::uint32_t>(row, xs, n, c, pb, out, asFloat<std::uint32_t>); break;
    case DType::Int64: gather<std::int64_t>(row, xs, n, c, pb, out, asFloat<std::int64_t>); break;
    case DType::UInt64: gather<std::uint64_t>(row, xs, n, c, pb, out, asFloat<std::uint64_t>); break;
    case DType::Float16: gather<std::uint16_t>(row, xs, n, c, pb, out, halfToFloat); break;
    case DType::BFloat16: gather<std::uint16_t>(row, xs, n, c, pb, out, bfloat16ToFloat); break;
    case DType::Float32: gather<float>(row, xs, n, c, pb, out, asFloat<float>); break;
    case DType::Float64: gather<double>(row, xs, n, c, pb, out, asFloat<double>); break;
    default: break;
    }
}

std::pair<double, double> BufferImageSource::finiteRange(int component) const
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (m_geometry.isEmpty()) {
        return {nan, nan};
    }
    const char *base = pixelPointer(0, 0);
    const int comps = m_geometry.components;
    BufferStats st;
    if (component < 0 || comps == 1) {
        st = computeComponentStats(m_geometry.componentType, base, m_geometry.pixels * comps);
    } else {
        const int cb = dtypeInfo(m_geometry.componentType).componentBytes;
        st = computeComponentStats(m_geometry.componentType, base + std::min(component, comps - 1) * cb,
                                   m_geometry.pixels, comps);
    }
    return {st.min, st.max};
}

QString BufferImageSource::valueText(qint64 x, qint64 y) const
{
    const char *p = pixelPointer(x, y);
    if (m_geometry.elementsPerPixel == 1) {
        return exactElementText(m_buffer->spec.dtype, p);
    }
    const int cb = dtypeInfo(m_geometry.componentType).componentBytes;
    QStringList parts;
    for (int c = 0; c < m_geometry.components; ++c) {
        parts << exactElementText(m_geometry.componentType, p + c * cb);
    }
    return QStringLiteral("(") + parts.join(QStringLiteral(", ")) + QLatin1Char(')');
}

QStringList BufferImageSource::cellText(qint64 x, qint64 y) const
{
    const char *p = pixelPointer(x, y);
    const int cb = dtypeInfo(m_geometry.componentType).componentBytes;
    QStringList lines;
    for (int c = 0; c < m_geometry.components; ++c) {
        lines << formatElement(m_geometry.componentType, p + c * cb, NumberFormat::General, 4);
    }
    return lines;
}

// ---- threads ----------------------------------------------------------

ThreadIndex threadForElement(const Dim3 &grid, const Dim3 &block, int dims, const Dim3 &coordinates,
                             const Dim3 &extents, qint64 flat)
{
    Dim3 total{};
    for (int d = 0; d < 3; ++d) {
        total[d] = std::max<qint64>(1, grid[d]) * std::max<qint64>(1, block[d]);
    }
    const int launchDims = total[2] > 1 ? 3 : total[1] > 1 ? 2 : 1;
    Dim3 g{0, 0, 0};
    if (dims <= launchDims) {
        g = dims == 1 ? Dim3{flat, 0, 0} : coordinates;
    } else if (launchDims == 1) {
        g = {flat, 0, 0};
    } else {
        // A 2-D launch over a 3-D buffer: slices stacked along y.
        g = {coordinates[0], coordinates[1] + coordinates[2] * extents[1], 0};
    }
    ThreadIndex t;
    t.covered = true;
    for (int d = 0; d < 3; ++d) {
        const qint64 b = std::max<qint64>(1, block[d]);
        t.covered = t.covered && g[d] < total[d];
        t.blockIdx[d] = g[d] / b;
        t.threadIdx[d] = g[d] % b;
    }
    return t;
}

} // namespace Kp
