// kpg check: runs a project (or a submitted source in its place) and
// evaluates its checks, for students and for grading.

#include "client/engineclient.h"
#include "cliutil.h"
#include "core/printable.h"
#include "memorycli.h"
#include "projectcli.h"
#include "run/runjson.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <optional>

namespace Kp::Cli {

namespace {

struct CheckArgs
{
    QString project;
    QString source;
    QString json;
    int device = 0;
    double timeout = -1;
    bool timing = false;
    bool noSandbox = false;
    SanitizeArgs sanitize;
};

QJsonObject checkJson(const CheckArgs &a, const Project &project, const CheckedRun &c, const QString &sourceName,
                      int exitCode)
{
    QJsonObject doc{{QStringLiteral("project"), project.path.isEmpty() ? a.project : project.path},
                    {QStringLiteral("title"), project.title},
                    {QStringLiteral("source"), sourceName},
                    {QStringLiteral("passed"), exitCode == Exit::Ok},
                    {QStringLiteral("exitCode"), exitCode},
                    {QStringLiteral("device"), c.device ? QJsonValue(c.device->name) : QJsonValue()},
                    {QStringLiteral("seedRuns"), c.seedRuns},
                    {QStringLiteral("checks"), checkResultsToJson(c.checks)},
                    {QStringLiteral("warnings"), QJsonArray::fromStringList(c.warnings)}};
    doc.insert(QStringLiteral("compile"), c.compiled ? QJsonValue(compileJson(*c.compiled)) : QJsonValue());
    doc.insert(QStringLiteral("run"), c.ran ? QJsonValue(runResultToJson(c.run)) : QJsonValue());
    doc.insert(QStringLiteral("error"),
               c.error ? QJsonValue(QJsonObject::fromVariantMap(c.error->toVariant())) : QJsonValue());
    return doc;
}

/** Prints the error and writes the JSON of a check that stopped before anything ran. */
int stop(const CheckArgs &a, const Project &project, const Error &e)
{
    err() << "kpg: " << printable(e.message) << "\n";
    err().flush();
    const int code = Exit::forError(e);
    if (!a.json.isEmpty()) {
        CheckedRun c;
        c.error = e;
        writeText(a.json, QJsonDocument(checkJson(a, project, c, a.source, code)).toJson(QJsonDocument::Indented),
                  QStringLiteral("the JSON result"));
    }
    return code;
}

} // namespace

int checkCommand(const QStringList &args)
{
    CheckArgs a;
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString &s = args[i];
        if (QString usage; a.sanitize.take(args, i, QStringLiteral("check"), &usage)) {
            if (!usage.isEmpty()) {
                return usageError(usage);
            }
        } else if (s == QLatin1String("--timing")) {
            a.timing = true;
        } else if (s == QLatin1String("--no-sandbox")) {
            a.noSandbox = true;
        } else if (s == QLatin1String("--json") || s == QLatin1String("--device") || s == QLatin1String("--timeout") ||
                   s == QLatin1String("--source")) {
            if (i + 1 >= args.size()) {
                return usageError(QStringLiteral("check: %1 needs a value").arg(s));
            }
            const QString v = args[++i];
            bool ok = true;
            if (s == QLatin1String("--json")) {
                if (const std::optional<int> bad = checkOutputOption(QStringLiteral("check"), s, v)) {
                    return *bad;
                }
                a.json = v;
            } else if (s == QLatin1String("--source")) {
                a.source = v;
            } else if (s == QLatin1String("--device")) {
                a.device = v.toInt(&ok);
                if (!ok || a.device < 0) {
                    return usageError(
                        QStringLiteral("check: --device takes a GPU number (0, 1, ...), not '%1'").arg(v));
                }
            } else {
                a.timeout = v.toDouble(&ok);
                if (!ok || !(a.timeout > 0)) {
                    return usageError(
                        QStringLiteral("check: --timeout takes a positive number of seconds, not '%1'").arg(v));
                }
            }
        } else if (s.startsWith(QLatin1Char('-')) && s != QLatin1String("-")) {
            return usageError(QStringLiteral("check: unknown option '%1'").arg(s));
        } else if (a.project.isEmpty()) {
            a.project = s;
        } else {
            return usageError(QStringLiteral("check: one project at a time ('%1' and '%2')").arg(a.project, s));
        }
    }
    if (a.project.isEmpty()) {
        return usageError(QStringLiteral("check: no project given (kpg check PROJECT.kpg [--source FILE.cu])"));
    }

    // A check compiles a source someone else wrote: only where NVRTC cannot
    // read the grader's files, and only from a project that names nothing
    // outside its own folder (docs/security.md), unless told otherwise.
    if (!a.noSandbox) {
        if (Status s = requireCompilerSandbox(QStringLiteral("check"), QStringLiteral("kpg check compiles sources"));
            !s) {
            return stop(a, Project{}, s.error());
        }
    }
    Result<Project> loaded =
        loadProjectArgument(a.project, a.noSandbox ? PathScope::Anywhere : PathScope::ProjectFolder);
    if (!loaded) {
        return stop(a, Project{}, loaded.error());
    }
    Project project = std::move(loaded).value();
    if (project.checks.isEmpty()) {
        Error e{QStringLiteral("check"),
                Error::Code::BadInput,
                {},
                QStringLiteral("%1: the project has no checks, so there is nothing to check (add a \"checks\" "
                               "array; see docs/checks.md)")
                    .arg(a.project)};
        e.path = QStringLiteral("checks");
        return stop(a, project, e);
    }
    CheckedRunOptions options;
    options.device = a.device;
    options.timing = a.timing;
    QString sourceName = project.sourceFile;
    if (!a.source.isEmpty()) {
        const Result<QString> text = readSourceArgument(a.source);
        if (!text) {
            return stop(a, project, text.error());
        }
        options.replacementSource = *text;
        options.replacementFileName = QFileInfo(a.source).fileName();
        sourceName = a.source;
    }
    if (a.timeout > 0) {
        project.killTimeoutSeconds = a.timeout;
    }

    SanitizedRun sanitized;
    if (a.sanitize.options) {
        sanitized = runProjectSanitized(project, options, *a.sanitize.options);
    } else {
        EngineClient engine;
        sanitized.checked = runProjectWithChecks(project, &engine, options);
    }
    const CheckedRun &c = sanitized.checked;
    if (c.compiled && !c.compiled->ok) {
        printDiagnostics(*c.compiled);
    }
    for (const QString &w : c.warnings) {
        err() << "kpg: warning: " << w << "\n";
    }
    QTextStream &o = a.json == QLatin1String("-") ? err() : out();
    const QString title = project.title.isEmpty() ? a.project : project.title;
    if (c.ran) {
        o << printable(title) << ": " << printable(sourceName.isEmpty() ? QStringLiteral("inline source") : sourceName)
          << " on " << c.run.device << "\n";
        if (c.run.timed) {
            o << "  time: median " << QString::number(c.run.stats.medianMs, 'f', 4) << " ms (" << c.run.stats.count
              << " samples)\n";
        }
    }
    for (const StepResult &s : c.run.steps) {
        if (!s.printfOutput.isEmpty()) {
            o << "  printf from " << printable(s.kernel) << ":\n";
            for (const QString &line : s.printfOutput.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
                o << "    | " << printable(line) << "\n"; // a kernel's printf is user data too
            }
        }
    }
    printChecks(o, c.checks);
    if (c.ran) {
        printGuards(o, c.run);
    }
    if (a.sanitize.options) {
        printSanitizer(o, sanitized, a.sanitize.allFindings);
    }
    if (c.error && !c.ran && c.compiled && c.compiled->ok &&
        (c.error->code == Error::Code::NoDriver || c.error->code == Error::Code::NoDevice)) {
        // Everything up to the GPU was done: say so, so a student without one knows the source is fine so far.
        o << printable(sourceName.isEmpty() ? QStringLiteral("the source") : sourceName) << " compiled for "
          << c.compiled->arch << ", and its launches, buffers and " << project.checks.size() << " check"
          << (project.checks.size() == 1 ? "" : "s") << " were checked; running them needs a GPU\n";
    }
    if (c.error) {
        err() << "kpg: " << c.error->message << "\n";
    } else {
        int passed = 0;
        for (const CheckResult &r : c.checks) {
            passed += r.passed ? 1 : 0;
        }
        o << passed << " of " << c.checks.size() << " check" << (c.checks.size() == 1 ? "" : "s") << " passed"
          << (c.seedRuns > 1 ? QStringLiteral(" (%1 seed runs)").arg(c.seedRuns) : QString()) << "\n";
    }
    o.flush();
    err().flush();

    int code = exitCodeFor(c);
    if (code == Exit::Ok && c.ran && !c.run.guardViolations.isEmpty()) {
        code = Exit::CheckFailed; // a write outside a buffer fails like a check
    }
    if (a.sanitize.options) {
        code = sanitizedExitCode(sanitized, code);
    }
    QJsonObject doc = checkJson(a, project, c, sourceName, code);
    if (a.sanitize.options) {
        doc.insert(QStringLiteral("sanitizer"), sanitizerJson(sanitized, a.sanitize.options->tool));
    }
    if (!a.json.isEmpty() &&
        !writeText(a.json, QJsonDocument(doc).toJson(QJsonDocument::Indented), QStringLiteral("the JSON result"))) {
        code = code ? code : Exit::CannotWrite;
    }
    return code;
}

} // namespace Kp::Cli
