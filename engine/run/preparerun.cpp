#include "runner.h"

#include "buffers/bufferinit.h"
#include "core/expression.h"
#include "kernel/structlayout.h"
#include "project/stepgraph.h"
#include "run/deviceglobals.h"
#include "run/stepexpand.h"

#include <QRegularExpression>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

// prepareRun: a project, its compile and its host buffers made into the
// request kpg-worker runs, every value checked first with the field it came
// from (docs/kpg-project.md). The launch steps' expansion is stepexpand.cpp.

namespace Kp {

namespace {

Error runError(const QString &message, Error::Code code = Error::Code::BadInput)
{
    return Error{QStringLiteral("run"), code, {}, message};
}

/** An error about one field of the project; path lets a panel mark that field. */
Error fieldError(const QString &path, const QString &message)
{
    Error e = runError(message);
    e.path = path;
    return e;
}

/** An error from a helper that knows its field only as text, with the path added. */
Error withPath(Error e, const QString &path)
{
    if (e.path.isEmpty()) {
        e.path = path;
    }
    return e;
}

QString paramText(const KernelParam &p, int index)
{
    return p.name.isEmpty() ? QStringLiteral("parameter %1, %2").arg(index + 1).arg(p.type)
                            : QStringLiteral("parameter '%1', %2").arg(p.name, p.type);
}

/** Evaluates a grid/block/shared item to a whole number. */
Result<qint64> evalInteger(Expression &ex, const QString &text, const QString &field, qint64 minValue)
{
    double v = 0;
    if (!Expression::isNumber(text, &v)) {
        const Result<double> r = ex.evaluate(text, field);
        if (!r) {
            return withPath(r.error(), field);
        }
        v = *r;
    }
    if (!std::isfinite(v) || v != std::floor(v)) {
        return fieldError(field,
                          QStringLiteral("%1: '%2' gives %3; expected a whole number (use ceil_div(a, b) to round up)")
                              .arg(field, text)
                              .arg(v));
    }
    // Range-checked as a double: converting 2^63 or 1e300 to an integer is
    // undefined behaviour (it read -9223372036854775808).
    constexpr double kMax = 2147483647.0;
    if (v > kMax) {
        return fieldError(field, QStringLiteral("%1: '%2' is too large (at most 2147483647); it gives %3")
                                     .arg(field, text, QString::number(v, 'g', 6)));
    }
    if (v < double(minValue)) {
        return fieldError(field,
                          QStringLiteral("%1: '%2' gives %3; expected %4 to 2147483647")
                              .arg(field, text, v > -kMax ? QString::number(qint64(v)) : QString::number(v, 'g', 6))
                              .arg(minValue));
    }
    return qint64(v);
}

/** Texture and surface objects: handles only a texture or surface binding makes. */
bool isOpaqueHandle(const QString &type)
{
    return type.contains(QLatin1String("TextureObject")) || type.contains(QLatin1String("SurfaceObject")) ||
           type == QLatin1String("CUtexObject") || type == QLatin1String("CUsurfObject");
}

/** A vector (float2, half2, ...) or a struct: its value is written as a braced list. */
bool isAggregateParam(const KernelParam &p)
{
    if (p.pointerDepth > 0 || p.baseType == QLatin1String("bool")) {
        return false;
    }
    if (const auto d = dtypeForCudaType(p.baseType)) {
        return dtypeInfo(*d).components > 1 || p.category == KernelParam::Category::Vector;
    }
    return p.category == KernelParam::Category::Struct && !isOpaqueHandle(p.baseType);
}

QString leafList(const QList<StructLeaf> &leaves)
{
    QStringList parts;
    for (const StructLeaf &l : leaves) {
        parts << QStringLiteral("%1 (%2)").arg(l.path, l.isBool      ? QStringLiteral("bool")
                                                       : l.isPointer ? QStringLiteral("pointer")
                                                                     : dtypeName(l.component));
        if (parts.size() == 12 && leaves.size() > 13) {
            parts << QStringLiteral("... %1 more").arg(leaves.size() - 12);
            break;
        }
    }
    return parts.join(QStringLiteral(", "));
}

QString componentNames(int components)
{
    static const char *names[] = {"x", "y", "z", "w"};
    QStringList l;
    for (int c = 0; c < components && c < 4; ++c) {
        l << QLatin1String(names[c]);
    }
    return l.join(QStringLiteral(", "));
}

/** The bytes of a vector or struct argument, from its braced values and the compiled layout. */
Result<QByteArray> aggregateBytes(const KernelParam &param, const ArgBinding &a, const CompileResult &compiled,
                                  const QString &where)
{
    const QString type = param.baseType;
    const auto d = dtypeForCudaType(type);
    if (a.kind == ArgBinding::Kind::Buffer) {
        return runError(QStringLiteral("%1: buffer '%2' bound to a %3 passed by value; write its value instead, e.g. "
                                       "\"%3 {...}\"")
                            .arg(where, a.name, type));
    }
    if (!a.isAggregate() && d) {
        const int n = dtypeInfo(*d).components;
        return runError(QStringLiteral("%1: %2 has %3 components (%4); write one value for each: \"%2 {%5}\" or [%5]")
                            .arg(where, type)
                            .arg(n)
                            .arg(componentNames(n), QStringList(n, QStringLiteral("0")).join(QStringLiteral(", "))));
    }
    if (!a.text.isEmpty()) {
        // The type written before the braces must be the parameter's.
        if (Result<QList<double>> r = parseBracedValues(a.text, type, where); !r) {
            return r.error();
        }
    }
    if (d) {
        const DTypeInfo &info = dtypeInfo(*d);
        if (a.values.size() != info.components) {
            return runError(QStringLiteral("%1: %2 has %3 components (%4), the value gives %5")
                                .arg(where, type)
                                .arg(info.components)
                                .arg(componentNames(info.components))
                                .arg(a.values.size()));
        }
        QByteArray bytes(info.elementBytes(), '\0');
        for (int c = 0; c < info.components; ++c) {
            const double v = a.values[c];
            if ((info.kind == ScalarKind::SignedInt || info.kind == ScalarKind::UnsignedInt) && v != std::floor(v)) {
                return runError(QStringLiteral("%1: component %2 of %3 is %4, not a whole number")
                                    .arg(where, componentNames(c + 1).section(QStringLiteral(", "), -1), type)
                                    .arg(v));
            }
            storeComponent(info.component, v, bytes.data() + c * info.componentBytes);
        }
        return bytes;
    }
    if (!compiled.layoutError.isEmpty()) {
        return runError(QStringLiteral("%1: the layout of %2 is not known: %3").arg(where, type, compiled.layoutError));
    }
    const auto layoutIt = compiled.layouts.constFind(type);
    if (layoutIt == compiled.layouts.constEnd()) {
        return runError(QStringLiteral("%1: no definition of struct %2 was found in the source, so its layout is not "
                                       "known (a struct from a header, a template or a typedef of one cannot be "
                                       "written yet)")
                            .arg(where, type));
    }
    Result<QList<StructLeaf>> leaves = structLeaves(type, compiled.layouts);
    if (!leaves) {
        return runError(QStringLiteral("%1: %2").arg(where, leaves.error().message));
    }
    if (!a.isAggregate() || a.values.size() != leaves->size()) {
        return runError(QStringLiteral("%1: %2 takes %3 values in declaration order: %4; %5")
                            .arg(where, type)
                            .arg(leaves->size())
                            .arg(leafList(*leaves), a.isAggregate()
                                                        ? QStringLiteral("the value gives %1").arg(a.values.size())
                                                        : QStringLiteral("write \"%1 {...}\" or an array").arg(type)));
    }
    for (qsizetype i = 0; i < leaves->size(); ++i) {
        const StructLeaf &l = (*leaves)[i];
        const ScalarKind kind = dtypeInfo(l.component).kind;
        if (l.isPointer && a.values[i] != 0) {
            return runError(QStringLiteral("%1: member %2 of %3 is a pointer; only 0 (null) can be written to it, a "
                                           "buffer's address cannot be put in a struct yet")
                                .arg(where, l.path, type));
        }
        if ((kind == ScalarKind::SignedInt || kind == ScalarKind::UnsignedInt) &&
            a.values[i] != std::floor(a.values[i])) {
            return runError(QStringLiteral("%1: member %2 of %3 is %4; %5 is not a whole number")
                                .arg(where, l.path, type, dtypeName(l.component))
                                .arg(a.values[i]));
        }
    }
    return packStruct(*layoutIt, *leaves, a.values);
}

/** An unbound parameter's binding from its default argument in the source. */
Result<ArgBinding> defaultBinding(const KernelParam &p, const QString &field)
{
    ArgBinding b;
    b.kind = ArgBinding::Kind::Literal;
    QString text = p.defaultValue.trimmed();
    static const QStringList nulls{QStringLiteral("0"), QStringLiteral("NULL"), QStringLiteral("nullptr"),
                                   QStringLiteral("0L"), QStringLiteral("0UL")};
    if (p.pointerDepth > 0) {
        if (nulls.contains(text)) {
            b.null = true;
            return b;
        }
        return fieldError(field, QStringLiteral("%1: the default argument '%2' of a pointer parameter is not a null "
                                                "pointer; bind a buffer")
                                     .arg(field, text));
    }
    if (text == QLatin1String("true") || text == QLatin1String("false")) {
        b.value = text == QLatin1String("true") ? 1 : 0;
        return b;
    }
    // make_float2(1, 2) reads as float2 {1, 2}.
    static const QRegularExpression make(QStringLiteral("^make_([A-Za-z_][A-Za-z0-9_]*)\\s*\\((.*)\\)$"));
    if (const QRegularExpressionMatch m = make.match(text); m.hasMatch()) {
        text = QStringLiteral("%1 {%2}").arg(m.captured(1), m.captured(2));
    }
    if (text.contains(QLatin1Char('{'))) {
        Result<QList<double>> v = parseBracedValues(text, QString(), field);
        if (!v) {
            return withPath(v.error(), field);
        }
        b.values = *v;
        b.text = text;
        return b;
    }
    QString num = text;
    static const QRegularExpression suffix(QStringLiteral("(?<=[0-9.])([fF]|[uU]?[lL]{0,2}|[lL]{1,2}[uU]?)$"));
    num.remove(suffix);
    bool ok = false;
    const double v = num.startsWith(QLatin1String("0x"), Qt::CaseInsensitive) ? double(num.mid(2).toULongLong(&ok, 16))
                                                                              : num.toDouble(&ok);
    if (!ok) {
        return fieldError(field, QStringLiteral("%1: the default argument '%2' is not a number, so it cannot be used "
                                                "here; bind the parameter")
                                     .arg(field, text));
    }
    b.value = v;
    return b;
}

/**
 * A texture or surface binding for param: checked against the parameter's
 * type and the buffer's dtype and shape, and added to the request's objects
 * (once: steps binding the same object share it). The object's index.
 */
Result<int> textureArg(const KernelParam &param, const ArgBinding &a, const HostBuffers &buffers,
                       const QHash<QString, int> &bufferIndex, const QString &field, const QString &where,
                       RunRequest *req)
{
    const bool surface = a.texture.isSurface();
    const QString key = surface ? QStringLiteral("surface") : QStringLiteral("texture");
    const bool takesTexture = param.pointerDepth == 0 && isTextureObjectType(param.baseType);
    const bool takesSurface = param.pointerDepth == 0 && isSurfaceObjectType(param.baseType);
    if (!takesTexture && !takesSurface) {
        return fieldError(
            field, QStringLiteral("%1: a %2 binding makes a %3, but this parameter is %4")
                       .arg(where, key,
                            surface ? QStringLiteral("cudaSurfaceObject_t") : QStringLiteral("cudaTextureObject_t"),
                            param.type));
    }
    if (surface != takesSurface) {
        return fieldError(field,
                          QStringLiteral("%1: the kernel takes a %2 here; write {\"%3\": \"%4\"} instead "
                                         "of {\"%5\": ...}")
                              .arg(where, param.baseType,
                                   takesSurface ? QStringLiteral("surface") : QStringLiteral("texture"), a.name, key));
    }
    const HostBuffer *hb = buffers.find(a.name);
    if (!hb || !bufferIndex.contains(a.name)) {
        return fieldError(field + QLatin1Char('.') + key,
                          QStringLiteral("%1.%2: unknown buffer '%3'").arg(field, key, a.name));
    }
    if (!hb->spec.symbol.isEmpty()) {
        return fieldError(field + QLatin1Char('.') + key,
                          QStringLiteral("%1.%2: buffer '%3' is the device variable '%4'; a %2 is made over an "
                                         "ordinary buffer")
                              .arg(field, key, a.name, hb->spec.symbol));
    }
    // The shape is the resolved one: a buffer read from a file has it only now.
    if (Result<TextureDescriptors> d = buildTextureDescriptors(a.texture, hb->spec.dtype, hb->shape, field); !d) {
        return withPath(d.error(), field);
    }
    RunTexture t{a.texture, bufferIndex.value(a.name), hb->spec.dtype, hb->shape, field};
    for (qsizetype i = 0; i < req->textures.size(); ++i) {
        const RunTexture &o = req->textures[i];
        if (o.spec == t.spec && o.buffer == t.buffer) {
            return int(i);
        }
    }
    req->textures << t;
    return int(req->textures.size() - 1);
}

/**
 * The hint for a launch that starts whole blocks of threads beyond every
 * buffer it is given, or an empty string. One thread per element is the
 * usual mapping; rounding the grid up to whole blocks explains up to one
 * block less per axis, so the hint is given only when the launch with one
 * block fewer on every axis that has several would still cover the largest
 * buffer (a grid of 1,000 blocks for 1,000 elements, a 100x100 grid for a
 * 1000x1000 image in 16x16 blocks). Only the largest buffer counts: small
 * ones (histogram bins, partial sums, filter taps) are meant to be smaller.
 * A kernel that guards its index runs right anyway; one that does not writes
 * past the end, which is what the hint is for.
 */
QString launchLargerThanBuffers(const QString &field, const Dim3 &grid, const Dim3 &block, const QList<RunArg> &args,
                                const RunRequest &req, const HostBuffers &buffers)
{
    qint64 largest = 0;
    QString name;
    const auto consider = [&](int index) {
        if (index < 0 || index >= buffers.all().size()) {
            return;
        }
        const qint64 n = buffers.all()[index]->elementCount();
        if (n > largest) {
            largest = n;
            name = req.buffers[index].name;
        }
    };
    for (const RunArg &a : args) {
        if (a.isBuffer()) {
            consider(a.buffer);
        } else if (a.isTexture()) {
            consider(req.textures[a.texture].buffer);
        }
    }
    if (largest == 0) {
        return {};
    }
    double covered = 1; // threads of the launch less one block on every axis with several; doubles: no overflow
    double threads = 1;
    bool severalBlocks = false;
    for (size_t d = 0; d < 3; ++d) {
        threads *= double(grid[d]) * double(block[d]);
        severalBlocks = severalBlocks || grid[d] > 1;
        covered *= double(grid[d] > 1 ? grid[d] - 1 : 1) * double(block[d]);
    }
    if (!severalBlocks || covered < double(largest)) {
        return {};
    }
    // Exact while a double holds the count exactly; past 2^53 (far past any GPU's limits, which are checked
    // elsewhere) a rounded count, never a cast that would wrap past 2^63.
    const QString threadsText = threads < 9007199254740992.0
                                    ? QString::number(qint64(threads))
                                    : QStringLiteral("about %1").arg(QString::number(threads, 'g', 3));
    QString text = QStringLiteral("%1: the launch starts %2 threads but the largest buffer it is given, '%3', holds %4 "
                                  "elements, so whole blocks have no element of their own; a kernel that does not "
                                  "guard its index (if (i < n)) writes past the end")
                       .arg(field, threadsText, name, QString::number(largest));
    if (grid[1] == 1 && grid[2] == 1 && block[1] == 1 && block[2] == 1) {
        text += QStringLiteral(" (a grid of %1 blocks of %2 covers it)")
                    .arg((largest + block[0] - 1) / block[0])
                    .arg(block[0]);
    }
    return text;
}

/** Why a parameter passed by value cannot take a number, in words that say what to do instead. */
QString unbindableText(const QString &where, const KernelParam &param)
{
    if (isOpaqueHandle(param.baseType)) {
        const bool surface = param.baseType.contains(QLatin1String("urf"));
        return QStringLiteral("%1: a %2 is made over a buffer by the worker; bind it as {\"%3\": \"BUFFER\"} "
                              "(docs/buffers.md, \"Textures and surfaces\")")
            .arg(where, param.baseType, surface ? QStringLiteral("surface") : QStringLiteral("texture"));
    }
    return QStringLiteral("%1: a value of type %2 cannot be written from the project: it is neither a number, a CUDA "
                          "vector nor a struct defined in the source")
        .arg(where, param.type);
}

/** Why a compile cannot be run, or nothing when it can. */
Status runnable(const CompileResult &compiled)
{
    if (!compiled.ok && compiled.errorCount() == 0) {
        // A compile that failed without a diagnostic (the compiler stopped,
        // its process failed): its log says why, not an error count of 0.
        const QString first = compiled.log.trimmed().section(QLatin1Char('\n'), 0, 0);
        return runError(first.isEmpty()
                            ? QStringLiteral("the kernel did not compile, and the compiler said nothing; see the Log")
                            : QStringLiteral("the kernel did not compile: %1").arg(first),
                        Error::Code::CompileError);
    }
    if (!compiled.ok) {
        return runError(QStringLiteral("the kernel does not compile (%1 error%2); fix it before running")
                            .arg(compiled.errorCount())
                            .arg(compiled.errorCount() == 1 ? "" : "s"),
                        Error::Code::CompileError);
    }
    return Unit{};
}

/**
 * One prepareRun, in parts: the buffers, the device globals they fill, each
 * kernel step and its arguments, the swaps, the limits and timing, the
 * throughput. The members are what the parts share.
 */
struct Preparation
{
    Preparation(const Project &p, const CompileResult &c, const HostBuffers &b)
        : project(p)
        , compiled(c)
        , buffers(b)
    {
    }
    Preparation(const Preparation &) = delete; // req refers into out
    Preparation &operator=(const Preparation &) = delete;

    /** The buffers in project order; arguments refer to them by index. */
    void bindBuffers(int device);
    /**
     * Device globals ("symbol"): the name and the size are checked here,
     * from the PTX, so a typo is reported without a GPU; the worker checks
     * the size again against the loaded module.
     */
    Status bindGlobals();
    /** One kernel step, resolved; the buffers it points into go to node (the step graph's race check). */
    Result<RunStep> resolveKernel(const LaunchStep &step, const QString &field, GraphNode *node);
    /** The step's block, then grid (which may use block.x), then dynamic shared memory, into rs. */
    Status resolveShape(const LaunchStep &step, const QString &field, RunStep &rs);
    /**
     * What each of kernel's parameters is bound to: by position or by
     * name, a parameter left out taking its default argument; argField
     * gets where in the project each binding is.
     */
    Result<QList<ArgBinding>> bindings(const LaunchStep &step, const KernelInfo &kernel, const QString &field,
                                       QStringList &argField);
    /** Parameter `index` of a kernel bound as a says (argField: where in the project). */
    Result<RunArg> argument(const KernelParam &param, int index, const ArgBinding &a, const QString &argField,
                            GraphNode *node);
    /** A pointer parameter bound to a buffer (where: the parameter in words, for messages). */
    Result<RunArg> pointerArgument(const KernelParam &param, const ArgBinding &a, const QString &argField,
                                   const QString &where, GraphNode *node);
    /** A number passed by value: a literal, an expression or a scalar, packed as the parameter's type. */
    Result<RunArg> valueArgument(const KernelParam &param, const ArgBinding &a, const QString &argField,
                                 const QString &where);
    /**
     * A __constant__ or __device__ variable without an initializer that a
     * launched kernel uses holds zeros: the project has no way to fill it
     * yet, and a kernel silently running on zeros is worse than a warning.
     */
    void warnUnfilledGlobals();
    Status bindSwaps();
    /** Repeats, the time-outs and the timing settings. */
    Status setTiming();
    Status evaluateThroughput();

    const Project &project;
    const CompileResult &compiled;
    const HostBuffers &buffers;
    PreparedRun out;
    RunRequest &req = out.request;
    Expression ex;
    QHash<QString, int> bufferIndex;       ///< buffer name -> index in req.buffers
    QHash<QString, QString> filledGlobals; ///< PTX name -> the buffer that fills it
};

void Preparation::bindBuffers(int device)
{
    req.device = device;
    for (const auto &b : buffers.all()) {
        bufferIndex.insert(b->spec.name, int(req.buffers.size()));
        req.buffers << RunBuffer{b->spec.name,
                                 b->memory.path(),
                                 b->memory.id(),
                                 b->byteSize(),
                                 int(qMax<qint64>(1, dtypeInfo(b->spec.dtype).elementBytes())),
                                 b->spec.init.kind != BufferInit::Kind::Uninitialized,
                                 QString()};
    }
}

Status Preparation::bindGlobals()
{
    const QList<PtxGlobal> globals = ptxGlobals(compiled.ptx);
    for (qsizetype i = 0; i < buffers.all().size(); ++i) {
        const BufferSpec &spec = buffers.all()[i]->spec;
        if (spec.symbol.isEmpty()) {
            continue;
        }
        const QString field = QStringLiteral("buffers[%1].symbol").arg(i);
        const PtxGlobal *g = findPtxGlobal(globals, spec.symbol);
        if (!g) {
            // The variables the source itself declares: toolkit headers
            // (cooperative_groups, cuda::std) add hundreds of their own that
            // would bury them. Without a match, every one, mangled names last.
            QStringList names;
            QStringList mangled;
            for (const PtxGlobal &x : globals) {
                const QRegularExpression word(
                    QStringLiteral("\\b%1\\b").arg(QRegularExpression::escape(ptxGlobalSourceName(x.name))));
                if (word.match(project.sourceText).hasMatch()) {
                    (x.name.startsWith(QLatin1String("_Z")) ? mangled : names) << ptxGlobalText(x);
                }
            }
            names << mangled;
            if (names.isEmpty()) {
                for (const PtxGlobal &x : globals) {
                    names << ptxGlobalText(x);
                }
            }
            if (const qsizetype total = names.size(); total > 8) {
                names = names.mid(0, 8);
                names << QStringLiteral("and %1 more").arg(total - 8);
            }
            return fieldError(field,
                              QStringLiteral("%1: '%2' is not a __constant__ or __device__ variable of the "
                                             "compiled module; %3")
                                  .arg(field, spec.symbol,
                                       names.isEmpty() ? QStringLiteral("the module has none")
                                                       : QStringLiteral("its variables: %1").arg(names.join(", "))));
        }
        if (filledGlobals.contains(g->name)) {
            return fieldError(field, QStringLiteral("%1: buffers '%2' and '%3' both name %4; one buffer per variable")
                                         .arg(field, filledGlobals.value(g->name), spec.name, ptxGlobalText(*g)));
        }
        filledGlobals.insert(g->name, spec.name);
        const qint64 bytes = req.buffers[i].bytes;
        const int elementBytes = req.buffers[i].elementBytes;
        if (g->bytes >= 0 && g->bytes != bytes) {
            const QString fits =
                g->bytes % elementBytes == 0
                    ? QStringLiteral("a shape of %1 elements fits it").arg(g->bytes / elementBytes)
                    : QStringLiteral("no whole number of %1 elements fits it").arg(dtypeName(spec.dtype));
            return fieldError(
                QStringLiteral("buffers[%1].shape").arg(i),
                QStringLiteral("buffers[%1].shape: buffer '%2' holds %3 bytes (%4 x %5) but %6 has %7 "
                               "bytes; %8")
                    .arg(i)
                    .arg(spec.name)
                    .arg(bytes)
                    .arg(buffers.all()[i]->elementCount())
                    .arg(dtypeName(spec.dtype),
                         QStringLiteral("%1 variable '%2'")
                             .arg(g->constant ? QStringLiteral("__constant__") : QStringLiteral("__device__"), g->name))
                    .arg(g->bytes)
                    .arg(fits));
        }
        req.buffers[i].symbol = g->name;
    }

    return Unit{};
}

Result<RunStep> Preparation::resolveKernel(const LaunchStep &step, const QString &field, GraphNode *node)
{
    const KernelInfo *k = findKernel(compiled.kernels, step.kernel);
    if (!k) {
        QStringList names;
        for (const KernelInfo &ki : compiled.kernels) {
            names << ki.name;
        }
        return fieldError(
            field + QStringLiteral(".kernel"),
            QStringLiteral("%1.kernel: no kernel '%2' in the source; kernels: %3")
                .arg(field, step.kernel, names.isEmpty() ? QStringLiteral("none") : names.join(QStringLiteral(", "))));
    }
    if (k->loweredName.isEmpty()) {
        return fieldError(
            field + QStringLiteral(".kernel"),
            QStringLiteral("%1.kernel: '%2' is a template; name an instance such as '%2<...>' with its template "
                           "arguments")
                .arg(field, k->name));
    }

    RunStep rs;
    rs.kernel = step.kernel;
    rs.loweredName = k->loweredName;
    rs.cooperative = step.cooperative;
    if (Status s = resolveShape(step, field, rs); !s) {
        return s.error();
    }
    QStringList argField;
    const Result<QList<ArgBinding>> bound = bindings(step, *k, field, argField);
    if (!bound) {
        return bound.error();
    }
    const QList<KernelParam> &params = k->params;
    for (qsizetype p = 0; p < params.size(); ++p) {
        Result<RunArg> arg = argument(params[p], int(p), (*bound)[p], argField[p], node);
        if (!arg) {
            return arg.error();
        }
        rs.args << *arg;
    }
    // A surface's array is copied back over its buffer after the launch,
    // so what the kernel wrote through a pointer into that buffer is lost.
    for (const RunArg &t : std::as_const(rs.args)) {
        if (!t.isTexture() || !req.textures[t.texture].spec.isSurface()) {
            continue;
        }
        for (const RunArg &b : std::as_const(rs.args)) {
            if (b.isBuffer() && b.buffer == req.textures[t.texture].buffer) {
                out.warnings << QStringLiteral("%1: buffer '%2' is bound both as a surface and as a pointer; "
                                               "the surface's array is copied back over the buffer after the "
                                               "launch, so writes through the pointer are lost")
                                    .arg(field, req.buffers[b.buffer].name);
                break;
            }
        }
    }
    if (QString hint = launchLargerThanBuffers(field, rs.grid, rs.block, rs.args, req, buffers); !hint.isEmpty()) {
        out.warnings << hint;
    }
    return rs;
}

Status Preparation::resolveShape(const LaunchStep &step, const QString &field, RunStep &rs)
{
    if (step.block.isEmpty() || step.block.size() > 3 || step.grid.isEmpty() || step.grid.size() > 3) {
        return fieldError(field, QStringLiteral("%1: grid and block need 1 to 3 items each").arg(field));
    }
    // The items of "block" or "grid" into out, then block.x ... (grid.x ...) for the expressions after them.
    const auto dims = [&](const QStringList &items, const QString &name, Dim3 &out) -> Status {
        static const char *axis[3] = {"x", "y", "z"};
        for (qsizetype d = 0; d < items.size(); ++d) {
            auto v = evalInteger(ex, items[d], QStringLiteral("%1.%2[%3]").arg(field, name).arg(d), 1);
            if (!v) {
                return v.error();
            }
            out[size_t(d)] = *v;
        }
        for (size_t d = 0; d < 3; ++d) {
            ex.set(name + QLatin1Char('.') + QLatin1String(axis[d]), double(out[d]));
        }
        return Unit{};
    };
    // Block first: grid expressions may use block.x.
    Dim3 block{1, 1, 1}, grid{1, 1, 1};
    if (Status s = dims(step.block, QStringLiteral("block"), block); !s) {
        return s.error();
    }
    if (Status s = dims(step.grid, QStringLiteral("grid"), grid); !s) {
        return s.error();
    }
    auto shared = evalInteger(ex, step.sharedBytes.isEmpty() ? QStringLiteral("0") : step.sharedBytes,
                              field + QStringLiteral(".sharedBytes"), 0);
    if (!shared) {
        return shared.error();
    }
    rs.grid = grid;
    rs.block = block;
    rs.sharedBytes = *shared;
    return Unit{};
}

Result<QList<ArgBinding>> Preparation::bindings(const LaunchStep &step, const KernelInfo &kernel, const QString &field,
                                                QStringList &argField)
{
    const KernelInfo *k = &kernel;
    const QList<KernelParam> &params = k->params;
    QList<const ArgBinding *> bound(params.size(), nullptr);
    argField = QStringList(params.size());
    const bool byName = !step.args.isEmpty() && !step.args.first().param.isEmpty();
    if (byName) {
        for (qsizetype ai = 0; ai < step.args.size(); ++ai) {
            const ArgBinding &a = step.args[ai];
            qsizetype idx = -1;
            for (qsizetype p = 0; p < params.size(); ++p) {
                if (params[p].name == a.param) {
                    idx = p;
                }
            }
            if (idx < 0) {
                QStringList names;
                for (const KernelParam &p : params) {
                    names << p.name;
                }
                return fieldError(QStringLiteral("%1.args.%2").arg(field, a.param),
                                  QStringLiteral("%1.args.%2: kernel '%3' has no parameter '%2'; its parameters: %4")
                                      .arg(field, a.param, k->name, names.join(QStringLiteral(", "))));
            }
            bound[idx] = &a;
            argField[idx] = QStringLiteral("%1.args.%2").arg(field, a.param);
        }
        for (qsizetype p = 0; p < params.size(); ++p) {
            if (!bound[p] && params[p].defaultValue.isEmpty()) {
                return fieldError(field + QStringLiteral(".args"),
                                  QStringLiteral("%1.args: %2 of kernel '%3' is not bound")
                                      .arg(field, paramText(params[p], int(p)), k->name));
            }
        }
    } else {
        // Trailing parameters with a default argument may be left out, as in C++.
        qsizetype required = params.size();
        while (required > 0 && !params[required - 1].defaultValue.isEmpty()) {
            --required;
        }
        if (step.args.size() > params.size() || step.args.size() < required) {
            QStringList names;
            for (const KernelParam &p : params) {
                names << (p.name.isEmpty() ? p.type : p.name);
            }
            return fieldError(field + QStringLiteral(".args"),
                              QStringLiteral("%1.args: kernel '%2' takes %3 parameter%4 (%5); %6 %7 bound")
                                  .arg(field, k->name)
                                  .arg(params.size())
                                  .arg(params.size() == 1 ? "" : "s")
                                  .arg(names.join(QStringLiteral(", ")))
                                  .arg(step.args.size())
                                  .arg(step.args.size() == 1 ? "is" : "are"));
        }
        for (qsizetype p = 0; p < step.args.size(); ++p) {
            bound[p] = &step.args[p];
            argField[p] = QStringLiteral("%1.args[%2]").arg(field).arg(p);
        }
    }
    // Unbound parameters take their default argument (docs/kpg-project.md, "Arguments").
    QList<ArgBinding> result;
    for (qsizetype p = 0; p < params.size(); ++p) {
        if (bound[p]) {
            result << *bound[p];
            continue;
        }
        argField[p] = QStringLiteral("%1.args (default of %2)").arg(field, paramText(params[p], int(p)));
        Result<ArgBinding> d = defaultBinding(params[p], argField[p]);
        if (!d) {
            return d.error();
        }
        result << *d;
    }
    return result;
}

Result<RunArg> Preparation::argument(const KernelParam &param, int index, const ArgBinding &a, const QString &argField,
                                     GraphNode *node)
{
    const QString where = QStringLiteral("%1 (%2)").arg(argField, paramText(param, index));
    const auto argError = [&](const QString &message) { return fieldError(argField, message); };
    if (a.kind == ArgBinding::Kind::Texture) {
        Result<int> t = textureArg(param, a, buffers, bufferIndex, argField, where, &req);
        if (!t) {
            return t.error();
        }
        RunArg arg;
        arg.texture = *t;
        if (node) {
            // A texture reads the buffer; a surface's writes land in it after the step.
            node->accesses << GraphNode::Access{a.name, 0, -1, a.texture.isSurface()};
        }
        return arg;
    }
    if (param.pointerDepth == 0 && isOpaqueHandle(param.baseType)) {
        return argError(unbindableText(where, param)); // a number or buffer cannot stand in for one
    }
    const bool nullPointer =
        a.kind == ArgBinding::Kind::Literal && (a.null || (!a.isAggregate() && a.expression.isEmpty() && a.value == 0));
    if (param.pointerDepth > 0 && nullPointer) {
        // null (or 0): what the kernel's own "if (p)" tests for.
        RunArg arg;
        arg.value = QByteArray(int(sizeof(void *)), '\0');
        return arg;
    }
    if (a.null) {
        return argError(QStringLiteral("%1: null is a null pointer, but this parameter is %2, passed by value")
                            .arg(where, param.type));
    }
    if (param.pointerDepth == 0 && (a.isAggregate() || isAggregateParam(param))) {
        Result<QByteArray> bytes = aggregateBytes(param, a, compiled, where);
        if (!bytes) {
            return argError(bytes.error().message);
        }
        RunArg arg;
        arg.value = *bytes;
        return arg;
    }
    if (param.pointerDepth > 0) {
        return pointerArgument(param, a, argField, where, node);
    }
    return valueArgument(param, a, argField, where);
}

Result<RunArg> Preparation::pointerArgument(const KernelParam &param, const ArgBinding &a, const QString &argField,
                                            const QString &where, GraphNode *node)
{
    const auto argError = [&](const QString &message) { return fieldError(argField, message); };
    if (a.kind != ArgBinding::Kind::Buffer) {
        return argError(QStringLiteral("%1: a pointer parameter needs a buffer; got %2")
                            .arg(where, a.kind == ArgBinding::Kind::Scalar
                                            ? QStringLiteral("scalar '%1'").arg(a.name)
                                            : QStringLiteral("the number %1").arg(a.value)));
    }
    const HostBuffer *hb = buffers.find(a.name);
    if (!hb) {
        return argError(QStringLiteral("%1: unknown buffer '%2'").arg(where, a.name));
    }
    const DTypeInfo &bi = dtypeInfo(hb->spec.dtype);
    const QString pointee = param.baseType;
    const bool bytePointer =
        param.pointerDepth == 1 && (pointee == QStringLiteral("void") || pointee == QStringLiteral("char") ||
                                    pointee == QStringLiteral("unsigned char"));
    int align = 1;
    if (param.pointerDepth > 1) {
        return argError(QStringLiteral("%1: pointers to pointers cannot be bound to a buffer").arg(where));
    }
    if (!bytePointer) {
        if (const auto pd = dtypeForCudaType(pointee)) {
            const DTypeInfo &pi = dtypeInfo(*pd);
            align = pi.alignment;
            // One rule for every pointee the dtype table knows: the element sizes must
            // be equal. Same size with the same components (float buffer, float1 *)
            // is the same data; same size otherwise is a reinterpretation, allowed
            // with a warning (a uchar4 image read as unsigned int *).
            if (*pd != hb->spec.dtype) {
                if (pi.elementBytes() == bi.elementBytes() && pi.component == bi.component) {
                    // the same bytes under another name
                } else if (pi.elementBytes() == bi.elementBytes()) {
                    out.warnings << QStringLiteral("%1: buffer '%2' holds %3 but the kernel reads it as "
                                                   "%4 (same size: the bits are reinterpreted)")
                                        .arg(where, a.name, dtypeName(hb->spec.dtype), pointee);
                } else {
                    return argError(QStringLiteral("%1: buffer '%2' holds %3 (%4 bytes each) but the "
                                                   "kernel expects %5 (%6 bytes each); change the "
                                                   "buffer's dtype to %7")
                                        .arg(where, a.name, dtypeName(hb->spec.dtype))
                                        .arg(bi.elementBytes())
                                        .arg(pointee)
                                        .arg(pi.elementBytes())
                                        .arg(dtypeName(*pd)));
                }
            }
        }
    }
    if (a.offset < 0 || a.offset >= qMax<qint64>(1, hb->elementCount())) {
        return argError(QStringLiteral("%1: offset %2 is outside buffer '%3' (%4 elements)")
                            .arg(where)
                            .arg(a.offset)
                            .arg(a.name)
                            .arg(hb->elementCount()));
    }
    const qint64 offsetBytes = a.offset * bi.elementBytes();
    if (offsetBytes % align != 0) {
        return argError(QStringLiteral("%1: offset %2 of buffer '%3' is %4 bytes, not a multiple of %5 "
                                       "(the alignment of %6): the kernel would fault on a misaligned "
                                       "address")
                            .arg(where)
                            .arg(a.offset)
                            .arg(a.name)
                            .arg(offsetBytes)
                            .arg(align)
                            .arg(pointee));
    }
    RunArg arg;
    arg.buffer = bufferIndex.value(a.name);
    arg.offset = offsetBytes;
    if (node) {
        node->accesses << GraphNode::Access{a.name, a.offset, -1, !param.isConst};
    }
    return arg;
}

Result<RunArg> Preparation::valueArgument(const KernelParam &param, const ArgBinding &a, const QString &argField,
                                          const QString &where)
{
    const auto argError = [&](const QString &message) { return fieldError(argField, message); };
    if (a.kind == ArgBinding::Kind::Buffer) {
        return argError(QStringLiteral("%1: buffer '%2' bound to a parameter passed by value; the kernel "
                                       "needs a scalar or a number here")
                            .arg(where, a.name));
    }
    double value = a.value;
    if (!a.expression.isEmpty()) {
        const Result<double> v = ex.evaluate(a.expression, argField);
        if (!v) {
            return withPath(v.error(), argField);
        }
        value = *v;
    }
    if (a.kind == ArgBinding::Kind::Scalar) {
        const ScalarSpec *s = project.scalar(a.name);
        if (!s) {
            return argError(QStringLiteral("%1: unknown scalar '%2'").arg(where, a.name));
        }
        value = s->value;
    }
    QByteArray bytes;
    if (param.baseType == QStringLiteral("bool")) {
        bytes = QByteArray(1, value != 0 ? 1 : 0);
    } else if (const auto pd = dtypeForCudaType(param.baseType); pd && dtypeInfo(*pd).components == 1) {
        const DTypeInfo &pi = dtypeInfo(*pd);
        if ((pi.kind == ScalarKind::SignedInt || pi.kind == ScalarKind::UnsignedInt) && value != std::floor(value)) {
            return argError(QStringLiteral("%1: %2 is not a whole number").arg(where).arg(value));
        }
        bytes = QByteArray(pi.elementBytes(), '\0');
        storeComponent(*pd, value, bytes.data());
        if (loadComponent(*pd, bytes.constData()) != value && pi.kind != ScalarKind::Float &&
            pi.kind != ScalarKind::Half && pi.kind != ScalarKind::BFloat) {
            return argError(QStringLiteral("%1: %2 does not fit in %3").arg(where).arg(value).arg(param.baseType));
        }
    } else {
        return argError(unbindableText(where, param));
    }
    RunArg arg;
    arg.value = bytes;
    return arg;
}

void Preparation::warnUnfilledGlobals()
{
    QSet<QString> warnedGlobals;
    for (const RunStep &s : req.steps) {
        if (s.kind != RunStep::Kind::Kernel || s.loweredName.isEmpty()) {
            continue;
        }
        for (const PtxGlobal &g : unfilledGlobalsUsedBy(compiled.ptx, s.loweredName)) {
            if (filledGlobals.contains(g.name)) {
                continue; // a buffer with "symbol" fills it
            }
            if (!warnedGlobals.contains(s.loweredName + g.name)) {
                warnedGlobals.insert(s.loweredName + g.name);
                out.warnings << QStringLiteral("kernel '%1' uses %2 variable '%3', which has no initializer and "
                                               "which no buffer fills: it holds zeros (a buffer with \"symbol\": "
                                               "\"%3\" fills it)")
                                    .arg(s.kernel,
                                         g.constant ? QStringLiteral("__constant__") : QStringLiteral("__device__"),
                                         g.name);
            }
        }
    }
}

Status Preparation::bindSwaps()
{
    for (const auto &[a, b] : project.repeat.swaps) {
        if (!bufferIndex.contains(a) || !bufferIndex.contains(b)) {
            return fieldError(QStringLiteral("repeat.swap"),
                              QStringLiteral("repeat.swap: unknown buffer in ('%1', '%2')").arg(a, b));
        }
        for (const QString &name : {a, b}) {
            if (!req.buffers[bufferIndex.value(name)].symbol.isEmpty()) {
                return fieldError(QStringLiteral("repeat.swap"),
                                  QStringLiteral("repeat.swap: buffer '%1' is the device variable '%2', whose "
                                                 "address is fixed; only buffers without \"symbol\" can be swapped")
                                      .arg(name, req.buffers[bufferIndex.value(name)].symbol));
            }
        }
        req.swaps.append({bufferIndex.value(a), bufferIndex.value(b)});
    }

    return Unit{};
}

Status Preparation::setTiming()
{
    const int launches = int(req.steps.size());
    const TimingSpec &t = project.timing;
    const int repeat = qMax(1, project.repeat.count);
    const int killMs = int(qBound(1.0, project.killTimeoutSeconds * 1000.0, 3600e3));
    req.image = compiled.cubin.isEmpty() ? compiled.ptx : compiled.cubin;
    req.repeat = repeat;
    req.killTimeoutMs = killMs;
    req.timing.enabled = t.enabled;
    req.timing.mode = t.mode == TimingSpec::Mode::Hot ? RunTiming::Mode::Hot : RunTiming::Mode::Cold;
    req.timing.warmup = t.warmup;
    req.timing.minSamples = t.minSamples;
    req.timing.maxSamples = t.maxSamples;
    req.timing.minSeconds = t.minSeconds;
    req.timing.maxNoise = t.maxNoise;
    req.timing.timeoutSeconds = t.timeoutSeconds;
    req.timing.batch = t.batch;
    for (const QString &name : t.resetBeforeEachSample) {
        if (!bufferIndex.contains(name)) {
            return fieldError(QStringLiteral("timing.resetBeforeEachSample"),
                              QStringLiteral("timing.resetBeforeEachSample: unknown buffer '%1'").arg(name));
        }
        req.timing.resetBuffers << bufferIndex.value(name);
    }
    // One more pass for the timeline (docs/streams.md) whenever the run is timed.
    req.timeline = t.enabled;
    req.graph = project.graph && t.enabled;
    // The worker stops a hung launch itself and says which; this outer limit
    // only catches a worker that cannot answer at all.
    const double warm = t.enabled ? t.warmup : 0;
    out.timeoutMs = int(qMin(2.0e9, killMs * double(launches) * (repeat + warm + 1) +
                                        (t.enabled ? t.timeoutSeconds * 1000.0 + killMs : 0.0) + 30000.0));

    return Unit{};
}

Status Preparation::evaluateThroughput()
{
    if (!project.throughput.bytes.isEmpty()) {
        auto v = ex.evaluate(project.throughput.bytes, QStringLiteral("throughput.bytes"));
        if (!v) {
            return withPath(v.error(), QStringLiteral("throughput.bytes"));
        }
        out.bytes = *v;
    }
    if (!project.throughput.flops.isEmpty()) {
        auto v = ex.evaluate(project.throughput.flops, QStringLiteral("throughput.flops"));
        if (!v) {
            return withPath(v.error(), QStringLiteral("throughput.flops"));
        }
        out.flops = *v;
    }
    return Unit{};
}

} // namespace

Result<PreparedRun> prepareRun(const Project &project, const CompileResult &compiled, const HostBuffers &buffers,
                               int device)
{
    if (Status s = runnable(compiled); !s) {
        return s.error();
    }
    if (project.launches.isEmpty()) {
        return fieldError(QStringLiteral("launches"),
                          QStringLiteral("launches: the project has no launch step; add one naming the kernel, its "
                                         "grid, block and arguments"));
    }
    Preparation p(project, compiled, buffers);
    const QMap<QString, double> vars = expressionVariables(project, buffers);
    for (auto it = vars.cbegin(); it != vars.cend(); ++it) {
        p.ex.set(it.key(), it.value());
    }
    p.bindBuffers(device);
    if (Status s = p.bindGlobals(); !s) {
        return s.error();
    }
    const KernelResolver resolve = [&p](const LaunchStep &step, const QString &field, GraphNode *node) {
        return p.resolveKernel(step, field, node);
    };
    if (Status s = expandSteps(project, buffers, p.bufferIndex, p.ex, resolve, &p.out); !s) {
        return s.error();
    }
    p.warnUnfilledGlobals();
    if (Status s = p.bindSwaps(); !s) {
        return s.error();
    }
    if (Status s = p.setTiming(); !s) {
        return s.error();
    }
    if (Status s = p.evaluateThroughput(); !s) {
        return s.error();
    }
    return std::move(p.out);
}

} // namespace Kp
