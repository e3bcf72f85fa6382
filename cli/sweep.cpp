// kpg sweep: a project run over axes of launch configurations, defines,
// template arguments and scalars, one timed run (with the project's checks)
// per point (docs/sweep.md). The points run in the engine's SweepRunner,
// spread over every GPU of the same model unless --device pins one.

#include "sweep/sweep.h"
#include "client/engineclient.h"
#include "cliutil.h"
#include "core/printable.h"
#include "plot/plot.h"
#include "projectcli.h"
#include "run/ceilings.h"
#include "sweep/sweepplot.h"
#include "sweep/sweeprunner.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <csignal>
#include <optional>

namespace Kp::Cli {

namespace {

struct PlotArgs
{
    QString path;
    QString roofline;
    QString y = QStringLiteral("time");
    QString x;
    QString series;
    QString kind = QStringLiteral("lines");
    QString theme = QStringLiteral("light");
    QSize size{900, 560};
};

int writePlots(const PlotArgs &pa, const Project &project, const QList<SweepAxis> &axes,
               const QList<SweepPointResult> &points, const std::optional<DeviceCeilings> &ceilings)
{
    const Plot::Palette palette = pa.theme == QLatin1String("dark") ? Plot::Palette::dark() : Plot::Palette::light();
    const QString title = project.title.isEmpty() ? QFileInfo(project.path).completeBaseName() : project.title;
    int code = Exit::Ok;
    if (!pa.path.isEmpty()) {
        SweepPlotOptions o;
        o.y = pa.y == QLatin1String("throughput") ? SweepPlotOptions::Y::Throughput : SweepPlotOptions::Y::Time;
        o.heatmap = pa.kind == QLatin1String("heatmap");
        o.ceilings = ceilings;
        if (!pa.x.isEmpty()) {
            o.xAxis = *sweepAxisIndex(axes, pa.x, QStringLiteral("--plot-x")); // checked before the sweep
        }
        if (pa.series == QLatin1String("none")) {
            o.seriesAxis = -1;
        } else if (!pa.series.isEmpty()) {
            o.seriesAxis = *sweepAxisIndex(axes, pa.series, QStringLiteral("--plot-series"));
        }
        const Result<Plot::Figure> f = sweepFigure(title, axes, points, o);
        if (!f) {
            err() << "kpg: sweep: --plot: " << f.error().message << "\n";
            code = Exit::forError(f.error());
        } else if (const Status s = Plot::save(pa.path, *f, pa.size, palette); !s) {
            err() << "kpg: " << s.error().message << "\n";
            code = Exit::CannotWrite;
        }
    }
    if (!pa.roofline.isEmpty()) {
        if (!ceilings) {
            err() << "kpg: sweep: --roofline: the device's ceilings could not be measured\n";
            code = code ? code : Exit::Unavailable;
        } else if (const Status s = Plot::save(pa.roofline, rooflineFigure(title, points, *ceilings), pa.size, palette);
                   !s) {
            err() << "kpg: " << s.error().message << "\n";
            code = code ? code : Exit::CannotWrite;
        }
    }
    return code;
}

SweepRunner *g_running = nullptr;

void onInterrupt(int)
{
    // Ctrl-C stops the runs in flight and writes what finished.
    if (g_running) {
        g_running->abort();
    }
}

} // namespace

int sweepCommand(const QStringList &args)
{
    QString projectPath, csvPath, jsonPath;
    QList<SweepAxis> axes;
    bool zip = false;
    bool confine = false;
    std::optional<int> device;
    PlotArgs plot;
    const QStringList valued{"--axis",   "--csv",         "--json",      "--device",     "--plot",      "--plot-y",
                             "--plot-x", "--plot-series", "--plot-kind", "--plot-theme", "--plot-size", "--roofline"};
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString &s = args[i];
        if (s == QLatin1String("--zip")) {
            zip = true;
        } else if (s == QLatin1String("--confine")) {
            confine = true;
        } else if (valued.contains(s)) {
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
            } else if (s == QLatin1String("--csv") || s == QLatin1String("--json") || s == QLatin1String("--plot") ||
                       s == QLatin1String("--roofline")) {
                // Every output is checked here, before the sweep runs for minutes.
                const bool isPlot = s == QLatin1String("--plot") || s == QLatin1String("--roofline");
                if (const std::optional<int> bad = checkOutputOption(QStringLiteral("sweep"), s, v, !isPlot)) {
                    return *bad;
                }
                if (isPlot) {
                    if (const Status f = Plot::checkFormat(v); !f) {
                        return usageError(QStringLiteral("sweep: %1 ").arg(s) + f.error().message);
                    }
                }
                if (s == QLatin1String("--csv")) {
                    csvPath = v;
                } else if (s == QLatin1String("--json")) {
                    jsonPath = v;
                } else if (s == QLatin1String("--plot")) {
                    plot.path = v;
                } else {
                    plot.roofline = v;
                }
            } else if (s == QLatin1String("--plot-y")) {
                if (v != QLatin1String("time") && v != QLatin1String("throughput")) {
                    return usageError(QStringLiteral("sweep: --plot-y is time or throughput, not '%1'").arg(v));
                }
                plot.y = v;
            } else if (s == QLatin1String("--plot-x")) {
                plot.x = v;
            } else if (s == QLatin1String("--plot-series")) {
                plot.series = v;
            } else if (s == QLatin1String("--plot-kind")) {
                if (v != QLatin1String("lines") && v != QLatin1String("heatmap")) {
                    return usageError(QStringLiteral("sweep: --plot-kind is lines or heatmap, not '%1'").arg(v));
                }
                plot.kind = v;
            } else if (s == QLatin1String("--plot-theme")) {
                if (v != QLatin1String("light") && v != QLatin1String("dark")) {
                    return usageError(QStringLiteral("sweep: --plot-theme is light or dark, not '%1'").arg(v));
                }
                plot.theme = v;
            } else if (s == QLatin1String("--plot-size")) {
                const QStringList wh = v.split(QLatin1Char('x'));
                const int w = wh.value(0).toInt(), h = wh.value(1).toInt();
                if (wh.size() != 2 || w < 200 || h < 150 || w > 8000 || h > 8000) {
                    return usageError(
                        QStringLiteral("sweep: --plot-size is WIDTHxHEIGHT in pixels, 200x150 to 8000x8000, not '%1'")
                            .arg(v));
                }
                plot.size = QSize(w, h);
            } else {
                bool ok = false;
                const int d = v.toInt(&ok);
                if (!ok || d < 0) {
                    return usageError(
                        QStringLiteral("sweep: --device takes a GPU number (0, 1, ...), not '%1'").arg(v));
                }
                device = d;
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
    Result<Project> loaded = loadProjectArgument(projectPath, confine ? PathScope::ProjectFolder : PathScope::Anywhere);
    if (!loaded) {
        err() << "kpg: " << printable(loaded.error().message) << "\n";
        return Exit::forError(loaded.error());
    }
    const Project project = std::move(loaded).value();
    if (axes.isEmpty() && project.sweep) {
        // The project's own axes ("sweep" in the .kpg), when none are given.
        for (const QString &spec : project.sweep->axes) {
            Result<SweepAxis> a = parseSweepAxis(spec);
            if (!a) {
                return usageError(QStringLiteral("sweep: the project's sweep.axes: ") + a.error().message);
            }
            axes << *a;
        }
        zip = zip || project.sweep->zip;
    }
    if (axes.isEmpty()) {
        return usageError(QStringLiteral("sweep: no --axis given and the project has no \"sweep\" axes (e.g. --axis "
                                         "block.x=64:1024:pow2)"));
    }
    const Result<QList<SweepPoint>> points = expandSweep(axes, zip);
    if (!points) {
        return usageError(QStringLiteral("sweep: ") + points.error().message);
    }
    for (const SweepAxis &a : axes) {
        if (Status s = checkSweepAxis(a, project); !s) {
            return usageError(QStringLiteral("sweep: ") + s.error().message);
        }
    }
    for (const auto &[option, name] :
         {std::pair{QStringLiteral("--plot-x"), plot.x}, std::pair{QStringLiteral("--plot-series"), plot.series}}) {
        if (!name.isEmpty() && name != QLatin1String("none")) {
            if (const Result<int> i = sweepAxisIndex(axes, name, option); !i) {
                return usageError(QStringLiteral("sweep: ") + i.error().message);
            }
        }
    }
    if (plot.kind == QLatin1String("heatmap") && axes.size() < 2) {
        return usageError(QStringLiteral("sweep: --plot-kind heatmap needs two axes; this sweep has one"));
    }

    // With --json -, the JSON owns stdout and the table goes to stderr.
    QTextStream &o = jsonPath == QLatin1String("-") ? err() : out();
    o << printable(project.title.isEmpty() ? projectPath : project.title) << ": " << points->size() << " point"
      << (points->size() == 1 ? "" : "s") << (zip ? " (zipped axes)" : "") << "\n";
    o.flush();

    // The GPUs: --device, else all of GPU 0's model. Without a driver the
    // sweep still starts on one, so the first point reports compile and
    // binding mistakes before the missing GPU.
    QList<int> devices{device.value_or(0)};
    DeviceList deviceList;
    {
        EngineClient probe;
        const Result<DeviceList> list = probe.listDevicesSync(60000);
        if (list) {
            deviceList = *list;
            const Result<QList<int>> chosen = sweepDevices(*list, device);
            if (!chosen) {
                return usageError(QStringLiteral("sweep: ") + chosen.error().message);
            }
            devices = *chosen;
            if (devices.size() > 1) {
                o << "on " << devices.size() << " GPUs (" << list->devices.first().name << ")\n";
                o.flush();
            }
        }
    }

    SweepRunner runner;
    SweepRunner::Options options;
    options.devices = devices;
    int code = Exit::Ok;
    QObject::connect(&runner, &SweepRunner::pointFinished, &runner, [&](const SweepPointResult &pr) {
        const RunResult &r = pr.run.run;
        o << "  [" << runner.results().size() << "/" << points->size() << "] " << printable(pr.label) << ": "
          << pr.status;
        if (pr.timed()) {
            o << "  median " << QString::number(r.stats.medianMs * 1000, 'f', 3) << " us (" << r.stats.count << ", "
              << r.stopCriterion << ")";
            if (!r.steps.isEmpty()) {
                o << "  " << r.steps.first().limits.numRegs << " regs, occupancy "
                  << QString::number(r.steps.first().occupancy.ratio * 100, 'f', 0) << " %";
            }
        } else {
            o << ": " << printable(pr.reason);
        }
        if (devices.size() > 1) {
            o << "  [GPU " << pr.device << "]";
        }
        o << "  (about " << QString::number(qMax(0.0, runner.secondsLeft()), 'f', 0) << " s left)\n";
        o.flush();
        if (pr.status == QLatin1String("failed")) {
            const std::optional<Error> e = r.error ? r.error : pr.run.error;
            code = code ? code : (e ? Exit::forError(*e) : Exit::Internal);
        } else if (pr.status == QLatin1String("check-failed")) {
            code = code ? code : Exit::CheckFailed;
        }
    });
    if (Status s = runner.start(project, axes, zip, options); !s) {
        return usageError(QStringLiteral("sweep: ") + s.error().message);
    }
    g_running = &runner;
    std::signal(SIGINT, onInterrupt);
    runner.waitFinished();
    std::signal(SIGINT, SIG_DFL);
    g_running = nullptr;
    if (const std::optional<Error> fatal = runner.fatalError()) {
        err() << "kpg: " << printable(fatal->message) << "\n";
        code = Exit::forError(*fatal);
    }
    if (runner.wasAborted()) {
        err() << "kpg: sweep interrupted after " << runner.results().size() << " of " << points->size() << " points\n";
        code = code ? code : Exit::Incomplete;
    }
    const QList<SweepPointResult> results = runner.resultsInOrder();
    // A sweep that measured nothing is not a success: every point skipped
    // (block too large for the kernel, a grid of 0, ...) exits 65 with the first reason.
    if (code == Exit::Ok && !results.isEmpty() &&
        std::all_of(results.begin(), results.end(),
                    [](const SweepPointResult &r) { return r.status == QLatin1String("skipped"); })) {
        err() << "kpg: sweep: every point was skipped, none ran; the first: " << printable(results.first().label)
              << ": " << printable(results.first().reason) << "\n";
        code = Exit::BadInput;
    }

    if (!csvPath.isEmpty() && !writeText(csvPath, sweepCsv(axes, results), QStringLiteral("the sweep CSV"))) {
        code = code ? code : Exit::CannotWrite;
    }
    if (!jsonPath.isEmpty() && !writeText(jsonPath,
                                          QJsonDocument(sweepJson(project, axes, zip, int(points->size()), results,
                                                                  runner.wallSeconds(), runner.wasAborted()))
                                              .toJson(QJsonDocument::Indented),
                                          QStringLiteral("the sweep JSON"))) {
        code = code ? code : Exit::CannotWrite;
    }
    if (!plot.path.isEmpty() || !plot.roofline.isEmpty()) {
        // Ceilings come from the cache; a roofline measures them when they are not there yet.
        std::optional<DeviceCeilings> ceilings;
        if (!deviceList.devices.isEmpty()) {
            const DeviceInfo &d = deviceList.devices[devices.first()];
            ceilings = readCachedCeilings(ceilingsCachePath(), d, deviceList.driverVersion);
            if (!ceilings && !plot.roofline.isEmpty()) {
                EngineClient engine;
                const Result<DeviceCeilings> c = deviceCeilings(engine, d, deviceList.driverVersion, false);
                if (c) {
                    ceilings = *c;
                }
            }
        }
        const int plotCode = writePlots(plot, project, axes, results, ceilings);
        code = code ? code : plotCode;
    }
    return code;
}

} // namespace Kp::Cli
