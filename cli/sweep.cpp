// kpg sweep: a project run over axes of launch configurations, defines,
// template arguments and scalars, one timed run (with the project's checks)
// per point (docs/sweep.md).

#include "sweep/sweep.h"
#include "client/engineclient.h"
#include "cliutil.h"
#include "projectcli.h"
#include "run/runjson.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <optional>

namespace Kp::Cli {

namespace {

struct PointResult
{
    SweepPoint point;
    QString status; ///< ok, check-failed, skipped, failed
    QString reason;
    bool compiledFromCache = false;
    CheckedRun run;
};

QString csvCell(QString s)
{
    if (s.contains(QLatin1Char(',')) || s.contains(QLatin1Char('"')) || s.contains(QLatin1Char('\n'))) {
        s.replace(QLatin1String("\""), QLatin1String("\"\""));
        return QLatin1Char('"') + s + QLatin1Char('"');
    }
    return s;
}

QString num(double v, int prec = 4)
{
    return QString::number(v, 'g', prec + 2);
}

QByteArray csvOf(const QList<SweepAxis> &axes, const QList<PointResult> &points)
{
    QStringList header;
    for (const SweepAxis &a : axes) {
        header << csvCell(a.name);
    }
    header << "status"
           << "median_us"
           << "min_us"
           << "max_us"
           << "noise"
           << "stopped_by"
           << "samples"
           << "median_less_overhead_us"
           << "registers"
           << "occupancy"
           << "bytes_per_second"
           << "flops_per_second"
           << "checks_passed"
           << "reason";
    QByteArray csv = header.join(QLatin1Char(',')).toUtf8() + '\n';
    for (const PointResult &p : points) {
        QStringList row;
        for (const QString &v : p.point.values) {
            row << csvCell(v);
        }
        const RunResult &r = p.run.run;
        const bool timed = p.run.ran && r.timed && !r.error;
        const StepResult *s = r.steps.isEmpty() ? nullptr : &r.steps.first();
        row << p.status << (timed ? num(r.stats.medianMs * 1000) : QString())
            << (timed ? num(r.stats.minMs * 1000) : QString()) << (timed ? num(r.stats.maxMs * 1000) : QString())
            << (timed ? num(r.stats.noise) : QString()) << (timed ? r.stopCriterion : QString())
            << (timed ? QString::number(r.stats.count) : QString())
            << (timed ? num(r.medianLessOverheadMs * 1000) : QString())
            << (s ? QString::number(s->limits.numRegs) : QString()) << (s ? num(s->occupancy.ratio) : QString())
            << (timed && r.bytes > 0 ? num(r.bytesPerSecond) : QString())
            << (timed && r.flops > 0 ? num(r.flopsPerSecond) : QString())
            << (p.run.ran && !r.error ? (p.run.checksPassed() ? "true" : "false") : QString()) << csvCell(p.reason);
        csv += row.join(QLatin1Char(',')).toUtf8() + '\n';
    }
    return csv;
}

QJsonObject jsonOf(const Project &project, const QList<SweepAxis> &axes, bool zip, int total,
                   const QList<PointResult> &points, double wallSeconds)
{
    QJsonArray axesJson;
    for (const SweepAxis &a : axes) {
        axesJson.append(QJsonObject{{QStringLiteral("name"), a.name},
                                    {QStringLiteral("values"), QJsonArray::fromStringList(a.values)}});
    }
    QJsonArray pointsJson;
    QString device;
    for (const PointResult &p : points) {
        QJsonObject values;
        for (qsizetype i = 0; i < axes.size(); ++i) {
            values.insert(axes[i].name, p.point.values.value(i));
        }
        QJsonObject o{{QStringLiteral("values"), values},
                      {QStringLiteral("status"), p.status},
                      {QStringLiteral("reason"), p.reason},
                      {QStringLiteral("compileCached"), p.compiledFromCache}};
        if (p.run.compiled) {
            o.insert(QStringLiteral("compile"), compileJson(*p.run.compiled));
        }
        if (p.run.ran) {
            const QJsonObject run = runResultToJson(p.run.run);
            for (const char *key : {"device", "steps", "timing", "throughput", "warnings", "error"}) {
                o.insert(QLatin1String(key), run.value(QLatin1String(key)));
            }
            o.insert(QStringLiteral("checksPassed"), p.run.checksPassed());
            if (device.isEmpty()) {
                device = p.run.run.device;
            }
        }
        pointsJson.append(o);
    }
    return QJsonObject{{QStringLiteral("project"), project.path},
                       {QStringLiteral("title"), project.title},
                       {QStringLiteral("device"), device},
                       {QStringLiteral("axes"), axesJson},
                       {QStringLiteral("zip"), zip},
                       {QStringLiteral("points"), pointsJson},
                       {QStringLiteral("pointsPlanned"), total},
                       {QStringLiteral("wallSeconds"), wallSeconds},
                       {QStringLiteral("complete"), points.size() == total}};
}

} // namespace

int sweepCommand(const QStringList &args)
{
    QString projectPath, csvPath, jsonPath;
    QList<SweepAxis> axes;
    bool zip = false;
    bool confine = false;
    int device = 0;
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString &s = args[i];
        if (s == QLatin1String("--zip")) {
            zip = true;
        } else if (s == QLatin1String("--confine")) {
            confine = true;
        } else if (s == QLatin1String("--axis") || s == QLatin1String("--csv") || s == QLatin1String("--json") ||
                   s == QLatin1String("--device")) {
            if (i + 1 >= args.size()) {
                return usageError(QStringLiteral("sweep: %1 needs a value").arg(s));
            }
            const QString v = args[++i];
            if (s == QLatin1String("--axis")) {
                Result<SweepAxis> a = parseSweepAxis(v);
                if (!a) {
                    return usageError(QStringLiteral("sweep: ") + a.error().message);
                }
                axes << *a;
            } else if (s == QLatin1String("--csv")) {
                csvPath = v;
            } else if (s == QLatin1String("--json")) {
                jsonPath = v;
            } else {
                bool ok = false;
                device = v.toInt(&ok);
                if (!ok || device < 0) {
                    return usageError(
                        QStringLiteral("sweep: --device takes a GPU number (0, 1, ...), not '%1'").arg(v));
                }
            }
        } else if (s.startsWith(QLatin1Char('-'))) {
            return usageError(QStringLiteral("sweep: unknown option '%1'").arg(s));
        } else if (projectPath.isEmpty()) {
            projectPath = s;
        } else {
            return usageError(QStringLiteral("sweep: one project at a time ('%1' and '%2')").arg(projectPath, s));
        }
    }
    if (projectPath.isEmpty()) {
        return usageError(
            QStringLiteral("sweep: no project given (kpg sweep PROJECT.kpg --axis block.x=64:1024:pow2)"));
    }
    if (axes.isEmpty()) {
        return usageError(QStringLiteral("sweep: no --axis given (e.g. --axis block.x=64:1024:pow2)"));
    }
    const Result<QList<SweepPoint>> points = expandSweep(axes, zip);
    if (!points) {
        return usageError(QStringLiteral("sweep: ") + points.error().message);
    }
    Result<Project> loaded = loadProjectArgument(projectPath, confine ? PathScope::ProjectFolder : PathScope::Anywhere);
    if (!loaded) {
        err() << "kpg: " << loaded.error().message << "\n";
        return Exit::forError(loaded.error());
    }
    const Project project = std::move(loaded).value();
    for (const SweepAxis &a : axes) {
        if (Status s = checkSweepAxis(a, project); !s) {
            return usageError(QStringLiteral("sweep: ") + s.error().message);
        }
    }

    // With --json -, the JSON owns stdout and the table goes to stderr.
    QTextStream &o = jsonPath == QLatin1String("-") ? err() : out();
    o << (project.title.isEmpty() ? projectPath : project.title) << ": " << points->size() << " point"
      << (points->size() == 1 ? "" : "s") << (zip ? " (zipped axes)" : "") << "\n";
    o.flush();
    EngineClient engine;
    CheckedRunOptions options;
    options.device = device;
    options.timing = true;
    QList<PointResult> results;
    QSet<QString> compiledKeys;
    int code = Exit::Ok;
    QElapsedTimer wall;
    wall.start();
    for (qsizetype i = 0; i < points->size(); ++i) {
        PointResult pr;
        pr.point = points->at(i);
        const QString label = sweepPointLabel(axes, pr.point);
        const QString key = sweepCompileKey(axes, pr.point);
        Result<Project> p = applySweepPoint(project, axes, pr.point);
        if (!p) {
            pr.status = QStringLiteral("skipped");
            pr.reason = p.error().message;
        } else {
            // Points that share the define and template values share a
            // compile: the compile cache answers for every one after the first.
            pr.compiledFromCache = compiledKeys.contains(key);
            pr.run = runProjectWithChecks(*p, &engine, options);
            compiledKeys.insert(key);
            const std::optional<Error> e = pr.run.run.error ? pr.run.run.error : pr.run.error;
            if (e && (e->code == Error::Code::NoDriver || e->code == Error::Code::NoDevice ||
                      e->code == Error::Code::NoCompiler || e->code == Error::Code::WorkerStart)) {
                err() << "kpg: " << e->message << "\n";
                code = Exit::forError(*e);
                break;
            }
            if (e && sweepErrorIsSkip(*e)) {
                pr.status = QStringLiteral("skipped");
                pr.reason = e->message;
            } else if (e) {
                pr.status = QStringLiteral("failed");
                pr.reason = e->message;
                code = code ? code : Exit::forError(*e);
            } else if (!pr.run.checksPassed()) {
                pr.status = QStringLiteral("check-failed");
                code = code ? code : Exit::CheckFailed;
            } else {
                pr.status = QStringLiteral("ok");
            }
        }
        const RunResult &r = pr.run.run;
        o << "  [" << i + 1 << "/" << points->size() << "] " << label << ": " << pr.status;
        if (pr.status == QLatin1String("ok") || pr.status == QLatin1String("check-failed")) {
            o << "  median " << QString::number(r.stats.medianMs * 1000, 'f', 3) << " us (" << r.stats.count << ", "
              << r.stopCriterion << ")";
            if (!r.steps.isEmpty()) {
                o << "  " << r.steps.first().limits.numRegs << " regs, occupancy "
                  << QString::number(r.steps.first().occupancy.ratio * 100, 'f', 0) << " %";
            }
        } else {
            o << ": " << pr.reason;
        }
        const double perPoint = double(wall.elapsed()) / 1000.0 / double(i + 1);
        o << "  (about " << QString::number(perPoint * double(points->size() - i - 1), 'f', 0) << " s left)\n";
        o.flush();
        results << pr;
    }

    if (!csvPath.isEmpty() && !writeText(csvPath, csvOf(axes, results), QStringLiteral("the sweep CSV"))) {
        code = code ? code : Exit::CannotWrite;
    }
    if (!jsonPath.isEmpty() && !writeText(jsonPath,
                                          QJsonDocument(jsonOf(project, axes, zip, int(points->size()), results,
                                                               double(wall.elapsed()) / 1000.0))
                                              .toJson(QJsonDocument::Indented),
                                          QStringLiteral("the sweep JSON"))) {
        code = code ? code : Exit::CannotWrite;
    }
    return code;
}

} // namespace Kp::Cli
