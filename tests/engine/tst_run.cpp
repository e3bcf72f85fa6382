// The run path without a GPU: launch validation, occupancy, statistics,
// shared memory, argument binding against real NVRTC output, and the client's
// fault path with a real kpg-worker killed in the middle of a run.

#include "client/engineclient.h"
#include "compile/compiler.h"
#include "project/projectio.h"
#include "run/deviceglobals.h"
#include "run/projectcompile.h"
#include "run/runjson.h"
#include "run/runner.h"
#include "testutil.h"
#include "worker/protocol.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <cstring>

using namespace Kp;

namespace {

const char *kSource = R"(
__global__ void vector_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
__global__ void scale4(float4 *v, float s, unsigned char flag) { v[threadIdx.x].x *= s; }
__global__ void bytes(void *p, const char *q) {}
template<int N> __global__ void tiled(float *p) { p[threadIdx.x] = N; }
#include <cuda_fp16.h>
struct Params { float scale; int2 size; double bias[2]; };
__global__ void byValue(float2 f, half2 h, uint4 u, Params p, float *out) { out[0] = f.x + p.scale; }
__global__ void optional(float *out, const float *maybe = nullptr, int n = 16, float s = 1.5f, char4 c = {1, 2, 3, 4})
{
    out[0] = maybe ? maybe[0] : s * n;
}
)";

QJsonObject project(const QJsonArray &launches, const QJsonArray &extraBuffers = {})
{
    QJsonArray buffers{QJsonObject{{"name", "a"},
                                   {"dtype", "float32"},
                                   {"shape", 1000},
                                   {"init", QJsonObject{{"kind", "random"}, {"seed", 3}}}},
                       QJsonObject{{"name", "b"}, {"dtype", "float32"}, {"shape", 1000}},
                       QJsonObject{{"name", "c"}, {"dtype", "float32"}, {"shape", 1000}},
                       QJsonObject{{"name", "i"}, {"dtype", "int32"}, {"shape", 1000}},
                       QJsonObject{{"name", "d"}, {"dtype", "float64"}, {"shape", 1000}},
                       QJsonObject{{"name", "v"}, {"dtype", "float4"}, {"shape", 64}}};
    for (const QJsonValue &b : extraBuffers) {
        buffers.append(b);
    }
    return QJsonObject{{"format", "kernel-playground-project"},
                       {"version", 1},
                       {"source", QJsonObject{{"inline", QString::fromLatin1(kSource)}}},
                       {"scalars", QJsonArray{QJsonObject{{"name", "n"}, {"type", "int32"}, {"value", 1000}},
                                              QJsonObject{{"name", "s"}, {"type", "float32"}, {"value", 0.5}}}},
                       {"buffers", buffers},
                       {"launches", launches}};
}

QJsonObject step(const QString &kernel, const QJsonValue &args,
                 const QJsonValue &grid = QJsonArray{"ceil_div(n, block.x)"}, const QJsonValue &block = QJsonArray{256},
                 const QJsonValue &shared = 0)
{
    return QJsonObject{{"kernel", kernel}, {"grid", grid}, {"block", block}, {"args", args}, {"sharedBytes", shared}};
}

} // namespace

class TestRun : public QObject
{
    Q_OBJECT

private:
    CompileResult m_compiled;

    Result<PreparedRun> prepare(const QJsonObject &json, HostBuffers *keep = nullptr)
    {
        auto p = parseProject(QJsonDocument(json));
        if (!p) {
            return p.error();
        }
        HostBuffers local;
        HostBuffers &buffers = keep ? *keep : local;
        if (Status s = buffers.materialize(*p); !s) {
            return s.error();
        }
        // Template instances come from the project's name expressions.
        const CompileRequest req = compileRequestFor(*p);
        auto c = Compiler(Compiler::Config{QStringLiteral("-"), 0}).compile(req);
        if (!c) {
            return c.error();
        }
        return prepareRun(*p, *c, buffers, 0);
    }

private Q_SLOTS:
    void validateLaunch_data()
    {
        QTest::addColumn<QList<qint64>>("grid");
        QTest::addColumn<QList<qint64>>("block");
        QTest::addColumn<qint64>("shared");
        QTest::addColumn<QString>("message");
        QTest::newRow("ok") << QList<qint64>{1000, 1, 1} << QList<qint64>{256, 1, 1} << qint64(0) << QString();
        QTest::newRow("too many threads") << QList<qint64>{1, 1, 1} << QList<qint64>{64, 32, 1} << qint64(0)
                                          << "s: block (64, 32, 1) has 2048 threads; this device allows at most 1024 "
                                             "per block";
        QTest::newRow("block.z") << QList<qint64>{1, 1, 1} << QList<qint64>{1, 1, 65} << qint64(0)
                                 << "s: block.z is 65; this device allows at most 64";
        QTest::newRow("grid.y") << QList<qint64>{1, 70000, 1} << QList<qint64>{1, 1, 1} << qint64(0)
                                << "s: grid.y is 70000; this device allows at most 65535";
        QTest::newRow("grid zero") << QList<qint64>{0, 1, 1} << QList<qint64>{1, 1, 1} << qint64(0)
                                   << "s: grid.x is 0; it must be at least 1";
        QTest::newRow("kernel registers") << QList<qint64>{1, 1, 1} << QList<qint64>{768, 1, 1} << qint64(0)
                                          << "s: block (768, 1, 1) has 768 threads; this kernel uses 80 registers "
                                             "per thread, which allows at most 640 threads per block";
        QTest::newRow("shared") << QList<qint64>{1, 1, 1} << QList<qint64>{32, 1, 1} << qint64(232448)
                                << "s: shared memory per block is 233472 bytes (232448 dynamic + 1024 static); "
                                   "this device allows at most 232448";
    }

    void validateLaunch()
    {
        QFETCH(QList<qint64>, grid);
        QFETCH(QList<qint64>, block);
        QFETCH(qint64, shared);
        QFETCH(QString, message);
        LaunchLimits l; // H100/H200-like
        l.sharedPerBlockOptin = 232448;
        l.staticSharedBytes = 1024;
        if (QByteArray(QTest::currentDataTag()) == "kernel registers") {
            l.numRegs = 80;
            l.kernelMaxThreadsPerBlock = 640;
        }
        const Status s =
            Kp::validateLaunch(l, {grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, shared, "s");
        QCOMPARE(s.ok() ? QString() : s.error().message, message);
    }

    void occupancy_data()
    {
        QTest::addColumn<int>("regs");
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("shared");
        QTest::addColumn<int>("blocks");
        QTest::addColumn<QString>("limiter");
        QTest::newRow("full") << 16 << 256 << 0 << 8 << "warps per SM (block size)";
        QTest::newRow("registers") << 128 << 256 << 0 << 2 << "registers";
        QTest::newRow("shared") << 16 << 128 << 48 * 1024 << 4 << "shared memory";
        QTest::newRow("tiny blocks") << 16 << 32 << 0 << 32 << "blocks per SM (block size too small)";
    }

    void occupancy()
    {
        QFETCH(int, regs);
        QFETCH(int, threads);
        QFETCH(int, shared);
        QFETCH(int, blocks);
        QFETCH(QString, limiter);
        LaunchLimits l;
        l.numRegs = regs;
        const Occupancy o = estimateOccupancy(l, threads, shared);
        QCOMPARE(o.blocksPerSm, blocks);
        QCOMPARE(o.limiter, limiter);
        QCOMPARE(o.maxWarps, 64);
    }

    void statistics()
    {
        const TimingStats s = computeStats({3.0, 1.0, 2.0, 4.0});
        QCOMPARE(s.count, 4);
        QCOMPARE(s.medianMs, 2.5);
        QCOMPARE(s.minMs, 1.0);
        QCOMPARE(s.maxMs, 4.0);
        QCOMPARE(s.meanMs, 2.5);
        QVERIFY(qAbs(s.stdevMs - 1.2909944487) < 1e-9);
        QVERIFY(qAbs(s.noise - 1.2909944487 / 2.5) < 1e-9);
        QCOMPARE(computeStats({5.0}).medianMs, 5.0);
        QCOMPARE(computeStats({5.0}).noise, 0.0);
        QCOMPARE(computeStats({}).count, 0);
    }

    void sharedMemoryIsShared()
    {
        auto m = SharedMemory::create(10000, "t");
        KP_VERIFY_RESULT(m);
        QVERIFY(m->mappedSize() >= 10000 && m->mappedSize() % 4096 == 0);
        QVERIFY(std::all_of(static_cast<char *>(m->data()), static_cast<char *>(m->data()) + 10000,
                            [](char c) { return c == 0; }));
        std::memcpy(m->data(), "kernel", 6);
        // The worker maps the same pages by path.
        auto other = SharedMemory::open(m->path(), 10000);
        KP_VERIFY_RESULT(other);
        QCOMPARE(QByteArray(static_cast<const char *>(other->data()), 6), QByteArray("kernel"));
        std::memcpy(other->data(), "KERNEL", 6);
        QCOMPARE(QByteArray(static_cast<const char *>(m->data()), 6), QByteArray("KERNEL"));
        const auto missing = SharedMemory::open("/proc/self/fd/100000", 10);
        QVERIFY(!missing.ok());
        QVERIFY(missing.error().message.startsWith("cannot open shared memory /proc/self/fd/100000"));
    }

    void materializeKeepsOrRefills()
    {
        auto p = parseProject(QJsonDocument(project({step("vector_add", QJsonArray{"a", "b", "c", "n"})})));
        KP_VERIFY_RESULT(p);
        HostBuffers buffers;
        KP_VERIFY_RESULT(buffers.materialize(*p));
        HostBuffer *a = buffers.find("a");
        QVERIFY(a);
        QCOMPARE(a->byteSize(), qint64(4000));
        const QByteArray first(static_cast<const char *>(a->memory.data()), 4000);
        QVERIFY(first.count('\0') < 1000); // random, not zeros
        std::memset(a->memory.data(), 0, 4000);
        KP_VERIFY_RESULT(buffers.materialize(*p, false)); // kept: a run's results survive
        QCOMPARE(QByteArray(static_cast<const char *>(buffers.find("a")->memory.data()), 4000), QByteArray(4000, '\0'));
        KP_VERIFY_RESULT(buffers.materialize(*p, true)); // refilled from the same seed
        QCOMPARE(QByteArray(static_cast<const char *>(buffers.find("a")->memory.data()), 4000), first);
    }

    // Shapes first (a window's open), contents at the first use: a later
    // fill without reinit fills what Fill::ShapesOnly left, and keeps the rest.
    void shapesNowContentsLater()
    {
        auto p = parseProject(QJsonDocument(project({step("vector_add", QJsonArray{"a", "b", "c", "n"})})));
        KP_VERIFY_RESULT(p);
        HostBuffers filled;
        KP_VERIFY_RESULT(filled.materialize(*p));
        const QByteArray expected(static_cast<const char *>(filled.find("a")->memory.data()), 4000);
        QVERIFY(expected.count('\0') < 1000); // random, not zeros

        HostBuffers buffers;
        KP_VERIFY_RESULT(buffers.materialize(*p, true, HostBuffers::Fill::ShapesOnly));
        QCOMPARE(buffers.find("a")->byteSize(), qint64(4000));
        QVERIFY(!buffers.find("a")->filled);
        QVERIFY(buffers.find("c")->filled); // zeros: fresh memory already is
        QVERIFY(!buffers.allFilled());
        QCOMPARE(QByteArray(static_cast<const char *>(buffers.find("a")->memory.data()), 4000), QByteArray(4000, '\0'));
        // Checking shapes again fills nothing.
        KP_VERIFY_RESULT(buffers.materialize(*p, false, HostBuffers::Fill::ShapesOnly));
        QVERIFY(!buffers.allFilled());
        auto *c = static_cast<float *>(buffers.find("c")->memory.data());
        c[7] = 42.0f; // a result in a filled buffer, which a fill without reinit keeps
        KP_VERIFY_RESULT(buffers.materialize(*p, false));
        QVERIFY(buffers.allFilled());
        QCOMPARE(QByteArray(static_cast<const char *>(buffers.find("a")->memory.data()), 4000), expected);
        QCOMPARE(static_cast<const float *>(buffers.find("c")->memory.data())[7], 42.0f);
    }

    void prepareGoodRun()
    {
        const auto r = prepare(project({step("vector_add", QJsonArray{"a", "b", "c", "n"})}));
        KP_VERIFY_RESULT(r);
        const QVariantMap st = r->request.toVariant().value("steps").toList().first().toMap();
        QCOMPARE(st.value("grid").toList().first().toLongLong(), qint64(4)); // ceil(1000 / 256)
        QCOMPARE(st.value("block").toList().first().toLongLong(), qint64(256));
        QCOMPARE(st.value("function").toString(), QString("_Z10vector_addPKfS0_Pfi"));
        const QVariantList args = st.value("args").toList();
        QCOMPARE(args.size(), 4);
        QCOMPARE(args[2].toMap().value("buffer").toInt(), 2);
        int n = 0;
        const QByteArray nb = args[3].toMap().value("value").toByteArray();
        QCOMPARE(nb.size(), 4);
        std::memcpy(&n, nb.constData(), 4);
        QCOMPARE(n, 1000);
        QVERIFY(r->warnings.isEmpty());
    }

    void prepareByNameWithOffsetAndTemplate()
    {
        auto r = prepare(project({step("vector_add", QJsonObject{{"a", "a+4"}, {"b", "b"}, {"c", "c"}, {"n", 996}}),
                                  step("tiled<16>", QJsonArray{"c"}, QJsonArray{1}, QJsonArray{16})}));
        KP_VERIFY_RESULT(r);
        const QVariantList steps = r->request.toVariant().value("steps").toList();
        QCOMPARE(steps[0].toMap().value("args").toList()[0].toMap().value("offset").toLongLong(), qint64(16));
        QVERIFY(steps[1].toMap().value("function").toString().startsWith("_Z5tiledILi16EEvPf"));
    }

    // Vectors and structs by value, null pointers and default arguments: the bytes each argument becomes.
    void argumentValues_data()
    {
        QTest::addColumn<QJsonObject>("launch");
        QTest::addColumn<QStringList>("hex"); // per argument: its value bytes, or "buffer"
        const QJsonValue f2 = "float2 {1, -2}";
        const QJsonArray h2{1, -2};
        const QJsonArray u4{1, 2, 3, 4294967295.0};
        const QJsonValue params = "Params {0.5, {3, 4}, {1, -1}}";
        QTest::newRow("float2, half2, uint4 and a struct") << step("byValue", QJsonArray{f2, h2, u4, params, "c"})
                                                           << QStringList{"0000803f000000c0", "003c00c0",
                                                                          "0100000002000000030000"
                                                                          "00ffffffff",
                                                                          "0000003f"
                                                                          "00000000"
                                                                          "0300000004000000"
                                                                          "000000000000f03f"
                                                                          "000000000000f0bf",
                                                                          "buffer"};
        QTest::newRow("null and every default")
            << step("optional", QJsonArray{"c"})
            << QStringList{"buffer", "0000000000000000", "10000000", "0000c03f", "01020304"};
        QTest::newRow("null by name, 0 for a pointer, defaults between")
            << step("optional", QJsonObject{{"out", "c"}, {"maybe", QJsonValue::Null}, {"c", "char4 {-1, 0, 0, 1}"}})
            << QStringList{"buffer", "0000000000000000", "10000000", "0000c03f", "ff000001"};
        QTest::newRow("\"NULL\" and a braced number")
            << step("optional", QJsonArray{"c", "NULL", 3, 2})
            << QStringList{"buffer", "0000000000000000", "03000000", "00000040", "01020304"};
    }
    void argumentValues()
    {
        QFETCH(QJsonObject, launch);
        QFETCH(QStringList, hex);
        const auto r = prepare(project({launch}));
        KP_VERIFY_RESULT(r);
        const QVariantList args = r->request.toVariant().value("steps").toList().first().toMap().value("args").toList();
        QStringList got;
        for (const QVariant &a : args) {
            const QVariantMap m = a.toMap();
            got << (m.contains("value") ? QString::fromLatin1(m.value("value").toByteArray().toHex()) : "buffer");
        }
        QCOMPARE(got, hex);
    }

    void argumentValueErrors_data()
    {
        QTest::addColumn<QJsonObject>("launch");
        QTest::addColumn<QString>("message");
        const QJsonValue params = "Params {0.5, {3, 4}, {1, -1}}";
        QTest::newRow("number for a float2")
            << step("byValue", QJsonArray{1, "{1, 2}", "{1, 2, 3, 4}", params, "c"})
            << "launches[0].args[0] (parameter 'f', float2): float2 has 2 components (x, y); write one value for "
               "each: \"float2 {0, 0}\" or [0, 0]";
        QTest::newRow("three values for a float2")
            << step("byValue", QJsonArray{QJsonArray{1, 2, 3}, "{1, 2}", "{1, 2, 3, 4}", params, "c"})
            << "launches[0].args[0] (parameter 'f', float2): float2 has 2 components (x, y), the value gives 3";
        QTest::newRow("another vector type")
            << step("byValue", QJsonArray{"int2 {1, 2}", "{1, 2}", "{1, 2, 3, 4}", params, "c"})
            << "launches[0].args[0] (parameter 'f', float2): the value is written as int2 but the parameter is float2";
        QTest::newRow("fraction in a uint4")
            << step("byValue", QJsonArray{"{1, 2}", "{1, 2}", "{1, 2.5, 3, 4}", params, "c"})
            << "launches[0].args[2] (parameter 'u', uint4): component y of uint4 is 2.5, not a whole number";
        QTest::newRow("struct with too few values")
            << step("byValue", QJsonArray{"{1, 2}", "{1, 2}", "{1, 2, 3, 4}", "Params {1, 2}", "c"})
            << "launches[0].args[3] (parameter 'p', Params): Params takes 5 values in declaration order: scale "
               "(float32), size.x (int32), size.y (int32), bias[0] (float64), bias[1] (float64); the value gives 2";
        QTest::newRow("a buffer for a struct")
            << step("byValue", QJsonArray{"{1, 2}", "{1, 2}", "{1, 2, 3, 4}", "a", "c"})
            << "launches[0].args[3] (parameter 'p', Params): buffer 'a' bound to a Params passed by value; write its "
               "value instead, e.g. \"Params {...}\"";
        QTest::newRow("null for an int")
            << step("optional", QJsonArray{"c", "a", QJsonValue::Null})
            << "launches[0].args[2] (parameter 'n', int): null is a null pointer, but this "
               "parameter is int, passed by value";
        QTest::newRow("too many arguments") << step("optional", QJsonArray{"c", "a", 1, 2, "{1,2,3,4}", 5})
                                            << "launches[0].args: kernel 'optional' takes 5 parameters (out, maybe, n, "
                                               "s, c); 6 are bound";
        QTest::newRow("required one missing") << step("optional", QJsonArray{})
                                              << "launches[0].args: kernel 'optional' takes 5 parameters (out, maybe, "
                                                 "n, s, c); 0 are bound";
    }
    void argumentValueErrors()
    {
        QFETCH(QJsonObject, launch);
        QFETCH(QString, message);
        const auto r = prepare(project({launch}));
        QVERIFY(!r);
        QCOMPARE(r.error().message, message);
    }

    void resetBeforeEachSample()
    {
        QJsonObject json = project({step("vector_add", QJsonArray{"a", "b", "c", "n"})});
        json.insert("timing", QJsonObject{{"resetBeforeEachSample", QJsonArray{"c", "a"}}});
        const auto r = prepare(json);
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->request.timing.resetBuffers, (QList<int>{2, 0}));
        // Through the wire form the worker reads.
        QCOMPARE(RunRequest::fromVariant(r->request.toVariant()).timing.resetBuffers, (QList<int>{2, 0}));
        // An ordinary run's body does not change.
        const auto plain = prepare(project({step("vector_add", QJsonArray{"a", "b", "c", "n"})}));
        KP_VERIFY_RESULT(plain);
        QVERIFY(!plain->request.toVariant().value("timing").toMap().contains("resetBuffers"));

        json.insert("timing", QJsonObject{{"resetBeforeEachSample", QJsonArray{"c", "q"}}});
        const auto bad = prepare(json);
        QVERIFY(!bad);
        QCOMPARE(bad.error().message, QString("timing.resetBeforeEachSample[1]: unknown buffer 'q'; buffers: a, b, c, "
                                              "i, d, v"));
    }

    void cooperativeLimit_data()
    {
        QTest::addColumn<QList<qint64>>("grid");
        QTest::addColumn<int>("perSm");
        QTest::addColumn<int>("sms");
        QTest::addColumn<QString>("message");
        QTest::newRow("fits exactly") << QList<qint64>{1056, 1, 1} << 8 << 132 << QString();
        QTest::newRow("4096 of 1056")
            << QList<qint64>{4096, 1, 1} << 8 << 132
            << "step 1 ('reduce'): grid of 4096 blocks; at most 1056 can be resident for a cooperative launch (8 per "
               "SM x 132 SMs at this block size and shared memory); launch at most 1056 blocks and loop over the "
               "rest (grid-stride)";
        QTest::newRow("2-D grid counts every block")
            << QList<qint64>{64, 32, 1} << 4 << 132
            << "step 1 ('reduce'): grid of 2048 blocks; at most 528 can be resident for a cooperative launch (4 per SM "
               "x 132 SMs at this block size and shared memory); launch at most 528 blocks and loop over the rest "
               "(grid-stride)";
        QTest::newRow("not one block fits")
            << QList<qint64>{1, 1, 1} << 0 << 132
            << "step 1 ('reduce'): grid of 1 blocks; at most 0 can be resident for a cooperative launch (0 per SM x "
               "132 SMs at this block size and shared memory); not one block fits: use fewer threads or less shared "
               "memory";
    }
    void cooperativeLimit()
    {
        QFETCH(QList<qint64>, grid);
        QFETCH(int, perSm);
        QFETCH(int, sms);
        QFETCH(QString, message);
        const Status s = cooperativeGridError("step 1 ('reduce')", Dim3{grid[0], grid[1], grid[2]}, perSm, sms);
        QCOMPARE(s.ok() ? QString() : s.error().message, message);
    }

    void cooperativeStep()
    {
        QJsonObject launch = step("vector_add", QJsonArray{"a", "b", "c", "n"});
        launch.insert("cooperative", true);
        const auto r = prepare(project({launch}));
        KP_VERIFY_RESULT(r);
        QVERIFY(r->request.steps.first().cooperative);
        QVERIFY(RunRequest::fromVariant(r->request.toVariant()).steps.first().cooperative);
        launch.insert("cooperative", "yes");
        const auto bad = prepare(project({launch}));
        QVERIFY(!bad);
        QCOMPARE(bad.error().message, QString("launches[0].cooperative: expected true or false, got a string"));
    }

    // __constant__/__device__ variables nothing fills: found in real NVRTC PTX, per kernel.
    void unfilledGlobals_data()
    {
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<QString>("unfilled"); // name:const|device, ...
        QTest::newRow("constant array read by index") << "_Z4convPf"
                                                      << "c_Kernel:const";
        QTest::newRow("device counter and an inlined helper's constant") << "_Z5countPf"
                                                                         << "c_Kernel:const counter:device";
        QTest::newRow("printf's format string is no variable") << "_Z5cleanPf"
                                                               << "";
    }
    void unfilledGlobals()
    {
        QFETCH(QString, kernel);
        QFETCH(QString, unfilled);
        CompileRequest req;
        req.source = R"(
__constant__ float c_Kernel[17];
__constant__ float c_init[2] = {1, 2};
__device__ int counter;
__device__ float helperRead(int i) { return c_Kernel[i]; }
__global__ void conv(float *o) { o[threadIdx.x] = c_Kernel[threadIdx.x] + c_init[0]; }
__global__ void count(float *o) { atomicAdd(&counter, 1); o[0] = helperRead(1); }
__global__ void clean(float *o) { o[0] = 1; printf("x\n"); }
)";
        const auto c = Compiler(Compiler::Config{QStringLiteral("-"), 0}).compile(req);
        KP_VERIFY_RESULT(c);
        QVERIFY2(c->ok, qPrintable(c->log));
        QStringList got;
        for (const PtxGlobal &g : unfilledGlobalsUsedBy(c->ptx, kernel)) {
            got << g.name + (g.constant ? ":const" : ":device");
        }
        QCOMPARE(got.join(' '), unfilled);
        QCOMPARE(ptxGlobals(c->ptx).size(), 3); // c_Kernel, c_init (initialised), counter
    }

    // The scans are kept for the last few modules (a Play frame asks them of
    // the same PTX every time): many modules asked in turn, more than are
    // kept, each gives its own answer, never another module's.
    void globalsOfManyModulesInTurn()
    {
        const auto module = [](int m) {
            QByteArray ptx = ".version 8.0\n.target sm_90\n.address_size 64\n";
            for (int g = 0; g <= m; ++g) {
                ptx += QByteArray(".global .align 4 .u32 counter") + QByteArray::number(g) + ";\n";
            }
            ptx += QByteArray(".const .align 4 .b8 table[") + QByteArray::number(4 * (m + 1)) + "] = {0};\n";
            ptx += ".visible .entry k(\n.param .u64 k_param_0\n)\n{\n";
            ptx += QByteArray("\tld.global.u32 %r1, [counter") + QByteArray::number(m) + "];\n\tret;\n}\n";
            return ptx;
        };
        for (int round = 0; round < 3; ++round) {
            for (int m = 0; m < 7; ++m) {
                const QByteArray ptx = module(m);
                const QList<PtxGlobal> globals = ptxGlobals(ptx);
                QCOMPARE(globals.size(), m + 2); // counter0..counterM, table
                QCOMPARE(globals.last().name, QStringLiteral("table"));
                QCOMPARE(globals.last().bytes, qint64(4 * (m + 1)));
                QVERIFY(globals.last().initialised);
                const QList<PtxGlobal> used = unfilledGlobalsUsedBy(ptx, QStringLiteral("k"));
                QCOMPARE(used.size(), 1);
                QCOMPARE(used.first().name, QStringLiteral("counter%1").arg(m));
            }
        }
    }

    void unfilledGlobalWarning()
    {
        QJsonObject json = project({step("useTable", QJsonArray{"c"}, QJsonArray{1}, QJsonArray{1})});
        json.insert("source", QJsonObject{{"inline", "__constant__ float table[4];\n"
                                                     "__global__ void useTable(float *o) { o[0] = table[1]; }\n"}});
        const auto r = prepare(json);
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->warnings, QStringList{"kernel 'useTable' uses __constant__ variable 'table', which has no "
                                          "initializer and which no buffer fills: it holds zeros (a buffer with "
                                          "\"symbol\": \"table\" fills it)"});
    }

    // A buffer with "symbol" is the module's variable: the name and the size
    // are checked from the PTX without a GPU, and the warning stops.
    void deviceGlobalBuffers_data()
    {
        QTest::addColumn<QJsonObject>("buffer");
        QTest::addColumn<QString>("symbol");  // the PTX name sent to the worker; empty: an error
        QTest::addColumn<QString>("message"); // the error, or the warnings joined
        QTest::newRow("constant array filled")
            << QJsonObject{{"name", "w"}, {"dtype", "float32"}, {"shape", QJsonArray{4}}, {"symbol", "table"}}
            << "table"
            << "";
        QTest::newRow("vector dtype of the same bytes")
            << QJsonObject{{"name", "w"}, {"dtype", "float2"}, {"shape", QJsonArray{2}}, {"symbol", "table"}} << "table"
            << "";
        QTest::newRow("device scalar")
            << QJsonObject{{"name", "cnt"}, {"dtype", "uint32"}, {"shape", QJsonArray{1}}, {"symbol", "counter"}}
            << "counter"
            << "kernel 'useTable' uses __constant__ variable 'table', which has no initializer and which no buffer "
               "fills: it holds zeros (a buffer with \"symbol\": \"table\" fills it)";
        QTest::newRow("namespaced variable mangled")
            << QJsonObject{{"name", "nsd"}, {"dtype", "float64"}, {"shape", QJsonArray{2}}, {"symbol", "ns::d"}}
            << "_ZN2ns1dE"
            << "kernel 'useTable' uses __constant__ variable 'table', which has no initializer and which no buffer "
               "fills: it holds zeros (a buffer with \"symbol\": \"table\" fills it)";
        QTest::newRow("misspelt name lists the variables")
            << QJsonObject{{"name", "w"}, {"dtype", "float32"}, {"shape", QJsonArray{4}}, {"symbol", "tabel"}} << ""
            << "buffers[6].symbol: 'tabel' is not a __constant__ or __device__ variable of the compiled module; its "
               "variables: __constant__ variable 'table' (16 bytes), __device__ variable 'counter' (4 bytes), "
               "__device__ variable '_ZN2ns1dE' (16 bytes)";
        QTest::newRow("too few elements")
            << QJsonObject{{"name", "w"}, {"dtype", "float32"}, {"shape", QJsonArray{3}}, {"symbol", "table"}} << ""
            << "buffers[6].shape: buffer 'w' holds 12 bytes (3 x float32) but __constant__ variable 'table' has "
               "16 bytes; a shape of 4 elements fits it";
        QTest::newRow("no whole number of elements")
            << QJsonObject{{"name", "w"}, {"dtype", "float3"}, {"shape", QJsonArray{1}}, {"symbol", "table"}} << ""
            << "buffers[6].shape: buffer 'w' holds 12 bytes (1 x float3) but __constant__ variable 'table' has 16 "
               "bytes; no whole number of float3 elements fits it";
    }
    void deviceGlobalBuffers()
    {
        QFETCH(QJsonObject, buffer);
        QFETCH(QString, symbol);
        QFETCH(QString, message);
        QJsonObject json = project({step("useTable", QJsonArray{"c"}, QJsonArray{1}, QJsonArray{1})});
        json.insert("source",
                    QJsonObject{{"inline", "__constant__ float table[4];\n"
                                           "__device__ unsigned counter;\n"
                                           "namespace ns { __device__ double d[2]; }\n"
                                           "__global__ void useTable(float *o) { o[0] = table[1]; }\n"
                                           "__global__ void other(float *o) { o[0] = counter + ns::d[1]; }\n"}});
        QJsonArray buffers = json.value("buffers").toArray();
        buffers.append(buffer);
        json.insert("buffers", buffers);
        const auto r = prepare(json);
        if (symbol.isEmpty()) {
            QVERIFY(!r);
            QCOMPARE(r.error().message, message);
            QCOMPARE(r.error().path, message.section(':', 0, 0));
            return;
        }
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->request.buffers.last().symbol, symbol);
        QStringList unfilled;
        for (const QString &w : r->warnings) {
            if (w.contains("no buffer fills")) {
                unfilled << w;
            }
        }
        QCOMPARE(unfilled.join('\n'), message);
        // It travels to the worker.
        QCOMPARE(RunRequest::fromVariant(r->request.toVariant()).buffers.last().symbol, symbol);
    }

    // Toolkit headers declare hundreds of globals of their own; the message
    // lists the source's.
    void misspeltGlobalAmongHeaderGlobals()
    {
        QJsonObject json = project({step("conv", QJsonArray{"c"}, QJsonArray{1}, QJsonArray{1})});
        json.insert("source", QJsonObject{{"inline", "#include <cooperative_groups.h>\n"
                                                     "namespace cg = cooperative_groups;\n"
                                                     "__constant__ float c_Kernel[17];\n"
                                                     "__global__ void conv(float *o)\n"
                                                     "{ cg::this_thread_block().sync(); o[0] = c_Kernel[1]; }\n"}});
        QJsonArray buffers = json.value("buffers").toArray();
        buffers.append(QJsonObject{{"name", "w"}, {"dtype", "float32"}, {"shape", 17}, {"symbol", "c_Kernal"}});
        json.insert("buffers", buffers);
        const auto r = prepare(json);
        QVERIFY(!r);
        QCOMPARE(r.error().message, QString("buffers[6].symbol: 'c_Kernal' is not a __constant__ or __device__ "
                                            "variable of the compiled module; its variables: __constant__ variable "
                                            "'c_Kernel' (68 bytes)"));
    }

    void ptxGlobalSourceNames_data()
    {
        QTest::addColumn<QString>("ptx");
        QTest::addColumn<QString>("source");
        QTest::newRow("plain") << "c_Kernel"
                               << "c_Kernel";
        QTest::newRow("file static") << "_ZL5table"
                                     << "table";
        QTest::newRow("namespaced") << "_ZN2ns1dE"
                                    << "d";
        QTest::newRow("nested namespaces") << "_ZN1a1b5countE"
                                           << "count";
        QTest::newRow("template argument kept") << "_ZN4cuda3std3__417integral_constantIbLb0EE5valueE"
                                                << "_ZN4cuda3std3__417integral_constantIbLb0EE5valueE";
        QTest::newRow("length past the end") << "_ZN9abcE"
                                             << "_ZN9abcE";
    }
    void ptxGlobalSourceNames()
    {
        QFETCH(QString, ptx);
        QFETCH(QString, source);
        QCOMPARE(ptxGlobalSourceName(ptx), source);
    }

    void prepareErrors_data()
    {
        QTest::addColumn<QJsonObject>("launch");
        QTest::addColumn<QString>("message");
        QTest::newRow("count") << step("vector_add", QJsonArray{"a", "b", "c"})
                               << "launches[0].args: kernel 'vector_add' takes 4 parameters (a, b, c, n); 3 are bound";
        QTest::newRow("scalar for pointer")
            << step("vector_add", QJsonArray{"n", "b", "c", "n"})
            << "launches[0].args[0] (parameter 'a', const float *): a pointer parameter needs a buffer; got scalar 'n'";
        QTest::newRow("buffer for value")
            << step("vector_add", QJsonArray{"a", "b", "c", "a"})
            << "launches[0].args[3] (parameter 'n', int): buffer 'a' bound to a parameter passed by value; the "
               "kernel needs a scalar or a number here";
        QTest::newRow("dtype size") << step("vector_add", QJsonArray{"d", "b", "c", "n"})
                                    << "launches[0].args[0] (parameter 'a', const float *): buffer 'd' holds float64 "
                                       "(8 bytes each) but the kernel expects float (4 bytes each); change the "
                                       "buffer's dtype to float32";
        QTest::newRow("offset outside") << step("vector_add", QJsonArray{"a+1000", "b", "c", "n"})
                                        << "launches[0].args[0] (parameter 'a', const float *): offset 1000 is "
                                           "outside buffer 'a' (1000 elements)";
        QTest::newRow("misaligned vector offset")
            << step("scale4", QJsonArray{"v", "s", 1}, QJsonArray{1}, QJsonArray{64})
            << QString(); // float4 buffer, offset 0: fine
        QTest::newRow("not a whole number") << step("vector_add", QJsonArray{"a", "b", "c", 2.5})
                                            << "launches[0].args[3] (parameter 'n', int): 2.5 is not a whole number";
        QTest::newRow("does not fit") << step("scale4", QJsonArray{"v", "s", 300}, QJsonArray{1}, QJsonArray{64})
                                      << "launches[0].args[2] (parameter 'flag', unsigned char): 300 does not fit "
                                         "in unsigned char";
        QTest::newRow("unknown kernel") << step("vector_sub", QJsonArray{"a"})
                                        << "launches[0].kernel: no kernel 'vector_sub' in the source; kernels: "
                                           "vector_add, scale4, bytes, tiled, byValue, optional";
        QTest::newRow("bare template") << step("tiled", QJsonArray{"a"})
                                       << "launches[0].kernel: 'tiled' is a template; name an instance such as "
                                          "'tiled<...>' with its template arguments";
        QTest::newRow("grid fraction") << step("vector_add", QJsonArray{"a", "b", "c", "n"}, QJsonArray{"n / 3"})
                                       << "launches[0].grid[0]: 'n / 3' gives 333.333; expected a whole number (use "
                                          "ceil_div(a, b) to round up)";
        QTest::newRow("grid unknown variable")
            << step("vector_add", QJsonArray{"a", "b", "c", "n"}, QJsonArray{"ceil_div(m, block.x)"})
            << "launches[0].grid[0]: unknown variable 'm' in 'ceil_div(m, block.x)'; known: a.n, a.nx, a.ny, a.nz, "
               "b.n, b.nx, b.ny, b.nz, "
               "block.x, block.y, block.z, c.n, c.nx, c.ny, c.nz, d.n, d.nx, d.ny, d.nz, i.n, i.nx, i.ny, i.nz, n, s, "
               "v.n, v.nx, v.ny, v.nz";
        QTest::newRow("block zero") << step("vector_add", QJsonArray{"a", "b", "c", "n"}, QJsonArray{1},
                                            QJsonArray{"n - 1000"})
                                    << "launches[0].block[0]: 'n - 1000' gives 0; expected 1 to 2147483647";
        // Past 2^63 a double -> integer conversion is undefined; it read -9223372036854775808.
        QTest::newRow("grid 2^63") << step("vector_add", QJsonArray{"a", "b", "c", "n"}, QJsonArray{"2^63"})
                                   << "launches[0].grid[0]: '2^63' is too large (at most 2147483647); it gives "
                                      "9.22337e+18";
        QTest::newRow("grid floor(1e300)")
            << step("vector_add", QJsonArray{"a", "b", "c", "n"}, QJsonArray{"floor(1e300)"})
            << "launches[0].grid[0]: 'floor(1e300)' is too large (at most 2147483647); it gives 1e+300";
        QTest::newRow("grid 2^31") << step("vector_add", QJsonArray{"a", "b", "c", "n"}, QJsonArray{"2^31"})
                                   << "launches[0].grid[0]: '2^31' is too large (at most 2147483647); it gives "
                                      "2.14748e+09";
        QTest::newRow("block -2^63") << step("vector_add", QJsonArray{"a", "b", "c", "n"}, QJsonArray{1},
                                             QJsonArray{"-2^63"})
                                     << "launches[0].block[0]: '-2^63' gives -9.22337e+18; expected 1 to 2147483647";
        QTest::newRow("unknown param name")
            << step("vector_add", QJsonObject{{"a", "a"}, {"b", "b"}, {"c", "c"}, {"count", "n"}})
            << "launches[0].args.count: kernel 'vector_add' has no parameter 'count'; its parameters: a, b, c, n";
    }

    void prepareErrors()
    {
        QFETCH(QJsonObject, launch);
        QFETCH(QString, message);
        const auto r = prepare(project({launch}));
        QCOMPARE(r.ok() ? QString() : r.error().message, message);
    }

    void prepareErrorPaths_data()
    {
        QTest::addColumn<QJsonObject>("launch");
        QTest::addColumn<QString>("path");
        QTest::newRow("count") << step("vector_add", QJsonArray{"a", "b", "c"}) << "launches[0].args";
        QTest::newRow("scalar for pointer")
            << step("vector_add", QJsonArray{"n", "b", "c", "n"}) << "launches[0].args[0]";
        QTest::newRow("does not fit") << step("scale4", QJsonArray{"v", "s", 300}, QJsonArray{1}, QJsonArray{64})
                                      << "launches[0].args[2]";
        QTest::newRow("unknown kernel") << step("vector_sub", QJsonArray{"a"}) << "launches[0].kernel";
        QTest::newRow("grid fraction") << step("vector_add", QJsonArray{"a", "b", "c", "n"}, QJsonArray{"n / 3"})
                                       << "launches[0].grid[0]";
        QTest::newRow("grid unknown variable")
            << step("vector_add", QJsonArray{"a", "b", "c", "n"}, QJsonArray{1, "m"}) << "launches[0].grid[1]";
        QTest::newRow("block zero") << step("vector_add", QJsonArray{"a", "b", "c", "n"}, QJsonArray{1},
                                            QJsonArray{"n - 1000"})
                                    << "launches[0].block[0]";
        QTest::newRow("grid 2^63") << step("vector_add", QJsonArray{"a", "b", "c", "n"}, QJsonArray{"2^63"})
                                   << "launches[0].grid[0]";
        QTest::newRow("block -2^63") << step("vector_add", QJsonArray{"a", "b", "c", "n"}, QJsonArray{1},
                                             QJsonArray{"-2^63"})
                                     << "launches[0].block[0]";
        QTest::newRow("unknown param name")
            << step("vector_add", QJsonObject{{"a", "a"}, {"b", "b"}, {"c", "c"}, {"count", "n"}})
            << "launches[0].args.count";
    }

    void prepareErrorPaths()
    {
        QFETCH(QJsonObject, launch);
        QFETCH(QString, path);
        const auto r = prepare(project({launch}));
        QVERIFY(!r.ok());
        QCOMPARE(r.error().path, path);
        // The message still names the field as it always did.
        QVERIFY2(r.error().message.startsWith(path), qPrintable(r.error().message));
    }

    void sameSizeMismatchWarns()
    {
        const auto r = prepare(project({step("vector_add", QJsonArray{"i", "b", "c", "n"})}));
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->warnings.size(), 1);
        QCOMPARE(r->warnings.first(), QString("launches[0].args[0] (parameter 'a', const float *): buffer 'i' holds "
                                              "int32 but the kernel reads it as float (same size: the bits are "
                                              "reinterpreted)"));
    }

    void launchBeyondBuffersHints_data()
    {
        QTest::addColumn<QJsonValue>("grid");
        QTest::addColumn<QJsonValue>("block");
        QTest::addColumn<QString>("hint"); // empty: no hint
        const QString start = QStringLiteral("launches[0]: the launch starts %1 threads but the largest buffer it is "
                                             "given, 'a', holds 1000 elements, so whole blocks have no element of "
                                             "their own; a kernel that does not guard its index (if (i < n)) writes "
                                             "past the end");
        // Rounding up to whole blocks is what every grid of ceil_div(n, block) does: no hint.
        QTest::newRow("ceil_div") << QJsonValue(QJsonArray{"ceil_div(n, block.x)"}) << QJsonValue(QJsonArray{256})
                                  << QString();
        QTest::newRow("one block more than needed, rounded")
            << QJsonValue(QJsonArray{4}) << QJsonValue(QJsonArray{256}) << QString();
        QTest::newRow("a whole block beyond")
            << QJsonValue(QJsonArray{5}) << QJsonValue(QJsonArray{256})
            << start.arg(1280) + QStringLiteral(" (a grid of 4 blocks of 256 covers it)");
        QTest::newRow("grid of n blocks")
            << QJsonValue(QJsonArray{"n"}) << QJsonValue(QJsonArray{256})
            << start.arg(256000) + QStringLiteral(" (a grid of 4 blocks of 256 covers it)");
        // One block is never a hint: a block of 1024 threads over 1000 elements is rounding too.
        QTest::newRow("one big block") << QJsonValue(QJsonArray{1}) << QJsonValue(QJsonArray{1024}) << QString();
        // 2D: one block fewer on each axis still covers 1000 elements (3*16 x 3*16 = 2304).
        QTest::newRow("2D beyond") << QJsonValue(QJsonArray{4, 4}) << QJsonValue(QJsonArray{16, 16}) << start.arg(4096);
        QTest::newRow("2D rounded") << QJsonValue(QJsonArray{2, 2}) << QJsonValue(QJsonArray{16, 16}) << QString();
        // Past 2^63 threads (no GPU's limits apply here): a rounded count, not a wrapped integer.
        QTest::newRow("past 2^63 threads") << QJsonValue(QJsonArray{"2^31-1", "2^31-1"}) << QJsonValue(QJsonArray{1024})
                                           << start.arg(QStringLiteral("about 4.72e+21"));
    }

    void launchBeyondBuffersHints()
    {
        QFETCH(QJsonValue, grid);
        QFETCH(QJsonValue, block);
        QFETCH(QString, hint);
        const auto r = prepare(project({step("vector_add", QJsonArray{"a", "b", "c", "n"}, grid, block)}));
        KP_VERIFY_RESULT(r);
        if (hint.isEmpty()) {
            QVERIFY2(r->warnings.isEmpty(), qPrintable(r->warnings.join('\n')));
        } else {
            QCOMPARE(r->warnings, QStringList{hint});
        }
    }

    void throughputExpressions()
    {
        QJsonObject json = project({step("vector_add", QJsonArray{"a", "b", "c", "n"})});
        json.insert("throughput", QJsonObject{{"bytes", "12*n"}, {"flops", "n"}});
        const auto r = prepare(json);
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->bytes, 12000.0);
        QCOMPARE(r->flops, 1000.0);
        RunResult rr;
        rr.stats = computeStats({0.001});
        applyThroughput(rr, r->bytes, r->flops);
        QCOMPARE(rr.bytesPerSecond, 12000.0 / 1e-6);
    }

    void workerKilledMidRunKeepsBuffers()
    {
        qputenv("KPG_WORKER_TEST_HOOKS", "1");
        auto p = parseProject(QJsonDocument(project({step("vector_add", QJsonArray{"a", "b", "c", "n"})})));
        KP_VERIFY_RESULT(p);
        HostBuffers buffers;
        KP_VERIFY_RESULT(buffers.materialize(*p));
        const QByteArray before(static_cast<const char *>(buffers.find("a")->memory.data()), 4000);
        CompileRequest req;
        req.source = p->sourceText;
        const auto c = Compiler(Compiler::Config{QStringLiteral("-"), 0}).compile(req);
        KP_VERIFY_RESULT(c);
        auto prepared = prepareRun(*p, *c, buffers, 0);
        KP_VERIFY_RESULT(prepared);
        prepared.value().request.testSleepMs = 20000;

        EngineClient client;
        Runner runner(&client);
        bool done = false;
        RunResult result;
        runner.run(*prepared, &buffers, [&](const RunResult &r) {
            result = r;
            done = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(client.workerPid() != 0, 15000);
        const qint64 pid = client.workerPid();
        QTest::qWait(200); // the worker is now inside the run
        ::kill(pid_t(pid), SIGKILL);
        QElapsedTimer t;
        t.start();
        QTRY_VERIFY_WITH_TIMEOUT(done, 5000);
        QVERIFY2(t.elapsed() < 1000, qPrintable(QString::number(t.elapsed())));
        QVERIFY(result.error);
        QCOMPARE(result.error->code, Error::Code::WorkerDied);
        QVERIFY2(result.error->message.contains("kpg-worker crashed (killed by a signal) while running 'run'"),
                 qPrintable(result.error->message));
        QVERIFY(result.buffersRestored);
        QCOMPARE(QByteArray(static_cast<const char *>(buffers.find("a")->memory.data()), 4000), before);

        // A fresh worker answers the next request.
        const Reply ping = client.requestSync(Protocol::Type::Ping);
        KP_VERIFY_RESULT(ping);
        QVERIFY(ping->value("pid").toLongLong() != pid);
        qunsetenv("KPG_WORKER_TEST_HOOKS");
    }

    void abortEndsARunAtOnce()
    {
        qputenv("KPG_WORKER_TEST_HOOKS", "1");
        EngineClient client;
        Runner runner(&client);
        HostBuffers buffers;
        PreparedRun prepared;
        prepared.request.testSleepMs = 20000;
        bool done = false;
        RunResult result;
        runner.run(prepared, &buffers, [&](const RunResult &r) {
            result = r;
            done = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(client.workerPid() != 0, 15000);
        QTest::qWait(200);
        QElapsedTimer t;
        t.start();
        runner.abort();
        QTRY_VERIFY_WITH_TIMEOUT(done, 2000);
        QVERIFY(t.elapsed() < 1000);
        QCOMPARE(result.error->code, Error::Code::Cancelled);
        QVERIFY(result.error->message.startsWith("'run' was aborted"));
        qunsetenv("KPG_WORKER_TEST_HOOKS");
    }

    void runResultJson()
    {
        // The format of docs/kpg-run-json.md, as kpg run --json writes it.
        RunResult r;
        r.device = "NVIDIA H200 (0)";
        StepResult s;
        s.kernel = "vector_add";
        s.grid = {4, 1, 1};
        s.block = {256, 1, 1};
        s.printfOutput = "hi\n";
        s.limits.numRegs = 12;
        r.steps << s;
        r.timed = true;
        r.timingMode = "cold";
        r.samplesMs = {0.5, 0.25};
        r.stats = computeStats(r.samplesMs);
        applyThroughput(r, 1000, 10);
        QJsonObject j = runResultToJson(r);
        QCOMPARE(j.value("ok").toBool(), true);
        QCOMPARE(j.value("kernel").toString(), QString("vector_add"));
        QCOMPARE(j.value("grid").toObject().value("x").toInt(), 4);
        QCOMPARE(j.value("printf").toString(), QString("hi\n"));
        QCOMPARE(j.value("steps").toArray().first().toObject().value("registers").toInt(), 12);
        QCOMPARE(j.value("timing").toObject().value("samplesMs").toArray().size(), 2);
        QCOMPARE(j.value("timing").toObject().value("mode").toString(), QString("cold"));
        QVERIFY(j.value("throughput").toObject().value("bytesPerSecond").toDouble() > 0);
        QVERIFY(j.value("error").isNull());
        QVERIFY(!j.contains("project")); // the caller's to add

        RunResult failed;
        failed.error = Error{"kpg-worker", Error::Code::Fault, "cuLaunchKernel", "boom"};
        failed.failedStep = 0;
        failed.buffersRestored = true;
        j = runResultToJson(failed);
        QCOMPARE(j.value("ok").toBool(), false);
        QVERIFY(j.value("timing").isNull());
        QCOMPARE(j.value("error").toObject().value("code").toString(), QString("fault"));
        QCOMPARE(j.value("error").toObject().value("step").toInt(), 0);
        QCOMPARE(j.value("error").toObject().value("buffersRestored").toBool(), true);
    }

    void runWithoutGpuSaysSo()
    {
        // With the driver missing, a run is an ordinary result with the reason.
        qputenv("KPG_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
        EngineClient client;
        Runner runner(&client);
        HostBuffers buffers;
        PreparedRun prepared;
        prepared.request.device = 0;
        const RunResult r = runner.runSync(prepared, &buffers);
        QVERIFY(r.error);
        QCOMPARE(r.error->code, Error::Code::NoDriver);
        QVERIFY2(r.error->message.startsWith("No NVIDIA driver found"), qPrintable(r.error->message));
        qunsetenv("KPG_CUDA_DRIVER");
    }
};

QTEST_GUILESS_MAIN(TestRun)
#include "tst_run.moc"
