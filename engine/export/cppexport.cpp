// The cuda-cpp export (docs/export.md): one main.cu that includes the
// project's kernel source and is built by nvcc, with the runtime API and
// <<<>>> launches, so the compiler checks every argument against the
// kernel's parameter types; and build.sh with the nvcc line.

#include "export/exportplan.h"

#include <QRegularExpression>
#include <QStringList>

namespace Kp::ExportDetail {

namespace {

QString cpp(const QString &s)
{
    return cppStringLiteral(s);
}

QString shellQuote(const QString &s)
{
    QString out = s;
    out.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
    return QLatin1Char('\'') + out + QLatin1Char('\'');
}

const char *cTypeOf(DType t)
{
    switch (t) {
    case DType::Int8: return "signed char";
    case DType::UInt8: return "unsigned char";
    case DType::Int16: return "short";
    case DType::UInt16: return "unsigned short";
    case DType::Int32: return "int";
    case DType::UInt32: return "unsigned int";
    case DType::Int64: return "long long";
    case DType::UInt64: return "unsigned long long";
    case DType::Float16: return "__half";
    case DType::BFloat16: return "__nv_bfloat16";
    case DType::Float64: return "double";
    default: return "float";
    }
}

/** The enumerator the checks use for a component type. */
const char *compName(DType t)
{
    switch (dtypeInfo(t).component) {
    case DType::Int8: return "Comp::I8";
    case DType::UInt8: return "Comp::U8";
    case DType::Int16: return "Comp::I16";
    case DType::UInt16: return "Comp::U16";
    case DType::Int32: return "Comp::I32";
    case DType::UInt32: return "Comp::U32";
    case DType::Int64: return "Comp::I64";
    case DType::UInt64: return "Comp::U64";
    case DType::Float16: return "Comp::F16";
    case DType::BFloat16: return "Comp::BF16";
    case DType::Float64: return "Comp::F64";
    default: return "Comp::F32";
    }
}

/** A literal of type t holding exactly the value in bytes, as C++ source. */
QString cppValue(DType t, const QByteArray &bytes, const QString &typeName)
{
    const QString text = shortestText(t, bytes);
    const ScalarKind k = dtypeInfo(t).kind;
    QString lit;
    if (text == QLatin1String("nan")) {
        lit = QStringLiteral("NAN");
    } else if (text == QLatin1String("inf")) {
        lit = QStringLiteral("INFINITY");
    } else if (text == QLatin1String("-inf")) {
        lit = QStringLiteral("-INFINITY");
    } else if (k == ScalarKind::SignedInt || k == ScalarKind::UnsignedInt) {
        lit = text;
        if (dtypeInfo(t).componentBytes == 8) {
            lit = text == QLatin1String("-9223372036854775808")
                      ? QStringLiteral("(-9223372036854775807LL - 1)")
                      : text + (k == ScalarKind::UnsignedInt ? QStringLiteral("ULL") : QStringLiteral("LL"));
        } else if (k == ScalarKind::UnsignedInt) {
            lit += QLatin1Char('u');
        }
    } else if (t == DType::Float64) {
        lit = text.contains(QLatin1Char('.')) || text.contains(QLatin1Char('e')) ? text : text + QStringLiteral(".0");
    } else {
        lit =
            (text.contains(QLatin1Char('.')) || text.contains(QLatin1Char('e')) ? text : text + QStringLiteral(".0")) +
            QLatin1Char('f');
    }
    if (t == DType::Float16) {
        return QStringLiteral("__float2half(%1)").arg(lit);
    }
    if (t == DType::BFloat16) {
        return QStringLiteral("__float2bfloat16(%1)").arg(lit);
    }
    return QStringLiteral("static_cast<%1>(%2)").arg(typeName, lit);
}

const char *kPrelude = R"CPP(
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>
)CPP";

const char *kCheckMacro = R"CPP(
// Stops the program at the first failed CUDA call, naming it (the kernel source may have a CHECK of its own).
#undef CHECK
#define CHECK(call)                                                                                     \
    do {                                                                                                \
        const cudaError_t err_ = (call);                                                                \
        if (err_ != cudaSuccess) {                                                                      \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
            std::exit(2);                                                                               \
        }                                                                                               \
    } while (0)
)CPP";

const char *kBufferStruct = R"CPP(
struct Buffer
{
    const char *name;
    size_t bytes;
    const char *input; // .npy with the initial contents; null: zeros
    bool upload;       // false: an "uninitialized" buffer, allocated only
    std::vector<unsigned char> host;
};
)CPP";

const char *kHelpers = R"CPP(
std::string g_dir; // the folder of this program's files

// Reads the data of a .npy file this export wrote (C order, little endian),
// checking that it holds exactly `bytes` bytes after its header.
std::vector<unsigned char> loadNpy(const std::string &name, size_t bytes)
{
    const std::string path = g_dir + name;
    std::ifstream in(path, std::ios::binary);
    std::vector<unsigned char> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
        std::fprintf(stderr, "cannot read %s\n", path.c_str());
        std::exit(2);
    }
    if (file.size() < 10 || std::memcmp(file.data(), "\x93NUMPY", 6) != 0) {
        std::fprintf(stderr, "%s is not a .npy file\n", path.c_str());
        std::exit(2);
    }
    const size_t header = file[6] == 1 ? 10 + (file[8] | (file[9] << 8))
                                       : 12 + (file[8] | (file[9] << 8) | (file[10] << 16) | (size_t(file[11]) << 24));
    if (header > file.size() || file.size() - header != bytes) {
        std::fprintf(stderr, "%s does not hold %zu bytes of data\n", path.c_str(), bytes);
        std::exit(2);
    }
    return std::vector<unsigned char>(file.begin() + long(header), file.end());
}

enum class Comp { I8, U8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64 };

template <typename T>
T load(const unsigned char *p)
{
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

size_t compBytes(Comp c)
{
    switch (c) {
    case Comp::I8: case Comp::U8: return 1;
    case Comp::I16: case Comp::U16: case Comp::F16: case Comp::BF16: return 2;
    case Comp::I32: case Comp::U32: case Comp::F32: return 4;
    default: return 8;
    }
}

double value(const unsigned char *base, Comp c, size_t i)
{
    const unsigned char *p = base + i * compBytes(c);
    switch (c) {
    case Comp::I8: return load<int8_t>(p);
    case Comp::U8: return load<uint8_t>(p);
    case Comp::I16: return load<int16_t>(p);
    case Comp::U16: return load<uint16_t>(p);
    case Comp::I32: return load<int32_t>(p);
    case Comp::U32: return load<uint32_t>(p);
    case Comp::I64: return double(load<int64_t>(p));
    case Comp::U64: return double(load<uint64_t>(p));
    case Comp::F16: { __half_raw r; r.x = load<uint16_t>(p); return __half2float(__half(r)); }
    case Comp::BF16: { __nv_bfloat16_raw r; r.x = load<uint16_t>(p); return __bfloat162float(__nv_bfloat16(r)); }
    case Comp::F32: return load<float>(p);
    default: return load<double>(p);
    }
}

// The bits of a float of type c as an integer that counts units in the last place.
int64_t orderedBits(double v, Comp c)
{
    uint64_t bits = 0;
    int width = 64;
    if (c == Comp::F16) {
        bits = __half_raw(__float2half_rn(float(v))).x;
        width = 16;
    } else if (c == Comp::BF16) {
        bits = __nv_bfloat16_raw(__float2bfloat16_rn(float(v))).x;
        width = 16;
    } else if (c == Comp::F32) {
        const float f = float(v);
        uint32_t u;
        std::memcpy(&u, &f, 4);
        bits = u;
        width = 32;
    } else {
        std::memcpy(&bits, &v, 8);
    }
    const uint64_t sign = uint64_t(1) << (width - 1);
    return (bits & sign) ? -int64_t(bits & ~sign) : int64_t(bits);
}

// One check of the project (docs/checks.md): integers exactly; floats pass when
// |got - expected| <= atol + rtol*|expected|, or when they are at most ulp units
// in the last place apart in the buffer's own type. got[gi[k]] is compared with
// expected[ei[k]].
bool check(const char *name, const unsigned char *got, Comp gc, const std::vector<size_t> &gi,
           const unsigned char *expected, Comp ec, const std::vector<size_t> &ei, bool exact, double atol, double rtol,
           long long ulp, bool nanOk)
{
    size_t bad = 0, first = 0;
    for (size_t k = 0; k < gi.size(); ++k) {
        bool ok;
        const double g = value(got, gc, gi[k]);
        const double e = value(expected, ec, ei[k]);
        if (exact) {
            if ((gc == Comp::I64 || gc == Comp::U64) && gc == ec) {
                ok = std::memcmp(got + gi[k] * 8, expected + ei[k] * 8, 8) == 0;
            } else {
                ok = g == e;
            }
        } else if (std::isfinite(g) && std::isfinite(e)) {
            const int64_t og = orderedBits(g, gc), oe = orderedBits(e, gc);
            const double distance = (og < 0) == (oe < 0) ? double(og > oe ? og - oe : oe - og)
                                                         : std::fabs(double(og)) + std::fabs(double(oe));
            ok = std::fabs(g - e) <= atol + rtol * std::fabs(e) || distance <= double(ulp);
        } else {
            ok = g == e || (nanOk && std::isnan(g) && std::isnan(e));
        }
        if (!ok && bad++ == 0) {
            first = k;
        }
    }
    if (bad == 0) {
        std::printf("PASS %s (%zu values)\n", name, gi.size());
        return true;
    }
    std::printf("FAIL %s: %zu of %zu values differ; first at flat index %zu: got %.9g, expected %.9g\n", name, bad,
                gi.size(), gi[first], value(got, gc, gi[first]), value(expected, ec, ei[first]));
    return false;
}

// The value indices (element * components + component) of a box [begin, end)
// given as x, y, z over a shape given outermost first.
std::vector<size_t> regionIndices(std::vector<size_t> shape, size_t comps, std::vector<size_t> begin, std::vector<size_t> end)
{
    while (shape.size() < 3) {
        shape.insert(shape.begin(), 1);
    }
    while (begin.size() < 3) {
        begin.push_back(0);
        end.push_back(1);
    }
    std::vector<size_t> out;
    for (size_t z = begin[2]; z < end[2]; ++z) {
        for (size_t y = begin[1]; y < end[1]; ++y) {
            for (size_t x = begin[0]; x < end[0]; ++x) {
                const size_t e = (z * shape[1] + y) * shape[2] + x;
                for (size_t c = 0; c < comps; ++c) {
                    out.push_back(e * comps + c);
                }
            }
        }
    }
    return out;
}

std::vector<size_t> everyIndex(size_t n)
{
    std::vector<size_t> out(n);
    for (size_t i = 0; i < n; ++i) {
        out[i] = i;
    }
    return out;
}

)CPP";

class CppWriter
{
public:
    explicit CppWriter(Plan &plan)
        : m_plan(plan)
    {
    }

    void line(const QString &s = {}, int indent = 0)
    {
        m_out += QString(indent * 4, QLatin1Char(' ')) + s + QLatin1Char('\n');
    }
    void comment(const QString &s, int indent = 0) { line(QStringLiteral("// ") + commentText(s), indent); }

    int bufferIndex(const QString &name) const
    {
        for (int i = 0; i < m_plan.buffers.size(); ++i) {
            if (m_plan.buffers[i].name == name) {
                return i;
            }
        }
        return -1;
    }

    QString devRef(const QString &name) const
    {
        return QStringLiteral("dev[%1 /* %2 */]").arg(bufferIndex(name)).arg(name);
    }

    QString argText(const PlanArg &a) const
    {
        if (a.isBuffer) {
            const QString base =
                a.byteOffset ? QStringLiteral("static_cast<char *>(%1) + %2").arg(devRef(a.buffer)).arg(a.byteOffset)
                             : devRef(a.buffer);
            if (a.pointeeType == QLatin1String("void")) {
                return base;
            }
            return QStringLiteral("reinterpret_cast<%1 *>(%2)").arg(a.pointeeType, base);
        }
        if (a.scalar >= 0 && m_plan.scalars[a.scalar].type == a.valueType) {
            return m_scalarIds.value(a.scalar);
        }
        if (a.structValue >= 0) {
            return m_plan.structValues[a.structValue].identifier;
        }
        if (a.texture >= 0) {
            return QStringLiteral("textureObject(%1)").arg(a.texture);
        }
        return cppValue(a.valueType, a.bytes, a.cType);
    }

    /** The copies into the arrays of a launch's textures and surfaces (before), or out of its surfaces (after). */
    void textureCopies(const PlanStep &s, const QString &stream, bool before, int in)
    {
        for (const int texture : textureCopiesOf(m_plan, s, before)) {
            const PlanTexture &t = m_plan.textures[texture];
            line(QStringLiteral("copyTexture(%1, %2, %3, %4); // %5")
                     .arg(texture)
                     .arg(devRef(t.buffer), before ? QStringLiteral("true") : QStringLiteral("false"), stream,
                          commentText(before ? QStringLiteral("%1: the buffer into the array").arg(t.spec.describe())
                                             : QStringLiteral("the surface's writes back into %1").arg(t.buffer))),
                 in);
        }
    }

    /** Makes every texture and surface object over a CUDA array, and the copies between array and buffer. */
    void textureFunctions()
    {
        const Plan &p = m_plan;
        const int n = int(p.textures.size());
        comment(QStringLiteral("Texture and surface objects, made as the playground makes them: a CUDA array per "
                               "binding, filled from its buffer before every launch that binds it, and a surface's "
                               "array copied back into the buffer after the launch."));
        line(QStringLiteral("cudaArray_t g_textureArrays[%1];").arg(n));
        line(QStringLiteral("unsigned long long g_textureObjects[%1]; // cudaTextureObject_t or cudaSurfaceObject_t")
                 .arg(n));
        line(QStringLiteral("const size_t g_textureExtents[%1][4] = { // elements along x, rows, layers, bytes per row")
                 .arg(n));
        for (const PlanTexture &t : p.textures) {
            const TextureDescriptors d = *buildTextureDescriptors(t.spec, t.dtype, t.shape, t.where);
            line(QStringLiteral("{%1, %2, %3, %4}, // %5")
                     .arg(d.width)
                     .arg(d.height)
                     .arg(d.depth)
                     .arg(d.rowBytes)
                     .arg(commentText(t.spec.describe())),
                 1);
        }
        line(QStringLiteral("};"));
        line();
        line(QStringLiteral("void makeTextures()"));
        line(QStringLiteral("{"));
        static const char *const addressModes[] = {"cudaAddressModeClamp", "cudaAddressModeWrap",
                                                   "cudaAddressModeMirror", "cudaAddressModeBorder"};
        for (int i = 0; i < n; ++i) {
            const PlanTexture &t = p.textures[i];
            const TextureDescriptors d = *buildTextureDescriptors(t.spec, t.dtype, t.shape, t.where);
            const DTypeInfo &info = dtypeInfo(t.dtype);
            const ScalarKind kind = dtypeInfo(info.component).kind;
            const int bits = info.componentBytes * 8;
            QStringList channels;
            for (int c = 0; c < 4; ++c) {
                channels << QString::number(c < info.components ? bits : 0);
            }
            line(QStringLiteral("{"), 1);
            comment(QStringLiteral("%1, %2 %3; for %4")
                        .arg(t.spec.describe(), dtypeName(t.dtype), shapeText(t.shape), t.where),
                    2);
            line(QStringLiteral("const cudaChannelFormatDesc format = cudaCreateChannelDesc(%1, %2);")
                     .arg(channels.join(QStringLiteral(", ")),
                          kind == ScalarKind::SignedInt     ? QStringLiteral("cudaChannelFormatKindSigned")
                          : kind == ScalarKind::UnsignedInt ? QStringLiteral("cudaChannelFormatKindUnsigned")
                                                            : QStringLiteral("cudaChannelFormatKindFloat")),
                 2);
            // cudaMalloc3DArray: height 0 makes a 1-D array, depth 0 a 2-D one.
            line(QStringLiteral("CHECK(cudaMalloc3DArray(&g_textureArrays[%1], &format, make_cudaExtent(%2, %3, %4), "
                                "%5));")
                     .arg(i)
                     .arg(d.array.Width)
                     .arg(d.array.Height)
                     .arg(d.array.Depth)
                     .arg(t.spec.isSurface() ? QStringLiteral("cudaArraySurfaceLoadStore") : QStringLiteral("0")),
                 2);
            line(QStringLiteral("cudaResourceDesc resource{};"), 2);
            line(QStringLiteral("resource.resType = cudaResourceTypeArray;"), 2);
            line(QStringLiteral("resource.res.array.array = g_textureArrays[%1];").arg(i), 2);
            if (t.spec.isSurface()) {
                line(QStringLiteral("cudaSurfaceObject_t object = 0;"), 2);
                line(QStringLiteral("CHECK(cudaCreateSurfaceObject(&object, &resource));"), 2);
            } else {
                line(QStringLiteral("cudaTextureDesc texture{};"), 2);
                for (int axis = 0; axis < 3; ++axis) {
                    line(QStringLiteral("texture.addressMode[%1] = %2;")
                             .arg(axis)
                             .arg(QLatin1String(addressModes[int(t.spec.address[size_t(axis)])])),
                         2);
                }
                line(QStringLiteral("texture.filterMode = %1;")
                         .arg(t.spec.filter == TextureSpec::Filter::Linear ? QStringLiteral("cudaFilterModeLinear")
                                                                           : QStringLiteral("cudaFilterModePoint")),
                     2);
                line(QStringLiteral("texture.readMode = %1;")
                         .arg(t.spec.read == TextureSpec::Read::NormalizedFloat
                                  ? QStringLiteral("cudaReadModeNormalizedFloat")
                                  : QStringLiteral("cudaReadModeElementType")),
                     2);
                line(QStringLiteral("texture.normalizedCoords = %1;").arg(t.spec.normalizedCoords ? 1 : 0), 2);
                for (int c = 0; c < 4; ++c) {
                    if (t.spec.border[size_t(c)] != 0) {
                        line(QStringLiteral("texture.borderColor[%1] = %2f;")
                                 .arg(c)
                                 .arg(double(t.spec.border[size_t(c)]), 0, 'g', 9),
                             2);
                    }
                }
                line(QStringLiteral("cudaTextureObject_t object = 0;"), 2);
                line(QStringLiteral("CHECK(cudaCreateTextureObject(&object, &resource, &texture, nullptr));"), 2);
            }
            line(QStringLiteral("g_textureObjects[%1] = object;").arg(i), 2);
            line(QStringLiteral("}"), 1);
        }
        line(QStringLiteral("}"));
        line();
        line(QStringLiteral(R"(unsigned long long textureObject(int t)
{
    return g_textureObjects[t];
}

// Copies buffer into texture t's array (toArray) or the array into buffer, on stream s.
void copyTexture(int t, void *buffer, bool toArray, cudaStream_t s)
{
    const size_t *e = g_textureExtents[t];
    cudaMemcpy3DParms copy{};
    const cudaPitchedPtr memory = make_cudaPitchedPtr(buffer, e[3], e[0], e[1]);
    if (toArray) {
        copy.srcPtr = memory;
        copy.dstArray = g_textureArrays[t];
    } else {
        copy.srcArray = g_textureArrays[t];
        copy.dstPtr = memory;
    }
    copy.extent = make_cudaExtent(e[0], e[1], e[2]);
    copy.kind = cudaMemcpyDeviceToDevice;
    CHECK(cudaMemcpy3DAsync(&copy, s));
}

void destroyTextures())"));
        line(QStringLiteral("{"));
        for (int i = 0; i < n; ++i) {
            line(QStringLiteral("CHECK(%1(g_textureObjects[%2]));")
                     .arg(p.textures[i].spec.isSurface() ? QStringLiteral("cudaDestroySurfaceObject")
                                                         : QStringLiteral("cudaDestroyTextureObject"))
                     .arg(i),
                 1);
            line(QStringLiteral("CHECK(cudaFreeArray(g_textureArrays[%1]));").arg(i), 1);
        }
        line(QStringLiteral("}"));
        line();
    }

    void steps(const PlanRun &run, int indent)
    {
        const bool forked = run.usesStreams() && run.streams.size() > 1;
        if (forked) {
            comment(QStringLiteral("Every stream starts after the work queued on the main stream so far."), indent);
            line(QStringLiteral("CHECK(cudaEventRecord(g_fork, g_streams[0]));"), indent);
            line(QStringLiteral("for (int s = 1; s < %1; ++s) {").arg(run.streams.size()), indent);
            line(QStringLiteral("CHECK(cudaStreamWaitEvent(g_streams[s], g_fork, 0));"), indent + 1);
            line(QStringLiteral("}"), indent);
        }
        if (run.repeat > 1) {
            line(QStringLiteral("for (int repetition = 0; repetition < %1; ++repetition) {").arg(run.repeat), indent);
            ++indent;
        }
        for (int i = 0; i < run.steps.size();) {
            const PlanStep &s = run.steps[i];
            int same = 1;
            while (i + same < run.steps.size() && run.steps[i + same].sameAs(s)) {
                ++same;
            }
            int in = indent;
            if (same > 1) {
                line(QStringLiteral("for (int k = 0; k < %1; ++k) { // %1 identical launches").arg(same), in);
                ++in;
            }
            const QString st = QStringLiteral("g_streams[%1]").arg(s.stream);
            for (int w : s.waits) {
                line(QStringLiteral("CHECK(cudaStreamWaitEvent(%1, g_events[%2], 0)); // %3")
                         .arg(st)
                         .arg(w)
                         .arg(commentText(run.events.value(w))),
                     in);
            }
            switch (s.kind) {
            case RunStep::Kind::Kernel: {
                QStringList args;
                for (const PlanArg &a : s.args) {
                    args << argText(a);
                }
                if (!s.label.isEmpty()) {
                    comment(s.label, in);
                }
                textureCopies(s, st, true, in);
                if (s.cooperative) {
                    // cudaLaunchKernelEx converts each argument to its parameter's type, as <<<>>> does.
                    comment(QStringLiteral("A cooperative launch, so that grid.sync() works: the whole grid must fit "
                                           "on the GPU at once."),
                            in);
                    line(QStringLiteral("{"), in);
                    line(QStringLiteral("cudaLaunchAttribute cooperative{};"), in + 1);
                    line(QStringLiteral("cooperative.id = cudaLaunchAttributeCooperative;"), in + 1);
                    line(QStringLiteral("cooperative.val.cooperative = 1;"), in + 1);
                    line(QStringLiteral("cudaLaunchConfig_t config{dim3(%1, %2, %3), dim3(%4, %5, %6), %7, %8, "
                                        "&cooperative, 1};")
                             .arg(s.grid[0])
                             .arg(s.grid[1])
                             .arg(s.grid[2])
                             .arg(s.block[0])
                             .arg(s.block[1])
                             .arg(s.block[2])
                             .arg(s.sharedBytes)
                             .arg(st),
                         in + 1);
                    line(QStringLiteral("CHECK(cudaLaunchKernelEx(&config, ::%1%2));")
                             .arg(s.kernel,
                                  args.isEmpty() ? QString() : QStringLiteral(", ") + args.join(QStringLiteral(", "))),
                         in + 1);
                    line(QStringLiteral("}"), in);
                    textureCopies(s, st, false, in);
                    break;
                }
                // "::": a kernel named like one of this program's functions is still the kernel.
                line(QStringLiteral("::%1<<<dim3(%2, %3, %4), dim3(%5, %6, %7), %8, %9>>>(%10);")
                         .arg(s.kernel)
                         .arg(s.grid[0])
                         .arg(s.grid[1])
                         .arg(s.grid[2])
                         .arg(s.block[0])
                         .arg(s.block[1])
                         .arg(s.block[2])
                         .arg(s.sharedBytes)
                         .arg(st, args.join(QStringLiteral(", "))),
                     in);
                line(QStringLiteral("CHECK(cudaGetLastError());"), in);
                textureCopies(s, st, false, in);
                break;
            }
            case RunStep::Kind::CopyToDevice:
                comment(s.label, in);
                line(QStringLiteral(
                         "CHECK(cudaMemcpyAsync(static_cast<char *>(%1) + %2, g_buffers[%3].host.data() + %2, %4, "
                         "cudaMemcpyHostToDevice, %5));")
                         .arg(devRef(s.buffer))
                         .arg(s.offset)
                         .arg(bufferIndex(s.buffer))
                         .arg(s.bytes)
                         .arg(st),
                     in);
                break;
            case RunStep::Kind::CopyToHost:
                comment(s.label, in);
                line(QStringLiteral(
                         "CHECK(cudaMemcpyAsync(g_buffers[%1].host.data() + %2, static_cast<char *>(%3) + %2, %4, "
                         "cudaMemcpyDeviceToHost, %5));")
                         .arg(bufferIndex(s.buffer))
                         .arg(s.offset)
                         .arg(devRef(s.buffer))
                         .arg(s.bytes)
                         .arg(st),
                     in);
                break;
            case RunStep::Kind::Memset:
                comment(s.label, in);
                line(QStringLiteral("CHECK(cudaMemsetAsync(static_cast<char *>(%1) + %2, %3, %4, %5));")
                         .arg(devRef(s.buffer))
                         .arg(s.offset)
                         .arg(s.memsetValue)
                         .arg(s.bytes)
                         .arg(st),
                     in);
                break;
            case RunStep::Kind::Record:
            case RunStep::Kind::Wait: break;
            }
            if (s.event >= 0) {
                line(QStringLiteral("CHECK(cudaEventRecord(g_events[%1], %2)); // %3")
                         .arg(s.event)
                         .arg(st, commentText(run.events.value(s.event))),
                     in);
            }
            if (same > 1) {
                line(QStringLiteral("}"), indent);
            }
            i += same;
        }
        for (const auto &[a, b] : run.swaps) {
            line(QStringLiteral("std::swap(%1, %2);").arg(devRef(a), devRef(b)), indent);
        }
        if (run.repeat > 1) {
            --indent;
            line(QStringLiteral("}"), indent);
        }
        if (forked) {
            comment(QStringLiteral("The main stream waits for every other stream's work."), indent);
            line(QStringLiteral("for (int s = 1; s < %1; ++s) {").arg(run.streams.size()), indent);
            line(QStringLiteral("CHECK(cudaEventRecord(g_join, g_streams[s]));"), indent + 1);
            line(QStringLiteral("CHECK(cudaStreamWaitEvent(g_streams[0], g_join, 0));"), indent + 1);
            line(QStringLiteral("}"), indent);
        }
    }

    Result<QList<ExportFile>> write();

private:
    Plan &m_plan;
    QString m_out;
    QStringList m_scalarIds;
};

Result<QList<ExportFile>> CppWriter::write()
{
    Plan &p = m_plan;
    const PlanModule &m = p.modules.first();
    QStringList macroNames;
    for (const QString &d : p.defines) {
        macroNames << d.section(QLatin1Char('='), 0, 0);
    }
    static const QRegularExpression defineRe(QStringLiteral("#\\s*define\\s+([A-Za-z_][A-Za-z0-9_]*)"));
    for (const PlanModule &mod : p.modules) {
        for (auto it = defineRe.globalMatch(QString::fromUtf8(mod.text)); it.hasNext();) {
            macroNames << it.next().captured(1);
        }
    }
    // The reference's own source goes into a translation unit of its own: it may define the same names.
    const bool refUnit = p.reference && p.reference->module != p.run.module;
    bool symbols = false;
    for (const PlanBuffer &b : p.buffers) {
        symbols = symbols || !b.symbol.isEmpty();
    }
    // The address of each buffer that is a device variable, in the unit whose kernels use it (each program unit
    // has its own variable: the reference's, in reference_steps.cu, is another than main.cu's).
    const auto symbolTable = [&](const QString &function) {
        line(QStringLiteral("void *%1(int i)").arg(function));
        line(QStringLiteral("{"));
        line(QStringLiteral("void *p = nullptr;"), 1);
        line(QStringLiteral("switch (i) {"), 1);
        for (int i = 0; i < p.buffers.size(); ++i) {
            if (!p.buffers[i].symbol.isEmpty()) {
                line(QStringLiteral("case %1: CHECK(cudaGetSymbolAddress(&p, ::%2)); break; // %3")
                         .arg(i)
                         .arg(p.buffers[i].symbol, commentText(p.buffers[i].name)),
                     1);
            }
        }
        line(QStringLiteral("default: break;"), 1);
        line(QStringLiteral("}"), 1);
        line(QStringLiteral("return p;"), 1);
        line(QStringLiteral("}"));
    };
    for (const PlanScalar &s : p.scalars) {
        m_scalarIds << (macroNames.contains(s.identifier) ? QStringLiteral("scalar_%1").arg(s.name) : s.identifier);
    }

    const QString arch = p.arch == QLatin1String("auto") ? QStringLiteral("${ARCH:-native}") : p.arch;
    // nvcc's -O is the host compiler's level only (the kernel's is ptxas's, below). -O2, not -O3: g++ 12 at -O3
    // spends about 15 s on the checks' per-type loops of this file (24 s builds instead of 6 s), for host code
    // that only reads files and compares; what the program times is the kernel.
    QStringList nvcc{QStringLiteral("nvcc"), QStringLiteral("-std=%1").arg(p.std), QStringLiteral("-O2"),
                     QStringLiteral("-Xptxas=-O%1").arg(p.debug ? 0 : p.optLevel)};
    if (p.debug) {
        nvcc << QStringLiteral("-G");
    } else if (p.lineInfo) {
        nvcc << QStringLiteral("-lineinfo");
    }
    if (p.fastMath) {
        nvcc << QStringLiteral("--use_fast_math");
    }
    QStringList shown = nvcc;
    QString script = QStringLiteral("#!/bin/sh\n# Builds the exported program with nvcc. ARCH: the GPU architecture "
                                    "(default: native, the GPU of this machine).\nset -e\ncd \"$(dirname \"$0\")\"\n");
    QStringList scriptArgs;
    for (const QString &a : nvcc) {
        scriptArgs << shellQuote(a);
    }
    scriptArgs << QStringLiteral("\"-arch=%1\"").arg(arch);
    shown << QStringLiteral("-arch=%1").arg(p.arch == QLatin1String("auto") ? QStringLiteral("native") : p.arch);
    for (const QString &inc : p.includeDirs) {
        if (inc.contains(QLatin1Char('"'))) {
            return Error{
                QStringLiteral("export"),
                Error::Code::BadInput,
                {},
                QStringLiteral("compile.includeDirs: '%1' holds a double quote, which nvcc's own option parser "
                               "does not accept in -I")
                    .arg(inc)};
        }
        scriptArgs << shellQuote(QStringLiteral("-I") + inc);
        shown << QStringLiteral("-I") + inc;
    }
    for (const QString &e : p.extra) {
        scriptArgs << shellQuote(e);
        shown << e;
    }
    if (!p.extra.isEmpty()) {
        p.notes << QStringLiteral("compile.extra: NVRTC options passed to nvcc unchanged");
    }
    const QString units = refUnit ? QStringLiteral("main.cu reference_steps.cu") : QStringLiteral("main.cu");
    scriptArgs << QStringLiteral("-o program %1 \"$@\"").arg(units);
    shown << QStringLiteral("-o program %1").arg(units);
    script += scriptArgs.join(QLatin1Char(' ')) + QLatin1Char('\n');

    comment(p.title);
    line(QStringLiteral("//"));
    comment(QStringLiteral("Exported by Kernel Playground from %1 for cuda-cpp: nvcc and the CUDA runtime API.")
                .arg(p.projectFile.isEmpty() ? QStringLiteral("a project") : p.projectFile));
    comment(QStringLiteral("Build and run beside the files it reads (build.sh has the same command line):"));
    comment(QStringLiteral("    ") + shown.join(QLatin1Char(' ')));
    comment(QStringLiteral("    ./program"));
    comment(QStringLiteral("%1 is the kernel source, inputs/*.npy the buffers' initial contents, expected/*.npy the")
                .arg(m.file));
    comment(QStringLiteral(
        "values expression and .npy checks compare with. Exit code: 0 when every check passes, 1 otherwise."));
    comment(QStringLiteral("nvcc rather than NVRTC: the kernel is compiled with the program, so <<<>>> launches are "
                           "checked against the kernel's parameter types, and templates are launched by name."));
    const int notesAt = int(m_out.size());
    m_out += QString::fromLatin1(kPrelude);
    line();
    const auto includeSource = [&](const PlanModule &mod) {
        comment(QStringLiteral("The project's defines, then the kernel source (%1).").arg(mod.shownName));
        for (const QString &d : p.defines) {
            const qsizetype eq = d.indexOf(QLatin1Char('='));
            line(eq < 0 ? QStringLiteral("#define %1").arg(d)
                        : QStringLiteral("#define %1 %2").arg(d.left(eq), d.mid(eq + 1)));
        }
        if (&mod == &m) {
            line(QStringLiteral("#include %1").arg(cpp(mod.file)));
        } else {
            // In an unnamed namespace, so that kernels named like the project's do not clash when
            // linking; the headers it includes come first, where they belong (at file scope).
            static const QRegularExpression systemInclude(
                QStringLiteral("^[ \\t]*#[ \\t]*include[ \\t]*<([A-Za-z0-9_./+-]+)>"),
                QRegularExpression::MultilineOption);
            for (auto it = systemInclude.globalMatch(QString::fromUtf8(mod.text)); it.hasNext();) {
                line(QStringLiteral("#include <%1>").arg(it.next().captured(1)));
            }
            line(QStringLiteral("namespace {"));
            line(QStringLiteral("#include %1").arg(cpp(mod.file)));
            line(QStringLiteral("} // namespace"));
        }
        m_out += QString::fromLatin1(kCheckMacro);
        line();
        line(QStringLiteral("namespace exported {"));
        m_out += QString::fromLatin1(kBufferStruct);
    };
    includeSource(m);
    m_out += QString::fromLatin1(kHelpers);
    line();

    const PlanRun &run = p.run;
    if (run.streams.first().legacy) {
        return Error{QStringLiteral("export"),
                     Error::Code::BadInput,
                     {},
                     QStringLiteral("the main stream cannot be the legacy stream")};
    }
    line(QStringLiteral("Buffer g_buffers[] = {"));
    for (const PlanBuffer &b : p.buffers) {
        line(QStringLiteral("{%1, %2, %3, %4, {}}, // %5")
                 .arg(cpp(b.name))
                 .arg(b.bytes)
                 .arg(b.inputFile.isEmpty() ? QStringLiteral("nullptr") : cpp(b.inputFile),
                      b.uninitialized ? QStringLiteral("false") : QStringLiteral("true"),
                      commentText(QStringLiteral("%1 %2: %3").arg(dtypeName(b.dtype), shapeText(b.shape), b.initText))),
             1);
    }
    line(QStringLiteral("};"));
    line(QStringLiteral("constexpr int kBuffers = %1;").arg(p.buffers.size()));
    line(QStringLiteral("cudaStream_t g_streams[%1]; // %2").arg(run.streams.size()).arg(commentText([&] {
        QStringList n;
        for (const PlanStream &s : run.streams) {
            n << s.name;
        }
        return n.join(QStringLiteral(", "));
    }())));
    line(QStringLiteral("cudaEvent_t g_events[%1];%2")
             .arg(qMax(1, int(run.events.size())))
             .arg(run.events.isEmpty() ? QString()
                                       : QStringLiteral(" // ") + commentText(run.events.join(QStringLiteral(", ")))));
    line(QStringLiteral("cudaEvent_t g_fork, g_join;"));
    line();

    QList<bool> used(p.scalars.size(), false);
    for (const PlanRun *r : {&p.run, p.reference ? &*p.reference : nullptr}) {
        for (int si = 0; r && si < r->steps.size(); ++si) {
            for (const PlanArg &a : r->steps[si].args) {
                if (!a.isBuffer && a.scalar >= 0) {
                    used[a.scalar] = true;
                }
            }
        }
    }
    const auto scalars = [&] {
        comment(QStringLiteral("The project's scalars, with their exact types."));
        for (int i = 0; i < p.scalars.size(); ++i) {
            const PlanScalar &s = p.scalars[i];
            const QString decl = QStringLiteral("const %1 %2 = %3;")
                                     .arg(QLatin1String(cTypeOf(s.type)), m_scalarIds[i],
                                          cppValue(s.type, s.bytes, QLatin1String(cTypeOf(s.type))));
            if (used[i]) {
                line(decl);
            } else {
                // Unused as an argument: its value is already in the grid, block and chunk numbers below.
                line(QStringLiteral("// ") + decl + QStringLiteral(" (in the launch numbers, not an argument)"));
            }
        }
        line();
        // A struct passed by value: the struct's own definition (from the
        // kernel source) filled with the bytes the playground passes, in the
        // layout NVRTC gave it when exporting; the static_assert stops the
        // build where nvcc would lay it out otherwise.
        QStringList asserted;
        for (const PlanStructValue &v : p.structValues) {
            QStringList members;
            for (const StructLeaf &l : v.leaves) {
                members << QStringLiteral("%1 = %2 at %3").arg(l.path, leafText(l, v.bytes)).arg(l.offset);
            }
            comment(v.written.isEmpty() ? v.where : QStringLiteral("%1: %2").arg(v.where, v.written));
            comment(QStringLiteral("%1 as NVRTC laid it out when exporting: %2 bytes; %3.")
                        .arg(v.type)
                        .arg(v.bytes.size())
                        .arg(members.join(QStringLiteral(", "))));
            if (!asserted.contains(v.type)) {
                asserted << v.type;
                line(QStringLiteral("static_assert(sizeof(%1) == %2, %3);")
                         .arg(v.type)
                         .arg(v.bytes.size())
                         .arg(cpp(QStringLiteral("%1: nvcc lays it out unlike NVRTC did when the project was "
                                                 "exported; export it again")
                                      .arg(v.type))));
            }
            QStringList bytes;
            for (const char b : v.bytes) {
                bytes << QStringLiteral("0x%1").arg(uint(static_cast<unsigned char>(b)), 2, 16, QLatin1Char('0'));
            }
            line(QStringLiteral("const %1 %2 = [] {").arg(v.type, v.identifier));
            line(QStringLiteral("const unsigned char bytes[%1] = {%2};").arg(v.bytes.size()).arg(bytes.join(", ")), 1);
            line(QStringLiteral("%1 value;").arg(v.type), 1);
            line(QStringLiteral("std::memcpy(static_cast<void *>(&value), bytes, sizeof value);"), 1);
            line(QStringLiteral("return value;"), 1);
            line(QStringLiteral("}();"));
            line();
        }
    };
    scalars();
    if (!p.textures.isEmpty()) {
        textureFunctions();
    }
    comment(run.repeat > 1
                ? QStringLiteral("Queues every step %1 times, each repetition followed by the swaps.").arg(run.repeat)
                : QStringLiteral("Queues every step once."));
    line(QStringLiteral("void runSteps(void **dev)"));
    line(QStringLiteral("{"));
    steps(run, 1);
    line(QStringLiteral("}"));
    QString refText;
    if (p.reference) {
        const auto reference = [&] {
            line();
            comment(QStringLiteral("The project's reference: the trusted run reference checks compare with."));
            line(QStringLiteral("void runReference(void **dev)"));
            line(QStringLiteral("{"));
            steps(*p.reference, 1);
            line(QStringLiteral("}"));
        };
        if (!refUnit) {
            reference();
        } else {
            line();
            comment(QStringLiteral("In reference_steps.cu, with the reference's own source."));
            line(QStringLiteral("void runReference(void **dev);"));
            if (symbols) {
                line(QStringLiteral("void *referenceSymbolAddress(int i);"));
            }
            QString mainText;
            std::swap(mainText, m_out);
            comment(QStringLiteral("%1: the reference's launch steps, compiled apart from main.cu because the "
                                   "reference source (%2) may define the same names as the project's.")
                        .arg(p.title, p.modules[p.reference->module].shownName));
            m_out += QString::fromLatin1(kPrelude);
            line();
            includeSource(p.modules[p.reference->module]);
            line();
            comment(QStringLiteral("Defined in main.cu."));
            line(QStringLiteral("extern Buffer g_buffers[];"));
            line(QStringLiteral("extern cudaStream_t g_streams[];"));
            line(QStringLiteral("extern cudaEvent_t g_events[];"));
            line(QStringLiteral("extern cudaEvent_t g_fork, g_join;"));
            if (!p.textures.isEmpty()) {
                line(QStringLiteral("unsigned long long textureObject(int t);"));
                line(QStringLiteral("void copyTexture(int t, void *buffer, bool toArray, cudaStream_t s);"));
            }
            line();
            scalars();
            reference();
            if (symbols) {
                line();
                comment(QStringLiteral("The reference source's own device variables, which its kernels read."));
                symbolTable(QStringLiteral("referenceSymbolAddress"));
            }
            line();
            line(QStringLiteral("} // namespace exported"));
            std::swap(mainText, m_out);
            refText = mainText;
        }
    }
    line();
    if (symbols) {
        comment(QStringLiteral("A buffer that is a __constant__ or __device__ variable of the kernel source is that "
                               "variable's memory,"));
        comment(QStringLiteral("as in the playground: the same copies fill it before the steps and read it after."));
        symbolTable(QStringLiteral("symbolAddress"));
        line();
        line(QStringLiteral("void allocateAndUpload(void **dev, void *(*symbolAt)(int))"));
        line(QStringLiteral("{"));
        line(QStringLiteral("for (int i = 0; i < kBuffers; ++i) {"), 1);
        line(QStringLiteral("dev[i] = symbolAt(i);"), 2);
        line(QStringLiteral("if (!dev[i]) {"), 2);
        line(QStringLiteral("CHECK(cudaMalloc(&dev[i], g_buffers[i].bytes));"), 3);
        line(QStringLiteral("}"), 2);
    } else {
        line(QStringLiteral(R"(void allocateAndUpload(void **dev)
{
    for (int i = 0; i < kBuffers; ++i) {)"));
        line(QStringLiteral("CHECK(cudaMalloc(&dev[i], g_buffers[i].bytes));"), 2);
    }
    line(QStringLiteral(R"(        if (g_buffers[i].upload) {
            CHECK(cudaMemcpyAsync(dev[i], g_buffers[i].host.data(), g_buffers[i].bytes, cudaMemcpyHostToDevice, g_streams[0]));
        }
    }
}

std::vector<std::vector<unsigned char>> download(void **dev)
{
    std::vector<std::vector<unsigned char>> out(kBuffers);
    for (int i = 0; i < kBuffers; ++i) {
        out[i].resize(g_buffers[i].bytes);
        CHECK(cudaMemcpyAsync(out[i].data(), dev[i], g_buffers[i].bytes, cudaMemcpyDeviceToHost, g_streams[0]));
    }
    CHECK(cudaStreamSynchronize(g_streams[0]));
    return out;
})"));
    line();
    line(QStringLiteral("int runProgram(int argc, char **argv)"));
    line(QStringLiteral("{"));
    line(QStringLiteral("bool timing = true;"), 1);
    line(QStringLiteral("std::string saveDir; // --save-buffers DIR: every buffer after the run as DIR/NAME.bin (raw "
                        "bytes, C order)"),
         1);
    line(QStringLiteral("for (int i = 1; i < argc; ++i) {"), 1);
    line(QStringLiteral("const std::string a = argv[i];"), 2);
    line(QStringLiteral("if (a == \"--no-timing\") {"), 2);
    line(QStringLiteral("timing = false;"), 3);
    line(QStringLiteral("} else if (a == \"--save-buffers\" && i + 1 < argc) {"), 2);
    line(QStringLiteral("saveDir = std::string(argv[++i]) + \"/\";"), 3);
    line(QStringLiteral("} else {"), 2);
    line(QStringLiteral("std::fprintf(stderr, \"usage: %s [--no-timing] [--save-buffers DIR]\\n\", argv[0]);"), 3);
    line(QStringLiteral("return 64;"), 3);
    line(QStringLiteral("}"), 2);
    line(QStringLiteral("}"), 1);
    line(QStringLiteral("const std::string self = argc > 0 ? argv[0] : \"\";"), 1);
    line(QStringLiteral("g_dir = self.find('/') == std::string::npos ? \"\" : self.substr(0, self.rfind('/') + 1);"),
         1);
    line(QStringLiteral("for (Buffer &b : g_buffers) {"), 1);
    line(QStringLiteral("b.host = b.input ? loadNpy(b.input, b.bytes) : std::vector<unsigned char>(b.bytes, 0);"), 2);
    comment(QStringLiteral("Page-locked, as the playground's host copies: async copies need it."), 2);
    line(QStringLiteral("CHECK(cudaHostRegister(b.host.data(), b.bytes, cudaHostRegisterDefault));"), 2);
    line(QStringLiteral("}"), 1);
    for (int i = 0; i < run.streams.size(); ++i) {
        const PlanStream &s = run.streams[i];
        if (s.legacy) {
            line(QStringLiteral("g_streams[%1] = cudaStreamLegacy; // %2").arg(i).arg(commentText(s.name)), 1);
        } else {
            line(QStringLiteral("CHECK(cudaStreamCreateWithPriority(&g_streams[%1], cudaStreamNonBlocking, %2)); // %3")
                     .arg(i)
                     .arg(s.priority)
                     .arg(commentText(s.name)),
                 1);
        }
    }
    line(QStringLiteral("for (cudaEvent_t &e : g_events) {"), 1);
    line(QStringLiteral("CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));"), 2);
    line(QStringLiteral("}"), 1);
    line(QStringLiteral("CHECK(cudaEventCreateWithFlags(&g_fork, cudaEventDisableTiming));"), 1);
    line(QStringLiteral("CHECK(cudaEventCreateWithFlags(&g_join, cudaEventDisableTiming));"), 1);
    if (!p.textures.isEmpty()) {
        line(QStringLiteral("makeTextures();"), 1);
    }
    for (const PlanRun *r : {&p.run, p.reference ? &*p.reference : nullptr}) {
        if (!r) {
            continue;
        }
        for (const PlanStep &s : r->steps) {
            if (s.kind == RunStep::Kind::Kernel && s.sharedBytes > 48 * 1024) {
                comment(QStringLiteral("More than 48 KiB of dynamic shared memory needs the kernel's opt-in."), 1);
                line(QStringLiteral(
                         "CHECK(cudaFuncSetAttribute(::%1, cudaFuncAttributeMaxDynamicSharedMemorySize, %2));")
                         .arg(s.kernel)
                         .arg(s.sharedBytes),
                     1);
            }
        }
    }
    line();
    if (p.reference) {
        comment(
            QStringLiteral("The reference runs first, on the initial contents (copy steps may write the host copies)."),
            1);
        line(QStringLiteral("void *refDev[kBuffers];"), 1);
        line(symbols ? QStringLiteral("allocateAndUpload(refDev, %1);")
                           .arg(refUnit ? QStringLiteral("referenceSymbolAddress") : QStringLiteral("symbolAddress"))
                     : QStringLiteral("allocateAndUpload(refDev);"),
             1);
        line(QStringLiteral("runReference(refDev);"), 1);
        line(QStringLiteral("const std::vector<std::vector<unsigned char>> reference = download(refDev);"), 1);
    }
    comment(QStringLiteral("The run the checks judge: upload, every step, download."), 1);
    line(QStringLiteral("void *dev[kBuffers];"), 1);
    line(symbols ? QStringLiteral("allocateAndUpload(dev, symbolAddress);") : QStringLiteral("allocateAndUpload(dev);"),
         1);
    line(QStringLiteral("runSteps(dev);"), 1);
    line(QStringLiteral("const std::vector<std::vector<unsigned char>> after = download(dev);"), 1);
    line(QStringLiteral("if (!saveDir.empty()) {"), 1);
    line(QStringLiteral("std::error_code made;"), 2);
    line(QStringLiteral("std::filesystem::create_directories(saveDir, made);"), 2);
    line(QStringLiteral("for (int i = 0; i < kBuffers; ++i) {"), 2);
    line(QStringLiteral("const std::string file = saveDir + g_buffers[i].name + \".bin\";"), 3);
    line(QStringLiteral("std::ofstream out(file, std::ios::binary);"), 3);
    line(
        QStringLiteral("out.write(reinterpret_cast<const char *>(after[i].data()), std::streamsize(after[i].size()));"),
        3);
    line(QStringLiteral("if (!out.flush()) {"), 3);
    line(QStringLiteral("std::fprintf(stderr, \"--save-buffers: cannot write %s\\n\", file.c_str());"), 4);
    line(QStringLiteral("return 2;"), 4);
    line(QStringLiteral("}"), 3);
    line(QStringLiteral("}"), 2);
    line(QStringLiteral("}"), 1);
    line();
    comment(QStringLiteral("Checks, with the project's tolerances."), 1);
    line(QStringLiteral("bool ok = true;"), 1);
    for (const PlanCheck &c : p.checks) {
        const int bi = bufferIndex(c.buffer);
        const PlanBuffer &b = p.buffers[bi];
        const int comps = dtypeInfo(b.dtype).components;
        QString gotIdx = QStringLiteral("everyIndex(%1)").arg(b.bytes / dtypeInfo(b.dtype).componentBytes);
        if (c.region) {
            QStringList shape, begin, end;
            for (qint64 d : b.shape) {
                shape << QString::number(d);
            }
            for (qint64 v : c.region->begin) {
                begin << QString::number(v);
            }
            for (qint64 v : c.region->end) {
                end << QString::number(v);
            }
            gotIdx = QStringLiteral("regionIndices({%1}, %2, {%3}, {%4})")
                         .arg(shape.join(QStringLiteral(", ")))
                         .arg(comps)
                         .arg(begin.join(QStringLiteral(", ")), end.join(QStringLiteral(", ")));
        }
        line(QStringLiteral("{"), 1);
        const QString gotVec = QStringLiteral("const std::vector<size_t> gi = %1;").arg(gotIdx);
        line(gotVec, 2);
        QString expData, expComp, expIdx;
        if (c.kind == CheckSpec::Kind::Reference) {
            comment(QStringLiteral("%1: against the reference run's %2").arg(c.name, c.reference), 2);
            const int ri = bufferIndex(c.reference);
            expData = QStringLiteral("reference[%1].data()").arg(ri);
            expComp = QLatin1String(compName(p.buffers[ri].dtype));
            expIdx = QStringLiteral("gi");
        } else {
            comment(QStringLiteral("%1: %2 %3 (the expected values computed when exporting)")
                        .arg(c.name,
                             c.kind == CheckSpec::Kind::Npy ? QStringLiteral("file") : QStringLiteral("expected"),
                             c.target),
                    2);
            line(QStringLiteral("const std::vector<unsigned char> expected = loadNpy(%1, %2 * 8);")
                     .arg(cpp(c.expectedFile), c.regionInFile
                                                   ? QStringLiteral("gi.size()")
                                                   : QString::number(b.bytes / dtypeInfo(b.dtype).componentBytes)),
                 2);
            expData = QStringLiteral("expected.data()");
            expComp = QLatin1String(compName(c.expectedType));
            expIdx = c.regionInFile ? QStringLiteral("everyIndex(gi.size())") : QStringLiteral("gi");
        }
        if (c.seeds > 1) {
            comment(QStringLiteral(
                        "The project runs this check with %1 seeds; this program has the first seed's inputs only.")
                        .arg(c.seeds),
                    2);
        }
        line(QStringLiteral("ok = check(%1, after[%2].data(), %3, gi, %4, %5, %6, %7, %8, %9, %10LL, %11) && ok;")
                 .arg(cpp(c.name))
                 .arg(bi)
                 .arg(QLatin1String(compName(b.dtype)), expData, expComp, expIdx,
                      c.exact ? QStringLiteral("true") : QStringLiteral("false"))
                 .arg(c.tolerance.abs, 0, 'g', 17)
                 .arg(c.tolerance.rel, 0, 'g', 17)
                 .arg(c.tolerance.ulp)
                 .arg(c.nan ? QStringLiteral("true") : QStringLiteral("false")),
             2);
        line(QStringLiteral("}"), 1);
    }
    line();
    if (!p.timingEnabled) {
        comment(QStringLiteral("The project has timing switched off."), 1);
    } else {
        line(QStringLiteral("if (!timing) {"), 1);
        if (!p.textures.isEmpty()) {
            line(QStringLiteral("destroyTextures();"), 2);
        }
        line(QStringLiteral("return ok ? 0 : 1;"), 2);
        line(QStringLiteral("}"), 1);
        comment(
            QStringLiteral("Timing with events: %1 warm-up run(s); then samples until the relative standard deviation "
                           "is at most %2 (with at least %3 samples and %4 s of GPU time), %5 samples or %6 s.")
                .arg(p.warmup)
                .arg(p.maxNoise)
                .arg(p.minSamples)
                .arg(p.minSeconds)
                .arg(p.maxSamples)
                .arg(p.timeoutSeconds),
            1);
        comment(QStringLiteral("The playground also stops on its entropy criterion and holds the stream while a sample "
                               "is queued; neither is here."),
                1);
        line(QStringLiteral("for (int w = 0; w < %1; ++w) {").arg(p.warmup), 1);
        line(QStringLiteral("runSteps(dev);"), 2);
        line(QStringLiteral("}"), 1);
        line(QStringLiteral("CHECK(cudaStreamSynchronize(g_streams[0]));"), 1);
        line(QStringLiteral("cudaEvent_t start, end;"), 1);
        line(QStringLiteral("CHECK(cudaEventCreate(&start));"), 1);
        line(QStringLiteral("CHECK(cudaEventCreate(&end));"), 1);
        line(QStringLiteral("int batch = 1;"), 1);
        line(QStringLiteral("void *flush = nullptr;"), 1);
        line(QStringLiteral("size_t flushBytes = 0;"), 1);
        if (p.cold) {
            comment(
                QStringLiteral("Cold: the L2 cache is flushed before each sample by writing a buffer twice its size "
                               "(the playground reads one, which leaves no dirty lines)."),
                1);
            line(QStringLiteral("int device = 0, l2 = 0;"), 1);
            line(QStringLiteral("CHECK(cudaGetDevice(&device));"), 1);
            line(QStringLiteral("CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));"), 1);
            line(QStringLiteral("flushBytes = 2 * size_t(l2);"), 1);
            line(QStringLiteral("CHECK(cudaMalloc(&flush, flushBytes));"), 1);
        } else if (p.batch > 0) {
            line(QStringLiteral("batch = %1; // hot: runs back to back per sample").arg(p.batch), 1);
        } else {
            comment(QStringLiteral("Hot: enough runs per sample for about 1 ms of work, from one timed run."), 1);
            line(QStringLiteral("CHECK(cudaEventRecord(start, g_streams[0]));"), 1);
            line(QStringLiteral("runSteps(dev);"), 1);
            line(QStringLiteral("CHECK(cudaEventRecord(end, g_streams[0]));"), 1);
            line(QStringLiteral("CHECK(cudaEventSynchronize(end));"), 1);
            line(QStringLiteral("float once = 0;"), 1);
            line(QStringLiteral("CHECK(cudaEventElapsedTime(&once, start, end));"), 1);
            line(QStringLiteral(
                     "batch = int(std::min(10000.0, std::max(1.0, std::ceil(1.0 / std::max(double(once), 1e-4)))));"),
                 1);
        }
        if (p.graph) {
            comment(QStringLiteral("The project also captures the steps into a CUDA graph and times its replay; this "
                                   "program times the steps launched one by one only."),
                    1);
            p.notes << QStringLiteral("graph: the steps are timed as launched one by one, without a CUDA graph replay");
        }
        line(QStringLiteral(R"(std::vector<double> samples;
    const auto began = std::chrono::steady_clock::now();
    for (;;) {
        if (flush) {
            CHECK(cudaMemsetAsync(flush, 0, flushBytes, g_streams[0]));
        }
        CHECK(cudaEventRecord(start, g_streams[0]));
        for (int b = 0; b < batch; ++b) {
            runSteps(dev);
        }
        CHECK(cudaEventRecord(end, g_streams[0]));
        CHECK(cudaEventSynchronize(end));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, end));
        samples.push_back(double(ms) / batch);
        double sum = 0, squares = 0;
        for (double s : samples) {
            sum += s;
        }
        const double mean = sum / double(samples.size());
        for (double s : samples) {
            squares += (s - mean) * (s - mean);
        }
        const double stdev = std::sqrt(squares / double(samples.size()));
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();)"),
             1);
        line(
            QStringLiteral("const bool quiet = samples.size() >= %1 && sum * batch / 1000 >= %2 && stdev <= %3 * mean;")
                .arg(p.minSamples)
                .arg(p.minSeconds, 0, 'g', 17)
                .arg(p.maxNoise, 0, 'g', 17),
            2);
        line(QStringLiteral("if (quiet || samples.size() >= %1 || seconds > %2) {")
                 .arg(p.maxSamples)
                 .arg(p.timeoutSeconds, 0, 'g', 17),
             2);
        line(QStringLiteral("break;"), 3);
        line(QStringLiteral("}"), 2);
        line(QStringLiteral("}"), 1);
        line(QStringLiteral("std::sort(samples.begin(), samples.end());"), 1);
        line(QStringLiteral("const size_t n = samples.size();"), 1);
        line(
            QStringLiteral("const double median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;"),
            1);
        line(QStringLiteral("std::printf(\"median %.6f ms over %zu samples\\n\", median, n);"), 1);
    }
    if (!p.textures.isEmpty()) {
        line(QStringLiteral("destroyTextures();"), 1);
    }
    line(QStringLiteral("return ok ? 0 : 1;"), 1);
    line(QStringLiteral("}"));
    line();
    line(QStringLiteral("} // namespace exported"));
    line();
    line(QStringLiteral("int main(int argc, char **argv)"));
    line(QStringLiteral("{"));
    line(QStringLiteral("return exported::runProgram(argc, argv);"), 1);
    line(QStringLiteral("}"));

    if (!p.notes.isEmpty()) {
        QString header = QStringLiteral("//\n// What this program does differently from the project:\n");
        for (const QString &n : p.notes) {
            header += QStringLiteral("//   - ") + commentText(n) + QLatin1Char('\n');
        }
        m_out.insert(notesAt, header);
    }
    QList<ExportFile> files{{p.programFile, m_out.toUtf8()}, {QStringLiteral("build.sh"), script.toUtf8()}};
    if (refUnit) {
        files << ExportFile{QStringLiteral("reference_steps.cu"), refText.toUtf8()};
    }
    return files;
}

} // namespace

Result<QList<ExportFile>> emitCpp(Plan &plan)
{
    CppWriter w(plan);
    return w.write();
}

} // namespace Kp::ExportDetail
