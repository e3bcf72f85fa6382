// libFuzzer target: the NVRTC log parser (engine/compile/logparse.h). The
// input is a compile log: diagnostics with echoed source lines and carets,
// instantiation context, ptxas statistics.

#include "compile/logparse.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QString log = QString::fromUtf8(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    for (const Kp::Diagnostic &d : Kp::parseDiagnostics(log)) {
        if (d.line < 0 || d.column < 0) {
            std::fprintf(stderr, "fuzz_logparse: diagnostic at line %d column %d\n", d.line, d.column);
            std::abort();
        }
        (void)Kp::Diagnostic::fromVariant(d.toVariant());
    }
    (void)Kp::parsePtxasInfo(log);
    return 0;
}
