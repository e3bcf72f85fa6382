#pragma once

#include <QList>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>

namespace Kp {

/** The element types a buffer can hold: scalars and CUDA's vector types. */
enum class DType {
    Int8,
    UInt8,
    Int16,
    UInt16,
    Int32,
    UInt32,
    Int64,
    UInt64,
    Float16,
    BFloat16,
    Float32,
    Float64,
    Char4,
    UChar4,
    Short2,
    Int2,
    Int4,
    Float2,
    Float3,
    Float4,
    Double2,
    // The rest of CUDA's vector family (vector_types.h, cuda_fp16.h, cuda_bf16.h).
    Char1,
    Char2,
    Char3,
    UChar1,
    UChar2,
    UChar3,
    Short1,
    Short3,
    Short4,
    UShort1,
    UShort2,
    UShort3,
    UShort4,
    Int1,
    Int3,
    UInt1,
    UInt2,
    UInt3,
    UInt4,
    LongLong1, ///< also long1 (LP64)
    LongLong2,
    LongLong3,
    LongLong4, ///< align 16, as the deprecated longlong4 and longlong4_16a
    LongLong4A32,
    ULongLong1,
    ULongLong2,
    ULongLong3,
    ULongLong4,
    ULongLong4A32,
    Float1,
    Double1,
    Double3,
    Double4, ///< align 16, as the deprecated double4 and double4_16a
    Double4A32,
    Half2,
    BFloat162,
};

/** How many dtypes there are: DType values run from 0 to kDTypeCount - 1. */
constexpr int kDTypeCount = static_cast<int>(DType::BFloat162) + 1;

/** The scalar a component is made of. */
enum class ScalarKind { SignedInt, UnsignedInt, Float, Half, BFloat };

struct DTypeInfo
{
    DType type;
    const char *name;     ///< project/JSON name: "float32", "uchar4"
    const char *cudaName; ///< the CUDA C type: "float", "uchar4", "__half"
    DType component;      ///< the scalar of each component (itself for scalars)
    int components;       ///< 1 for scalars, 2..4 for vectors
    int componentBytes;
    int alignment; ///< CUDA's alignment of the whole element, as vector_types.h declares it (float3: 4, float4: 16)
    ScalarKind kind;

    int elementBytes() const { return components * componentBytes; }
};

/** Facts about a dtype. */
const DTypeInfo &dtypeInfo(DType type);
/** "float32" -> Float32. Also accepts the CUDA spelling ("float", "uchar4", "__half"). */
std::optional<DType> dtypeFromName(const QString &name);
/** All JSON names, in enum order. */
QStringList dtypeNames();
/** Every dtype for messages, the vector family in ranges: "int8, ..., float64 and the vector types char1..char4, ...".
 */
QString dtypeNamesText();
/** Short form. */
inline QString dtypeName(DType t)
{
    return QString::fromLatin1(dtypeInfo(t).name);
}

/**
 * The dtype a kernel's pointee or scalar type corresponds to, from the
 * normalised base type the signature scanner gives ("float", "unsigned int",
 * "uint32_t", "__nv_bfloat16", "float4"). Empty for void, structs and
 * anything unknown.
 */
std::optional<DType> dtypeForCudaType(const QString &baseType);

// IEEE half and bfloat16 conversions (round to nearest even), host side.
std::uint16_t floatToHalf(float f);
float halfToFloat(std::uint16_t h);
std::uint16_t floatToBFloat16(float f);
float bfloat16ToFloat(std::uint16_t b);

/**
 * Writes value, converted to the component type of t (saturating integers,
 * rounding floats to nearest), at dst (which must hold componentBytes).
 */
void storeComponent(DType componentType, double value, void *dst);
/** Reads one component as a double. */
double loadComponent(DType componentType, const void *src);

} // namespace Kp
