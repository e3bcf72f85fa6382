#pragma once

#include "buffers/dtype.h"

#include <QString>

namespace Kp {

/** How the inspector writes numbers. */
enum class NumberFormat {
    General,    ///< %g with the precision as significant digits; integers exactly
    Fixed,      ///< %f with the precision as decimals; integers exactly
    Scientific, ///< %e with the precision as decimals (integers too)
    Hex,        ///< integers only: two's complement of the component's width ("0xff" for int8 -1); floats as General
};

/**
 * One element as text, components of a vector type in one pair of
 * parentheses: "(1.5, 2, 0, 1)". NaN and infinities read "nan", "inf",
 * "-inf". Independent of the locale. element points at
 * dtypeInfo(dtype).elementBytes() bytes (no alignment needed). Any thread.
 */
QString formatElement(DType dtype, const void *element, NumberFormat format, int precision);

/**
 * The exact value of an element: integers in full (64-bit ones too), floats
 * as the shortest text that reads back as the same value of their own width
 * ("0.1" for float32 0.1f, "0.1" for the float16 nearest 0.1). Vectors as in
 * formatElement(). Any thread.
 */
QString exactElementText(DType dtype, const void *element);

} // namespace Kp
