#include "projectcompile.h"

#include "run/runner.h"

#include <QFileInfo>

namespace Kp {

CompileRequest compileRequestFor(const Project &project, int ccMajor, int ccMinor)
{
    CompileRequest req;
    req.source = project.sourceText;
    // Diagnostics name this file: the kernel's own, or for an inline source
    // the project's name ("p.kpg" -> "p.cu").
    req.fileName = !project.sourceFile.isEmpty() ? QFileInfo(project.sourceFile).fileName()
                   : !project.path.isEmpty()     ? QFileInfo(project.path).completeBaseName() + QStringLiteral(".cu")
                                                 : QStringLiteral("kernel.cu");
    // NVRTC reads headers from real folders only: a preset inside the program
    // (":/presets/...") or an unsaved project has none.
    if (!project.path.isEmpty() && !project.path.startsWith(QLatin1Char(':'))) {
        req.projectDir = project.dir();
    }
    req.options = compileOptionsFor(project);
    req.deviceCcMajor = ccMajor;
    req.deviceCcMinor = ccMinor;
    return req;
}

} // namespace Kp
