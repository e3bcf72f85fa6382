#include "projectcli.h"
#include "run/runjson.h"

#include "compile/sandbox.h"

#include "cliutil.h"
#include "compile/compiler.h"
#include "compile/sandbox.h"
#include "core/safefile.h"
#include "project/projectio.h"

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
        err() << "kpg: " << s.error().message << "\n";
        err().flush();
        return false;
    }
    return true;
}

void printDiagnostics(const CompileResult &compiled)
{
    for (const Diagnostic &d : compiled.diagnostics) {
        err() << d.file << ":" << d.line << ":" << d.column << ": " << Diagnostic::severityName(d.severity) << ": "
              << d.message << "\n";
    }
    err().flush();
}

void printChecks(QTextStream &o, const QList<CheckResult> &checks)
{
    for (const CheckResult &c : checks) {
        o << "  " << checkResultText(c);
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
