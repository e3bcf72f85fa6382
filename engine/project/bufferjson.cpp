#include "bufferjson.h"

#include "buffers/bufferinit.h"
#include "project/fieldreader.h"

#include <QRegularExpression>

#include <cmath>
#include <limits>

namespace Kp {

namespace {

constexpr double kMaxExactInteger = 9007199254740992.0; // 2^53: doubles are exact up to here

QStringList scalarDTypeNames()
{
    QStringList names;
    for (const QString &n : dtypeNames()) {
        const DType t = *dtypeFromName(n);
        if (dtypeInfo(t).component == t) { // not char1 and the other one-component vectors
            names << n;
        }
    }
    return names;
}

const QList<BufferInit::Kind> &initKinds()
{
    static const QList<BufferInit::Kind> kinds{BufferInit::Kind::Zeros,      BufferInit::Kind::Constant,
                                               BufferInit::Kind::Ramp,       BufferInit::Kind::Random,
                                               BufferInit::Kind::Expression, BufferInit::Kind::Npy,
                                               BufferInit::Kind::Image,      BufferInit::Kind::Uninitialized};
    return kinds;
}

bool parseScalarValue(FieldReader &r, const QJsonValue &v, const QString &path, DType type, double *out)
{
    if (v.isUndefined()) {
        return r.missing(path, QStringLiteral("a number"));
    }
    if (v.isBool()) {
        *out = v.toBool() ? 1 : 0;
        return true;
    }
    if (!v.isDouble()) {
        return r.typeError(path, QStringLiteral("a number"), v);
    }
    const double d = v.toDouble();
    const DTypeInfo &info = dtypeInfo(type);
    const QString tn = dtypeName(type);
    const auto outOfRange = [&](const QString &lo, const QString &hi) {
        return r.fail(path, QStringLiteral("%1 is out of range for %2 (%3 to %4)").arg(numberText(v), tn, lo, hi));
    };
    if (info.kind == ScalarKind::SignedInt || info.kind == ScalarKind::UnsignedInt) {
        if (std::floor(d) != d) {
            return r.fail(path, QStringLiteral("%1 is not an integer (type %2)").arg(numberText(v), tn));
        }
        const int bits = info.componentBytes * 8;
        const bool isSigned = info.kind == ScalarKind::SignedInt;
        // Scalar values are doubles; 64-bit integers beyond 2^53 would silently change.
        // toInteger(): the JSON digits, which the double d may already have rounded to 2^53.
        if (bits == 64 &&
            (std::abs(d) > kMaxExactInteger || std::abs(v.toInteger()) > static_cast<qint64>(kMaxExactInteger))) {
            return r.fail(path, QStringLiteral("%1 is too large to be exact (scalar values are doubles; at most "
                                               "9007199254740992 in magnitude)")
                                    .arg(numberText(v)));
        }
        const double lo = isSigned ? -std::ldexp(1.0, bits - 1) : 0.0;
        const double hi = isSigned ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
        if (d < lo || d > hi) {
            if (bits == 64) {
                return outOfRange(isSigned ? QString::number(std::numeric_limits<qint64>::min()) : QStringLiteral("0"),
                                  isSigned ? QString::number(std::numeric_limits<qint64>::max())
                                           : QString::number(std::numeric_limits<quint64>::max()));
            }
            return outOfRange(numberText(lo), numberText(hi));
        }
    } else {
        double max = std::numeric_limits<double>::max();
        if (info.kind == ScalarKind::Half) {
            max = 65504;
        } else if (info.kind == ScalarKind::BFloat) {
            max = 3.3895313892515355e38;
        } else if (info.componentBytes == 4) {
            max = std::numeric_limits<float>::max();
        }
        if (std::abs(d) > max) {
            return outOfRange(numberText(-max), numberText(max));
        }
    }
    *out = d;
    return true;
}

bool parseShape(FieldReader &r, const QJsonValue &v, const QString &path, QList<qint64> *out)
{
    const auto bad = [&] {
        return r.fail(path, QStringLiteral("expected 1 to 3 positive integers, got %1").arg(shownJson(v)));
    };
    QJsonArray a;
    if (v.isDouble()) {
        a.append(v);
    } else if (v.isArray()) {
        a = v.toArray();
    } else {
        return bad();
    }
    if (a.isEmpty() || a.size() > 3) {
        return bad();
    }
    QList<qint64> shape;
    for (const QJsonValue &e : a) {
        const double d = e.toDouble();
        if (!e.isDouble() || std::floor(d) != d || d < 1) {
            return bad();
        }
        if (d > static_cast<double>(kMaxBufferBytes)) {
            // Too big anyway; checkSize() words the message with the limit.
            shape << kMaxBufferBytes + 1;
        } else {
            shape << static_cast<qint64>(d);
        }
    }
    *out = shape;
    return true;
}

bool checkSize(FieldReader &r, const BufferSpec &b, const QString &path)
{
    const QString limit = QStringLiteral("the limit of 64 GiB (%1 bytes)").arg(kMaxBufferBytes);
    qint64 elements = 1;
    bool overflow = false;
    for (qint64 e : b.shape) {
        overflow = overflow || e > kMaxBufferBytes || qMulOverflow(elements, e, &elements);
    }
    qint64 bytes = 0;
    overflow = overflow || qMulOverflow(elements, static_cast<qint64>(dtypeInfo(b.dtype).elementBytes()), &bytes);
    if (overflow) {
        return r.fail(path,
                      QStringLiteral("%1 of %2 is more than %3").arg(shapeText(b.shape), dtypeName(b.dtype), limit));
    }
    if (bytes > kMaxBufferBytes) {
        return r.fail(path, QStringLiteral("%1 of %2 is %3 bytes (%4 elements), more than %5")
                                .arg(shapeText(b.shape), dtypeName(b.dtype))
                                .arg(bytes)
                                .arg(elements)
                                .arg(limit));
    }
    return true;
}

bool parseInit(FieldReader &r, const QJsonValue &v, const QString &path, BufferInit *out)
{
    QJsonObject o;
    if (!r.object(v, path, &o)) {
        return false;
    }
    QStringList kindNames;
    for (BufferInit::Kind k : initKinds()) {
        kindNames << BufferInit::kindName(k);
    }
    const QString kp = jsonKeyPath(path, QStringLiteral("kind"));
    const QJsonValue kv = o.value(QStringLiteral("kind"));
    if (kv.isUndefined()) {
        return r.missing(kp, QStringLiteral("one of: %1").arg(kindNames.join(QStringLiteral(", "))));
    }
    if (!kv.isString()) {
        return r.typeError(kp, QStringLiteral("a string (one of: %1)").arg(kindNames.join(QStringLiteral(", "))), kv);
    }
    const qsizetype ki = kindNames.indexOf(kv.toString());
    if (ki < 0) {
        return r.fail(
            kp,
            QStringLiteral("unknown kind '%1'; allowed: %2").arg(kv.toString(), kindNames.join(QStringLiteral(", "))));
    }
    BufferInit init;
    init.kind = initKinds()[ki];
    const QString kindText = kv.toString();

    // Keys that belong to another kind are errors: a typo here would silently give wrong data.
    QStringList allowed{QStringLiteral("kind")};
    switch (init.kind) {
    case BufferInit::Kind::Zeros:
    case BufferInit::Kind::Uninitialized: break;
    case BufferInit::Kind::Constant: allowed << QStringLiteral("value"); break;
    case BufferInit::Kind::Ramp: allowed << QStringLiteral("start") << QStringLiteral("step"); break;
    case BufferInit::Kind::Random: {
        const QJsonValue dist = o.value(QStringLiteral("distribution"));
        if (!dist.isUndefined()) {
            if (dist.toString() == QLatin1String("normal")) {
                init.distribution = BufferInit::Distribution::Normal;
            } else if (dist.toString() != QLatin1String("uniform")) {
                return r.fail(jsonKeyPath(path, QStringLiteral("distribution")),
                              QStringLiteral("expected \"uniform\" or \"normal\", got %1").arg(shownChoice(dist)));
            }
        }
        const bool normal = init.distribution == BufferInit::Distribution::Normal;
        allowed << QStringLiteral("distribution");
        allowed << (normal ? QStringList{QStringLiteral("mean"), QStringLiteral("stddev")}
                           : QStringList{QStringLiteral("min"), QStringLiteral("max")});
        allowed << QStringLiteral("seed");
        for (auto it = o.begin(); it != o.end(); ++it) {
            const QString &k = it.key();
            if (!normal && (k == QLatin1String("mean") || k == QLatin1String("stddev"))) {
                return r.fail(jsonKeyPath(path, k), QStringLiteral("only for distribution \"normal\""));
            }
            if (normal && (k == QLatin1String("min") || k == QLatin1String("max"))) {
                return r.fail(jsonKeyPath(path, k), QStringLiteral("only for distribution \"uniform\""));
            }
        }
        break;
    }
    case BufferInit::Kind::Expression: allowed << QStringLiteral("expr"); break;
    case BufferInit::Kind::Npy: allowed << QStringLiteral("file"); break;
    case BufferInit::Kind::Image: allowed << QStringLiteral("file") << QStringLiteral("mode"); break;
    }
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (!allowed.contains(it.key())) {
            return r.fail(jsonKeyPath(path, it.key()), QStringLiteral("not a key of a \"%1\" init; allowed: %2")
                                                           .arg(kindText, allowed.join(QStringLiteral(", "))));
        }
    }

    const auto num = [&](const char *name, double *dst) {
        const QString k = QString::fromLatin1(name);
        return !o.contains(k) || r.number(o.value(k), jsonKeyPath(path, k), dst);
    };
    switch (init.kind) {
    case BufferInit::Kind::Zeros:
    case BufferInit::Kind::Uninitialized: break;
    case BufferInit::Kind::Constant:
        if (!o.contains(QStringLiteral("value"))) {
            return r.missing(jsonKeyPath(path, QStringLiteral("value")), QStringLiteral("a number"));
        }
        if (!num("value", &init.value)) {
            return false;
        }
        break;
    case BufferInit::Kind::Ramp:
        if (!num("start", &init.start) || !num("step", &init.step)) {
            return false;
        }
        break;
    case BufferInit::Kind::Random: {
        if (!num("min", &init.min) || !num("max", &init.max) || !num("mean", &init.mean)) {
            return false;
        }
        if (init.distribution == BufferInit::Distribution::Uniform && init.max <= init.min) {
            return r.fail(jsonKeyPath(path, QStringLiteral("max")),
                          QStringLiteral("must be greater than min (%1), got %2")
                              .arg(numberText(init.min), numberText(init.max)));
        }
        if (o.contains(QStringLiteral("stddev")) &&
            !r.numberAtLeast(o.value(QStringLiteral("stddev")), jsonKeyPath(path, QStringLiteral("stddev")), 0, true,
                             &init.stddev)) {
            return false;
        }
        if (o.contains(QStringLiteral("seed"))) {
            qint64 seed = 0;
            if (!r.integer(o.value(QStringLiteral("seed")), jsonKeyPath(path, QStringLiteral("seed")), 0,
                           std::numeric_limits<qint64>::max(), &seed)) {
                return false;
            }
            init.seed = static_cast<quint64>(seed);
        }
        break;
    }
    case BufferInit::Kind::Expression:
        if (!r.nonEmptyString(o.value(QStringLiteral("expr")), jsonKeyPath(path, QStringLiteral("expr")),
                              QStringLiteral("an expression string such as \"sin(x)\""), &init.expression)) {
            return false;
        }
        break;
    case BufferInit::Kind::Npy:
    case BufferInit::Kind::Image:
        if (!r.nonEmptyString(o.value(QStringLiteral("file")), jsonKeyPath(path, QStringLiteral("file")),
                              QStringLiteral("a file name"), &init.file)) {
            return false;
        }
        if (init.kind == BufferInit::Kind::Image && o.contains(QStringLiteral("mode"))) {
            const QJsonValue m = o.value(QStringLiteral("mode"));
            const QString ms = m.toString();
            if (ms == QLatin1String("rgba8")) {
                init.imageMode = BufferInit::ImageMode::Rgba8;
            } else if (ms == QLatin1String("gray")) {
                init.imageMode = BufferInit::ImageMode::Gray;
            } else if (ms == QLatin1String("rgba")) {
                init.imageMode = BufferInit::ImageMode::Rgba;
            } else {
                return r.fail(jsonKeyPath(path, QStringLiteral("mode")),
                              QStringLiteral("expected \"rgba8\", \"gray\" or \"rgba\", got %1").arg(shownChoice(m)));
            }
        }
        break;
    }
    *out = init;
    return true;
}

bool checkImageMode(FieldReader &r, const BufferSpec &b, const QString &path)
{
    const DTypeInfo &info = dtypeInfo(b.dtype);
    const bool lastIs4 = b.shape.isEmpty() || b.shape.last() == 4;
    const QString got =
        b.shape.isEmpty() ? dtypeName(b.dtype) : dtypeName(b.dtype) + QLatin1Char(' ') + shapeText(b.shape);
    const bool isFloat =
        info.kind == ScalarKind::Float || info.kind == ScalarKind::Half || info.kind == ScalarKind::BFloat;
    switch (b.init.imageMode) {
    case BufferInit::ImageMode::Rgba8:
        if (b.dtype == DType::UChar4 || (b.dtype == DType::UInt8 && lastIs4)) {
            return true;
        }
        return r.fail(
            path, QStringLiteral("\"rgba8\" needs dtype uchar4, or uint8 with a last dimension of 4; got %1").arg(got));
    case BufferInit::ImageMode::Gray:
        if (info.components == 1) {
            return true;
        }
        return r.fail(path, QStringLiteral("\"gray\" needs a scalar dtype (one value per pixel), got %1").arg(got));
    case BufferInit::ImageMode::Rgba:
        if (b.dtype == DType::Float4 || (info.components == 1 && isFloat && lastIs4)) {
            return true;
        }
        return r.fail(
            path,
            QStringLiteral("\"rgba\" needs dtype float4, or a float type with a last dimension of 4; got %1").arg(got));
    }
    return true;
}

bool parseBuffer(FieldReader &r, const QJsonValue &v, const QString &p, BufferSpec *out)
{
    static const QStringList known{QStringLiteral("name"), QStringLiteral("dtype"), QStringLiteral("shape"),
                                   QStringLiteral("init"), QStringLiteral("symbol")};
    QJsonObject o;
    if (!r.object(v, p, &o)) {
        return false;
    }
    BufferSpec b;
    if (!r.name(o.value(QStringLiteral("name")), jsonKeyPath(p, QStringLiteral("name")), &b.name)) {
        return false;
    }
    const QString dp = jsonKeyPath(p, QStringLiteral("dtype"));
    const QString allowed = dtypeNamesText();
    const QJsonValue dt = o.value(QStringLiteral("dtype"));
    if (dt.isUndefined()) {
        return r.missing(dp, QStringLiteral("one of: %1").arg(allowed));
    }
    if (!dt.isString()) {
        return r.typeError(dp, QStringLiteral("a dtype name"), dt);
    }
    const std::optional<DType> t = dtypeFromName(dt.toString());
    if (!t) {
        return r.fail(dp, QStringLiteral("unknown dtype '%1'; allowed: %2").arg(dt.toString(), allowed));
    }
    b.dtype = *t;
    const QString sp = jsonKeyPath(p, QStringLiteral("shape"));
    const QJsonValue shape = o.value(QStringLiteral("shape"));
    if (!shape.isUndefined() && !parseShape(r, shape, sp, &b.shape)) {
        return false;
    }
    const QJsonValue init = o.value(QStringLiteral("init"));
    if (!init.isUndefined() && !parseInit(r, init, jsonKeyPath(p, QStringLiteral("init")), &b.init)) {
        return false;
    }
    if (const QJsonValue symbol = o.value(QStringLiteral("symbol")); !symbol.isUndefined()) {
        const QString yp = jsonKeyPath(p, QStringLiteral("symbol"));
        if (!r.string(symbol, yp, &b.symbol)) {
            return false;
        }
        // A C++ name as the source writes it (namespaces allowed), or the
        // PTX symbol itself ("_ZN2ns1dE"); nothing else reaches the driver.
        static const QRegularExpression variable(
            QStringLiteral("^(?:[A-Za-z_][A-Za-z0-9_]*::)*[A-Za-z_$][A-Za-z0-9_$]*$"));
        if (!variable.match(b.symbol).hasMatch() || b.symbol.size() > 1024) {
            return r.fail(yp, QStringLiteral("'%1' is not a variable name; \"symbol\" names a __constant__ or "
                                             "__device__ variable of the source, e.g. \"c_Kernel\" or \"ns::table\"")
                                  .arg(b.symbol.left(80)));
        }
    }
    const bool fromFile = b.init.kind == BufferInit::Kind::Npy || b.init.kind == BufferInit::Kind::Image;
    if (shape.isUndefined() && !fromFile) {
        return r.missing(sp, QStringLiteral("1 to 3 positive integers (only npy and image inits take the shape "
                                            "from the file)"));
    }
    if (!checkSize(r, b, sp)) {
        return false;
    }
    if (b.init.kind == BufferInit::Kind::Image &&
        !checkImageMode(r, b, jsonKeyPath(jsonKeyPath(p, QStringLiteral("init")), QStringLiteral("mode")))) {
        return false;
    }
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (!known.contains(it.key())) {
            b.unknown.insert(it.key(), it.value());
        }
    }
    *out = b;
    return true;
}

bool parseScalar(FieldReader &r, const QJsonValue &v, const QString &p, ScalarSpec *out)
{
    static const QStringList known{QStringLiteral("name"), QStringLiteral("type"), QStringLiteral("value")};
    QJsonObject o;
    if (!r.object(v, p, &o)) {
        return false;
    }
    ScalarSpec s;
    if (!r.name(o.value(QStringLiteral("name")), jsonKeyPath(p, QStringLiteral("name")), &s.name)) {
        return false;
    }
    const QJsonValue t = o.value(QStringLiteral("type"));
    if (!t.isUndefined()) {
        const QString tp = jsonKeyPath(p, QStringLiteral("type"));
        const QString allowed = scalarDTypeNames().join(QStringLiteral(", "));
        if (!t.isString()) {
            return r.typeError(tp, QStringLiteral("a dtype name"), t);
        }
        const std::optional<DType> dt = dtypeFromName(t.toString());
        if (!dt) {
            return r.fail(tp, QStringLiteral("unknown dtype '%1'; allowed: %2").arg(t.toString(), allowed));
        }
        if (dtypeInfo(*dt).component != *dt) {
            return r.fail(
                tp, QStringLiteral("'%1' is a vector type; a scalar must be one of: %2").arg(t.toString(), allowed));
        }
        s.type = *dt;
    }
    if (!parseScalarValue(r, o.value(QStringLiteral("value")), jsonKeyPath(p, QStringLiteral("value")), s.type,
                          &s.value)) {
        return false;
    }
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (!known.contains(it.key())) {
            s.unknown.insert(it.key(), it.value());
        }
    }
    *out = s;
    return true;
}

template<typename T, typename Parse> Result<T> readWith(Parse parse, const QJsonValue &json, const QString &path)
{
    FieldReader r;
    T value;
    if (!parse(r, json, path, &value)) {
        return r.error();
    }
    return value;
}

} // namespace

JsonNode bufferInitNode(const BufferInit &init)
{
    JsonNode o = jsonObject();
    o.insert(QStringLiteral("kind"), jsonString(BufferInit::kindName(init.kind)));
    switch (init.kind) {
    case BufferInit::Kind::Zeros:
    case BufferInit::Kind::Uninitialized: break;
    case BufferInit::Kind::Constant: o.insert(QStringLiteral("value"), jsonNumber(init.value)); break;
    case BufferInit::Kind::Ramp:
        o.insert(QStringLiteral("start"), jsonNumber(init.start));
        o.insert(QStringLiteral("step"), jsonNumber(init.step));
        break;
    case BufferInit::Kind::Random:
        if (init.distribution == BufferInit::Distribution::Normal) {
            o.insert(QStringLiteral("distribution"), jsonString(QStringLiteral("normal")));
            o.insert(QStringLiteral("mean"), jsonNumber(init.mean));
            o.insert(QStringLiteral("stddev"), jsonNumber(init.stddev));
        } else {
            o.insert(QStringLiteral("distribution"), jsonString(QStringLiteral("uniform")));
            o.insert(QStringLiteral("min"), jsonNumber(init.min));
            o.insert(QStringLiteral("max"), jsonNumber(init.max));
        }
        // The digits, not a double: seeds beyond 2^53 must survive.
        o.insert(QStringLiteral("seed"), jsonNumberText(QString::number(init.seed)));
        break;
    case BufferInit::Kind::Expression: o.insert(QStringLiteral("expr"), jsonString(init.expression)); break;
    case BufferInit::Kind::Npy: o.insert(QStringLiteral("file"), jsonString(init.file)); break;
    case BufferInit::Kind::Image:
        o.insert(QStringLiteral("file"), jsonString(init.file));
        o.insert(QStringLiteral("mode"), jsonString(imageModeName(init.imageMode)));
        break;
    }
    return o;
}

JsonNode bufferSpecNode(const BufferSpec &spec)
{
    JsonNode o = jsonObject();
    o.insert(QStringLiteral("name"), jsonString(spec.name));
    o.insert(QStringLiteral("dtype"), jsonString(dtypeName(spec.dtype)));
    if (!spec.shape.isEmpty()) {
        JsonNode shape = jsonArray();
        for (qint64 e : spec.shape) {
            shape.append(jsonInteger(e));
        }
        o.insert(QStringLiteral("shape"), shape);
    }
    o.insert(QStringLiteral("init"), bufferInitNode(spec.init));
    if (!spec.symbol.isEmpty()) {
        o.insert(QStringLiteral("symbol"), jsonString(spec.symbol));
    }
    o.appendUnknown(spec.unknown);
    return o;
}

JsonNode scalarSpecNode(const ScalarSpec &scalar)
{
    JsonNode o = jsonObject();
    o.insert(QStringLiteral("name"), jsonString(scalar.name));
    o.insert(QStringLiteral("type"), jsonString(dtypeName(scalar.type)));
    o.insert(QStringLiteral("value"), jsonNumber(scalar.value));
    o.appendUnknown(scalar.unknown);
    return o;
}

QJsonObject bufferInitToJson(const BufferInit &init)
{
    return toJsonValue(bufferInitNode(init)).toObject();
}

QJsonObject bufferSpecToJson(const BufferSpec &spec)
{
    return toJsonValue(bufferSpecNode(spec)).toObject();
}

QJsonObject scalarSpecToJson(const ScalarSpec &scalar)
{
    return toJsonValue(scalarSpecNode(scalar)).toObject();
}

Result<BufferInit> bufferInitFromJson(const QJsonValue &json, const QString &path)
{
    return readWith<BufferInit>(parseInit, json, path);
}

Result<BufferSpec> bufferSpecFromJson(const QJsonValue &json, const QString &path)
{
    return readWith<BufferSpec>(parseBuffer, json, path);
}

Result<ScalarSpec> scalarSpecFromJson(const QJsonValue &json, const QString &path)
{
    return readWith<ScalarSpec>(parseScalar, json, path);
}

} // namespace Kp
