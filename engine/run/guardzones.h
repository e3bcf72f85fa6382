#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QVariantMap>

#include <optional>

namespace Kp {

/**
 * Guard zones (docs/memory-checking.md): every device buffer is allocated
 * with kGuardBytes before and after it, filled with a known pattern, and the
 * guards are compared with the pattern after every step of the untimed run
 * and once after the timing samples. The kernel sees the buffer's pointer and
 * size exactly as bound; only a write outside them changes a guard.
 *
 * This half needs no GPU (the pattern, the comparison and the words), so it
 * is tested in CI on host memory; the device half is GuardZonesDevice in
 * kpg-worker.
 */
namespace Guard {

/** Bytes of guard on each side of every buffer: a multiple of 256, so the buffer keeps cuMemAlloc's alignment. */
constexpr qint64 kGuardBytes = 4096;
/** The fill, repeated from the start of each guard, little-endian; unlikely to be what a kernel writes. */
constexpr quint32 kPattern = 0xDB5A7E3Cu;

/** kGuardBytes of the pattern: what an untouched guard holds. */
const QByteArray &expectedGuard();

/** The bytes of a guard that differ from the pattern: [first, last] relative to the guard's start. */
struct Change
{
    qint64 first = 0;
    qint64 last = 0;
    qint64 changedBytes = 0; ///< bytes that differ (a write of the pattern's own byte is invisible)
};

/** Compares a guard's bytes with the pattern; nothing when untouched. */
std::optional<Change> scanGuard(const uchar *guard, qint64 size);

} // namespace Guard

/** One changed guard, found after a step (or after the timing samples). */
struct GuardViolation
{
    enum class Side { Before, After };
    int step = -1;      ///< 0-based step index; -1: found after the timing samples
    int repetition = 0; ///< 0-based
    QString kernel;     ///< as the project names it
    QString buffer;     ///< the buffer whose memory the guard borders at that moment (swaps move names)
    int bufferIndex = -1;
    Side side = Side::After;
    qint64 bufferBytes = 0;
    int elementBytes = 1;
    qint64 firstByte = 0; ///< relative to the buffer's start: >= bufferBytes after it, < 0 before it
    qint64 lastByte = 0;
    qint64 changedBytes = 0;

    qint64 spanBytes() const { return lastByte - firstByte + 1; }
    /** Element indices in the buffer's own numbering (1000..1023 past a 1000-element buffer; -24..-1 before it). */
    qint64 firstElement() const;
    qint64 lastElement() const;
    /** The buffer's own element nearest the write: its last one after it, element 0 before it. */
    qint64 edgeElement() const
    {
        return side == Side::After ? qMax<qint64>(0, bufferBytes / qMax(1, elementBytes) - 1) : 0;
    }
    /** "step 2 (shifted_copy) wrote past the end of `c`: 96 bytes, elements 1000..1023 of the guard". */
    QString message() const;

    QVariantMap toVariant() const;
    static GuardViolation fromVariant(const QVariantMap &m);
    bool operator==(const GuardViolation &) const = default;
};

/**
 * A changed guard as a violation: change is relative to the guard's start,
 * which lies kGuardBytes before the buffer (Before) or right after its last
 * byte (After).
 */
GuardViolation guardViolation(GuardViolation::Side side, const Guard::Change &change, qint64 bufferBytes,
                              int elementBytes);

/** Where a buffer lived on the device during a run: for mapping sanitizer addresses to elements. */
struct DeviceAllocation
{
    QString buffer;        ///< the buffer the allocation was made for (its contents at the start of the run)
    quint64 address = 0;   ///< the pointer kernels were given
    qint64 bytes = 0;      ///< the buffer's size
    qint64 guardBytes = 0; ///< guard on each side (0 when guards were off)

    QVariantMap toVariant() const;
    static DeviceAllocation fromVariant(const QVariantMap &m);
    bool operator==(const DeviceAllocation &) const = default;
};

} // namespace Kp
