#include "export/exporter.h"

#include "buffers/bufferinit.h"
#include "buffers/npy.h"
#include "check/checkedrun.h"
#include "check/checkeval.h"
#include "compile/compiler.h"
#include "compile/devicelink.h"
#include "core/expression.h"
#include "core/safefile.h"
#include "export/exportplan.h"
#include "kernel/signature.h"
#include "run/runner.h"
#include "run/texturedesc.h"

#include <QBuffer>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSet>

#include <charconv>
#include <cmath>
#include <cstring>

#include <algorithm>

namespace Kp {

using namespace ExportDetail;

namespace {

constexpr struct
{
    ExportTarget target;
    const char *name;
} kTargets[] = {
    {ExportTarget::PyCuda, "pycuda"},
    {ExportTarget::CuPy, "cupy"},
    {ExportTarget::CudaPython, "cuda-python"},
    {ExportTarget::CudaCpp, "cuda-cpp"},
};

Error exportError(const QString &message, const QString &path = {})
{
    Error e{QStringLiteral("export"), Error::Code::BadInput, {}, message};
    e.path = path;
    return e;
}

/** A file name the export may reuse for a copied source: plain characters, a source suffix. */
bool safeSourceName(const QString &name)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z0-9_][A-Za-z0-9_.-]{0,100}\\.(cu|cuh|cpp|cc|c|h|hpp)$"));
    return re.match(name).hasMatch();
}

/** A kernel name or name expression that may appear as C++ code: "k", "ns::k", "k<16, float>". */
bool safeKernelName(const QString &name)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z_][A-Za-z0-9_:]*( *<[A-Za-z0-9_:<>, ]*>)?$"));
    if (!re.match(name).hasMatch() || name.size() > 512) {
        return false;
    }
    int depth = 0;
    for (QChar ch : name) {
        depth += ch == QLatin1Char('<') ? 1 : ch == QLatin1Char('>') ? -1 : 0;
        if (depth < 0) {
            return false;
        }
    }
    return depth == 0;
}

/** A parameter's base type that may appear in a cast: "float", "unsigned int", "ns::Cell". */
bool safeTypeName(const QString &name)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z_][A-Za-z0-9_: ]{0,200}$"));
    return re.match(name).hasMatch();
}

QString initText(const BufferInit &init)
{
    switch (init.kind) {
    case BufferInit::Kind::Zeros: return QStringLiteral("zeros");
    case BufferInit::Kind::Constant: return QStringLiteral("constant %1").arg(init.value);
    case BufferInit::Kind::Ramp: return QStringLiteral("ramp from %1, step %2").arg(init.start).arg(init.step);
    case BufferInit::Kind::Random:
        return init.distribution == BufferInit::Distribution::Uniform
                   ? QStringLiteral("random uniform in [%1, %2), seed %3").arg(init.min).arg(init.max).arg(init.seed)
                   : QStringLiteral("random normal, mean %1, stddev %2, seed %3")
                         .arg(init.mean)
                         .arg(init.stddev)
                         .arg(init.seed);
    case BufferInit::Kind::Expression: return QStringLiteral("expression %1").arg(init.expression);
    case BufferInit::Kind::Npy: return QStringLiteral("from %1").arg(init.file);
    case BufferInit::Kind::Image: return QStringLiteral("image %1 (%2)").arg(init.file, imageModeName(init.imageMode));
    case BufferInit::Kind::Uninitialized: return QStringLiteral("uninitialized");
    }
    return {};
}

QByteArray npyBytes(DType dtype, const QList<qint64> &shape, const void *data, qint64 bytes)
{
    QByteArray out = npyHeaderBytes(dtype, shape);
    out.append(static_cast<const char *>(data), bytes);
    return out;
}

/** The kernels of a source as prepareRun needs them, from the signature scanner alone (no compile). */
Result<CompileResult> scannedKernels(const QString &source, const CompileOptions &options, const QString &field,
                                     const QHash<QString, StructLayout> &layouts, const QString &layoutError)
{
    CompileResult r;
    r.ok = true;
    // A struct's layout is the compiler's (padding, alignment): it comes from
    // a compile of the source (ExportOptions::layouts). Without one, a struct
    // passed by value is refused with this reason (prepareRun names the parameter).
    r.layouts = layouts;
    if (layouts.isEmpty()) {
        r.layoutError = !layoutError.isEmpty()
                            ? QStringLiteral("compiling the source to learn it failed: %1").arg(layoutError)
                            : QStringLiteral("the export needs a compile of the source to learn it (kpg export "
                                             "compiles with NVRTC when a kernel takes a struct by value)");
    }
    const QList<KernelSignature> sigs = findKernels(source);
    for (const KernelSignature &s : sigs) {
        if (!s.isTemplate()) {
            KernelInfo k;
            k.name = s.qualifiedName;
            k.loweredName = s.externC ? s.name : s.qualifiedName;
            k.externC = s.externC;
            k.params = s.params;
            r.kernels << k;
        }
    }
    for (const QString &expr : options.nameExpressions) {
        const QString base = nameExpressionBase(expr);
        bool found = false;
        for (const KernelSignature &s : sigs) {
            if (!s.isTemplate() || (s.name != base && s.qualifiedName != base)) {
                continue;
            }
            KernelSignature inst;
            QString why;
            if (!instantiate(s, expr, &inst, &why)) {
                return exportError(QStringLiteral("%1: name expression %2").arg(field, why), field);
            }
            KernelInfo k;
            k.name = expr.trimmed();
            k.loweredName = k.name;
            k.isTemplate = true;
            k.templateParams = s.templateParams;
            k.params = inst.params;
            r.kernels << k;
            found = true;
            break;
        }
        if (!found) {
            return exportError(QStringLiteral("%1: '%2' names no kernel template in the source").arg(field, expr),
                               field);
        }
    }
    return r;
}

/** The expected values of an expression check, exactly as evaluateCheck() computes them (docs/checks.md). */
Result<QByteArray> expectedValues(const CheckSpec &check, const HostBuffers &buffers,
                                  const QMap<QString, double> &variables, const QString &path)
{
    const HostBuffer *got = buffers.find(check.buffer);
    if (!got) {
        return exportError(QStringLiteral("%1.buffer: no buffer '%2'").arg(path, check.buffer), path);
    }
    const DTypeInfo &info = dtypeInfo(got->spec.dtype);
    const int comps = info.components;
    const qint64 count = got->elementCount();
    // Precedence as in evaluateCheck: coordinates, then variables, then buffers of the same size.
    QHash<QString, int> source;
    for (const char *n : {"i", "x", "y", "z", "c"}) {
        source.insert(QString::fromLatin1(n), 0);
    }
    for (auto it = variables.begin(); it != variables.end(); ++it) {
        source.insert(it.key(), 1);
    }
    for (const auto &b : buffers.all()) {
        const int bc = dtypeInfo(b->spec.dtype).components;
        if (b->elementCount() == count && (bc == 1 || bc == comps)) {
            source.insert(b->spec.name, 2);
        }
    }
    Expression ex;
    double scratch = 0;
    double *coord[5] = {&scratch, &scratch, &scratch, &scratch, &scratch};
    struct Var
    {
        double *slot;
        const char *bytes;
        DType comp;
        int compBytes;
        int comps;
    };
    QList<Var> vars;
    static const QStringList coordNames{QStringLiteral("i"), QStringLiteral("x"), QStringLiteral("y"),
                                        QStringLiteral("z"), QStringLiteral("c")};
    for (auto it = source.begin(); it != source.end(); ++it) {
        double *slot = ex.variable(it.key());
        if (it.value() == 0) {
            coord[coordNames.indexOf(it.key())] = slot;
        } else if (it.value() == 1) {
            *slot = variables.value(it.key());
        } else {
            const HostBuffer *b = buffers.find(it.key());
            const DTypeInfo &bi = dtypeInfo(b->spec.dtype);
            vars << Var{slot, static_cast<const char *>(b->memory.data()), bi.component, bi.componentBytes,
                        bi.components};
        }
    }
    if (Status s = ex.parse(check.expected, path + QStringLiteral(".expected")); !s) {
        return s.error();
    }
    const QList<qint64> &shape = got->shape;
    const qint64 nx = shape.isEmpty() ? 1 : shape.last();
    const qint64 ny = shape.size() >= 2 ? shape[shape.size() - 2] : 1;
    QByteArray out(count * comps * qint64(sizeof(double)), Qt::Uninitialized);
    double *dst = reinterpret_cast<double *>(out.data());
    for (qint64 e = 0; e < count; ++e) {
        *coord[0] = double(e);
        *coord[1] = double(e % nx);
        *coord[2] = double((e / nx) % ny);
        *coord[3] = double(e / (nx * ny));
        for (int c = 0; c < comps; ++c) {
            *coord[4] = double(c);
            for (const Var &v : vars) {
                const qint64 k = e * v.comps + (v.comps == 1 ? 0 : c);
                *v.slot = loadComponent(v.comp, v.bytes + k * v.compBytes);
            }
            Result<double> r = ex.evaluate();
            if (!r) {
                return r.error();
            }
            dst[e * comps + c] = *r;
        }
    }
    return out;
}

/** A check's npy file as float64 values (or int64/uint64 for 64-bit integer files), C order. */
Result<ExportFile> npyCheckFile(const QString &file, const QString &projectDir, const QString &outName,
                                const QString &path)
{
    const QString full = resolveInitFile(file, projectDir);
    Result<std::unique_ptr<QFile>> f = openRegularFile(full, kMaxNpyFileBytes, QStringLiteral("the check's .npy file"));
    if (!f) {
        return exportError(QStringLiteral("%1.npy: %2").arg(path, f.error().message), path);
    }
    Result<NpyHeader> h = readNpyHeader(**f, full);
    if (!h) {
        return exportError(QStringLiteral("%1.npy: %2").arg(path, h.error().message), path);
    }
    QByteArray raw(h->dataBytes, Qt::Uninitialized);
    if (Status s = readNpyData(**f, *h, raw.data(), raw.size(), full); !s) {
        return exportError(QStringLiteral("%1.npy: %2").arg(path, s.error().message), path);
    }
    const DTypeInfo &di = dtypeInfo(h->dtype);
    const qint64 n = h->elementCount();
    if (h->dtype == DType::Int64 || h->dtype == DType::UInt64) {
        // Kept as integers: 64-bit values are compared as integers, not through doubles.
        return ExportFile{outName, npyBytes(h->dtype, {n}, raw.constData(), raw.size())};
    }
    QByteArray out(n * qint64(sizeof(double)), Qt::Uninitialized);
    double *dst = reinterpret_cast<double *>(out.data());
    for (qint64 i = 0; i < n; ++i) {
        dst[i] = loadComponent(h->dtype, raw.constData() + i * di.componentBytes);
    }
    return ExportFile{outName, npyBytes(DType::Float64, {n}, out.constData(), out.size())};
}

const QStringList &reservedWords()
{
    // Python and C++ keywords and the names the programs define themselves:
    // a scalar with one of these names gets a prefix instead.
    static const QStringList words = [] {
        QStringList w =
            QStringLiteral(
                "False None True and as assert async await break class continue def del elif else except "
                "finally for from global if import in is lambda nonlocal not or pass raise return try while "
                "with yield match case type print len range int float str bool list dict tuple object "
                "np cp drv driver sys os time pathlib math ctypes HERE host dev ref_dev kernels streams events "
                "main alloc launch check samples median ok result results "
                "alignas alignof asm auto char char16_t char32_t const constexpr const_cast decltype default "
                "delete do double dynamic_cast enum explicit export extern friend goto inline long mutable "
                "namespace new noexcept nullptr operator private protected public register reinterpret_cast "
                "short signed sizeof static static_assert static_cast struct switch template this "
                "thread_local throw typedef typeid typename union unsigned using virtual void volatile "
                "wchar_t std size_t dim3 cudaStream_t cudaEvent_t Buffer")
                .split(QLatin1Char(' '));
        return w;
    }();
    return words;
}

struct Resolved
{
    PlanRun run;
    QList<KernelInfo> kernels;
    QHash<QString, QString> symbols; ///< buffer -> the module's name of the device variable it is
};

Result<Resolved> resolveRun(const Project &project, const HostBuffers &buffers, const QList<PlanScalar> &scalars,
                            const QString &what, const QHash<QString, StructLayout> &layouts,
                            const QString &layoutError, QList<PlanStructValue> *structValues,
                            QList<PlanTexture> *textures, const QByteArray &ptx)
{
    const CompileOptions opts = compileOptionsFor(project);
    Result<CompileResult> scanned = scannedKernels(project.sourceText, opts, what, layouts, layoutError);
    if (!scanned) {
        return scanned.error();
    }
    // The device variables that buffers with "symbol" fill are found in the PTX (names and sizes).
    scanned.value().ptx = ptx;
    for (qsizetype i = 0; i < project.buffers.size() && ptx.isEmpty(); ++i) {
        if (!project.buffers[i].symbol.isEmpty()) {
            const QString field = QStringLiteral("buffers[%1].symbol").arg(i);
            return exportError(QStringLiteral("%1: buffer '%2' fills the device variable '%3', and the export needs "
                                              "a compile of the source to find it (kpg export compiles with NVRTC "
                                              "when a buffer names a variable)")
                                   .arg(field, project.buffers[i].name, project.buffers[i].symbol),
                               field);
        }
    }
    Result<PreparedRun> prepared = prepareRun(project, *scanned, buffers, 0);
    if (!prepared) {
        Error e = prepared.error();
        e.message = what == QLatin1String("launches") ? e.message : QStringLiteral("%1: %2").arg(what, e.message);
        return e;
    }
    const RunRequest &req = prepared->request;
    Resolved out;
    out.kernels = scanned->kernels;
    for (const RunBuffer &b : req.buffers) {
        if (!b.symbol.isEmpty()) {
            out.symbols.insert(b.name, b.symbol);
        }
    }
    PlanRun &run = out.run;
    run.repeat = qMax(1, req.repeat);
    for (const auto &[a, b] : req.swaps) {
        run.swaps << qMakePair(req.buffers[a].name, req.buffers[b].name);
    }
    if (req.streams.isEmpty()) {
        run.streams << PlanStream{QStringLiteral("default"), 0, false};
    }
    for (const RunStream &s : req.streams) {
        run.streams << PlanStream{s.name, s.priority, s.legacy};
    }
    run.events = req.events;
    // Steps that are the project's launches one for one (no chunk groups): their
    // bindings say which scalar an argument is, even where two scalars hold the same value.
    bool oneForOne = req.steps.size() == project.launches.size();
    for (int si = 0; oneForOne && si < req.steps.size(); ++si) {
        const LaunchStep &ls = project.launches[si];
        oneForOne = ls.kind != LaunchStep::Kind::Chunks &&
                    (req.steps[si].kind != RunStep::Kind::Kernel || ls.kernel == req.steps[si].kernel);
    }
    for (int si = 0; si < req.steps.size(); ++si) {
        const RunStep &rs = req.steps[si];
        PlanStep ps;
        ps.kind = rs.kind;
        ps.stream = rs.stream;
        ps.waits = rs.waits;
        ps.event = rs.event;
        ps.buffer = rs.buffer >= 0 ? req.buffers[rs.buffer].name : QString();
        ps.offset = rs.offset;
        ps.bytes = rs.bytes;
        ps.memsetValue = rs.memsetValue;
        ps.label = rs.label;
        if (rs.kind == RunStep::Kind::Kernel) {
            const QString field = QStringLiteral("%1 (step %2, kernel '%3')").arg(what).arg(si + 1).arg(rs.kernel);
            const KernelInfo *k = findKernel(scanned->kernels, rs.kernel);
            if (!k || !safeKernelName(k->name)) {
                return exportError(QStringLiteral("%1: the kernel name '%2' is not a C++ name or a template instance "
                                                  "such as 'k<16, float>'; the export writes it as code")
                                       .arg(field, rs.kernel),
                                   what);
            }
            ps.kernel = k->name;
            ps.grid = rs.grid;
            ps.block = rs.block;
            ps.sharedBytes = rs.sharedBytes;
            ps.cooperative = rs.cooperative;
            for (int ai = 0; ai < rs.args.size(); ++ai) {
                const RunArg &ra = rs.args[ai];
                const KernelParam &param = k->params.value(ai);
                PlanArg pa;
                pa.paramName = param.name;
                if (ra.isTexture()) {
                    // One object per distinct binding: the reference's steps may bind the same one.
                    const RunTexture &t = req.textures.value(ra.texture);
                    PlanTexture pt{t.spec, req.buffers.value(t.buffer).name, t.dtype, t.shape,
                                   QStringLiteral("%1: parameter %2 ('%3', %4)")
                                       .arg(field)
                                       .arg(ai + 1)
                                       .arg(param.name, param.type)};
                    int found = -1;
                    for (int i = 0; i < textures->size() && found < 0; ++i) {
                        found = (*textures)[i].spec == pt.spec && (*textures)[i].buffer == pt.buffer ? i : -1;
                    }
                    if (found < 0) {
                        textures->append(pt);
                        found = int(textures->size()) - 1;
                    }
                    pa.texture = found;
                    pa.cType = param.baseType;
                    ps.args << pa;
                    continue;
                }
                if (ra.isBuffer()) {
                    pa.isBuffer = true;
                    pa.buffer = req.buffers[ra.buffer].name;
                    pa.byteOffset = ra.offset;
                    pa.pointeeType = param.baseType;
                    if (param.pointerDepth != 1 || !safeTypeName(param.baseType)) {
                        return exportError(
                            QStringLiteral("%1: parameter %2 ('%3') is not a plain pointer to a named type; the "
                                           "export cannot write the cast")
                                .arg(field)
                                .arg(ai + 1)
                                .arg(param.type),
                            what);
                    }
                } else if (param.pointerDepth == 0 && !dtypeForCudaType(param.baseType) &&
                           scanned->layouts.contains(param.baseType)) {
                    // A struct by value: prepareRun packed its bytes in the compiler's layout.
                    const StructLayout &layout = scanned->layouts[param.baseType];
                    Result<QList<StructLeaf>> leaves = structLeaves(param.baseType, scanned->layouts);
                    if (!leaves || !safeTypeName(param.baseType) || ra.value.size() != layout.size) {
                        return exportError(QStringLiteral("%1: parameter %2 ('%3' %4) is a struct the export cannot "
                                                          "write%5")
                                               .arg(field)
                                               .arg(ai + 1)
                                               .arg(param.type, param.name,
                                                    leaves ? QString() : QStringLiteral(": ") + leaves.error().message),
                                           what);
                    }
                    QString written;
                    if (oneForOne) {
                        const QList<ArgBinding> &bindings = project.launches[si].args;
                        for (const ArgBinding &b : bindings) {
                            written = !b.param.isEmpty() && b.param == param.name ? b.text : written;
                        }
                        if (written.isEmpty() && ai < bindings.size() && bindings[ai].param.isEmpty()) {
                            written = bindings[ai].text;
                        }
                    }
                    int found = -1;
                    for (int i = 0; i < structValues->size(); ++i) {
                        const PlanStructValue &v = (*structValues)[i];
                        found = v.type == param.baseType && v.bytes == ra.value ? i : found;
                    }
                    if (found < 0) {
                        PlanStructValue v;
                        v.type = param.baseType;
                        v.bytes = ra.value;
                        v.align = layout.align;
                        v.leaves = *leaves;
                        v.where = QStringLiteral("%1, parameter '%2'").arg(field, param.name);
                        v.written = written;
                        // A variable named after the parameter, unless that is taken or not a name.
                        const QString base = isIdentifier(param.name) && !param.name.startsWith(QLatin1Char('_'))
                                                 ? param.name + QStringLiteral("_value")
                                                 : QStringLiteral("struct_value");
                        v.identifier = base;
                        for (int n = 2;; ++n) {
                            bool taken = reservedWords().contains(v.identifier);
                            for (const PlanStructValue &o : *structValues) {
                                taken = taken || o.identifier == v.identifier;
                            }
                            for (const PlanScalar &sc : scalars) {
                                taken = taken || sc.identifier == v.identifier;
                            }
                            if (!taken) {
                                break;
                            }
                            v.identifier = QStringLiteral("%1_%2").arg(base).arg(n);
                        }
                        structValues->append(v);
                        found = int(structValues->size()) - 1;
                    }
                    pa.structValue = found;
                    pa.cType = param.baseType;
                    pa.bytes = ra.value;
                } else {
                    const std::optional<DType> t = dtypeForCudaType(param.baseType);
                    if (!t || dtypeInfo(*t).components != 1 || ra.value.size() != dtypeInfo(*t).componentBytes) {
                        return exportError(QStringLiteral("%1: parameter %2 ('%3' %4) is passed by value as a type "
                                                          "the export cannot write (scalar number types only)")
                                               .arg(field)
                                               .arg(ai + 1)
                                               .arg(param.type, param.name),
                                           what);
                    }
                    pa.valueType = *t;
                    pa.cType = param.baseType;
                    pa.bytes = ra.value;
                    int match = -1;
                    if (oneForOne) {
                        const QList<ArgBinding> &bindings = project.launches[si].args;
                        const ArgBinding *binding = nullptr;
                        for (const ArgBinding &b : bindings) {
                            binding = !b.param.isEmpty() && b.param == param.name ? &b : binding;
                        }
                        if (!binding && ai < bindings.size() && bindings[ai].param.isEmpty()) {
                            binding = &bindings[ai];
                        }
                        for (int i = 0; binding && binding->kind == ArgBinding::Kind::Scalar && i < scalars.size();
                             ++i) {
                            match = scalars[i].name == binding->name && scalars[i].type == *t ? i : match;
                        }
                    } else {
                        // Chunk groups: the scalar holding exactly this value, when only one does.
                        for (int i = 0; i < scalars.size(); ++i) {
                            if (scalars[i].type == *t && scalars[i].bytes == ra.value) {
                                match = match == -1 ? i : -2;
                            }
                        }
                    }
                    pa.scalar = match >= 0 ? match : -1;
                }
                ps.args << pa;
            }
        }
        run.steps << ps;
    }
    return out;
}

} // namespace

namespace ExportDetail {

bool PlanStep::sameAs(const PlanStep &o) const
{
    if (kind != o.kind || stream != o.stream || waits != o.waits || event != o.event || buffer != o.buffer ||
        offset != o.offset || bytes != o.bytes || memsetValue != o.memsetValue || kernel != o.kernel ||
        !(grid == o.grid) || !(block == o.block) || sharedBytes != o.sharedBytes || cooperative != o.cooperative ||
        args.size() != o.args.size()) {
        return false;
    }
    for (int i = 0; i < args.size(); ++i) {
        const PlanArg &a = args[i];
        const PlanArg &b = o.args[i];
        if (a.isBuffer != b.isBuffer || a.buffer != b.buffer || a.byteOffset != b.byteOffset || a.bytes != b.bytes) {
            return false;
        }
    }
    return kind == RunStep::Kind::Kernel && event < 0;
}

bool PlanRun::usesStreams() const
{
    if (streams.size() > 1 || !events.isEmpty()) {
        return true;
    }
    for (const PlanStep &s : steps) {
        if (s.kind != RunStep::Kind::Kernel) {
            return true;
        }
    }
    return false;
}

QString shortestText(DType t, const QByteArray &bytes)
{
    char buf[64];
    const DTypeInfo &info = dtypeInfo(t);
    const char *p = bytes.constData();
    std::to_chars_result r{};
    switch (info.kind) {
    case ScalarKind::SignedInt: {
        qint64 v = 0;
        switch (info.componentBytes) {
        case 1: v = qint8(*p); break;
        case 2: {
            qint16 x;
            std::memcpy(&x, p, 2);
            v = x;
            break;
        }
        case 4: {
            qint32 x;
            std::memcpy(&x, p, 4);
            v = x;
            break;
        }
        default: std::memcpy(&v, p, 8);
        }
        r = std::to_chars(buf, buf + sizeof buf, v);
        break;
    }
    case ScalarKind::UnsignedInt: {
        quint64 v = 0;
        std::memcpy(&v, p, size_t(info.componentBytes)); // little endian: the low bytes
        r = std::to_chars(buf, buf + sizeof buf, v);
        break;
    }
    case ScalarKind::Half:
    case ScalarKind::BFloat:
    case ScalarKind::Float: {
        if (info.componentBytes == 8) {
            double v;
            std::memcpy(&v, p, 8);
            if (!std::isfinite(v)) {
                return std::isnan(v) ? QStringLiteral("nan") : v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
            }
            r = std::to_chars(buf, buf + sizeof buf, v);
        } else {
            const float v = float(loadComponent(t, p));
            if (!std::isfinite(v)) {
                return std::isnan(v) ? QStringLiteral("nan") : v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
            }
            r = std::to_chars(buf, buf + sizeof buf, v);
        }
        break;
    }
    }
    return QString::fromLatin1(buf, int(r.ptr - buf));
}

bool isIdentifier(const QString &s)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]{0,200}$"));
    return re.match(s).hasMatch();
}

QString shapeText(const QList<qint64> &shape)
{
    return shapeToString(shape);
}

QString leafText(const StructLeaf &leaf, const QByteArray &structBytes)
{
    const QByteArray bytes = structBytes.mid(leaf.offset, dtypeInfo(leaf.component).componentBytes);
    if (leaf.isBool) {
        return bytes.count('\0') == bytes.size() ? QStringLiteral("false") : QStringLiteral("true");
    }
    return shortestText(leaf.component, bytes);
}

QList<int> textureCopiesOf(const Plan &plan, const PlanStep &step, bool before)
{
    QList<int> out;
    for (const PlanArg &a : step.args) {
        if (a.texture >= 0 && !out.contains(a.texture) && (before || plan.textures[a.texture].spec.isSurface())) {
            out << a.texture;
        }
    }
    return out;
}

QString numpyComponentName(DType t)
{
    const DType c = dtypeInfo(t).component;
    return c == DType::BFloat16 ? QStringLiteral("uint16") : dtypeName(c);
}

} // namespace ExportDetail

QString exportTargetName(ExportTarget target)
{
    for (const auto &t : kTargets) {
        if (t.target == target) {
            return QString::fromLatin1(t.name);
        }
    }
    return {};
}

std::optional<ExportTarget> exportTargetFromName(const QString &name)
{
    for (const auto &t : kTargets) {
        if (name == QLatin1String(t.name)) {
            return t.target;
        }
    }
    return std::nullopt;
}

QStringList exportTargetNames()
{
    QStringList names;
    for (const auto &t : kTargets) {
        names << QString::fromLatin1(t.name);
    }
    return names;
}

QString pythonStringLiteral(const QString &text)
{
    QString out = QStringLiteral("\"");
    for (QChar ch : text) {
        const char16_t u = ch.unicode();
        if (u == u'\\' || u == u'"') {
            out += QLatin1Char('\\');
            out += ch;
        } else if (u >= 0x20 && u < 0x7f) {
            out += ch;
        } else {
            // Surrogates are written one by one: \ud83d\ude00 reads back as the pair in a str.
            out += QStringLiteral("\\u%1").arg(uint(u), 4, 16, QLatin1Char('0'));
        }
    }
    return out + QLatin1Char('"');
}

QString cppStringLiteral(const QString &text)
{
    QString out = QStringLiteral("\"");
    for (const char b : text.toUtf8()) {
        const unsigned char u = static_cast<unsigned char>(b);
        if (u == '\\' || u == '"' || u == '?') {
            // '?' too: no trigraph can form, whatever the compiler's mode.
            out += QLatin1Char('\\');
            out += QLatin1Char(b);
        } else if (u >= 0x20 && u < 0x7f) {
            out += QLatin1Char(b);
        } else {
            // Three octal digits always: a following digit cannot join the escape.
            out += QStringLiteral("\\%1").arg(uint(u), 3, 8, QLatin1Char('0'));
        }
    }
    return out + QLatin1Char('"');
}

QString commentText(const QString &text)
{
    QString out;
    out.reserve(text.size());
    for (QChar ch : text) {
        const char16_t u = ch.unicode();
        // Line breaks of any kind (\n, \r, \v, \f, NEL, U+2028/9) and other controls end a comment somewhere.
        const bool control = u < 0x20 || u == 0x7f || (u >= 0x80 && u < 0xa0) || u == 0x2028 || u == 0x2029;
        out += control ? QChar(u' ') : ch;
    }
    while (out.endsWith(QLatin1Char(' '))) {
        out.chop(1);
    }
    if (out.endsWith(QLatin1Char('\\'))) {
        // A C++ comment ending in a backslash would continue onto the next line.
        out += QStringLiteral(" (end)");
    }
    return out;
}

Result<ExportResult> exportProject(const Project &project, const ExportOptions &options)
{
    const ExportTarget target = options.target;
    Plan plan;
    plan.title = project.title.isEmpty() ? QFileInfo(project.path).completeBaseName() : project.title;
    plan.projectFile = QFileInfo(project.path).fileName();
    plan.programFile = target == ExportTarget::CudaCpp ? QStringLiteral("main.cu") : QStringLiteral("main.py");
    const QString dir = project.dir();

    if (project.sourceText.isEmpty()) {
        return exportError(QStringLiteral("source: the project has no kernel source to export"),
                           QStringLiteral("source"));
    }

    static const QRegularExpression deviceLaunch(QStringLiteral("[A-Za-z_][A-Za-z0-9_]*\\s*(<[^<>;]*>)?\\s*<<<"));
    if (deviceLaunch.match(project.sourceText).hasMatch() || DeviceLink::optionsUseRdc(project.compile.extra)) {
        return exportError(QStringLiteral("source: a kernel launches kernels (dynamic parallelism), which cannot be "
                                          "exported yet (the program would have to link the device runtime)"),
                           QStringLiteral("source"));
    }

    // Compile options.
    const CompileOptions &co = project.compile;
    plan.arch = co.arch;
    plan.optLevel = co.optLevel;
    plan.fastMath = co.fastMath;
    plan.lineInfo = co.lineInfo;
    plan.debug = co.debug;
    plan.std = co.std;
    static const QRegularExpression archRe(QStringLiteral("^(auto|(sm|compute)_[0-9]{2,3}[af]?)$"));
    static const QRegularExpression stdRe(QStringLiteral("^c\\+\\+[0-9a-z]{2}$"));
    if (!archRe.match(co.arch).hasMatch()) {
        return exportError(QStringLiteral("compile.arch: '%1' is not auto, sm_XX or compute_XX").arg(co.arch),
                           QStringLiteral("compile.arch"));
    }
    if (!stdRe.match(co.std).hasMatch()) {
        return exportError(QStringLiteral("compile.std: '%1' is not c++NN").arg(co.std), QStringLiteral("compile.std"));
    }
    static const QRegularExpression defineRe(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*(=.*)?$"),
                                             QRegularExpression::DotMatchesEverythingOption);
    for (int i = 0; i < co.defines.size(); ++i) {
        const QString &d = co.defines[i];
        const QString field = QStringLiteral("compile.defines[%1]").arg(i);
        if (!defineRe.match(d).hasMatch()) {
            return exportError(QStringLiteral("%1: '%2' is not NAME or NAME=VALUE").arg(field, d), field);
        }
        for (QChar ch : d) {
            if (ch.unicode() < 0x20 || ch == QLatin1Char('\\') || ch.unicode() == 0x7f) {
                // A line break or a backslash in a value would end the #define and start code of its own.
                return exportError(QStringLiteral("%1: the value holds a control character or a backslash, which the "
                                                  "exported program cannot write safely as a macro")
                                       .arg(field),
                                   field);
            }
        }
        plan.defines << d;
    }
    plan.includeDirs << QDir(dir).absolutePath();
    for (const QString &inc : co.includeDirs) {
        const QString abs = QDir::isAbsolutePath(inc) ? inc : QDir(dir).absoluteFilePath(inc);
        plan.includeDirs << QDir::cleanPath(abs);
    }
    plan.extra = co.extra;

    // Buffers with their exact initial contents.
    HostBuffers buffers;
    if (Status s = buffers.materialize(project); !s) {
        return s.error();
    }
    ExportResult result;
    for (const auto &hb : buffers.all()) {
        const BufferSpec &spec = hb->spec;
        if (!isIdentifier(spec.name)) {
            return exportError(QStringLiteral("buffers: the name '%1' is not a C identifier").arg(spec.name),
                               QStringLiteral("buffers"));
        }
        PlanBuffer pb;
        pb.name = spec.name;
        pb.dtype = spec.dtype;
        pb.shape = hb->shape;
        pb.bytes = hb->byteSize();
        pb.uninitialized = spec.init.kind == BufferInit::Kind::Uninitialized;
        pb.initText = initText(spec.init);
        pb.symbol = spec.symbol;
        const char *data = static_cast<const char *>(hb->memory.data());
        bool allZero = spec.init.kind == BufferInit::Kind::Zeros;
        if (!allZero && !pb.uninitialized) {
            allZero = true;
            for (qint64 i = 0; i < pb.bytes && allZero; ++i) {
                allZero = data[i] == 0;
            }
        }
        pb.zeros = allZero && !pb.uninitialized;
        if (!pb.zeros && !pb.uninitialized) {
            pb.inputFile = QStringLiteral("inputs/%1.npy").arg(spec.name);
            result.files << ExportFile{pb.inputFile, npyBytes(spec.dtype, hb->shape, data, pb.bytes)};
        }
        plan.buffers << pb;
    }

    // Scalars with their exact types.
    for (const ScalarSpec &s : project.scalars) {
        if (!isIdentifier(s.name)) {
            return exportError(QStringLiteral("scalars: the name '%1' is not a C identifier").arg(s.name),
                               QStringLiteral("scalars"));
        }
        PlanScalar ps;
        ps.name = s.name;
        ps.identifier = reservedWords().contains(s.name) || s.name.startsWith(QLatin1Char('_'))
                            ? QStringLiteral("scalar_%1").arg(s.name)
                            : s.name;
        ps.type = s.type;
        ps.bytes = QByteArray(dtypeInfo(s.type).componentBytes, '\0');
        storeComponent(s.type, s.value, ps.bytes.data());
        plan.scalars << ps;
    }

    // The module(s) and the run.
    auto addModule = [&](const QString &sourceFile, const QString &text, const QString &fallback) {
        PlanModule m;
        const QString base = QFileInfo(sourceFile).fileName();
        m.file = safeSourceName(base) && base != plan.programFile ? base : fallback;
        for (const PlanModule &other : plan.modules) {
            if (other.file == m.file) {
                m.file = fallback;
            }
        }
        m.shownName = sourceFile.isEmpty() ? QStringLiteral("the project's inline source") : sourceFile;
        m.text = text.toUtf8();
        plan.modules << m;
        result.files << ExportFile{m.file, m.text};
        return int(plan.modules.size()) - 1;
    };
    auto collectKernels = [&](PlanRun &run, const QList<KernelInfo> &kernels, const QHash<QString, QString> &lowered) {
        PlanModule &m = plan.modules[run.module];
        for (const PlanStep &s : run.steps) {
            if (s.kind != RunStep::Kind::Kernel) {
                continue;
            }
            bool known = false;
            for (const PlanKernel &k : m.kernels) {
                known = known || k.name == s.kernel;
            }
            if (known) {
                continue;
            }
            const KernelInfo *ki = findKernel(kernels, s.kernel);
            PlanKernel pk;
            pk.name = s.kernel;
            pk.externC = ki && ki->externC;
            pk.nameExpression = !pk.externC;
            pk.symbol = pk.externC ? ki->loweredName : lowered.value(s.kernel);
            m.kernels << pk;
        }
    };

    const int mainModule = addModule(project.sourceFile, project.sourceText, QStringLiteral("kernel.cu"));
    Result<Resolved> mainRun = resolveRun(project, buffers, plan.scalars, QStringLiteral("launches"), options.layouts,
                                          options.layoutError, &plan.structValues, &plan.textures, options.ptx);
    if (!mainRun) {
        return mainRun.error();
    }
    plan.run = mainRun->run;
    plan.run.module = mainModule;
    for (PlanBuffer &b : plan.buffers) {
        b.ptxSymbol = mainRun->symbols.value(b.name, b.symbol);
    }
    collectKernels(plan.run, mainRun->kernels, options.loweredNames);

    // Checks.
    bool needReference = false;
    const QMap<QString, double> variables = expressionVariables(project, buffers);
    for (int ci = 0; ci < project.checks.size(); ++ci) {
        const CheckSpec &c = project.checks[ci];
        const QString path = QStringLiteral("checks[%1]").arg(ci);
        if (c.kind != CheckSpec::Kind::Expected && c.kind != CheckSpec::Kind::Npy &&
            c.kind != CheckSpec::Kind::Reference) {
            // Permutation, set, range and printed checks: not written yet, and said so, never dropped in silence.
            plan.notes << QStringLiteral("check '%1' (%2) is not evaluated by the exported program: it evaluates "
                                         "expected-value, npy and reference checks")
                              .arg(c.displayName(), CheckSpec::kindName(c.kind));
            continue;
        }
        const HostBuffer *hb = buffers.find(c.buffer);
        if (!hb) {
            return exportError(QStringLiteral("%1.buffer: no buffer '%2'").arg(path, c.buffer), path);
        }
        PlanCheck pc;
        pc.name = c.displayName();
        pc.buffer = c.buffer;
        pc.kind = c.kind;
        pc.target = c.target();
        const ScalarKind sk = dtypeInfo(hb->spec.dtype).kind;
        pc.exact = sk == ScalarKind::SignedInt || sk == ScalarKind::UnsignedInt;
        pc.tolerance = pc.exact ? CheckTolerance{} : c.tolerance.value_or(defaultTolerance(hb->spec.dtype));
        pc.region = c.region;
        pc.nan = c.nan;
        pc.seeds = c.seeds;
        const QString file = QStringLiteral("expected/%1_%2.npy").arg(ci).arg(c.buffer);
        if (c.kind == CheckSpec::Kind::Expected) {
            Result<QByteArray> values = expectedValues(c, buffers, variables, path);
            if (!values) {
                return values.error();
            }
            QList<qint64> shape = hb->shape;
            if (dtypeInfo(hb->spec.dtype).components > 1) {
                shape << dtypeInfo(hb->spec.dtype).components;
            }
            result.files << ExportFile{file, npyBytes(DType::Float64, shape, values->constData(), values->size())};
            pc.expectedFile = file;
        } else if (c.kind == CheckSpec::Kind::Npy) {
            Result<ExportFile> f = npyCheckFile(c.npy, dir, file, path);
            if (!f) {
                return f.error();
            }
            result.files << *f;
            pc.expectedFile = file;
            Result<NpyHeader> h = [&]() -> Result<NpyHeader> {
                QByteArray bytes = f->contents;
                QBuffer b(&bytes);
                b.open(QIODevice::ReadOnly);
                return readNpyHeader(b, file);
            }();
            pc.expectedType = h ? h->dtype : DType::Float64;
            pc.regionInFile = c.region.has_value();
        } else {
            pc.reference = c.reference;
            needReference = true;
        }
        if (c.seeds > 1) {
            plan.notes << QStringLiteral("check '%1' asks for %2 seed runs; the export runs the project's own seeds "
                                         "(run 0) only")
                              .arg(pc.name)
                              .arg(c.seeds);
        }
        plan.checks << pc;
    }
    if (needReference) {
        const Project ref = referenceProjectFor(project);
        const bool ownSource = project.reference && !project.reference->sourceFile.isEmpty();
        const int refModule = ownSource ? addModule(project.reference->sourceFile, project.reference->sourceText,
                                                    QStringLiteral("reference_kernel.cu"))
                                        : mainModule;
        Result<Resolved> refRun =
            resolveRun(ref, buffers, plan.scalars, QStringLiteral("reference.launches"),
                       ownSource ? options.referenceLayouts : options.layouts,
                       ownSource ? options.referenceLayoutError : options.layoutError, &plan.structValues,
                       &plan.textures, ownSource ? options.referencePtx : options.ptx);
        if (!refRun) {
            return refRun.error();
        }
        const auto sameStreams = [](const PlanRun &a, const PlanRun &b) {
            if (a.streams.size() != b.streams.size() || a.events != b.events) {
                return false;
            }
            for (int i = 0; i < a.streams.size(); ++i) {
                if (a.streams[i].name != b.streams[i].name || a.streams[i].priority != b.streams[i].priority ||
                    a.streams[i].legacy != b.streams[i].legacy) {
                    return false;
                }
            }
            return true;
        };
        if (refRun->run.usesStreams() && !sameStreams(refRun->run, plan.run)) {
            // The programs create the main run's streams and events once; a reference with
            // others would need a second set, which the export does not write.
            return exportError(QStringLiteral("reference.launches: the reference runs on streams or events of its "
                                              "own, other than the project's; the export writes one set of streams "
                                              "and events"),
                               QStringLiteral("reference.launches"));
        }
        plan.reference = refRun->run;
        plan.reference->module = refModule;
        collectKernels(*plan.reference, refRun->kernels,
                       ownSource ? options.referenceLoweredNames : options.loweredNames);
    }

    // Texture and surface objects: the C++ program makes them over CUDA arrays as the worker does.
    for (const PlanTexture &t : std::as_const(plan.textures)) {
        if (target == ExportTarget::PyCuda) {
            return exportError(QStringLiteral("%1 is bound to a %2, which cannot be exported for pycuda: PyCUDA has "
                                              "texture references only, which CUDA 12 removed, and no texture or "
                                              "surface objects; export for cupy, cuda-python or cuda-cpp")
                                   .arg(t.where, t.spec.describe()),
                               QStringLiteral("launches"));
        }
        if (t.spec.layout != TextureSpec::Layout::Array) {
            return exportError(QStringLiteral("%1 is bound to a %2, which cannot be exported yet (the export makes "
                                              "textures over a CUDA array only: \"layout\": \"array\")")
                                   .arg(t.where, t.spec.describe()),
                               QStringLiteral("launches"));
        }
    }
    if (!plan.textures.isEmpty()) {
        plan.notes << QStringLiteral("every launch that binds a texture or surface copies its buffer into the CUDA "
                                     "array first (the playground copies only when the buffer changed), and a "
                                     "surface's array back after the launch; the copies are timed with the steps");
    }

    if (target == ExportTarget::CudaPython && !plan.structValues.isEmpty()) {
        const PlanStructValue &v = plan.structValues.first();
        return exportError(QStringLiteral("cuda-python: %1 takes the struct %2 by value, and cuda.core's launch() "
                                          "accepts numbers, pointers and buffers as arguments, no NumPy structured "
                                          "or ctypes struct; export for pycuda, cupy or cuda-cpp")
                               .arg(v.where, v.type),
                           QStringLiteral("launches"));
    }

    plan.graph = project.graph;
    const TimingSpec &t = project.timing;
    plan.timingEnabled = t.enabled;
    plan.cold = t.mode == TimingSpec::Mode::Cold;
    plan.warmup = t.warmup;
    plan.minSamples = t.minSamples;
    plan.maxSamples = t.maxSamples;
    plan.minSeconds = t.minSeconds;
    plan.maxNoise = t.maxNoise;
    plan.timeoutSeconds = t.timeoutSeconds;
    plan.batch = t.batch;

    // NVRTC has no <cstdio>, <cmath> and the like: the playground compiles
    // with stand-ins for them (Compiler::virtualHeaders), so an export that
    // compiles with NVRTC ships the ones its sources include. nvcc has the real ones.
    if (target == ExportTarget::CuPy || target == ExportTarget::CudaPython) {
        static const QRegularExpression includeLine(
            QStringLiteral("^[ \\t]*#[ \\t]*include[ \\t]*[<\"]([A-Za-z0-9_./]+)[>\"]"),
            QRegularExpression::MultilineOption);
        QSet<QByteArray> wanted;
        for (const PlanModule &m : std::as_const(plan.modules)) {
            QRegularExpressionMatchIterator it = includeLine.globalMatch(QString::fromUtf8(m.text));
            while (it.hasNext()) {
                wanted.insert(it.next().captured(1).toUtf8());
            }
        }
        const QString headerDir = QStringLiteral("nvrtc_include");
        for (const auto &[name, text] : Compiler::virtualHeaders()) {
            if (wanted.contains(name)) {
                result.files << ExportFile{headerDir + QLatin1Char('/') + QString::fromLatin1(name), text};
                plan.nvrtcHeaderDir = headerDir;
            }
        }
    }

    if (target == ExportTarget::CudaCpp) {
        Result<QList<ExportFile>> files = emitCpp(plan);
        if (!files) {
            return files.error();
        }
        result.files << *files;
    } else {
        Result<QByteArray> program = emitPython(plan, target);
        if (!program) {
            return program.error();
        }
        result.files << ExportFile{plan.programFile, *program};
    }
    result.program = plan.programFile;
    result.notes = plan.notes;
    return result;
}

bool takesStructByValue(const QString &source)
{
    for (const KernelSignature &s : findKernels(source)) {
        for (const KernelParam &p : s.params) {
            // Texture and surface objects are handles (64-bit numbers), not structs.
            if (p.pointerDepth == 0 && p.category == KernelParam::Category::Struct && !dtypeForCudaType(p.baseType) &&
                !isTextureObjectType(p.baseType) && !isSurfaceObjectType(p.baseType)) {
                return true;
            }
        }
    }
    return false;
}

bool fillsDeviceVariables(const Project &project)
{
    return std::any_of(project.buffers.cbegin(), project.buffers.cend(),
                       [](const BufferSpec &b) { return !b.symbol.isEmpty(); });
}

QHash<QString, QString> loweredNamesOf(const CompileResult &compiled)
{
    QHash<QString, QString> names;
    for (const KernelInfo &k : compiled.kernels) {
        if (!k.loweredName.isEmpty()) {
            names.insert(k.name, k.loweredName);
        }
    }
    return names;
}

Status writeExport(const ExportResult &result, const QString &dir)
{
    const QDir root(dir);
    if (!root.exists() && !QDir().mkpath(dir)) {
        return exportError(QStringLiteral("cannot create the folder '%1'").arg(dir));
    }
    for (const ExportFile &f : result.files) {
        const QString clean = QDir::cleanPath(f.path);
        if (f.path.isEmpty() || QDir::isAbsolutePath(f.path) || clean.startsWith(QLatin1String("..")) ||
            clean != f.path) {
            return exportError(QStringLiteral("refusing to write '%1' outside the export folder").arg(f.path));
        }
        const QString full = root.filePath(f.path);
        const QString sub = QFileInfo(full).absolutePath();
        if (!QDir().mkpath(sub)) {
            return exportError(QStringLiteral("cannot create the folder '%1'").arg(sub));
        }
        if (Status s = writeOutput(full, f.contents, QStringLiteral("the exported file")); !s) {
            return s;
        }
    }
    return Unit{};
}

} // namespace Kp
