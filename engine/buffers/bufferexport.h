#pragma once

#include "buffers/dtype.h"
#include "core/result.h"

#include <QList>
#include <QString>

namespace Kp {

/** Writes a buffer as a .npy file; the same as writeNpy() (see npy.h for the rules). */
Status exportNpy(const QString &path, DType dtype, const QList<qint64> &shape, const void *data);

/**
 * Writes a buffer (1 to 3 dimensions, C order) as CSV text:
 * - 1-D: one element per line;
 * - 2-D: one row per line, elements separated by ',';
 * - 3-D: each slice shape[0] as a 2-D block, blocks separated by one empty line.
 * The components of a vector element share one cell, separated by spaces
 * ("1 2 3 4"). Integers are written exactly; floats with enough digits to
 * read back the same value (float32 %.9g, float64 %.17g, float16 %.5g,
 * bfloat16 %.4g), "nan", "inf" and "-inf" as such, independent of the locale.
 * Lines end with '\n'. Atomic (QSaveFile).
 */
Status exportCsv(const QString &path, DType dtype, const QList<qint64> &shape, const void *data);

/**
 * Writes a 2-D buffer (shape [height, width]) as an image (PNG, or the format
 * the path's suffix names): uchar4 (or uint8 of shape [height, width, 4]) as
 * RGBA; scalar dtypes as 8-bit gray, value lo -> 0 and hi -> 255, linear,
 * clamped, NaN -> 0. When lo == hi the range is the data's finite minimum and
 * maximum (a constant buffer becomes black). Atomic (QSaveFile).
 */
Status exportPng(const QString &path, DType dtype, const QList<qint64> &shape, const void *data, double lo = 0,
                 double hi = 0);

} // namespace Kp
