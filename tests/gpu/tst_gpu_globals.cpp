// On a machine with an NVIDIA GPU: device globals filled from a project
// ("symbol") and read back, against a CPU reference on random data (a
// constant-memory convolution and a __device__ counter), and a kernel that
// launches kernels, linked with the device runtime, running as compiled.

#include "client/engineclient.h"
#include "compile/compiler.h"
#include "cuda/deviceinfo.h"
#include "gpurun.h"
#include "project/projectio.h"
#include "run/projectcompile.h"
#include "run/runner.h"
#include "worker/protocol.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <vector>

using namespace Kp;

namespace {

const char *kSource = R"(
#define KERNEL_RADIUS 8
#define KERNEL_LENGTH (2 * KERNEL_RADIUS + 1)
__constant__ float c_Kernel[KERNEL_LENGTH];
__device__ unsigned int count;

// out[i] = sum_j c_Kernel[R - j] * in[i + j], zero outside, as convolutionSeparable's rows.
__global__ void convolve(const float *in, float *out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float sum = 0;
    for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++) {
        const int k = i + j;
        sum += c_Kernel[KERNEL_RADIUS - j] * (k >= 0 && k < n ? in[k] : 0.0f);
    }
    out[i] = sum;
    atomicAdd(&count, 1u);
}

__global__ void child(const float *in, float *out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = 2.0f * in[i];
    }
}

__global__ void parent(const float *in, float *out, int n)
{
    if (threadIdx.x == 0) {
        child<<<(n + 255) / 256, 256>>>(in, out, n);
    }
}
)";

template<typename T> std::vector<T> contents(const HostBuffer *b)
{
    std::vector<T> v(size_t(b->byteSize() / qint64(sizeof(T))));
    std::memcpy(v.data(), b->memory.data(), size_t(b->byteSize()));
    return v;
}

} // namespace

class TestGpuGlobals : public QObject
{
    Q_OBJECT

private:
    KpTest::GpuRun m_gpu;

    /** Runs json; a warning of prepareRun fails the test. */
    RunResult run(const QJsonObject &json, HostBuffers &buffers, CompileResult *compiled = nullptr)
    {
        KpTest::GpuRun::Ran r = m_gpu.run(json, buffers, true, true);
        if (compiled) {
            *compiled = r.compiled;
        }
        return r.result;
    }

    static QJsonObject project(const QJsonArray &buffers, const QJsonArray &launches, int n)
    {
        return QJsonObject{{"format", "kernel-playground-project"},
                           {"version", 1},
                           {"title", "device globals"},
                           {"source", QJsonObject{{"inline", QString::fromLatin1(kSource)}}},
                           {"scalars", QJsonArray{QJsonObject{{"name", "n"}, {"type", "int32"}, {"value", n}}}},
                           {"buffers", buffers},
                           {"launches", launches},
                           {"timing", QJsonObject{{"enabled", false}}}};
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (const auto why = m_gpu.start()) {
            if (why->skip) {
                QSKIP(qPrintable(why->message));
            }
            QFAIL(qPrintable(why->message));
        }
    }

    // Random taps in __constant__ memory and a __device__ counter that
    // starts at 5: the convolution matches the CPU, and the counter reads
    // back as 5 + n.
    void constantConvolutionMatchesCpu_data()
    {
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("seed");
        QTest::newRow("one block") << 200 << 1;
        QTest::newRow("a million and some") << (1 << 20) + 13 << 2;
    }
    void constantConvolutionMatchesCpu()
    {
        QFETCH(int, n);
        QFETCH(int, seed);
        const QJsonObject json = project(
            QJsonArray{QJsonObject{{"name", "in"},
                                   {"dtype", "float32"},
                                   {"shape", n},
                                   {"init", QJsonObject{{"kind", "random"}, {"min", -1}, {"max", 1}, {"seed", seed}}}},
                       QJsonObject{{"name", "out"}, {"dtype", "float32"}, {"shape", n}},
                       QJsonObject{{"name", "taps"},
                                   {"dtype", "float32"},
                                   {"shape", 17},
                                   {"symbol", "c_Kernel"},
                                   {"init", QJsonObject{{"kind", "random"}, {"seed", seed + 100}}}},
                       QJsonObject{{"name", "hits"},
                                   {"dtype", "uint32"},
                                   {"shape", 1},
                                   {"symbol", "count"},
                                   {"init", QJsonObject{{"kind", "constant"}, {"value", 5}}}}},
            QJsonArray{QJsonObject{{"kernel", "convolve"},
                                   {"grid", QJsonArray{"ceil_div(n, block.x)"}},
                                   {"block", QJsonArray{256}},
                                   {"args", QJsonArray{"in", "out", "n"}}}},
            n);
        HostBuffers buffers;
        const RunResult r = run(json, buffers);
        QVERIFY2(!r.error, qPrintable(r.error ? r.error->toString() : QString()));
        const std::vector<float> in = contents<float>(buffers.find("in"));
        const std::vector<float> out = contents<float>(buffers.find("out"));
        const std::vector<float> taps = contents<float>(buffers.find("taps"));
        QCOMPARE(int(taps.size()), 17);
        QVERIFY(taps[0] != taps[16]); // random, so a flipped filter would show
        for (int i = 0; i < n; ++i) {
            double sum = 0;
            for (int j = -8; j <= 8; ++j) {
                const int k = i + j;
                sum += double(taps[size_t(8 - j)]) * (k >= 0 && k < n ? double(in[size_t(k)]) : 0.0);
            }
            if (std::fabs(out[size_t(i)] - sum) > 1e-5 + 1e-5 * std::fabs(sum)) {
                QFAIL(qPrintable(QStringLiteral("out[%1] = %2, the CPU gives %3").arg(i).arg(out[size_t(i)]).arg(sum)));
            }
        }
        QCOMPARE(contents<quint32>(buffers.find("hits")).at(0), quint32(5 + n));
    }

    // Dynamic parallelism: the linked cubin loads, the parent's child runs.
    void parentLaunchesChild()
    {
        const int n = 100000;
        const QJsonObject json = project(
            QJsonArray{QJsonObject{{"name", "in"},
                                   {"dtype", "float32"},
                                   {"shape", n},
                                   {"init", QJsonObject{{"kind", "random"}, {"seed", 3}}}},
                       QJsonObject{{"name", "out"}, {"dtype", "float32"}, {"shape", n}},
                       QJsonObject{{"name", "taps"}, {"dtype", "float32"}, {"shape", 17}, {"symbol", "c_Kernel"}},
                       QJsonObject{{"name", "hits"}, {"dtype", "uint32"}, {"shape", 1}, {"symbol", "count"}}},
            QJsonArray{QJsonObject{{"kernel", "parent"},
                                   {"grid", QJsonArray{1}},
                                   {"block", QJsonArray{32}},
                                   {"args", QJsonArray{"in", "out", "n"}}}},
            n);
        HostBuffers buffers;
        CompileResult compiled;
        const RunResult r = run(json, buffers, &compiled);
        QVERIFY2(!r.error, qPrintable(r.error ? r.error->toString() : QString()));
        QVERIFY(compiled.nvrtcOptions.contains("-rdc=true"));
        const std::vector<float> in = contents<float>(buffers.find("in"));
        const std::vector<float> out = contents<float>(buffers.find("out"));
        for (int i = 0; i < n; ++i) {
            QCOMPARE(out[size_t(i)], 2.0f * in[size_t(i)]);
        }
    }
};

QTEST_GUILESS_MAIN(TestGpuGlobals)
#include "tst_gpu_globals.moc"
