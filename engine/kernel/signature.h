#pragma once

#include <QList>
#include <QString>
#include <QStringList>
#include <QVariantMap>

namespace Kp {

/** One kernel parameter, as written in the source (after template substitution). */
struct KernelParam
{
    enum class Category {
        Pointer, ///< any T*, the thing a buffer binds to
        Scalar,  ///< built-in arithmetic type: int, float, unsigned long long, ...
        Vector,  ///< float4, uchar4, int2, ...
        Half,    ///< half, __half, __nv_bfloat16 and their 2-wide forms
        Struct,  ///< anything else passed by value (a struct, a template type)
    };

    QString type;     ///< normalised type text: "const float *__restrict__"
    QString name;     ///< empty for an unnamed parameter
    QString baseType; ///< type without cv, restrict and pointers: "float"
    int pointerDepth = 0;
    bool isConst = false; ///< pointee is const (pointers) / value is const (others)
    bool isRestrict = false;
    Category category = Category::Struct;
    QString defaultValue; ///< the default argument as written, comments and spacing dropped ("1.0f", "nullptr"); empty
                          ///< if none

    QVariantMap toVariant() const;
    static KernelParam fromVariant(const QVariantMap &map);
    static QString categoryName(Category c);
};

struct TemplateParam
{
    QString kind;         ///< "typename" or the non-type parameter's type ("int")
    QString name;         ///< "T", "N"
    QString defaultValue; ///< empty when there is none
};

/**
 * A __global__ function found in the source by a light C++ scanner (comments,
 * strings and preprocessor lines are skipped). It does not need NVRTC, so the
 * parameter table fills in even while the kernel does not compile.
 */
struct KernelSignature
{
    QString name;          ///< unqualified name
    QString qualifiedName; ///< with enclosing namespaces: "ns::k"
    int line = 0;          ///< 1-based line of the name
    bool externC = false;
    QList<TemplateParam> templateParams; ///< empty: not a template
    QList<KernelParam> params;
    QStringList paramTokens; ///< internal: raw tokens per parameter, for substitution

    bool isTemplate() const { return !templateParams.isEmpty(); }
};

/** All kernel definitions in source order (declarations without a body are skipped). */
QList<KernelSignature> findKernels(const QString &source);

/**
 * The signature of one template instance, for a name expression such as
 * "matmul<16, float>" (or "ns::matmul<16>"). Returns false with a message if
 * the expression names no template of that name or has too many arguments.
 */
bool instantiate(const KernelSignature &kernel, const QString &nameExpression, KernelSignature *out, QString *why);

/** The kernel a name expression refers to ("k<16>" -> "k"), or empty. */
QString nameExpressionBase(const QString &nameExpression);

} // namespace Kp
