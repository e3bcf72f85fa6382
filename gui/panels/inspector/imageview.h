#pragma once

#include "access/accessstats.h"
#include "buffers/colormap.h"
#include "buffers/dtype.h"
#include "buffers/imagesource.h"
#include "run/runtypes.h"

#include <QImage>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <memory>
#include <utility>
#include <vector>

namespace Kp {

/**
 * A buffer (or any ImageSource) as an image: nearest-neighbour pixels,
 * wheel zoom around the cursor, pan by dragging with the left button,
 * double-click to fit. Scalars go through a colormap with an automatic
 * (finite min/max) or manual range; RGBA data shows as colours with channel
 * toggles. Pixels of at least textZoom() screen pixels carry their value.
 *
 * Only what is visible is converted per paint: each screen pixel reads the
 * one image pixel under it, so a frame costs the widget's size, not the
 * image's. Images up to cacheLimit() pixels are converted once into a cached
 * QImage (rebuilt after refresh() or a colour setting change); larger ones
 * are converted per paint. GUI thread only.
 */
class ImageView : public QWidget
{
    Q_OBJECT
public:
    /** Channel toggles (for 4-component data). */
    enum Channel { Red = 1, Green = 2, Blue = 4, Alpha = 8, AllChannels = 15 };

    explicit ImageView(QWidget *parent = nullptr);
    ~ImageView() override;

    /** Shows a buffer (nullptr: nothing); keeps a reference to it. */
    void setBuffer(std::shared_ptr<const HostBuffer> buffer);
    const std::shared_ptr<const HostBuffer> &buffer() const { return m_buffer; }
    /** Shows another source (the diff view's heatmap); the view is kept when the size is the same. */
    void setSource(std::shared_ptr<const ImageSource> source);
    const ImageSource *source() const { return m_source.get(); }

    /** Row width for 1-D buffers (0: near square). Only for setBuffer(). */
    void setWidth1D(qint64 width);
    qint64 width1D() const { return m_width1D; }
    /** Slice shown of a 3-D buffer. Only for setBuffer(). */
    void setSlice(qint64 z);
    qint64 slice() const { return m_slice; }

    /**
     * Colours the buffer's cells by who touched them in a recorded launch
     * (nullptr: by their values again). Only for setBuffer(); owners of
     * another buffer or size are ignored.
     */
    void setOwners(std::shared_ptr<const CellOwners> owners, OwnerColour colour);
    bool showsOwners() const { return m_ownersShown; }

    /** The contents changed (after a run): reconvert, recompute the auto range. */
    void refresh();

    void setColormap(Colormap map);
    Colormap colormap() const { return m_colormap; }
    /** Automatic range: the finite minimum and maximum of the data (the default). */
    void setAutoRange(bool on);
    bool isAutoRange() const { return m_autoRange; }
    /** A manual range (turns the automatic one off). */
    void setRange(double lo, double hi);
    /** The range in use, computed when automatic (before a diverging map centres it). */
    std::pair<double, double> range() const;
    /** Channels shown (Channel bits); one channel alone shows as gray. */
    void setChannels(int mask);
    int channels() const { return m_channels; }

    /** The launch whose thread indices the hover line gives. */
    void setLaunch(const Dim3 &grid, const Dim3 &block);
    void clearLaunch();

    /** Screen pixels per image pixel. */
    double zoom() const { return m_zoom; }
    /** Where the image's top-left corner is, in widget coordinates. */
    QPointF origin() const { return m_origin; }
    void setView(double zoom, QPointF origin);
    /** What the wheel does: zoom by factor, keeping the image point under widgetPos in place. */
    void zoomAt(double factor, QPointF widgetPos);
    /** What dragging does. */
    void panBy(QPointF delta);
    /** Whole image in view, centred (whole screen pixels per image pixel when it is enlarged). */
    void fitToWindow();
    /** Centres pixel (x, y) in the view. */
    void centerOn(qint64 x, qint64 y);

    /** The image pixel under a widget position; (-1, -1) outside the image. */
    QPoint pixelAt(QPointF widgetPos) const;
    /** The buffer element (flat index) painted at a widget position, as the hover line names it; -1 outside. */
    qint64 elementAt(QPoint widgetPos) const;
    /**
     * The hover line for a widget position: "x 12, y 7, index 3596: 0.5 |
     * blockIdx (0, 0, 0), threadIdx (12, 7, 0) (if one thread per element)"
     * (z for 3-D buffers; the thread part only after setLaunch()). Empty
     * outside the data.
     */
    QString hoverText(QPoint widgetPos) const;

    /** Images of at most this many pixels are converted once and cached (default 16 Mi pixels, 64 MiB). */
    void setCacheLimit(qint64 pixels);
    qint64 cacheLimit() const { return m_cacheLimit; }
    bool isCached() const { return !m_cache.isNull(); }
    /** Screen pixels per image pixel from which values are written inside the pixels. */
    static constexpr double textZoom() { return 48; }

    /**
     * Zoomed out, show the largest value under each screen pixel instead of
     * the one at its centre (scalar sources only, up to 16 Mi visible image
     * pixels): a diff heatmap must not lose a single mismatching pixel.
     */
    void setReduceByMax(bool on);
    bool reduceByMax() const { return m_reduceByMax; }
    /** The colour bar with the range in the bottom-right corner (scalar data; default on). */
    void setLegendVisible(bool on);
    bool isLegendVisible() const { return m_legend; }

Q_SIGNALS:
    /** The hover line changed (empty when the cursor left the data). */
    void hovered(const QString &text);
    /** Zoom or pan changed. */
    void viewChanged();

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;

private:
    void rebuildSource();
    bool applyFit();
    void invalidateColors();
    void ensureMapper() const;
    void convertRow(const float *values, qsizetype n, QRgb *out) const;
    void buildCache();
    void updateHover(QPoint pos);
    double minZoom() const;
    double maxZoom() const { return 1024; }
    void drawValues(QPainter &p, qint64 sx0, qint64 sx1, qint64 sy0, qint64 sy1);
    void drawLegend(QPainter &p);
    bool legendMeansSomething() const;
    void fillFrameByMax(int dx0, int dy0, int fw, int fh);

    std::shared_ptr<const HostBuffer> m_buffer;
    std::shared_ptr<const ImageSource> m_source;
    qint64 m_width1D = 0;
    qint64 m_slice = 0;
    std::shared_ptr<const CellOwners> m_owners;
    OwnerColour m_ownerColour = OwnerColour::Thread;
    bool m_ownersShown = false;

    Colormap m_colormap = Colormap::Viridis;
    bool m_autoRange = true;
    double m_lo = 0;
    double m_hi = 1;
    int m_channels = AllChannels;
    mutable bool m_mapperValid = false;
    mutable ColorMapper m_mapper;
    mutable std::pair<double, double> m_autoLimits{0, 1};

    bool m_hasLaunch = false;
    Dim3 m_grid{1, 1, 1};
    Dim3 m_block{1, 1, 1};

    double m_zoom = 1;
    QPointF m_origin;
    bool m_autoFit = true;
    bool m_dragging = false;
    QPointF m_lastDrag;
    QPoint m_hoverPos{-1, -1};
    QPoint m_hoverPixel{-1, -1};

    bool m_reduceByMax = false;
    bool m_legend = true;
    qint64 m_cacheLimit = 16ll * 1024 * 1024;
    QImage m_cache;
    bool m_cacheStale = true;
    // Scratch reused by every paint, so a frame allocates nothing.
    QImage m_frame;
    QPoint m_frameOrigin;
    std::vector<qint64> m_columns;
    std::vector<int> m_columnSlot;
    std::vector<float> m_values;
    std::vector<QRgb> m_rowColors;
};

} // namespace Kp
