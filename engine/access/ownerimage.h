#pragma once

#include "access/accessstats.h"
#include "buffers/imagesource.h"

#include <memory>

namespace Kp {

/**
 * A buffer's cells as an image coloured by who touched them in a recorded
 * launch (CellOwners::shade: by thread, by warp, or by first access), with
 * the buffer's own geometry so width, slice and zoom behave as for its
 * values. Untouched cells are NaN (the view's NaN colour). The hover line
 * says who: "written first by block (0, 1, 0) thread (3, 2, 0), ...".
 */
class OwnerImageSource : public ImageSource
{
public:
    OwnerImageSource(std::shared_ptr<const HostBuffer> buffer, std::shared_ptr<const CellOwners> owners,
                     OwnerColour colour, qint64 width1D, qint64 slice);

    const ImageGeometry &geometry() const override { return m_geometry; }
    void read(qint64 y, const qint64 *xs, qsizetype n, float *out) const override;
    std::pair<double, double> finiteRange(int component) const override;
    QString valueText(qint64 x, qint64 y) const override;
    QStringList cellText(qint64 x, qint64 y) const override;

private:
    std::shared_ptr<const HostBuffer> m_buffer;
    std::shared_ptr<const CellOwners> m_owners;
    OwnerColour m_colour;
    ImageGeometry m_geometry;
};

} // namespace Kp
