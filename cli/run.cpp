// kpg run: a project from the command line, for scripts and grading.

#include "buffers/bufferexport.h"
#include "client/engineclient.h"
#include "cliutil.h"
#include "compile/compiler.h"
#include "core/format.h"
#include "core/printable.h"
#include "core/safefile.h"
#include "cuda/deviceinfo.h"
#include "memorycli.h"
#include "project/projectio.h"
#include "projectcli.h"
#include "run/projectcompile.h"
#include "run/runjson.h"
#include "run/runner.h"
#include "run/trace.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <optional>

namespace Kp::Cli {

namespace {

struct RunArgs
{
    QString project;
    QString json;
    QString csv;
    QString saveDir;
    QString source;
    int device = 0;
    double timeout = -1;
    QString trace;
    bool noTiming = false;
    bool confine = false;
    SanitizeArgs sanitize;
    bool graph = false;
};

QString rate(double perSecond, const char *unit)
{
    static const char *prefixes[] = {"", "K", "M", "G", "T", "P"};
    int i = 0;
    while (perSecond >= 1000 && i < 5) {
        perSecond /= 1000;
        ++i;
    }
    return QStringLiteral("%1 %2%3/s").arg(perSecond, 0, 'f', 2).arg(QLatin1String(prefixes[i]), QLatin1String(unit));
}

QString msText(double ms)
{
    return ms < 1 ? QStringLiteral("%1 us").arg(ms * 1000, 0, 'f', 2) : QStringLiteral("%1 ms").arg(ms, 0, 'f', 3);
}

QJsonObject resultJson(const Project &project, const CheckedRun &c)
{
    RunResult r = c.run;
    if (!c.ran || (c.error && !r.error)) {
        // Stopped before the run, or after it (a seed run, the reference): that error is the result's.
        r.error = c.error;
    }
    QJsonObject doc = runResultToJson(r);
    doc.insert(QStringLiteral("project"), project.path);
    doc.insert(QStringLiteral("title"), project.title);
    if (c.compiled) {
        doc.insert(QStringLiteral("compile"), compileJson(*c.compiled));
    }
    doc.insert(QStringLiteral("checks"), checkResultsToJson(c.checks));
    doc.insert(QStringLiteral("checksPassed"), c.checksPassed());
    doc.insert(QStringLiteral("seedRuns"), c.seedRuns);
    return doc;
}

/** Prints the error, writes the JSON (if asked for) of a run that never reached the GPU, and returns the exit code. */
int failEarly(const RunArgs &a, const Project &project, const Error &e,
              const std::optional<CompileResult> &compiled = {})
{
    err() << "kpg: " << printable(e.message) << "\n";
    err().flush();
    if (!a.json.isEmpty()) {
        CheckedRun c;
        c.error = e;
        c.compiled = compiled;
        // The run's own error decides the exit code; a failed write is only reported.
        writeText(a.json, QJsonDocument(resultJson(project, c)).toJson(QJsonDocument::Indented),
                  QStringLiteral("the JSON result"));
    }
    return Exit::forError(e);
}

} // namespace

int runCommand(const QStringList &args)
{
    RunArgs a;
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString &s = args[i];
        const auto value = [&]() -> std::optional<QString> {
            if (i + 1 >= args.size()) {
                return std::nullopt;
            }
            return args[++i];
        };
        if (QString usage; a.sanitize.take(args, i, QStringLiteral("run"), &usage)) {
            if (!usage.isEmpty()) {
                return usageError(usage);
            }
        } else if (s == QLatin1String("--no-timing")) {
            a.noTiming = true;
        } else if (s == QLatin1String("--confine")) {
            a.confine = true;
        } else if (s == QLatin1String("--graph")) {
            a.graph = true;
        } else if (s == QLatin1String("--json") || s == QLatin1String("--csv") ||
                   s == QLatin1String("--save-buffers") || s == QLatin1String("--device") ||
                   s == QLatin1String("--timeout") || s == QLatin1String("--source") || s == QLatin1String("--trace")) {
            const auto v = value();
            if (!v) {
                return usageError(QStringLiteral("run: %1 needs a value").arg(s));
            }
            bool ok = true;
            if (s == QLatin1String("--json") || s == QLatin1String("--csv") || s == QLatin1String("--trace")) {
                if (const std::optional<int> bad = checkOutputOption(QStringLiteral("run"), s, *v)) {
                    return *bad;
                }
            } else if (s == QLatin1String("--save-buffers") && v->trimmed().isEmpty()) {
                return usageError(QStringLiteral("run: --save-buffers needs a folder; '%1' is empty").arg(*v));
            }
            if (s == QLatin1String("--json")) {
                a.json = *v;
            } else if (s == QLatin1String("--csv")) {
                a.csv = *v;
            } else if (s == QLatin1String("--save-buffers")) {
                a.saveDir = *v;
            } else if (s == QLatin1String("--source")) {
                a.source = *v;
            } else if (s == QLatin1String("--trace")) {
                a.trace = *v;
            } else if (s == QLatin1String("--device")) {
                a.device = v->toInt(&ok);
                if (!ok || a.device < 0) {
                    return usageError(QStringLiteral("run: --device takes a GPU number (0, 1, ...), not '%1'").arg(*v));
                }
            } else {
                a.timeout = v->toDouble(&ok);
                if (!ok || !(a.timeout > 0)) {
                    return usageError(
                        QStringLiteral("run: --timeout takes a positive number of seconds, not '%1'").arg(*v));
                }
            }
        } else if (s.startsWith(QLatin1Char('-')) && s != QLatin1String("-")) {
            return usageError(QStringLiteral("run: unknown option '%1'").arg(s));
        } else if (a.project.isEmpty()) {
            a.project = s;
        } else {
            return usageError(QStringLiteral("run: one project at a time ('%1' and '%2')").arg(a.project, s));
        }
    }
    if (a.project.isEmpty()) {
        return usageError(QStringLiteral("run: no project given (kpg run PROJECT.kpg)"));
    }

    Result<Project> loaded = loadProjectArgument(a.project, a.confine ? PathScope::ProjectFolder : PathScope::Anywhere);
    if (!loaded) {
        return failEarly(a, Project{}, loaded.error());
    }
    Project project = std::move(loaded).value();
    CheckedRunOptions options;
    options.device = a.device;
    options.timing = !a.noTiming;
    if (!a.source.isEmpty()) {
        const Result<QString> text = readSourceArgument(a.source);
        if (!text) {
            return failEarly(a, project, text.error());
        }
        options.replacementSource = *text;
        options.replacementFileName = QFileInfo(a.source).fileName();
    }
    if (a.timeout > 0) {
        project.killTimeoutSeconds = a.timeout;
    }
    if (a.graph) {
        project.graph = true;
    }
    if (!a.trace.isEmpty() && a.noTiming) {
        return usageError(QStringLiteral("run: --trace needs the timeline, which is measured with the timing; leave "
                                         "out --no-timing"));
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
    if (!c.ran) {
        for (const QString &w : c.warnings) {
            err() << "kpg: warning: " << w << "\n";
        }
        if (!c.error) {
            return failEarly(
                a, project,
                Error{QStringLiteral("kpg"), Error::Code::Internal, {}, QStringLiteral("the run did not start")},
                c.compiled);
        }
        return failEarly(a, project, *c.error, c.compiled);
    }
    for (const QString &w : c.warnings) {
        err() << "kpg: warning: " << w << "\n";
    }
    const RunResult &r = c.run;

    // Human-readable summary on stdout (unless the JSON goes there).
    QTextStream &o = a.json == QLatin1String("-") ? err() : out();
    o << printable(project.title.isEmpty() ? a.project : project.title) << " on " << printable(r.device) << "\n";
    for (qsizetype i = 0; i < r.steps.size(); ++i) {
        const StepResult &s = r.steps[i];
        const QString on = s.stream.isEmpty() || s.stream == QLatin1String("default")
                               ? QString()
                               : QStringLiteral(" on stream ") + s.stream;
        if (s.kind != QLatin1String("kernel")) {
            o << "  step " << i + 1 << ": " << s.label << on
              << (s.bytes > 0 ? QStringLiteral(" (%1)").arg(formatBytes(s.bytes)) : QString()) << "\n";
            continue;
        }
        o << "  step " << i + 1 << ": " << printable(s.kernel) << printable(on) << " grid " << dim3Text(s.grid)
          << " block " << dim3Text(s.block);
        if (s.sharedBytes) {
            o << " shared " << s.sharedBytes << " B";
        }
        o << "  " << s.limits.numRegs << " regs, occupancy " << QString::number(s.occupancy.ratio * 100, 'f', 0)
          << " % (" << s.occupancy.blocksPerSm << " blocks/SM, limited by " << s.occupancy.limiter << ")\n";
        if (!s.printfOutput.isEmpty()) {
            o << "  printf from step " << i + 1 << ":\n";
            for (const QString &line : s.printfOutput.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
                o << "    | " << printable(line) << "\n"; // a kernel's printf is user data too
            }
            if (s.printfTruncated) {
                o << "    | (output truncated)\n";
            }
        }
    }
    if (r.error) {
        err() << "kpg: run failed: " << r.error->message << "\n";
        if (r.buffersRestored) {
            err() << "kpg: buffers are unchanged from before the run\n";
        }
    } else if (r.timed) {
        o << "  time: median " << msText(r.stats.medianMs) << "  min " << msText(r.stats.minMs) << "  max "
          << msText(r.stats.maxMs) << "  noise " << QString::number(r.stats.noise * 100, 'f', 2) << " %  ("
          << r.stats.count << " " << r.timingMode << " samples"
          << (r.batch > 1 ? QStringLiteral(" of %1 launches").arg(r.batch) : QString()) << ")\n";
        if (!r.timingNote.isEmpty()) {
            o << "        stopped by " << r.stopCriterion << ": " << r.timingNote << "\n";
        }
        if (r.eventOverheadMs > 0) {
            o << "        median less the event pair's own " << msText(r.overheadTakenOffMs() / r.batch)
              << " (an estimate, to compare with a profiler's kernel duration): " << msText(r.medianLessOverheadMs)
              << "\n";
        }
        if (r.bytes > 0) {
            o << "  memory throughput: " << rate(r.bytesPerSecond, "B") << "\n";
        }
        if (r.flops > 0) {
            o << "  compute throughput: " << rate(r.flopsPerSecond, "FLOP") << "\n";
        }
    } else {
        o << "  ran once in " << msText(r.steps.isEmpty() ? 0 : r.steps.first().firstRunMs) << " (not timed)\n";
    }
    if (!r.error && !r.timeline.isEmpty()) {
        const TimelineSummary t = summarizeTimeline(r);
        o << "  timeline: " << t.streams << " stream" << (t.streams == 1 ? "" : "s") << ", total " << msText(t.totalMs)
          << ", the steps add up to " << msText(t.stepsMs) << " (" << QString::number(t.overlap, 'f', 2)
          << "x: " << (t.overlap > 1.05 ? "overlapped" : "nothing overlapped") << ")\n";
    }
    if (!r.error && r.graphReplays > 0) {
        o << "  graph: " << QString::number(r.graphReplayUs, 'f', 1) << " us per replay against "
          << QString::number(r.streamLaunchUs, 'f', 1) << " us launched step by step, each with a sync ("
          << r.graphReplays << " of each, medians; "
          << QString::number(r.graphReplayUs > 0 ? r.streamLaunchUs / r.graphReplayUs : 0, 'f', 2) << "x)\n";
        if (r.graphCompared) {
            o << "         buffers after the last replay "
              << (r.graphDiffers.isEmpty()
                      ? QStringLiteral("equal the run's")
                      : QStringLiteral("differ from the run's: ") + r.graphDiffers.join(QStringLiteral(", ")))
              << "\n";
        }
    }
    for (const QString &w : r.warnings) {
        o << "  warning: " << w << "\n";
    }
    printGuards(o, r);
    if (!r.error && c.error) {
        err() << "kpg: " << c.error->message << "\n";
    }
    if (!c.checks.isEmpty()) {
        o << "  checks" << (c.seedRuns > 1 ? QStringLiteral(" (%1 seed runs)").arg(c.seedRuns) : QString()) << ":\n";
        printChecks(o, c.checks);
    }
    if (a.sanitize.options) {
        printSanitizer(o, sanitized, a.sanitize.allFindings);
    }
    o.flush();
    err().flush();

    int code = exitCodeFor(c);
    if (code == Exit::Ok && !r.guardViolations.isEmpty()) {
        code = Exit::CheckFailed; // a write outside a buffer fails the run as a check would
    }
    QJsonObject doc = resultJson(project, c);
    if (a.sanitize.options) {
        code = sanitizedExitCode(sanitized, code);
        doc.insert(QStringLiteral("sanitizer"), sanitizerJson(sanitized, a.sanitize.options->tool));
    }
    if (!a.json.isEmpty() &&
        !writeText(a.json, QJsonDocument(doc).toJson(QJsonDocument::Indented), QStringLiteral("the JSON result"))) {
        code = code ? code : Exit::CannotWrite;
    }
    if (!a.csv.isEmpty()) {
        QByteArray csv = "sample,ms\n";
        for (qsizetype i = 0; i < r.samplesMs.size(); ++i) {
            csv += QByteArray::number(i) + ',' + QByteArray::number(r.samplesMs[i], 'g', 9) + '\n';
        }
        if (!writeText(a.csv, csv, QStringLiteral("the CSV samples"))) {
            code = code ? code : Exit::CannotWrite;
        }
    }
    if (!a.trace.isEmpty() && !r.error) {
        if (!writeText(a.trace, chromeTraceJson(r, project.title.isEmpty() ? a.project : project.title),
                       QStringLiteral("the trace"))) {
            code = code ? code : Exit::CannotWrite;
        }
    }
    if (!a.saveDir.isEmpty() && !r.error) {
        if (!QDir().mkpath(a.saveDir)) {
            err() << "kpg: cannot create " << a.saveDir << "\n";
            return code ? code : Exit::CannotWrite;
        }
        for (const auto &b : c.buffers.all()) {
            const QString path = QDir(a.saveDir).filePath(b->spec.name + QStringLiteral(".npy"));
            if (Status s = exportNpy(path, b->spec.dtype, b->shape, b->memory.data()); !s) {
                err() << "kpg: " << printable(s.error().message) << "\n";
                code = code ? code : Exit::CannotWrite;
            }
        }
    }
    return code;
}

} // namespace Kp::Cli
