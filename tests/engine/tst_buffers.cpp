// The host side of buffers: dtype conversions, every init kind for every
// dtype, expressions, images, exports and checkSpec's messages.

#include "buffers/bufferexport.h"
#include "buffers/bufferinit.h"
#include "buffers/bufferspec.h"
#include "buffers/npy.h"
#include "core/expression.h"

#include <QFile>
#include <QImage>
#include <QImageWriter>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>

using namespace Kp;

Q_DECLARE_METATYPE(Kp::DType)
Q_DECLARE_METATYPE(Kp::BufferInit::Kind)

namespace {

std::uint32_t floatBits(float f)
{
    std::uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

float bitsFloat(std::uint32_t b)
{
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}

// The documented generator, written out again from its formula so that the
// implementation is checked against the text, not against itself.
double refUnit(quint64 seed, quint64 k)
{
    quint64 z = (seed ^ (k * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull)) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return std::ldexp(static_cast<double>(z >> 11), -53);
}

BufferSpec spec(DType dtype, const QList<qint64> &shape, BufferInit::Kind kind = BufferInit::Kind::Zeros)
{
    BufferSpec s;
    s.name = QStringLiteral("a");
    s.dtype = dtype;
    s.shape = shape;
    s.init.kind = kind;
    return s;
}

QByteArray fill(const BufferSpec &s, const QString &dir = QString(), const QMap<QString, double> &scalars = {})
{
    QByteArray out(s.byteSize(), '\x5a');
    const Status st = fillBuffer(s, out.data(), out.size(), dir, scalars);
    if (!st) {
        qWarning("%s", qPrintable(st.error().toString()));
        return {};
    }
    return out;
}

QString fillError(const BufferSpec &s, const QString &dir = QString(), const QMap<QString, double> &scalars = {})
{
    QByteArray out(std::max<qint64>(s.byteSize(), 1), 0);
    const Status st = fillBuffer(s, out.data(), s.byteSize(), dir, scalars);
    return st ? QStringLiteral("(no error)") : st.error().message;
}

QByteArray stored(DType component, double v)
{
    QByteArray b(dtypeInfo(component).componentBytes, 0);
    storeComponent(component, v, b.data());
    return b;
}

QByteArray componentAt(const QByteArray &buf, DType dtype, qint64 k)
{
    const int cb = dtypeInfo(dtype).componentBytes;
    return buf.mid(k * cb, cb);
}

bool isFloatType(DType d)
{
    const ScalarKind k = dtypeInfo(d).kind;
    return k == ScalarKind::Float || k == ScalarKind::Half || k == ScalarKind::BFloat;
}

// A small test image: pixel (x, y) = (40x, 60y, 10x + 20y, 255 - 30x), not premultiplied.
QImage testImage(int w = 5, int h = 3)
{
    QImage img(w, h, QImage::Format_RGBA8888);
    for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
            img.setPixelColor(x, y, QColor(40 * x, 60 * y, 10 * x + 20 * y, 255 - 30 * x));
        }
    }
    return img;
}

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestBuffers : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // --- dtypes --------------------------------------------------------------

    void halfConversion_data()
    {
        QTest::addColumn<float>("value");
        QTest::addColumn<int>("bits");
        QTest::newRow("1") << 1.0f << 0x3c00;
        QTest::newRow("-2") << -2.0f << 0xc000;
        QTest::newRow("0") << 0.0f << 0x0000;
        QTest::newRow("-0") << -0.0f << 0x8000;
        QTest::newRow("max 65504") << 65504.0f << 0x7bff;
        QTest::newRow("65519 rounds to max") << 65519.0f << 0x7bff;
        QTest::newRow("65520 rounds to inf") << 65520.0f << 0x7c00;
        QTest::newRow("-65520 rounds to -inf") << -65520.0f << 0xfc00;
        QTest::newRow("1e6 overflows") << 1e6f << 0x7c00;
        QTest::newRow("inf") << std::numeric_limits<float>::infinity() << 0x7c00;
        QTest::newRow("-inf") << -std::numeric_limits<float>::infinity() << 0xfc00;
        QTest::newRow("smallest normal 2^-14") << std::ldexp(1.0f, -14) << 0x0400;
        QTest::newRow("largest subnormal") << std::ldexp(1023.0f, -24) << 0x03ff;
        QTest::newRow("smallest subnormal 2^-24") << std::ldexp(1.0f, -24) << 0x0001;
        QTest::newRow("2^-25 ties to even 0") << std::ldexp(1.0f, -25) << 0x0000;
        QTest::newRow("3*2^-25 ties to even 2") << std::ldexp(3.0f, -25) << 0x0002;
        QTest::newRow("just above 2^-25") << std::nextafter(std::ldexp(1.0f, -25), 1.0f) << 0x0001;
        QTest::newRow("2^-26 underflows") << std::ldexp(1.0f, -26) << 0x0000;
        QTest::newRow("1+2^-11 ties to even") << 1.0f + std::ldexp(1.0f, -11) << 0x3c00;
        QTest::newRow("1+3*2^-11 ties to even") << 1.0f + std::ldexp(3.0f, -11) << 0x3c02;
        QTest::newRow("just above the tie") << std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f) << 0x3c01;
        QTest::newRow("2047.5 rounds up the exponent") << 2047.5f << 0x6800; // 2048
        QTest::newRow("0.1") << 0.1f << 0x2e66;
    }
    void halfConversion()
    {
        QFETCH(float, value);
        QFETCH(int, bits);
        QCOMPARE(int(floatToHalf(value)), bits);
    }

    void halfAllPatternsRoundTrip()
    {
        for (int b = 0; b < 65536; ++b) {
            const auto h = static_cast<std::uint16_t>(b);
            const float f = halfToFloat(h);
            const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
            if (nan) {
                QVERIFY(std::isnan(f));
                const std::uint16_t back = floatToHalf(f);
                QVERIFY((back & 0x7c00) == 0x7c00 && (back & 0x3ff) != 0);
                QCOMPARE(back & 0x8000, h & 0x8000);
            } else {
                QCOMPARE(int(floatToHalf(f)), b);
            }
        }
        QCOMPARE(halfToFloat(0x7bff), 65504.0f);
        QCOMPARE(halfToFloat(0x0001), std::ldexp(1.0f, -24));
        QVERIFY(std::isinf(halfToFloat(0x7c00)));
    }

    void halfNaN()
    {
        const std::uint16_t h = floatToHalf(std::numeric_limits<float>::quiet_NaN());
        QCOMPARE(h & 0x7c00, 0x7c00);
        QVERIFY((h & 0x3ff) != 0);
        QVERIFY(std::isnan(halfToFloat(h)));
    }

    void bfloat16Conversion_data()
    {
        QTest::addColumn<quint32>("floatBits");
        QTest::addColumn<int>("bits");
        QTest::newRow("1") << floatBits(1.0f) << 0x3f80;
        QTest::newRow("-1.5") << floatBits(-1.5f) << 0xbfc0;
        QTest::newRow("tie to even (down)") << 0x3f808000u << 0x3f80;
        QTest::newRow("tie to even (up)") << 0x3f818000u << 0x3f82;
        QTest::newRow("above the tie") << 0x3f808001u << 0x3f81;
        QTest::newRow("float max rounds to inf") << 0x7f7fffffu << 0x7f80;
        QTest::newRow("inf") << 0x7f800000u << 0x7f80;
        QTest::newRow("subnormal") << 0x00010000u << 0x0001;
        QTest::newRow("-0") << 0x80000000u << 0x8000;
    }
    void bfloat16Conversion()
    {
        QFETCH(quint32, floatBits);
        QFETCH(int, bits);
        QCOMPARE(int(floatToBFloat16(bitsFloat(floatBits))), bits);
    }

    void bfloat16AllPatternsRoundTrip()
    {
        for (int b = 0; b < 65536; ++b) {
            const auto v = static_cast<std::uint16_t>(b);
            const float f = bfloat16ToFloat(v);
            if (std::isnan(f)) {
                QVERIFY(std::isnan(bfloat16ToFloat(floatToBFloat16(f))));
            } else {
                QCOMPARE(int(floatToBFloat16(f)), b);
            }
        }
        QVERIFY(std::isnan(bfloat16ToFloat(floatToBFloat16(std::numeric_limits<float>::quiet_NaN()))));
        // A signalling NaN whose payload lives in the low bits must not become inf.
        QVERIFY(std::isnan(bfloat16ToFloat(floatToBFloat16(bitsFloat(0x7f800001u)))));
    }

    void storeComponentSaturates_data()
    {
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<double>("value");
        QTest::addColumn<double>("expected");
        const double nan = std::numeric_limits<double>::quiet_NaN();
        QTest::newRow("int8 300") << DType::Int8 << 300.0 << 127.0;
        QTest::newRow("int8 -300") << DType::Int8 << -300.0 << -128.0;
        QTest::newRow("int8 nan") << DType::Int8 << nan << 0.0;
        QTest::newRow("int8 2.5 to even") << DType::Int8 << 2.5 << 2.0;
        QTest::newRow("int8 -3.5 to even") << DType::Int8 << -3.5 << -4.0;
        QTest::newRow("uint8 -1") << DType::UInt8 << -1.0 << 0.0;
        QTest::newRow("uint8 255.4") << DType::UInt8 << 255.4 << 255.0;
        QTest::newRow("uint8 1e9") << DType::UInt8 << 1e9 << 255.0;
        QTest::newRow("int16 -1e9") << DType::Int16 << -1e9 << -32768.0;
        QTest::newRow("uint16 inf") << DType::UInt16 << std::numeric_limits<double>::infinity() << 65535.0;
        QTest::newRow("int32 3e9") << DType::Int32 << 3e9 << 2147483647.0;
        QTest::newRow("uint32 -inf") << DType::UInt32 << -std::numeric_limits<double>::infinity() << 0.0;
        QTest::newRow("int64 1e19") << DType::Int64 << 1e19 << 9223372036854775807.0;
        QTest::newRow("uint64 1e30") << DType::UInt64 << 1e30 << 18446744073709551615.0;
        QTest::newRow("float16 70000") << DType::Float16 << 70000.0 << std::numeric_limits<double>::infinity();
        QTest::newRow("float32 1e40") << DType::Float32 << 1e40 << std::numeric_limits<double>::infinity();
        QTest::newRow("float32 0.1") << DType::Float32 << 0.1 << double(0.1f);
        QTest::newRow("float4 component") << DType::Float4 << 0.1 << double(0.1f);
        QTest::newRow("uchar4 component") << DType::UChar4 << 300.0 << 255.0;
    }
    void storeComponentSaturates()
    {
        QFETCH(DType, dtype);
        QFETCH(double, value);
        QFETCH(double, expected);
        char buf[8] = {};
        storeComponent(dtypeInfo(dtype).component, value, buf);
        QCOMPARE(loadComponent(dtypeInfo(dtype).component, buf), expected);
    }

    void int64Exact()
    {
        // Values near 2^63 must not wrap.
        char buf[8];
        storeComponent(DType::Int64, -9223372036854775808.0, buf);
        qint64 v;
        std::memcpy(&v, buf, 8);
        QCOMPARE(v, std::numeric_limits<qint64>::min());
        storeComponent(DType::Int64, 9007199254740993.0, buf); // 2^53 + 1 is not a double; 2^53 is stored
        std::memcpy(&v, buf, 8);
        QCOMPARE(v, qint64(9007199254740992));
    }

    // --- BufferSpec ------------------------------------------------------------

    void specBasics()
    {
        BufferSpec s = spec(DType::Float4, {3, 5});
        QCOMPARE(s.elementCount(), 15);
        QCOMPARE(s.byteSize(), 15 * 16);
        s.shape.clear();
        QCOMPARE(s.elementCount(), 0);
        s.shape = {4, 0};
        QCOMPARE(s.elementCount(), 0);
        s.shape = {std::numeric_limits<qint64>::max(), 2};
        QCOMPARE(s.elementCount(), 0); // overflow: checkSpec says why
        QCOMPARE(BufferInit::kindName(BufferInit::Kind::Zeros), QStringLiteral("zeros"));
        QCOMPARE(BufferInit::kindName(BufferInit::Kind::Constant), QStringLiteral("constant"));
        QCOMPARE(BufferInit::kindName(BufferInit::Kind::Ramp), QStringLiteral("ramp"));
        QCOMPARE(BufferInit::kindName(BufferInit::Kind::Random), QStringLiteral("random"));
        QCOMPARE(BufferInit::kindName(BufferInit::Kind::Expression), QStringLiteral("expression"));
        QCOMPARE(BufferInit::kindName(BufferInit::Kind::Npy), QStringLiteral("npy"));
        QCOMPARE(BufferInit::kindName(BufferInit::Kind::Image), QStringLiteral("image"));
    }

    // --- every dtype x every init kind ----------------------------------------

    void everyDtypeEveryKind_data()
    {
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<BufferInit::Kind>("kind");
        QTest::addColumn<int>("distribution");
        using K = BufferInit::Kind;
        for (int t = 0; t < kDTypeCount; ++t) {
            const auto d = static_cast<DType>(t);
            const auto row = [&](const char *what, K kind, int dist = 0) {
                QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(dtypeName(d), QLatin1String(what))))
                    << d << kind << dist;
            };
            row("zeros", K::Zeros);
            row("constant", K::Constant);
            row("ramp", K::Ramp);
            row("uniform", K::Random, 0);
            row("normal", K::Random, 1);
            row("expression", K::Expression);
            row("npy", K::Npy);
        }
    }
    void everyDtypeEveryKind()
    {
        QFETCH(DType, dtype);
        QFETCH(BufferInit::Kind, kind);
        QFETCH(int, distribution);
        const DTypeInfo &info = dtypeInfo(dtype);
        const QList<qint64> shape{3, 5};
        BufferSpec s = spec(dtype, shape, kind);
        const qint64 total = 15 * info.components;
        QTemporaryDir tmp;
        QByteArray expected(s.byteSize(), 0);

        switch (kind) {
        case BufferInit::Kind::Zeros:
        case BufferInit::Kind::Uninitialized: break;
        case BufferInit::Kind::Constant:
            s.init.value = 3.7;
            for (qint64 k = 0; k < total; ++k) {
                storeComponent(info.component, 3.7, expected.data() + k * info.componentBytes);
            }
            break;
        case BufferInit::Kind::Ramp:
            s.init.start = -2;
            s.init.step = 0.75;
            for (qint64 k = 0; k < total; ++k) {
                storeComponent(info.component, -2 + 0.75 * k, expected.data() + k * info.componentBytes);
            }
            break;
        case BufferInit::Kind::Random:
            s.init.seed = 9;
            if (distribution == 0) {
                s.init.min = -3;
                s.init.max = 5;
                for (qint64 k = 0; k < total; ++k) {
                    const double v = -3 + 8 * refUnit(9, k);
                    storeComponent(info.component, isFloatType(dtype) ? v : std::floor(v),
                                   expected.data() + k * info.componentBytes);
                }
            } else {
                s.init.distribution = BufferInit::Distribution::Normal;
                s.init.mean = 10;
                s.init.stddev = 2;
                for (qint64 k = 0; k < total; ++k) {
                    const double u1 = std::max(refUnit(9, 2 * k), std::ldexp(1.0, -53));
                    const double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * refUnit(9, 2 * k + 1));
                    storeComponent(info.component, 10 + 2 * z, expected.data() + k * info.componentBytes);
                }
            }
            break;
        case BufferInit::Kind::Expression:
            s.init.expression = QStringLiteral("i*2 + c - x*0.5 + y + s");
            for (qint64 e = 0; e < 15; ++e) {
                for (int c = 0; c < info.components; ++c) {
                    const double v = e * 2.0 + c - (e % 5) * 0.5 + (e / 5) + 1.25;
                    storeComponent(info.component, v,
                                   expected.data() + (e * info.components + c) * info.componentBytes);
                }
            }
            break;
        case BufferInit::Kind::Npy: {
            // The reference contents go through a file: ramp -> writeNpy -> npy init.
            BufferSpec ramp = spec(dtype, shape, BufferInit::Kind::Ramp);
            ramp.init.start = 1;
            ramp.init.step = 3;
            expected = fill(ramp);
            KP_VERIFY_RESULT(writeNpy(tmp.filePath(QStringLiteral("in.npy")), dtype, shape, expected.constData()));
            s.init.file = QStringLiteral("in.npy");
            break;
        }
        case BufferInit::Kind::Image: QFAIL("images are tested separately"); break;
        }

        KP_VERIFY_RESULT(checkSpec(s, QStringLiteral("buffers[0]")));
        const QByteArray got = fill(s, tmp.path(), {{QStringLiteral("s"), 1.25}});
        QCOMPARE(got.size(), expected.size());
        if (kind == BufferInit::Kind::Random && distribution == 0) {
            for (qint64 k = 0; k < total; ++k) {
                const double v = loadComponent(info.component, got.constData() + k * info.componentBytes);
                QVERIFY2(v < 5 && (v >= -3 || info.kind == ScalarKind::UnsignedInt), qPrintable(QString::number(v)));
                if (!isFloatType(dtype)) {
                    QCOMPARE(v, std::floor(v));
                }
            }
        }
        if (kind == BufferInit::Kind::Random && distribution == 1 && isFloatType(dtype)) {
            // libm's log and cos may differ in the last bit between C libraries: compare values.
            for (qint64 k = 0; k < total; ++k) {
                const double g = loadComponent(info.component, got.constData() + k * info.componentBytes);
                const double e = loadComponent(info.component, expected.constData() + k * info.componentBytes);
                QVERIFY2(std::abs(g - e) <= 1e-2 * std::abs(e), qPrintable(QStringLiteral("%1 vs %2").arg(g).arg(e)));
            }
            return;
        }
        QCOMPARE(got, expected);
    }

    // --- random ------------------------------------------------------------

    void randomPinned_data()
    {
        QTest::addColumn<quint64>("seed");
        QTest::addColumn<QList<quint32>>("float32Bits"); // uniform [0, 1)
        QTest::addColumn<QList<int>>("int32Values");     // uniform [-100, 100)
        QTest::addColumn<QList<double>>("normal");       // float32, mean 0, stddev 1
        // Computed from the documented formula with Python integers (and glibc's log/cos).
        QTest::newRow("seed 1") << quint64(1) << QList<quint32>{0x3edc9d1e, 0x3ec09f85, 0x3ee4295a,
                                                                0x3f2e39bc, 0x3f774ebe, 0x3e09fd0f}
                                << QList<int>{-14, -25, -11, 36, 93, -74}
                                << QList<double>{-0.924546838, -0.537237167, 0.174128607,
                                                 0.253702193,  -0.215482011, -2.31581855};
        QTest::newRow("seed 42") << quint64(42) << QList<quint32>{0x3f29c16c, 0x3bfdb723, 0x3e89c2a0,
                                                                  0x3f5f5c26, 0x3f3ac262, 0x3ea68728}
                                 << QList<int>{32, -99, -47, 74, 45, -35}
                                 << QList<double>{0.905368865, 1.12763929,  -0.361658514,
                                                  -1.68562293, -1.47751844, 0.765737951};
    }
    void randomPinned()
    {
        QFETCH(quint64, seed);
        QFETCH(QList<quint32>, float32Bits);
        QFETCH(QList<int>, int32Values);
        QFETCH(QList<double>, normal);
        QCOMPARE(randomUnit(1, 0), 0.430886223300865);

        BufferSpec f = spec(DType::Float32, {6}, BufferInit::Kind::Random);
        f.init.seed = seed;
        const QByteArray fb = fill(f);
        for (int k = 0; k < 6; ++k) {
            quint32 b;
            std::memcpy(&b, fb.constData() + 4 * k, 4);
            QCOMPARE(b, float32Bits[k]);
        }
        BufferSpec i = spec(DType::Int32, {6}, BufferInit::Kind::Random);
        i.init.seed = seed;
        i.init.min = -100;
        i.init.max = 100;
        const QByteArray ib = fill(i);
        for (int k = 0; k < 6; ++k) {
            qint32 v;
            std::memcpy(&v, ib.constData() + 4 * k, 4);
            QCOMPARE(v, int32Values[k]);
        }
        BufferSpec n = spec(DType::Float32, {6}, BufferInit::Kind::Random);
        n.init.seed = seed;
        n.init.distribution = BufferInit::Distribution::Normal;
        const QByteArray nb = fill(n);
        for (int k = 0; k < 6; ++k) {
            float v;
            std::memcpy(&v, nb.constData() + 4 * k, 4);
            QVERIFY2(std::abs(v - normal[k]) < 1e-6, qPrintable(QString::number(v, 'g', 9)));
        }
    }

    void randomIndependentOfSizeAndThreads()
    {
        // A buffer big enough to be filled by several threads starts like a small one.
        BufferSpec big = spec(DType::Float32, {1024, 2048}, BufferInit::Kind::Random);
        big.init.seed = 77;
        BufferSpec small = big;
        small.shape = {100};
        const QByteArray b = fill(big);
        const QByteArray s = fill(small);
        QCOMPARE(b.left(400), s);
        // And element k anywhere is u(k): check a few far from the start.
        for (const qint64 k : {qint64(1048575), qint64(1048576), qint64(2097151)}) {
            QCOMPARE(componentAt(b, DType::Float32, k), stored(DType::Float32, refUnit(77, k)));
        }
        BufferSpec other = small;
        other.init.seed = 78;
        QVERIFY(fill(other) != s);
    }

    void randomStatistics()
    {
        BufferSpec u = spec(DType::Float64, {200000}, BufferInit::Kind::Random);
        u.init.min = 2;
        u.init.max = 4;
        const QByteArray ub = fill(u);
        double sum = 0;
        double mn = 10;
        double mx = -10;
        for (qint64 k = 0; k < 200000; ++k) {
            const double v = loadComponent(DType::Float64, ub.constData() + 8 * k);
            sum += v;
            mn = std::min(mn, v);
            mx = std::max(mx, v);
        }
        QVERIFY(std::abs(sum / 200000 - 3) < 0.01);
        QVERIFY(mn >= 2 && mx < 4);

        BufferSpec n = spec(DType::Float32, {200000}, BufferInit::Kind::Random);
        n.init.distribution = BufferInit::Distribution::Normal;
        n.init.mean = 5;
        n.init.stddev = 3;
        const QByteArray nb = fill(n);
        double s1 = 0;
        double s2 = 0;
        for (qint64 k = 0; k < 200000; ++k) {
            const double v = loadComponent(DType::Float32, nb.constData() + 4 * k);
            QVERIFY(std::isfinite(v));
            s1 += v;
            s2 += v * v;
        }
        const double mean = s1 / 200000;
        const double sd = std::sqrt(s2 / 200000 - mean * mean);
        QVERIFY2(std::abs(mean - 5) < 0.05, qPrintable(QString::number(mean)));
        QVERIFY2(std::abs(sd - 3) < 0.05, qPrintable(QString::number(sd)));
    }

    void randomUpperBoundIsOpen()
    {
        // In half precision many values in [1.999, 2) round up to 2; none may be stored as max.
        BufferSpec h = spec(DType::Float16, {100000}, BufferInit::Kind::Random);
        h.init.min = 1.999;
        h.init.max = 2;
        const QByteArray b = fill(h);
        for (qint64 k = 0; k < 100000; ++k) {
            QVERIFY(loadComponent(DType::Float16, b.constData() + 2 * k) < 2);
        }
        // float32 (its own loop): [1.9999999, 2) rounds up to 2 for many
        // values; they become the float just below 2, and every element is
        // still u(k) as the formula stores it.
        BufferSpec f = spec(DType::Float32, {100000}, BufferInit::Kind::Random);
        f.init.min = 1.9999999;
        f.init.max = 2;
        const QByteArray fb = fill(f);
        int below = 0;
        for (qint64 k = 0; k < 100000; ++k) {
            const double v = loadComponent(DType::Float32, fb.constData() + 4 * k);
            QVERIFY(v < 2);
            below += v == double(std::nextafter(2.0f, 0.0f));
            const double formula = 1.9999999 + (2 - 1.9999999) * refUnit(f.init.seed, k);
            const float expect = float(formula) >= 2.0f ? std::nextafter(2.0f, 0.0f) : float(formula);
            QCOMPARE(float(v), expect);
        }
        QVERIFY(below > 1000);
        BufferSpec d = spec(DType::Float64, {1000}, BufferInit::Kind::Random);
        d.init.min = -3;
        d.init.max = 5;
        d.init.seed = 9;
        const QByteArray db = fill(d);
        for (qint64 k = 0; k < 1000; ++k) {
            QCOMPARE(loadComponent(DType::Float64, db.constData() + 8 * k), -3 + 8 * refUnit(9, k));
        }
        // The same for bfloat16 with a negative max, and for integers.
        BufferSpec bf = spec(DType::BFloat16, {10000}, BufferInit::Kind::Random);
        bf.init.min = -1.01;
        bf.init.max = -1;
        const QByteArray bb = fill(bf);
        for (qint64 k = 0; k < 10000; ++k) {
            QVERIFY(loadComponent(DType::BFloat16, bb.constData() + 2 * k) < -1);
        }
        BufferSpec i = spec(DType::Int8, {10000}, BufferInit::Kind::Random);
        i.init.min = 0;
        i.init.max = 2;
        const QByteArray ib = fill(i);
        int counts[2] = {0, 0};
        for (qint64 k = 0; k < 10000; ++k) {
            const int v = ib[k];
            QVERIFY(v == 0 || v == 1);
            ++counts[v];
        }
        QVERIFY(counts[0] > 4500 && counts[1] > 4500);
    }

    // --- expressions -------------------------------------------------------

    void expressionCoordinates_data()
    {
        QTest::addColumn<QList<qint64>>("shape");
        QTest::addColumn<QString>("expression");
        QTest::addColumn<QList<double>>("expected");
        QTest::newRow("1-D x") << QList<qint64>{4} << "x + 10*y + 100*z" << QList<double>{0, 1, 2, 3};
        QTest::newRow("2-D x, y") << QList<qint64>{2, 3} << "x + 10*y + 100*z" << QList<double>{0, 1, 2, 10, 11, 12};
        QTest::newRow("3-D x, y, z") << QList<qint64>{2, 2, 2} << "x + 10*y + 100*z"
                                     << QList<double>{0, 1, 10, 11, 100, 101, 110, 111};
        QTest::newRow("extents 1-D") << QList<qint64>{3} << "nx*10000 + ny*100 + nz + n/1000"
                                     << QList<double>{30101.003, 30101.003, 30101.003};
        QTest::newRow("extents 3-D") << QList<qint64>{2, 3, 4} << "(nx*10000 + ny*100 + nz) * (i == 0) + n * (i > 0)"
                                     << QList<double>{40302, 24, 24};
        QTest::newRow("i") << QList<qint64>{2, 2} << "i*i" << QList<double>{0, 1, 4, 9};
        QTest::newRow("functions") << QList<qint64>{4} << "ceil_div(i, 2) + fmod(i, 2)*10 + i % 3 * 100"
                                   << QList<double>{0, 111, 201, 12};
        QTest::newRow("constants and math")
            << QList<qint64>{2} << "round(sin(_pi/2) * 1000) + i * _e" << QList<double>{1000, 1000 + M_E};
        QTest::newRow("ternary") << QList<qint64>{4} << "i < 2 ? -1 : 1" << QList<double>{-1, -1, 1, 1};
        QTest::newRow("scalars") << QList<qint64>{3} << "alpha * i + block.x" << QList<double>{256, 258.5, 261};
        QTest::newRow("built-ins win over scalars") << QList<qint64>{2} << "n" << QList<double>{2, 2};
    }
    void expressionCoordinates()
    {
        QFETCH(QList<qint64>, shape);
        QFETCH(QString, expression);
        QFETCH(QList<double>, expected);
        BufferSpec s = spec(DType::Float64, shape, BufferInit::Kind::Expression);
        s.init.expression = expression;
        const QMap<QString, double> scalars{
            {QStringLiteral("alpha"), 2.5}, {QStringLiteral("block.x"), 256}, {QStringLiteral("n"), 99}};
        const QByteArray b = fill(s, {}, scalars);
        QVERIFY(!b.isEmpty());
        for (int k = 0; k < expected.size(); ++k) {
            QCOMPARE(loadComponent(DType::Float64, b.constData() + 8 * k), expected[k]);
        }
    }

    void expressionComponents()
    {
        BufferSpec s = spec(DType::Float4, {2, 2}, BufferInit::Kind::Expression);
        s.init.expression = QStringLiteral("c == 3 ? 1 : (c == 0 ? x : (c == 1 ? y : 0.5))");
        const QByteArray b = fill(s);
        const QList<float> expected{0, 0, 0.5, 1, 1, 0, 0.5, 1, 0, 1, 0.5, 1, 1, 1, 0.5, 1};
        for (int k = 0; k < 16; ++k) {
            QCOMPARE(float(loadComponent(DType::Float32, b.constData() + 4 * k)), expected[k]);
        }
        // Integers saturate, NaN becomes 0.
        BufferSpec u = spec(DType::UChar4, {1}, BufferInit::Kind::Expression);
        u.init.expression = QStringLiteral("c == 0 ? 300 : (c == 1 ? -5 : (c == 2 ? 0/0 : 7.6))");
        QCOMPARE(fill(u), QByteArray("\xff\x00\x00\x08", 4));
    }

    void expressionLargeBufferThreaded()
    {
        BufferSpec s = spec(DType::Float32, {512, 1024}, BufferInit::Kind::Expression);
        s.init.expression = QStringLiteral("x * 0.5 + y * 3 + k");
        const QByteArray b = fill(s, {}, {{QStringLiteral("k"), 1}});
        QVERIFY(!b.isEmpty());
        for (const qint64 e : {qint64(0), qint64(1023), qint64(1024), qint64(262144), qint64(524287)}) {
            QCOMPARE(loadComponent(DType::Float32, b.constData() + 4 * e),
                     double(float((e % 1024) * 0.5 + (e / 1024) * 3 + 1)));
        }
    }

    void expressionErrors_data()
    {
        QTest::addColumn<QString>("expression");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown variable")
            << "q*2"
            << "buffers 'a' init expression: unknown variable 'q' in 'q*2'; known: alpha, c, i, n, nx, ny, nz, x, y, z";
        QTest::newRow("syntax") << "1+"
                                << "buffers 'a' init expression: Unexpected end of expression at position 3 in '1+'";
        QTest::newRow("two values") << "1, 2"
                                    << "buffers 'a' init expression: 2 comma-separated values where one is expected "
                                       "in '1, 2'";
        // Issue 28: muparser's words were "Unexpected parenthesis" and "unknown variable '1e400'".
        QTest::newRow("unknown function")
            << "foo(1)"
            << "buffers 'a' init expression: unknown function foo in 'foo(1)'; known: abs, acos, acosh, asin, asinh, "
               "atan, atan2, atanh, avg, ceil, ceil_div, cos, cosh, exp, floor, fmod, ln, log, log10, log2, max, min, "
               "rint, round, round_up, sign, sin, sinh, sqrt, sum, tan, tanh";
        QTest::newRow("unknown function of a variable") << "2 * foo (alpha)"
                                                        << "buffers 'a' init expression: unknown function foo in '2 * "
                                                           "foo (alpha)'; known: abs, acos, acosh, asin, asinh, atan, "
                                                           "atan2, atanh, avg, ceil, ceil_div, cos, cosh, exp, floor, "
                                                           "fmod, ln, log, log10, log2, max, min, rint, round, "
                                                           "round_up, sign, sin, sinh, sqrt, sum, tan, tanh";
        QTest::newRow("number past a double") << "1e400"
                                              << "buffers 'a' init expression: the number 1e400 is outside the range "
                                                 "of a double (about 1.8e308) in '1e400'";
        QTest::newRow("long number past a double")
            << "x + 1" + QString(400, QLatin1Char('0'))
            << "buffers 'a' init expression: the number 1" + QString(400, QLatin1Char('0')) +
                   " is outside the range of a double (about 1.8e308) in 'x + 1" + QString(400, QLatin1Char('0')) + "'";
    }
    void expressionErrors()
    {
        QFETCH(QString, expression);
        QFETCH(QString, message);
        BufferSpec s = spec(DType::Float32, {4}, BufferInit::Kind::Expression);
        s.init.expression = expression;
        QCOMPARE(fillError(s, {}, {{QStringLiteral("alpha"), 1}}), message);
    }

    void expressionClassDirectly()
    {
        Expression e;
        e.set(QStringLiteral("n"), 1000);
        const Result<double> v = e.evaluate(QStringLiteral("ceil_div(n, 256)"), QStringLiteral("grid[0]"));
        KP_VERIFY_RESULT(v);
        QCOMPARE(*v, 4.0);
        double *n = e.variable(QStringLiteral("n"));
        *n = 2000;
        QCOMPARE(*e.evaluate(), 8.0);
        // A variable defined after parse() is picked up.
        e.set(QStringLiteral("m"), 3);
        KP_VERIFY_RESULT(e.parse(QStringLiteral("m + round_up(n, 512)"), QStringLiteral("f")));
        QCOMPARE(*e.evaluate(), 2051.0);
        const Result<double> bad = e.evaluate(QStringLiteral("zz"), QStringLiteral("f"));
        QVERIFY(!bad);
        QCOMPARE(bad.error().message, QStringLiteral("f: unknown variable 'zz' in 'zz'; known: m, n"));
        const Result<double> empty = e.evaluate(QStringLiteral("  "), QStringLiteral("f"));
        QVERIFY(!empty);
        QCOMPARE(empty.error().message, QStringLiteral("f: empty expression in ''"));
        double num = 0;
        QVERIFY(Expression::isNumber(QStringLiteral(" 1.5e3 "), &num));
        QCOMPARE(num, 1500.0);
        QVERIFY(!Expression::isNumber(QStringLiteral("n")));
    }

    // --- npy init ------------------------------------------------------------

    void npyInitResolvesPaths()
    {
        QTemporaryDir tmp;
        const QList<qint32> v{1, 2, 3};
        KP_VERIFY_RESULT(writeNpy(tmp.filePath(QStringLiteral("v.npy")), DType::Int32, {3}, v.constData()));
        BufferSpec s = spec(DType::Int32, {3}, BufferInit::Kind::Npy);
        s.init.file = QStringLiteral("v.npy");
        QCOMPARE(fill(s, tmp.path()), QByteArray(reinterpret_cast<const char *>(v.constData()), 12));
        s.init.file = tmp.filePath(QStringLiteral("v.npy")); // absolute: projectDir is ignored
        QCOMPARE(fill(s, QStringLiteral("/elsewhere")), QByteArray(reinterpret_cast<const char *>(v.constData()), 12));
        s.dtype = DType::Float32;
        QCOMPARE(fillError(s),
                 QStringLiteral("v.npy holds int32 ('<i4'); buffer 'a' is float32: convert with a.astype(np.float32)"));
        QCOMPARE(resolveInitFile(QStringLiteral("d/x.npy"), QStringLiteral("/p")), QStringLiteral("/p/d/x.npy"));
        QCOMPARE(resolveInitFile(QStringLiteral("/abs.npy"), QStringLiteral("/p")), QStringLiteral("/abs.npy"));
    }

    // --- images ----------------------------------------------------------------

    void imageShapes_data()
    {
        QTest::addColumn<int>("mode");
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<QList<qint64>>("shape"); // empty: refused
        using M = BufferInit::ImageMode;
        QTest::newRow("rgba8 uchar4") << int(M::Rgba8) << DType::UChar4 << QList<qint64>{3, 5};
        QTest::newRow("rgba8 uint8") << int(M::Rgba8) << DType::UInt8 << QList<qint64>{3, 5, 4};
        QTest::newRow("rgba8 float4") << int(M::Rgba8) << DType::Float4 << QList<qint64>{};
        QTest::newRow("gray uint8") << int(M::Gray) << DType::UInt8 << QList<qint64>{3, 5};
        QTest::newRow("gray float16") << int(M::Gray) << DType::Float16 << QList<qint64>{3, 5};
        QTest::newRow("gray uchar4") << int(M::Gray) << DType::UChar4 << QList<qint64>{};
        QTest::newRow("rgba float4") << int(M::Rgba) << DType::Float4 << QList<qint64>{3, 5};
        QTest::newRow("rgba float32") << int(M::Rgba) << DType::Float32 << QList<qint64>{3, 5, 4};
        QTest::newRow("rgba int32") << int(M::Rgba) << DType::Int32 << QList<qint64>{};
    }
    void imageShapes()
    {
        QFETCH(int, mode);
        QFETCH(DType, dtype);
        QFETCH(QList<qint64>, shape);
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("img.png"));
        QVERIFY(testImage().save(path));
        const Result<QList<qint64>> s = imageShapeFor(path, static_cast<BufferInit::ImageMode>(mode), dtype);
        if (shape.isEmpty()) {
            QVERIFY(!s);
            QVERIFY2(s.error().message.startsWith(QStringLiteral("img.png: ")), qPrintable(s.error().message));
            return;
        }
        KP_VERIFY_RESULT(s);
        QCOMPARE(*s, shape);
    }

    void imageFill()
    {
        QTemporaryDir tmp;
        const QImage ref = testImage();
        QVERIFY(ref.save(tmp.filePath(QStringLiteral("img.png"))));
        BufferSpec s = spec(DType::UChar4, {3, 5}, BufferInit::Kind::Image);
        s.name = QStringLiteral("img");
        s.init.file = QStringLiteral("img.png");

        s.init.imageMode = BufferInit::ImageMode::Rgba8;
        const QByteArray rgba8 = fill(s, tmp.path());
        for (int y = 0; y < 3; ++y) {
            for (int x = 0; x < 5; ++x) {
                const QColor c = ref.pixelColor(x, y);
                const char *p = rgba8.constData() + (y * 5 + x) * 4;
                QCOMPARE(uchar(p[0]), uchar(c.red()));
                QCOMPARE(uchar(p[1]), uchar(c.green()));
                QCOMPARE(uchar(p[2]), uchar(c.blue()));
                QCOMPARE(uchar(p[3]), uchar(c.alpha()));
            }
        }
        s.dtype = DType::UInt8;
        s.shape = {3, 5, 4};
        QCOMPARE(fill(s, tmp.path()), rgba8);

        s.init.imageMode = BufferInit::ImageMode::Gray;
        s.shape = {3, 5};
        const QByteArray g8 = fill(s, tmp.path());
        s.dtype = DType::Float32;
        const QByteArray gf = fill(s, tmp.path());
        for (int y = 0; y < 3; ++y) {
            for (int x = 0; x < 5; ++x) {
                const int g = qGray(ref.pixel(x, y));
                QCOMPARE(int(uchar(g8[y * 5 + x])), g);
                QCOMPARE(float(loadComponent(DType::Float32, gf.constData() + 4 * (y * 5 + x))), float(g / 255.0));
            }
        }

        s.init.imageMode = BufferInit::ImageMode::Rgba;
        s.dtype = DType::Float4;
        const QByteArray f4 = fill(s, tmp.path());
        for (int k = 0; k < 60; ++k) {
            QCOMPARE(float(loadComponent(DType::Float32, f4.constData() + 4 * k)), float(uchar(rgba8[k]) / 255.0));
        }
        s.dtype = DType::Float16;
        s.shape = {3, 5, 4};
        const QByteArray h4 = fill(s, tmp.path());
        QCOMPARE(loadComponent(DType::Float16, h4.constData() + 2 * 3), double(halfToFloat(floatToHalf(1.0f))));

        // Shape and mode mismatches say what is allowed.
        s.shape = {4, 4, 4};
        QCOMPARE(fillError(s, tmp.path()),
                 QStringLiteral("buffers 'img' init image: img.png is 5x3 pixels, so the buffer's shape must be "
                                "[3, 5, 4] (or empty to take it from the file), got [4, 4, 4]"));
        s.dtype = DType::Int32;
        s.shape = {3, 5, 4};
        QCOMPARE(fillError(s, tmp.path()),
                 QStringLiteral("buffers 'img'.init.mode: rgba images need dtype float4 (shape [height, width]) or "
                                "float16, bfloat16, float32 or float64 (shape [height, width, 4]), got int32"));
        s.dtype = DType::Float4;
        s.shape = {3, 5};
        s.init.file = QStringLiteral("missing.png");
        QVERIFY2(fillError(s, tmp.path()).startsWith(QStringLiteral("buffers 'img' init image: cannot read ")),
                 qPrintable(fillError(s, tmp.path())));
    }

    void imageJpeg()
    {
        if (!QImageWriter::supportedImageFormats().contains("jpeg")) {
            QSKIP("no JPEG image plugin");
        }
        QTemporaryDir tmp;
        QImage img(16, 8, QImage::Format_RGB32);
        img.fill(QColor(200, 200, 200));
        QVERIFY(img.save(tmp.filePath(QStringLiteral("p.jpg")), "JPEG", 95));
        const Result<QList<qint64>> shape =
            imageShapeFor(tmp.filePath(QStringLiteral("p.jpg")), BufferInit::ImageMode::Gray, DType::Float32);
        KP_VERIFY_RESULT(shape);
        QCOMPARE(*shape, (QList<qint64>{8, 16}));
        BufferSpec s = spec(DType::Float32, *shape, BufferInit::Kind::Image);
        s.init.imageMode = BufferInit::ImageMode::Gray;
        s.init.file = QStringLiteral("p.jpg");
        const QByteArray b = fill(s, tmp.path());
        for (int k = 0; k < 128; ++k) {
            QVERIFY(std::abs(loadComponent(DType::Float32, b.constData() + 4 * k) - 200 / 255.0) < 0.02);
        }
    }

    // --- exports ---------------------------------------------------------------

    void exportNpyRoundTrip_data()
    {
        QTest::addColumn<DType>("dtype");
        for (int t = 0; t < kDTypeCount; ++t) {
            QTest::newRow(qPrintable(dtypeName(static_cast<DType>(t)))) << static_cast<DType>(t);
        }
    }
    void exportNpyRoundTrip()
    {
        QFETCH(DType, dtype);
        BufferSpec s = spec(dtype, {4, 6}, BufferInit::Kind::Random);
        s.init.min = -50;
        s.init.max = 50;
        const QByteArray data = fill(s);
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("e.npy"));
        KP_VERIFY_RESULT(exportNpy(path, dtype, s.shape, data.constData()));
        BufferSpec back = spec(dtype, {}, BufferInit::Kind::Npy);
        back.init.file = path;
        const Result<QList<qint64>> shape = npyShapeFor(path, dtype);
        KP_VERIFY_RESULT(shape);
        back.shape = *shape;
        QCOMPARE(fill(back), data);
    }

    void exportCsv_data()
    {
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<QList<qint64>>("shape");
        QTest::addColumn<QList<double>>("values"); // flat components
        QTest::addColumn<QString>("text");
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const double inf = std::numeric_limits<double>::infinity();
        QTest::newRow("1-D float32") << DType::Float32 << QList<qint64>{6}
                                     << QList<double>{1.5, -0.1, nan, inf, -inf, 1e-8}
                                     << "1.5\n-0.100000001\nnan\ninf\n-inf\n9.99999994e-09\n";
        QTest::newRow("2-D int16") << DType::Int16 << QList<qint64>{2, 3} << QList<double>{1, 2, 3, -4, 5, 6}
                                   << "1,2,3\n-4,5,6\n";
        QTest::newRow("3-D uint8") << DType::UInt8 << QList<qint64>{2, 2, 2} << QList<double>{0, 1, 2, 3, 4, 5, 6, 7}
                                   << "0,1\n2,3\n\n4,5\n6,7\n";
        QTest::newRow("float4") << DType::Float4 << QList<qint64>{2} << QList<double>{0, 1, 2, 3, 4.5, 5, 6, 7}
                                << "0 1 2 3\n4.5 5 6 7\n";
        QTest::newRow("2-D int2") << DType::Int2 << QList<qint64>{1, 2} << QList<double>{1, 2, 3, 4} << "1 2,3 4\n";
        QTest::newRow("float64") << DType::Float64 << QList<qint64>{2} << QList<double>{0.1, 1.0 / 3}
                                 << "0.10000000000000001\n0.33333333333333331\n";
        QTest::newRow("float16") << DType::Float16 << QList<qint64>{2} << QList<double>{0.1, 65504}
                                 << "0.099976\n65504\n";
        QTest::newRow("bfloat16") << DType::BFloat16 << QList<qint64>{1} << QList<double>{3.14159} << "3.141\n";
    }
    void exportCsv()
    {
        QFETCH(DType, dtype);
        QFETCH(QList<qint64>, shape);
        QFETCH(QList<double>, values);
        QFETCH(QString, text);
        const int cb = dtypeInfo(dtype).componentBytes;
        QByteArray data(values.size() * cb, 0);
        for (int k = 0; k < values.size(); ++k) {
            storeComponent(dtypeInfo(dtype).component, values[k], data.data() + k * cb);
        }
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("e.csv"));
        KP_VERIFY_RESULT(Kp::exportCsv(path, dtype, shape, data.constData()));
        QCOMPARE(QString::fromUtf8(readAll(path)), text);
    }

    void exportCsvRoundTripsFloats()
    {
        BufferSpec s = spec(DType::Float32, {1000}, BufferInit::Kind::Random);
        s.init.distribution = BufferInit::Distribution::Normal;
        s.init.stddev = 1e6;
        const QByteArray f = fill(s);
        BufferSpec d = s;
        d.dtype = DType::Float64;
        const QByteArray g = fill(d);
        QTemporaryDir tmp;
        KP_VERIFY_RESULT(Kp::exportCsv(tmp.filePath(QStringLiteral("f.csv")), DType::Float32, {1000}, f.constData()));
        KP_VERIFY_RESULT(Kp::exportCsv(tmp.filePath(QStringLiteral("g.csv")), DType::Float64, {1000}, g.constData()));
        const QList<QByteArray> fl = readAll(tmp.filePath(QStringLiteral("f.csv"))).split('\n');
        const QList<QByteArray> gl = readAll(tmp.filePath(QStringLiteral("g.csv"))).split('\n');
        for (int k = 0; k < 1000; ++k) {
            float fv;
            double gv;
            std::memcpy(&fv, f.constData() + 4 * k, 4);
            std::memcpy(&gv, g.constData() + 8 * k, 8);
            QCOMPARE(fl[k].toFloat(), fv);
            QCOMPARE(gl[k].toDouble(), gv);
        }
        // 64-bit integers are written exactly, not through a double.
        const qint64 big[2] = {std::numeric_limits<qint64>::max(), std::numeric_limits<qint64>::min()};
        KP_VERIFY_RESULT(Kp::exportCsv(tmp.filePath(QStringLiteral("i.csv")), DType::Int64, {2}, big));
        QCOMPARE(readAll(tmp.filePath(QStringLiteral("i.csv"))),
                 QByteArray("9223372036854775807\n-9223372036854775808\n"));
        const quint64 ubig = std::numeric_limits<quint64>::max();
        KP_VERIFY_RESULT(Kp::exportCsv(tmp.filePath(QStringLiteral("u.csv")), DType::UInt64, {1}, &ubig));
        QCOMPARE(readAll(tmp.filePath(QStringLiteral("u.csv"))), QByteArray("18446744073709551615\n"));
        const Status bad = Kp::exportCsv(tmp.filePath(QStringLiteral("x.csv")), DType::Float32, {1, 1, 1, 1}, big);
        QVERIFY(!bad);
        QCOMPARE(
            bad.error().message,
            QStringLiteral("cannot export %1 as CSV: expected a shape of 1 to 3 positive integers, got [1, 1, 1, 1]")
                .arg(tmp.filePath(QStringLiteral("x.csv"))));
    }

    void exportPngRgba()
    {
        QTemporaryDir tmp;
        const QImage ref = testImage().convertToFormat(QImage::Format_RGBA8888);
        QByteArray data;
        for (int y = 0; y < ref.height(); ++y) {
            data.append(reinterpret_cast<const char *>(ref.constScanLine(y)), ref.width() * 4);
        }
        const QString path = tmp.filePath(QStringLiteral("o.png"));
        KP_VERIFY_RESULT(exportPng(path, DType::UChar4, {3, 5}, data.constData()));
        QImage back(path);
        QVERIFY(!back.isNull());
        QCOMPARE(back.convertToFormat(QImage::Format_RGBA8888), ref);
        // And the PNG is a valid image init again.
        BufferSpec s = spec(DType::UChar4, {3, 5}, BufferInit::Kind::Image);
        s.init.file = path;
        QCOMPARE(fill(s), data);
        KP_VERIFY_RESULT(exportPng(path, DType::UInt8, {3, 5, 4}, data.constData()));
        QCOMPARE(QImage(path).convertToFormat(QImage::Format_RGBA8888), ref);
    }

    void exportPngGray_data()
    {
        QTest::addColumn<double>("lo");
        QTest::addColumn<double>("hi");
        QTest::addColumn<QList<double>>("values");
        QTest::addColumn<QList<int>>("gray");
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const double inf = std::numeric_limits<double>::infinity();
        QTest::newRow("0..1") << 0.0 << 1.0 << QList<double>{0, 0.5, 1, 2, -1, nan}
                              << QList<int>{0, 128, 255, 255, 0, 0};
        QTest::newRow("inverted") << 1.0 << 0.0 << QList<double>{0, 0.25, 1, 0.5, 2, -1}
                                  << QList<int>{255, 191, 0, 128, 0, 255};
        QTest::newRow("auto range") << 0.0 << 0.0 << QList<double>{10, 15, 20, inf, nan, 12}
                                    << QList<int>{0, 128, 255, 255, 0, 51};
        QTest::newRow("constant is black")
            << 0.0 << 0.0 << QList<double>{3, 3, 3, 3, 3, 3} << QList<int>{0, 0, 0, 0, 0, 0};
    }
    void exportPngGray()
    {
        QFETCH(double, lo);
        QFETCH(double, hi);
        QFETCH(QList<double>, values);
        QFETCH(QList<int>, gray);
        QList<float> data;
        for (const double v : values) {
            data << float(v);
        }
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("g.png"));
        KP_VERIFY_RESULT(exportPng(path, DType::Float32, {2, 3}, data.constData(), lo, hi));
        const QImage back = QImage(path).convertToFormat(QImage::Format_Grayscale8);
        QCOMPARE(back.size(), QSize(3, 2));
        for (int k = 0; k < 6; ++k) {
            QCOMPARE(int(back.constScanLine(k / 3)[k % 3]), gray[k]);
        }
    }

    void exportPngRefusals()
    {
        QTemporaryDir tmp;
        const QByteArray data(64 * 16, 0);
        const QString path = tmp.filePath(QStringLiteral("x.png"));
        const Status v = exportPng(path, DType::Float4, {4, 4}, data.constData());
        QVERIFY(!v);
        QCOMPARE(v.error().message,
                 QStringLiteral("cannot export %1 as an image: it needs a 2-D buffer of a scalar dtype or uchar4 (or "
                                "uint8 of shape [height, width, 4]), got float4 of shape [4, 4]")
                     .arg(path));
        const Status d = exportPng(path, DType::Float32, {16}, data.constData());
        QVERIFY(!d);
        QVERIFY(!QFile::exists(path)); // nothing half-written
    }

    // --- checkSpec -------------------------------------------------------------

    void checkSpecMessages_data()
    {
        QTest::addColumn<QString>("what");
        QTest::addColumn<QString>("message"); // empty: accepted
        QTest::newRow("zero extent") << "shape 0,4"
                                     << "buffers[2].shape: expected 1 to 3 positive integers, got [0, 4]";
        QTest::newRow("negative extent") << "shape -1"
                                         << "buffers[2].shape: expected 1 to 3 positive integers, got [-1]";
        QTest::newRow("four dims") << "shape 1,2,3,4"
                                   << "buffers[2].shape: expected 1 to 3 positive integers, got [1, 2, 3, 4]";
        QTest::newRow("empty for zeros") << "shape"
                                         << "buffers[2].shape: expected 1 to 3 positive integers, got [] (only npy and "
                                            "image inits may leave it empty to take it from the file)";
        QTest::newRow("over 64 GiB") << "shape 1048576,1048576,16"
                                     << "buffers[2].shape: [1048576, 1048576, 16] of float32 (4 bytes each) is "
                                        "70368744177664 bytes; a buffer may hold at most 68719476736 bytes (64 GiB)";
        QTest::newRow("overflow") << "shape 4294967296,4294967296,4294967296"
                                  << "buffers[2].shape: [4294967296, 4294967296, 4294967296] of float32 (4 bytes each) "
                                     "is more than 2^63 bytes; a buffer may hold at most 68719476736 bytes (64 GiB)";
        QTest::newRow("exactly 64 GiB") << "shape 4096,4096,1024"
                                        << "";
        QTest::newRow("uniform max = min") << "uniform 1 1"
                                           << "buffers[2].init.max: must be greater than min (1), got 1";
        QTest::newRow("uniform max < min") << "uniform 2 -0.5"
                                           << "buffers[2].init.max: must be greater than min (2), got -0.5";
        QTest::newRow("uniform inf") << "uniform 0 inf"
                                     << "buffers[2].init.max: must be a finite number, got inf";
        QTest::newRow("normal stddev") << "normal -1"
                                       << "buffers[2].init.stddev: must be a finite number, 0 or more, got -1";
        QTest::newRow("normal stddev 0") << "normal 0"
                                         << "";
        QTest::newRow("ramp step") << "ramp nan"
                                   << "buffers[2].init.step: must be a finite number, got nan";
        QTest::newRow("empty expression") << "expression"
                                          << "buffers[2].init.expression: empty; write an expression over i, x, y, z, "
                                             "c, nx, ny, nz, n and the scalars";
        QTest::newRow("npy without file") << "npy"
                                          << "buffers[2].init.file: empty; npy inits need a file (relative to the "
                                             "project folder)";
        QTest::newRow("npy from the file") << "npy a.npy"
                                           << "";
        QTest::newRow("image without file") << "image"
                                            << "buffers[2].init.file: empty; image inits need a file (relative to the "
                                               "project folder)";
        QTest::newRow("image mode vs dtype")
            << "image float32 rgba8"
            << "buffers[2].init.mode: rgba8 images need dtype uchar4 (shape [height, width]) or uint8 (shape [height, "
               "width, 4]), got float32";
        QTest::newRow("gray vector") << "image float2 gray"
                                     << "buffers[2].init.mode: gray images need a scalar dtype (shape [height, width], "
                                        "one value per pixel), got float2";
        QTest::newRow("image shape") << "image uint8 rgba8 4,4"
                                     << "buffers[2].shape: image mode rgba8 with dtype uint8 needs shape [height, "
                                        "width, 4], got [4, 4] (or leave it empty to take it from the file)";
        QTest::newRow("image 1-D") << "image float32 gray 16"
                                   << "buffers[2].shape: image mode gray with dtype float32 needs shape [height, "
                                      "width], got [16] (or leave it empty to take it from the file)";
        QTest::newRow("image ok") << "image uint8 rgba8 4,4,4"
                                  << "";
        QTest::newRow("image from the file") << "image float4 rgba"
                                             << "";
        QTest::newRow("constant nan is fine") << "constant nan"
                                              << "";
    }
    void checkSpecMessages()
    {
        QFETCH(QString, what);
        QFETCH(QString, message);
        // "what" is a tiny script: a kind word and its arguments.
        const QStringList w = what.split(QLatin1Char(' '));
        const auto shapeOf = [](const QString &text) {
            QList<qint64> s;
            for (const QString &e : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
                s << e.toLongLong();
            }
            return s;
        };
        const auto number = [](const QString &t) {
            if (t == QLatin1String("inf")) {
                return std::numeric_limits<double>::infinity();
            }
            if (t == QLatin1String("nan")) {
                return std::numeric_limits<double>::quiet_NaN();
            }
            return t.toDouble();
        };
        BufferSpec s = spec(DType::Float32, {16});
        const QString kind = w[0];
        if (kind == QLatin1String("shape")) {
            s.shape = w.size() > 1 ? shapeOf(w[1]) : QList<qint64>{};
        } else if (kind == QLatin1String("uniform")) {
            s.init.kind = BufferInit::Kind::Random;
            s.init.min = number(w[1]);
            s.init.max = number(w[2]);
        } else if (kind == QLatin1String("normal")) {
            s.init.kind = BufferInit::Kind::Random;
            s.init.distribution = BufferInit::Distribution::Normal;
            s.init.stddev = number(w[1]);
        } else if (kind == QLatin1String("ramp")) {
            s.init.kind = BufferInit::Kind::Ramp;
            s.init.step = number(w[1]);
        } else if (kind == QLatin1String("constant")) {
            s.init.kind = BufferInit::Kind::Constant;
            s.init.value = number(w[1]);
        } else if (kind == QLatin1String("expression")) {
            s.init.kind = BufferInit::Kind::Expression;
        } else if (kind == QLatin1String("npy")) {
            s.init.kind = BufferInit::Kind::Npy;
            s.shape.clear();
            s.init.file = w.value(1);
        } else if (kind == QLatin1String("image")) {
            s.init.kind = BufferInit::Kind::Image;
            s.shape.clear();
            if (w.size() > 1) {
                s.init.file = QStringLiteral("i.png");
                s.dtype = *dtypeFromName(w[1]);
                s.init.imageMode = w[2] == QLatin1String("rgba8")  ? BufferInit::ImageMode::Rgba8
                                   : w[2] == QLatin1String("gray") ? BufferInit::ImageMode::Gray
                                                                   : BufferInit::ImageMode::Rgba;
                s.shape = w.size() > 3 ? shapeOf(w[3]) : QList<qint64>{};
            }
        }
        const Status st = checkSpec(s, QStringLiteral("buffers[2]"));
        if (message.isEmpty()) {
            KP_VERIFY_RESULT(st);
        } else {
            QVERIFY(!st);
            QCOMPARE(st.error().where, QStringLiteral("buffers"));
            QCOMPARE(st.error().code, Error::Code::BadInput);
            QCOMPARE(st.error().message, message);
        }
    }

    void fillBufferRefusesWrongSizes()
    {
        BufferSpec s = spec(DType::Float32, {4});
        QByteArray b(8, 0);
        const Status st = fillBuffer(s, b.data(), b.size(), {}, {});
        QVERIFY(!st);
        QCOMPARE(st.error().message, QStringLiteral("buffers 'a': the destination holds 8 bytes, the buffer needs 16"));
        s.shape.clear();
        s.init.kind = BufferInit::Kind::Npy;
        s.init.file = QStringLiteral("a.npy");
        QVERIFY(!fillBuffer(s, b.data(), b.size(), {}, {}));
    }

    void constantFillsLargeBuffers()
    {
        BufferSpec s = spec(DType::Float3, {1000, 7}, BufferInit::Kind::Constant);
        s.init.value = -1.25;
        const QByteArray b = fill(s);
        for (qint64 k = 0; k < 21000; ++k) {
            QCOMPARE(componentAt(b, DType::Float32, k), stored(DType::Float32, -1.25));
        }
    }
};

QTEST_GUILESS_MAIN(TestBuffers)
#include "tst_buffers.moc"
