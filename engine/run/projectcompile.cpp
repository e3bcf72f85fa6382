#include "projectcompile.h"

#include "run/runner.h"

#include <QFileInfo>

namespace Kp {

CompileRequest compileRequestFor(const Project &project, int ccMajor, int ccMinor)
{
    CompileRequest req;
    req.source = project.sourceText;
    req.fileName =
        project.sourceFile.isEmpty() ? QStringLiteral("kernel.cu") : QFileInfo(project.sourceFile).fileName();
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
