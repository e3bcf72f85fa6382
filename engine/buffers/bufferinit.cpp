#include "bufferinit.h"

#include "buffers/npy.h"
#include "core/expression.h"
#include "core/fastexpr.h"
#include "core/parallel.h"
#include "core/safefile.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QImageReader>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

namespace Kp {

namespace {

Error bufError(const QString &message)
{
    return Error{QStringLiteral("buffers"), Error::Code::BadInput, {}, message};
}

QString num(double v)
{
    return QString::number(v, 'g', 17);
}

bool isFloatKind(ScalarKind k)
{
    return k == ScalarKind::Float || k == ScalarKind::Half || k == ScalarKind::BFloat;
}

// Writes the largest value of the component type below limit at p, given
// that the value at p rounded up to limit or beyond (random uniform's upper
// bound is open).
void stepBelow(DType c, double limit, char *p)
{
    for (int guard = 0; guard < 4 && loadComponent(c, p) >= limit; ++guard) {
        switch (c) {
        case DType::Float32: {
            float f;
            std::memcpy(&f, p, 4);
            f = std::nextafter(f, -std::numeric_limits<float>::infinity());
            std::memcpy(p, &f, 4);
            break;
        }
        case DType::Float64: {
            double d;
            std::memcpy(&d, p, 8);
            d = std::nextafter(d, -std::numeric_limits<double>::infinity());
            std::memcpy(p, &d, 8);
            break;
        }
        case DType::Float16:
        case DType::BFloat16: {
            std::uint16_t b;
            std::memcpy(&b, p, 2);
            if (b == 0) {
                b = 0x8001; // +0 -> the smallest negative subnormal
            } else if (b & 0x8000u) {
                ++b; // negative: a larger magnitude is lower
            } else {
                --b;
            }
            std::memcpy(p, &b, 2);
            break;
        }
        default: return;
        }
    }
}

struct ImageLayout
{
    bool ok = false;
    bool trailing4 = false; ///< shape [h, w, 4] rather than [h, w]
};

ImageLayout imageLayout(BufferInit::ImageMode mode, DType dtype)
{
    const DTypeInfo &info = dtypeInfo(dtype);
    switch (mode) {
    case BufferInit::ImageMode::Rgba8:
        if (dtype == DType::UChar4) {
            return {true, false};
        }
        if (dtype == DType::UInt8) {
            return {true, true};
        }
        return {};
    case BufferInit::ImageMode::Gray: return {info.components == 1, false};
    case BufferInit::ImageMode::Rgba:
        if (dtype == DType::Float4) {
            return {true, false};
        }
        if (info.components == 1 && isFloatKind(info.kind)) {
            return {true, true};
        }
        return {};
    }
    return {};
}

QString imageModeNeeds(BufferInit::ImageMode mode)
{
    switch (mode) {
    case BufferInit::ImageMode::Rgba8:
        return QStringLiteral("rgba8 images need dtype uchar4 (shape [height, width]) or uint8 (shape [height, width, "
                              "4])");
    case BufferInit::ImageMode::Gray:
        return QStringLiteral("gray images need a scalar dtype (shape [height, width], one value per pixel)");
    case BufferInit::ImageMode::Rgba:
        return QStringLiteral("rgba images need dtype float4 (shape [height, width]) or float16, bfloat16, float32 or "
                              "float64 (shape [height, width, 4])");
    }
    return {};
}

QList<qint64> imageShape(const QSize &size, bool trailing4)
{
    QList<qint64> s{size.height(), size.width()};
    if (trailing4) {
        s << 4;
    }
    return s;
}

Status fillExpression(const BufferSpec &spec, char *out, const QMap<QString, double> &scalars)
{
    const DTypeInfo &info = dtypeInfo(spec.dtype);
    const qint64 n = spec.elementCount();
    const qsizetype nd = spec.shape.size();
    // x is the last dimension, y the one before, z the first of three.
    const qint64 nx = spec.shape[nd - 1];
    const qint64 ny = nd >= 2 ? spec.shape[nd - 2] : 1;
    const qint64 nz = nd >= 3 ? spec.shape[nd - 3] : 1;
    const QString field = QStringLiteral("buffers '%1' init expression").arg(spec.name);

    struct Worker
    {
        std::unique_ptr<Expression> expr;
        double *i, *x, *y, *z, *c;
    };
    const int threads = threadsFor(n * info.components);
    const auto makeWorker = [&]() -> Result<Worker> {
        auto expr = std::make_unique<Expression>();
        for (auto it = scalars.cbegin(); it != scalars.cend(); ++it) {
            expr->set(it.key(), it.value());
        }
        expr->set(QStringLiteral("nx"), static_cast<double>(nx));
        expr->set(QStringLiteral("ny"), static_cast<double>(ny));
        expr->set(QStringLiteral("nz"), static_cast<double>(nz));
        expr->set(QStringLiteral("n"), static_cast<double>(n));
        Worker w{nullptr,
                 expr->variable(QStringLiteral("i")),
                 expr->variable(QStringLiteral("x")),
                 expr->variable(QStringLiteral("y")),
                 expr->variable(QStringLiteral("z")),
                 expr->variable(QStringLiteral("c"))};
        *w.i = *w.x = *w.y = *w.z = *w.c = 0;
        // Kp::Expression validates; its messages are the ones the user sees.
        if (Status s = expr->parse(spec.init.expression, field); !s) {
            return bufError(s.error().message);
        }
        w.expr = std::move(expr);
        return w;
    };
    std::vector<Worker> workers;
    {
        Result<Worker> first = makeWorker();
        if (!first) {
            return first.error();
        }
        workers.push_back(std::move(first).value());
    }
    const int comps = info.components;
    const int cb = info.componentBytes;
    const qint64 elemBytes = info.elementBytes();

    // The fast path: the same values, block by block (core/fastexpr). What it
    // does not translate falls back to muparser below, element by element.
    const Worker &w0 = workers.front();
    const Result<std::shared_ptr<const FastExpression>> fast =
        FastExpression::compile(*w0.expr, {w0.i, w0.x, w0.y, w0.z, w0.c});
    if (fast) {
        const FastExpression &program = **fast;
        constexpr int kB = FastExpression::kBlock;
        const bool usesXyz = program.uses(1) || program.uses(2) || program.uses(3);
        std::vector<QString> errors(static_cast<std::size_t>(threads));
        const auto run = [&](int chunk, qint64 begin, qint64 end) {
            const auto t = static_cast<std::size_t>(chunk);
            FastExpression::Scratch scratch;
            std::vector<double> arrays(6 * static_cast<std::size_t>(kB));
            double *const vi = arrays.data();
            double *const vx = vi + kB;
            double *const vy = vx + kB;
            double *const vz = vy + kB;
            double *const vc = vz + kB;
            double *const values = vc + kB;
            float floats[kB];
            const double *const inputs[] = {vi, vx, vy, vz, vc};
            for (qint64 b = begin; b < end; b += kB) {
                const int count = static_cast<int>(std::min<qint64>(kB, end - b));
                if (program.uses(0)) {
                    for (int k = 0; k < count; ++k) {
                        vi[k] = static_cast<double>(b + k);
                    }
                }
                if (usesXyz) {
                    // Row by row rather than a division per element; the same
                    // values as e % nx, (e / nx) % ny and e / (nx * ny).
                    qint64 x = b % nx;
                    qint64 y = (b / nx) % ny;
                    qint64 z = b / (nx * ny);
                    for (int k = 0; k < count;) {
                        const int run = static_cast<int>(std::min<qint64>(count - k, nx - x));
                        const auto yv = static_cast<double>(y);
                        const auto zv = static_cast<double>(z);
                        for (int j = 0; j < run; ++j) {
                            vx[k + j] = static_cast<double>(x + j);
                            vy[k + j] = yv;
                            vz[k + j] = zv;
                        }
                        k += run;
                        x += run;
                        if (x == nx) {
                            x = 0;
                            if (++y == ny) {
                                y = 0;
                                ++z;
                            }
                        }
                    }
                }
                for (int c = 0; c < comps; ++c) {
                    if (program.uses(4)) {
                        std::fill(vc, vc + count, static_cast<double>(c));
                    }
                    if (Status s = program.evaluate(inputs, count, values, scratch); !s) {
                        errors[t] = QStringLiteral("%1: %2 (elements %3 to %4, component %5)")
                                        .arg(field, s.error().message)
                                        .arg(b)
                                        .arg(b + count - 1)
                                        .arg(c);
                        return;
                    }
                    char *dst = out + b * elemBytes + c * cb;
                    if (info.component == DType::Float32 && comps == 1) {
                        // storeComponent's conversion, in one loop the compiler vectorises.
                        for (int k = 0; k < count; ++k) {
                            floats[k] = static_cast<float>(values[k]);
                        }
                        std::memcpy(dst, floats, static_cast<std::size_t>(count) * 4);
                    } else if (info.component == DType::Float32) {
                        for (int k = 0; k < count; ++k) {
                            const float f = static_cast<float>(values[k]);
                            std::memcpy(dst + k * elemBytes, &f, 4);
                        }
                    } else {
                        for (int k = 0; k < count; ++k) {
                            storeComponent(info.component, values[k], dst + k * elemBytes);
                        }
                    }
                }
            }
        };
        parallelChunks(n, threads, run);
        for (const QString &e : errors) {
            if (!e.isEmpty()) {
                return bufError(e);
            }
        }
        return Unit{};
    }

    // Every worker parses its own evaluator here, on this thread: muparser
    // instances are independent once parsed, and evaluation only reads them.
    for (int t = 1; t < threads; ++t) {
        Result<Worker> w = makeWorker();
        if (!w) {
            return w.error();
        }
        workers.push_back(std::move(w).value());
    }

    std::vector<QString> errors(static_cast<std::size_t>(threads));
    const auto run = [&](int t, qint64 begin, qint64 end) {
        Worker &w = workers[static_cast<std::size_t>(t)];
        for (qint64 e = begin; e < end; ++e) {
            *w.i = static_cast<double>(e);
            *w.x = static_cast<double>(e % nx);
            *w.y = static_cast<double>((e / nx) % ny);
            *w.z = static_cast<double>(e / (nx * ny));
            for (int c = 0; c < comps; ++c) {
                *w.c = c;
                const Result<double> v = w.expr->evaluate();
                if (!v) {
                    errors[static_cast<std::size_t>(t)] =
                        QStringLiteral("%1 (element %2, component %3)").arg(v.error().message).arg(e).arg(c);
                    return;
                }
                storeComponent(info.component, *v, out + e * elemBytes + c * cb);
            }
        }
    };
    parallelChunks(n, threads, run);
    for (const QString &e : errors) {
        if (!e.isEmpty()) {
            return bufError(e);
        }
    }
    return Unit{};
}

/**
 * Uniform floats in [min, max) of one type, as the generic loop below makes
 * them (the same u(k), the same rounding, the same step below max), without
 * its per-element calls through the dtype switch: about 5x faster, and a
 * Run refills its random buffers every time.
 */
template<typename F> void uniformFloats(F *out, qint64 begin, qint64 end, std::uint64_t seed, double min, double max)
{
    for (qint64 k = begin; k < end; ++k) {
        const double v = min + (max - min) * randomUnit(seed, static_cast<std::uint64_t>(k));
        F f = static_cast<F>(v);
        for (int guard = 0; guard < 4 && static_cast<double>(f) >= max; ++guard) {
            f = std::nextafter(f, -std::numeric_limits<F>::infinity());
        }
        out[k] = f;
    }
}

Status fillRandom(const BufferSpec &spec, char *out)
{
    const DTypeInfo &info = dtypeInfo(spec.dtype);
    const BufferInit &in = spec.init;
    const qint64 total = spec.elementCount() * info.components;
    const int cb = info.componentBytes;
    const DType c = info.component;
    const bool isFloat = isFloatKind(info.kind);
    const std::uint64_t seed = in.seed;
    constexpr double kTwoPi = 6.283185307179586476925286766559;
    constexpr double kMinUnit = 1.0 / 9007199254740992.0; // 2^-53
    if (in.distribution == BufferInit::Distribution::Uniform && (c == DType::Float32 || c == DType::Float64)) {
        parallelFor(total, threadsFor(total), [&](qint64 begin, qint64 end) {
            if (c == DType::Float32) {
                uniformFloats(reinterpret_cast<float *>(out), begin, end, seed, in.min, in.max);
            } else {
                uniformFloats(reinterpret_cast<double *>(out), begin, end, seed, in.min, in.max);
            }
        });
        return Unit{};
    }
    const auto run = [&](qint64 begin, qint64 end) {
        for (qint64 k = begin; k < end; ++k) {
            char *p = out + k * cb;
            const auto uk = static_cast<std::uint64_t>(k);
            if (in.distribution == BufferInit::Distribution::Uniform) {
                const double v = in.min + (in.max - in.min) * randomUnit(seed, uk);
                if (isFloat) {
                    storeComponent(c, v, p);
                    if (loadComponent(c, p) >= in.max) {
                        stepBelow(c, in.max, p);
                    }
                } else {
                    double r = std::floor(v);
                    if (r >= in.max) {
                        r = std::ceil(in.max) - 1; // double rounding reached max itself
                    }
                    storeComponent(c, r, p);
                }
            } else {
                double u1 = randomUnit(seed, 2 * uk);
                const double u2 = randomUnit(seed, 2 * uk + 1);
                if (u1 <= 0) {
                    u1 = kMinUnit; // log(0)
                }
                const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
                storeComponent(c, in.mean + in.stddev * z, p);
            }
        }
    };
    parallelFor(total, threadsFor(total), run);
    return Unit{};
}

Status fillImage(const BufferSpec &spec, char *out, const QString &path)
{
    const QString file = QFileInfo(path).fileName();
    const QString where = QStringLiteral("buffers '%1' init image").arg(spec.name);
    const ImageLayout layout = imageLayout(spec.init.imageMode, spec.dtype);
    if (!layout.ok) {
        return bufError(
            QStringLiteral("%1: %2, got %3").arg(where, imageModeNeeds(spec.init.imageMode), dtypeName(spec.dtype)));
    }
    // Opened here, not by QImageReader, so a FIFO or a device is refused (core/safefile).
    const Result<std::unique_ptr<QFile>> f = openRegularFile(path, kMaxImageFileBytes, QStringLiteral("an image file"));
    if (!f) {
        return bufError(QStringLiteral("%1: cannot read %2: %3").arg(where, path, f.error().message));
    }
    QImageReader reader(f->get());
    QImage img = reader.read();
    if (img.isNull()) {
        return bufError(QStringLiteral("%1: cannot read %2: %3").arg(where, path, reader.errorString()));
    }
    const QList<qint64> wanted = imageShape(img.size(), layout.trailing4);
    if (spec.shape != wanted) {
        return bufError(QStringLiteral("%1: %2 is %3x%4 pixels, so the buffer's shape must be %5 (or empty to take it "
                                       "from the file), got %6")
                            .arg(where, file)
                            .arg(img.width())
                            .arg(img.height())
                            .arg(shapeToString(wanted), shapeToString(spec.shape)));
    }
    const int w = img.width();
    const int h = img.height();
    const DTypeInfo &info = dtypeInfo(spec.dtype);
    switch (spec.init.imageMode) {
    case BufferInit::ImageMode::Rgba8: {
        img = img.convertToFormat(QImage::Format_RGBA8888);
        for (int y = 0; y < h; ++y) {
            std::memcpy(out + qint64(y) * w * 4, img.constScanLine(y), static_cast<std::size_t>(w) * 4);
        }
        break;
    }
    case BufferInit::ImageMode::Gray: {
        img = img.convertToFormat(QImage::Format_ARGB32);
        const double scale = isFloatKind(info.kind) ? 1.0 / 255.0 : 1.0;
        const int cb = info.componentBytes;
        for (int y = 0; y < h; ++y) {
            const auto *row = reinterpret_cast<const QRgb *>(img.constScanLine(y));
            for (int x = 0; x < w; ++x) {
                storeComponent(info.component, qGray(row[x]) * scale, out + (qint64(y) * w + x) * cb);
            }
        }
        break;
    }
    case BufferInit::ImageMode::Rgba: {
        img = img.convertToFormat(QImage::Format_RGBA8888);
        const int cb = info.componentBytes;
        for (int y = 0; y < h; ++y) {
            const uchar *row = img.constScanLine(y);
            for (int x = 0; x < w * 4; ++x) {
                storeComponent(info.component, row[x] / 255.0, out + (qint64(y) * w * 4 + x) * cb);
            }
        }
        break;
    }
    }
    return Unit{};
}

Status finite(const QString &field, double v)
{
    if (!std::isfinite(v)) {
        return bufError(QStringLiteral("%1: must be a finite number, got %2").arg(field, num(v)));
    }
    return Unit{};
}

} // namespace

std::uint64_t splitmix64(std::uint64_t x)
{
    std::uint64_t z = x + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double randomUnit(std::uint64_t seed, std::uint64_t k)
{
    const std::uint64_t r = splitmix64(seed ^ (k * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull));
    return static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0); // 2^-53
}

QString resolveInitFile(const QString &file, const QString &projectDir)
{
    if (QFileInfo(file).isAbsolute() || projectDir.isEmpty()) {
        return file;
    }
    return QDir(projectDir).filePath(file);
}

QString imageModeName(BufferInit::ImageMode mode)
{
    switch (mode) {
    case BufferInit::ImageMode::Rgba8: return QStringLiteral("rgba8");
    case BufferInit::ImageMode::Gray: return QStringLiteral("gray");
    case BufferInit::ImageMode::Rgba: return QStringLiteral("rgba");
    }
    return {};
}

Status checkSpec(const BufferSpec &spec, const QString &field)
{
    using Kind = BufferInit::Kind;
    const BufferInit &in = spec.init;
    const DTypeInfo &info = dtypeInfo(spec.dtype);
    const bool fromFile = in.kind == Kind::Npy || in.kind == Kind::Image;

    if (spec.shape.isEmpty() && !fromFile) {
        return bufError(QStringLiteral("%1.shape: expected 1 to 3 positive integers, got [] (only npy and image inits "
                                       "may leave it empty to take it from the file)")
                            .arg(field));
    }
    if (!spec.shape.isEmpty()) {
        const bool positive = std::all_of(spec.shape.cbegin(), spec.shape.cend(), [](qint64 e) { return e > 0; });
        if (spec.shape.size() > 3 || !positive) {
            return bufError(QStringLiteral("%1.shape: expected 1 to 3 positive integers, got %2")
                                .arg(field, shapeToString(spec.shape)));
        }
        qint64 bytes = info.elementBytes();
        bool overflow = false;
        for (const qint64 e : spec.shape) {
            if (bytes > std::numeric_limits<qint64>::max() / e) {
                overflow = true;
                break;
            }
            bytes *= e;
        }
        if (overflow || bytes > kMaxBufferBytes) {
            const QString size =
                overflow ? QStringLiteral("more than 2^63 bytes") : QStringLiteral("%1 bytes").arg(bytes);
            return bufError(QStringLiteral("%1.shape: %2 of %3 (%4 bytes each) is %5; a buffer may hold at most %6 "
                                           "bytes (64 GiB)")
                                .arg(field, shapeToString(spec.shape), dtypeName(spec.dtype))
                                .arg(info.elementBytes())
                                .arg(size)
                                .arg(kMaxBufferBytes));
        }
    }

    const QString init = field + QStringLiteral(".init");
    switch (in.kind) {
    case Kind::Zeros:
    case Kind::Uninitialized: break;
    case Kind::Constant:
        // NaN and infinities are legitimate contents of a float buffer.
        break;
    case Kind::Ramp:
        if (Status s = finite(init + QStringLiteral(".start"), in.start); !s) {
            return s;
        }
        if (Status s = finite(init + QStringLiteral(".step"), in.step); !s) {
            return s;
        }
        break;
    case Kind::Random:
        if (in.distribution == BufferInit::Distribution::Uniform) {
            if (Status s = finite(init + QStringLiteral(".min"), in.min); !s) {
                return s;
            }
            if (Status s = finite(init + QStringLiteral(".max"), in.max); !s) {
                return s;
            }
            if (!(in.max > in.min)) {
                return bufError(QStringLiteral("%1.max: must be greater than min (%2), got %3")
                                    .arg(init, num(in.min), num(in.max)));
            }
        } else {
            if (Status s = finite(init + QStringLiteral(".mean"), in.mean); !s) {
                return s;
            }
            if (!std::isfinite(in.stddev) || in.stddev < 0) {
                return bufError(
                    QStringLiteral("%1.stddev: must be a finite number, 0 or more, got %2").arg(init, num(in.stddev)));
            }
        }
        break;
    case Kind::Expression:
        if (in.expression.trimmed().isEmpty()) {
            return bufError(QStringLiteral("%1.expression: empty; write an expression over i, x, y, z, c, nx, ny, nz, "
                                           "n and the scalars")
                                .arg(init));
        }
        break;
    case Kind::Npy:
    case Kind::Image:
        if (in.file.trimmed().isEmpty()) {
            return bufError(QStringLiteral("%1.file: empty; %2 inits need a file (relative to the project folder)")
                                .arg(init, BufferInit::kindName(in.kind)));
        }
        break;
    }
    if (in.kind == Kind::Image) {
        const ImageLayout layout = imageLayout(in.imageMode, spec.dtype);
        if (!layout.ok) {
            return bufError(
                QStringLiteral("%1.mode: %2, got %3").arg(init, imageModeNeeds(in.imageMode), dtypeName(spec.dtype)));
        }
        if (!spec.shape.isEmpty()) {
            const bool fits = layout.trailing4 ? spec.shape.size() == 3 && spec.shape[2] == 4 : spec.shape.size() == 2;
            if (!fits) {
                return bufError(QStringLiteral("%1.shape: image mode %2 with dtype %3 needs shape %4, got %5 (or leave "
                                               "it empty to take it from the file)")
                                    .arg(field, imageModeName(in.imageMode), dtypeName(spec.dtype),
                                         layout.trailing4 ? QStringLiteral("[height, width, 4]")
                                                          : QStringLiteral("[height, width]"),
                                         shapeToString(spec.shape)));
            }
        }
    }
    return Unit{};
}

Status fillBuffer(const BufferSpec &spec, void *dst, qint64 dstBytes, const QString &projectDir,
                  const QMap<QString, double> &scalars)
{
    const QString name = QStringLiteral("buffers '%1'").arg(spec.name);
    if (spec.shape.isEmpty()) {
        return Error{QStringLiteral("buffers"),
                     Error::Code::Internal,
                     {},
                     QStringLiteral("%1: the shape is not resolved yet (npyShapeFor/imageShapeFor)").arg(name)};
    }
    if (Status s = checkSpec(spec, name); !s) {
        return s;
    }
    if (dstBytes != spec.byteSize()) {
        return Error{QStringLiteral("buffers"),
                     Error::Code::Internal,
                     {},
                     QStringLiteral("%1: the destination holds %2 bytes, the buffer needs %3")
                         .arg(name)
                         .arg(dstBytes)
                         .arg(spec.byteSize())};
    }
    char *out = static_cast<char *>(dst);
    const DTypeInfo &info = dtypeInfo(spec.dtype);
    const BufferInit &in = spec.init;
    const qint64 components = spec.elementCount() * info.components;
    const int cb = info.componentBytes;

    switch (in.kind) {
    case BufferInit::Kind::Zeros:
    case BufferInit::Kind::Uninitialized: std::memset(out, 0, static_cast<std::size_t>(dstBytes)); return Unit{};
    case BufferInit::Kind::Constant: {
        // One element, then doubling copies: memcpy speed for any size.
        const qint64 eb = info.elementBytes();
        for (int c = 0; c < info.components; ++c) {
            storeComponent(info.component, in.value, out + c * cb);
        }
        for (qint64 have = eb; have < dstBytes;) {
            const qint64 n = std::min(have, dstBytes - have);
            std::memcpy(out + have, out, static_cast<std::size_t>(n));
            have += n;
        }
        return Unit{};
    }
    case BufferInit::Kind::Ramp:
        parallelFor(components, threadsFor(components), [&](qint64 begin, qint64 end) {
            for (qint64 k = begin; k < end; ++k) {
                storeComponent(info.component, in.start + static_cast<double>(k) * in.step, out + k * cb);
            }
        });
        return Unit{};
    case BufferInit::Kind::Random: return fillRandom(spec, out);
    case BufferInit::Kind::Expression: return fillExpression(spec, out, scalars);
    case BufferInit::Kind::Npy:
        return loadNpyInto(resolveInitFile(in.file, projectDir), spec.dtype, spec.shape, dst, dstBytes, spec.name);
    case BufferInit::Kind::Image: return fillImage(spec, out, resolveInitFile(in.file, projectDir));
    }
    return Unit{};
}

Result<QList<qint64>> imageShapeFor(const QString &path, BufferInit::ImageMode mode, DType dtype)
{
    const ImageLayout layout = imageLayout(mode, dtype);
    if (!layout.ok) {
        return bufError(
            QStringLiteral("%1: %2, got %3").arg(QFileInfo(path).fileName(), imageModeNeeds(mode), dtypeName(dtype)));
    }
    const Result<std::unique_ptr<QFile>> f = openRegularFile(path, kMaxImageFileBytes, QStringLiteral("an image file"));
    if (!f) {
        return bufError(QStringLiteral("cannot read %1: %2").arg(path, f.error().message));
    }
    QImageReader reader(f->get());
    QSize size = reader.size();
    if (!size.isValid()) {
        // Some formats only know their size once decoded.
        const QImage img = reader.read();
        if (img.isNull()) {
            return bufError(QStringLiteral("cannot read %1: %2").arg(path, reader.errorString()));
        }
        size = img.size();
    }
    return imageShape(size, layout.trailing4);
}

} // namespace Kp
