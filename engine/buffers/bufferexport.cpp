#include "bufferexport.h"

#include "buffers/bufferspec.h"
#include "buffers/npy.h"

#include "core/safefile.h"
#include <QFileInfo>
#include <QImage>

#include <QBuffer>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace Kp {

namespace {

Error exportError(const QString &message)
{
    return Error{QStringLiteral("buffers"), Error::Code::BadInput, {}, message};
}

// Elements of shape, or -1 when a dimension is not positive or the byte size is too large.
qint64 checkedElements(const QList<qint64> &shape, DType dtype)
{
    qint64 n = 1;
    for (const qint64 e : shape) {
        if (e <= 0 || n > kMaxBufferBytes / e) {
            return -1;
        }
        n *= e;
    }
    if (n > kMaxBufferBytes / dtypeInfo(dtype).elementBytes()) {
        return -1;
    }
    return n;
}

void appendComponent(QByteArray &out, DType c, const char *p)
{
    switch (c) {
    case DType::Int64: {
        qint64 v;
        std::memcpy(&v, p, 8);
        out += QByteArray::number(v);
        return;
    }
    case DType::UInt64: {
        quint64 v;
        std::memcpy(&v, p, 8);
        out += QByteArray::number(v);
        return;
    }
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32:
    case DType::Float64: {
        const double v = loadComponent(c, p);
        if (std::isnan(v)) {
            out += "nan";
        } else if (std::isinf(v)) {
            out += v < 0 ? "-inf" : "inf";
        } else {
            // The fewest digits that always read back to the same value.
            const int digits = c == DType::Float64 ? 17 : c == DType::Float32 ? 9 : c == DType::Float16 ? 5 : 4;
            out += QByteArray::number(v, 'g', digits);
        }
        return;
    }
    default:
        // Integers of 32 bits or less are exact in a double.
        out += QByteArray::number(static_cast<qint64>(loadComponent(c, p)));
        return;
    }
}

} // namespace

Status exportNpy(const QString &path, DType dtype, const QList<qint64> &shape, const void *data)
{
    return writeNpy(path, dtype, shape, data);
}

Status exportCsv(const QString &path, DType dtype, const QList<qint64> &shape, const void *data)
{
    const qint64 n = checkedElements(shape, dtype);
    if (shape.isEmpty() || shape.size() > 3 || n < 0) {
        return exportError(
            QStringLiteral("cannot export %1 as CSV: expected a shape of 1 to 3 positive integers, got %2")
                .arg(path, shapeToString(shape)));
    }
    // core/safefile: atomic for a regular file, written in place into /dev/null or a FIFO.
    OutputFile f(path);
    if (Status s = f.open(); !s) {
        return s;
    }
    const DTypeInfo &info = dtypeInfo(dtype);
    const qint64 cols = shape.size() == 1 ? 1 : shape.back();
    const qint64 rowsPerSlice = shape.size() == 3 ? shape[1] : 1;
    const char *p = static_cast<const char *>(data);
    QByteArray line;
    for (qint64 e = 0; e < n; ++e) {
        const qint64 col = e % cols;
        if (col > 0) {
            line += ',';
        }
        for (int c = 0; c < info.components; ++c) {
            if (c > 0) {
                line += ' ';
            }
            appendComponent(line, info.component, p + e * info.elementBytes() + qint64(c) * info.componentBytes);
        }
        if (col == cols - 1) {
            line += '\n';
            const qint64 row = e / cols;
            // A blank line between the slices of a 3-D buffer (not after the last).
            if (shape.size() == 3 && (row + 1) % rowsPerSlice == 0 && e + 1 < n) {
                line += '\n';
            }
            if (line.size() > (1 << 20) || e + 1 == n) {
                if (Status s = f.write(line); !s) {
                    return s;
                }
                line.clear();
            }
        }
    }
    return f.commit();
}

Status exportPng(const QString &path, DType dtype, const QList<qint64> &shape, const void *data, double lo, double hi)
{
    const bool rgba =
        (dtype == DType::UChar4 && shape.size() == 2) || (dtype == DType::UInt8 && shape.size() == 3 && shape[2] == 4);
    const bool gray = dtypeInfo(dtype).components == 1 && shape.size() == 2;
    if (!rgba && !gray) {
        return exportError(QStringLiteral("cannot export %1 as an image: it needs a 2-D buffer of a scalar dtype or "
                                          "uchar4 (or uint8 of shape [height, width, 4]), got %2 of shape %3")
                               .arg(path, dtypeName(dtype), shapeToString(shape)));
    }
    const qint64 n = checkedElements(shape, dtype);
    constexpr qint64 kMaxSide = 32767; // QImage's and PNG viewers' practical limit
    if (n < 0 || shape[0] > kMaxSide || shape[1] > kMaxSide) {
        return exportError(
            QStringLiteral("cannot export %1 as an image: shape %2 is too large (at most %3 x %3 pixels)")
                .arg(path, shapeToString(shape))
                .arg(kMaxSide));
    }
    const int h = static_cast<int>(shape[0]);
    const int w = static_cast<int>(shape[1]);
    const char *p = static_cast<const char *>(data);
    QImage img;
    if (rgba) {
        img = QImage(w, h, QImage::Format_RGBA8888);
        for (int y = 0; y < h; ++y) {
            std::memcpy(img.scanLine(y), p + qint64(y) * w * 4, static_cast<std::size_t>(w) * 4);
        }
    } else {
        const DTypeInfo &info = dtypeInfo(dtype);
        if (lo == hi) {
            double mn = std::numeric_limits<double>::infinity();
            double mx = -mn;
            for (qint64 e = 0; e < n; ++e) {
                const double v = loadComponent(info.component, p + e * info.componentBytes);
                if (std::isfinite(v)) {
                    mn = std::min(mn, v);
                    mx = std::max(mx, v);
                }
            }
            lo = std::isfinite(mn) ? mn : 0;
            hi = std::isfinite(mx) ? mx : 0;
        }
        // A flat range maps everything at or below lo to 0 and above it to 255.
        const double scale = hi != lo ? 255.0 / (hi - lo) : std::numeric_limits<double>::infinity();
        img = QImage(w, h, QImage::Format_Grayscale8);
        for (int y = 0; y < h; ++y) {
            uchar *row = img.scanLine(y);
            for (int x = 0; x < w; ++x) {
                const double v = loadComponent(info.component, p + (qint64(y) * w + x) * info.componentBytes);
                double g = (v - lo) * scale;
                if (std::isnan(g)) {
                    g = 0;
                }
                row[x] = static_cast<uchar>(std::clamp(std::round(g), 0.0, 255.0));
            }
        }
    }
    if (img.isNull()) {
        return exportError(QStringLiteral("cannot export %1: out of memory for a %2x%3 image").arg(path).arg(w).arg(h));
    }
    // Encoded in memory (at most 32767 x 32767 pixels), then written through
    // core/safefile, so /dev/null or a FIFO is written into, not replaced.
    const QByteArray suffix = QFileInfo(path).suffix().toLower().toLatin1();
    const QByteArray format = suffix.isEmpty() ? QByteArray("png") : suffix;
    QByteArray encoded;
    QBuffer buffer(&encoded);
    buffer.open(QIODevice::WriteOnly);
    if (!img.save(&buffer, format.constData())) {
        return exportError(QStringLiteral("cannot write %1: no image writer for '%2' (use .png)")
                               .arg(path, QString::fromLatin1(format)));
    }
    return writeOutput(path, encoded, QStringLiteral("the image"));
}

} // namespace Kp
