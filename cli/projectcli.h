#pragma once

// What `kpg run` and `kpg check` share: loading the project, reading
// --source, writing outputs, printing diagnostics and checks, the JSON of a
// run with checks.

#include "check/checkedrun.h"
#include "core/result.h"
#include "project/pathpolicy.h"
#include "project/project.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QTextStream>

#include <optional>

namespace Kp::Cli {

/**
 * Loads the project a command was given. The one place `kpg run` and
 * `kpg check` open a .kpg, so a policy on which paths may be opened goes here.
 */
Result<Project> loadProjectArgument(const QString &path, PathScope scope);

/** Reads a --source file as `kpg compile` reads its file (no FIFO, no device, the source limit). */
Result<QString> readSourceArgument(const QString &path);

/**
 * kpg check and kpg grade compile sources other people wrote: only where
 * NVRTC runs in the compiler sandbox (docs/security.md). The error (code
 * NoCompiler, exit 69) says `what` ("kpg check compiles sources",
 * "grade: submissions are other people's code, and it compiles them"), the
 * sandbox's state and that --no-sandbox goes on anyway; fine where sandboxed.
 */
Status requireCompilerSandbox(const QString &command, const QString &what);

/**
 * Writes an output: "-" is standard output, anything else goes through
 * core/safefile (atomic for a regular file, in place for /dev/null or a
 * FIFO, every write checked). Prints the error; false when it failed.
 */
bool writeText(const QString &path, const QByteArray &data, const QString &what);

/**
 * An output option's value, checked before any work starts: not empty, its
 * folder exists, is a folder and may be written, and the name is not a
 * folder itself. "-" (standard output) passes where stdoutAllowed. Prints
 * "kpg: COMMAND: OPTION ..." and returns the exit code to end with (64 for an
 * empty name, 74 for a folder that cannot be written), or nothing when fine.
 * Outputs follow symbolic links (docs/security.md).
 */
std::optional<int> checkOutputOption(const QString &command, const QString &option, const QString &path,
                                     bool stdoutAllowed = true);

/** "file:line:col: error: message" for every diagnostic, on stderr. */
void printDiagnostics(const CompileResult &compiled);

/** The checks' text forms, indented by two spaces. */
void printChecks(QTextStream &o, const QList<CheckResult> &checks);

/** The compile as JSON: ok, arch, versions, time, cache, and the diagnostics. */
QJsonObject compileJson(const CompileResult &compiled);

/** The exit code of a run with checks: its error's, else 1 when a check failed, else 0. */
int exitCodeFor(const CheckedRun &run);

} // namespace Kp::Cli
