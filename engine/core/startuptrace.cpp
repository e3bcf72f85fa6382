#include "startuptrace.h"

#include <QtGlobal>

#include <cstdio>

namespace Kp {

void startupMark(const char *program, const char *word)
{
    static const bool on = !qEnvironmentVariableIsEmpty("KPG_STARTUP_TRACE");
    if (on) {
        std::fprintf(stderr, "%s: startup: %s\n", program, word);
        std::fflush(stderr);
    }
}

} // namespace Kp
