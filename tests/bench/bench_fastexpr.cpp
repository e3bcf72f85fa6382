// Buffer expression fills: the heat preset's initial temperature (1024x1024
// float32, presets/heat/heat.kpg) evaluated by muparser element by element
// and by the block evaluator (core/fastexpr), both on one thread in the same
// run, then fillBuffer as a project fill runs it (on its threads) and
// HostBuffers::materialize of the preset itself (shared memory included). Prints
// medians of 7 runs and the ratio; checks that both give the same bytes.
// Needs no GPU.
//   bench_fastexpr [expression]
//
// Target (issue 33): the fill at most 30 ms on a 16-core host, about 10x
// fewer nanoseconds per element than muparser.

#include "buffers/bufferinit.h"
#include "buffers/bufferspec.h"
#include "core/expression.h"
#include "core/fastexpr.h"
#include "project/projectio.h"
#include "run/runner.h"

#include <QCoreApplication>
#include <QElapsedTimer>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

using namespace Kp;

namespace {

constexpr qint64 kNx = 1024;
constexpr qint64 kNy = 1024;
constexpr qint64 kN = kNx * kNy;

double medianMs(const std::function<void()> &fn)
{
    std::vector<double> ms;
    for (int r = 0; r < 7; ++r) {
        QElapsedTimer t;
        t.start();
        fn();
        ms.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

struct Vars
{
    Expression expr;
    double *i, *x, *y, *z, *c;
};

bool setUp(Vars &v, const QString &text)
{
    v.expr.set(QStringLiteral("nx"), kNx);
    v.expr.set(QStringLiteral("ny"), kNy);
    v.expr.set(QStringLiteral("nz"), 1);
    v.expr.set(QStringLiteral("n"), kN);
    v.i = v.expr.variable(QStringLiteral("i"));
    v.x = v.expr.variable(QStringLiteral("x"));
    v.y = v.expr.variable(QStringLiteral("y"));
    v.z = v.expr.variable(QStringLiteral("z"));
    v.c = v.expr.variable(QStringLiteral("c"));
    const Status s = v.expr.parse(text, QStringLiteral("bench"));
    if (!s) {
        std::fprintf(stderr, "%s\n", qPrintable(s.error().message));
    }
    return s.ok();
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QString text = argc > 1 ? QString::fromLocal8Bit(argv[1])
                                  : QStringLiteral("100 * (((x - 300)^2 + (y - 400)^2 < 80^2) + ((x - 700)^2 + "
                                                   "(y - 600)^2 < 120^2))");
    std::printf("expression: %s\n%lld x %lld float32, %u hardware threads\n", qPrintable(text),
                static_cast<long long>(kNy), static_cast<long long>(kNx), std::thread::hardware_concurrency());

    Vars mu;
    if (!setUp(mu, text)) {
        return 1;
    }
    std::vector<float> byMuparser(kN);
    const double muMs = medianMs([&] {
        // As fillExpression did before the fast path: a division per element.
        for (qint64 e = 0; e < kN; ++e) {
            *mu.i = static_cast<double>(e);
            *mu.x = static_cast<double>(e % kNx);
            *mu.y = static_cast<double>(e / kNx);
            const Result<double> v = mu.expr.evaluate();
            storeComponent(DType::Float32, v ? *v : 0.0, &byMuparser[static_cast<std::size_t>(e)]);
        }
    });

    Vars fv;
    if (!setUp(fv, text)) {
        return 1;
    }
    const auto compiled = FastExpression::compile(fv.expr, {fv.i, fv.x, fv.y, fv.z, fv.c});
    if (!compiled) {
        std::printf("fast path refused: %s\n", qPrintable(compiled.error().message));
        return 1;
    }
    const FastExpression &fast = **compiled;
    std::vector<float> byFast(kN);
    const double fastMs = medianMs([&] {
        constexpr int kB = FastExpression::kBlock;
        FastExpression::Scratch scratch;
        std::vector<double> in(5 * kB, 0.0);
        std::vector<double> out(kB);
        const double *inputs[] = {&in[0], &in[kB], &in[2 * kB], &in[3 * kB], &in[4 * kB]};
        for (qint64 b = 0; b < kN; b += kB) {
            // Stepped, as fillExpression does (kB divides kNx).
            for (int k = 0; k < kB; ++k) {
                in[static_cast<std::size_t>(k)] = static_cast<double>(b + k);
                in[static_cast<std::size_t>(kB + k)] = static_cast<double>(b % kNx + k);
                in[static_cast<std::size_t>(2 * kB + k)] = static_cast<double>(b / kNx);
            }
            (void)fast.evaluate(inputs, kB, out.data(), scratch);
            for (int k = 0; k < kB; ++k) {
                byFast[static_cast<std::size_t>(b + k)] = static_cast<float>(out[static_cast<std::size_t>(k)]);
            }
        }
    });

    BufferSpec spec;
    spec.name = QStringLiteral("t");
    spec.dtype = DType::Float32;
    spec.shape = {kNy, kNx};
    spec.init.kind = BufferInit::Kind::Expression;
    spec.init.expression = text;
    std::vector<float> byFill(kN);
    Status fillStatus = Unit{};
    const double fillMs =
        medianMs([&] { fillStatus = fillBuffer(spec, byFill.data(), static_cast<qint64>(kN * 4), QString(), {}); });
    if (!fillStatus) {
        std::printf("fillBuffer failed: %s\n", qPrintable(fillStatus.error().message));
        return 1;
    }

    const QString heat = QStringLiteral(KPG_SOURCE_DIR "/presets/heat/heat.kpg");
    const Result<Project> project = loadProject(heat);
    if (!project) {
        std::printf("%s: %s\n", qPrintable(heat), qPrintable(project.error().message));
        return 1;
    }
    Status materialized = Unit{};
    const double materializeMs = medianMs([&] {
        HostBuffers buffers;
        materialized = buffers.materialize(*project);
    });
    if (!materialized) {
        std::printf("HostBuffers::materialize failed: %s\n", qPrintable(materialized.error().message));
        return 1;
    }

    const bool same = std::memcmp(byMuparser.data(), byFast.data(), kN * 4) == 0 &&
                      std::memcmp(byMuparser.data(), byFill.data(), kN * 4) == 0;
    std::printf("%-34s %9s %9s\n", "", "ms", "ns/elem");
    std::printf("%-34s %9.2f %9.2f\n", "muparser per element, 1 thread", muMs, muMs * 1e6 / kN);
    std::printf("%-34s %9.2f %9.2f\n", "fast (blocks), 1 thread", fastMs, fastMs * 1e6 / kN);
    std::printf("%-34s %9.2f %9.2f\n", "fillBuffer (fast, its threads)", fillMs, fillMs * 1e6 / kN);
    std::printf("%-34s %9.2f\n", "HostBuffers::materialize, heat.kpg", materializeMs);
    std::printf("ratio muparser / fast, 1 thread: %.1fx\n", muMs / fastMs);
    std::printf("same bytes: %s\n", same ? "yes" : "NO");
    return same ? 0 : 1;
}
