// Sweep overhead: `kpg sweep` over 64 points of a ~1 ms kernel, its wall time
// against the GPU time of the samples plus the compile time. Prints the
// numbers; asserts nothing. Needs a GPU.
//   bench_sweep
//
// Target: overhead (wall - samples - compile) / wall under 30 %.

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <cstdio>

namespace {

// Spins for `ns` nanoseconds of GPU time whatever the block; the block axis
// only changes the launch, so every point shares one compile.
const char *kSource = R"(
extern "C" __global__ void spin(unsigned long long ns, float *out)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
    if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = float(t - t0);
}
)";

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QString kpg = QCoreApplication::applicationDirPath() + QStringLiteral("/kpg");
    QTemporaryDir dir;
    const QJsonObject project{
        {"format", "kernel-playground-project"},
        {"version", 1},
        {"title", "1 ms spin"},
        {"source", QJsonObject{{"inline", QString::fromLatin1(kSource)}}},
        {"scalars", QJsonArray{QJsonObject{{"name", "ns"}, {"type", "uint64"}, {"value", 1000000}}}},
        {"buffers", QJsonArray{QJsonObject{{"name", "out"}, {"dtype", "float32"}, {"shape", QJsonArray{1}}}}},
        {"launches", QJsonArray{QJsonObject{{"kernel", "spin"},
                                            {"grid", QJsonArray{1}},
                                            {"block", QJsonArray{32}},
                                            {"args", QJsonArray{"ns", "out"}}}}}};
    const QString file = dir.filePath(QStringLiteral("spin.kpg"));
    QFile f(file);
    f.open(QIODevice::WriteOnly);
    f.write(QJsonDocument(project).toJson());
    f.close();

    const QString json = dir.filePath(QStringLiteral("sweep.json"));
    QProcess p;
    p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    QElapsedTimer wall;
    wall.start();
    p.start(kpg, {"sweep", file, "--axis", "block.x=16:1024:16", "--json", json});
    p.waitForFinished(-1);
    const double wallS = double(wall.nsecsElapsed()) / 1e9;
    if (p.exitCode() == 69) {
        std::printf("bench_sweep: no GPU\n");
        return 0;
    }
    QFile jf(json);
    if (!jf.open(QIODevice::ReadOnly)) {
        std::printf("bench_sweep: kpg sweep exited %d without JSON\n", p.exitCode());
        return 1;
    }
    const QJsonObject o = QJsonDocument::fromJson(jf.readAll()).object();
    double samplesS = 0, compileS = 0;
    int ok = 0, skipped = 0, samples = 0;
    for (const QJsonValue &v : o.value("points").toArray()) {
        const QJsonObject pt = v.toObject();
        ok += pt.value("status").toString() == QLatin1String("ok");
        skipped += pt.value("status").toString() == QLatin1String("skipped");
        compileS += pt.value("compile").toObject().value("compileMs").toDouble() / 1000;
        for (const QJsonValue &s : pt.value("timing").toObject().value("samplesMs").toArray()) {
            samplesS += s.toDouble() / 1000;
            ++samples;
        }
    }
    const double overhead = wallS - samplesS - compileS;
    std::printf("\nbench_sweep on %s: %d points (%d ok, %d skipped)\n\n", qPrintable(o.value("device").toString()),
                int(o.value("points").toArray().size()), ok, skipped);
    std::printf("| wall | GPU time of the samples | compile | overhead | overhead / wall | target |\n");
    std::printf("|---|---|---|---|---|---|\n");
    std::printf("| %.2f s | %.2f s (%d samples) | %.2f s | %.2f s | %.1f %% | under 30 %% |\n", wallS, samplesS,
                samples, compileS, overhead, overhead / wallS * 100);
    std::printf("\nkpg's own wall time: %.2f s\n", o.value("wallSeconds").toDouble());
    return 0;
}
