// Texture and surface descriptors built without a GPU: a binding's JSON,
// the buffer's dtype and shape -> the CUDA_RESOURCE_DESC, CUDA_TEXTURE_DESC
// and CUDA_ARRAY3D_DESCRIPTOR fields the driver will get, or one message
// naming the field and what is allowed.

#include "run/texturedesc.h"

#include <QJsonDocument>
#include <QtTest>

using namespace Kp;

namespace {

QString formatName(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: return "u8";
    case CU_AD_FORMAT_UNSIGNED_INT16: return "u16";
    case CU_AD_FORMAT_UNSIGNED_INT32: return "u32";
    case CU_AD_FORMAT_SIGNED_INT8: return "s8";
    case CU_AD_FORMAT_SIGNED_INT16: return "s16";
    case CU_AD_FORMAT_SIGNED_INT32: return "s32";
    case CU_AD_FORMAT_HALF: return "half";
    case CU_AD_FORMAT_FLOAT: return "float";
    default: return QString::number(int(f));
    }
}

// One line with every field that matters, so a row states all of it.
QString summary(const TextureDescriptors &d, bool surface)
{
    QString s;
    switch (d.resource.resType) {
    case CU_RESOURCE_TYPE_LINEAR:
        s = QStringLiteral("linear %1x%2 %3B")
                .arg(formatName(d.resource.res.linear.format))
                .arg(d.resource.res.linear.numChannels)
                .arg(d.resource.res.linear.sizeInBytes);
        break;
    case CU_RESOURCE_TYPE_PITCH2D:
        s = QStringLiteral("pitch2D %1x%2 %3x%4 pitch %5")
                .arg(formatName(d.resource.res.pitch2D.format))
                .arg(d.resource.res.pitch2D.numChannels)
                .arg(d.resource.res.pitch2D.width)
                .arg(d.resource.res.pitch2D.height)
                .arg(d.resource.res.pitch2D.pitchInBytes);
        break;
    case CU_RESOURCE_TYPE_ARRAY:
        s = QStringLiteral("array %1x%2 %3x%4x%5%6")
                .arg(formatName(d.array.Format))
                .arg(d.array.NumChannels)
                .arg(d.array.Width)
                .arg(d.array.Height)
                .arg(d.array.Depth)
                .arg(d.array.Flags & CUDA_ARRAY3D_SURFACE_LDST ? " ldst" : "");
        break;
    default: s = "?"; break;
    }
    if (surface) {
        return s;
    }
    static const char *const modes[] = {"wrap", "clamp", "mirror", "border"};
    s += QStringLiteral("; %1,%2,%3 %4")
             .arg(modes[d.texture.addressMode[0]], modes[d.texture.addressMode[1]], modes[d.texture.addressMode[2]],
                  d.texture.filterMode == CU_TR_FILTER_MODE_LINEAR ? "linear" : "point");
    if (d.texture.flags & CU_TRSF_NORMALIZED_COORDINATES) {
        s += " normalized";
    }
    if (d.texture.flags & CU_TRSF_READ_AS_INTEGER) {
        s += " integer";
    }
    if (d.texture.addressMode[0] == CU_TR_ADDRESS_MODE_BORDER) {
        s += QStringLiteral(" border %1,%2,%3,%4")
                 .arg(d.texture.borderColor[0])
                 .arg(d.texture.borderColor[1])
                 .arg(d.texture.borderColor[2])
                 .arg(d.texture.borderColor[3]);
    }
    return s;
}

} // namespace

class TestTextureDesc : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void descriptors_data()
    {
        QTest::addColumn<QByteArray>("binding");
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<QList<qint64>>("shape");
        QTest::addColumn<QString>("expected"); // summary(), or the error message
        const QList<qint64> img{512, 512};
        auto row = [](const char *tag, const char *binding, const char *dtype, QList<qint64> shape,
                      const QString &expected) {
            QTest::newRow(tag) << QByteArray(binding) << QString(dtype) << shape << expected;
        };
        // What works: simpleTexture's rotation, the other layouts, formats, modes.
        row("simpleTexture: 2-D float array, linear, wrap, normalized",
            R"({"texture": "img", "filter": "linear", "address": "wrap", "normalized": true})", "float32", img,
            "array floatx1 512x512x0; wrap,wrap,wrap linear normalized");
        row("1-D array of float4", R"({"texture": "v"})", "float4", {1000},
            "array floatx4 1000x0x0; clamp,clamp,clamp point");
        row("3-D array, mirror on x only", R"({"texture": "vol", "address": ["mirror", "clamp"], "normalized": true})",
            "float16", {8, 16, 32}, "array halfx1 32x16x8; mirror,clamp,clamp point normalized");
        row("uchar4 image read as floats, filtered",
            R"({"texture": "rgba", "read": "normalizedFloat", "filter": "linear"})", "uchar4", img,
            "array u8x4 512x512x0; clamp,clamp,clamp linear");
        row("int32 read as integers", R"({"texture": "ids"})", "int32", img,
            "array s32x1 512x512x0; clamp,clamp,clamp point integer");
        row("short2 linear: 16-bit, 2 channels", R"({"texture": "s", "layout": "linear"})", "short2", {64},
            "linear s16x2 256B; clamp,clamp,clamp point integer");
        row("linear layout for tex1Dfetch", R"({"texture": "a", "layout": "linear"})", "float32", {1000},
            "linear floatx1 4000B; clamp,clamp,clamp point");
        row("pitched 2-D in place", R"({"texture": "img", "layout": "pitched", "filter": "linear"})", "float32",
            QList<qint64>{100, 64}, "pitch2D floatx1 64x100 pitch 256; clamp,clamp,clamp linear");
        row("border colour", R"({"texture": "img", "address": "border", "border": [1, 0.5]})", "float32", img,
            "array floatx1 512x512x0; border,border,border point border 1,0.5,0,0");
        row("surface over a 2-D array", R"({"surface": "out"})", "float32", img, "array floatx1 512x512x0 ldst");
        row("surface over a 3-D array of uchar4", R"({"surface": "vol"})", "uchar4", QList<qint64>{4, 8, 16},
            "array u8x4 16x8x4 ldst");
        // What is refused, each with its field and what to do.
        row("double has no texture format", R"({"texture": "d"})", "float64", {16},
            "f: float64 has no CUDA texture format (textures hold 8, 16 and 32-bit integers, float16 and float32, "
            "with 1, 2 or 4 channels)");
        row("float3 has 3 channels", R"({"texture": "p"})", "float3", {16},
            "f: float3 has 3 components; CUDA textures and surfaces have 1, 2 or 4 channels (use float4 with a spare "
            "component)");
        row("wrap without normalized coordinates", R"({"texture": "img", "address": "wrap"})", "float32", img,
            "f: address mode \"wrap\" (axis x) works only with \"normalized\": true; CUDA clamps unnormalized "
            "coordinates");
        row("linear filter on integers", R"({"texture": "img", "filter": "linear"})", "uint8", img,
            "f: \"filter\": \"linear\" interpolates floats; buffer 'img' is uint8, so it also needs \"read\": "
            "\"normalizedFloat\" (8 or 16-bit integers) or a float dtype");
        row("normalizedFloat on float", R"({"texture": "img", "read": "normalizedFloat"})", "float32", img,
            "f: \"read\": \"normalizedFloat\" needs 8 or 16-bit integer elements; buffer 'img' is float32");
        row("pitched rows not aligned", R"({"texture": "img", "layout": "pitched"})", "float32", QList<qint64>{10, 75},
            "f: a pitched texture reads rows of the buffer in place, so a row must be a multiple of 32 bytes; buffer "
            "'img' has rows of 300 bytes (75 x float32): use \"layout\": \"array\"");
        row("pitched is 2-D", R"({"texture": "a", "layout": "pitched"})", "float32", {64},
            "f: \"layout\": \"pitched\" is 2-D; buffer 'a' has 1 dimension");
        row("linear is 1-D", R"({"texture": "img", "layout": "linear"})", "float32", img,
            "f: \"layout\": \"linear\" is 1-D (tex1Dfetch); buffer 'img' has 2 dimensions: use \"pitched\" (2-D) or "
            "\"array\"");
        row("linear layout cannot filter", R"({"texture": "a", "layout": "linear", "filter": "linear"})", "float32",
            {64},
            "f: a \"linear\" layout is read with tex1Dfetch by integer index, without filtering or normalized "
            "coordinates: use \"array\"");
        row("surface needs an array", R"({"surface": "out", "layout": "pitched"})", "float32", img,
            "f: a surface needs \"layout\": \"array\" (surfaces exist only over CUDA arrays)");
    }
    void descriptors()
    {
        QFETCH(QByteArray, binding);
        QFETCH(QString, dtype);
        QFETCH(QList<qint64>, shape);
        QFETCH(QString, expected);
        const Result<TextureSpec> spec = TextureSpec::fromJson(QJsonDocument::fromJson(binding).object(), "f");
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().message));
        const Result<TextureDescriptors> d = buildTextureDescriptors(*spec, *dtypeFromName(dtype), shape, "f");
        if (expected.startsWith("f: ")) {
            QVERIFY(!d);
            QCOMPARE(d.error().message, expected);
            QCOMPARE(d.error().path, QString("f"));
            return;
        }
        QVERIFY2(d, qPrintable(d ? QString() : d.error().message));
        QCOMPARE(summary(*d, spec->kind == TextureSpec::Kind::Surface), expected);
        // The worker fills the device pointer or array handle; nothing else is left to it.
        QCOMPARE(d->resource.res.linear.devPtr, CUdeviceptr(0));
    }

    void bindingErrors_data()
    {
        QTest::addColumn<QByteArray>("binding");
        QTest::addColumn<QString>("message");
        const QString p = "launches[0].args[1]";
        QTest::newRow("not an object") << QByteArray("[1]")
                                       << p + ": expected an object such as {\"texture\": "
                                              "\"img\"}, got an array";
        QTest::newRow("neither texture nor surface")
            << QByteArray(R"({"filter": "linear"})")
            << p + ": give exactly one of \"texture\" and \"surface\", naming a buffer";
        QTest::newRow("both") << QByteArray(R"({"texture": "a", "surface": "a"})")
                              << p + ": give exactly one of \"texture\" and \"surface\", naming a buffer";
        QTest::newRow("buffer not a string")
            << QByteArray(R"({"texture": 3})") << p + ".texture: expected a buffer name, got a number";
        QTest::newRow("misspelt key") << QByteArray(R"({"texture": "a", "adress": "wrap"})")
                                      << p + ".adress: unknown key; a texture or surface binding takes: texture, "
                                             "surface, layout, address, filter, normalized, read, border";
        QTest::newRow("unknown address mode")
            << QByteArray(R"({"texture": "a", "address": ["clamp", "repeat"]})")
            << p + ".address[1]: 'repeat' is not an address mode; allowed: clamp, wrap, mirror, border";
        QTest::newRow("four address modes")
            << QByteArray(R"({"texture": "a", "address": ["clamp", "clamp", "clamp", "clamp"]})")
            << p + ".address: expected 1 to 3 address modes (x, y, z), got 4";
        QTest::newRow("unknown filter") << QByteArray(R"({"texture": "a", "filter": "cubic"})")
                                        << p + ".filter: 'cubic' is not a filter; allowed: point, linear";
        QTest::newRow("unknown layout") << QByteArray(R"({"texture": "a", "layout": "tiled"})")
                                        << p + ".layout: 'tiled' is not a layout; allowed: linear, pitched, array";
        QTest::newRow("read mode number") << QByteArray(R"({"texture": "a", "read": 1})")
                                          << p + ".read: expected a read mode (element, normalizedFloat), got a number";
        QTest::newRow("normalized string") << QByteArray(R"({"texture": "a", "normalized": "yes"})")
                                           << p + ".normalized: expected true or false, got a string";
        QTest::newRow("border five numbers") << QByteArray(R"({"texture": "a", "border": [1, 2, 3, 4, 5]})")
                                             << p + ".border: expected 1 to 4 numbers (the colour outside a "
                                                    "\"border\" texture)";
        QTest::newRow("surface with a filter")
            << QByteArray(R"({"surface": "a", "filter": "linear"})")
            << p + ".filter: a surface is read and written by integer coordinates (surf2Dread/surf2Dwrite); "
                   "\"filter\" is for textures only";
    }
    void bindingErrors()
    {
        QFETCH(QByteArray, binding);
        QFETCH(QString, message);
        const QJsonDocument doc = QJsonDocument::fromJson(binding);
        const QJsonValue v = doc.isArray() ? QJsonValue(doc.array()) : QJsonValue(doc.object());
        const Result<TextureSpec> spec = TextureSpec::fromJson(v, "launches[0].args[1]");
        QVERIFY(!spec);
        QCOMPARE(spec.error().message, message);
        QVERIFY(message.startsWith(spec.error().path + ": "));
    }
};

QTEST_GUILESS_MAIN(TestTextureDesc)
#include "tst_texturedesc.moc"
