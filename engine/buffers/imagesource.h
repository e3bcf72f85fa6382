#pragma once

#include "buffers/dtype.h"
#include "run/runtypes.h"

#include <QString>
#include <QStringList>

#include <memory>
#include <utility>

namespace Kp {

struct HostBuffer;

/** How the values of a pixel become a colour. */
enum class PixelKind {
    Scalar,    ///< one value, through the colormap
    Vector,    ///< 2 to 4 values that are not colours (int2, float2...): one of them through the colormap
    Rgba8,     ///< uchar4, or uint8 of shape [h, w, 4]: the bytes as they are
    RgbaFloat, ///< float3/float4, or a float type of shape [h, w, 4]: channels 0..1
};

/**
 * Where a buffer's elements land in an image. 2-D buffers [h, w] are h rows
 * of w pixels; 1-D buffers are rows of a chosen width (the last row may be
 * short); 3-D buffers show one slice [z, :, :]. A uint8 or float buffer of
 * shape [h, w, 4] is an RGBA image (a pixel is 4 elements), as for image
 * inits. A value type; any thread.
 */
struct ImageGeometry
{
    qint64 width = 0;            ///< pixels per row
    qint64 height = 0;           ///< rows
    qint64 pixels = 0;           ///< pixels that hold data (short last row of a 1-D buffer)
    qint64 firstPixel = 0;       ///< the slice's first pixel, counted from the buffer's start
    qint64 elementsPerPixel = 1; ///< 4 for [h, w, 4] RGBA buffers
    int components = 1;          ///< values per pixel
    int dims = 0;                ///< the buffer's dimensions as threads see them ([h, w, 4] RGBA: 2)
    qint64 slice = 0;            ///< z of a 3-D buffer
    Dim3 extents{1, 1, 1};       ///< the buffer's index space, x innermost: (w, h, d), 1-D: (n, 1, 1)
    PixelKind kind = PixelKind::Scalar;
    DType componentType = DType::Float32;

    /**
     * The geometry of buffer: width1D is the row width for 1-D buffers (0:
     * near square, ceil(sqrt(n))),
     * slice the z shown for 3-D buffers (clamped). Empty when the buffer
     * has no usable memory.
     */
    static ImageGeometry of(const HostBuffer &buffer, qint64 width1D, qint64 slice);

    bool isEmpty() const { return width <= 0 || height <= 0; }
    /** Pixels of row y that hold data. */
    qint64 rowLength(qint64 y) const;
    bool contains(qint64 x, qint64 y) const { return y >= 0 && y < height && x >= 0 && x < rowLength(y); }
    /** The pixel's index from the buffer's start, in pixels. */
    qint64 pixelIndex(qint64 x, qint64 y) const { return firstPixel + y * width + x; }
    /** The flat index of the pixel's (first) element, as the grid's go-to field takes it. */
    qint64 elementIndex(qint64 x, qint64 y) const { return pixelIndex(x, y) * elementsPerPixel; }
    /** The pixel in the buffer's own index space, x innermost: 1-D (i, 0, 0), 2-D (x, y, 0), 3-D (x, y, z). */
    Dim3 coordinates(qint64 x, qint64 y) const;
};

/**
 * What an ImageView shows: pixels with 1 to 4 values each, read on demand,
 * so a source never holds a copy of the data. Sources are immutable once
 * made (a new geometry means a new source); GUI thread.
 */
class ImageSource
{
public:
    virtual ~ImageSource();
    virtual const ImageGeometry &geometry() const = 0;
    /**
     * Reads every component of the pixels (xs[i], y), each xs[i] inside the
     * row's data (below rowLength(y)), as floats: n * components values.
     */
    virtual void read(qint64 y, const qint64 *xs, qsizetype n, float *out) const = 0;
    /** Finite minimum and maximum of one component (-1: all of them pooled); NaN, NaN when there is none. */
    virtual std::pair<double, double> finiteRange(int component) const = 0;
    /** The exact value at a pixel, for the hover line: "0.5", "(1, 2, 3, 4)". */
    virtual QString valueText(qint64 x, qint64 y) const = 0;
    /** Short lines written inside a pixel when it is large enough (one per component). */
    virtual QStringList cellText(qint64 x, qint64 y) const = 0;
};

/** A buffer's memory as an image, read in place. Holds a reference to the buffer. */
class BufferImageSource : public ImageSource
{
public:
    BufferImageSource(std::shared_ptr<const HostBuffer> buffer, qint64 width1D, qint64 slice);

    const ImageGeometry &geometry() const override { return m_geometry; }
    void read(qint64 y, const qint64 *xs, qsizetype n, float *out) const override;
    std::pair<double, double> finiteRange(int component) const override;
    QString valueText(qint64 x, qint64 y) const override;
    QStringList cellText(qint64 x, qint64 y) const override;

private:
    const char *pixelPointer(qint64 x, qint64 y) const;

    std::shared_ptr<const HostBuffer> m_buffer;
    ImageGeometry m_geometry;
    qint64 m_pixelBytes = 0;
};

/** The block and thread that handle an element, if the launch runs one thread per element. */
struct ThreadIndex
{
    bool covered = false; ///< false when the launch has fewer threads than that
    Dim3 blockIdx{0, 0, 0};
    Dim3 threadIdx{0, 0, 0};
};

/**
 * The thread for an element under a launch, assuming one thread per element
 * with x from the innermost dimension. The launch's dimensionality decides:
 * as many launch dimensions as the buffer has map coordinate to coordinate
 * (x, y, z); a 1-D launch takes the flat index; a 2-D launch over a 3-D
 * buffer folds z into y (y + z * height). coordinates and extents come from
 * ImageGeometry; flat is the element's index in threads' terms (a pixel of
 * an RGBA [h, w, 4] buffer counts as one element).
 */
ThreadIndex threadForElement(const Dim3 &grid, const Dim3 &block, int dims, const Dim3 &coordinates,
                             const Dim3 &extents, qint64 flat);

} // namespace Kp
