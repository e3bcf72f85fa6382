// Run path: Kernel Playground's worker against raw driver calls made in this
// process with the same cubin, in the same run. Prints a table; asserts
// nothing. Needs a GPU.
//   bench_run
//
// The raw reference uses the driver directly (DriverApi) in the bench
// process, which the programs never do: that is the point of a reference.

#include "client/engineclient.h"
#include "compile/compiler.h"
#include "cuda/deviceinfo.h"
#include "cuda/driverapi.h"
#include "project/projectio.h"
#include "run/runner.h"
#include "worker/protocol.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace Kp;

namespace {

const char *kSource = R"(
extern "C" __global__ void empty() {}
extern "C" __global__ void spin_ns(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
extern "C" __global__ void touch(float *p) { if (threadIdx.x == 0 && blockIdx.x == 0) p[0] += 1.0f; }
extern "C" __global__ void fault(float *p) { *(volatile float *)0x10 = p[0]; }
)";

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

QJsonObject project(const QJsonArray &scalars, const QJsonArray &buffers, const QJsonObject &launch,
                    const QJsonObject &timing)
{
    return QJsonObject{{"format", "kernel-playground-project"},
                       {"version", 1},
                       {"source", QJsonObject{{"inline", QString::fromLatin1(kSource)}}},
                       {"scalars", scalars},
                       {"buffers", buffers},
                       {"launches", QJsonArray{launch}},
                       {"timing", timing}};
}

#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        const CUresult r_ = (call);                                                                                    \
        if (r_ != CUDA_SUCCESS) {                                                                                      \
            std::fprintf(stderr, "%s\n", qPrintable(api->error(r_, #call).message));                                   \
            std::exit(1);                                                                                              \
        }                                                                                                              \
    } while (0)

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    EngineClient client;
    const Reply devs = client.requestSync(Protocol::Type::ListDevices);
    if (!devs) {
        std::printf("bench_run: no GPU (%s)\n", qPrintable(devs.error().message));
        return 0;
    }
    const DeviceInfo dev = DeviceList::fromVariant(*devs).devices.first();
    Compiler compiler(Compiler::Config{QStringLiteral("-"), 0});
    CompileRequest req;
    req.source = QString::fromLatin1(kSource);
    req.deviceCcMajor = dev.ccMajor;
    req.deviceCcMinor = dev.ccMinor;
    const auto compiled = compiler.compile(req);
    if (!compiled || !compiled->ok) {
        std::printf("bench_run: compile failed\n");
        return 1;
    }
    Runner runner(&client);
    const auto runProject = [&](const QJsonObject &json, HostBuffers &buffers) {
        const Project p = *parseProject(QJsonDocument(json));
        buffers.materialize(p);
        const auto prepared = prepareRun(p, *compiled, buffers, 0);
        if (!prepared) {
            std::printf("bench_run: %s\n", qPrintable(prepared.error().message));
            std::exit(1);
        }
        return runner.runSync(*prepared, &buffers);
    };
    const QJsonObject hot{
        {"mode", "hot"}, {"minSamples", 200}, {"minSeconds", 0.5}, {"maxNoise", 0.001}, {"timeoutSeconds", 5}};
    const QJsonObject cold{{"mode", "cold"}, {"minSamples", 200}, {"minSeconds", 0.5}, {"timeoutSeconds", 5}};
    const QJsonObject spinLaunch{{"kernel", "spin_ns"}, {"grid", 1}, {"block", 32}, {"args", QJsonArray{1000000}}};
    const QJsonObject emptyLaunch{{"kernel", "empty"}, {"grid", 1}, {"block", 32}, {"args", QJsonArray{}}};

    // Ours, through kpg-worker.
    HostBuffers none;
    const RunResult emptyHot = runProject(project({}, {}, emptyLaunch, hot), none);
    const RunResult emptyCold = runProject(project({}, {}, emptyLaunch, cold), none);
    const RunResult spin = runProject(project({}, {}, spinLaunch, cold), none);
    const qint64 big = 256ll * 1024 * 1024;
    HostBuffers bigBuffers;
    const QJsonArray bigBuffer{QJsonObject{{"name", "p"},
                                           {"dtype", "float32"},
                                           {"shape", double(big / 4)},
                                           {"init", QJsonObject{{"kind", "constant"}, {"value", 1}}}}};
    const QJsonObject touchLaunch{{"kernel", "touch"}, {"grid", 1}, {"block", 32}, {"args", QJsonArray{"p"}}};
    std::vector<double> upMs, downMs;
    for (int i = 0; i < 5; ++i) {
        const RunResult r = runProject(project({}, bigBuffer, touchLaunch, {{"enabled", false}}), bigBuffers);
        if (i > 0) { // the first run maps and registers the memory
            upMs.push_back(r.uploadMs);
            downMs.push_back(r.downloadMs);
        }
    }
    // Fault to ready.
    HostBuffers small;
    const QJsonArray smallBuffer{QJsonObject{{"name", "p"}, {"dtype", "float32"}, {"shape", 1024}}};
    const QJsonObject faultLaunch{{"kernel", "fault"}, {"grid", 1}, {"block", 32}, {"args", QJsonArray{"p"}}};
    std::vector<double> reportMs, readyMs;
    for (int i = 0; i < 3; ++i) {
        QSignalSpy recovered(&runner, &Runner::recovered);
        QElapsedTimer t;
        t.start();
        const RunResult r = runProject(project({}, smallBuffer, faultLaunch, {{"enabled", false}}), small);
        reportMs.push_back(double(t.nsecsElapsed()) / 1e6);
        if (!r.error || !recovered.wait(5000)) {
            std::printf("bench_run: the fault was not reported or recovered\n");
            return 1;
        }
        readyMs.push_back(double(t.nsecsElapsed()) / 1e6);
    }

    // Raw driver calls in this process, same cubin.
    const auto loaded = DriverApi::instance();
    const DriverApi *api = *loaded;
    CUdevice d;
    CUcontext ctx;
    CHECK(api->cuDeviceGet(&d, 0));
    CHECK(api->cuDevicePrimaryCtxRetain(&ctx, d));
    CHECK(api->cuCtxSetCurrent(ctx));
    CUmodule mod;
    CHECK(api->cuModuleLoadData(&mod, compiled->cubin.constData()));
    CUfunction fEmpty, fSpin;
    CHECK(api->cuModuleGetFunction(&fEmpty, mod, "empty"));
    CHECK(api->cuModuleGetFunction(&fSpin, mod, "spin_ns"));
    CUstream s;
    CHECK(api->cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUevent e0, e1;
    CHECK(api->cuEventCreate(&e0, CU_EVENT_DEFAULT));
    CHECK(api->cuEventCreate(&e1, CU_EVENT_DEFAULT));
    // Launch cost on the host: batches of 200, as the worker's hot mode does.
    std::vector<double> rawLaunchUs;
    for (int rep = 0; rep < 200; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < 200; ++i) {
            api->cuLaunchKernel(fEmpty, 1, 1, 1, 32, 1, 1, 0, s, nullptr, nullptr);
        }
        const auto t1 = std::chrono::steady_clock::now();
        api->cuStreamSynchronize(s);
        rawLaunchUs.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 200);
    }
    const auto eventTime = [&](CUfunction f, void **params) {
        std::vector<double> v;
        for (int i = 0; i < 200; ++i) {
            api->cuEventRecord(e0, s);
            api->cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params, nullptr);
            api->cuEventRecord(e1, s);
            api->cuEventSynchronize(e1);
            float ms = 0;
            api->cuEventElapsedTime(&ms, e0, e1);
            v.push_back(ms);
        }
        return median(v);
    };
    const double rawEmptyMs = eventTime(fEmpty, nullptr);
    unsigned long long ns = 1000000;
    void *spinParams[] = {&ns};
    const double rawSpinMs = eventTime(fSpin, spinParams);
    void *host = nullptr;
    CUdeviceptr devBuf;
    CHECK(api->cuMemHostAlloc(&host, size_t(big), CU_MEMHOSTALLOC_PORTABLE));
    CHECK(api->cuMemAlloc(&devBuf, size_t(big)));
    std::vector<double> rawUp, rawDown;
    for (int i = 0; i < 5; ++i) {
        float ms = 0;
        api->cuEventRecord(e0, s);
        api->cuMemcpyHtoDAsync(devBuf, host, size_t(big), s);
        api->cuEventRecord(e1, s);
        api->cuEventSynchronize(e1);
        api->cuEventElapsedTime(&ms, e0, e1);
        rawUp.push_back(ms);
        api->cuEventRecord(e0, s);
        api->cuMemcpyDtoHAsync(host, devBuf, size_t(big), s);
        api->cuEventRecord(e1, s);
        api->cuEventSynchronize(e1);
        api->cuEventElapsedTime(&ms, e0, e1);
        rawDown.push_back(ms);
    }

    const double gb = double(big) / 1e9;
    std::printf("\nbench_run on %s (%s)\n\n", qPrintable(dev.name), qPrintable(dev.arch()));
    std::printf("| measurement | Kernel Playground | raw driver | ratio / difference | target |\n");
    std::printf("|---|---|---|---|---|\n");
    std::printf(
        "| host time per launch (empty kernel, batches of %d) | %.3f us | %.3f us | %+.3f us | within 0.5 us |\n",
        emptyHot.batch, emptyHot.hostLaunchUs, median(rawLaunchUs), emptyHot.hostLaunchUs - median(rawLaunchUs));
    std::printf("| empty kernel, cold, median | %.3f us (%d samples) | %.3f us (events around one launch) | %+.3f us | "
                "at most 3 us |\n",
                emptyCold.stats.medianMs * 1000, emptyCold.stats.count, rawEmptyMs * 1000,
                (emptyCold.stats.medianMs - rawEmptyMs) * 1000);
    std::printf("| empty kernel, hot batch, median per launch | %.3f us | | | |\n", emptyHot.stats.medianMs * 1000);
    std::printf("| 1 ms kernel, median | %.4f ms (noise %.2f %%) | %.4f ms | %.3f %% | within 1 %% |\n",
                spin.stats.medianMs, spin.stats.noise * 100, rawSpinMs, (spin.stats.medianMs / rawSpinMs - 1) * 100);
    std::printf("| upload 256 MiB | %.2f GB/s | %.2f GB/s (pinned) | %.1f %% | at least 95 %% |\n",
                gb / (median(upMs) / 1000), gb / (median(rawUp) / 1000), median(rawUp) / median(upMs) * 100);
    std::printf("| download 256 MiB | %.2f GB/s | %.2f GB/s (pinned) | %.1f %% | at least 95 %% |\n",
                gb / (median(downMs) / 1000), gb / (median(rawDown) / 1000), median(rawDown) / median(downMs) * 100);
    std::printf("| fault: run start to error reported | %.0f ms | | | |\n", median(reportMs));
    std::printf("| fault: run start to fresh worker ready | %.0f ms | | | under 1 s after the fault |\n",
                median(readyMs));
    std::printf("\ntiming notes: empty cold: %s; 1 ms: %s\n", qPrintable(emptyCold.timingNote),
                qPrintable(spin.timingNote));
    api->cuMemFreeHost(host);
    api->cuMemFree(devBuf);
    return 0;
}
