// libFuzzer target: what `kpg compare` reads, a run result's JSON
// (engine/compare/runfile.h), and the verdict on its samples
// (engine/compare/verdict.h). What parses must be a timed run whose samples
// are numbers >= 0; comparing them with themselves and with their reverse
// must not crash, and a run is never faster or slower than itself.

#include "compare/runfile.h"
#include "compare/verdict.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray json(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const Kp::Result<Kp::RunFile> f = Kp::parseRunFile(json, QStringLiteral("fuzz.json"));
    if (!f) {
        return 0;
    }
    for (const double s : f->samples) {
        if (!(s >= 0)) {
            std::fprintf(stderr, "fuzz_compare: a sample of %g was accepted\n", s);
            std::abort();
        }
    }
    const Kp::Comparison self = Kp::compareSamples(f->samples, f->samples);
    if (self.verdict == Kp::Verdict::Faster || self.verdict == Kp::Verdict::Slower) {
        std::fprintf(stderr, "fuzz_compare: a run is %s than itself: %s\n", qPrintable(Kp::verdictName(self.verdict)),
                     qPrintable(self.reason));
        std::abort();
    }
    QList<double> reversed = f->samples;
    std::reverse(reversed.begin(), reversed.end());
    (void)Kp::compareSamples(f->samples, reversed);
    return 0;
}
