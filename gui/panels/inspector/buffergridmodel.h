#pragma once

#include "access/accessstats.h"
#include "buffers/bufferstats.h"
#include "buffers/dtype.h"
#include "buffers/elementtext.h"

#include <QAbstractTableModel>
#include <QByteArray>
#include <QFont>
#include <QList>
#include <QPointF>
#include <QRawFont>
#include <QString>
#include <QStyledItemDelegate>

#include <array>
#include <memory>

namespace Kp {

struct HostBuffer;

/**
 * A virtual table over one buffer's memory: nothing is copied, each cell is
 * read from buffer->memory.data() when a view asks for it.
 * - 1-D: rows of columns1D() elements (default 16); a row's header is the
 *   index of its first element, and the last row may be short.
 * - 2-D: the matrix, rows = shape[0], columns = shape[1].
 * - 3-D: one slice z at a time (setSlice()), rows = shape[1], columns = shape[2].
 *
 * Changes since the previous run: takeSnapshot() before a run copies the
 * buffer's bytes (the only copy of a buffer the inspector ever makes, and
 * only while it is at most snapshotLimit() bytes); after refresh() cells
 * whose bytes differ from it get a BackgroundRole colour. The snapshot is
 * shared (snapshot()) so the diff view compares against the same bytes.
 *
 * The model holds a reference to the buffer, so its memory outlives the
 * model's use of it; the buffer may be written between refresh() calls (a
 * run's download) but not resized. GUI thread only.
 */
class BufferGridModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Role {
        FlatIndexRole = Qt::UserRole + 1, ///< qint64 flat element index of the cell
        ChangedRole,                      ///< bool: differs from the snapshot
        FailedRole,                       ///< bool: fails the check whose mask is set (setFailedMask)
    };

    explicit BufferGridModel(QObject *parent = nullptr);
    ~BufferGridModel() override;

    /** Shows another buffer (or none); resets the model and drops the snapshot. */
    void setBuffer(std::shared_ptr<const HostBuffer> buffer);
    const std::shared_ptr<const HostBuffer> &buffer() const { return m_buffer; }

    /** Elements per row for 1-D buffers (at least 1). */
    void setColumns1D(int columns);
    int columns1D() const { return m_columns1D; }

    /** The slice z of a 3-D buffer shown (clamped to 0 .. sliceCount() - 1). */
    void setSlice(qint64 z);
    qint64 slice() const { return m_slice; }
    /** shape[0] for 3-D buffers, 1 otherwise (0 without a buffer). */
    qint64 sliceCount() const;

    void setNumberFormat(NumberFormat format);
    NumberFormat numberFormat() const { return m_format; }
    /** Significant digits (General) or decimals (Fixed, Scientific); 0..17. */
    void setPrecision(int precision);
    int precision() const { return m_precision; }

    /**
     * After the buffer's contents changed (a run): dataChanged for every
     * cell, or a reset when the shape, dtype or memory size changed.
     */
    void refresh();

    /** The cell of a flat element index; invalid when out of range or (3-D) not in the current slice. */
    QModelIndex indexOfElement(qint64 flat) const;
    /** The slice holding a flat element index (0 for 1-D and 2-D). */
    qint64 sliceOfElement(qint64 flat) const;
    /** The flat element index of a cell, or -1 (invalid index, or past the end of a short last row). */
    qint64 flatIndex(const QModelIndex &index) const;

    /**
     * Copies the buffer's bytes as the "previous run" to compare with. Does
     * nothing and returns false when highlighting is off, there is no buffer,
     * or the buffer is larger than snapshotLimit().
     */
    bool takeSnapshot();
    /** Uses bytes someone else took (the inspector keeps one per buffer); nullptr drops it. */
    void setSnapshot(std::shared_ptr<const QByteArray> bytes);
    const std::shared_ptr<const QByteArray> &snapshot() const { return m_snapshot; }
    /** Whether cells that differ from the snapshot are coloured (default on); off drops the snapshot. */
    void setHighlightChanges(bool on);
    bool highlightChanges() const { return m_highlight; }
    /** Largest buffer takeSnapshot() copies (default 1 GiB). */
    void setSnapshotLimit(qint64 bytes) { m_snapshotLimit = bytes; }
    qint64 snapshotLimit() const { return m_snapshotLimit; }
    /** Whether the element differs from the snapshot (false without a usable snapshot). */
    bool isChanged(qint64 flat) const;

    /** The colour of changed cells. */
    static QColor changedColor();

    /**
     * Cells of a check that failed: one byte per element, non-zero where the
     * check failed (CheckData::failedMask); they get failedColor() over the
     * change highlight. what names the check in tooltips. nullptr clears;
     * a mask of another size than the buffer is ignored.
     */
    void setFailedMask(std::shared_ptr<const QByteArray> mask, const QString &what = QString());
    const std::shared_ptr<const QByteArray> &failedMask() const { return m_failed; }
    /** Cells coloured by who touched them in a recorded launch (nullptr: not); a failed cell stays red. */
    void setOwners(std::shared_ptr<const CellOwners> owners, OwnerColour colour);
    /** The background of a cell whose owner shade is shade (a hue per thread or warp; dark to light for time). */
    static QColor ownerColor(double shade, OwnerColour colour);
    bool isFailed(qint64 flat) const;
    /** The colour of cells that fail a check. */
    static QColor failedColor();

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;

private:
    struct Layout
    {
        int dims = 0;
        qint64 rows = 0;
        qint64 columns = 0;
        qint64 sliceElements = 0; ///< elements per slice (3-D), all elements otherwise
        qint64 elements = 0;
        DType dtype = DType::Float32;
        qint64 bytes = 0;
    };
    Layout computeLayout() const;
    const char *elementPointer(qint64 flat) const;
    bool snapshotUsable() const;
    QString coordinatesText(qint64 flat) const;

    std::shared_ptr<const HostBuffer> m_buffer;
    std::shared_ptr<const QByteArray> m_snapshot;
    std::shared_ptr<const QByteArray> m_failed;
    QString m_failedWhat;
    std::shared_ptr<const CellOwners> m_owners;
    OwnerColour m_ownerColour = OwnerColour::Thread;
    Layout m_layout;
    int m_columns1D = 16;
    qint64 m_slice = 0;
    NumberFormat m_format = NumberFormat::General;
    int m_precision = 6;
    bool m_highlight = true;
    qint64 m_snapshotLimit = 1024ll * 1024 * 1024;
};

/**
 * Paints grid cells cheaply: the background (selection, or the model's
 * BackgroundRole), the DisplayRole text right-aligned (elided when the
 * column is too narrow), and a frame around the current cell.
 * QStyledItemDelegate lays out every cell's text with QTextLayout, which
 * costs most of a frame when a screen is full of numbers; here ASCII text
 * is drawn as a glyph run from glyphs looked up once per font (no shaping),
 * anything else with QPainter::drawText(). GUI thread.
 */
class BufferGridDelegate : public QStyledItemDelegate
{
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const override;

private:
    bool prepare(const QFont &font) const;

    // Glyphs of the printable ASCII characters in the last font seen.
    mutable QFont m_font;
    mutable bool m_prepared = false;
    mutable QRawFont m_raw;
    mutable std::array<quint32, 128> m_glyphs{};
    mutable std::array<qreal, 128> m_advances{};
    mutable QList<quint32> m_runGlyphs;
    mutable QList<QPointF> m_runPositions;
};

} // namespace Kp
