// Texture and surface bindings without a GPU: the project file's binding
// object and every refusal with its field, the writer's round trip, the run
// request's wire form, prepareRun's checks against the kernel's parameter
// types (real NVRTC), the device-limit checks, and kpg check / kpg export on
// the texture_rotate preset.

#include "compile/compiler.h"
#include "project/projectio.h"
#include "run/projectcompile.h"
#include "run/runner.h"
#include "run/sentinel.h"
#include "run/texturedesc.h"
#include "testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace Kp;

namespace {

const char *kSource = R"(
__global__ void rotate(float *out, int w, int h, float angle, cudaTextureObject_t tex)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f);
}
__global__ void invert(cudaSurfaceObject_t surf, int w, int h)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        float v;
        surf2Dread(&v, surf, x * 4, y);
        surf2Dwrite(1.0f - v, surf, x * 4, y);
    }
}
__global__ void both(cudaTextureObject_t in, cudaSurfaceObject_t out, float *log) {}
)";

const QString kNoDriver = QStringLiteral("KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1");

QJsonObject project(const QJsonValue &args, const QString &kernel = QStringLiteral("rotate"),
                    const QJsonArray &extraBuffers = {})
{
    QJsonArray buffers{QJsonObject{{"name", "img"},
                                   {"dtype", "float32"},
                                   {"shape", QJsonArray{64, 128}},
                                   {"init", QJsonObject{{"kind", "random"}, {"seed", 3}}}},
                       QJsonObject{{"name", "out"}, {"dtype", "float32"}, {"shape", QJsonArray{64, 128}}},
                       QJsonObject{{"name", "d"}, {"dtype", "float64"}, {"shape", QJsonArray{64, 128}}},
                       QJsonObject{{"name", "rgb"}, {"dtype", "uchar3"}, {"shape", QJsonArray{64, 128}}},
                       QJsonObject{{"name", "odd"}, {"dtype", "float32"}, {"shape", QJsonArray{10, 75}}}};
    for (const QJsonValue &b : extraBuffers) {
        buffers.append(b);
    }
    return QJsonObject{
        {"format", "kernel-playground-project"},
        {"version", 1},
        {"source", QJsonObject{{"inline", QString::fromLatin1(kSource)}}},
        {"scalars", QJsonArray{QJsonObject{{"name", "w"}, {"type", "int32"}, {"value", 128}},
                               QJsonObject{{"name", "h"}, {"type", "int32"}, {"value", 64}},
                               QJsonObject{{"name", "angle"}, {"type", "float32"}, {"value", 0.5}}}},
        {"buffers", buffers},
        {"launches",
         QJsonArray{QJsonObject{
             {"kernel", kernel}, {"grid", QJsonArray{8, 8}}, {"block", QJsonArray{16, 8}}, {"args", args}}}}};
}

QJsonObject binding(const char *json)
{
    return QJsonDocument::fromJson(json).object();
}

QString presetPath()
{
    return QStringLiteral(KPG_SOURCE_DIR "/presets/texture_rotate/texture_rotate.kpg");
}

} // namespace

class TestTextureBind : public QObject
{
    Q_OBJECT

private:
    Result<PreparedRun> prepare(const QJsonObject &json)
    {
        auto p = parseProject(QJsonDocument(json));
        if (!p) {
            return p.error();
        }
        HostBuffers buffers;
        if (Status s = buffers.materialize(*p); !s) {
            return s.error();
        }
        auto c = Compiler(Compiler::Config{QStringLiteral("-"), 0}).compile(compileRequestFor(*p));
        if (!c) {
            return c.error();
        }
        if (!c->ok) {
            return Error{"test", Error::Code::CompileError, {}, c->log};
        }
        return prepareRun(*p, *c, buffers, 0);
    }

private Q_SLOTS:
    // The project reader: a texture or surface object as an argument, and
    // every refusal naming launches[0].args[4] or the field below it.
    void projectRefusals_data()
    {
        QTest::addColumn<QJsonObject>("arg");
        QTest::addColumn<QString>("message");
        const QString p = QStringLiteral("launches[0].args[4]");
        QTest::newRow("unknown buffer")
            << binding(R"({"texture": "image"})")
            << p + ".texture: unknown buffer 'image'; buffers: img, out, d, rgb, odd, table";
        QTest::newRow("a scalar is no buffer")
            << binding(R"({"texture": "w"})") << p + ".texture: 'w' is a scalar, not a buffer";
        QTest::newRow("misspelt key") << binding(R"({"texture": "img", "adress": "wrap"})")
                                      << p + ".adress: unknown key; a texture or surface binding takes: texture, "
                                             "surface, layout, address, filter, normalized, read, border";
        QTest::newRow("bad address mode") << binding(R"({"texture": "img", "address": ["wrap", "repeat"]})")
                                          << p + ".address[1]: 'repeat' is not an address mode; allowed: clamp, wrap, "
                                                 "mirror, border";
        QTest::newRow("normalized is a boolean") << binding(R"({"texture": "img", "normalized": 1})")
                                                 << p + ".normalized: expected true or false, got a number";
        QTest::newRow("float64 has no texture format")
            << binding(R"({"texture": "d"})")
            << p + ".texture: buffer 'd': float64 has no CUDA texture format (textures hold 8, 16 and 32-bit "
                   "integers, float16 and float32, with 1, 2 or 4 channels)";
        QTest::newRow("three channels")
            << binding(R"({"texture": "rgb"})")
            << p + ".texture: buffer 'rgb': uchar3 has 3 components; CUDA textures and surfaces have 1, 2 or 4 "
                   "channels (use uchar4 with a spare component)";
        QTest::newRow("wrap needs normalized coordinates")
            << binding(R"({"texture": "img", "address": "wrap"})")
            << p + ": address mode \"wrap\" (axis x) works only with \"normalized\": true; CUDA clamps "
                   "unnormalized coordinates";
        QTest::newRow("pitched rows not a multiple of 32 bytes")
            << binding(R"({"texture": "odd", "layout": "pitched"})")
            << p + ": a pitched texture reads rows of the buffer in place, so a row must be a multiple of 32 bytes; "
                   "buffer 'odd' has rows of 300 bytes (75 x float32): use \"layout\": \"array\"";
        QTest::newRow("surface over a pitched buffer")
            << binding(R"({"surface": "img", "layout": "pitched"})")
            << p + ": a surface needs \"layout\": \"array\" (surfaces exist only over CUDA arrays)";
        QTest::newRow("filter on a surface")
            << binding(R"({"surface": "img", "filter": "linear"})")
            << p + ".filter: a surface is read and written by integer coordinates (surf2Dread/surf2Dwrite); "
                   "\"filter\" is for textures only";
        QTest::newRow("empty buffer name")
            << binding(R"({"surface": ""})") << p + ".surface: expected a buffer name, got an empty string";
        QTest::newRow("bad read mode") << binding(R"({"texture": "img", "read": "float"})")
                                       << p + ".read: 'float' is not a read mode; allowed: element, normalizedFloat";
        QTest::newRow("bad layout") << binding(R"({"texture": "img", "layout": 2})")
                                    << p + ".layout: expected a layout (linear, pitched, array), got a number";
        QTest::newRow("border beyond a float")
            << binding(R"({"texture": "img", "address": "border", "border": [0, 1e308]})")
            << p + ".border[1]: 1e+308 does not fit in a float (the border colour is 4 floats)";
        QTest::newRow("border is not a colour")
            << binding(R"({"texture": "img", "address": "border", "border": "red"})")
            << p + ".border: expected 1 to 4 numbers (the colour outside a \"border\" texture)";
        QTest::newRow("a device variable")
            << binding(R"({"texture": "table"})")
            << p + ".texture: buffer 'table' is the device variable 'c_table'; a texture or surface is made over an "
                   "ordinary buffer";
        QTest::newRow("both texture and surface")
            << binding(R"({"texture": "img", "surface": "img"})")
            << p + ": give exactly one of \"texture\" and \"surface\", naming a buffer";
    }
    void projectRefusals()
    {
        QFETCH(QJsonObject, arg);
        QFETCH(QString, message);
        const QJsonArray table{
            QJsonObject{{"name", "table"}, {"dtype", "float32"}, {"shape", 16}, {"symbol", "c_table"}}};
        const auto r = parseProject(QJsonDocument(project(QJsonArray{"out", "w", "h", "angle", arg}, "rotate", table)));
        QVERIFY(!r);
        QCOMPARE(r.error().message, message);
        QCOMPARE(r.error().path, message.section(QStringLiteral(": "), 0, 0));
    }

    // A binding written by the writer reads back as the same binding, options and all.
    void writerRoundTrip_data()
    {
        QTest::addColumn<QJsonObject>("arg");
        QTest::addColumn<QString>("described");
        QTest::newRow("defaults") << binding(R"({"texture": "img"})")
                                  << "texture over img (array, point sampling, clamp)";
        QTest::newRow("simpleTexture's options")
            << binding(R"({"texture": "img", "filter": "linear", "address": "wrap", "normalized": true})")
            << "texture over img (array, linear filter, wrap, normalized)";
        QTest::newRow("per-axis modes and a border colour")
            << binding(R"({"texture": "img", "address": ["border", "mirror"], "normalized": true, "border": [1, 0.5]})")
            << "texture over img (array, point sampling, border/mirror/mirror, normalized)";
        QTest::newRow("pitched in place") << binding(R"({"texture": "img", "layout": "pitched"})")
                                          << "texture over img (pitched, point sampling, clamp)";
        QTest::newRow("surface") << binding(R"({"surface": "img"})") << "surface over img (array)";
    }
    void writerRoundTrip()
    {
        QFETCH(QJsonObject, arg);
        QFETCH(QString, described);
        const auto first = parseProject(QJsonDocument(project(QJsonArray{"out", "w", "h", "angle", arg})));
        KP_VERIFY_RESULT(first);
        const ArgBinding &b = first->launches[0].args[4];
        QCOMPARE(int(b.kind), int(ArgBinding::Kind::Texture));
        QCOMPARE(b.name, QStringLiteral("img"));
        QCOMPARE(b.texture.describe(), described);
        const QByteArray written = serializeProject(*first);
        const auto second = parseProject(written);
        KP_VERIFY_RESULT(second);
        QVERIFY(second->launches[0].args[4].texture == b.texture);
        QCOMPARE(argBindingJson(second->launches[0].args[4]).toObject(), b.texture.toJson());
        // The options the user wrote survive; defaults are left out.
        for (auto it = arg.begin(); it != arg.end(); ++it) {
            QVERIFY2(written.contains(QByteArray("\"") + it.key().toUtf8() + "\""), written.constData());
        }
    }

    // prepareRun: the object's place in the request, shared between arguments that bind the same one.
    void prepareBindsTextures()
    {
        const auto r = prepare(project(QJsonObject{{"in", binding(R"({"texture": "img", "filter": "linear"})")},
                                                   {"out", binding(R"({"surface": "out"})")},
                                                   {"log", "out"}},
                                       "both"));
        KP_VERIFY_RESULT(r);
        const RunRequest &req = r->request;
        QCOMPARE(req.textures.size(), 2);
        QCOMPARE(req.textures[0].spec.describe(), QStringLiteral("texture over img (array, linear filter, clamp)"));
        QCOMPARE(req.textures[0].buffer, 0);
        QCOMPARE(req.textures[0].shape, (QList<qint64>{64, 128}));
        QCOMPARE(req.textures[0].field, QStringLiteral("launches[0].args.in"));
        QVERIFY(req.textures[1].spec.isSurface());
        QCOMPARE(req.textures[1].buffer, 1);
        const QList<RunArg> &args = req.steps[0].args;
        QCOMPARE(args.size(), 3);
        QCOMPARE(args[0].texture, 0);
        QCOMPARE(args[1].texture, 1);
        QVERIFY(args[2].isBuffer());
        // 'log' points into the surface's buffer: the copy back would overwrite what it writes.
        QCOMPARE(r->warnings, QStringList{"launches[0]: buffer 'out' is bound both as a surface and as a pointer; the "
                                          "surface's array is copied back over the buffer after the launch, so writes "
                                          "through the pointer are lost"});

        // Two steps binding the same object share it (one array on the device).
        QJsonObject twice = project(QJsonArray{"out", "w", "h", "angle", binding(R"({"texture": "img"})")});
        QJsonArray launches = twice.value("launches").toArray();
        launches.append(launches[0]);
        twice.insert("launches", launches);
        const auto shared = prepare(twice);
        KP_VERIFY_RESULT(shared);
        QCOMPARE(shared->request.textures.size(), 1);
        QCOMPARE(shared->request.steps[1].args[4].texture, 0);
    }

    // The wire form: what the engine sends is what the worker reads.
    void requestRoundTrip()
    {
        const auto r = prepare(project(QJsonArray{
            "out", "w", "h", "angle",
            binding(R"({"texture": "img", "filter": "linear", "address": ["wrap", "mirror"], "normalized": true,
                                   "border": [0.25, 0, 0, 1]})")}));
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->request.textures.size(), 1);
        const RunRequest back = RunRequest::fromVariant(r->request.toVariant());
        QVERIFY(back.textures == r->request.textures);
        QVERIFY(back.steps == r->request.steps);
        QVERIFY(back == r->request);
        // A request without textures has no key for them: an ordinary run's body is unchanged.
        const auto plain = prepare(project(QJsonArray{"out", "w", "h", "angle", binding(R"({"texture": "img"})")}));
        KP_VERIFY_RESULT(plain);
        RunRequest none = plain->request;
        none.textures.clear();
        none.steps[0].args[4] = RunArg{-1, 0, QByteArray(8, '\0'), -1};
        QVERIFY(!none.toVariant().contains("textures"));
    }

    // prepareRun against the kernel's parameter types.
    void bindingRefusals_data()
    {
        QTest::addColumn<QJsonObject>("json");
        QTest::addColumn<QString>("message");
        const QString rotate = QStringLiteral("launches[0].args[4] (parameter 'tex', cudaTextureObject_t)");
        QTest::newRow("a number for a texture")
            << project(QJsonArray{"out", "w", "h", "angle", 0})
            << rotate + ": a cudaTextureObject_t is made over a buffer by the worker; bind it as {\"texture\": "
                        "\"BUFFER\"} (docs/buffers.md, \"Textures and surfaces\")";
        QTest::newRow("a buffer for a texture")
            << project(QJsonArray{"out", "w", "h", "angle", "img"})
            << rotate + ": a cudaTextureObject_t is made over a buffer by the worker; bind it as {\"texture\": "
                        "\"BUFFER\"} (docs/buffers.md, \"Textures and surfaces\")";
        QTest::newRow("a surface for a texture")
            << project(QJsonArray{"out", "w", "h", "angle", binding(R"({"surface": "img"})")})
            << rotate + ": the kernel takes a cudaTextureObject_t here; write {\"texture\": \"img\"} instead of "
                        "{\"surface\": ...}";
        QTest::newRow("a texture for a float")
            << project(QJsonArray{"out", "w", "h", binding(R"({"texture": "img"})"), binding(R"({"texture": "img"})")})
            << "launches[0].args[3] (parameter 'angle', float): a texture binding makes a cudaTextureObject_t, but "
               "this parameter is float";
        QTest::newRow("a texture for a pointer")
            << project(
                   QJsonArray{binding(R"({"texture": "img"})"), "w", "h", "angle", binding(R"({"texture": "img"})")})
            << "launches[0].args[0] (parameter 'out', float *): a texture binding makes a cudaTextureObject_t, but "
               "this parameter is float *";
        QTest::newRow("a texture for a surface")
            << project(QJsonArray{binding(R"({"texture": "out"})"), "w", "h"}, "invert")
            << "launches[0].args[0] (parameter 'surf', cudaSurfaceObject_t): the kernel takes a cudaSurfaceObject_t "
               "here; write {\"surface\": \"out\"} instead of {\"texture\": ...}";
        // The shape from a .npy file is known only when the project runs.
        QTest::newRow("pitched over a 1-D buffer from a file")
            << project(QJsonArray{"out", "w", "h", "angle", binding(R"({"texture": "line", "layout": "pitched"})")},
                       "rotate",
                       QJsonArray{QJsonObject{{"name", "line"},
                                              {"dtype", "float32"},
                                              {"init", QJsonObject{{"kind", "npy"}, {"file", "LINE"}}}}})
            << "launches[0].args[4]: \"layout\": \"pitched\" is 2-D; buffer 'line' has 1 dimension";
    }
    void bindingRefusals()
    {
        QFETCH(QJsonObject, json);
        QFETCH(QString, message);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        // The .npy buffer's file: 100 float32 values, 1-D.
        QByteArray header("{'descr': '<f4', 'fortran_order': False, 'shape': (100,), }");
        while ((10 + header.size() + 1) % 64 != 0) {
            header.append(' ');
        }
        header.append('\n');
        QByteArray npy("\x93NUMPY\x01\x00", 8);
        npy.append(char(header.size() & 0xff)).append(char(header.size() >> 8)).append(header);
        npy.append(QByteArray(400, '\0'));
        QFile f(dir.filePath("line.npy"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(npy);
        f.close();
        QJsonArray buffers = json.value("buffers").toArray();
        for (qsizetype i = 0; i < buffers.size(); ++i) {
            QJsonObject b = buffers[i].toObject();
            if (b.value("init").toObject().value("file") == QJsonValue("LINE")) {
                b.insert("init", QJsonObject{{"kind", "npy"}, {"file", f.fileName()}});
                buffers[i] = b;
            }
        }
        json.insert("buffers", buffers);
        const auto r = prepare(json);
        QVERIFY(!r);
        QCOMPARE(r.error().message, message);
        QVERIFY(r.error().path.startsWith(QStringLiteral("launches[0].args")));
    }

    // kpg grade's sentinel: a checked output written through a surface is filled before the step that binds it
    // as a surface, never before one that only reads it through a texture.
    void sentinelBeforeSurfaceSteps()
    {
        RunRequest r;
        r.buffers.resize(2);
        r.buffers[0].name = "img";
        r.buffers[1].name = "out";
        r.textures << RunTexture{
            *TextureSpec::fromJson(binding(R"({"texture": "out"})"), "t"), 1, DType::Float32, {4, 32}, "t"};
        r.textures << RunTexture{
            *TextureSpec::fromJson(binding(R"({"surface": "out"})"), "s"), 1, DType::Float32, {4, 32}, "s"};
        RunStep read;
        read.args.resize(1);
        read.args[0].texture = 0;
        RunStep write = read;
        write.args[0].texture = 1;
        r.steps = {read, write};
        r.sentinelBuffers = {1};
        QCOMPARE(sentinelBeforeSteps(r), (QList<QList<int>>{{}, {1}}));
    }

    // The device's limits, checked by the worker once it knows them (and the address, for in-place layouts).
    void deviceLimits_data()
    {
        QTest::addColumn<QByteArray>("bindingJson");
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<QList<qint64>>("shape");
        QTest::addColumn<quint64>("address");
        QTest::addColumn<QString>("message"); // empty: accepted
        TextureLimits l;
        QTest::newRow("2-D array within the limits")
            << QByteArray(R"({"texture": "a"})") << "float32" << QList<qint64>{65536, 131072} << quint64(0) << "";
        QTest::newRow("2-D array too tall")
            << QByteArray(R"({"texture": "a"})") << "float32" << QList<qint64>{65537, 16} << quint64(0)
            << "f: buffer 'a' is 65537 elements along y; this device allows at most 65536 for a 2-D texture";
        QTest::newRow("3-D surface too deep")
            << QByteArray(R"({"surface": "a"})") << "uchar4" << QList<qint64>{16385, 4, 4} << quint64(0)
            << "f: buffer 'a' is 16385 elements along z; this device allows at most 16384 for a 3-D surface";
        QTest::newRow("1-D linear too long")
            << QByteArray(R"({"texture": "a", "layout": "linear"})") << "float32"
            << QList<qint64>{(qint64(1) << 27) + 1} << quint64(0)
            << "f: buffer 'a' is 134217729 elements along x; this device allows at most 134217728 for a "
               "linear texture";
        QTest::newRow("linear at an aligned address")
            << QByteArray(R"({"texture": "a", "layout": "linear"})") << "float32" << QList<qint64>{1000}
            << quint64(0x7f0000001000) << "";
        QTest::newRow("linear at a misaligned address")
            << QByteArray(R"({"texture": "a", "layout": "linear"})") << "float32" << QList<qint64>{1000}
            << quint64(0x7f0000001100)
            << "f: buffer 'a' starts at device address 0x7f0000001100, which is not a multiple of 512 bytes (the "
               "device's texture alignment): use \"layout\": \"array\"";
        QTest::newRow("pitch above the device's maximum")
            << QByteArray(R"({"texture": "a", "layout": "pitched"})") << "float4" << QList<qint64>{4, 131072}
            << quint64(0)
            << "f: buffer 'a' has rows of 2097152 bytes; this device allows a pitch of at most 2097120 "
               "bytes: use \"layout\": \"array\"";
    }
    void deviceLimits()
    {
        QFETCH(QByteArray, bindingJson);
        QFETCH(QString, dtype);
        QFETCH(QList<qint64>, shape);
        QFETCH(quint64, address);
        QFETCH(QString, message);
        const auto spec = TextureSpec::fromJson(QJsonDocument::fromJson(bindingJson).object(), "f");
        KP_VERIFY_RESULT(spec);
        const auto d = buildTextureDescriptors(*spec, *dtypeFromName(dtype), shape, "f");
        KP_VERIFY_RESULT(d);
        const Status s = checkTextureLimits(*d, *spec, TextureLimits{}, address, "f");
        QCOMPARE(s ? QString() : s.error().message, message);
    }

    // kpg check on the preset without a GPU gets as far as binding the texture.
    void kpgCheckBindsThePreset()
    {
        const KpTest::Run r = KpTest::run("kpg", {"check", presetPath()}, {kNoDriver});
        QCOMPARE(r.exitCode, 69);
        QVERIFY2(r.out.contains("texture_rotate.cu compiled for sm_"), qPrintable(r.out + r.err));
        QVERIFY2(r.err.contains("kpg: No NVIDIA driver found"), qPrintable(r.err));
    }

    // PyCUDA refuses a texture, naming the parameter (it has no texture
    // objects); cuda-cpp, CuPy and cuda-python write the array, the object
    // with the binding's modes, the copy before the launch and the handle as
    // the argument.
    void exportTextures_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("refusal"); // empty: exported
        QTest::addColumn<QStringList>("wanted");
        QTest::newRow("pycuda") << "pycuda"
                                << QStringLiteral(
                                       "kpg: export: launches (step 1, kernel 'rotateImage'): parameter 5 "
                                       "('image', cudaTextureObject_t) is bound to a texture over img (array, "
                                       "linear filter, wrap, normalized), which cannot be exported for "
                                       "pycuda: PyCUDA has texture references only, which CUDA 12 removed, "
                                       "and no texture or surface objects; export for cupy, cuda-python or "
                                       "cuda-cpp")
                                << QStringList{};
        QTest::newRow("cuda-cpp") << "cuda-cpp" << QString()
                                  << QStringList{
                                         "cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat)",
                                         "CHECK(cudaMalloc3DArray(&g_textureArrays[0], &format, "
                                         "make_cudaExtent(512, 512, 0), 0));",
                                         "texture.addressMode[0] = cudaAddressModeWrap;",
                                         "texture.filterMode = cudaFilterModeLinear;",
                                         "texture.normalizedCoords = 1;",
                                         "CHECK(cudaCreateTextureObject(&object, &resource, &texture, nullptr));",
                                         "copyTexture(0, dev[0 /* img */], true, g_streams[0]);",
                                         "textureObject(0));",
                                         "makeTextures();",
                                         "destroyTextures();"};
        QTest::newRow("cupy") << "cupy" << QString()
                              << QStringList{"Texture((32, 0, 0, 0), \"float\", (512, 512, 0), np.float32, "
                                             "address=(\"wrap\", \"wrap\", \"wrap\"), linear=True, "
                                             "normalized_float=False, normalized_coords=True),",
                                             "textures[0].copy(dev[\"img\"], True, streams[0])", "textures[0].handle()",
                                             "cp.cuda.texture.TextureObject(resource, texture)"};
        QTest::newRow("cuda-python") << "cuda-python" << QString()
                                     << QStringList{
                                            "Texture(driver.CUarray_format.CU_AD_FORMAT_FLOAT, 1, (512, 512, 0), 4, "
                                            "address=(driver.CUaddress_mode.CU_TR_ADDRESS_MODE_WRAP, "
                                            "driver.CUaddress_mode.CU_TR_ADDRESS_MODE_WRAP, "
                                            "driver.CUaddress_mode.CU_TR_ADDRESS_MODE_WRAP), "
                                            "filter_mode=driver.CUfilter_mode.CU_TR_FILTER_MODE_LINEAR, "
                                            "flags=driver.CU_TRSF_NORMALIZED_COORDINATES),",
                                            "textures[0].copy(dev[\"img\"], True, streams[0])", "textures[0].handle()",
                                            "driver.cuTexObjectCreate(resource, texture, None)"};
    }
    void exportTextures()
    {
        QFETCH(QString, target);
        QFETCH(QString, refusal);
        QFETCH(QStringList, wanted);
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString out = tmp.filePath(QStringLiteral("out"));
        const KpTest::Run r = KpTest::run("kpg", {"export", presetPath(), "--to", target, "-o", out});
        if (!refusal.isEmpty()) {
            QCOMPARE(r.exitCode, 65);
            QCOMPARE(r.err.trimmed(), refusal);
            QVERIFY(!QFileInfo::exists(out));
            return;
        }
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        const bool cpp = target == QLatin1String("cuda-cpp");
        QFile f(out + (cpp ? QStringLiteral("/main.cu") : QStringLiteral("/main.py")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString program = QString::fromUtf8(f.readAll());
        // The sample's own host code: the array, the texture object, the copy, the launch.
        for (const QString &want : std::as_const(wanted)) {
            QVERIFY2(program.contains(want), qPrintable(want + QStringLiteral("\n---\n") + program.right(6000)));
        }
        if (cpp) {
            QVERIFY(program.indexOf("copyTexture(0, dev[0 /* img */], true") < program.indexOf("::rotateImage<<<"));
        } else {
            QVERIFY(program.indexOf("textures[0].copy(dev[\"img\"], True") <
                    program.indexOf("launch(kernels[\"rotateImage\"]"));
            QProcess py;
            py.start(QStringLiteral("python3"), {QStringLiteral("-m"), QStringLiteral("py_compile"), f.fileName()});
            if (py.waitForStarted(10000)) {
                QVERIFY(py.waitForFinished(60000));
                QVERIFY2(py.exitCode() == 0, qPrintable(QString::fromUtf8(py.readAllStandardError())));
            }
        }
    }

    // A surface is copied back after its launch; an in-place layout is refused for cuda-cpp.
    void exportSurfaceAndRefusedLayout_data()
    {
        QTest::addColumn<QJsonObject>("json");
        QTest::addColumn<QString>("refusal"); // empty: exported
        QTest::addColumn<QString>("want");
        QTest::newRow("surface written back")
            << project(QJsonArray{binding(R"({"surface": "out"})"), "w", "h"}, "invert") << QString()
            << "copyTexture(0, dev[1 /* out */], false, g_streams[0]); // the surface's writes back into out";
        QTest::newRow("pitched refused")
            << project(QJsonArray{"out", "w", "h", "angle", binding(R"({"texture": "img", "layout": "pitched"})")})
            << "kpg: export: launches (step 1, kernel 'rotate'): parameter 5 ('tex', cudaTextureObject_t) is bound to "
               "a texture over img (pitched, point sampling, clamp), which cannot be exported yet (the export "
               "makes textures over a CUDA array only: \"layout\": \"array\")"
            << QString();
    }
    void exportSurfaceAndRefusedLayout()
    {
        QFETCH(QJsonObject, json);
        QFETCH(QString, refusal);
        QFETCH(QString, want);
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        QFile f(tmp.filePath("p.kpg"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(json).toJson());
        f.close();
        const QString out = tmp.filePath(QStringLiteral("out"));
        const KpTest::Run r = KpTest::run("kpg", {"export", f.fileName(), "--to", "cuda-cpp", "-o", out});
        if (!refusal.isEmpty()) {
            QCOMPARE(r.exitCode, 65);
            QCOMPARE(r.err.trimmed(), refusal);
            return;
        }
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        QFile program(out + QStringLiteral("/main.cu"));
        QVERIFY(program.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(program.readAll());
        QVERIFY2(text.contains(want), qPrintable(text));
        QVERIFY(text.contains("cudaArraySurfaceLoadStore"));
        QVERIFY(text.contains("CHECK(cudaCreateSurfaceObject(&object, &resource));"));
    }
};

QTEST_GUILESS_MAIN(TestTextureBind)
#include "tst_texturebind.moc"
