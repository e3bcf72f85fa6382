// Timing against the references: vector add at 64K / 1M / 16M / 64M elements,
// timed by Kernel Playground (kpg-worker, cold), by raw driver calls in this
// process in the same run (memset flush as nvbench and Triton do, and the
// read flush the worker uses), and by Nsight Compute's gpu__time_duration
// through `ncu --target-processes all kpg run` when ncu is on PATH. Prints a
// table of medians and ratios; asserts nothing. Needs a GPU.
//   bench_timing [--no-ncu]
//
// Target (docs/ARCHITECTURE.md, "Timing"): the median less the event
// overhead within max(2 %, 0.5 us) of ncu.

#include "client/engineclient.h"
#include "compile/compiler.h"
#include "cuda/deviceinfo.h"
#include "project/projectio.h"
#include "rawtiming.h"
#include "run/projectcompile.h"
#include "run/runner.h"
#include "worker/protocol.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <cmath>
#include <cstdio>
#include <vector>

using namespace Kp;

namespace {

QJsonObject vectorAddProject(int n)
{
    const auto buffer = [n](const char *name, int seed) {
        QJsonObject b{{"name", name}, {"dtype", "float32"}, {"shape", QJsonArray{n}}};
        b.insert("init", seed ? QJsonObject{{"kind", "random"}, {"seed", seed}} : QJsonObject{{"kind", "zeros"}});
        return b;
    };
    return QJsonObject{{"format", "kernel-playground-project"},
                       {"version", 1},
                       {"title", QStringLiteral("vector add %1").arg(n)},
                       {"source", QJsonObject{{"inline", QString::fromLatin1(Raw::kSource)}}},
                       {"scalars", QJsonArray{QJsonObject{{"name", "n"}, {"type", "int32"}, {"value", n}}}},
                       {"buffers", QJsonArray{buffer("a", 1), buffer("b", 2), buffer("c", 0)}},
                       {"launches", QJsonArray{QJsonObject{{"kernel", "vectorAdd"},
                                                           {"grid", QJsonArray{"ceil_div(n, block.x)"}},
                                                           {"block", QJsonArray{256}},
                                                           {"args", QJsonArray{"a", "b", "c", "n"}}}}},
                       {"throughput", QJsonObject{{"bytes", "12*n"}, {"flops", "n"}}}};
}

struct NcuResult
{
    bool ran = false;
    int exitCode = 0;
    double medianMs = 0;
    int kernels = 0;
    QString tail;
};

/** gpu__time_duration of every vectorAdd launch in `kpg run`, under ncu. */
NcuResult ncuDuration(const QString &ncu, const QString &kpg, const QString &projectFile)
{
    NcuResult r;
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    // Clocks as they are (the worker does not lock them either); caches
    // flushed before each replay, as a cold sample has them.
    p.start(ncu, {"--target-processes", "all", "--clock-control", "none", "--cache-control", "all", "--metrics",
                  "gpu__time_duration.sum", "--print-units", "base", "--csv", "-k", "regex:vectorAdd", kpg, "run",
                  projectFile});
    if (!p.waitForStarted(10000)) {
        r.tail = p.errorString();
        return r;
    }
    p.waitForFinished(600000);
    r.ran = true;
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    const QString out = QString::fromLocal8Bit(p.readAll());
    r.tail = out.right(1500);
    std::vector<double> ms;
    int nameCol = -1, metricCol = -1, unitCol = -1, valueCol = -1;
    for (const QString &line : out.split(QLatin1Char('\n'))) {
        if (!line.startsWith(QLatin1Char('"'))) {
            continue;
        }
        QStringList cells = line.trimmed().mid(1).chopped(1).split(QStringLiteral("\",\""));
        if (cells.contains(QStringLiteral("Metric Name"))) {
            nameCol = int(cells.indexOf(QStringLiteral("Kernel Name")));
            metricCol = int(cells.indexOf(QStringLiteral("Metric Name")));
            unitCol = int(cells.indexOf(QStringLiteral("Metric Unit")));
            valueCol = int(cells.indexOf(QStringLiteral("Metric Value")));
            continue;
        }
        if (metricCol < 0 || valueCol >= cells.size() || metricCol >= cells.size() ||
            cells[metricCol] != QLatin1String("gpu__time_duration.sum") || nameCol < 0 ||
            !cells[nameCol].contains(QLatin1String("vectorAdd"))) {
            continue;
        }
        const double v = QString(cells[valueCol]).remove(QLatin1Char(',')).toDouble();
        const QString unit = unitCol >= 0 ? cells[unitCol] : QStringLiteral("ns");
        const double scale = unit.startsWith(QLatin1String("ms"))   ? 1
                             : unit.startsWith(QLatin1String("us")) ? 1e-3
                             : unit.startsWith(QLatin1String("s"))  ? 1e3
                                                                    : 1e-6; // ns, nsecond
        ms.push_back(v * scale);
    }
    r.kernels = int(ms.size());
    r.medianMs = Raw::median(ms);
    return r;
}

QString us(double ms)
{
    return ms > 0 ? QString::number(ms * 1000, 'f', 2) : QStringLiteral("-");
}

QString ratio(double a, double b)
{
    return a > 0 && b > 0 ? QString::number(a / b, 'f', 3) : QStringLiteral("-");
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const bool useNcu = !app.arguments().contains(QStringLiteral("--no-ncu"));
    EngineClient client;
    const Reply devs = client.requestSync(Protocol::Type::ListDevices);
    if (!devs) {
        std::printf("bench_timing: no GPU (%s)\n", qPrintable(devs.error().message));
        return 0;
    }
    const DeviceInfo dev = DeviceList::fromVariant(*devs).devices.first();
    Compiler compiler(Compiler::Config{QStringLiteral("-"), 0});
    CompileRequest req;
    req.source = QString::fromLatin1(Raw::kSource);
    req.deviceCcMajor = dev.ccMajor;
    req.deviceCcMinor = dev.ccMinor;
    const auto compiled = compiler.compile(req);
    if (!compiled || !compiled->ok) {
        std::printf("bench_timing: compile failed\n");
        return 1;
    }
    const std::vector<int> sizes{1 << 16, 1 << 20, 1 << 24, 1 << 26};

    // Ours, through kpg-worker, the project's default timing (cold).
    Runner runner(&client);
    std::vector<RunResult> ours;
    for (int n : sizes) {
        const Project p = *parseProject(QJsonDocument(vectorAddProject(n)));
        HostBuffers buffers;
        buffers.materialize(p);
        const CompileResult c = *compiler.compile(compileRequestFor(p, dev.ccMajor, dev.ccMinor));
        const auto prepared = prepareRun(p, c, buffers, 0);
        if (!prepared) {
            std::printf("bench_timing: %s\n", qPrintable(prepared.error().message));
            return 1;
        }
        ours.push_back(runner.runSync(*prepared, &buffers));
        if (ours.back().error) {
            std::printf("bench_timing: run failed: %s\n", qPrintable(ours.back().error->message));
            return 1;
        }
    }

    // Raw driver calls in this process, same source, same run.
    Raw::VectorAdd raw;
    if (const QString e = raw.open(compiled->cubin); !e.isEmpty()) {
        std::printf("bench_timing: raw reference: %s\n", qPrintable(e));
        return 1;
    }
    const double rawOverheadRead = raw.time(Raw::Flush::Read, true);
    const double rawOverheadMemset = raw.time(Raw::Flush::Memset, true);
    std::vector<double> rawMemset, rawRead;
    for (int n : sizes) {
        if (const QString e = raw.resize(n); !e.isEmpty()) {
            std::printf("bench_timing: raw reference: %s\n", qPrintable(e));
            return 1;
        }
        rawMemset.push_back(raw.time(Raw::Flush::Memset, false));
        rawRead.push_back(raw.time(Raw::Flush::Read, false));
    }

    // Nsight Compute through kpg, when installed.
    const QString ncu = QStandardPaths::findExecutable(QStringLiteral("ncu"));
    std::vector<NcuResult> ncuResults(sizes.size());
    QTemporaryDir dir;
    const QString kpg = QCoreApplication::applicationDirPath() + QStringLiteral("/kpg");
    if (!useNcu) {
        std::printf("ncu: skipped (--no-ncu)\n");
    } else if (ncu.isEmpty()) {
        std::printf("ncu: not on PATH; the ncu column stays empty (install Nsight Compute or add it to PATH)\n");
    } else {
        for (size_t i = 0; i < sizes.size(); ++i) {
            const QString file = dir.filePath(QStringLiteral("vector_add_%1.kpg").arg(sizes[i]));
            QFile f(file);
            f.open(QIODevice::WriteOnly);
            f.write(QJsonDocument(vectorAddProject(sizes[i])).toJson());
            f.close();
            std::printf("ncu: %s --target-processes all --clock-control none --cache-control all --metrics "
                        "gpu__time_duration.sum --print-units base --csv -k regex:vectorAdd %s run %s\n",
                        qPrintable(ncu), qPrintable(kpg), qPrintable(file));
            ncuResults[i] = ncuDuration(ncu, kpg, file);
            if (!ncuResults[i].ran || ncuResults[i].exitCode != 0 || ncuResults[i].kernels == 0) {
                std::printf("ncu --target-processes all kpg run %s: exit code %d, %d vectorAdd kernels profiled; "
                            "output tail:\n%s\n",
                            qPrintable(file), ncuResults[i].exitCode, ncuResults[i].kernels,
                            qPrintable(ncuResults[i].tail));
            }
        }
    }

    std::printf("\nbench_timing on %s (%s), vector add, block 256, cold\n\n", qPrintable(dev.name),
                qPrintable(dev.arch()));
    std::printf("event overhead (cold sample of an empty kernel): kpg-worker %s us (pair alone %s us); raw, read "
                "flush %s us; raw, memset flush %s us\n\n",
                qPrintable(us(ours.front().eventOverheadMs)), qPrintable(us(ours.front().eventPairMs)),
                qPrintable(us(rawOverheadRead)), qPrintable(us(rawOverheadMemset)));
    std::printf("| n | kpg median us | kpg less event pair us | stopped by (samples) | raw memset flush us | raw read "
                "flush us | ncu us | kpg / raw read | kpg / ncu | kpg less event pair / ncu | target |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < sizes.size(); ++i) {
        const RunResult &r = ours[i];
        const double ncuMs = ncuResults[i].medianMs;
        QString target = QStringLiteral("no ncu");
        if (ncuMs > 0) {
            const double tol = std::max(0.02 * ncuMs, 0.0005);
            target = std::abs(r.medianLessOverheadMs - ncuMs) <= tol ? QStringLiteral("met") : QStringLiteral("MISSED");
        }
        std::printf("| %d | %s | %s | %s (%d) | %s | %s | %s | %s | %s | %s | %s |\n", sizes[i],
                    qPrintable(us(r.stats.medianMs)), qPrintable(us(r.medianLessOverheadMs)),
                    qPrintable(r.stopCriterion), r.stats.count, qPrintable(us(rawMemset[i])),
                    qPrintable(us(rawRead[i])), qPrintable(us(ncuMs)), qPrintable(ratio(r.stats.medianMs, rawRead[i])),
                    qPrintable(ratio(r.stats.medianMs, ncuMs)), qPrintable(ratio(r.medianLessOverheadMs, ncuMs)),
                    qPrintable(target));
    }
    // The other candidate correction: the event pair alone (no launch between).
    // Which one lands within max(2 %, 0.5 us) of ncu is what this bench is for.
    std::printf("\nkpg median less the event pair alone (%s us) against ncu: ",
                qPrintable(us(ours.front().eventPairMs)));
    for (size_t i = 0; i < sizes.size(); ++i) {
        const double v = ours[i].stats.medianMs - ours[i].eventPairMs;
        std::printf("%s%s us (ratio %s)", i ? ", " : "", qPrintable(us(v)),
                    qPrintable(ratio(v, ncuResults[i].medianMs)));
    }
    std::printf("\nraw less its own overhead (read flush): ");
    for (size_t i = 0; i < sizes.size(); ++i) {
        std::printf("%s%s us", i ? ", " : "", qPrintable(us(rawRead[i] - rawOverheadRead)));
    }
    std::printf("\nnotes:\n");
    for (size_t i = 0; i < sizes.size(); ++i) {
        std::printf("  %d: %s\n", sizes[i], qPrintable(ours[i].timingNote));
    }
    return 0;
}
