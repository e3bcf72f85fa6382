#include "checkspec.h"

namespace Kp {

QString CheckSpec::target() const
{
    switch (kind) {
    case Kind::Expected: return expected;
    case Kind::Reference: return reference;
    case Kind::Npy: return npy;
    }
    return {};
}

QString CheckSpec::displayName() const
{
    if (!name.isEmpty()) {
        return name;
    }
    return QStringLiteral("%1 == %2").arg(buffer, target());
}

QString CheckSpec::kindName(Kind kind)
{
    switch (kind) {
    case Kind::Expected: return QStringLiteral("expected");
    case Kind::Reference: return QStringLiteral("reference");
    case Kind::Npy: return QStringLiteral("npy");
    }
    return {};
}

quint64 seedForRun(quint64 seed, int run)
{
    // docs/checks.md: run k > 0 replaces every random buffer's seed by seed + k*1000003 (mod 2^64).
    return seed + quint64(run) * 1000003ull;
}

} // namespace Kp
