#include "elementtext.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>

namespace Kp {

namespace {

qint64 loadSigned(int bytes, const void *p)
{
    switch (bytes) {
    case 1: {
        std::int8_t v;
        std::memcpy(&v, p, 1);
        return v;
    }
    case 2: {
        std::int16_t v;
        std::memcpy(&v, p, 2);
        return v;
    }
    case 4: {
        std::int32_t v;
        std::memcpy(&v, p, 4);
        return v;
    }
    default: {
        std::int64_t v;
        std::memcpy(&v, p, 8);
        return v;
    }
    }
}

quint64 loadUnsigned(int bytes, const void *p)
{
    switch (bytes) {
    case 1: {
        std::uint8_t v;
        std::memcpy(&v, p, 1);
        return v;
    }
    case 2: {
        std::uint16_t v;
        std::memcpy(&v, p, 2);
        return v;
    }
    case 4: {
        std::uint32_t v;
        std::memcpy(&v, p, 4);
        return v;
    }
    default: {
        std::uint64_t v;
        std::memcpy(&v, p, 8);
        return v;
    }
    }
}

QString hexText(quint64 bits, int bytes)
{
    const quint64 mask = bytes >= 8 ? ~quint64(0) : (quint64(1) << (8 * bytes)) - 1;
    return QStringLiteral("0x") + QString::number(bits & mask, 16).rightJustified(2 * bytes, QLatin1Char('0'));
}

QString nonFiniteText(double v)
{
    if (std::isnan(v)) {
        return QStringLiteral("nan");
    }
    return v < 0 ? QStringLiteral("-inf") : QStringLiteral("inf");
}

QString componentText(DType component, const char *p, NumberFormat format, int precision)
{
    const DTypeInfo &info = dtypeInfo(component);
    switch (info.kind) {
    case ScalarKind::SignedInt: {
        const qint64 v = loadSigned(info.componentBytes, p);
        if (format == NumberFormat::Hex) {
            return hexText(static_cast<quint64>(v), info.componentBytes);
        }
        if (format == NumberFormat::Scientific) {
            return QString::number(double(v), 'e', precision);
        }
        return QString::number(v);
    }
    case ScalarKind::UnsignedInt: {
        const quint64 v = loadUnsigned(info.componentBytes, p);
        if (format == NumberFormat::Hex) {
            return hexText(v, info.componentBytes);
        }
        if (format == NumberFormat::Scientific) {
            return QString::number(double(v), 'e', precision);
        }
        return QString::number(v);
    }
    case ScalarKind::Float:
    case ScalarKind::Half:
    case ScalarKind::BFloat: break;
    }
    const double v = loadComponent(component, p);
    if (!std::isfinite(v)) {
        return nonFiniteText(v);
    }
    switch (format) {
    case NumberFormat::Fixed: return QString::number(v, 'f', precision);
    case NumberFormat::Scientific: return QString::number(v, 'e', precision);
    case NumberFormat::General:
    case NumberFormat::Hex: break;
    }
    return QString::number(v, 'g', std::max(1, precision));
}

// Shortest text that reads back as the same 16-bit float: to_chars knows
// float and double only, so try more digits until the round trip holds.
QString shortest16(float v, bool bfloat)
{
    const std::uint16_t bits = bfloat ? floatToBFloat16(v) : floatToHalf(v);
    std::array<char, 64> buf{};
    for (int digits = 1; digits <= 9; ++digits) {
        const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::general, digits);
        float back = 0;
        std::from_chars(buf.data(), r.ptr, back);
        if ((bfloat ? floatToBFloat16(back) : floatToHalf(back)) == bits || digits == 9) {
            return QString::fromLatin1(buf.data(), r.ptr - buf.data());
        }
    }
    return {};
}

QString exactComponentText(DType component, const char *p)
{
    const DTypeInfo &info = dtypeInfo(component);
    if (info.kind == ScalarKind::SignedInt || info.kind == ScalarKind::UnsignedInt) {
        return componentText(component, p, NumberFormat::General, 6);
    }
    const double v = loadComponent(component, p);
    if (!std::isfinite(v)) {
        return nonFiniteText(v);
    }
    std::array<char, 64> buf{};
    std::to_chars_result r{};
    switch (info.kind) {
    case ScalarKind::Half: return shortest16(float(v), false);
    case ScalarKind::BFloat: return shortest16(float(v), true);
    default:
        r = component == DType::Float32 ? std::to_chars(buf.data(), buf.data() + buf.size(), float(v))
                                        : std::to_chars(buf.data(), buf.data() + buf.size(), v);
        return QString::fromLatin1(buf.data(), r.ptr - buf.data());
    }
}

template<typename F> QString elementText(DType dtype, const void *element, F componentFn)
{
    const DTypeInfo &info = dtypeInfo(dtype);
    const char *p = static_cast<const char *>(element);
    if (info.components == 1) {
        return componentFn(info.component, p);
    }
    QString s = QStringLiteral("(");
    for (int c = 0; c < info.components; ++c) {
        if (c > 0) {
            s += QStringLiteral(", ");
        }
        s += componentFn(info.component, p + c * info.componentBytes);
    }
    return s + QLatin1Char(')');
}

} // namespace

QString formatElement(DType dtype, const void *element, NumberFormat format, int precision)
{
    return elementText(dtype, element,
                       [format, precision](DType c, const char *p) { return componentText(c, p, format, precision); });
}

QString exactElementText(DType dtype, const void *element)
{
    return elementText(dtype, element, [](DType c, const char *p) { return exactComponentText(c, p); });
}

} // namespace Kp
