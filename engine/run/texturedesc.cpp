#include "texturedesc.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QLocale>
#include <QStringList>

#include <cmath>
#include <limits>

namespace Kp {

namespace {

Error specError(const QString &path, const QString &message)
{
    Error e{QStringLiteral("project"), Error::Code::BadInput, QString(), QStringLiteral("%1: %2").arg(path, message)};
    e.path = path;
    return e;
}

QString jsonTypeName(const QJsonValue &v)
{
    switch (v.type()) {
    case QJsonValue::Null: return QStringLiteral("null");
    case QJsonValue::Bool: return QStringLiteral("a boolean");
    case QJsonValue::Double: return QStringLiteral("a number");
    case QJsonValue::String: return QStringLiteral("a string");
    case QJsonValue::Array: return QStringLiteral("an array");
    case QJsonValue::Object: return QStringLiteral("an object");
    case QJsonValue::Undefined: break;
    }
    return QStringLiteral("nothing");
}

// One of names, as a string; the index into names.
Result<int> choice(const QJsonValue &v, const QString &path, const QStringList &names, const QString &what)
{
    if (!v.isString()) {
        return specError(
            path,
            QStringLiteral("expected %1 (%2), got %3").arg(what, names.join(QStringLiteral(", ")), jsonTypeName(v)));
    }
    const qsizetype i = names.indexOf(v.toString());
    if (i < 0) {
        return specError(path, QStringLiteral("'%1' is not %2; allowed: %3")
                                   .arg(v.toString().left(80), what, names.join(QStringLiteral(", "))));
    }
    return int(i);
}

} // namespace

QString addressName(TextureSpec::Address a)
{
    static const char *const names[] = {"clamp", "wrap", "mirror", "border"};
    return QLatin1String(names[int(a)]);
}

Result<TextureSpec> TextureSpec::fromJson(const QJsonValue &value, const QString &path)
{
    static const QStringList known{QStringLiteral("texture"), QStringLiteral("surface"), QStringLiteral("layout"),
                                   QStringLiteral("address"), QStringLiteral("filter"),  QStringLiteral("normalized"),
                                   QStringLiteral("read"),    QStringLiteral("border")};
    if (!value.isObject()) {
        return specError(
            path, QStringLiteral("expected an object such as {\"texture\": \"img\"}, got %1").arg(jsonTypeName(value)));
    }
    const QJsonObject o = value.toObject();
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (!known.contains(it.key())) {
            // A misspelt "adress" would silently sample with the default: an error, never ignored.
            return specError(path + QLatin1Char('.') + it.key(),
                             QStringLiteral("unknown key; a texture or surface binding takes: %1")
                                 .arg(known.join(QStringLiteral(", "))));
        }
    }
    TextureSpec s;
    const bool texture = o.contains(QStringLiteral("texture"));
    const bool surface = o.contains(QStringLiteral("surface"));
    if (texture == surface) {
        return specError(path, QStringLiteral("give exactly one of \"texture\" and \"surface\", naming a buffer"));
    }
    s.kind = texture ? Kind::Texture : Kind::Surface;
    const QString key = texture ? QStringLiteral("texture") : QStringLiteral("surface");
    const QJsonValue name = o.value(key);
    if (!name.isString() || name.toString().isEmpty()) {
        return specError(path + QLatin1Char('.') + key,
                         QStringLiteral("expected a buffer name, got %1")
                             .arg(name.isString() ? QStringLiteral("an empty string") : jsonTypeName(name)));
    }
    s.buffer = name.toString();
    if (const QJsonValue v = o.value(QStringLiteral("layout")); !v.isUndefined()) {
        const Result<int> i = choice(v, path + QStringLiteral(".layout"),
                                     {QStringLiteral("linear"), QStringLiteral("pitched"), QStringLiteral("array")},
                                     QStringLiteral("a layout"));
        if (!i) {
            return i.error();
        }
        s.layout = Layout(*i);
    }
    const QStringList addresses{QStringLiteral("clamp"), QStringLiteral("wrap"), QStringLiteral("mirror"),
                                QStringLiteral("border")};
    if (const QJsonValue v = o.value(QStringLiteral("address")); v.isString()) {
        const Result<int> i =
            choice(v, path + QStringLiteral(".address"), addresses, QStringLiteral("an address mode"));
        if (!i) {
            return i.error();
        }
        s.address.fill(Address(*i));
    } else if (v.isArray()) {
        const QJsonArray a = v.toArray();
        if (a.isEmpty() || a.size() > 3) {
            return specError(path + QStringLiteral(".address"),
                             QStringLiteral("expected 1 to 3 address modes (x, y, z), got %1").arg(a.size()));
        }
        for (qsizetype k = 0; k < a.size(); ++k) {
            const Result<int> i = choice(a[k], path + QStringLiteral(".address[%1]").arg(k), addresses,
                                         QStringLiteral("an address mode"));
            if (!i) {
                return i.error();
            }
            s.address[size_t(k)] = Address(*i);
        }
        for (qsizetype k = a.size(); k < 3; ++k) {
            s.address[size_t(k)] = s.address[size_t(a.size() - 1)]; // the last one given holds for the rest
        }
    } else if (!v.isUndefined()) {
        return specError(path + QStringLiteral(".address"),
                         QStringLiteral("expected an address mode or an array of them, got %1").arg(jsonTypeName(v)));
    }
    if (const QJsonValue v = o.value(QStringLiteral("filter")); !v.isUndefined()) {
        const Result<int> i = choice(v, path + QStringLiteral(".filter"),
                                     {QStringLiteral("point"), QStringLiteral("linear")}, QStringLiteral("a filter"));
        if (!i) {
            return i.error();
        }
        s.filter = Filter(*i);
    }
    if (const QJsonValue v = o.value(QStringLiteral("read")); !v.isUndefined()) {
        const Result<int> i =
            choice(v, path + QStringLiteral(".read"), {QStringLiteral("element"), QStringLiteral("normalizedFloat")},
                   QStringLiteral("a read mode"));
        if (!i) {
            return i.error();
        }
        s.read = Read(*i);
    }
    if (const QJsonValue v = o.value(QStringLiteral("normalized")); !v.isUndefined()) {
        if (!v.isBool()) {
            return specError(path + QStringLiteral(".normalized"),
                             QStringLiteral("expected true or false, got %1").arg(jsonTypeName(v)));
        }
        s.normalizedCoords = v.toBool();
    }
    if (const QJsonValue v = o.value(QStringLiteral("border")); !v.isUndefined()) {
        const QJsonArray a = v.toArray();
        if (!v.isArray() || a.isEmpty() || a.size() > 4) {
            return specError(path + QStringLiteral(".border"),
                             QStringLiteral("expected 1 to 4 numbers (the colour outside a \"border\" texture)"));
        }
        for (qsizetype k = 0; k < a.size(); ++k) {
            if (!a[k].isDouble()) {
                return specError(path + QStringLiteral(".border[%1]").arg(k),
                                 QStringLiteral("expected a number, got %1").arg(jsonTypeName(a[k])));
            }
            // A float colour: 1e308 would turn into infinity (and converting it is undefined behaviour).
            const double c = a[k].toDouble();
            if (!(std::fabs(c) <= double(std::numeric_limits<float>::max()))) {
                return specError(path + QStringLiteral(".border[%1]").arg(k),
                                 QStringLiteral("%1 does not fit in a float (the border colour is 4 floats)")
                                     .arg(QString::number(c, 'g', QLocale::FloatingPointShortest)));
            }
            s.border[size_t(k)] = float(c);
        }
    }
    if (s.kind == Kind::Surface) {
        for (const char *k : {"filter", "read", "normalized", "border", "address"}) {
            if (o.contains(QLatin1String(k))) {
                return specError(path + QLatin1Char('.') + QLatin1String(k),
                                 QStringLiteral("a surface is read and written by integer coordinates "
                                                "(surf2Dread/surf2Dwrite); \"%1\" is for textures only")
                                     .arg(QLatin1String(k)));
            }
        }
    }
    return s;
}

Result<TextureFormat> textureFormatFor(DType dtype, const QString &field)
{
    const DTypeInfo &info = dtypeInfo(dtype);
    const QString name = dtypeName(dtype);
    if (info.components == 3) {
        return specError(field, QStringLiteral("%1 has 3 components; CUDA textures and surfaces have 1, 2 or 4 "
                                               "channels (use %2 with a spare component)")
                                    .arg(name, QString(name).replace(QLatin1Char('3'), QLatin1Char('4'))));
    }
    TextureFormat f;
    f.channels = unsigned(info.components);
    switch (info.component) {
    case DType::Int8: f.format = CU_AD_FORMAT_SIGNED_INT8; break;
    case DType::UInt8: f.format = CU_AD_FORMAT_UNSIGNED_INT8; break;
    case DType::Int16: f.format = CU_AD_FORMAT_SIGNED_INT16; break;
    case DType::UInt16: f.format = CU_AD_FORMAT_UNSIGNED_INT16; break;
    case DType::Int32: f.format = CU_AD_FORMAT_SIGNED_INT32; break;
    case DType::UInt32: f.format = CU_AD_FORMAT_UNSIGNED_INT32; break;
    case DType::Float16: f.format = CU_AD_FORMAT_HALF; break;
    case DType::Float32: f.format = CU_AD_FORMAT_FLOAT; break;
    default:
        return specError(field, QStringLiteral("%1 has no CUDA texture format (textures hold 8, 16 and 32-bit "
                                               "integers, float16 and float32, with 1, 2 or 4 channels)")
                                    .arg(name));
    }
    return f;
}

Result<TextureDescriptors> buildTextureDescriptors(const TextureSpec &spec, DType dtype, const QList<qint64> &shape,
                                                   const QString &field)
{
    const Result<TextureFormat> format = textureFormatFor(dtype, field);
    if (!format) {
        return format.error();
    }
    const bool surface = spec.kind == TextureSpec::Kind::Surface;
    const QString what = surface ? QStringLiteral("surface") : QStringLiteral("texture");
    if (shape.isEmpty() || shape.size() > 3) {
        return specError(field,
                         QStringLiteral("buffer '%1' needs a shape of 1 to 3 extents for a %2").arg(spec.buffer, what));
    }
    TextureDescriptors d;
    d.dims = int(shape.size());
    const qint64 width = shape.last();
    const qint64 height = d.dims >= 2 ? shape[d.dims - 2] : 1;
    const qint64 depth = d.dims == 3 ? shape[0] : 1;
    d.width = width;
    d.height = height;
    d.depth = depth;
    const qint64 elementBytes = dtypeInfo(dtype).elementBytes();
    d.rowBytes = width * elementBytes;
    d.rows = height * depth;
    const bool isInteger = dtypeInfo(dtypeInfo(dtype).component).kind == ScalarKind::SignedInt ||
                           dtypeInfo(dtypeInfo(dtype).component).kind == ScalarKind::UnsignedInt;
    const int componentBytes = dtypeInfo(dtype).componentBytes;

    if (surface && spec.layout != TextureSpec::Layout::Array) {
        return specError(field, QStringLiteral("a surface needs \"layout\": \"array\" (surfaces exist only over CUDA "
                                               "arrays)"));
    }
    if (spec.read == TextureSpec::Read::NormalizedFloat && !(isInteger && componentBytes <= 2)) {
        return specError(field, QStringLiteral("\"read\": \"normalizedFloat\" needs 8 or 16-bit integer elements; "
                                               "buffer '%1' is %2")
                                    .arg(spec.buffer, dtypeName(dtype)));
    }
    if (spec.filter == TextureSpec::Filter::Linear && isInteger && spec.read == TextureSpec::Read::Element) {
        return specError(field, QStringLiteral("\"filter\": \"linear\" interpolates floats; buffer '%1' is %2, so "
                                               "it also needs \"read\": \"normalizedFloat\" (8 or 16-bit integers) "
                                               "or a float dtype")
                                    .arg(spec.buffer, dtypeName(dtype)));
    }
    for (int axis = 0; axis < d.dims; ++axis) {
        const TextureSpec::Address a = spec.address[size_t(axis)];
        if ((a == TextureSpec::Address::Wrap || a == TextureSpec::Address::Mirror) && !spec.normalizedCoords) {
            return specError(field, QStringLiteral("address mode \"%1\" (axis %2) works only with \"normalized\": "
                                                   "true; CUDA clamps unnormalized coordinates")
                                        .arg(addressName(a))
                                        .arg(QLatin1Char("xyz"[axis])));
        }
    }

    switch (spec.layout) {
    case TextureSpec::Layout::Linear:
        if (d.dims != 1) {
            return specError(field, QStringLiteral("\"layout\": \"linear\" is 1-D (tex1Dfetch); buffer '%1' has %2 "
                                                   "dimensions: use \"pitched\" (2-D) or \"array\"")
                                        .arg(spec.buffer)
                                        .arg(d.dims));
        }
        if (spec.filter == TextureSpec::Filter::Linear || spec.normalizedCoords) {
            return specError(field, QStringLiteral("a \"linear\" layout is read with tex1Dfetch by integer index, "
                                                   "without filtering or normalized coordinates: use \"array\""));
        }
        d.resource.resType = CU_RESOURCE_TYPE_LINEAR;
        d.resource.res.linear.format = format->format;
        d.resource.res.linear.numChannels = format->channels;
        d.resource.res.linear.sizeInBytes = size_t(d.rowBytes);
        break;
    case TextureSpec::Layout::Pitched:
        if (d.dims != 2) {
            return specError(field, QStringLiteral("\"layout\": \"pitched\" is 2-D; buffer '%1' has %2 dimension%3")
                                        .arg(spec.buffer)
                                        .arg(d.dims)
                                        .arg(d.dims == 1 ? QString() : QStringLiteral("s")));
        }
        if (d.rowBytes % kTexturePitchAlignment != 0) {
            return specError(field, QStringLiteral("a pitched texture reads rows of the buffer in place, so a row "
                                                   "must be a multiple of %1 bytes; buffer '%2' has rows of %3 bytes "
                                                   "(%4 x %5): use \"layout\": \"array\"")
                                        .arg(kTexturePitchAlignment)
                                        .arg(spec.buffer)
                                        .arg(d.rowBytes)
                                        .arg(width)
                                        .arg(dtypeName(dtype)));
        }
        d.resource.resType = CU_RESOURCE_TYPE_PITCH2D;
        d.resource.res.pitch2D.format = format->format;
        d.resource.res.pitch2D.numChannels = format->channels;
        d.resource.res.pitch2D.width = size_t(width);
        d.resource.res.pitch2D.height = size_t(height);
        d.resource.res.pitch2D.pitchInBytes = size_t(d.rowBytes);
        break;
    case TextureSpec::Layout::Array:
        d.usesArray = true;
        d.resource.resType = CU_RESOURCE_TYPE_ARRAY;
        // cuArray3DCreate: Height 0 is a 1-D array, Depth 0 a 2-D one.
        d.array.Width = size_t(width);
        d.array.Height = d.dims >= 2 ? size_t(height) : 0;
        d.array.Depth = d.dims == 3 ? size_t(depth) : 0;
        d.array.Format = format->format;
        d.array.NumChannels = format->channels;
        d.array.Flags = surface ? CUDA_ARRAY3D_SURFACE_LDST : 0;
        break;
    }
    if (!surface) {
        for (int axis = 0; axis < 3; ++axis) {
            static const CUaddress_mode modes[] = {CU_TR_ADDRESS_MODE_CLAMP, CU_TR_ADDRESS_MODE_WRAP,
                                                   CU_TR_ADDRESS_MODE_MIRROR, CU_TR_ADDRESS_MODE_BORDER};
            d.texture.addressMode[axis] = modes[int(spec.address[size_t(axis)])];
        }
        d.texture.filterMode =
            spec.filter == TextureSpec::Filter::Linear ? CU_TR_FILTER_MODE_LINEAR : CU_TR_FILTER_MODE_POINT;
        d.texture.flags = 0;
        if (spec.normalizedCoords) {
            d.texture.flags |= CU_TRSF_NORMALIZED_COORDINATES;
        }
        // Integers are promoted to [0, 1] / [-1, 1] floats unless asked to stay integers.
        if (isInteger && spec.read == TextureSpec::Read::Element) {
            d.texture.flags |= CU_TRSF_READ_AS_INTEGER;
        }
        for (int k = 0; k < 4; ++k) {
            d.texture.borderColor[k] = spec.border[size_t(k)];
        }
    }
    return d;
}

QJsonObject TextureSpec::toJson() const
{
    static const char *const layouts[] = {"linear", "pitched", "array"};
    QJsonObject o;
    o.insert(kind == Kind::Texture ? QStringLiteral("texture") : QStringLiteral("surface"), buffer);
    if (layout != Layout::Array) {
        o.insert(QStringLiteral("layout"), QLatin1String(layouts[int(layout)]));
    }
    if (kind == Kind::Surface) {
        return o;
    }
    if (address[0] == address[1] && address[1] == address[2]) {
        if (address[0] != Address::Clamp) {
            o.insert(QStringLiteral("address"), addressName(address[0]));
        }
    } else {
        o.insert(QStringLiteral("address"),
                 QJsonArray{addressName(address[0]), addressName(address[1]), addressName(address[2])});
    }
    if (filter == Filter::Linear) {
        o.insert(QStringLiteral("filter"), QStringLiteral("linear"));
    }
    if (read == Read::NormalizedFloat) {
        o.insert(QStringLiteral("read"), QStringLiteral("normalizedFloat"));
    }
    if (normalizedCoords) {
        o.insert(QStringLiteral("normalized"), true);
    }
    if (border != std::array<float, 4>{0, 0, 0, 0}) {
        o.insert(QStringLiteral("border"), QJsonArray{border[0], border[1], border[2], border[3]});
    }
    return o;
}

QString TextureSpec::describe() const
{
    static const char *const layouts[] = {"linear", "pitched", "array"};
    QStringList parts{QLatin1String(layouts[int(layout)])};
    if (kind == Kind::Texture) {
        parts << (filter == Filter::Linear ? QStringLiteral("linear filter") : QStringLiteral("point sampling"));
        if (address[0] == address[1] && address[1] == address[2]) {
            parts << addressName(address[0]);
        } else {
            parts << QStringLiteral("%1/%2/%3")
                         .arg(addressName(address[0]), addressName(address[1]), addressName(address[2]));
        }
        if (normalizedCoords) {
            parts << QStringLiteral("normalized");
        }
        if (read == Read::NormalizedFloat) {
            parts << QStringLiteral("read as normalized float");
        }
    }
    return QStringLiteral("%1 over %2 (%3)")
        .arg(kind == Kind::Texture ? QStringLiteral("texture") : QStringLiteral("surface"), buffer,
             parts.join(QStringLiteral(", ")));
}

bool isTextureObjectType(const QString &type)
{
    return type == QLatin1String("cudaTextureObject_t") || type == QLatin1String("CUtexObject");
}

bool isSurfaceObjectType(const QString &type)
{
    return type == QLatin1String("cudaSurfaceObject_t") || type == QLatin1String("CUsurfObject");
}

Status checkTextureLimits(const TextureDescriptors &d, const TextureSpec &spec, const TextureLimits &limits,
                          quint64 address, const QString &field)
{
    const bool surface = spec.kind == TextureSpec::Kind::Surface;
    const std::array<qint64, 3> extent{d.width, d.height, d.depth};
    const auto check = [&](int axes, const qint64 *limit, const QString &kind) -> Status {
        for (int a = 0; a < axes; ++a) {
            if (extent[size_t(a)] > limit[a]) {
                return specError(field, QStringLiteral("buffer '%1' is %2 elements along %3; this device allows at "
                                                       "most %4 for a %5")
                                            .arg(spec.buffer)
                                            .arg(extent[size_t(a)])
                                            .arg(QLatin1Char("xyz"[a]))
                                            .arg(limit[a])
                                            .arg(kind));
            }
        }
        return Unit{};
    };
    // An object over the buffer itself (linear, pitched) needs its start aligned; an array is a copy.
    const auto checkAddress = [&]() -> Status {
        if (address != 0 && limits.textureAlignment > 0 && address % quint64(limits.textureAlignment) != 0) {
            return specError(field, QStringLiteral("buffer '%1' starts at device address 0x%2, which is not a "
                                                   "multiple of %3 bytes (the device's texture alignment): use "
                                                   "\"layout\": \"array\"")
                                        .arg(spec.buffer)
                                        .arg(address, 0, 16)
                                        .arg(limits.textureAlignment));
        }
        return Unit{};
    };
    switch (spec.layout) {
    case TextureSpec::Layout::Linear:
        if (Status s = check(1, &limits.linear1d, QStringLiteral("linear texture")); !s) {
            return s;
        }
        return checkAddress();
    case TextureSpec::Layout::Pitched:
        if (Status s = check(2, limits.pitch2d.data(), QStringLiteral("pitched texture")); !s) {
            return s;
        }
        if (d.rowBytes > limits.pitch2d[2]) {
            return specError(field, QStringLiteral("buffer '%1' has rows of %2 bytes; this device allows a pitch of "
                                                   "at most %3 bytes: use \"layout\": \"array\"")
                                        .arg(spec.buffer)
                                        .arg(d.rowBytes)
                                        .arg(limits.pitch2d[2]));
        }
        if (limits.pitchAlignment > 0 && d.rowBytes % limits.pitchAlignment != 0) {
            return specError(field, QStringLiteral("buffer '%1' has rows of %2 bytes; this device needs the pitch of "
                                                   "a pitched texture to be a multiple of %3: use \"layout\": "
                                                   "\"array\"")
                                        .arg(spec.buffer)
                                        .arg(d.rowBytes)
                                        .arg(limits.pitchAlignment));
        }
        return checkAddress();
    case TextureSpec::Layout::Array:
        if (surface) {
            const qint64 *limit = d.dims == 1   ? &limits.surface1d
                                  : d.dims == 2 ? limits.surface2d.data()
                                                : limits.surface3d.data();
            return check(d.dims, limit, QStringLiteral("%1-D surface").arg(d.dims));
        } else {
            const qint64 *limit = d.dims == 1   ? &limits.array1d
                                  : d.dims == 2 ? limits.array2d.data()
                                                : limits.array3d.data();
            return check(d.dims, limit, QStringLiteral("%1-D texture").arg(d.dims));
        }
    }
    return Unit{};
}

} // namespace Kp
