#include "memorycli.h"

#include "core/printable.h"
#include "exitcodes.h"
#include "run/guardzones.h"
#include "run/runjson.h"

#include <QFileInfo>
#include <QHash>
#include <QJsonArray>

namespace Kp::Cli {

namespace {
/** Findings printed per kind unless --all-findings. */
constexpr int kFirstN = 10;
} // namespace

bool SanitizeArgs::take(const QStringList &args, qsizetype &i, const QString &command, QString *usage)
{
    const QString &s = args[i];
    if (s == QLatin1String("--sanitize")) {
        if (i + 1 >= args.size()) {
            *usage =
                QStringLiteral("%1: --sanitize needs a tool: memcheck, racecheck, initcheck or synccheck").arg(command);
            return true;
        }
        const Result<Sanitizer::Tool> tool = Sanitizer::parseTool(args[++i]);
        if (!tool) {
            *usage = command + QStringLiteral(": ") + tool.error().message;
            return true;
        }
        if (!options) {
            options = SanitizeOptions{};
        }
        options->tool = *tool;
        return true;
    }
    if (s == QLatin1String("--hazards")) {
        if (!options) {
            options = SanitizeOptions{};
            options->tool = Sanitizer::Tool::Racecheck;
        }
        options->hazards = true;
        return true;
    }
    if (s == QLatin1String("--all-findings")) {
        allFindings = true;
        return true;
    }
    return false;
}

void printGuards(QTextStream &o, const RunResult &r)
{
    if (!r.guards) {
        return;
    }
    if (r.guardViolations.isEmpty()) {
        return; // clean: the JSON says what checking cost
    }
    o << "  memory: " << r.guardViolations.size() << " write" << (r.guardViolations.size() == 1 ? "" : "s")
      << " outside a buffer (guard zones of " << Guard::kGuardBytes << " bytes):\n";
    for (const GuardViolation &v : r.guardViolations) {
        o << "    " << printable(v.message()) << "\n";
    }
}

void printSanitizer(QTextStream &o, const SanitizedRun &s, bool all)
{
    if (s.reportError) {
        o << "  compute-sanitizer: " << printable(s.reportError->message) << "\n";
        return;
    }
    if (!s.report) {
        return;
    }
    const Sanitizer::Report &rep = *s.report;
    if (rep.findings.isEmpty()) {
        o << "  compute-sanitizer: no findings\n";
        return;
    }
    const QHash<QString, int> counts = rep.counts();
    QStringList parts;
    for (auto it = counts.cbegin(); it != counts.cend(); ++it) {
        parts << QStringLiteral("%1 %2").arg(it.value()).arg(it.key());
    }
    parts.sort();
    o << "  compute-sanitizer: " << rep.findings.size() << " finding" << (rep.findings.size() == 1 ? "" : "s") << " ("
      << parts.join(QStringLiteral(", ")) << ")\n";
    QHash<QString, int> shown;
    for (const Sanitizer::Finding &f : rep.findings) {
        const QString kind = Sanitizer::kindName(f.kind);
        if (!all && shown[kind]++ >= kFirstN) {
            continue;
        }
        const QString file = QFileInfo(f.where.path).fileName();
        o << "    " << printable(file.isEmpty() ? QStringLiteral("?") : file) << ":" << f.where.line << ": "
          << printable(f.summary()) << "\n";
    }
    for (auto it = counts.cbegin(); it != counts.cend(); ++it) {
        if (!all && it.value() > kFirstN) {
            o << "    ... and " << it.value() - kFirstN << " more " << it.key() << " (--all-findings shows them)\n";
        }
    }
}

QJsonObject sanitizerJson(const SanitizedRun &s, Sanitizer::Tool tool)
{
    QJsonObject o;
    if (s.report) {
        o = s.report->toJson(tool);
    } else {
        o.insert(QStringLiteral("tool"), Sanitizer::toolName(tool));
        o.insert(QStringLiteral("clean"), QJsonValue());
        o.insert(QStringLiteral("findings"), QJsonArray());
    }
    o.insert(QStringLiteral("program"), s.program);
    o.insert(QStringLiteral("error"), s.reportError ? QJsonValue(s.reportError->message) : QJsonValue());
    return o;
}

int sanitizedExitCode(const SanitizedRun &s, int runCode)
{
    if (s.report && !s.report->findings.isEmpty()) {
        return Exit::CheckFailed;
    }
    if (s.reportError && runCode == Exit::Ok) {
        return Exit::forError(*s.reportError);
    }
    return runCode;
}

} // namespace Kp::Cli
