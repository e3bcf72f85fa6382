#include "dtype.h"

#include <QHash>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace Kp {

namespace {
using K = ScalarKind;
// clang-format off
constexpr std::array<DTypeInfo, kDTypeCount> kTable{{
    {DType::Int8,     "int8",     "signed char",        DType::Int8,    1, 1, 1,  K::SignedInt},
    {DType::UInt8,    "uint8",    "unsigned char",      DType::UInt8,   1, 1, 1,  K::UnsignedInt},
    {DType::Int16,    "int16",    "short",              DType::Int16,   1, 2, 2,  K::SignedInt},
    {DType::UInt16,   "uint16",   "unsigned short",     DType::UInt16,  1, 2, 2,  K::UnsignedInt},
    {DType::Int32,    "int32",    "int",                DType::Int32,   1, 4, 4,  K::SignedInt},
    {DType::UInt32,   "uint32",   "unsigned int",       DType::UInt32,  1, 4, 4,  K::UnsignedInt},
    {DType::Int64,    "int64",    "long long",          DType::Int64,   1, 8, 8,  K::SignedInt},
    {DType::UInt64,   "uint64",   "unsigned long long", DType::UInt64,  1, 8, 8,  K::UnsignedInt},
    {DType::Float16,  "float16",  "__half",             DType::Float16, 1, 2, 2,  K::Half},
    {DType::BFloat16, "bfloat16", "__nv_bfloat16",      DType::BFloat16,1, 2, 2,  K::BFloat},
    {DType::Float32,  "float32",  "float",              DType::Float32, 1, 4, 4,  K::Float},
    {DType::Float64,  "float64",  "double",             DType::Float64, 1, 8, 8,  K::Float},
    {DType::Char4,    "char4",    "char4",              DType::Int8,    4, 1, 4,  K::SignedInt},
    {DType::UChar4,   "uchar4",   "uchar4",             DType::UInt8,   4, 1, 4,  K::UnsignedInt},
    {DType::Short2,   "short2",   "short2",             DType::Int16,   2, 2, 4,  K::SignedInt},
    {DType::Int2,     "int2",     "int2",               DType::Int32,   2, 4, 8,  K::SignedInt},
    {DType::Int4,     "int4",     "int4",               DType::Int32,   4, 4, 16, K::SignedInt},
    {DType::Float2,   "float2",   "float2",             DType::Float32, 2, 4, 8,  K::Float},
    {DType::Float3,   "float3",   "float3",             DType::Float32, 3, 4, 4,  K::Float},
    {DType::Float4,   "float4",   "float4",             DType::Float32, 4, 4, 16, K::Float},
    {DType::Double2,  "double2",  "double2",            DType::Float64, 2, 8, 16, K::Float},
    {DType::Char1,    "char1",    "char1",              DType::Int8,    1, 1, 1,  K::SignedInt},
    {DType::Char2,    "char2",    "char2",              DType::Int8,    2, 1, 2,  K::SignedInt},
    {DType::Char3,    "char3",    "char3",              DType::Int8,    3, 1, 1,  K::SignedInt},
    {DType::UChar1,   "uchar1",   "uchar1",             DType::UInt8,   1, 1, 1,  K::UnsignedInt},
    {DType::UChar2,   "uchar2",   "uchar2",             DType::UInt8,   2, 1, 2,  K::UnsignedInt},
    {DType::UChar3,   "uchar3",   "uchar3",             DType::UInt8,   3, 1, 1,  K::UnsignedInt},
    {DType::Short1,   "short1",   "short1",             DType::Int16,   1, 2, 2,  K::SignedInt},
    {DType::Short3,   "short3",   "short3",             DType::Int16,   3, 2, 2,  K::SignedInt},
    {DType::Short4,   "short4",   "short4",             DType::Int16,   4, 2, 8,  K::SignedInt},
    {DType::UShort1,  "ushort1",  "ushort1",            DType::UInt16,  1, 2, 2,  K::UnsignedInt},
    {DType::UShort2,  "ushort2",  "ushort2",            DType::UInt16,  2, 2, 4,  K::UnsignedInt},
    {DType::UShort3,  "ushort3",  "ushort3",            DType::UInt16,  3, 2, 2,  K::UnsignedInt},
    {DType::UShort4,  "ushort4",  "ushort4",            DType::UInt16,  4, 2, 8,  K::UnsignedInt},
    {DType::Int1,     "int1",     "int1",               DType::Int32,   1, 4, 4,  K::SignedInt},
    {DType::Int3,     "int3",     "int3",               DType::Int32,   3, 4, 4,  K::SignedInt},
    {DType::UInt1,    "uint1",    "uint1",              DType::UInt32,  1, 4, 4,  K::UnsignedInt},
    {DType::UInt2,    "uint2",    "uint2",              DType::UInt32,  2, 4, 8,  K::UnsignedInt},
    {DType::UInt3,    "uint3",    "uint3",              DType::UInt32,  3, 4, 4,  K::UnsignedInt},
    {DType::UInt4,    "uint4",    "uint4",              DType::UInt32,  4, 4, 16, K::UnsignedInt},
    {DType::LongLong1,    "longlong1",      "longlong1",      DType::Int64,  1, 8, 8,  K::SignedInt},
    {DType::LongLong2,    "longlong2",      "longlong2",      DType::Int64,  2, 8, 16, K::SignedInt},
    {DType::LongLong3,    "longlong3",      "longlong3",      DType::Int64,  3, 8, 8,  K::SignedInt},
    {DType::LongLong4,    "longlong4",      "longlong4_16a",  DType::Int64,  4, 8, 16, K::SignedInt},
    {DType::LongLong4A32, "longlong4_32a",  "longlong4_32a",  DType::Int64,  4, 8, 32, K::SignedInt},
    {DType::ULongLong1,   "ulonglong1",     "ulonglong1",     DType::UInt64, 1, 8, 8,  K::UnsignedInt},
    {DType::ULongLong2,   "ulonglong2",     "ulonglong2",     DType::UInt64, 2, 8, 16, K::UnsignedInt},
    {DType::ULongLong3,   "ulonglong3",     "ulonglong3",     DType::UInt64, 3, 8, 8,  K::UnsignedInt},
    {DType::ULongLong4,   "ulonglong4",     "ulonglong4_16a", DType::UInt64, 4, 8, 16, K::UnsignedInt},
    {DType::ULongLong4A32,"ulonglong4_32a", "ulonglong4_32a", DType::UInt64, 4, 8, 32, K::UnsignedInt},
    {DType::Float1,     "float1",      "float1",      DType::Float32, 1, 4, 4,  K::Float},
    {DType::Double1,    "double1",     "double1",     DType::Float64, 1, 8, 8,  K::Float},
    {DType::Double3,    "double3",     "double3",     DType::Float64, 3, 8, 8,  K::Float},
    {DType::Double4,    "double4",     "double4_16a", DType::Float64, 4, 8, 16, K::Float},
    {DType::Double4A32, "double4_32a", "double4_32a", DType::Float64, 4, 8, 32, K::Float},
    {DType::Half2,      "half2",       "__half2",     DType::Float16, 2, 2, 4,  K::Half},
    {DType::BFloat162,  "bfloat162",   "__nv_bfloat162", DType::BFloat16, 2, 2, 4, K::BFloat},
}};
// clang-format on

const QHash<QString, DType> &cudaAliases()
{
    static const QHash<QString, DType> aliases = [] {
        QHash<QString, DType> h;
        for (const DTypeInfo &i : kTable) {
            h.insert(QString::fromLatin1(i.name), i.type);
            h.insert(QString::fromLatin1(i.cudaName), i.type);
        }
        const auto add = [&h](const char *name, DType t) { h.insert(QString::fromLatin1(name), t); };
        add("char", DType::Int8);
        add("int8_t", DType::Int8);
        add("uint8_t", DType::UInt8);
        add("uchar", DType::UInt8);
        add("short int", DType::Int16);
        add("signed short", DType::Int16);
        add("int16_t", DType::Int16);
        add("unsigned short int", DType::UInt16);
        add("ushort", DType::UInt16);
        add("uint16_t", DType::UInt16);
        add("signed int", DType::Int32);
        add("signed", DType::Int32);
        add("int32_t", DType::Int32);
        add("unsigned", DType::UInt32);
        add("uint", DType::UInt32);
        add("uint32_t", DType::UInt32);
        add("long long int", DType::Int64);
        add("signed long long", DType::Int64);
        add("int64_t", DType::Int64);
        add("long", DType::Int64); // LP64: the only data model NVRTC targets on Linux
        add("long int", DType::Int64);
        add("unsigned long", DType::UInt64);
        add("unsigned long int", DType::UInt64);
        add("unsigned long long int", DType::UInt64);
        add("uint64_t", DType::UInt64);
        add("size_t", DType::UInt64);
        add("half", DType::Float16);
        add("__nv_half", DType::Float16);
        add("nv_bfloat16", DType::BFloat16);
        add("__bf16", DType::BFloat16);
        // LP64: long is long long, so the long vectors are the longlong ones.
        add("long1", DType::LongLong1);
        add("long2", DType::LongLong2);
        add("long3", DType::LongLong3);
        add("long4", DType::LongLong4);
        add("long4_16a", DType::LongLong4);
        add("long4_32a", DType::LongLong4A32);
        add("ulong1", DType::ULongLong1);
        add("ulong2", DType::ULongLong2);
        add("ulong3", DType::ULongLong3);
        add("ulong4", DType::ULongLong4);
        add("ulong4_16a", DType::ULongLong4);
        add("ulong4_32a", DType::ULongLong4A32);
        add("double4_16a", DType::Double4);
        add("half2", DType::Half2);
        add("__nv_half2", DType::Half2);
        add("nv_bfloat162", DType::BFloat162);
        add("__nv_bfloat162", DType::BFloat162);
        return h;
    }();
    return aliases;
}

template<typename T> void storeInt(double v, void *dst)
{
    T out;
    if (std::isnan(v)) {
        out = 0;
    } else if (v <= static_cast<double>(std::numeric_limits<T>::min())) {
        out = std::numeric_limits<T>::min();
    } else if (v >= static_cast<double>(std::numeric_limits<T>::max())) {
        out = std::numeric_limits<T>::max();
    } else {
        out = static_cast<T>(std::nearbyint(v));
    }
    std::memcpy(dst, &out, sizeof out);
}

template<typename T> double loadAs(const void *src)
{
    T v;
    std::memcpy(&v, src, sizeof v);
    return static_cast<double>(v);
}
// The table is indexed by DType, so its rows must be in enum order.
constexpr bool tableInEnumOrder()
{
    for (std::size_t i = 0; i < kTable.size(); ++i) {
        if (static_cast<std::size_t>(kTable[i].type) != i) {
            return false;
        }
    }
    return true;
}
static_assert(tableInEnumOrder(), "kTable rows must follow the DType enum");
} // namespace

const DTypeInfo &dtypeInfo(DType type)
{
    return kTable[static_cast<std::size_t>(type)];
}

std::optional<DType> dtypeFromName(const QString &name)
{
    const auto &h = cudaAliases();
    const auto it = h.constFind(name.trimmed());
    if (it == h.constEnd()) {
        return std::nullopt;
    }
    return *it;
}

QStringList dtypeNames()
{
    QStringList names;
    for (const DTypeInfo &i : kTable) {
        names << QString::fromLatin1(i.name);
    }
    return names;
}

QString dtypeNamesText()
{
    return QStringLiteral("int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, bfloat16, float32, "
                          "float64, and CUDA's vector types char1..char4, uchar1..uchar4, short1..short4, "
                          "ushort1..ushort4, int1..int4, uint1..uint4, longlong1..longlong4 (or long1..long4), "
                          "ulonglong1..ulonglong4, float1..float4, double1..double4, longlong4_32a, ulonglong4_32a, "
                          "double4_32a, half2, bfloat162");
}

std::optional<DType> dtypeForCudaType(const QString &baseType)
{
    QString t = baseType.simplified();
    t.remove(QStringLiteral("const "));
    t.remove(QStringLiteral("volatile "));
    if (t.startsWith(QStringLiteral("std::"))) {
        t = t.mid(5);
    }
    return dtypeFromName(t);
}

std::uint16_t floatToHalf(float f)
{
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) { // inf or nan
        return static_cast<std::uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
    }
    if (absx >= 0x477ff000u) { // rounds to a value >= 65520: overflow to inf
        return static_cast<std::uint16_t>(sign | 0x7c00u);
    }
    if (absx < 0x38800000u) { // subnormal half (or zero)
        // Scale into the subnormal range with the FPU, which rounds to nearest even.
        float af;
        std::memcpy(&af, &absx, 4);
        const float scaled = af * 16777216.0f; // 2^24: one half-subnormal ulp becomes 1
        return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(scaled)));
    }
    const std::uint32_t mant = absx & 0x7fffffu;
    const std::uint32_t exp = (absx >> 23) - 127 + 15;
    std::uint32_t h = (exp << 10) | (mant >> 13);
    const std::uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) {
        ++h; // may carry into the exponent, which is correct
    }
    return static_cast<std::uint16_t>(sign | h);
}

float halfToFloat(std::uint16_t h)
{
    const std::uint32_t sign = (h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu;
    const std::uint32_t mant = h & 0x3ffu;
    std::uint32_t x;
    if (exp == 0) {
        const float v = static_cast<float>(mant) / 16777216.0f;
        std::memcpy(&x, &v, 4);
        x |= sign;
    } else if (exp == 31) {
        x = sign | 0x7f800000u | (mant << 13);
    } else {
        x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

std::uint16_t floatToBFloat16(float f)
{
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) {
        return static_cast<std::uint16_t>((x >> 16) | 0x40u); // quiet nan
    }
    const std::uint32_t lsb = (x >> 16) & 1u;
    x += 0x7fffu + lsb;
    return static_cast<std::uint16_t>(x >> 16);
}

float bfloat16ToFloat(std::uint16_t b)
{
    const std::uint32_t x = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

void storeComponent(DType c, double v, void *dst)
{
    switch (c) {
    case DType::Int8: storeInt<std::int8_t>(v, dst); return;
    case DType::UInt8: storeInt<std::uint8_t>(v, dst); return;
    case DType::Int16: storeInt<std::int16_t>(v, dst); return;
    case DType::UInt16: storeInt<std::uint16_t>(v, dst); return;
    case DType::Int32: storeInt<std::int32_t>(v, dst); return;
    case DType::UInt32: storeInt<std::uint32_t>(v, dst); return;
    case DType::Int64: storeInt<std::int64_t>(v, dst); return;
    case DType::UInt64: storeInt<std::uint64_t>(v, dst); return;
    case DType::Float16: {
        const std::uint16_t h = floatToHalf(static_cast<float>(v));
        std::memcpy(dst, &h, 2);
        return;
    }
    case DType::BFloat16: {
        const std::uint16_t b = floatToBFloat16(static_cast<float>(v));
        std::memcpy(dst, &b, 2);
        return;
    }
    case DType::Float32: {
        const float f = static_cast<float>(v);
        std::memcpy(dst, &f, 4);
        return;
    }
    case DType::Float64: std::memcpy(dst, &v, 8); return;
    default: storeComponent(dtypeInfo(c).component, v, dst); return;
    }
}

double loadComponent(DType c, const void *src)
{
    switch (c) {
    case DType::Int8: return loadAs<std::int8_t>(src);
    case DType::UInt8: return loadAs<std::uint8_t>(src);
    case DType::Int16: return loadAs<std::int16_t>(src);
    case DType::UInt16: return loadAs<std::uint16_t>(src);
    case DType::Int32: return loadAs<std::int32_t>(src);
    case DType::UInt32: return loadAs<std::uint32_t>(src);
    case DType::Int64: return loadAs<std::int64_t>(src);
    case DType::UInt64: return loadAs<std::uint64_t>(src);
    case DType::Float16: {
        std::uint16_t h;
        std::memcpy(&h, src, 2);
        return halfToFloat(h);
    }
    case DType::BFloat16: {
        std::uint16_t b;
        std::memcpy(&b, src, 2);
        return bfloat16ToFloat(b);
    }
    case DType::Float32: return loadAs<float>(src);
    case DType::Float64: return loadAs<double>(src);
    default: return loadComponent(dtypeInfo(c).component, src);
    }
}

} // namespace Kp
