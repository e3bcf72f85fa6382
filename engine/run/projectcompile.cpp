#include "projectcompile.h"

#include "run/runner.h"

#include <QDir>
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
        if (!project.sourceFile.isEmpty()) {
            req.sourcePath = QDir::cleanPath(QDir(req.projectDir).absoluteFilePath(project.sourceFile));
        }
    }
    req.options = compileOptionsFor(project);
    // docs/kpg-project.md: relative includeDirs are relative to the project's
    // folder, not to wherever kpg or the GUI was started.
    if (!req.projectDir.isEmpty()) {
        const QDir base(req.projectDir);
        for (QString &d : req.options.includeDirs) {
            if (QDir::isRelativePath(d)) {
                d = QDir::cleanPath(base.absoluteFilePath(d));
            }
        }
    }
    req.deviceCcMajor = ccMajor;
    req.deviceCcMinor = ccMinor;
    return req;
}

} // namespace Kp
