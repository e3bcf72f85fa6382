// libFuzzer target: the .kpg reader, parseProject() (engine/project/projectio.h).
// The input is a .kpg file. No folder is given, so the reader opens no file
// (the kernel source stays unread). What parses is written back with
// serializeProject() and read again, and the documented promise is checked:
// serializing what parseProject() made of that output gives the same bytes.

#include "project/projectio.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray json(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const Kp::Result<Kp::Project> project = Kp::parseProject(json);
    if (!project) {
        return 0;
    }
    const QByteArray written = Kp::serializeProject(*project);
    const Kp::Result<Kp::Project> again = Kp::parseProject(written);
    if (!again) {
        std::fprintf(stderr, "fuzz_project: serializeProject() wrote what parseProject() refuses: %s\n%s\n",
                     qPrintable(again.error().message), written.constData());
        std::abort();
    }
    const QByteArray rewritten = Kp::serializeProject(*again);
    if (rewritten != written) {
        std::fprintf(stderr, "fuzz_project: serializing twice differs:\n--- first\n%s\n--- second\n%s\n",
                     written.constData(), rewritten.constData());
        std::abort();
    }
    return 0;
}
