#include "projectcli.h"
#include "run/runjson.h"

#include "cliutil.h"
#include "compile/compiler.h"
#include "compile/sandbox.h"
#include "core/printable.h"
#include "core/safefile.h"
#include "project/projectio.h"

#include <QFileInfo>
#include <QJsonArray>

namespace Kp::Cli {

Result<Project> loadProjectArgument(const QString &path, PathScope scope)
{
    return loadProject(path, scope);
}

Status requireCompilerSandbox(const QString &command, const QString &what)
{
    const Sandbox::Availability sandbox = Sandbox::availability();
    if (sandbox.sandboxed) {
        return Unit{};
    }
    return Error{command,
                 Error::Code::NoCompiler,
                 {},
                 QStringLiteral("%1 only in the compiler sandbox, and here it is %2; give --no-sandbox to compile "
                                "without it")
                     .arg(what, sandbox.text)};
}

Result<QString> readSourceArgument(const QString &path)
{
    const Result<QByteArray> bytes = readRegularFile(path, Compiler::kMaxSourceBytes, QStringLiteral("a source file"));
    if (!bytes) {
        Error e = bytes.error();
        e.message = QStringLiteral("--source: ") + e.message;
        return e;
    }
    return QString::fromUtf8(*bytes);
}

std::optional<int> checkOutputOption(const QString &command, const QString &option, const QString &path,
                                     bool stdoutAllowed)
{
    if (path.trimmed().isEmpty()) {
        return usageError(QStringLiteral("%1: %2 needs a file name; '%3' is empty").arg(command, option, path));
    }
    if (path == QLatin1String("-")) {
        if (stdoutAllowed) {
            return std::nullopt;
        }
        return usageError(
            QStringLiteral("%1: %2 writes a file; '-' (standard output) is not one here").arg(command, option));
    }
    const QFileInfo file(path);
    const QFileInfo folder(file.absolutePath());
    QString why;
    if (file.isDir()) {
        why = QStringLiteral("is a folder");
    } else if (!folder.exists()) {
        why = QStringLiteral("its folder %1 does not exist").arg(folder.filePath());
    } else if (!folder.isDir()) {
        why = QStringLiteral("%1 is not a folder").arg(folder.filePath());
    } else if (!file.exists() && !folder.isWritable()) {
        why = QStringLiteral("its folder %1 cannot be written").arg(folder.filePath());
    } else if (file.exists() && !file.isWritable()) {
        why = QStringLiteral("the file cannot be written");
    }
    if (why.isEmpty()) {
        return std::nullopt;
    }
    err() << "kpg: " << printable(QStringLiteral("%1: %2 %3: %4").arg(command, option, path, why)) << "\n";
    err().flush();
    return Exit::CannotWrite;
}

bool writeText(const QString &path, const QByteArray &data, const QString &what)
{
    Status s = Unit{};
    if (path == QLatin1String("-")) {
        out().flush();
        s = writeStandardOutput(data);
    } else {
        s = writeOutput(path, data, what);
    }
    if (!s) {
        err() << "kpg: " << printable(s.error().message) << "\n";
        err().flush();
        return false;
    }
    return true;
}

void printDiagnostics(const CompileResult &compiled)
{
    for (const Diagnostic &d : compiled.diagnostics) {
        err() << d.text() << "\n";
    }
    err().flush();
}

void printChecks(QTextStream &o, const QList<CheckResult> &checks)
{
    for (const CheckResult &c : checks) {
        o << "  " << printable(checkResultText(c), true);
    }
}

QJsonObject compileJson(const CompileResult &compiled)
{
    return compileResultToJson(compiled);
}

int exitCodeFor(const CheckedRun &run)
{
    if (run.error) {
        return Exit::forError(*run.error);
    }
    return run.checksPassed() ? Exit::Ok : Exit::CheckFailed;
}

} // namespace Kp::Cli
