#include "access/ownerimage.h"

namespace Kp {

OwnerImageSource::OwnerImageSource(std::shared_ptr<const HostBuffer> buffer, std::shared_ptr<const CellOwners> owners,
                                   OwnerColour colour, qint64 width1D, qint64 slice)
    : m_buffer(std::move(buffer))
    , m_owners(std::move(owners))
    , m_colour(colour)
{
    m_geometry = ImageGeometry::of(*m_buffer, width1D, slice);
    m_geometry.components = 1;
    m_geometry.kind = PixelKind::Scalar;
}

void OwnerImageSource::read(qint64 y, const qint64 *xs, qsizetype n, float *out) const
{
    for (qsizetype i = 0; i < n; ++i) {
        // An RGBA pixel is its first element's: one thread usually writes all four.
        out[i] = float(m_owners->shade(m_geometry.elementIndex(xs[i], y), m_colour));
    }
}

std::pair<double, double> OwnerImageSource::finiteRange(int) const
{
    return {0.0, 1.0};
}

QString OwnerImageSource::valueText(qint64 x, qint64 y) const
{
    const qint64 e = m_geometry.elementIndex(x, y);
    return QStringLiteral("%1[%2]: %3").arg(m_owners->buffer).arg(e).arg(m_owners->describe(e));
}

QStringList OwnerImageSource::cellText(qint64 x, qint64 y) const
{
    const qint64 e = m_geometry.elementIndex(x, y);
    if (e < 0 || e >= m_owners->elements() || m_owners->owner[std::size_t(e)] < 0) {
        return {};
    }
    const auto [b, t] = m_owners->threadOf(m_owners->owner[std::size_t(e)]);
    return {QStringLiteral("b(%1,%2)").arg(b[0]).arg(b[1]), QStringLiteral("t(%1,%2)").arg(t[0]).arg(t[1])};
}

} // namespace Kp
