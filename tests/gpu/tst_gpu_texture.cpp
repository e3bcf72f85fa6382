// On a machine with an NVIDIA GPU: texture and surface objects made by the
// worker over project buffers, against CPU references on random data: point
// sampling reads the buffer back in every layout, linear filtering at
// half-texel offsets is the average of the four neighbours, wrap / clamp /
// mirror / border addressing outside the image, uchar4 read as normalized
// floats, a surface's writes copied back into its buffer (and seen by a
// texture over that buffer in the next step), and the texture_rotate
// preset's check.

#include "client/engineclient.h"
#include "compile/compiler.h"
#include "cuda/deviceinfo.h"
#include "gpurun.h"
#include "project/projectio.h"
#include "run/projectcompile.h"
#include "run/runner.h"
#include "testutil.h"
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
// Point sampling at texel centres: out is the texture's contents.
__global__ void fetch2D(float *out, int w, int h, cudaTextureObject_t tex)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f);
}
__global__ void fetch1D(float *out, int n, cudaTextureObject_t tex)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(tex, i);
}
__global__ void fetch1DArray(float *out, int n, cudaTextureObject_t tex)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(tex, i + 0.5f);
}
// A volume of 4 layers of h x w, read layer by layer (blockIdx.z).
__global__ void fetch3D(float *out, int w, int h, cudaTextureObject_t tex)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int z = blockIdx.z;
    if (x < w && y < h) out[(z * h + y) * w + x] = tex3D<float>(tex, x + 0.5f, y + 0.5f, z + 0.5f);
}
// Coordinates x + 1, y + 1: halfway between the centres of texels x, x + 1 and y, y + 1.
__global__ void halfway(float *out, int w, int h, cudaTextureObject_t tex)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, x + 1.0f, y + 1.0f);
}
// Normalized coordinates shifted by whole images: (x + 0.5) / w + sx, (y + 0.5) / h + sy.
__global__ void shifted(float *out, int w, int h, float sx, float sy, cudaTextureObject_t tex)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, (x + 0.5f) / w + sx, (y + 0.5f) / h + sy);
}
// Unnormalized coordinates past the right and below the top edge.
__global__ void outside(float *out, int w, int h, cudaTextureObject_t tex)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, x + 0.5f + 3 * w, y + 0.5f - 2 * h);
}
__global__ void fetchRgba(float4 *out, int w, int h, cudaTextureObject_t tex)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = tex2D<float4>(tex, x + 0.5f, y + 0.5f);
}
// out = 1 - in, in place, through a surface (byte offsets along x).
__global__ void invert(cudaSurfaceObject_t surf, int w, int h)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        float v;
        surf2Dread(&v, surf, x * (int)sizeof(float), y);
        surf2Dwrite(1.0f - v, surf, x * (int)sizeof(float), y);
    }
}
)";

template<typename T> std::vector<T> contents(const HostBuffer *b)
{
    std::vector<T> v(size_t(b->byteSize() / qint64(sizeof(T))));
    std::memcpy(v.data(), b->memory.data(), size_t(b->byteSize()));
    return v;
}

QJsonObject randomBuffer(const QString &name, const QString &dtype, const QJsonArray &shape, int seed, double max = 1)
{
    return QJsonObject{{"name", name},
                       {"dtype", dtype},
                       {"shape", shape},
                       {"init", QJsonObject{{"kind", "random"}, {"min", 0}, {"max", max}, {"seed", seed}}}};
}

QJsonObject zeros(const QString &name, const QString &dtype, const QJsonArray &shape)
{
    return QJsonObject{{"name", name}, {"dtype", dtype}, {"shape", shape}};
}

QJsonObject launch(const QString &kernel, const QJsonArray &args)
{
    return QJsonObject{{"kernel", kernel},
                       {"grid", QJsonArray{"ceil_div(w, block.x)", "ceil_div(h, block.y)"}},
                       {"block", QJsonArray{16, 8}},
                       {"args", args}};
}

QJsonObject tex(const char *json)
{
    return QJsonDocument::fromJson(json).object();
}

constexpr int kW = 96;
constexpr int kH = 40;

} // namespace

class TestGpuTexture : public QObject
{
    Q_OBJECT

private:
    KpTest::GpuRun m_gpu;

    RunResult run(const QJsonArray &buffers, const QJsonArray &launches, HostBuffers &host, bool timed = false,
                  int repeat = 1)
    {
        const QJsonObject json{
            {"repeat", QJsonObject{{"count", repeat}}},
            {"format", "kernel-playground-project"},
            {"version", 1},
            {"title", "textures"},
            {"source", QJsonObject{{"inline", QString::fromLatin1(kSource)}}},
            {"scalars", QJsonArray{QJsonObject{{"name", "w"}, {"type", "int32"}, {"value", kW}},
                                   QJsonObject{{"name", "h"}, {"type", "int32"}, {"value", kH}},
                                   QJsonObject{{"name", "n"}, {"type", "int32"}, {"value", kW * kH}}}},
            {"buffers", buffers},
            {"launches", launches},
            {"timing", QJsonObject{{"enabled", timed}, {"minSamples", 3}, {"minSeconds", 0}}}};
        return m_gpu.run(json, host).result;
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

    // A float texture with point sampling reads back as the buffer, in every layout and 1 to 3 dimensions.
    void pointSamplingReadsTheBuffer_data()
    {
        QTest::addColumn<QJsonObject>("binding");
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<bool>("timed");
        QTest::newRow("array") << tex(R"({"texture": "img"})") << "fetch2D" << false;
        QTest::newRow("array, timed") << tex(R"({"texture": "img"})") << "fetch2D" << true;
        QTest::newRow("pitched in place") << tex(R"({"texture": "img", "layout": "pitched"})") << "fetch2D" << false;
        QTest::newRow("linear, tex1Dfetch") << tex(R"({"texture": "flat", "layout": "linear"})") << "fetch1D" << false;
        QTest::newRow("1-D array, tex1D") << tex(R"({"texture": "flat"})") << "fetch1DArray" << false;
        QTest::newRow("3-D array, tex3D") << tex(R"({"texture": "vol"})") << "fetch3D" << false;
    }
    void pointSamplingReadsTheBuffer()
    {
        QFETCH(QJsonObject, binding);
        QFETCH(QString, kernel);
        QFETCH(bool, timed);
        HostBuffers host;
        const bool linear = kernel.startsWith(QLatin1String("fetch1D"));
        const bool volume = kernel == QLatin1String("fetch3D");
        const QJsonArray args = linear   ? QJsonArray{"out", "n", binding}
                                : volume ? QJsonArray{"out", "w", kH / 4, binding}
                                         : QJsonArray{"out", "w", "h", binding};
        QJsonObject step = launch(kernel, args);
        if (linear) {
            step.insert("grid", QJsonArray{"ceil_div(n, 128)"});
            step.insert("block", QJsonArray{128});
        }
        if (volume) {
            step.insert("grid", QJsonArray{"ceil_div(w, block.x)", QString("ceil_div(%1, block.y)").arg(kH / 4), 4});
        }
        // One set of random numbers, as a 2-D image, a 1-D line and a volume of 4 layers.
        const RunResult r =
            run(QJsonArray{randomBuffer("img", "float32", {kH, kW}, 11), randomBuffer("flat", "float32", {kW * kH}, 11),
                           randomBuffer("vol", "float32", {4, kH / 4, kW}, 11), zeros("out", "float32", {kH, kW})},
                QJsonArray{step}, host, timed);
        QVERIFY2(!r.error, qPrintable(r.error ? r.error->toString() : QString()));
        const std::vector<float> in = contents<float>(host.find(linear ? "flat" : volume ? "vol" : "img"));
        const std::vector<float> out = contents<float>(host.find("out"));
        QVERIFY(in[0] != in[1]); // random
        for (size_t i = 0; i < in.size(); ++i) {
            if (out[i] != in[i]) {
                QFAIL(qPrintable(QStringLiteral("out[%1] = %2, the buffer holds %3").arg(i).arg(out[i]).arg(in[i])));
            }
        }
    }

    // Linear filtering halfway between texel centres: the plain average of the four neighbours.
    void linearFilterAveragesNeighbours()
    {
        HostBuffers host;
        const RunResult r = run(
            QJsonArray{randomBuffer("img", "float32", {kH, kW}, 12), zeros("out", "float32", {kH, kW})},
            QJsonArray{launch("halfway", {"out", "w", "h", tex(R"({"texture": "img", "filter": "linear"})")})}, host);
        QVERIFY2(!r.error, qPrintable(r.error ? r.error->toString() : QString()));
        const std::vector<float> in = contents<float>(host.find("img"));
        const std::vector<float> out = contents<float>(host.find("out"));
        for (int y = 0; y < kH; ++y) {
            for (int x = 0; x < kW; ++x) {
                // Clamp addressing: past the last texel the edge texel stands in.
                const int x1 = std::min(x + 1, kW - 1);
                const int y1 = std::min(y + 1, kH - 1);
                const double avg = (double(in[size_t(y * kW + x)]) + in[size_t(y * kW + x1)] + in[size_t(y1 * kW + x)] +
                                    in[size_t(y1 * kW + x1)]) /
                                   4;
                const float got = out[size_t(y * kW + x)];
                if (std::fabs(got - avg) > 1e-5) {
                    QFAIL(qPrintable(
                        QStringLiteral("(%1, %2): %3, the CPU average is %4").arg(x).arg(y).arg(got).arg(avg)));
                }
            }
        }
    }

    // Addressing outside the image, against the texel each mode picks.
    void addressModes_data()
    {
        QTest::addColumn<QJsonObject>("binding");
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<QString>("mode");
        QTest::newRow("wrap, two images right and one up")
            << tex(R"({"texture": "img", "address": "wrap", "normalized": true})") << "shifted"
            << "wrap";
        QTest::newRow("mirror, one image right")
            << tex(R"({"texture": "img", "address": "mirror", "normalized": true})") << "shifted"
            << "mirror";
        QTest::newRow("clamp, unnormalized far outside") << tex(R"({"texture": "img"})") << "outside"
                                                         << "clamp";
        QTest::newRow("border colour outside")
            << tex(R"({"texture": "img", "address": "border", "border": [0.625]})") << "outside"
            << "border";
    }
    void addressModes()
    {
        QFETCH(QJsonObject, binding);
        QFETCH(QString, kernel);
        QFETCH(QString, mode);
        HostBuffers host;
        // wrap: +2 along x, -1 along y; mirror: +1 along x (mirrored), 0 along y.
        const double sx = mode == QLatin1String("wrap") ? 2 : 1;
        const double sy = mode == QLatin1String("wrap") ? -1 : 0;
        const QJsonArray args = kernel == QLatin1String("shifted") ? QJsonArray{"out", "w", "h", sx, sy, binding}
                                                                   : QJsonArray{"out", "w", "h", binding};
        const RunResult r =
            run(QJsonArray{randomBuffer("img", "float32", {kH, kW}, 13), zeros("out", "float32", {kH, kW})},
                QJsonArray{launch(kernel, args)}, host);
        QVERIFY2(!r.error, qPrintable(r.error ? r.error->toString() : QString()));
        const std::vector<float> in = contents<float>(host.find("img"));
        const std::vector<float> out = contents<float>(host.find("out"));
        for (int y = 0; y < kH; ++y) {
            for (int x = 0; x < kW; ++x) {
                float want = 0;
                if (mode == QLatin1String("wrap")) {
                    want = in[size_t(y * kW + x)];
                } else if (mode == QLatin1String("mirror")) {
                    want = in[size_t(y * kW + (kW - 1 - x))];
                } else if (mode == QLatin1String("clamp")) {
                    want = in[size_t(0 * kW + (kW - 1))]; // past the right edge and below row 0
                } else {
                    want = 0.625f;
                }
                const float got = out[size_t(y * kW + x)];
                if (got != want) {
                    QFAIL(qPrintable(
                        QStringLiteral("%1 at (%2, %3): %4, expected %5").arg(mode).arg(x).arg(y).arg(got).arg(want)));
                }
            }
        }
    }

    // uchar4 read as normalized floats: every component / 255.
    void uchar4ReadsAsNormalizedFloat()
    {
        HostBuffers host;
        const RunResult r =
            run(QJsonArray{randomBuffer("rgba", "uchar4", {kH, kW}, 14, 255), zeros("out", "float4", {kH, kW})},
                QJsonArray{
                    launch("fetchRgba", {"out", "w", "h", tex(R"({"texture": "rgba", "read": "normalizedFloat"})")})},
                host);
        QVERIFY2(!r.error, qPrintable(r.error ? r.error->toString() : QString()));
        const std::vector<unsigned char> in = contents<unsigned char>(host.find("rgba"));
        const std::vector<float> out = contents<float>(host.find("out"));
        QCOMPARE(out.size(), in.size());
        int distinct = 0;
        for (size_t i = 0; i < in.size(); ++i) {
            distinct += in[i] != in[0];
            if (std::fabs(out[i] - in[i] / 255.0) > 1e-6) {
                QFAIL(qPrintable(QStringLiteral("component %1: %2, expected %3 / 255").arg(i).arg(out[i]).arg(in[i])));
            }
        }
        QVERIFY(distinct > 0);
    }

    // A surface written by the kernel: its array is copied back into the
    // buffer; a texture over that buffer in the next step sees the writes,
    // in every repetition (the array is copied again after each write).
    void surfaceWritesReachTheBuffer_data()
    {
        QTest::addColumn<int>("repeat");
        QTest::addColumn<bool>("timed");
        QTest::newRow("once") << 1 << false;
        QTest::newRow("three repetitions") << 3 << false;
        QTest::newRow("two repetitions, timed") << 2 << true;
    }
    void surfaceWritesReachTheBuffer()
    {
        QFETCH(int, repeat);
        QFETCH(bool, timed);
        HostBuffers host;
        const RunResult r =
            run(QJsonArray{randomBuffer("img", "float32", {kH, kW}, 15), randomBuffer("orig", "float32", {kH, kW}, 15),
                           zeros("out", "float32", {kH, kW})},
                QJsonArray{launch("invert", {tex(R"({"surface": "img"})"), "w", "h"}),
                           launch("fetch2D", {"out", "w", "h", tex(R"({"texture": "img"})")})},
                host, timed, repeat);
        QVERIFY2(!r.error, qPrintable(r.error ? r.error->toString() : QString()));
        const std::vector<float> orig = contents<float>(host.find("orig"));
        const std::vector<float> img = contents<float>(host.find("img"));
        const std::vector<float> out = contents<float>(host.find("out"));
        QVERIFY(orig[0] != orig[1]);
        for (size_t i = 0; i < orig.size(); ++i) {
            float want = orig[i];
            for (int k = 0; k < repeat; ++k) {
                want = 1.0f - want; // in float, as the kernel computes it
            }
            if (img[i] != want || out[i] != want) {
                QFAIL(qPrintable(QStringLiteral("element %1: buffer %2, texture read %3, expected %4 (from %5 inverted "
                                                "%6 times)")
                                     .arg(i)
                                     .arg(img[i])
                                     .arg(out[i])
                                     .arg(want)
                                     .arg(orig[i])
                                     .arg(repeat)));
            }
        }
    }

    // The preset, as a user runs it.
    void presetCheckPasses()
    {
        const KpTest::Run r =
            KpTest::run("kpg", {"check", KPG_SOURCE_DIR "/presets/texture_rotate/texture_rotate.kpg"}, {}, 300000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.contains("1 of 1 check passed"), qPrintable(r.out));
    }
};

QTEST_GUILESS_MAIN(TestGpuTexture)
#include "tst_gpu_texture.moc"
