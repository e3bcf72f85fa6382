#pragma once

#include "buffers/dtype.h"
#include "core/result.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>
#include <QVariantMap>

namespace Kp {

/**
 * A struct definition as a light scanner reads it from the source: its
 * data members in order, before any compile. The scanner only decides which
 * members there are; where they are is left to the compiler (see
 * layoutProbeSource()).
 */
struct StructDecl
{
    QString name; ///< unqualified
    struct Member
    {
        QString type; ///< normalised, cv dropped: "float", "Inner", "float *"
        QString name;
        bool isArray = false; ///< declared with [N] (any number of dimensions; flattened)
    };
    QList<Member> members;
    QString unsupported; ///< why a value of it cannot be written (a bit-field, an anonymous union); empty if it can
};

/** The struct and class definitions in source (comments, strings and preprocessor lines skipped). */
QList<StructDecl> findStructs(const QString &source);

/** One data member with the place the compiler gave it. */
struct StructField
{
    QString name;
    QString type;      ///< as StructDecl::Member::type
    qint64 offset = 0; ///< bytes from the start of the struct
    qint64 bytes = 0;  ///< of the whole member (every array element)
    qint64 count = 1;  ///< array elements (1 for a plain member)

    bool operator==(const StructField &) const = default;
};

/** A struct's layout as compiled: sizeof, alignof and offsetof of every member. */
struct StructLayout
{
    QString type; ///< as the kernel parameter names it: "Params", "ns::Params"
    qint64 size = 0;
    qint64 align = 0;
    QList<StructField> fields;
    QString unsupported; ///< as StructDecl::unsupported

    QVariantMap toVariant() const;
    static StructLayout fromVariant(const QVariantMap &map);
    bool operator==(const StructLayout &) const = default;
};

/** One scalar slot of a struct value, in declaration order: "in.d", "arr[2]", "v.y". */
struct StructLeaf
{
    QString path;
    qint64 offset = 0;
    DType component = DType::Int32; ///< bool is stored as uint8
    bool isBool = false;
    bool isPointer = false; ///< only 0 (null) can be written to it
};

/** The name of the probe's array in the PTX. */
inline constexpr const char *kLayoutProbeSymbol = "__kpg_layout_probe";

/**
 * The source of the probe unit for the struct types `types` (as kernel
 * parameters name them): `source`, then one initialised `__device__` array
 * of sizeof, alignof and, per member of every struct reachable from them,
 * offsetof, sizeof and the element count. Compiling it with the same options
 * as the source and reading the array back from the PTX (readLayoutProbe())
 * gives the layouts the compiler chose, without a GPU. `plan` receives what
 * readLayoutProbe() needs to decode it; types the scanner does not find
 * (a template, a typedef of a built-in) are left out of it.
 */
QString layoutProbeSource(const QString &source, const QStringList &types, QVariantMap *plan);

/** Decodes the probe's array from the PTX of layoutProbeSource()'s unit: one layout per probed type and nested struct.
 */
Result<QHash<QString, StructLayout>> readLayoutProbe(const QByteArray &ptx, const QVariantMap &plan);

/**
 * The scalar slots of a value of `type`, nested structs and arrays expanded,
 * in declaration order. Fails, naming the member, when a member's type is
 * neither a dtype, bool, a pointer nor a struct in `layouts`.
 */
Result<QList<StructLeaf>> structLeaves(const QString &type, const QHash<QString, StructLayout> &layouts);

/**
 * The bytes of a struct value from its leaf values in declaration order
 * (layout.size bytes, padding zero). values must have one number per leaf.
 */
QByteArray packStruct(const StructLayout &layout, const QList<StructLeaf> &leaves, const QList<double> &values);

/**
 * Parses a braced value as the project writes aggregates: "float2 {1, 2}",
 * "{1.5, {2, 3}, 4}", "Params{1, 2}" (a leading type name is checked against
 * `expectedType` when given). Nested braces are flattened in order. Numbers
 * only (with an optional sign, decimal point and exponent), plus `true`,
 * `false`, `NULL` and `nullptr` (0).
 */
Result<QList<double>> parseBracedValues(const QString &text, const QString &expectedType, const QString &path);

} // namespace Kp
