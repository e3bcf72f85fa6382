#pragma once

#include "dtype.h"

#include <QJsonObject>
#include <QList>
#include <QString>

namespace Kp {

/** How a buffer's host copy is filled before a run. */
struct BufferInit
{
    /**
     * Uninitialized: the device copy is allocated but never written from the
     * host, so compute-sanitizer's initcheck sees a kernel read it (the host
     * copy reads as zeros until a run's download).
     */
    enum class Kind { Zeros, Constant, Ramp, Random, Expression, Npy, Image, Uninitialized };
    enum class Distribution { Uniform, Normal };
    /** How an image's pixels become elements (the buffer's dtype must agree). */
    enum class ImageMode {
        Rgba8, ///< uchar4 (or uint8 with a last dimension of 4): the bytes as they are
        Gray,  ///< one scalar per pixel, 0..1 for float types, 0..255 for integers
        Rgba,  ///< float4 (or a float type with a last dimension of 4), each channel 0..1
    };

    Kind kind = Kind::Zeros;
    double value = 0; ///< Constant (every component)
    double start = 0; ///< Ramp: element i (flat index, per component) = start + i*step
    double step = 1;
    Distribution distribution = Distribution::Uniform;
    double min = 0; ///< Random uniform: [min, max)
    double max = 1;
    double mean = 0; ///< Random normal
    double stddev = 1;
    quint64 seed = 1;
    QString expression; ///< Expression: per component; variables i, x, y, z, c, nx, ny, nz, n and the scalars
    QString file;       ///< Npy, Image: relative to the project's folder
    ImageMode imageMode = ImageMode::Rgba8;

    static QString kindName(Kind k);
};

/**
 * A named buffer: its element type, shape and initial contents. Shape is
 * 1 to 3 positive extents, outermost first (C order: shape {h, w} is h rows
 * of w elements). For Npy and Image inits an empty shape means "from the file".
 */
struct BufferSpec
{
    QString name;
    DType dtype = DType::Float32;
    QList<qint64> shape;
    BufferInit init;
    /**
     * Not empty: the buffer is the module's __constant__ or __device__
     * variable of this name (docs/kpg-project.md, "Device globals"), filled
     * with cuModuleGetGlobal + a copy before the first step and read back
     * after the run like any buffer; its size must equal the variable's.
     */
    QString symbol;
    QJsonObject unknown; ///< keys this version does not know, kept on save

    qint64 elementCount() const;
    qint64 byteSize() const { return elementCount() * dtypeInfo(dtype).elementBytes(); }
};

/** Elements of a shape: the product of its extents; 0 when empty, non-positive or overflowing. */
qint64 shapeElementCount(const QList<qint64> &shape);

/** Largest buffer the host side accepts (the device limit is checked separately). */
constexpr qint64 kMaxBufferBytes = 64ll * 1024 * 1024 * 1024;

} // namespace Kp
