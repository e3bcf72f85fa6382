#pragma once

#include "buffers/bufferspec.h"
#include "core/result.h"

#include <QList>
#include <QMap>
#include <QString>

#include <cstdint>

namespace Kp {

/**
 * Checks that a spec's dtype, shape and init agree, before any memory is
 * allocated: 1 to 3 positive extents (empty only for npy and image inits,
 * meaning "from the file"), at most kMaxBufferBytes (products are overflow
 * safe), sensible init parameters and an image mode the dtype can hold.
 * field names the spec in messages ("buffers[2]" gives
 * "buffers[2].shape: expected 1 to 3 positive integers, got [0, 4]").
 */
Status checkSpec(const BufferSpec &spec, const QString &field);

/**
 * Fills every element of dst (exactly spec.byteSize() bytes, dstBytes) from
 * spec.init. spec.shape must be resolved (not empty); use npyShapeFor() or
 * imageShapeFor() first for "from the file" shapes. Files are resolved
 * against projectDir (absolute paths are kept); scalars are the project's
 * scalars, variables in expressions.
 *
 * k below is the flat component index: element e, component c -> k = e*components + c.
 * - zeros: all bytes 0.
 * - constant: every component = value (storeComponent: integers saturate,
 *   floats round to nearest).
 * - ramp: component k = start + k*step.
 * - random: a counter-based generator, identical on every machine and for
 *   any thread count:
 *       splitmix64(x): z = x + 0x9E3779B97F4A7C15;
 *                      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
 *                      z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
 *                      return z ^ (z >> 31)            (all mod 2^64)
 *       u(k) = (splitmix64(seed ^ (k * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019)) >> 11) * 2^-53   in [0, 1)
 *   uniform: min + (max-min)*u(k); float types round to the type and a value
 *   that rounds up to max becomes the next one below it, so [min, max);
 *   integer types take floor(min + (max-min)*u(k)), integers in [min, max).
 *   normal: mean + stddev * sqrt(-2 ln u1) * cos(2 pi u2) with u1 = u(2k)
 *   (0 replaced by 2^-53), u2 = u(2k+1); integer types round to nearest.
 * - expression: per component, muparser; variables i (flat element index),
 *   x, y, z (x the last dimension, y the one before, z the first of a 3-D
 *   shape; 0 when missing), c (component), nx, ny, nz (extents, 1 when
 *   missing), n (element count) and every scalar by name (the built-in names
 *   win over scalars of the same name).
 * - npy: loadNpyInto(file).
 * - image: the pixels of a PNG/JPEG (see BufferInit::ImageMode).
 */
Status fillBuffer(const BufferSpec &spec, void *dst, qint64 dstBytes, const QString &projectDir,
                  const QMap<QString, double> &scalars);

/**
 * The shape an image file gives a buffer of dtype in mode: [height, width]
 * for uchar4 (Rgba8), float4 (Rgba) and scalar dtypes (Gray);
 * [height, width, 4] for uint8 (Rgba8) and float scalars (Rgba).
 * Reads only the image's header.
 */
Result<QList<qint64>> imageShapeFor(const QString &path, BufferInit::ImageMode mode, DType dtype);

/** "rgba8", "gray", "rgba". */
QString imageModeName(BufferInit::ImageMode mode);

/** The generator above: splitmix64 finaliser of x + 0x9E3779B97F4A7C15. */
std::uint64_t splitmix64(std::uint64_t x);
/** u(k) above: the k-th uniform double in [0, 1) of a seed. */
double randomUnit(std::uint64_t seed, std::uint64_t k);

/** Resolves an init file name against the project folder (absolute paths are kept). */
QString resolveInitFile(const QString &file, const QString &projectDir);

} // namespace Kp
