#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace Kp {

struct LaunchStep;

/**
 * How close a floating-point element must be: it passes when
 * |got - expected| <= abs + rel * |expected|, or when got and expected
 * (rounded to the buffer's dtype) are at most ulp units in the last place
 * apart. A tolerance written in a project has 0 for every field it leaves
 * out; defaultTolerance() gives the per-dtype defaults used without one.
 */
struct CheckTolerance
{
    double abs = 0;
    double rel = 0;
    qint64 ulp = 0;

    bool operator==(const CheckTolerance &) const = default;
};

/**
 * A box of elements, begin inclusive and end exclusive, in coordinate order
 * [x, y, z] (x the last, fastest axis of the shape, as in expression inits).
 * It has as many items as the buffer's shape has axes.
 */
struct CheckRegion
{
    QList<qint64> begin;
    QList<qint64> end;

    bool operator==(const CheckRegion &) const = default;
};

/**
 * One check of a .kpg project (docs/checks.md): a buffer after the run
 * compared element by element with an expression, a buffer of the reference
 * run, or a .npy file; compared as a multiset or a set with another buffer;
 * every value within bounds; or the device printf output of the run. A plain
 * value.
 */
struct CheckSpec
{
    enum class Kind {
        Expected,    ///< "expected": an expression per element
        Reference,   ///< "reference": a buffer after the reference run
        Npy,         ///< "npy": a file beside the project
        Permutation, ///< "permutation": the same values, each as often, as another buffer (any order)
        Set,         ///< "set": the same distinct values as another buffer (any order, any count)
        Range,       ///< "range": every value within [rangeMin, rangeMax]
        Printed,     ///< "printed": the run's device printf output matches a pattern or equals a text
    };
    QString name;   ///< as written; empty when the project leaves it out (see displayName())
    QString buffer; ///< empty for Printed, which checks no buffer
    Kind kind = Kind::Expected;
    QString expected;                ///< Expected
    QString reference;               ///< Reference: the buffer's name in the reference run
    QString npy;                     ///< Npy: relative to the project's folder
    QString other;                   ///< Permutation, Set: the buffer compared with
    bool otherFromReference = false; ///< Permutation, Set: other after the reference run, else its initial contents
    std::optional<double> rangeMin;  ///< Range: inclusive; unset: no lower bound
    std::optional<double> rangeMax;  ///< Range: inclusive; unset: no upper bound
    QString printed;                 ///< Printed: the pattern or the text
    bool printedIsPattern = false;   ///< Printed: "matches" (a regular expression) rather than "equals"
    std::optional<CheckTolerance> tolerance;
    std::optional<CheckRegion> region;
    int seeds = 1;       ///< runs with other seeds for the random buffers (run k: seed + k*1000003)
    bool nan = false;    ///< NaN passes where the expected value is NaN too
    QJsonObject unknown; ///< keys this version does not know, kept on save

    /** The name, or "<buffer> == <expected|reference|npy>" when none is written. */
    QString displayName() const;
    /** The expected/reference/npy text. */
    QString target() const;
    static QString kindName(Kind kind);
    /** Whether the check reads a buffer of the reference run (the run is then due). */
    bool needsReference() const { return kind == Kind::Reference || (otherFromReference && !other.isEmpty()); }
    /** Permutation and Set compare whole buffers as collections, not element by element. */
    bool isCollection() const { return kind == Kind::Permutation || kind == Kind::Set; }

    bool operator==(const CheckSpec &) const = default;
};

/** The most seed runs a check may ask for. */
constexpr int kMaxCheckSeeds = 100;

/** The seed of a random buffer in seed run k (run 0 keeps the project's). */
quint64 seedForRun(quint64 seed, int run);

} // namespace Kp
