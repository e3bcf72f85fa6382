// A remote target against the local worker, in one run (docs/remote.md):
// vector add of 1M floats through ssh://127.0.0.1 (a throwaway sshd as in
// tst_remote) and locally: the time a run adds beyond the data transfer
// (target: at most 5 ms), the bytes each run sends and receives (a run with
// unchanged inputs sends none), upload throughput against scp of the same
// bytes to the same server (target: at least 80 %), the bytes per Play frame
// of the heat preset, and the kernel times on both. Prints numbers; asserts
// nothing. Needs a GPU and openssh-server; exits 77 (skip) without either.
//   bench_remote [rounds]

#include "buffers/sharedmemory.h"
#include "client/engineclient.h"
#include "compile/compiler.h"
#include "cuda/deviceinfo.h"
#include "project/projectio.h"
#include "run/projectcompile.h"
#include "run/runner.h"
#include "run/runrequest.h"
#include "sshserver.h"
#include "worker/protocol.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QRandomGenerator>
#include <QStandardPaths>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace Kp;

namespace {

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

double msSince(const QElapsedTimer &t)
{
    return double(t.nsecsElapsed()) / 1e6;
}

struct Series
{
    double firstMs = 0;           ///< the first run: every buffer travels (remote)
    std::vector<double> wallMs;   ///< the runs after it
    std::vector<double> kernelMs; ///< the step's event time of each
    qint64 firstUp = 0, firstDown = 0;
    qint64 steadyUp = 0, steadyDown = 0; ///< summed over the runs after the first
    double timedMedianMs = 0;            ///< a timed run's median
};

KpTest::SshServer *g_ssh = nullptr; ///< stopped by fail(), which exits without unwinding

[[noreturn]] void fail(const QString &what)
{
    if (g_ssh) {
        g_ssh->stop();
    }
    std::printf("bench_remote: %s\n", qPrintable(what));
    std::exit(1);
}

Series runProject(EngineClient &engine, const Project &project, const CompileResult &compiled, int device, int rounds)
{
    HostBuffers buffers;
    if (Status s = buffers.materialize(project); !s) {
        fail(s.error().message);
    }
    Runner runner(&engine);
    Series out;
    const auto once = [&](bool timed) {
        Project p = project;
        p.timing.enabled = timed;
        Result<PreparedRun> prepared = prepareRun(p, compiled, buffers, device);
        if (!prepared) {
            fail(prepared.error().message);
        }
        QElapsedTimer t;
        t.start();
        const RunResult r = runner.runSync(*prepared, &buffers);
        const double ms = msSince(t);
        if (r.error) {
            fail(r.error->message);
        }
        return std::pair{r, ms};
    };
    auto [first, firstMs] = once(false);
    out.firstMs = firstMs;
    out.firstUp = engine.lastUploadBytes();
    out.firstDown = engine.lastDownloadBytes();
    for (int i = 0; i < rounds; ++i) {
        auto [r, ms] = once(false);
        out.wallMs.push_back(ms);
        out.kernelMs.push_back(r.steps.isEmpty() ? 0 : r.steps.first().firstRunMs);
        out.steadyUp += engine.lastUploadBytes();
        out.steadyDown += engine.lastDownloadBytes();
    }
    out.timedMedianMs = once(true).first.stats.medianMs;
    return out;
}

// Upload throughput: 256 MiB of random bytes in a prepare request, against
// scp of the same bytes to the same server (less scp's own connection, timed
// with an empty file). Without a GPU the prepare fails after its upload,
// which is still timed.
void uploadThroughput(EngineClient &remote, KpTest::SshServer &ssh, int device)
{
    constexpr qint64 kBytes = qint64(256) << 20;
    Result<SharedMemory> big = SharedMemory::create(kBytes, QStringLiteral("bench"));
    if (!big) {
        fail(big.error().message);
    }
    QRandomGenerator(3).fillRange(static_cast<quint32 *>(big.value().data()), kBytes / 4);
    RunRequest prepare;
    prepare.device = device;
    prepare.buffers << RunBuffer{QStringLiteral("big"), big->path(), big->id(), kBytes, 1, true};
    QElapsedTimer up;
    up.start();
    const Reply prepared =
        remote.requestSync(Protocol::Type::Prepare, prepare.toPrepareVariant(), RequestOptions{600000, {}});
    const double upMs = msSince(up);
    if (!prepared && prepared.error().code != Error::Code::NoDriver && prepared.error().code != Error::Code::NoDevice) {
        fail(prepared.error().message);
    }
    if (remote.lastUploadBytes() != kBytes) {
        fail(QStringLiteral("the prepare request sent %1 bytes, not %2").arg(remote.lastUploadBytes()).arg(kBytes));
    }
    const QString file = ssh.path(QStringLiteral("upload.bin"));
    const QString empty = ssh.path(QStringLiteral("empty.bin"));
    {
        QFile f(file);
        f.open(QIODevice::WriteOnly);
        f.write(static_cast<const char *>(big->data()), kBytes);
        QFile e(empty);
        e.open(QIODevice::WriteOnly);
    }
    const auto scp = [&](const QString &what) {
        QProcess p;
        QElapsedTimer t;
        t.start();
        p.start(QStringLiteral("scp"),
                // -S: scp runs /usr/bin/ssh by default, not the ssh on PATH the target uses.
                {QStringLiteral("-q"), QStringLiteral("-S"), QStandardPaths::findExecutable(QStringLiteral("ssh")),
                 QStringLiteral("-F"), ssh.path(QStringLiteral("ssh_config")), QStringLiteral("-P"),
                 QString::number(ssh.port()), what, QStringLiteral("127.0.0.1:/dev/null")});
        if (!p.waitForFinished(600000) || p.exitCode() != 0) {
            fail(QStringLiteral("scp failed: ") + QString::fromLocal8Bit(p.readAllStandardError()));
        }
        return msSince(t);
    };
    const double scpEmptyMs = scp(empty);
    const double scpMs = scp(file) - scpEmptyMs;
    const double ours = double(kBytes) / (upMs / 1e3) / 1e6;
    const double theirs = double(kBytes) / (scpMs / 1e3) / 1e6;
    std::printf("upload of 256 MiB: %.0f MB/s in frames (%.0f ms, prepare included), scp %.0f MB/s (%.0f ms less "
                "%.0f ms of its connection): %.0f %% of scp (target at least 80 %%)\n",
                ours, upMs, theirs, scpMs, scpEmptyMs, 100.0 * ours / theirs);
    // What the ssh session's standard input carries at most (the channel the
    // frames take), for the record: the same bytes into cat on the server.
    const auto sshCat = [&](const QString &what) {
        QProcess p;
        p.setStandardInputFile(what);
        QElapsedTimer t;
        t.start();
        p.start(QStandardPaths::findExecutable(QStringLiteral("ssh")),
                {QStringLiteral("-F"), ssh.path(QStringLiteral("ssh_config")), QStringLiteral("-p"),
                 QString::number(ssh.port()), QStringLiteral("127.0.0.1"), QStringLiteral("cat > /dev/null")});
        if (!p.waitForFinished(600000) || p.exitCode() != 0) {
            fail(QStringLiteral("ssh cat failed: ") + QString::fromLocal8Bit(p.readAllStandardError()));
        }
        return msSince(t);
    };
    const double catMs = sshCat(file) - sshCat(empty);
    std::printf("  the same bytes through ssh's standard input into cat: %.0f MB/s (%.0f ms less its connection)\n",
                double(kBytes) / (catMs / 1e3) / 1e6, catMs);
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const int rounds = argc > 1 ? qMax(3, QString::fromLocal8Bit(argv[1]).toInt()) : 30;

    KpTest::SshServer ssh;
    g_ssh = &ssh;
    if (const QString why = ssh.start(); !why.isEmpty()) {
        std::printf("bench_remote: SKIP: %s\n", qPrintable(why));
        return 77;
    }
    qputenv("KPG_SSH_CONFIG", ssh.path(QStringLiteral("ssh_config")).toUtf8());
    WorkerLaunch there;
    there.target = ssh.target(EngineClient::workerPath());
    EngineClient remote(there);
    QElapsedTimer connect;
    connect.start();
    const Result<DeviceList> remoteDevices = remote.listDevicesSync();
    const double connectMs = msSince(connect);
    std::printf("remote target %s (connect and listDevices: %.0f ms)\n", qPrintable(there.target), connectMs);

    WorkerLaunch here;
    here.target = QStringLiteral("local");
    EngineClient local(here);
    const Result<DeviceList> devices = local.listDevicesSync();
    if (!devices || devices->devices.isEmpty()) {
        uploadThroughput(remote, ssh, 0);
        std::printf("bench_remote: SKIP (the runs): no GPU here (%s)\n",
                    devices ? "no device" : qPrintable(devices.error().message));
        return 77;
    }
    const DeviceInfo dev = devices->devices.first();
    if (!remoteDevices) {
        fail(remoteDevices.error().message);
    }

    // Vector add of 1M floats: the preset.
    Result<Project> vectorAdd = loadProject(QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg"));
    Result<Project> heat = loadProject(QStringLiteral(KPG_SOURCE_DIR "/presets/heat/heat.kpg"));
    if (!vectorAdd || !heat) {
        fail(!vectorAdd ? vectorAdd.error().message : heat.error().message);
    }
    Compiler compiler(Compiler::Config{QStringLiteral("-"), 0});
    const auto compiledAdd = compiler.compile(compileRequestFor(*vectorAdd, dev.ccMajor, dev.ccMinor));
    const auto compiledHeat = compiler.compile(compileRequestFor(*heat, dev.ccMajor, dev.ccMinor));
    if (!compiledAdd || !compiledAdd->ok || !compiledHeat || !compiledHeat->ok) {
        fail(QStringLiteral("a preset did not compile"));
    }

    const Series l = runProject(local, *vectorAdd, *compiledAdd, dev.ordinal, rounds);
    const Series r = runProject(remote, *vectorAdd, *compiledAdd, dev.ordinal, rounds);
    std::printf("on %s\n", qPrintable(dev.name));
    std::printf("vector add, 1M floats (3 buffers of 4 MiB), %d untimed runs after the first:\n", rounds);
    std::printf("  first run:  local %.2f ms, remote %.2f ms (sent %lld B, received %lld B)\n", l.firstMs, r.firstMs,
                static_cast<long long>(r.firstUp), static_cast<long long>(r.firstDown));
    std::printf("  next runs:  median local %.3f ms, remote %.3f ms: %.3f ms added per run beyond the data "
                "transfer (target at most 5 ms); sent %lld B, received %lld B in all\n",
                median(l.wallMs), median(r.wallMs), median(r.wallMs) - median(l.wallMs),
                static_cast<long long>(r.steadyUp), static_cast<long long>(r.steadyDown));
    std::printf("  kernel:     step event time median local %.4f ms, remote %.4f ms; timed median local %.4f ms, "
                "remote %.4f ms\n",
                median(l.kernelMs), median(r.kernelMs), l.timedMedianMs, r.timedMedianMs);

    // Heat's Play: each frame is a run of the same project; its inputs are
    // unchanged between frames, its field comes back.
    const Series heatRemote = runProject(remote, *heat, *compiledHeat, dev.ordinal, rounds);
    std::printf("heat, %d Play frames over ssh: sent %.0f B per frame, received %.0f B per frame (median frame "
                "%.2f ms)\n",
                rounds, double(heatRemote.steadyUp) / rounds, double(heatRemote.steadyDown) / rounds,
                median(heatRemote.wallMs));
    uploadThroughput(remote, ssh, dev.ordinal);

    return 0;
}
