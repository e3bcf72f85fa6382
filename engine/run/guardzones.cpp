#include "run/guardzones.h"

#include <cstring>

namespace Kp {

namespace Guard {

const QByteArray &expectedGuard()
{
    static const QByteArray bytes = [] {
        QByteArray b(kGuardBytes, Qt::Uninitialized);
        for (qint64 i = 0; i < kGuardBytes; ++i) {
            b[i] = char((kPattern >> (8 * (i % 4))) & 0xffu);
        }
        return b;
    }();
    return bytes;
}

std::optional<Change> scanGuard(const uchar *guard, qint64 size)
{
    const QByteArray &expected = expectedGuard();
    size = qMin(size, qint64(expected.size()));
    const auto *want = reinterpret_cast<const uchar *>(expected.constData());
    // The common case, an untouched guard, is one memcmp.
    if (std::memcmp(guard, want, size_t(size)) == 0) {
        return std::nullopt;
    }
    Change c;
    c.first = -1;
    for (qint64 i = 0; i < size; ++i) {
        if (guard[i] != want[i]) {
            if (c.first < 0) {
                c.first = i;
            }
            c.last = i;
            ++c.changedBytes;
        }
    }
    return c;
}

} // namespace Guard

namespace {

qint64 floorDiv(qint64 a, qint64 b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

} // namespace

qint64 GuardViolation::firstElement() const
{
    return floorDiv(firstByte, qMax(1, elementBytes));
}

qint64 GuardViolation::lastElement() const
{
    return floorDiv(lastByte, qMax(1, elementBytes));
}

QString GuardViolation::message() const
{
    const QString when =
        step < 0 ? QStringLiteral("the timing runs")
                 : QStringLiteral("step %1 (%2)").arg(step + 1).arg(kernel) +
                       (repetition > 0 ? QStringLiteral(", repetition %1,").arg(repetition + 1) : QString());
    const QString where =
        side == Side::After ? QStringLiteral("past the end of") : QStringLiteral("before the start of");
    const qint64 n = spanBytes();
    const qint64 e0 = firstElement(), e1 = lastElement();
    const QString elements =
        e0 == e1 ? QStringLiteral("element %1").arg(e0) : QStringLiteral("elements %1..%2").arg(e0).arg(e1);
    return QStringLiteral("%1 wrote %2 `%3`: %4 byte%5, %6 of the guard")
        .arg(when, where, buffer)
        .arg(n)
        .arg(n == 1 ? "" : "s")
        .arg(elements);
}

GuardViolation guardViolation(GuardViolation::Side side, const Guard::Change &change, qint64 bufferBytes,
                              int elementBytes)
{
    GuardViolation v;
    v.side = side;
    v.bufferBytes = bufferBytes;
    v.elementBytes = qMax(1, elementBytes);
    const qint64 origin = side == GuardViolation::Side::After ? bufferBytes : -Guard::kGuardBytes;
    v.firstByte = origin + change.first;
    v.lastByte = origin + change.last;
    v.changedBytes = change.changedBytes;
    return v;
}

QVariantMap GuardViolation::toVariant() const
{
    return QVariantMap{
        {QStringLiteral("step"), step},
        {QStringLiteral("repetition"), repetition},
        {QStringLiteral("kernel"), kernel},
        {QStringLiteral("buffer"), buffer},
        {QStringLiteral("bufferIndex"), bufferIndex},
        {QStringLiteral("side"), side == Side::After ? QStringLiteral("after") : QStringLiteral("before")},
        {QStringLiteral("bufferBytes"), bufferBytes},
        {QStringLiteral("elementBytes"), elementBytes},
        {QStringLiteral("firstByte"), firstByte},
        {QStringLiteral("lastByte"), lastByte},
        {QStringLiteral("changedBytes"), changedBytes}};
}

GuardViolation GuardViolation::fromVariant(const QVariantMap &m)
{
    GuardViolation v;
    v.step = m.value(QStringLiteral("step"), -1).toInt();
    v.repetition = m.value(QStringLiteral("repetition")).toInt();
    v.kernel = m.value(QStringLiteral("kernel")).toString();
    v.buffer = m.value(QStringLiteral("buffer")).toString();
    v.bufferIndex = m.value(QStringLiteral("bufferIndex"), -1).toInt();
    v.side = m.value(QStringLiteral("side")).toString() == QLatin1String("before") ? Side::Before : Side::After;
    v.bufferBytes = m.value(QStringLiteral("bufferBytes")).toLongLong();
    v.elementBytes = qMax(1, m.value(QStringLiteral("elementBytes"), 1).toInt());
    v.firstByte = m.value(QStringLiteral("firstByte")).toLongLong();
    v.lastByte = m.value(QStringLiteral("lastByte")).toLongLong();
    v.changedBytes = m.value(QStringLiteral("changedBytes")).toLongLong();
    return v;
}

QVariantMap DeviceAllocation::toVariant() const
{
    return QVariantMap{{QStringLiteral("buffer"), buffer},
                       {QStringLiteral("address"), address},
                       {QStringLiteral("bytes"), bytes},
                       {QStringLiteral("guardBytes"), guardBytes}};
}

DeviceAllocation DeviceAllocation::fromVariant(const QVariantMap &m)
{
    DeviceAllocation a;
    a.buffer = m.value(QStringLiteral("buffer")).toString();
    a.address = m.value(QStringLiteral("address")).toULongLong();
    a.bytes = m.value(QStringLiteral("bytes")).toLongLong();
    a.guardBytes = m.value(QStringLiteral("guardBytes")).toLongLong();
    return a;
}

} // namespace Kp
