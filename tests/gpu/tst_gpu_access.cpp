// The memory-access map on a GPU (docs/memory-access.md): sectors per request
// for strides whose answer is arithmetic, bank conflicts of a 32x32 tile
// against a padded one, the exact number of warp requests, and who touched a
// cell against the CPU's index arithmetic on random cells.

#include "access/accessrun.h"
#include "client/engineclient.h"
#include "project/projectio.h"
#include "testutil.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

using namespace Kp;

namespace {

const char *kKernels = R"(
extern "C" __global__ void strided(const float *in, float *out, int stride, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[(long long)i * stride];
    }
}

extern "C" __global__ void column(const float *in, float *out, int pad)
{
    __shared__ float tile[32 * 33];
    int x = threadIdx.x, y = threadIdx.y;
    tile[y * (32 + pad) + x] = in[y * 32 + x];
    __syncthreads();
    out[y * 32 + x] = tile[x * (32 + pad) + y];
}
)";

QJsonObject project(const QJsonArray &scalars, const QJsonArray &buffers, const QJsonObject &launch)
{
    return QJsonObject{{"format", "kernel-playground-project"},
                       {"version", 1},
                       {"title", "access test"},
                       {"source", QJsonObject{{"inline", QString::fromLatin1(kKernels)}}},
                       {"scalars", scalars},
                       {"buffers", buffers},
                       {"launches", QJsonArray{launch}}};
}

QJsonObject floats(const QString &name, qint64 n, bool random)
{
    return QJsonObject{{"name", name},
                       {"dtype", "float32"},
                       {"shape", QJsonArray{n}},
                       {"init", random ? QJsonObject{{"kind", "random"}, {"min", -1}, {"max", 1}, {"seed", 7}}
                                       : QJsonObject{{"kind", "zeros"}}}};
}

const SiteAccess *siteOn(const AccessReport &r, AccessSpace space, AccessKind kind)
{
    for (const SiteAccess &s : r.summary.sites) {
        if (s.site.space == space && s.site.kind == kind) {
            return &s;
        }
    }
    return nullptr;
}

} // namespace

class TestGpuAccess : public QObject
{
    Q_OBJECT

    EngineClient m_engine;

private Q_SLOTS:
    void initTestCase()
    {
        const Result<DeviceList> d = m_engine.listDevicesSync();
        if (!d || d->devices.isEmpty()) {
            QSKIP(qPrintable(QStringLiteral("no GPU: %1").arg(d ? QStringLiteral("no device") : d.error().message)));
        }
    }

    // out[i] = in[i * stride]: the load touches min(32, stride) * 4 sectors
    // per full warp (32 floats = 128 bytes = 4 sectors at stride 1), the store 4.
    void sectorsFollowTheStride_data()
    {
        QTest::addColumn<int>("stride");
        QTest::addColumn<double>("loadSectors");
        QTest::newRow("unit stride") << 1 << 4.0;
        QTest::newRow("stride 2") << 2 << 8.0;
        QTest::newRow("stride 8") << 8 << 32.0;
        QTest::newRow("stride 32") << 32 << 32.0;
    }
    void sectorsFollowTheStride()
    {
        QFETCH(int, stride);
        QFETCH(double, loadSectors);
        const qint64 n = 1 << 14;
        const QJsonObject json =
            project(QJsonArray{QJsonObject{{"name", "stride"}, {"type", "int32"}, {"value", stride}},
                               QJsonObject{{"name", "n"}, {"type", "int32"}, {"value", n}}},
                    QJsonArray{floats("in", n * stride, true), floats("out", n, false)},
                    QJsonObject{{"kernel", "strided"},
                                {"grid", QJsonArray{n / 256}},
                                {"block", QJsonArray{256}},
                                {"args", QJsonArray{"in", "out", "stride", "n"}}});
        const auto p = parseProject(QJsonDocument(json));
        QVERIFY2(p, p ? "" : qPrintable(p.error().message));
        const auto r = runAccessMap(*p, &m_engine, AccessRunOptions{});
        QVERIFY2(r, r ? "" : qPrintable(r.error().message));
        QCOMPARE(r->summary.truncated(), false);
        const SiteAccess *load = siteOn(*r, AccessSpace::Global, AccessKind::Load);
        const SiteAccess *store = siteOn(*r, AccessSpace::Global, AccessKind::Store);
        QVERIFY(load && store);
        // Every warp of the launch made each access once.
        QCOMPARE(load->requests, n / 32);
        QCOMPARE(store->requests, n / 32);
        QCOMPARE(load->sectorsPerRequest(), loadSectors);
        QCOMPARE(load->idealSectorsPerRequest(), 4.0);
        QCOMPARE(store->sectorsPerRequest(), 4.0);
        QCOMPARE(r->summary.buffers.value(QStringLiteral("out")).written, n);
        QCOMPARE(r->summary.buffers.value(QStringLiteral("in")).read, n);
        QCOMPARE(r->summary.outside, qint64(0));
    }

    // A 32x32 tile read by column: 32-way conflict; padded to 33: none.
    void bankConflictsOfATileColumn_data()
    {
        QTest::addColumn<int>("pad");
        QTest::addColumn<double>("wavefronts");
        QTest::newRow("32 wide") << 0 << 32.0;
        QTest::newRow("padded to 33") << 1 << 1.0;
    }
    void bankConflictsOfATileColumn()
    {
        QFETCH(int, pad);
        QFETCH(double, wavefronts);
        const QJsonObject json = project(QJsonArray{QJsonObject{{"name", "pad"}, {"type", "int32"}, {"value", pad}}},
                                         QJsonArray{floats("in", 1024, true), floats("out", 1024, false)},
                                         QJsonObject{{"kernel", "column"},
                                                     {"grid", QJsonArray{1}},
                                                     {"block", QJsonArray{32, 32}},
                                                     {"args", QJsonArray{"in", "out", "pad"}}});
        const auto p = parseProject(QJsonDocument(json));
        QVERIFY(p);
        const auto r = runAccessMap(*p, &m_engine, AccessRunOptions{});
        QVERIFY2(r, r ? "" : qPrintable(r.error().message));
        const SiteAccess *read = siteOn(*r, AccessSpace::Shared, AccessKind::Load);
        const SiteAccess *write = siteOn(*r, AccessSpace::Shared, AccessKind::Store);
        QVERIFY(read && write);
        QCOMPARE(read->requests, qint64(32));
        QCOMPARE(read->wavefrontsPerRequest(), wavefronts);
        QCOMPARE(write->wavefrontsPerRequest(), 1.0);
    }

    // vector_add: the exact count of requests, a cut trace that says so, and
    // who read a[i] and wrote c[i] for random i, from the CPU's index arithmetic.
    void vectorAddRequestsAndCells()
    {
        const auto p = loadProject(QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg"));
        QVERIFY(p);
        const qint64 n = 1048576;
        AccessRunOptions small;
        small.records = 100;
        const auto cut = runAccessMap(*p, &m_engine, small);
        QVERIFY2(cut, cut ? "" : qPrintable(cut.error().message));
        QCOMPARE(cut->summary.recorded, qint64(100));
        QCOMPARE(cut->summary.requested, 3 * n / 32);
        QVERIFY(cut->summary.truncated());

        const auto r = runAccessMap(*p, &m_engine, AccessRunOptions{});
        QVERIFY2(r, r ? "" : qPrintable(r.error().message));
        QCOMPARE(r->summary.recorded, 3 * n / 32);
        for (const SiteAccess &s : r->summary.sites) {
            QCOMPARE(s.sectorsPerRequest(), 4.0);
        }
        QRandomGenerator rng(20261205);
        for (int k = 0; k < 20; ++k) {
            const qint64 i = rng.bounded(n);
            const QList<CellTouch> t = touchesOf(r->summary, r->sites, r->trace, QStringLiteral("c"), i, r->blockDim());
            QCOMPARE(t.size(), 1);
            QCOMPARE(int(t.first().kind), int(AccessKind::Store));
            QCOMPARE(qint64(t.first().block[0]), i / 256);
            QCOMPARE(qint64(t.first().thread[0]), i % 256);
            const QList<CellTouch> a = touchesOf(r->summary, r->sites, r->trace, QStringLiteral("a"), i, r->blockDim());
            QCOMPARE(a.size(), 1);
            QCOMPARE(int(a.first().kind), int(AccessKind::Load));
        }
    }

    // kpg access as a user reads it: one reading per line of text (the report
    // was once printed as one line, its line feeds made '?'), the same
    // readings in the JSON, and a cell's writer by the index arithmetic.
    void kpgAccessOfTheNaiveTranspose()
    {
        QTemporaryDir dir;
        const QString json = dir.filePath(QStringLiteral("access.json"));
        const KpTest::Run k = KpTest::run(
            QStringLiteral("kpg"),
            {QStringLiteral("access"), QStringLiteral(KPG_SOURCE_DIR "/presets/transpose_naive/transpose_naive.kpg"),
             QStringLiteral("--json"), json, QStringLiteral("--cell"), QStringLiteral("out[601]")});
        QVERIFY2(k.exitCode == 0, qPrintable(k.err + k.out));
        const QStringList lines = k.out.split(QLatin1Char('\n'));
        QVERIFY2(lines.size() > 6, qPrintable(k.out));
        QVERIFY2(!k.out.contains(QLatin1Char('?')), qPrintable(k.out));
        QVERIFY2(k.out.contains(QStringLiteral("\n  line 14: out[x * height + y] = in[y * width + x];\n")),
                 qPrintable(k.out));
        QVERIFY2(k.out.contains(QStringLiteral("stride of 600 floats between neighbouring threads")),
                 qPrintable(k.out));
        QFile f(json);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject doc = QJsonDocument::fromJson(f.readAll()).object();
        QVERIFY2(!doc.isEmpty(), qPrintable(json));
        // out[601] = in[1 * 600 + ...]: x = 1, y = 1; block (0, 0), thread (1, 1).
        QVERIFY2(k.out.contains(QStringLiteral("written by block (0, 0, 0) thread (1, 1, 0) on line 14")),
                 qPrintable(k.out));
        const QJsonArray touches = doc.value("cell").toObject().value("touches").toArray();
        QCOMPARE(touches.size(), 1);
        QCOMPARE(touches.first().toObject().value("thread").toArray(), (QJsonArray{1, 1, 0}));
    }

    // The map needs no profiling permission: the same analysis as an
    // ordinary user (uid 65534 through setpriv, when the test runs as root,
    // as on a machine where only root may read the GPU's counters) gives the
    // same reading. The build and its libraries must be readable by that
    // user; where they are not, the test says what to open up and skips.
    void analysisRunsAsAnOrdinaryUser()
    {
        if (::geteuid() != 0) {
            QSKIP("not root: this test already runs as an ordinary user (kpgAccessOfTheNaiveTranspose)");
        }
        const QString setpriv = QStandardPaths::findExecutable(QStringLiteral("setpriv"));
        if (setpriv.isEmpty()) {
            QSKIP("setpriv (util-linux) is not on PATH");
        }
        const QStringList asNobody{QStringLiteral("--reuid=65534"), QStringLiteral("--regid=65534"),
                                   QStringLiteral("--clear-groups"), QStringLiteral("--")};
        const QString kpg = KpTest::program(QStringLiteral("kpg"));
        QProcess probe;
        probe.start(setpriv, asNobody + QStringList{kpg, QStringLiteral("--version")});
        QVERIFY(probe.waitForFinished(60000));
        if (probe.exitStatus() != QProcess::NormalExit || probe.exitCode() != 0) {
            QSKIP(qPrintable(QStringLiteral("uid 65534 cannot run %1 (make the build and its library folders "
                                            "readable: chmod o+rx along the path): %2")
                                 .arg(kpg, QString::fromLocal8Bit(probe.readAllStandardError()).trimmed())));
        }
        // A folder the ordinary user owns, for the project and the compile cache.
        QTemporaryDir dir;
        QVERIFY(::chown(qPrintable(dir.path()), 65534, 65534) == 0);
        for (const char *name : {"transpose_naive.kpg", "transpose_naive.cu", "reference.cu"}) {
            QVERIFY(QFile::copy(QStringLiteral(KPG_SOURCE_DIR "/presets/transpose_naive/") + QLatin1String(name),
                                dir.filePath(QLatin1String(name))));
        }
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        // Every folder the user writes is its own: under ctest the test's
        // runtime and temporary folders are root's (the worker's socket and
        // kpg-compiler's folder go there).
        for (const char *sub : {"run", "tmp"}) {
            QVERIFY(QDir(dir.path()).mkdir(QLatin1String(sub)));
            QVERIFY(::chown(qPrintable(dir.filePath(QLatin1String(sub))), 65534, 65534) == 0);
        }
        QVERIFY(QFile::setPermissions(dir.filePath(QStringLiteral("run")),
                                      QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
        env.insert(QStringLiteral("HOME"), dir.path());
        env.insert(QStringLiteral("XDG_RUNTIME_DIR"), dir.filePath(QStringLiteral("run")));
        env.insert(QStringLiteral("TMPDIR"), dir.filePath(QStringLiteral("tmp")));
        env.insert(QStringLiteral("XDG_CACHE_HOME"), dir.filePath(QStringLiteral("cache")));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.filePath(QStringLiteral("config")));
        env.insert(QStringLiteral("XDG_DATA_HOME"), dir.filePath(QStringLiteral("data")));
        env.insert(QStringLiteral("KPG_CACHE_DIR"), dir.filePath(QStringLiteral("cache")));
        p.setProcessEnvironment(env);
        p.start(setpriv, asNobody + QStringList{kpg, QStringLiteral("access"),
                                                dir.filePath(QStringLiteral("transpose_naive.kpg"))});
        QVERIFY(p.waitForFinished(120000));
        const QString out = QString::fromUtf8(p.readAllStandardOutput());
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable(err + out));
        QVERIFY2(out.contains(QStringLiteral("stride of 600 floats between neighbouring threads: 31.3 sectors per "
                                             "request, ideal 3.91")),
                 qPrintable(out));
    }

    // Nsight Compute's source page opens the user's file: NVRTC names the
    // program by the kernel file's absolute path (a relative name made ncu
    // say "Unable to open source file"), and the guard kernels stay out of
    // the profile.
    void ncuSourcePageShowsTheUsersLines()
    {
        const QString ncu = QStandardPaths::findExecutable(QStringLiteral("ncu"));
        if (ncu.isEmpty()) {
            QSKIP("ncu is not on PATH");
        }
        QTemporaryDir dir;
        for (const char *name : {"transpose_naive.kpg", "transpose_naive.cu", "reference.cu"}) {
            QVERIFY(QFile::copy(QStringLiteral(KPG_SOURCE_DIR "/presets/transpose_naive/") + QLatin1String(name),
                                dir.filePath(QLatin1String(name))));
        }
        const QString report = dir.filePath(QStringLiteral("profile"));
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(ncu, {"--target-processes", "all", "--section", "SourceCounters", "--import-source", "yes", "-o",
                      report, QCoreApplication::applicationDirPath() + QStringLiteral("/kpg"), "run",
                      dir.filePath(QStringLiteral("transpose_naive.kpg")), "--no-timing"});
        QVERIFY(p.waitForFinished(300000));
        const QString profiled = QString::fromLocal8Bit(p.readAll());
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable(profiled.right(3000)));
        QVERIFY2(profiled.contains(QLatin1String("transpose_naive")), qPrintable(profiled.right(3000)));
        QVERIFY2(!profiled.contains(QLatin1String("kpg_guard")), qPrintable(profiled.right(3000)));

        p.start(ncu, {"--import", report + QStringLiteral(".ncu-rep"), "--page", "source", "--print-source", "cuda",
                      "--csv"});
        QVERIFY(p.waitForFinished(120000));
        const QString page = QString::fromLocal8Bit(p.readAll());
        QVERIFY2(p.exitCode() == 0, qPrintable(page.right(3000)));
        QVERIFY2(page.contains(QLatin1String("out[x * height + y] = in[y * width + x];")), qPrintable(page.left(3000)));
        QVERIFY2(!page.contains(QLatin1String("Unable to open")), qPrintable(page.left(3000)));
    }
};

QTEST_GUILESS_MAIN(TestGpuAccess)
#include "tst_gpu_access.moc"
