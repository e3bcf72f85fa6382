#include "buffergridmodel.h"

#include "run/runner.h"

#include <QColor>
#include <QGlyphRun>
#include <QPainter>

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>

namespace Kp {

// ---- the model --------------------------------------------------------

BufferGridModel::BufferGridModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

BufferGridModel::~BufferGridModel() = default;

BufferGridModel::Layout BufferGridModel::computeLayout() const
{
    Layout l;
    if (!m_buffer) {
        return l;
    }
    const QList<qint64> &shape = m_buffer->shape;
    l.dtype = m_buffer->spec.dtype;
    l.dims = int(shape.size());
    l.elements = m_buffer->elementCount();
    l.bytes = m_buffer->byteSize();
    const bool usable = l.dims >= 1 && l.dims <= 3 && l.elements > 0 && m_buffer->memory.isValid() &&
                        m_buffer->memory.size() >= l.bytes;
    if (!usable) {
        l.rows = l.columns = l.sliceElements = 0;
        l.elements = 0;
        return l;
    }
    switch (l.dims) {
    case 1:
        l.columns = std::min<qint64>(m_columns1D, l.elements);
        l.rows = (l.elements + l.columns - 1) / l.columns;
        l.sliceElements = l.elements;
        break;
    case 2:
        l.rows = shape[0];
        l.columns = shape[1];
        l.sliceElements = l.elements;
        break;
    default:
        l.rows = shape[1];
        l.columns = shape[2];
        l.sliceElements = shape[1] * shape[2];
        break;
    }
    return l;
}

void BufferGridModel::setBuffer(std::shared_ptr<const HostBuffer> buffer)
{
    beginResetModel();
    m_buffer = std::move(buffer);
    m_snapshot.reset();
    m_failed.reset();
    m_slice = 0;
    m_layout = computeLayout();
    endResetModel();
}

void BufferGridModel::setColumns1D(int columns)
{
    columns = std::max(1, columns);
    if (columns == m_columns1D) {
        return;
    }
    if (m_layout.dims != 1) {
        m_columns1D = columns;
        return;
    }
    beginResetModel();
    m_columns1D = columns;
    m_layout = computeLayout();
    endResetModel();
}

qint64 BufferGridModel::sliceCount() const
{
    if (!m_buffer || m_layout.elements == 0) {
        return 0;
    }
    return m_layout.dims == 3 ? m_buffer->shape[0] : 1;
}

void BufferGridModel::setSlice(qint64 z)
{
    z = std::clamp<qint64>(z, 0, std::max<qint64>(0, sliceCount() - 1));
    if (z == m_slice) {
        return;
    }
    m_slice = z;
    if (rowCount() > 0 && columnCount() > 0) {
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
    }
}

void BufferGridModel::setNumberFormat(NumberFormat format)
{
    if (format == m_format) {
        return;
    }
    m_format = format;
    if (rowCount() > 0 && columnCount() > 0) {
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1), {Qt::DisplayRole});
    }
}

void BufferGridModel::setPrecision(int precision)
{
    precision = std::clamp(precision, 0, 17);
    if (precision == m_precision) {
        return;
    }
    m_precision = precision;
    if (rowCount() > 0 && columnCount() > 0) {
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1), {Qt::DisplayRole});
    }
}

void BufferGridModel::refresh()
{
    const Layout l = computeLayout();
    const bool same = l.dims == m_layout.dims && l.rows == m_layout.rows && l.columns == m_layout.columns &&
                      l.elements == m_layout.elements && l.dtype == m_layout.dtype && l.bytes == m_layout.bytes;
    if (!same) {
        beginResetModel();
        m_layout = l;
        m_slice = std::clamp<qint64>(m_slice, 0, std::max<qint64>(0, sliceCount() - 1));
        endResetModel();
        return;
    }
    if (rowCount() > 0 && columnCount() > 0) {
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
    }
}

QModelIndex BufferGridModel::indexOfElement(qint64 flat) const
{
    if (flat < 0 || flat >= m_layout.elements || m_layout.columns <= 0) {
        return {};
    }
    if (m_layout.dims == 3 && flat / m_layout.sliceElements != m_slice) {
        return {};
    }
    const qint64 within = flat % m_layout.sliceElements;
    const qint64 row = within / m_layout.columns;
    const qint64 column = within % m_layout.columns;
    if (row > INT_MAX || column > INT_MAX) {
        return {};
    }
    return index(int(row), int(column));
}

qint64 BufferGridModel::sliceOfElement(qint64 flat) const
{
    if (m_layout.dims != 3 || m_layout.sliceElements <= 0 || flat < 0) {
        return 0;
    }
    return flat / m_layout.sliceElements;
}

qint64 BufferGridModel::flatIndex(const QModelIndex &index) const
{
    if (!index.isValid() || index.model() != this || index.row() >= rowCount() || index.column() >= columnCount()) {
        return -1;
    }
    const qint64 base = m_layout.dims == 3 ? m_slice * m_layout.sliceElements : 0;
    const qint64 flat = base + qint64(index.row()) * m_layout.columns + index.column();
    return flat < m_layout.elements ? flat : -1;
}

const char *BufferGridModel::elementPointer(qint64 flat) const
{
    return static_cast<const char *>(m_buffer->memory.data()) + flat * dtypeInfo(m_layout.dtype).elementBytes();
}

bool BufferGridModel::takeSnapshot()
{
    if (!m_highlight || !m_buffer || m_layout.bytes <= 0 || m_layout.elements == 0 ||
        m_layout.bytes > m_snapshotLimit) {
        return false;
    }
    // The one whole-buffer copy the inspector makes (see the class comment).
    m_snapshot = std::make_shared<const QByteArray>(static_cast<const char *>(m_buffer->memory.data()),
                                                    qsizetype(m_layout.bytes));
    return true;
}

void BufferGridModel::setSnapshot(std::shared_ptr<const QByteArray> bytes)
{
    m_snapshot = std::move(bytes);
}

void BufferGridModel::setHighlightChanges(bool on)
{
    if (on == m_highlight) {
        return;
    }
    m_highlight = on;
    if (!on) {
        m_snapshot.reset();
    }
    if (rowCount() > 0 && columnCount() > 0) {
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1), {Qt::BackgroundRole});
    }
}

bool BufferGridModel::snapshotUsable() const
{
    return m_highlight && m_snapshot && m_layout.bytes > 0 && m_snapshot->size() == m_layout.bytes;
}

bool BufferGridModel::isChanged(qint64 flat) const
{
    if (!snapshotUsable() || flat < 0 || flat >= m_layout.elements) {
        return false;
    }
    const int eb = dtypeInfo(m_layout.dtype).elementBytes();
    // Bytes, not values: NaN stays "unchanged" and 0 -> -0 counts as a change.
    return std::memcmp(elementPointer(flat), m_snapshot->constData() + flat * eb, std::size_t(eb)) != 0;
}

QColor BufferGridModel::changedColor()
{
    // Translucent amber reads on light and dark palettes alike.
    return QColor(255, 170, 0, 110);
}

void BufferGridModel::setFailedMask(std::shared_ptr<const QByteArray> mask, const QString &what)
{
    m_failed = std::move(mask);
    m_failedWhat = what;
    if (rowCount() > 0 && columnCount() > 0) {
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1), {Qt::BackgroundRole});
    }
}

void BufferGridModel::setOwners(std::shared_ptr<const CellOwners> owners, OwnerColour colour)
{
    m_owners = std::move(owners);
    m_ownerColour = colour;
    if (rowCount() > 0 && columnCount() > 0) {
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1), {Qt::BackgroundRole});
    }
}

QColor BufferGridModel::ownerColor(double shade, OwnerColour colour)
{
    // Translucent, so the numbers stay readable on light and dark palettes.
    return colour == OwnerColour::FirstAccess ? QColor::fromHsvF(0.6, 0.15 + 0.75 * shade, 1.0, 0.55)
                                              : QColor::fromHsvF(shade, 0.55, 1.0, 0.55);
}

bool BufferGridModel::isFailed(qint64 flat) const
{
    return m_failed && m_failed->size() == m_layout.elements && flat >= 0 && flat < m_layout.elements &&
           m_failed->at(qsizetype(flat)) != 0;
}

QColor BufferGridModel::failedColor()
{
    // Translucent red: stronger than the change highlight, readable on both palettes.
    return QColor(230, 40, 50, 150);
}

QString BufferGridModel::coordinatesText(qint64 flat) const
{
    const QList<qint64> &shape = m_buffer->shape;
    switch (m_layout.dims) {
    case 1: return QStringLiteral("[%1]").arg(flat);
    case 2: return QStringLiteral("[%1, %2]").arg(flat / shape[1]).arg(flat % shape[1]);
    default: {
        const qint64 plane = shape[1] * shape[2];
        return QStringLiteral("[%1, %2, %3]").arg(flat / plane).arg(flat % plane / shape[2]).arg(flat % shape[2]);
    }
    }
}

int BufferGridModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(std::min<qint64>(m_layout.rows, INT_MAX));
}

int BufferGridModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(std::min<qint64>(m_layout.columns, INT_MAX));
}

QVariant BufferGridModel::data(const QModelIndex &index, int role) const
{
    const qint64 flat = flatIndex(index);
    if (flat < 0) {
        return {};
    }
    switch (role) {
    case Qt::DisplayRole: return formatElement(m_layout.dtype, elementPointer(flat), m_format, m_precision);
    case Qt::ToolTipRole: {
        const QString name = dtypeName(m_layout.dtype);
        QString tip = QStringLiteral("index %1, %2\n%3 %4")
                          .arg(flat)
                          .arg(coordinatesText(flat), name, exactElementText(m_layout.dtype, elementPointer(flat)));
        if (isChanged(flat)) {
            const int eb = dtypeInfo(m_layout.dtype).elementBytes();
            tip += QStringLiteral("\nbefore the run: %1")
                       .arg(exactElementText(m_layout.dtype, m_snapshot->constData() + flat * eb));
        }
        if (isFailed(flat)) {
            tip += QStringLiteral("\nfails the check %1").arg(m_failedWhat);
        }
        if (m_owners && m_owners->elements() == m_layout.elements) {
            tip += QLatin1Char('\n') + m_owners->describe(flat);
        }
        return tip;
    }
    case Qt::BackgroundRole:
        if (isFailed(flat)) {
            return failedColor();
        }
        if (m_owners && m_owners->elements() == m_layout.elements) {
            const double shade = m_owners->shade(flat, m_ownerColour);
            return std::isnan(shade) ? QVariant() : QVariant(ownerColor(shade, m_ownerColour));
        }
        if (isChanged(flat)) {
            return changedColor();
        }
        return {};
    case Qt::TextAlignmentRole: return QVariant::fromValue(int(Qt::AlignRight | Qt::AlignVCenter));
    case FlatIndexRole: return QVariant::fromValue(flat);
    case ChangedRole: return isChanged(flat);
    case FailedRole: return isFailed(flat);
    default: return {};
    }
}

QVariant BufferGridModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    const int count = orientation == Qt::Horizontal ? columnCount() : rowCount();
    if (section < 0 || section >= count) {
        return {};
    }
    if (role == Qt::DisplayRole) {
        if (orientation == Qt::Vertical && m_layout.dims == 1) {
            return QString::number(qint64(section) * m_layout.columns);
        }
        return QString::number(section);
    }
    if (role == Qt::ToolTipRole && orientation == Qt::Vertical && m_layout.dims == 1) {
        const qint64 first = qint64(section) * m_layout.columns;
        const qint64 last = std::min(m_layout.elements, first + m_layout.columns) - 1;
        return QStringLiteral("elements %1 to %2").arg(first).arg(last);
    }
    return {};
}

Qt::ItemFlags BufferGridModel::flags(const QModelIndex &index) const
{
    return flatIndex(index) >= 0 ? Qt::ItemIsEnabled | Qt::ItemIsSelectable : Qt::NoItemFlags;
}

bool BufferGridDelegate::prepare(const QFont &font) const
{
    if (m_prepared && font == m_font) {
        return m_raw.isValid();
    }
    m_prepared = true;
    m_font = font;
    m_raw = QRawFont::fromFont(font);
    m_glyphs.fill(0);
    m_advances.fill(0);
    if (!m_raw.isValid()) {
        return false;
    }
    QString ascii;
    for (char16_t c = 32; c < 127; ++c) {
        ascii += QChar(c);
    }
    const QList<quint32> glyphs = m_raw.glyphIndexesForString(ascii);
    if (glyphs.size() != ascii.size()) {
        m_raw = QRawFont();
        return false;
    }
    const QList<QPointF> advances = m_raw.advancesForGlyphIndexes(glyphs);
    for (qsizetype i = 0; i < glyphs.size(); ++i) {
        m_glyphs[std::size_t(32 + i)] = glyphs[i];
        m_advances[std::size_t(32 + i)] = advances.value(i).x();
    }
    return true;
}

void BufferGridDelegate::paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    const QRect r = option.rect;
    const QPalette::ColorGroup group = !(option.state & QStyle::State_Enabled) ? QPalette::Disabled
                                       : (option.state & QStyle::State_Active) ? QPalette::Active
                                                                               : QPalette::Inactive;
    const bool selected = option.state & QStyle::State_Selected;
    if (selected) {
        painter->fillRect(r, option.palette.brush(group, QPalette::Highlight));
    } else if (const QVariant bg = index.data(Qt::BackgroundRole); bg.isValid()) {
        painter->fillRect(r, bg.value<QColor>());
    }
    const QString text = index.data(Qt::DisplayRole).toString();
    if (!text.isEmpty()) {
        const QRect area = r.adjusted(4, 0, -4, 0);
        const QFontMetrics &fm = option.fontMetrics;
        const int baseline = r.top() + (r.height() + fm.ascent() - fm.descent()) / 2;
        painter->setPen(option.palette.color(group, selected ? QPalette::HighlightedText : QPalette::Text));
        bool drawn = false;
        if (prepare(option.font)) {
            m_runGlyphs.resize(text.size());
            m_runPositions.resize(text.size());
            qreal x = 0;
            bool ascii = true;
            for (qsizetype i = 0; i < text.size() && ascii; ++i) {
                const char16_t c = text[i].unicode();
                ascii = c < 128 && m_glyphs[c] != 0;
                if (ascii) {
                    m_runGlyphs[i] = m_glyphs[c];
                    m_runPositions[i] = QPointF(x, 0);
                    x += m_advances[c];
                }
            }
            if (ascii && x <= area.width()) {
                QGlyphRun run;
                run.setRawFont(m_raw);
                run.setGlyphIndexes(m_runGlyphs);
                run.setPositions(m_runPositions);
                painter->drawGlyphRun(QPointF(area.right() + 1 - x, baseline), run);
                drawn = true;
            }
        }
        if (!drawn) {
            QString shown = text;
            int advance = fm.horizontalAdvance(text);
            if (advance > area.width()) {
                shown = fm.elidedText(text, Qt::ElideRight, area.width());
                advance = fm.horizontalAdvance(shown);
            }
            painter->setFont(option.font);
            // One run at a computed baseline: no layout, no wrapping.
            painter->drawText(QPoint(area.right() + 1 - advance, baseline), shown);
        }
    }
    if (option.state & QStyle::State_HasFocus) {
        painter->setPen(option.palette.color(group, QPalette::Highlight).darker(150));
        painter->drawRect(r.adjusted(0, 0, -1, -1));
    }
}

} // namespace Kp
