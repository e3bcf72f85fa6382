#include "checkspec.h"

namespace Kp {

QString CheckSpec::target() const
{
    switch (kind) {
    case Kind::Expected: return expected;
    case Kind::Reference: return reference;
    case Kind::Npy: return npy;
    case Kind::Permutation:
    case Kind::Set: return otherFromReference ? QStringLiteral("reference %1").arg(other) : other;
    case Kind::Range:
        return QStringLiteral("[%1, %2]")
            .arg(rangeMin ? QString::number(*rangeMin, 'g', 17) : QStringLiteral("-inf"),
                 rangeMax ? QString::number(*rangeMax, 'g', 17) : QStringLiteral("inf"));
    case Kind::Printed: return printedIsPattern ? QStringLiteral("/%1/").arg(printed) : printed;
    }
    return {};
}

QString CheckSpec::displayName() const
{
    if (!name.isEmpty()) {
        return name;
    }
    switch (kind) {
    case Kind::Permutation: return QStringLiteral("%1 is a permutation of %2").arg(buffer, target());
    case Kind::Set: return QStringLiteral("%1 has the values of %2").arg(buffer, target());
    case Kind::Range: return QStringLiteral("%1 in %2").arg(buffer, target());
    case Kind::Printed:
        return printedIsPattern ? QStringLiteral("printed matches %1").arg(target())
                                : QStringLiteral("printed == \"%1\"").arg(printed.left(40));
    default: return QStringLiteral("%1 == %2").arg(buffer, target());
    }
}

QString CheckSpec::kindName(Kind kind)
{
    switch (kind) {
    case Kind::Expected: return QStringLiteral("expected");
    case Kind::Reference: return QStringLiteral("reference");
    case Kind::Npy: return QStringLiteral("npy");
    case Kind::Permutation: return QStringLiteral("permutation");
    case Kind::Set: return QStringLiteral("set");
    case Kind::Range: return QStringLiteral("range");
    case Kind::Printed: return QStringLiteral("printed");
    }
    return {};
}

quint64 seedForRun(quint64 seed, int run)
{
    // docs/checks.md: run k > 0 replaces every random buffer's seed by seed + k*1000003 (mod 2^64).
    return seed + quint64(run) * 1000003ull;
}

} // namespace Kp
