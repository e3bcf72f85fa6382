#include "bufferspec.h"

#include <limits>

namespace Kp {

QString BufferInit::kindName(Kind k)
{
    switch (k) {
    case Kind::Zeros: return QStringLiteral("zeros");
    case Kind::Constant: return QStringLiteral("constant");
    case Kind::Ramp: return QStringLiteral("ramp");
    case Kind::Random: return QStringLiteral("random");
    case Kind::Expression: return QStringLiteral("expression");
    case Kind::Npy: return QStringLiteral("npy");
    case Kind::Image: return QStringLiteral("image");
    case Kind::Uninitialized: return QStringLiteral("uninitialized");
    }
    return QStringLiteral("unknown");
}

qint64 BufferSpec::elementCount() const
{
    return shapeElementCount(shape);
}

qint64 shapeElementCount(const QList<qint64> &shape)
{
    if (shape.isEmpty()) {
        return 0;
    }
    qint64 n = 1;
    for (const qint64 extent : shape) {
        // A non-positive extent or an overflowing product is no valid buffer;
        // checkSpec() reports it, callers here just see "nothing".
        if (extent <= 0 || n > std::numeric_limits<qint64>::max() / extent) {
            return 0;
        }
        n *= extent;
    }
    return n;
}

} // namespace Kp
