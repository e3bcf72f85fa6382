// Guard zones' cost: a project with a kernel of about 1 ms and three 16 MiB
// buffers, run untimed (where the guards are checked after the step) with
// guards on and off, interleaved (a run with guards after one without
// allocates and fills them anew; the run after it only checks them), plus
// one timed run each (where they are checked once after the samples). Prints
// medians; asserts nothing. Needs a GPU.
//   bench_memcheck [rounds]

#include "client/engineclient.h"
#include "compile/compiler.h"
#include "cuda/deviceinfo.h"
#include "project/projectio.h"
#include "run/projectcompile.h"
#include "run/runner.h"
#include "worker/protocol.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace Kp;

namespace {

const char *kSource = R"(
// Spins about ns nanoseconds, then copies a to c (each block a slice), so the
// buffers are touched as a real kernel would.
extern "C" __global__ void spin_copy(const float *a, float *c, int n, unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) c[i] = a[i];
}
)";

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const int rounds = argc > 1 ? qMax(3, QString::fromLocal8Bit(argv[1]).toInt()) : 30;
    EngineClient client;
    const Reply devs = client.requestSync(Protocol::Type::ListDevices);
    if (!devs) {
        std::printf("bench_memcheck: no GPU (%s)\n", qPrintable(devs.error().message));
        return 0;
    }
    const DeviceInfo dev = DeviceList::fromVariant(*devs).devices.first();
    const int n = 4 << 20; // 16 MiB per buffer
    const QJsonObject json{{"format", "kernel-playground-project"},
                           {"version", 1},
                           {"source", QJsonObject{{"inline", QString::fromLatin1(kSource)}}},
                           {"scalars", QJsonArray{QJsonObject{{"name", "n"}, {"type", "int32"}, {"value", n}}}},
                           {"buffers", QJsonArray{QJsonObject{{"name", "a"},
                                                              {"dtype", "float32"},
                                                              {"shape", n},
                                                              {"init", QJsonObject{{"kind", "random"}, {"seed", 1}}}},
                                                  QJsonObject{{"name", "b"}, {"dtype", "float32"}, {"shape", n}},
                                                  QJsonObject{{"name", "c"}, {"dtype", "float32"}, {"shape", n}}}},
                           {"launches", QJsonArray{QJsonObject{{"kernel", "spin_copy"},
                                                               {"grid", QJsonArray{264}},
                                                               {"block", QJsonArray{256}},
                                                               {"args", QJsonArray{"a", "c", "n", 1000000}}}}},
                           {"timing", QJsonObject{{"minSamples", 20}, {"minSeconds", 0.05}, {"timeoutSeconds", 5}}}};
    auto project = parseProject(QJsonDocument(json));
    if (!project) {
        std::printf("bench_memcheck: %s\n", qPrintable(project.error().message));
        return 1;
    }
    Compiler compiler(Compiler::Config{QStringLiteral("-"), 0});
    const auto compiled = compiler.compile(compileRequestFor(*project, dev.ccMajor, dev.ccMinor));
    if (!compiled || !compiled->ok) {
        std::printf("bench_memcheck: compile failed\n");
        return 1;
    }
    HostBuffers buffers;
    if (Status s = buffers.materialize(*project); !s) {
        std::printf("bench_memcheck: %s\n", qPrintable(s.error().message));
        return 1;
    }
    Runner runner(&client);
    const auto runOnce = [&](bool guards, bool timed, double *wallMs) {
        Project p = *project;
        p.timing.enabled = timed;
        auto prepared = prepareRun(p, *compiled, buffers, dev.ordinal);
        prepared.value().request.guards = guards;
        QElapsedTimer t;
        t.start();
        const RunResult r = runner.runSync(*prepared, &buffers);
        *wallMs = double(t.nsecsElapsed()) / 1e6;
        if (r.error) {
            std::printf("bench_memcheck: %s\n", qPrintable(r.error->message));
            std::exit(1);
        }
        return r;
    };
    double wall = 0;
    runOnce(true, false, &wall); // warm: module, buffers, pinned staging
    runOnce(false, false, &wall);
    std::vector<double> wallOn, wallOff, stepOn, stepOff, check, again;
    for (int i = 0; i < rounds; ++i) {
        // Guards on after a run without them: the buffers are allocated anew, and their guards filled.
        const RunResult on = runOnce(true, false, &wall);
        wallOn.push_back(wall);
        stepOn.push_back(on.steps.first().firstRunMs);
        check.push_back(on.guardCheckMs);
        // The same again, as a user's next Run or a Play frame: the guards still hold their pattern.
        const RunResult repeat = runOnce(true, false, &wall);
        again.push_back(repeat.guardCheckMs);
        const RunResult off = runOnce(false, false, &wall);
        wallOff.push_back(wall);
        stepOff.push_back(off.steps.first().firstRunMs);
    }
    const double kernelMs = median(stepOff);
    std::printf("guard zones on %s, %d rounds, 3 buffers of 16 MiB, one step of %.3f ms (untimed run)\n",
                qPrintable(dev.name), rounds, kernelMs);
    std::printf("  host time filling and checking the guards: median %.4f ms = %.2f %% of the kernel (fresh buffers)\n",
                median(check), 100.0 * median(check) / kernelMs);
    std::printf(
        "  host time checking the guards on a repeated run: median %.4f ms = %.2f %% of the kernel (target 2 %%)\n",
        median(again), 100.0 * median(again) / kernelMs);
    std::printf("  whole run request: median %.3f ms with guards, %.3f ms without (difference %.4f ms = %.2f %% of "
                "the kernel)\n",
                median(wallOn), median(wallOff), median(wallOn) - median(wallOff),
                100.0 * (median(wallOn) - median(wallOff)) / kernelMs);
    std::printf("  step's event time: median %.4f ms with guards, %.4f ms without\n", median(stepOn), kernelMs);
    const RunResult tOn = runOnce(true, true, &wall);
    const RunResult tOff = runOnce(false, true, &wall);
    std::printf("  timed: median %.4f ms with guards, %.4f ms without (%d and %d samples; guards checked after the "
                "samples, %.4f ms)\n",
                tOn.stats.medianMs, tOff.stats.medianMs, tOn.stats.count, tOff.stats.count, tOn.guardCheckMs);
    return 0;
}
