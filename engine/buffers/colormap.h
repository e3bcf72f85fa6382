#pragma once

#include <QList>
#include <QRgb>
#include <QString>

#include <array>

namespace Kp {

/** The colormaps scalar images are shown with. */
enum class Colormap {
    Grayscale, ///< black to white
    Viridis,   ///< matplotlib's perceptually uniform map (purple, teal, yellow)
    Diverging, ///< blue, white, red; centred on 0 for signed data
};

/** Every colormap, in the order a chooser lists them. */
QList<Colormap> allColormaps();
/** "Grayscale", "Viridis", "Blue-white-red". */
QString colormapName(Colormap map);

/**
 * The map's 256 opaque colours, low end first. The diverging map is pure
 * blue at 0, white at 128 and pure red at 255, so a value of exactly 0 (the
 * centre of its range) is white. Static tables; any thread.
 */
const std::array<QRgb, 256> &colormapTable(Colormap map);

/** The colour NaN is shown in: one the map never uses (magenta; green for the diverging map). */
QRgb colormapNanColor(Colormap map);

/**
 * Maps values in [lo, hi] to a colormap's table, cheap enough for a
 * per-pixel loop. Values outside the range clamp to its ends (so do -inf
 * and inf); NaN gets colormapNanColor(). A diverging map is centred on 0:
 * its range becomes [-m, m] with m = max(|lo|, |hi|). An empty range (lo ==
 * hi) maps that value to the low end (the centre for a diverging map).
 * A value type; any thread.
 */
class ColorMapper
{
public:
    ColorMapper()
        : ColorMapper(Colormap::Grayscale, 0, 1)
    {
    }
    ColorMapper(Colormap map, double lo, double hi);

    /** The table index of v (0..255), or -1 for NaN. */
    int indexOf(float v) const
    {
        if (v != v) {
            return -1;
        }
        if (m_empty) {
            return v < m_lo ? 0 : v > m_lo ? 255 : m_emptyIndex;
        }
        const float t = (v - m_lo) * m_scale;
        // The comparisons also catch infinities without a separate test.
        if (t <= 0.0f) {
            return 0;
        }
        if (t >= 255.0f) {
            return 255;
        }
        return static_cast<int>(t + 0.5f);
    }
    QRgb map(float v) const
    {
        const int i = indexOf(v);
        return i < 0 ? m_nan : (*m_table)[static_cast<std::size_t>(i)];
    }

    /** Another colour for NaN (a view whose NaN means "nothing here" rather than a value to spot). */
    void setNanColor(QRgb c) { m_nan = c; }

    Colormap colormap() const { return m_map; }
    /** The range actually used (centred for the diverging map). */
    double low() const { return m_lo; }
    double high() const { return m_hi; }

private:
    Colormap m_map;
    const std::array<QRgb, 256> *m_table;
    QRgb m_nan;
    float m_lo;
    float m_hi;
    float m_scale;
    bool m_empty;
    int m_emptyIndex;
};

} // namespace Kp
