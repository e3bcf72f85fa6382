// Soak: many runs of a small project through one EngineClient, with a kernel
// fault every so often, as a lab machine sees over a day. Prints the worker's
// and this process's memory at the start and the end, the time per run in
// blocks of runs, and whether every result matched a CPU reference. Needs a
// GPU; asserts nothing (exit 1 only when a result is wrong).
//   bench_soak [runs=10000] [faultEvery=500]

#include "client/engineclient.h"
#include "compile/compiler.h"
#include "project/projectio.h"
#include "run/projectcompile.h"
#include "run/runner.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>

#include <cstdio>
#include <unistd.h>

using namespace Kp;

namespace {

const char *kSource = R"(
extern "C" __global__ void add(const float *a, const float *b, float *c, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
extern "C" __global__ void fault(const float *a, const float *b, float *c, int n)
{
    *(volatile float *)0x10 = a[0] + b[0] + c[0] + n;
}
)";

/** Resident memory of a process in KiB (VmRSS), or -1. */
qint64 rssKiB(qint64 pid)
{
    QFile f(QStringLiteral("/proc/%1/status").arg(pid));
    if (!f.open(QIODevice::ReadOnly)) {
        return -1;
    }
    for (const QByteArray &line : f.readAll().split('\n')) {
        if (line.startsWith("VmRSS:")) {
            return line.mid(6).trimmed().split(' ').first().toLongLong();
        }
    }
    return -1;
}

Project makeProject(const QString &kernel, int n, quint32 seed)
{
    const QJsonObject json{
        {"format", "kernel-playground-project"},
        {"version", 1},
        {"source", QJsonObject{{"inline", QString::fromLatin1(kSource)}}},
        {"scalars", QJsonArray{QJsonObject{{"name", "n"}, {"type", "int32"}, {"value", n}}}},
        {"buffers", QJsonArray{QJsonObject{{"name", "a"},
                                           {"dtype", "float32"},
                                           {"shape", QJsonArray{n}},
                                           {"init", QJsonObject{{"kind", "random"}, {"seed", qint64(seed)}}}},
                               QJsonObject{{"name", "b"},
                                           {"dtype", "float32"},
                                           {"shape", QJsonArray{n}},
                                           {"init", QJsonObject{{"kind", "random"}, {"seed", qint64(seed) + 1}}}},
                               QJsonObject{{"name", "c"}, {"dtype", "float32"}, {"shape", QJsonArray{n}}}}},
        {"launches", QJsonArray{QJsonObject{{"kernel", kernel},
                                            {"grid", "ceil_div(n, block.x)"},
                                            {"block", 256},
                                            {"args", QJsonArray{"a", "b", "c", "n"}}}}},
        {"timing", QJsonObject{{"enabled", false}}}};
    return *parseProject(QJsonDocument(json));
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const int runs = argc > 1 ? std::max(1, atoi(argv[1])) : 10000;
    const int faultEvery = argc > 2 ? std::max(2, atoi(argv[2])) : 500;
    EngineClient client;
    const Result<DeviceList> devices = client.listDevicesSync();
    if (!devices) {
        std::printf("bench_soak: no GPU (%s)\n", qPrintable(devices.error().message));
        return 0;
    }
    const DeviceInfo dev = devices->devices.first();
    Compiler compiler;
    const int n = 4096;
    const Project first = makeProject(QStringLiteral("add"), n, 1);
    const auto compiled = compiler.compile(compileRequestFor(first, dev.ccMajor, dev.ccMinor));
    if (!compiled || !compiled->ok) {
        std::printf("bench_soak: compile failed\n");
        return 1;
    }
    Runner runner(&client);
    HostBuffers buffers;
    const qint64 selfStart = rssKiB(getpid());
    qint64 workerStart = -1;
    qint64 workerLast = -1; ///< after the last run that did not fault (a fault ends its worker)
    int wrong = 0;
    int faults = 0;
    int faultsReported = 0;
    QElapsedTimer total;
    total.start();
    QElapsedTimer block;
    block.start();
    const int blockSize = std::max(1, runs / 10);
    std::printf("bench_soak on %s: %d runs of a %d-element add, a fault every %d runs\n\n", qPrintable(dev.name), runs,
                n, faultEvery);
    std::printf("| runs | ms per run (this block) | worker RSS | client RSS |\n|---|---|---|---|\n");
    for (int i = 1; i <= runs; ++i) {
        const bool fault = i % faultEvery == 0;
        // New inputs every run: a stale download would not match.
        const Project p = makeProject(fault ? QStringLiteral("fault") : QStringLiteral("add"), n, quint32(i));
        if (Status s = buffers.materialize(p); !s) {
            std::printf("bench_soak: %s\n", qPrintable(s.error().message));
            return 1;
        }
        const auto prepared = prepareRun(p, *compiled, buffers, 0);
        if (!prepared) {
            std::printf("bench_soak: %s\n", qPrintable(prepared.error().message));
            return 1;
        }
        const RunResult r = runner.runSync(*prepared, &buffers);
        if (workerStart < 0) {
            workerStart = rssKiB(client.workerPid());
        }
        if (fault) {
            ++faults;
            faultsReported += r.error && r.error->code == Error::Code::Fault ? 1 : 0;
        } else if (r.error) {
            ++wrong;
            std::printf("run %d failed: %s\n", i, qPrintable(r.error->message));
        } else {
            workerLast = rssKiB(client.workerPid());
            const auto *a = static_cast<const float *>(buffers.find("a")->memory.data());
            const auto *b = static_cast<const float *>(buffers.find("b")->memory.data());
            const auto *c = static_cast<const float *>(buffers.find("c")->memory.data());
            for (int k = 0; k < n; ++k) {
                if (c[k] != a[k] + b[k]) {
                    ++wrong;
                    std::printf("run %d: c[%d] = %g, expected %g\n", i, k, double(c[k]), double(a[k] + b[k]));
                    break;
                }
            }
        }
        if (i % blockSize == 0) {
            std::printf("| %d | %.3f | %lld KiB | %lld KiB |\n", i, double(block.nsecsElapsed()) / 1e6 / blockSize,
                        static_cast<long long>(workerLast), static_cast<long long>(rssKiB(getpid())));
            std::fflush(stdout);
            block.restart();
        }
    }
    std::printf("\nworker RSS: %lld KiB after the first run, %lld KiB after the last run that did not fault "
                "(a fresh worker after each fault)\n",
                static_cast<long long>(workerStart), static_cast<long long>(workerLast));
    std::printf("client RSS: %lld KiB at the start, %lld KiB at the end\n", static_cast<long long>(selfStart),
                static_cast<long long>(rssKiB(getpid())));
    std::printf("%d runs in %.1f s; faults reported as faults: %d of %d; wrong or failed results: %d\n", runs,
                total.elapsed() / 1000.0, faultsReported, faults, wrong);
    return wrong == 0 && faultsReported == faults ? 0 : 1;
}
