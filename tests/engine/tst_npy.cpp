// NumPy .npy reading and writing: the committed fixtures (made by numpy with
// tests/data/npy/make_fixtures.py), malformed files made here, round trips
// for every dtype and byte-for-byte agreement with numpy.save.

#include "buffers/bufferspec.h"
#include "buffers/npy.h"

#include <QBuffer>
#include <QFile>
#include <QTemporaryDir>
#include <QtEndian>
#include <QtTest>

#include <algorithm>

#include <cmath>
#include <cstring>
#include <sys/stat.h>

using namespace Kp;

Q_DECLARE_METATYPE(Kp::DType)

namespace {

QString fixture(const QString &name)
{
    return QStringLiteral(KPG_SOURCE_DIR "/tests/data/npy/") + name;
}

QByteArray readAll(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        return {};
    }
    return f.readAll();
}

bool writeAll(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

// A .npy file by hand: magic, version, header length (lenOverride when >= 0),
// the header text padded with spaces and '\n' to 64 bytes, then data.
QByteArray makeNpy(int major, const QByteArray &header, const QByteArray &data, qint64 lenOverride = -1)
{
    const int lenBytes = major == 1 ? 2 : 4;
    QByteArray h = header;
    while ((8 + lenBytes + h.size() + 1) % 64 != 0) {
        h += ' ';
    }
    h += '\n';
    QByteArray out("\x93NUMPY", 6);
    out += static_cast<char>(major);
    out += '\0';
    const qint64 len = lenOverride >= 0 ? lenOverride : h.size();
    char field[4];
    if (lenBytes == 2) {
        qToLittleEndian<quint16>(static_cast<quint16>(len), field);
    } else {
        qToLittleEndian<quint32>(static_cast<quint32>(len), field);
    }
    out.append(field, lenBytes);
    return out + h + data;
}

// The values make_fixtures.py wrote into le_<code>.npy at flat index k.
double leValue(const QString &code, qint64 k)
{
    if (code.startsWith(QLatin1Char('i'))) {
        return static_cast<double>(k - 5);
    }
    if (code.startsWith(QLatin1Char('u'))) {
        return static_cast<double>(k);
    }
    if (code == QLatin1String("b1")) {
        return k % 3 == 0 ? 1 : 0;
    }
    return static_cast<double>(k) * 0.5 - 2.5;
}

// Deterministic bytes for round trips (every bit pattern, NaN payloads included).
QByteArray patternBytes(qint64 n, quint64 seed)
{
    QByteArray b(n, Qt::Uninitialized);
    quint64 s = seed;
    for (qint64 i = 0; i < n; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        b[i] = static_cast<char>(s >> 56);
    }
    return b;
}

Result<NpyHeader> headerOf(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        return Error{QStringLiteral("test"), Error::Code::Internal, {}, QStringLiteral("cannot open ") + path};
    }
    return readNpyHeader(f, QFileInfo(path).fileName());
}

} // namespace

class TestNpy : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void scalarFixtures_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<QString>("descr");
        QTest::newRow("i1") << "i1" << DType::Int8 << "|i1";
        QTest::newRow("u1") << "u1" << DType::UInt8 << "|u1";
        QTest::newRow("i2") << "i2" << DType::Int16 << "<i2";
        QTest::newRow("u2") << "u2" << DType::UInt16 << "<u2";
        QTest::newRow("i4") << "i4" << DType::Int32 << "<i4";
        QTest::newRow("u4") << "u4" << DType::UInt32 << "<u4";
        QTest::newRow("i8") << "i8" << DType::Int64 << "<i8";
        QTest::newRow("u8") << "u8" << DType::UInt64 << "<u8";
        QTest::newRow("f2") << "f2" << DType::Float16 << "<f2";
        QTest::newRow("f4") << "f4" << DType::Float32 << "<f4";
        QTest::newRow("f8") << "f8" << DType::Float64 << "<f8";
        QTest::newRow("b1 (bool as uint8)") << "b1" << DType::UInt8 << "|b1";
    }
    void scalarFixtures()
    {
        QFETCH(QString, code);
        QFETCH(DType, dtype);
        QFETCH(QString, descr);
        const QString path = fixture(QStringLiteral("le_%1.npy").arg(code));
        const Result<NpyHeader> h = headerOf(path);
        KP_VERIFY_RESULT(h);
        QCOMPARE(h->descr, descr);
        QCOMPARE(h->dtype, dtype);
        QCOMPARE(h->shape, (QList<qint64>{3, 4}));
        QVERIFY(!h->fortranOrder);
        QVERIFY(!h->bigEndian);
        QVERIFY(!h->zeroDim);
        QCOMPARE(h->majorVersion, 1);
        QCOMPARE(h->dataOffset % 64, 0);
        QCOMPARE(h->dataBytes, 12 * dtypeInfo(dtype).componentBytes);
        QCOMPARE(h->elementCount(), 12);

        const Result<QList<qint64>> shape = npyShapeFor(path, dtype);
        KP_VERIFY_RESULT(shape);
        QCOMPARE(*shape, (QList<qint64>{3, 4}));

        QByteArray buf(h->dataBytes, '\x55');
        KP_VERIFY_RESULT(loadNpyInto(path, dtype, {3, 4}, buf.data(), buf.size()));
        const int cb = dtypeInfo(dtype).componentBytes;
        for (qint64 k = 0; k < 12; ++k) {
            QCOMPARE(loadComponent(dtype, buf.constData() + k * cb), leValue(code, k));
        }

        // writeNpy writes what numpy.save wrote, byte for byte (bool is written as uint8).
        if (code != QLatin1String("b1")) {
            QTemporaryDir tmp;
            const QString out = tmp.filePath(QStringLiteral("out.npy"));
            KP_VERIFY_RESULT(writeNpy(out, dtype, {3, 4}, buf.constData()));
            QCOMPARE(readAll(out), readAll(path));
        }
    }

    void bigEndian_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<QList<double>>("values");
        QTest::newRow(">f4") << "be_f4.npy" << DType::Float32 << QList<double>{-3, -1.5, 0, 1.5, 3, 4.5};
        QTest::newRow(">i2") << "be_i2.npy" << DType::Int16 << QList<double>{-2500, -1500, -500, 500, 1500, 2500};
    }
    void bigEndian()
    {
        QFETCH(QString, file);
        QFETCH(DType, dtype);
        QFETCH(QList<double>, values);
        const Result<NpyHeader> h = headerOf(fixture(file));
        KP_VERIFY_RESULT(h);
        QVERIFY(h->bigEndian);
        QVERIFY(h->descr.startsWith(QLatin1Char('>')));
        QByteArray buf(h->dataBytes, 0);
        KP_VERIFY_RESULT(loadNpyInto(fixture(file), dtype, {6}, buf.data(), buf.size()));
        for (int k = 0; k < 6; ++k) {
            QCOMPARE(loadComponent(dtype, buf.constData() + k * dtypeInfo(dtype).componentBytes), values[k]);
        }
    }

    void fortranOrder_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<QList<qint64>>("shape");
        QTest::addColumn<int>("offset"); // C-order value k - offset
        QTest::newRow("2-D f4") << "fortran2d.npy" << DType::Float32 << QList<qint64>{3, 4} << 0;
        QTest::newRow("3-D i4") << "fortran3d.npy" << DType::Int32 << QList<qint64>{2, 3, 4} << 0;
        QTest::newRow("2-D >i2") << "fortran_be.npy" << DType::Int16 << QList<qint64>{3, 4} << 5;
    }
    void fortranOrder()
    {
        QFETCH(QString, file);
        QFETCH(DType, dtype);
        QFETCH(QList<qint64>, shape);
        QFETCH(int, offset);
        const Result<NpyHeader> h = headerOf(fixture(file));
        KP_VERIFY_RESULT(h);
        QVERIFY(h->fortranOrder);
        QCOMPARE(h->shape, shape);
        QByteArray buf(h->dataBytes, 0);
        KP_VERIFY_RESULT(loadNpyInto(fixture(file), dtype, shape, buf.data(), buf.size()));
        const int cb = dtypeInfo(dtype).componentBytes;
        for (qint64 k = 0; k < h->elementCount(); ++k) {
            QCOMPARE(loadComponent(dtype, buf.constData() + k * cb), static_cast<double>(k - offset));
        }
    }

    void fortranThroughSmallChunks()
    {
        // A Fortran-order array larger than the 1 MiB chunk buffer, made by
        // hand: element (r, c) of a 700 x 500 int32 array holds r * 1000 + c.
        const qint64 rows = 700;
        const qint64 cols = 500;
        QByteArray data(rows * cols * 4, Qt::Uninitialized);
        for (qint64 c = 0; c < cols; ++c) {
            for (qint64 r = 0; r < rows; ++r) {
                const qint32 v = static_cast<qint32>(r * 1000 + c);
                std::memcpy(data.data() + (c * rows + r) * 4, &v, 4);
            }
        }
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("big.npy"));
        QVERIFY(writeAll(path, makeNpy(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (700, 500), }", data)));
        QByteArray buf(data.size(), 0);
        KP_VERIFY_RESULT(loadNpyInto(path, DType::Int32, {rows, cols}, buf.data(), buf.size()));
        for (qint64 r = 0; r < rows; r += 37) {
            for (qint64 c = 0; c < cols; c += 13) {
                qint32 v;
                std::memcpy(&v, buf.constData() + (r * cols + c) * 4, 4);
                QCOMPARE(v, static_cast<qint32>(r * 1000 + c));
            }
        }
    }

    void versions_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("major");
        QTest::addColumn<DType>("dtype");
        QTest::newRow("2.0") << "v2.npy" << 2 << DType::Float64;
        QTest::newRow("3.0") << "v3.npy" << 3 << DType::Int32;
    }
    void versions()
    {
        QFETCH(QString, file);
        QFETCH(int, major);
        QFETCH(DType, dtype);
        const Result<NpyHeader> h = headerOf(fixture(file));
        KP_VERIFY_RESULT(h);
        QCOMPARE(h->majorVersion, major);
        QCOMPARE(h->dataOffset % 64, 0);
        QByteArray buf(h->dataBytes, 0);
        KP_VERIFY_RESULT(loadNpyInto(fixture(file), dtype, {5}, buf.data(), buf.size()));
        for (int k = 0; k < 5; ++k) {
            QCOMPARE(loadComponent(dtype, buf.constData() + k * dtypeInfo(dtype).componentBytes), double(k));
        }
    }

    void utf8HeaderInVersion3()
    {
        // Version 3.0 headers are utf8; an extra key with non-latin1 text must not upset the parser.
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("u.npy"));
        const QByteArray header = QStringLiteral("{'descr': '<u2', 'fortran_order': False, 'shape': (2,), "
                                                 "'note': '\u03c0 \u2192 \u221e', }")
                                      .toUtf8();
        QVERIFY(writeAll(path, makeNpy(3, header, QByteArray("\x01\x00\x02\x00", 4))));
        QByteArray buf(4, 0);
        KP_VERIFY_RESULT(loadNpyInto(path, DType::UInt16, {2}, buf.data(), buf.size()));
        QCOMPARE(loadComponent(DType::UInt16, buf.constData() + 2), 2.0);
    }

    void handWrittenHeader()
    {
        // Keys in any order, double quotes, Python 2 longs, no trailing comma.
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("h.npy"));
        QVERIFY(writeAll(
            path, makeNpy(1, "{\"shape\": (2L, 3L), 'fortran_order': False, 'descr': '=i2'}", QByteArray(12, '\x01'))));
        const Result<NpyHeader> h = headerOf(path);
        KP_VERIFY_RESULT(h);
        QCOMPARE(h->shape, (QList<qint64>{2, 3}));
        QCOMPARE(h->dtype, DType::Int16);
        QVERIFY(!h->bigEndian);
        // A list shape ([4]) was accepted here; NumPy refuses it, so it is refused now (malformed()).
    }

    void vectorDtypes()
    {
        const Result<QList<qint64>> s4 = npyShapeFor(fixture(QStringLiteral("float4.npy")), DType::Float4);
        KP_VERIFY_RESULT(s4);
        QCOMPARE(*s4, (QList<qint64>{5}));
        QByteArray f4(5 * 16, 0);
        KP_VERIFY_RESULT(loadNpyInto(fixture(QStringLiteral("float4.npy")), DType::Float4, {5}, f4.data(), f4.size()));
        for (int k = 0; k < 20; ++k) {
            QCOMPARE(loadComponent(DType::Float32, f4.constData() + 4 * k), k * 0.25);
        }
        // The same file is a plain float32 buffer of shape [5, 4].
        const Result<QList<qint64>> sf = npyShapeFor(fixture(QStringLiteral("float4.npy")), DType::Float32);
        KP_VERIFY_RESULT(sf);
        QCOMPARE(*sf, (QList<qint64>{5, 4}));

        const Result<QList<qint64>> su = npyShapeFor(fixture(QStringLiteral("uchar4.npy")), DType::UChar4);
        KP_VERIFY_RESULT(su);
        QCOMPARE(*su, (QList<qint64>{2, 3}));
        QByteArray u4(24, 0);
        KP_VERIFY_RESULT(loadNpyInto(fixture(QStringLiteral("uchar4.npy")), DType::UChar4, {2, 3}, u4.data(), 24));
        for (int k = 0; k < 24; ++k) {
            QCOMPARE(static_cast<uchar>(u4[k]), static_cast<uchar>(k * 10));
        }

        // float2 needs a last dimension of 2.
        const Result<QList<qint64>> bad = npyShapeFor(fixture(QStringLiteral("float4.npy")), DType::Float2, "v");
        QVERIFY(!bad);
        QCOMPARE(bad.error().message, QStringLiteral("float4.npy has shape (5, 4); buffer 'v' is float2 and needs a "
                                                     "last dimension of 2 components, e.g. (n, 2)"));
        QByteArray f2(5 * 8, 0);
        const Status wrong =
            loadNpyInto(fixture(QStringLiteral("float4.npy")), DType::Float4, {4}, f4.data(), 4 * 16, "v");
        QVERIFY(!wrong);
        QCOMPARE(wrong.error().message, QStringLiteral("float4.npy has shape (5, 4); buffer 'v' is float4 of shape [4] "
                                                       "and needs (4, 4) (a trailing dimension of 4 components)"));
    }

    void zeroDimensional()
    {
        const Result<NpyHeader> h = headerOf(fixture(QStringLiteral("zerod.npy")));
        KP_VERIFY_RESULT(h);
        QVERIFY(h->zeroDim);
        QCOMPARE(h->shape, (QList<qint64>{1}));
        QCOMPARE(h->dataBytes, 8);
        const Result<QList<qint64>> s = npyShapeFor(fixture(QStringLiteral("zerod.npy")), DType::Float64);
        KP_VERIFY_RESULT(s);
        QCOMPARE(*s, (QList<qint64>{1}));
        double v = 0;
        KP_VERIFY_RESULT(loadNpyInto(fixture(QStringLiteral("zerod.npy")), DType::Float64, {1}, &v, 8));
        QCOMPARE(v, 3.5);
        QByteArray two(16, 0);
        const Status bad = loadNpyInto(fixture(QStringLiteral("zerod.npy")), DType::Float64, {2}, two.data(), 16, "s");
        QVERIFY(!bad);
        QCOMPARE(bad.error().message,
                 QStringLiteral("zerod.npy has shape () (a 0-d array, read as shape [1]); buffer 's' has shape [2]: "
                                "reshape the array, or set the buffer's shape to the file's (an empty shape takes it "
                                "from the file)"));
    }

    void refusedFixtures_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("message");
        QTest::newRow("object") << "object.npy"
                                << "object.npy: object arrays (|O) cannot be loaded: save with a numeric dtype";
        QTest::newRow("structured") << "structured.npy"
                                    << "structured.npy: structured dtype mixing '<f4' and '<i4'; a buffer can hold a "
                                       "structured dtype only as a CUDA vector: 1 to 4 fields of one numeric type, "
                                       "e.g. [('x', '<f4'), ('y', '<f4')] for float2";
        QTest::newRow("empty") << "empty.npy"
                               << "empty.npy holds an empty array (shape (0, 4)); a buffer needs at least one element";
    }
    void refusedFixtures()
    {
        QFETCH(QString, file);
        QFETCH(QString, message);
        const Result<QList<qint64>> s = npyShapeFor(fixture(file), DType::Float32);
        QVERIFY(!s);
        QCOMPARE(s.error().where, QStringLiteral("buffers"));
        QCOMPARE(s.error().code, Error::Code::BadInput);
        QCOMPARE(s.error().message, message);
    }

    void randomValues()
    {
        QFile txt(fixture(QStringLiteral("random_f8.txt")));
        QVERIFY(txt.open(QIODevice::ReadOnly | QIODevice::Text));
        QList<double> expected;
        while (!txt.atEnd()) {
            const QByteArray line = txt.readLine().trimmed();
            if (!line.isEmpty()) {
                bool ok = false;
                expected << line.toDouble(&ok);
                QVERIFY(ok);
            }
        }
        QCOMPARE(expected.size(), 16);
        QList<double> got(16);
        KP_VERIFY_RESULT(loadNpyInto(fixture(QStringLiteral("random_f8.npy")), DType::Float64, {16}, got.data(), 128));
        for (int i = 0; i < 16; ++i) {
            QCOMPARE(got[i], expected[i]); // repr() round-trips exactly
        }
    }

    void identicalToNumpy_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<QList<qint64>>("shape");
        QTest::newRow("float32") << "numpy_f4.npy" << DType::Float32 << QList<qint64>{7};
        QTest::newRow("int16") << "numpy_i2.npy" << DType::Int16 << QList<qint64>{3, 4};
    }
    void identicalToNumpy()
    {
        QFETCH(QString, file);
        QFETCH(DType, dtype);
        QFETCH(QList<qint64>, shape);
        QByteArray data;
        const int cb = dtypeInfo(dtype).componentBytes;
        qint64 n = 1;
        for (const qint64 e : shape) {
            n *= e;
        }
        data.resize(n * cb);
        for (qint64 k = 0; k < n; ++k) {
            const double v = dtype == DType::Float32 ? k * 1.25 : static_cast<double>(k - 6);
            storeComponent(dtype, v, data.data() + k * cb);
        }
        QTemporaryDir tmp;
        const QString out = tmp.filePath(QStringLiteral("mine.npy"));
        KP_VERIFY_RESULT(writeNpy(out, dtype, shape, data.constData()));
        QCOMPARE(readAll(out), readAll(fixture(file)));
        QCOMPARE(npyHeaderBytes(dtype, shape), readAll(fixture(file)).left(npyHeaderBytes(dtype, shape).size()));
    }

    void roundTrip_data()
    {
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<QList<qint64>>("shape");
        for (int t = 0; t < kDTypeCount; ++t) {
            const DType d = static_cast<DType>(t);
            for (const QList<qint64> &shape : {QList<qint64>{7}, QList<qint64>{3, 5}, QList<qint64>{2, 3, 4}}) {
                QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(dtypeName(d), shapeToString(shape))))
                    << d << shape;
            }
        }
    }
    void roundTrip()
    {
        QFETCH(DType, dtype);
        QFETCH(QList<qint64>, shape);
        const DTypeInfo &info = dtypeInfo(dtype);
        qint64 n = 1;
        for (const qint64 e : shape) {
            n *= e;
        }
        const QByteArray data = patternBytes(n * info.elementBytes(), static_cast<quint64>(dtype) + 1);
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("rt.npy"));
        KP_VERIFY_RESULT(writeNpy(path, dtype, shape, data.constData()));

        const Result<NpyHeader> h = headerOf(path);
        KP_VERIFY_RESULT(h);
        QCOMPARE(h->dtype, info.component == DType::BFloat16 ? DType::UInt16 : info.component);
        QList<qint64> fileShape = shape;
        if (info.components > 1) {
            fileShape << info.components;
        }
        QCOMPARE(h->shape, fileShape);
        QCOMPARE(h->dataOffset % 64, 0);
        QCOMPARE(h->descr, npyDescr(info.component));
        QCOMPARE(h->descr, QString(info.component == DType::Float16    ? "<f2"
                                   : info.component == DType::BFloat16 ? "<u2"
                                                                       : h->descr));

        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        KP_VERIFY_RESULT(readNpyHeader(f, QStringLiteral("rt.npy")));
        QByteArray raw(h->dataBytes, 0);
        KP_VERIFY_RESULT(readNpyData(f, *h, raw.data(), raw.size()));
        QCOMPARE(raw, data);

        const Result<QList<qint64>> s = npyShapeFor(path, dtype);
        KP_VERIFY_RESULT(s);
        QCOMPARE(*s, shape);
        QByteArray loaded(data.size(), 0);
        KP_VERIFY_RESULT(loadNpyInto(path, dtype, shape, loaded.data(), loaded.size()));
        QCOMPARE(loaded, data);
    }

    // --- Vectors as numpy records: [('x', '<f4'), ('y', '<f4')] ---
    void structuredRoundTrip_data()
    {
        QTest::addColumn<DType>("dtype");
        for (int t = 0; t < kDTypeCount; ++t) {
            const DType d = static_cast<DType>(t);
            if (dtypeInfo(d).components > 1) {
                QTest::newRow(qPrintable(dtypeName(d))) << d;
            }
        }
    }
    void structuredRoundTrip()
    {
        QFETCH(DType, dtype);
        const DTypeInfo &info = dtypeInfo(dtype);
        const QList<qint64> shape{3, 5};
        const QByteArray data = patternBytes(15 * info.elementBytes(), static_cast<quint64>(dtype) + 7);
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("rec.npy"));
        KP_VERIFY_RESULT(writeNpy(path, dtype, shape, data.constData(), NpyVectorLayout::Structured));
        const Result<NpyHeader> h = headerOf(path);
        KP_VERIFY_RESULT(h);
        QCOMPARE(h->shape, shape); // one record per element: no trailing axis
        QCOMPARE(h->fields, info.components);
        const QString d = npyDescr(info.component);
        QStringList fields;
        for (int c = 0; c < info.components; ++c) {
            fields << QStringLiteral("('%1', '%2')").arg(QChar("xyzw"[c]), d);
        }
        QCOMPARE(h->descr, QStringLiteral("[%1]").arg(fields.join(", ")));
        QCOMPARE(h->dataOffset % 64, 0);
        QCOMPARE(h->dataBytes, data.size());
        const Result<QList<qint64>> s = npyShapeFor(path, dtype);
        KP_VERIFY_RESULT(s);
        QCOMPARE(*s, shape);
        QByteArray loaded(data.size(), 0);
        KP_VERIFY_RESULT(loadNpyInto(path, dtype, shape, loaded.data(), loaded.size()));
        QCOMPARE(loaded, data);
    }

    // Headers as numpy 1.26 writes np.save(f, np.zeros(2, dtype=[...])), big-endian and Fortran order included.
    void structuredHeaders_data()
    {
        QTest::addColumn<QByteArray>("dict");
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<QString>("message"); // empty: loads
        QTest::newRow("float2 x, y") << QByteArray("{'descr': [('x', '<f4'), ('y', '<f4')], 'fortran_order': False, "
                                                   "'shape': (2,), }")
                                     << DType::Float2 << "";
        QTest::newRow("uchar4 r, g, b, a, any names")
            << QByteArray("{'descr': [('r', '|u1'), ('g', '|u1'), ('b', '|u1'), ('a', '|u1')], 'fortran_order': "
                          "False, 'shape': (2,), }")
            << DType::UChar4 << "";
        QTest::newRow("big-endian int2") << QByteArray("{'descr': [('x', '>i4'), ('y', '>i4')], 'fortran_order': "
                                                       "False, 'shape': (2,), }")
                                         << DType::Int2 << "";
        QTest::newRow("float2 into float4") << QByteArray("{'descr': [('x', '<f4'), ('y', '<f4')], 'fortran_order': "
                                                          "False, 'shape': (2,), }")
                                            << DType::Float4
                                            << "s.npy has shape (2,); buffer 'b' is float4 of shape [2] and needs "
                                               "(2, 4) (a trailing dimension of 4 components)";
        QTest::newRow("five fields") << QByteArray("{'descr': [('a', '<f4'), ('b', '<f4'), ('c', '<f4'), ('d', "
                                                   "'<f4'), ('e', '<f4')], 'fortran_order': False, 'shape': (2,), }")
                                     << DType::Float4
                                     << "s.npy: structured dtype with 5 fields; a buffer can hold a structured dtype "
                                        "only as a CUDA vector: 1 to 4 fields of one numeric type, e.g. [('x', "
                                        "'<f4'), ('y', '<f4')] for float2";
        QTest::newRow("sub-array field") << QByteArray("{'descr': [('v', '<f4', (4,))], 'fortran_order': False, "
                                                       "'shape': (2,), }")
                                         << DType::Float4
                                         << "s.npy: structured dtype with field 'v' that is a sub-array; a buffer can "
                                            "hold a structured dtype only as a CUDA vector: 1 to 4 fields of one "
                                            "numeric type, e.g. [('x', '<f4'), ('y', '<f4')] for float2";
        QTest::newRow("nested record") << QByteArray("{'descr': [('p', [('x', '<f4')])], 'fortran_order': False, "
                                                     "'shape': (2,), }")
                                       << DType::Float2
                                       << "s.npy: structured dtype with field 'p' that is itself a record or padding; "
                                          "a buffer can hold a structured dtype only as a CUDA vector: 1 to 4 fields "
                                          "of one numeric type, e.g. [('x', '<f4'), ('y', '<f4')] for float2";
    }
    void structuredHeaders()
    {
        QFETCH(QByteArray, dict);
        QFETCH(DType, dtype);
        QFETCH(QString, message);
        QByteArray header = dict;
        while ((10 + header.size() + 1) % 64 != 0) {
            header += ' ';
        }
        header += '\n';
        QByteArray bytes("\x93NUMPY\x01\x00", 8);
        bytes += char(header.size() & 0xff);
        bytes += char(header.size() >> 8);
        bytes += header;
        const DTypeInfo &info = dtypeInfo(dtype);
        QByteArray values(2 * info.elementBytes(), 0);
        for (qsizetype i = 0; i < values.size(); ++i) {
            values[i] = char(i + 1);
        }
        bytes += values;
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("s.npy"));
        QVERIFY(writeAll(path, bytes));
        QByteArray loaded(values.size(), 0);
        const Status st = loadNpyInto(path, dtype, {2}, loaded.data(), loaded.size(), "b");
        if (!message.isEmpty()) {
            QVERIFY(!st);
            QCOMPARE(st.error().message, message);
            return;
        }
        KP_VERIFY_RESULT(st);
        if (dict.contains("'>")) {
            // Big-endian fields are swapped one by one, each in its place.
            for (qsizetype i = 0; i < values.size(); i += 4) {
                std::reverse(values.begin() + i, values.begin() + i + 4);
            }
        }
        QCOMPARE(loaded, values);
    }

    void malformed_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("message");
        const QByteArray f4x10 = "{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }";
        QTest::newRow("bad magic") << QByteArray("\x93NUMPZ\x01\x00\x10\x00{}              \n", 26)
                                   << "m.npy: not a .npy file (it does not start with \\x93NUMPY)";
        QTest::newRow("png instead") << QByteArray("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16)
                                     << "m.npy: not a .npy file (it does not start with \\x93NUMPY)";
        QTest::newRow("three bytes") << QByteArray("\x93NU", 3)
                                     << "m.npy: not a .npy file (only 3 bytes; a .npy file starts with \\x93NUMPY, "
                                        "two version bytes and the header length)";
        QTest::newRow("empty file") << QByteArray()
                                    << "m.npy: not a .npy file (only 0 bytes; a .npy file starts with \\x93NUMPY, two "
                                       "version bytes and the header length)";
        QTest::newRow("version 4") << makeNpy(1, f4x10, QByteArray(40, 0)).replace(6, 1, "\x04")
                                   << "m.npy: .npy format version 4.0 is not supported (only 1.0, 2.0 and 3.0)";
        // NumPy reads only 1.0, 2.0 and 3.0; these were accepted.
        QTest::newRow("version 1.1") << makeNpy(1, f4x10, QByteArray(40, 0)).replace(7, 1, "\x01")
                                     << "m.npy: .npy format version 1.1 is not supported (only 1.0, 2.0 and 3.0)";
        QTest::newRow("version 3.7") << makeNpy(3, f4x10, QByteArray(40, 0)).replace(7, 1, "\x07")
                                     << "m.npy: .npy format version 3.7 is not supported (only 1.0, 2.0 and 3.0)";
        QTest::newRow("list shape") << makeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': [10], }",
                                               QByteArray(40, 0))
                                    << "m.npy: header 'shape' must be a tuple of integers such as (4,), got a list";
        QTest::newRow("integer shape")
            << makeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (10), }", QByteArray(40, 0))
            << "m.npy: header 'shape' must be a tuple of integers such as (4,), got an integer";
        QTest::newRow("length field cut") << QByteArray("\x93NUMPY\x01\x00\x40", 9)
                                          << "m.npy: truncated: the file ends inside the 2-byte header length field";
        QTest::newRow("truncated header") << makeNpy(1, f4x10, {}).left(40)
                                          << "m.npy: the header length field says 118 bytes but only 30 follow (the "
                                             "file is truncated or not a .npy file)";
        QTest::newRow("header length past the end")
            << makeNpy(1, f4x10, QByteArray(40, 0), 500)
            << "m.npy: the header length field says 500 bytes but only 158 follow (the file is truncated or not a "
               ".npy file)";
        QTest::newRow("huge header length")
            << makeNpy(2, f4x10, QByteArray(40, 0), 0x7fffffff)
            << "m.npy: the header length field says 2147483647 bytes, more than the 1048576 bytes any array needs: "
               "the file is damaged or not a .npy file";
        QTest::newRow("data too short")
            << makeNpy(1, f4x10, QByteArray(12, 0))
            << "m.npy is truncated: the data needs 40 bytes after the header, the file has 12 bytes (28 bytes missing)";
        QTest::newRow("negative extent") << makeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, -4), }",
                                                    QByteArray(48, 0))
                                         << "m.npy: shape (3, -4) has a negative extent";
        QTest::newRow("product overflows")
            << makeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }", {})
            << "m.npy: shape (4294967296, 4294967296, 4) of '<f4' is too large: its byte size overflows 64 bits";
        QTest::newRow("over the buffer limit")
            << makeNpy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 100000), }", {})
            << "m.npy: shape (100000, 100000) of '<f8' is 80000000000 bytes, more than the 68719476736 bytes a "
               "buffer may hold";
        QTest::newRow("integer past 64 bits")
            << makeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", {})
            << "m.npy: the header is not a valid Python literal (integer 99999999999999999999 does not fit in 64 "
               "bits at offset 51): {'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }";
        QTest::newRow("unknown descr")
            << makeNpy(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", QByteArray(16, 0))
            << "m.npy: unsupported dtype '<c8'; allowed: i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 b1, with byte order '<', "
               "'>', '|' or '='";
        QTest::newRow("datetime descr")
            << makeNpy(1, "{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (2,), }", QByteArray(16, 0))
            << "m.npy: unsupported dtype '<M8[ns]'; allowed: i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 b1, with byte order "
               "'<', '>', '|' or '='";
        QTest::newRow("missing key") << makeNpy(1, "{'descr': '<f4', 'fortran_order': False, }", QByteArray(4, 0))
                                     << "m.npy: the header lacks 'shape' (it has 'descr', 'fortran_order'; a .npy "
                                        "header needs 'descr', 'fortran_order' and 'shape')";
        QTest::newRow("empty dict") << makeNpy(1, "{}", {})
                                    << "m.npy: the header lacks 'descr', 'fortran_order', 'shape' (it has no keys; a "
                                       ".npy header needs 'descr', 'fortran_order' and 'shape')";
        QTest::newRow("not a dict") << makeNpy(1, "[1, 2]", {}) << "m.npy: the header is not a Python dict: [1, 2]";
        QTest::newRow("unterminated") << makeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,", {})
                                      << "m.npy: the header is not a valid Python literal (unterminated tuple at "
                                         "offset 54): {'descr': '<f4', 'fortran_order': False, 'shape': (2,";
        QTest::newRow("fortran_order not bool")
            << makeNpy(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", QByteArray(8, 0))
            << "m.npy: header 'fortran_order' is not True or False";
        QTest::newRow("shape of strings")
            << makeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': ('2',), }", QByteArray(8, 0))
            << "m.npy: header 'shape' must be a tuple of integers";
        QTest::newRow("descr not a string")
            << makeNpy(1, "{'descr': 4, 'fortran_order': False, 'shape': (2,), }", QByteArray(8, 0))
            << "m.npy: header 'descr' is not a string";
        QTest::newRow("unknown name")
            << makeNpy(1, "{'descr': '<f4', 'fortran_order': Nope, 'shape': (2,), }", QByteArray(8, 0))
            << "m.npy: the header is not a valid Python literal (unexpected name 'Nope' at offset 34): {'descr': "
               "'<f4', 'fortran_order': Nope, 'shape': (2,), }";
    }
    void malformed()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, message);
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("m.npy"));
        QVERIFY(writeAll(path, bytes));
        const Result<QList<qint64>> s = npyShapeFor(path, DType::Float32);
        QVERIFY(!s);
        QCOMPARE(s.error().message, message);
        QCOMPARE(s.error().code, Error::Code::BadInput);
        QByteArray buf(40, 0);
        QVERIFY(!loadNpyInto(path, DType::Float32, {10}, buf.data(), buf.size()));
    }

    void dtypeMismatch_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<QString>("message");
        QTest::newRow("f8 into float32")
            << "le_f8.npy" << DType::Float32
            << "le_f8.npy holds float64 ('<f8'); buffer 'a' is float32: convert with a.astype(np.float32)";
        QTest::newRow("i4 into float4") << "le_i4.npy" << DType::Float4
                                        << "le_i4.npy holds int32 ('<i4'); buffer 'a' is float4 (4 x float32): "
                                           "convert with a.astype(np.float32)";
        QTest::newRow("bool into int8")
            << "le_b1.npy" << DType::Int8
            << "le_b1.npy holds bool ('|b1'); buffer 'a' is int8: convert with a.astype(np.int8)";
        QTest::newRow("f4 into bfloat16") << "le_f4.npy" << DType::BFloat16
                                          << "le_f4.npy holds float32 ('<f4'); buffer 'a' is bfloat16: numpy has no "
                                             "bfloat16: save the raw bits as uint16 ('<u2')";
    }
    void dtypeMismatch()
    {
        QFETCH(QString, file);
        QFETCH(DType, dtype);
        QFETCH(QString, message);
        QByteArray buf(12 * dtypeInfo(dtype).elementBytes(), 0);
        const Status s = loadNpyInto(fixture(file), dtype, {3, 4}, buf.data(), buf.size(), QStringLiteral("a"));
        QVERIFY(!s);
        QCOMPARE(s.error().message, message);
        const Result<QList<qint64>> shape = npyShapeFor(fixture(file), dtype, QStringLiteral("a"));
        QVERIFY(!shape);
        QCOMPARE(shape.error().message, message);
    }

    void shapeMismatch()
    {
        QByteArray buf(4 * 12, 0);
        const Status s = loadNpyInto(fixture(QStringLiteral("le_f4.npy")), DType::Float32, {4, 3}, buf.data(),
                                     buf.size(), QStringLiteral("a"));
        QVERIFY(!s);
        QCOMPARE(s.error().message, QStringLiteral("le_f4.npy has shape (3, 4); buffer 'a' has shape [4, 3]: reshape "
                                                   "the array, or set the buffer's shape to the file's (an empty "
                                                   "shape takes it from the file)"));
        // Unnamed buffers still get a sentence.
        const Status u = loadNpyInto(fixture(QStringLiteral("le_f4.npy")), DType::Float32, {12}, buf.data(), 48);
        QVERIFY(!u);
        QVERIFY2(u.error().message.contains(QStringLiteral("the buffer has shape [12]")),
                 qPrintable(u.error().message));
    }

    void tooManyDimensions()
    {
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("d4.npy"));
        const QByteArray data(16 * 4, 0);
        KP_VERIFY_RESULT(writeNpy(path, DType::Float32, {2, 2, 2, 2}, data.constData()));
        const Result<QList<qint64>> s = npyShapeFor(path, DType::Float32, QStringLiteral("a"));
        QVERIFY(!s);
        QCOMPARE(s.error().message, QStringLiteral("d4.npy has shape (2, 2, 2, 2): a float32 buffer has 1 to 3 "
                                                   "dimensions"));
        // As a float2 buffer the last dimension is the components: shape [2, 2, 2].
        const Result<QList<qint64>> v = npyShapeFor(path, DType::Float2);
        KP_VERIFY_RESULT(v);
        QCOMPARE(*v, (QList<qint64>{2, 2, 2}));
    }

    void missingFileAndBadDestination()
    {
        const Result<QList<qint64>> s = npyShapeFor(QStringLiteral("/nonexistent/x.npy"), DType::Float32);
        QVERIFY(!s);
        QVERIFY2(s.error().message.startsWith(QStringLiteral("cannot open /nonexistent/x.npy: ")),
                 qPrintable(s.error().message));

        QFile f(fixture(QStringLiteral("le_f4.npy")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const Result<NpyHeader> h = readNpyHeader(f, QStringLiteral("le_f4.npy"));
        KP_VERIFY_RESULT(h);
        QByteArray small(8, 0);
        const Status d = readNpyData(f, *h, small.data(), small.size(), QStringLiteral("le_f4.npy"));
        QVERIFY(!d);
        QCOMPARE(d.error().message,
                 QStringLiteral("le_f4.npy: the data is 48 bytes but the destination holds 8 bytes"));

        const QByteArray data(16, 0);
        const Status w = writeNpy(QStringLiteral("/nonexistent/dir/out.npy"), DType::Float32, {4}, data.constData());
        QVERIFY(!w);
        QVERIFY2(w.error().message.startsWith(QStringLiteral("cannot write /nonexistent/dir/out.npy: ")),
                 qPrintable(w.error().message));
    }

    void specialFiles_data()
    {
        QTest::addColumn<QString>("file"); // FIFO and FOLDER are made in a temporary folder
        QTest::addColumn<QString>("reason");
        QTest::newRow("FIFO") << "FIFO"
                              << "it is a FIFO (named pipe), not a regular file";
        QTest::newRow("/dev/zero") << "/dev/zero"
                                   << "it is a character device, not a regular file";
        QTest::newRow("folder") << "FOLDER"
                                << "it is a folder, not a regular file";
    }

    void specialFiles()
    {
        // An .npy init that was a FIFO blocked kpg run for ever; each is now
        // refused before it is opened, so nothing here can block.
        QFETCH(QString, file);
        QFETCH(QString, reason);
        QTemporaryDir tmp;
        if (file == QLatin1String("FIFO")) {
            file = tmp.filePath(QStringLiteral("f.npy"));
            QCOMPARE(::mkfifo(QFile::encodeName(file).constData(), 0600), 0);
        } else if (file == QLatin1String("FOLDER")) {
            file = tmp.path();
        }
        const QString expected = QStringLiteral("cannot open %1: %2").arg(file, reason);
        const Result<QList<qint64>> s = npyShapeFor(file, DType::Float32);
        QVERIFY(!s);
        QCOMPARE(s.error().message, expected);
        QByteArray buf(40, 0);
        const Status l = loadNpyInto(file, DType::Float32, {10}, buf.data(), buf.size());
        QVERIFY(!l);
        QCOMPARE(l.error().message, expected);
    }

    void writeIntoDevices()
    {
        // QSaveFile's rename turned /dev/null into a regular file (as root).
        const QByteArray data(16, 0);
        KP_VERIFY_RESULT(writeNpy(QStringLiteral("/dev/null"), DType::Float32, {4}, data.constData()));
        struct stat st;
        QCOMPARE(::stat("/dev/null", &st), 0);
        QVERIFY(S_ISCHR(st.st_mode));
        const Status full = writeNpy(QStringLiteral("/dev/full"), DType::Float32, {4}, data.constData());
        QVERIFY(!full);
        QCOMPARE(full.error().message, QStringLiteral("cannot write /dev/full: no space left on device"));
        QCOMPARE(::stat("/dev/full", &st), 0);
        QVERIFY(S_ISCHR(st.st_mode));
    }

    void fromMemoryDevice()
    {
        // readNpyHeader/readNpyData work on any QIODevice, not only files.
        QByteArray bytes = readAll(fixture(QStringLiteral("be_i2.npy")));
        QBuffer dev(&bytes);
        QVERIFY(dev.open(QIODevice::ReadOnly));
        const Result<NpyHeader> h = readNpyHeader(dev, QStringLiteral("mem"));
        KP_VERIFY_RESULT(h);
        QCOMPARE(dev.pos(), h->dataOffset);
        qint16 v[6];
        KP_VERIFY_RESULT(readNpyData(dev, *h, v, sizeof v));
        QCOMPARE(v[0], qint16(-2500));
        QCOMPARE(v[5], qint16(2500));
    }

    void headerLayout()
    {
        // numpy: "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }" + 20 spaces of growth room.
        const QByteArray h = npyHeaderBytes(DType::Float4, {3});
        QCOMPARE(h.size() % 64, 0);
        QVERIFY(h.endsWith('\n'));
        QVERIFY(h.contains("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }"));
        QCOMPARE(h[6], '\x01');
        QCOMPARE(npyDescr(DType::BFloat16), QStringLiteral("<u2"));
        QCOMPARE(npyDescr(DType::Int8), QStringLiteral("|i1"));
        QCOMPARE(npyDescr(DType::UChar4), QStringLiteral("|u1"));
    }
};

QTEST_GUILESS_MAIN(TestNpy)
#include "tst_npy.moc"
