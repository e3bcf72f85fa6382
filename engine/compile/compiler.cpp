#include "compiler.h"

#include "core/safefile.h"

#include "cuda/nvrtcapi.h"
#include "devicelink.h"
#include "logparse.h"
#include "nvrtcjob.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QMutex>
#include <QRegularExpression>
#include <QSet>
#include <QStandardPaths>
#include <optional>

#include <algorithm>
#include <optional>
#include <vector>

namespace Kp {

namespace {

Diagnostic optionsError(const QString &message)
{
    Diagnostic d;
    d.file = QStringLiteral("<options>");
    d.message = message;
    return d;
}

// Every file the source includes from the user's folders, recursively, so a
// changed header changes the cache key. Toolkit headers are covered by the
// NVRTC version and the toolkit path in the key.
// headers, when given, also receives each user header read, under the name
// the #include wrote (a remote compile has no access to this machine's files).
void collectUserHeaders(const QString &text, const QString &fromDir, const QStringList &dirs, QCryptographicHash &hash,
                        QSet<QString> &seen, int depth, QList<QPair<QByteArray, QByteArray>> *headers = nullptr)
{
    static const QRegularExpression inc(QStringLiteral(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])"),
                                        QRegularExpression::MultilineOption);
    if (depth > 32) {
        return;
    }
    auto it = inc.globalMatch(text);
    while (it.hasNext()) {
        const QString name = it.next().captured(1);
        QStringList candidates;
        if (!fromDir.isEmpty()) {
            candidates << QDir(fromDir).filePath(name);
        }
        for (const QString &d : dirs) {
            candidates << QDir(d).filePath(name);
        }
        for (const QString &c : candidates) {
            const QString abs = QDir::cleanPath(QFileInfo(c).absoluteFilePath());
            if (seen.contains(abs) || !QFileInfo(abs).isFile()) {
                continue;
            }
            seen.insert(abs);
            hash.addData(abs.toUtf8());
            hash.addData(QByteArrayView("\0", 1));
            // Only the user's folders are read, and only regular files within
            // the source size limit: a hostile `#include "/etc/shadow"` or
            // `"../../x"` is never opened here (the sandboxed compile process
            // refuses it too); its path alone goes into the key.
            const bool inside = std::any_of(dirs.cbegin(), dirs.cend(), [&](const QString &d) {
                const QString root = QDir::cleanPath(QFileInfo(d).absoluteFilePath());
                return abs.startsWith(root + QLatin1Char('/'));
            });
            if (inside) {
                if (const Result<QByteArray> content =
                        readRegularFile(abs, Compiler::kMaxSourceBytes, QStringLiteral("a header"))) {
                    hash.addData(*content);
                    if (headers) {
                        const QByteArray written = name.toUtf8();
                        const bool known = std::any_of(headers->cbegin(), headers->cend(),
                                                       [&](const auto &h) { return h.first == written; });
                        if (!known) {
                            headers->append({written, *content});
                        }
                    }
                    collectUserHeaders(QString::fromUtf8(*content), QFileInfo(abs).absolutePath(), dirs, hash, seen,
                                       depth + 1, headers);
                }
            }
            break;
        }
    }
}

} // namespace

Compiler::Compiler()
    : Compiler(Config{})
{
}

Compiler::Compiler(Config config)
{
    QString dir = config.cacheDir.isEmpty() ? defaultCacheDir() : config.cacheDir;
    if (dir == QLatin1String("-")) {
        dir.clear();
    }
    m_cache = std::make_unique<CompileCache>(dir, config.cacheLimitBytes);
    m_isolated = config.isolated;
    m_timeoutMs = config.timeoutMs;
    m_memoryLimitMiB = config.memoryLimitMiB;
    if (m_timeoutMs <= 0) {
        bool ok = false;
        const double s = qEnvironmentVariable("KPG_COMPILE_TIMEOUT").toDouble(&ok);
        m_timeoutMs = ok && s > 0 ? int(qMin(s * 1000.0, 1e9)) : 60000;
    }
    if (m_isolated) {
        m_process = std::make_unique<CompilerProcess>();
    }
}

namespace {

/** The folders a request's sources may include from: the project's and the include folders. */
QStringList userDirsOf(const CompileRequest &request)
{
    QStringList dirs = request.options.includeDirs;
    if (!request.projectDir.isEmpty()) {
        dirs.prepend(request.projectDir);
    }
    return dirs;
}

} // namespace

void Compiler::warmUp(const CompileRequest &request)
{
    if (m_process && NvrtcApi::instance()) {
        (void)m_process->warmUp(userDirsOf(request)); // a failed start is the compile's to report
    }
}

void Compiler::cancelRunning()
{
    if (m_process) {
        m_process->cancel();
    }
}

QString Compiler::sandboxState() const
{
    return m_process ? m_process->sandboxState() : QStringLiteral("not sandboxed: NVRTC runs in this process");
}

QString Compiler::timeoutMessage(int timeoutMs)
{
    const QString seconds =
        timeoutMs % 1000 == 0 ? QString::number(timeoutMs / 1000) : QString::number(timeoutMs / 1000.0, 'g', 3);
    return QStringLiteral("compile took longer than %1 s and was stopped").arg(seconds);
}

QString Compiler::programName(const CompileRequest &request)
{
    const QString &path = request.sourcePath;
    if (path.isEmpty() || !path.startsWith(QLatin1Char('/')) || path.size() > 4096) {
        return request.fileName;
    }
    for (const QChar c : path) {
        if (c.unicode() < 0x20 || c.unicode() > 0x7e || c == QLatin1Char('"') || c == QLatin1Char('\\')) {
            return request.fileName;
        }
    }
    return path;
}

QString Compiler::crashMessage()
{
    return QStringLiteral("the compiler crashed on this source");
}

QString Compiler::defaultCacheDir()
{
    const QString env = qEnvironmentVariable("KPG_CACHE_DIR");
    if (!env.isEmpty()) {
        return env;
    }
    return QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation) +
           QStringLiteral("/kernel-playground/nvrtc");
}

QStringList Compiler::toolkitIncludeDirs()
{
    static const QStringList dirs = [] {
        QStringList roots;
        for (const char *v : {"CUDA_HOME", "CUDA_PATH", "CUDAToolkit_ROOT"}) {
            const QString r = qEnvironmentVariable(v);
            if (!r.isEmpty()) {
                roots << r;
            }
        }
#ifdef KPG_CUDA_ROOT
        roots << QStringLiteral(KPG_CUDA_ROOT);
#endif
        roots << QStringLiteral("/usr/local/cuda");
        for (const QString &r : roots) {
            const QString inc = r + QStringLiteral("/include");
            if (QFileInfo::exists(inc + QStringLiteral("/cuda.h"))) {
                QStringList out;
                // CUDA 13 keeps CCCL (cub, thrust, libcu++) in include/cccl.
                if (QFileInfo::exists(inc + QStringLiteral("/cccl"))) {
                    out << inc + QStringLiteral("/cccl");
                }
                out << inc;
                return out;
            }
        }
        return QStringList();
    }();
    return dirs;
}

namespace {
// NVRTC 12 and 13 word it "... host functions are not allowed in JIT mode.
// Consider using -default-device flag ..."; the option's name is the part
// least likely to change.
bool needsDefaultDevice(const QString &log)
{
    return log.contains(QLatin1String("-default-device")) ||
           log.contains(QLatin1String("host functions are not allowed in JIT mode"));
}
// Struct parameters passed by value: their layout comes from the compiler
// itself (kernel/structlayout), through a second unit with the same options
// that only adds an initialised array of sizeof/alignof/offsetof values.
template<typename RunJob>
std::optional<Error> probeLayouts(const CompileRequest &request, const NvrtcJob &job, const QStringList &opts,
                                  const RunJob &runJob, bool &stopped, CompileResult &result)
{
    QStringList types;
    for (const KernelInfo &k : result.kernels) {
        for (const KernelParam &p : k.params) {
            if (p.pointerDepth == 0 && p.category == KernelParam::Category::Struct && !types.contains(p.baseType) &&
                !dtypeForCudaType(p.baseType)) {
                types << p.baseType;
            }
        }
    }
    if (types.isEmpty()) {
        return std::nullopt;
    }
    QVariantMap plan;
    const QString probe = layoutProbeSource(request.source, types, &plan);
    if (probe.isEmpty()) {
        return std::nullopt; // no struct definition found for them (templates, typedefs): nothing to probe
    }
    NvrtcJob pj = job;
    pj.source = probe.toUtf8();
    pj.options = opts;
    pj.nameExpressions.clear();
    const qsizetype diagnostics = result.diagnostics.size();
    Result<NvrtcOutput> out = runJob(pj);
    if (stopped) {
        // The probe's crash is not the user's compile failing.
        result.diagnostics.resize(diagnostics);
        result.ok = true;
        stopped = false;
        result.layoutError = QStringLiteral("the struct layout probe did not finish");
        return std::nullopt;
    }
    if (!out && out.error().code == Error::Code::Cancelled) {
        // A newer request took over while the probe ran: this whole compile
        // is superseded, not a compile whose layouts are unknown (that result
        // would fail the run it reached and sit in the cache).
        return out.error();
    }
    if (!out) {
        result.layoutError = out.error().message;
        return std::nullopt;
    }
    if (nvrtcResult(out->status) != NVRTC_SUCCESS) {
        const QList<Diagnostic> ds = parseDiagnostics(out->log);
        result.layoutError = QStringLiteral("the struct layout probe did not compile: %1")
                                 .arg(ds.isEmpty() ? out->log.left(300) : ds.front().message);
        return std::nullopt;
    }
    Result<QHash<QString, StructLayout>> layouts = readLayoutProbe(out->ptx, plan);
    if (!layouts) {
        result.layoutError = layouts.error().message;
        return std::nullopt;
    }
    result.layouts = *layouts;
    return std::nullopt;
}
} // namespace

const QList<QPair<QByteArray, QByteArray>> &Compiler::virtualHeaders()
{
    // NVRTC ships no C/C++ standard headers; kernels still include them.
    static const QByteArray cstdint = QByteArrayLiteral(R"(#pragma once
#include <cuda/std/cstdint>
namespace std {
using cuda::std::int8_t; using cuda::std::int16_t; using cuda::std::int32_t; using cuda::std::int64_t;
using cuda::std::uint8_t; using cuda::std::uint16_t; using cuda::std::uint32_t; using cuda::std::uint64_t;
using cuda::std::intptr_t; using cuda::std::uintptr_t; using cuda::std::intmax_t; using cuda::std::uintmax_t;
}
using cuda::std::int8_t; using cuda::std::int16_t; using cuda::std::int32_t; using cuda::std::int64_t;
using cuda::std::uint8_t; using cuda::std::uint16_t; using cuda::std::uint32_t; using cuda::std::uint64_t;
using cuda::std::intptr_t; using cuda::std::uintptr_t;
)");
    // NVRTC's built-in header already defines assert() on __assertfail; this
    // only makes the #include resolve, and defines it if a future NVRTC does not.
    static const QByteArray cassert = QByteArrayLiteral(R"(#pragma once
#ifndef assert
extern "C" __device__ void __assertfail(const char *, const char *, unsigned, const char *, unsigned long);
#define assert(e) ((e) ? (void)0 : __assertfail(#e, __FILE__, __LINE__, __func__, sizeof(char)))
#endif
)");
    // printf is built into NVRTC.
    static const QByteArray cstdio = QByteArrayLiteral("#pragma once\n");
    static const QByteArray cstddef = QByteArrayLiteral(R"(#pragma once
#include <cuda/std/cstddef>
namespace std { using cuda::std::size_t; using cuda::std::ptrdiff_t; using cuda::std::nullptr_t; }
)");
    // The math functions, malloc/free/memcpy/memset and clock() are built
    // into NVRTC's device headers, so the C spellings only need to resolve;
    // the C++ ones also bring what libcu++ has into std.
    static const QByteArray builtIn = QByteArrayLiteral("#pragma once\n");
    static const QByteArray cmath = QByteArrayLiteral(R"(#pragma once
#include <cuda/std/cmath>
namespace std {
using cuda::std::abs; using cuda::std::fabs; using cuda::std::sqrt; using cuda::std::cbrt; using cuda::std::exp;
using cuda::std::exp2; using cuda::std::log; using cuda::std::log2; using cuda::std::log10; using cuda::std::pow;
using cuda::std::sin; using cuda::std::cos; using cuda::std::tan; using cuda::std::asin; using cuda::std::acos;
using cuda::std::atan; using cuda::std::atan2; using cuda::std::sinh; using cuda::std::cosh; using cuda::std::tanh;
using cuda::std::floor; using cuda::std::ceil; using cuda::std::round; using cuda::std::trunc; using cuda::std::fmin;
using cuda::std::fmax; using cuda::std::hypot; using cuda::std::isnan; using cuda::std::isinf; using cuda::std::isfinite;
using cuda::std::signbit; using cuda::std::copysign; using cuda::std::lgamma; using cuda::std::tgamma;
using cuda::std::frexp; using cuda::std::ldexp;
}
)");
    static const QByteArray cstdlib = QByteArrayLiteral(R"(#pragma once
#include <cuda/std/cstdlib>
namespace std { using cuda::std::abs; using cuda::std::div; using cuda::std::size_t; }
)");
    static const QByteArray cstring = QByteArrayLiteral(R"(#pragma once
#include <cuda/std/cstring>
namespace std { using cuda::std::memcpy; using cuda::std::memset; using cuda::std::size_t; }
)");
    static const QByteArray climits = QByteArrayLiteral("#pragma once\n#include <cuda/std/climits>\n");
    // libcu++'s cfloat includes the host's under NVRTC, so nothing, and
    // NVRTC's options leave __FLT_MAX__ and the like undefined: the IEEE values.
    static const QByteArray cfloat = QByteArrayLiteral(R"(#pragma once
#ifndef FLT_MAX
#define FLT_RADIX 2
#define FLT_MANT_DIG 24
#define DBL_MANT_DIG 53
#define FLT_DIG 6
#define DBL_DIG 15
#define FLT_EPSILON 1.19209290e-07F
#define DBL_EPSILON 2.2204460492503131e-16
#define FLT_MIN 1.17549435e-38F
#define DBL_MIN 2.2250738585072014e-308
#define FLT_MAX 3.40282347e+38F
#define DBL_MAX 1.7976931348623157e+308
#define FLT_TRUE_MIN 1.40129846e-45F
#define DBL_TRUE_MIN 4.9406564584124654e-324
#define FLT_MIN_EXP (-125)
#define DBL_MIN_EXP (-1021)
#define FLT_MAX_EXP 128
#define DBL_MAX_EXP 1024
#define FLT_MIN_10_EXP (-37)
#define DBL_MIN_10_EXP (-307)
#define FLT_MAX_10_EXP 38
#define DBL_MAX_10_EXP 308
#endif
)");
    static const QList<QPair<QByteArray, QByteArray>> headers{
        {"cstdint", cstdint}, {"stdint.h", cstdint}, {"cassert", cassert},  {"assert.h", cassert}, {"cstdio", cstdio},
        {"stdio.h", cstdio},  {"cstddef", cstddef},  {"stddef.h", cstddef}, {"cmath", cmath},      {"math.h", builtIn},
        {"cstdlib", cstdlib}, {"stdlib.h", builtIn}, {"cstring", cstring},  {"string.h", builtIn}, {"ctime", builtIn},
        {"time.h", builtIn},  {"climits", climits},  {"limits.h", climits}, {"cfloat", cfloat},    {"float.h", cfloat},
    };
    return headers;
}

QString Compiler::resolveArch(const QString &arch, int ccMajor, int ccMinor, const QList<int> &supported, QString *note,
                              QString *error)
{
    auto list = [&] {
        QStringList l;
        for (int a : supported) {
            l << QStringLiteral("sm_%1").arg(a);
        }
        return l.join(QStringLiteral(", "));
    };
    if (supported.isEmpty()) {
        *error = QStringLiteral("NVRTC reports no supported architectures");
        return {};
    }
    if (arch.isEmpty() || arch == QLatin1String("auto")) {
        const int want = ccMajor > 0 ? ccMajor * 10 + ccMinor : 90;
        int best = -1;
        for (int a : supported) {
            if (a <= want) {
                best = qMax(best, a);
            }
        }
        if (best < 0) {
            best = supported.first();
        }
        if (best != want) {
            *note = QStringLiteral("arch auto: NVRTC cannot target sm_%1; using sm_%2").arg(want).arg(best);
        }
        return QStringLiteral("sm_%1").arg(best);
    }
    static const QRegularExpression re(QStringLiteral(R"(^(sm|compute)_(\d+)([af]?)$)"));
    const auto m = re.match(arch);
    if (!m.hasMatch()) {
        *error = QStringLiteral("arch '%1' is not an architecture; use auto, sm_XX or compute_XX (supported: %2)")
                     .arg(arch, list());
        return {};
    }
    if (!supported.contains(m.captured(2).toInt())) {
        *error = QStringLiteral("arch '%1' is not supported by this NVRTC (supported: %2)").arg(arch, list());
        return {};
    }
    return arch;
}

namespace {
QMutex g_fallbackMutex;
Compiler::NvrtcFallback g_fallback;
} // namespace

void Compiler::setNvrtcFallback(NvrtcFallback fallback)
{
    QMutexLocker lock(&g_fallbackMutex);
    g_fallback = std::move(fallback);
}

Result<CompileResult> Compiler::compile(const CompileRequest &request)
{
    const Result<const NvrtcApi *> loaded = NvrtcApi::instance();
    // No NVRTC here: a remote target's, when the program installed that way (docs/remote.md).
    std::optional<NvrtcElsewhere> remote;
    if (!loaded) {
        NvrtcFallback fallback;
        {
            QMutexLocker lock(&g_fallbackMutex);
            fallback = g_fallback;
        }
        if (!fallback) {
            return loaded.error();
        }
        Result<NvrtcElsewhere> elsewhere = fallback(loaded.error());
        if (!elsewhere) {
            return elsewhere.error();
        }
        remote = std::move(elsewhere).value();
    }
    const NvrtcApi *nvLocal = loaded ? *loaded : nullptr;
    const CompileOptions &o = request.options;

    CompileResult result;
    result.nvrtcVersion = remote ? remote->version : nvLocal->versionString();

    // Input checks first: one clear message instead of NVRTC noise.
    const QByteArray source = request.source.toUtf8();
    if (source.size() > kMaxSourceBytes) {
        Diagnostic d = optionsError(QStringLiteral("%1 is too large to compile: %2 MiB (the limit is %3 MiB)")
                                        .arg(request.fileName)
                                        .arg(double(source.size()) / (1024 * 1024), 0, 'f', 1)
                                        .arg(kMaxSourceBytes / (1024 * 1024)));
        d.file = request.fileName;
        result.diagnostics.append(d);
        return result;
    }
    if (request.source.contains(QChar(0))) {
        Diagnostic d = optionsError(QStringLiteral("%1 is not text (it contains NUL bytes)").arg(request.fileName));
        d.file = request.fileName;
        result.diagnostics.append(d);
        return result;
    }
    if (request.source.trimmed().isEmpty()) {
        Diagnostic d = optionsError(QStringLiteral("%1 is empty: write a __global__ function").arg(request.fileName));
        d.file = request.fileName;
        result.diagnostics.append(d);
        return result;
    }

    QList<int> supportedArchs;
    if (remote) {
        supportedArchs = remote->archs;
    } else {
        int numArchs = 0;
        nvLocal->nvrtcGetNumSupportedArchs(&numArchs);
        std::vector<int> archs(static_cast<size_t>(qMax(0, numArchs)));
        if (numArchs > 0) {
            nvLocal->nvrtcGetSupportedArchs(archs.data());
        }
        supportedArchs = QList<int>(archs.begin(), archs.end());
    }
    QString archError;
    result.arch =
        resolveArch(o.arch, request.deviceCcMajor, request.deviceCcMinor, supportedArchs, &result.note, &archError);
    if (!archError.isEmpty()) {
        result.diagnostics.append(optionsError(archError));
        return result;
    }
    const bool real = result.arch.startsWith(QLatin1String("sm_"));
    if (o.optLevel < 0 || o.optLevel > 3) {
        result.diagnostics.append(
            optionsError(QStringLiteral("optimisation level %1 is out of range (allowed: 0 to 3)").arg(o.optLevel)));
        return result;
    }

    QStringList opts;
    opts << QStringLiteral("-arch=%1").arg(result.arch) << QStringLiteral("-std=%1").arg(o.std);
    if (o.debug) {
        opts << QStringLiteral("-G");
    } else if (o.lineInfo) {
        opts << QStringLiteral("-lineinfo");
    }
    if (o.fastMath) {
        opts << QStringLiteral("--use_fast_math");
    }
    if (real) {
        opts << QStringLiteral("--ptxas-options=-v")
             << QStringLiteral("--ptxas-options=-O%1").arg(o.debug ? 0 : o.optLevel);
    }
    for (const QString &d : o.defines) {
        const QString name = d.section(QLatin1Char('='), 0, 0);
        if (name.trimmed().isEmpty() || name.contains(QRegularExpression(QStringLiteral("\\s")))) {
            result.diagnostics.append(optionsError(QStringLiteral("define '%1' is not NAME or NAME=VALUE").arg(d)));
            return result;
        }
        opts << QStringLiteral("-D%1").arg(d);
    }
    if (!request.projectDir.isEmpty()) {
        opts << QStringLiteral("-I%1").arg(request.projectDir);
    }
    for (const QString &d : o.includeDirs) {
        opts << QStringLiteral("-I%1").arg(d);
    }
    for (const QString &d : remote ? remote->includeDirs : toolkitIncludeDirs()) {
        opts << QStringLiteral("-I%1").arg(d);
    }
    if (o.pch) {
        opts << QStringLiteral("-pch");
    }
    opts << o.extra;
    result.nvrtcOptions = opts;

    // Kernels from the source, and the name expressions NVRTC must lower.
    const QList<KernelSignature> sigs = findKernels(request.source);
    QStringList nameExprs;                            // what NVRTC gets
    QList<QPair<QString, KernelSignature>> instances; // (expression, substituted signature)
    for (const QString &expr : o.nameExpressions) {
        const QString base = nameExpressionBase(expr);
        bool matched = false;
        QString why;
        for (const KernelSignature &s : sigs) {
            if (s.name != base && s.qualifiedName != base) {
                continue;
            }
            KernelSignature inst;
            if (instantiate(s, expr, &inst, &why)) {
                instances.append({expr.trimmed(), inst});
                nameExprs << expr.trimmed();
                matched = true;
            }
            break;
        }
        if (!matched) {
            QStringList templates;
            for (const KernelSignature &s : sigs) {
                if (s.isTemplate()) {
                    templates << s.qualifiedName;
                }
            }
            Diagnostic d;
            d.file = QStringLiteral("<name expressions>");
            d.message = why.isEmpty() ? QStringLiteral("name expression '%1' matches no kernel in %2 (kernel "
                                                       "templates: %3)")
                                            .arg(expr, request.fileName,
                                                 templates.isEmpty() ? QStringLiteral("none")
                                                                     : templates.join(QStringLiteral(", ")))
                                      : QStringLiteral("name expression %1").arg(why);
            result.diagnostics.append(d);
        }
    }
    for (const KernelSignature &s : sigs) {
        if (!s.isTemplate() && !s.externC) {
            nameExprs << s.qualifiedName;
        }
    }

    // User headers: their contents go into the cache key. NVRTC's automatic
    // PCH is only trusted for toolkit headers: it checks a header's time
    // stamp, not its contents, so a header edited within the same second would
    // be served stale from the PCH.
    QCryptographicHash headerHash(QCryptographicHash::Sha256);
    QList<QPair<QByteArray, QByteArray>> remoteHeaders; // the user's headers travel with a remote compile
    {
        QSet<QString> seen;
        QStringList dirs = o.includeDirs;
        if (!request.projectDir.isEmpty()) {
            dirs.prepend(request.projectDir);
        }
        collectUserHeaders(request.source, request.projectDir, dirs, headerHash, seen, 0,
                           remote ? &remoteHeaders : nullptr);
        if (!seen.isEmpty()) {
            opts.removeAll(QStringLiteral("-pch"));
            result.nvrtcOptions = opts;
        }
    }

    // Cache lookup.
    QCryptographicHash hash(QCryptographicHash::Sha256);
    // 2: in-memory C headers, the -default-device retry and struct layouts;
    // 3: the -rdc=true retry and the device runtime link; 4: a cancelled
    // retry once cached the first attempt's errors, so older entries go.
    hash.addData(QByteArrayView("kpg-compile-4"));
    hash.addData(remote ? (remote->where + QLatin1Char(' ') + remote->libraryPath).toUtf8()
                        : nvLocal->libraryPath.toUtf8());
    hash.addData(result.nvrtcVersion.toUtf8());
    for (const QString &s : opts) {
        hash.addData(s.toUtf8());
        hash.addData(QByteArrayView("\0", 1));
    }
    for (const QString &s : nameExprs) {
        hash.addData(s.toUtf8());
        hash.addData(QByteArrayView("\1", 1));
    }
    // The program name is in the PTX's line info, so it is part of the answer.
    const QString program = programName(request);
    hash.addData(request.fileName.toUtf8());
    hash.addData(QByteArrayView("\0", 1));
    hash.addData(program.toUtf8());
    hash.addData(QByteArrayView("\0", 1));
    hash.addData(source);
    hash.addData(headerHash.result());
    const QByteArray key = hash.result();
    const bool useCache =
        o.useCache && qEnvironmentVariableIntValue("KPG_NO_CACHE") == 0 && result.diagnostics.isEmpty();
    if (useCache) {
        if (std::optional<CompileResult> hit = m_cache->find(key)) {
            hit->cached = true;
            return *hit;
        }
    }

    // Compile: in kpg-compiler, or here.
    NvrtcJob job;
    job.source = source;
    job.programName = program.toUtf8();
    job.options = opts;
    job.nameExpressions = nameExprs;
    job.headers = virtualHeaders();
    job.headers += remoteHeaders;
    bool stopped = false; // the compiler process crashed or ran out of time
    const auto runJob = [&](const NvrtcJob &j) -> Result<NvrtcOutput> {
        if (remote) {
            // The remote kpg-compiler's own time limit is this one; it never sees this machine's folders.
            QElapsedTimer wall;
            wall.start();
            Result<NvrtcOutput> r = remote->run(j, m_timeoutMs);
            if (!r && r.error().code == Error::Code::Timeout) {
                Diagnostic d;
                d.file = request.fileName;
                d.message = timeoutMessage(m_timeoutMs);
                result.diagnostics.append(d);
                result.ok = false;
                result.compileMs = double(wall.nsecsElapsed()) / 1e6;
                stopped = true;
            }
            return r;
        }
        if (!m_process) {
            return runNvrtcJob(*nvLocal, j);
        }
        QElapsedTimer wall;
        wall.start();
        Result<NvrtcOutput> r = m_process->run(j, userDirsOf(request), m_timeoutMs, m_memoryLimitMiB);
        if (!r && (r.error().code == Error::Code::WorkerDied || r.error().code == Error::Code::Timeout)) {
            // An ordinary failed compile with one message; never cached, so
            // the same source is tried again (a fresh process) next time.
            Diagnostic d;
            d.file = request.fileName;
            d.message = r.error().code == Error::Code::Timeout            ? timeoutMessage(m_timeoutMs)
                        : r.error().apiCall == QLatin1String("RLIMIT_AS") ? r.error().message
                                                                          : crashMessage();
            result.diagnostics.append(d);
            result.ok = false;
            // The time it ran before it was stopped, not NVRTC's (it never answered).
            result.compileMs = double(wall.nsecsElapsed()) / 1e6;
            stopped = true;
        }
        return r;
    };
    Result<NvrtcOutput> ran = runJob(job);
    if (stopped) {
        return result;
    }
    if (!ran) {
        return ran.error();
    }
    // Real code declares helpers without __device__ (and headers declare host
    // prototypes); NVRTC refuses every function without an execution space.
    // nvcc would compile such helpers for the host only, so the user has no
    // reason to know -default-device: try it once and say so in the log.
    if (nvrtcResult(ran->status) == NVRTC_ERROR_COMPILATION && needsDefaultDevice(ran->log) &&
        !opts.contains(QStringLiteral("-default-device")) &&
        !opts.contains(QStringLiteral("--device-as-default-execution-space"))) {
        NvrtcJob again = job;
        again.options << QStringLiteral("-default-device");
        Result<NvrtcOutput> second = runJob(again);
        if (stopped) {
            return result;
        }
        if (!second) {
            return second.error(); // cancelled or failed: the first attempt's errors are not the answer
        }
        if (nvrtcResult(second->status) == NVRTC_SUCCESS) {
            opts = again.options;
            result.nvrtcOptions = opts;
            const QString why = QStringLiteral("compiled again with -default-device: the source has functions "
                                               "without __host__/__device__, which NVRTC refuses as host functions; "
                                               "they are now compiled as __device__ functions");
            second.value().log = QStringLiteral("note: %1\n").arg(why) + second->log;
            second.value().compileMs += ran->compileMs; // the user waited for both
            Diagnostic d;
            d.file = request.fileName;
            d.severity = Diagnostic::Severity::Note;
            d.message = why;
            result.diagnostics.append(d);
            ran = std::move(second);
        }
    }
    // A kernel that launches kernels (dynamic parallelism) compiles only as
    // relocatable device code; NVRTC says so (a device-side launch it cannot
    // process, or the device runtime API undeclared). nvcc users pass -rdc=true
    // and link cudadevrt; try it once here and link below, saying so.
    bool rdcRetried = false;
    if (nvrtcResult(ran->status) == NVRTC_ERROR_COMPILATION && DeviceLink::logNeedsRdc(ran->log) &&
        !DeviceLink::optionsUseRdc(opts)) {
        NvrtcJob again = job;
        again.options = opts;
        again.options << QStringLiteral("-rdc=true");
        if (needsDefaultDevice(ran->log) && !again.options.contains(QStringLiteral("-default-device"))) {
            again.options << QStringLiteral("-default-device");
        }
        Result<NvrtcOutput> second = runJob(again);
        if (stopped) {
            return result;
        }
        if (!second) {
            // Cancelled (superseded) or the process failed: the first
            // attempt's "needs -rdc" is not this source's answer, and must
            // neither be shown nor cached as one.
            return second.error();
        }
        if (nvrtcResult(second->status) == NVRTC_SUCCESS) {
            opts = again.options;
            result.nvrtcOptions = opts;
            second.value().compileMs += ran->compileMs;
            ran = std::move(second);
            rdcRetried = true;
        }
    }
    job.options = opts; // the struct layout probe compiles as the program did
    NvrtcOutput &out = ran.value();
    if (program != request.fileName) {
        // NVRTC names the file by its path; the user's messages name it as the editor does.
        out.log.replace(program, request.fileName);
    }
    const nvrtcResult cr = nvrtcResult(out.status);
    result.compileMs = out.compileMs;
    result.log = userLog(out.log);
    const QList<Diagnostic> parsed = parseDiagnostics(result.log);
    result.diagnostics.append(parsed);

    if (cr == NVRTC_ERROR_INVALID_OPTION) {
        // Name the option: NVRTC 12 says only "invalid option"; newer ones say which.
        bool named = false;
        for (const Diagnostic &d : parsed) {
            named = named || d.message.contains(QLatin1String("option"));
        }
        if (!named) {
            result.diagnostics.append(optionsError(
                QStringLiteral("NVRTC rejected an option; the options were: %1").arg(opts.join(QLatin1Char(' ')))));
        } else {
            for (Diagnostic &d : result.diagnostics) {
                if (d.file == QLatin1String("nvrtc")) {
                    d.file = QStringLiteral("<options>");
                }
            }
        }
    } else if (cr != NVRTC_SUCCESS && cr != NVRTC_ERROR_COMPILATION) {
        result.diagnostics.append(optionsError(out.statusText));
    }

    // Name-map errors are about the user's name expressions, not the source;
    // "At end of source" is about the user's source, which NVRTC does not name.
    for (Diagnostic &d : result.diagnostics) {
        if (d.file.isEmpty() && d.message.startsWith(QLatin1String("At end of source"))) {
            d.file = request.fileName;
        }
        if (d.file == QLatin1String("__nv_name_map")) {
            d.file = QStringLiteral("<name expressions>");
            d.line = 0;
            d.column = 0;
        }
    }

    if (cr == NVRTC_SUCCESS) {
        result.ptx = std::move(out.ptx);
        if (real) {
            result.cubin = std::move(out.cubin);
        }
    }
    if (cr == NVRTC_SUCCESS && DeviceLink::optionsUseRdc(opts)) {
        // Relocatable code has unresolved calls into the device runtime: the
        // worker can load only the linked cubin, so a failed link fails the compile.
        QString linkLog;
        Result<QByteArray> linked =
            DeviceLink::linkWithDeviceRuntime(result.cubin, result.arch, request.fileName, &linkLog);
        Diagnostic d;
        d.file = request.fileName;
        if (linked) {
            result.cubin = std::move(linked.value());
            d.severity = Diagnostic::Severity::Note;
            d.message = rdcRetried ? QStringLiteral("compiled again with -rdc=true and linked with the device runtime "
                                                    "(libcudadevrt.a): a kernel launches kernels (dynamic parallelism)")
                                   : QStringLiteral("linked with the device runtime (libcudadevrt.a): the options ask "
                                                    "for relocatable device code");
            result.log = QStringLiteral("note: %1\n").arg(d.message) + result.log +
                         (linkLog.isEmpty() ? QString() : QStringLiteral("\n") + linkLog);
        } else {
            d.message = linked.error().message;
            result.cubin.clear();
        }
        result.diagnostics.append(d);
    }

    // Kernels with lowered names and resources.
    const QHash<QString, KernelResources> res = parsePtxasInfo(result.log);
    auto lowered = [&](const QString &expr) -> QString { return out.loweredNames.value(expr); };
    for (const KernelSignature &s : sigs) {
        auto info = [&](const KernelSignature &sig, const QString &name, const QString &low) {
            KernelInfo k;
            k.name = name;
            k.loweredName = low;
            k.line = sig.line;
            k.externC = sig.externC;
            k.isTemplate = s.isTemplate();
            k.templateParams = s.templateParams;
            k.params = sig.params;
            k.resources = res.value(low);
            return k;
        };
        if (!s.isTemplate()) {
            const QString low = s.externC ? (cr == NVRTC_SUCCESS ? s.name : QString()) : lowered(s.qualifiedName);
            result.kernels.append(info(s, s.qualifiedName, low));
            continue;
        }
        bool any = false;
        for (const auto &[expr, inst] : instances) {
            if (nameExpressionBase(expr) == s.name || nameExpressionBase(expr) == s.qualifiedName) {
                result.kernels.append(info(inst, expr, lowered(expr)));
                any = true;
            }
        }
        if (!any) {
            result.kernels.append(info(s, s.qualifiedName, {})); // a template nobody instantiated
        }
    }
    if (sigs.isEmpty() && cr == NVRTC_SUCCESS) {
        Diagnostic d;
        d.file = request.fileName;
        d.severity = Diagnostic::Severity::Warning;
        d.message = QStringLiteral("no __global__ function in %1: there is nothing to launch").arg(request.fileName);
        result.diagnostics.append(d);
    }

    result.ok = cr == NVRTC_SUCCESS && result.errorCount() == 0;
    if (!result.ok && result.errorCount() == 0) {
        // A failed compile always says why: NVRTC's log may hold only notes,
        // or lines the parser does not know. Never "0 errors".
        Diagnostic d;
        d.file = request.fileName;
        QString first;
        for (const QString &l : result.log.split(QLatin1Char('\n'))) {
            if (!l.trimmed().isEmpty() && !l.startsWith(QLatin1String("ptxas"))) {
                first = l.trimmed();
                break;
            }
        }
        d.message = first.isEmpty() ? QStringLiteral("the compile failed (%1) without a message").arg(out.statusText)
                                    : QStringLiteral("the compile failed: %1").arg(first);
        result.diagnostics.append(d);
    }
    if (result.ok) {
        if (const std::optional<Error> cancelled = probeLayouts(request, job, opts, runJob, stopped, result)) {
            return *cancelled;
        }
    }
    if (useCache) {
        m_cache->store(key, result);
    }
    return result;
}

} // namespace Kp
