// kpg export: a project as the host program a user would write, for PyCUDA,
// CuPy, cuda-python or CUDA C++ (docs/export.md).

#include "check/checkedrun.h"
#include "cliutil.h"
#include "compile/compiler.h"
#include "export/exporter.h"
#include "projectcli.h"
#include "run/projectcompile.h"
#include "run/runner.h"

#include <QDir>
#include <QFileInfo>

namespace Kp::Cli {

namespace {

/**
 * What the export takes from a compile of the project's source with NVRTC:
 * the symbols the kernels are lowered to, for PyCUDA (which looks C++
 * kernels up by their mangled names), and the layouts of the structs passed
 * by value. Empty, with a warning or the reason in *layoutError, when the
 * project does not compile here: the export then refuses what needs them.
 */
QHash<QString, QString> compiledInfo(const Project &project, Compiler &compiler, QHash<QString, StructLayout> *layouts,
                                     QString *layoutError, QByteArray *ptx = nullptr)
{
    QHash<QString, QString> names;
    const Result<CompileResult> compiled = compiler.compile(compileRequestFor(project));
    if (!compiled) {
        err() << "kpg: export: cannot compile to find the kernels' C++ names and struct layouts: "
              << compiled.error().message << "\n";
        *layoutError = compiled.error().message;
        return names;
    }
    if (!compiled->ok) {
        printDiagnostics(*compiled);
        *layoutError = QStringLiteral("the source does not compile");
        return names;
    }
    *layouts = compiled->layouts;
    *layoutError = compiled->layoutError;
    if (ptx) {
        *ptx = compiled->ptx;
    }
    return loweredNamesOf(*compiled);
}

} // namespace

int exportCommand(const QStringList &args)
{
    QString projectPath;
    QString targetName;
    QString outDir;
    for (int i = 0; i < args.size(); ++i) {
        const QString &a = args[i];
        const bool hasValue = i + 1 < args.size();
        if (a == QLatin1String("--to")) {
            if (!hasValue) {
                return usageError(QStringLiteral("export: --to needs a target: %1")
                                      .arg(exportTargetNames().join(QStringLiteral(", "))));
            }
            targetName = args[++i];
        } else if (a == QLatin1String("-o") || a == QLatin1String("--output")) {
            if (!hasValue) {
                return usageError(QStringLiteral("export: %1 needs a folder").arg(a));
            }
            outDir = args[++i];
        } else if (a.startsWith(QLatin1Char('-'))) {
            return usageError(QStringLiteral("export: unknown option '%1'").arg(a));
        } else if (projectPath.isEmpty()) {
            projectPath = a;
        } else {
            return usageError(QStringLiteral("export: one project only, got '%1' and '%2'").arg(projectPath, a));
        }
    }
    if (projectPath.isEmpty()) {
        return usageError(QStringLiteral("export: no project given (kpg export PROJECT.kpg --to TARGET [-o OUT])"));
    }
    if (targetName.isEmpty()) {
        return usageError(
            QStringLiteral("export: --to is required: %1").arg(exportTargetNames().join(QStringLiteral(", "))));
    }
    const std::optional<ExportTarget> target = exportTargetFromName(targetName);
    if (!target) {
        return usageError(QStringLiteral("export: unknown target '%1' (targets: %2)")
                              .arg(targetName, exportTargetNames().join(QStringLiteral(", "))));
    }
    Result<Project> project = loadProjectArgument(projectPath, PathScope::Anywhere);
    if (!project) {
        err() << "kpg: " << project.error().message << "\n";
        return Exit::BadInput;
    }
    if (outDir.isEmpty()) {
        outDir = QFileInfo(projectPath).completeBaseName() + QLatin1Char('-') + targetName;
    }

    ExportOptions options;
    options.target = *target;
    const bool ownReference = project->reference && !project->reference->sourceFile.isEmpty();
    const bool fillsVariables = fillsDeviceVariables(*project);
    if (*target == ExportTarget::PyCuda || takesStructByValue(project->sourceText) ||
        (ownReference && takesStructByValue(project->reference->sourceText)) || fillsVariables) {
        Compiler compiler;
        options.loweredNames = compiledInfo(*project, compiler, &options.layouts, &options.layoutError, &options.ptx);
        if (ownReference) {
            Project ref = referenceProjectFor(*project);
            options.referenceLoweredNames = compiledInfo(ref, compiler, &options.referenceLayouts,
                                                         &options.referenceLayoutError, &options.referencePtx);
        }
    }
    const Result<ExportResult> result = exportProject(*project, options);
    if (!result) {
        err() << "kpg: export: " << result.error().message << "\n";
        return Exit::BadInput;
    }
    if (Status s = writeExport(*result, outDir); !s) {
        err() << "kpg: export: " << s.error().message << "\n";
        return Exit::CannotWrite;
    }
    out() << "exported " << QFileInfo(projectPath).fileName() << " for " << targetName << " to "
          << QDir(outDir).filePath(result->program) << " (" << result->files.size() << " files)\n";
    for (const QString &n : result->notes) {
        out() << "  note: " << n << "\n";
    }
    out().flush();
    return Exit::Ok;
}

} // namespace Kp::Cli
