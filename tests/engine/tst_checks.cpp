// Checks on the host (docs/checks.md): tolerances, ULP distance in the
// buffer's dtype, NaN and Inf, exact integers, regions in 1-D/2-D/3-D, the
// mismatch report, expression variables, npy files, parse errors with their
// paths, seed runs, and the JSON and text forms. No GPU needed.

#include "buffers/bufferinit.h"
#include "buffers/npy.h"
#include "check/checkedrun.h"
#include "check/checkeval.h"
#include "check/checkjson.h"
#include "project/orderedjson.h"
#include "project/projectio.h"
#include "run/runner.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace Kp;

namespace {

/** Host bytes of one buffer, with a view on them. */
struct HostData
{
    DType dtype = DType::Float32;
    QList<qint64> shape;
    QByteArray bytes;

    BufferView view() const { return BufferView{dtype, shape, bytes.constData(), bytes.size()}; }
    qint64 count() const { return shapeElementCount(shape) * dtypeInfo(dtype).components; }
    void set(qint64 k, double v)
    {
        const int cb = dtypeInfo(dtype).componentBytes;
        storeComponent(dtypeInfo(dtype).component, v, bytes.data() + k * cb);
    }
    double get(qint64 k) const
    {
        const int cb = dtypeInfo(dtype).componentBytes;
        return loadComponent(dtypeInfo(dtype).component, bytes.constData() + k * cb);
    }
};

HostData makeData(DType dtype, const QList<qint64> &shape)
{
    HostData d;
    d.dtype = dtype;
    d.shape = shape;
    d.bytes = QByteArray(shapeElementCount(shape) * dtypeInfo(dtype).elementBytes(), 0);
    return d;
}

BufferSpec specFor(const QString &name, DType dtype, const QList<qint64> &shape)
{
    BufferSpec b;
    b.name = name;
    b.dtype = dtype;
    b.shape = shape;
    return b;
}

/** Parses one check (JSON text) against buffers; fails the test on an error. */
CheckSpec parseCheck(const QByteArray &json, const QList<BufferSpec> &buffers)
{
    const QJsonDocument doc = QJsonDocument::fromJson("[" + json + "]");
    Result<QList<CheckSpec>> r = checksFromJson(doc.array(), buffers);
    if (!r) {
        qWarning("%s", qPrintable(r.error().message));
        return CheckSpec{};
    }
    return r->first();
}

float floatOf(quint32 u)
{
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

} // namespace

class TestChecks : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // --- One element against one expected value ---
    void tolerance_data()
    {
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<double>("got");      // stored in dtype (rounded)
        QTest::addColumn<double>("expected"); // a float64 reference buffer: exact
        QTest::addColumn<QString>("extra");   // more keys of the check
        QTest::addColumn<bool>("passes");

        const double one = 1.0;
        const double f32ulp = std::ldexp(1.0, -23);
        const double f16ulp = std::ldexp(1.0, -10);
        const double bf16ulp = std::ldexp(1.0, -7);
        QTest::newRow("float32 equal") << "float32" << 0.25 << 0.25 << "" << true;
        QTest::newRow("float32 default rel 1e-5 inside") << "float32" << 1000.0 << 1000.009 << "" << true;
        QTest::newRow("float32 default rel 1e-5 outside") << "float32" << 1000.0 << 1000.02 << "" << false;
        QTest::newRow("float32 default abs 1e-6 near 0 inside") << "float32" << 0.0 << 9e-7 << "" << true;
        QTest::newRow("float32 default abs 1e-6 near 0 outside") << "float32" << 0.0 << 2e-6 << "" << false;
        QTest::newRow("float32 abs given") << "float32" << 1.0 << 1.4 << R"("tolerance": {"abs": 0.5})" << true;
        QTest::newRow("float32 abs given, too far")
            << "float32" << 1.0 << 1.6 << R"("tolerance": {"abs": 0.5})" << false;
        QTest::newRow("float32 rel given") << "float32" << 110.0 << 100.0 << R"("tolerance": {"rel": 0.1})" << true;
        QTest::newRow("float32 rel given, too far")
            << "float32" << 111.0 << 100.0 << R"("tolerance": {"rel": 0.1})" << false;
        // A tolerance that names only ulp has abs = rel = 0.
        QTest::newRow("float32 4 ulp of 4")
            << "float32" << one + 4 * f32ulp << one << R"("tolerance": {"ulp": 4})" << true;
        QTest::newRow("float32 5 ulp of 4")
            << "float32" << one + 5 * f32ulp << one << R"("tolerance": {"ulp": 4})" << false;
        QTest::newRow("float32 ulp below 1: half the step")
            << "float32" << one - 4 * f32ulp / 2 << one << R"("tolerance": {"ulp": 4})" << true;
        QTest::newRow("float32 ulp 0: the expected value rounded")
            << "float32" << 0.1 << 0.1 << R"("tolerance": {"ulp": 0})" << true;
        QTest::newRow("float32 -0 == +0 in ulp") << "float32" << -0.0 << 0.0 << R"("tolerance": {"ulp": 0})" << true;
        QTest::newRow("float32 across zero: 2 ulp")
            << "float32" << double(floatOf(0x80000001u)) << double(floatOf(0x00000001u)) << R"("tolerance": {"ulp": 2})"
            << true;
        QTest::newRow("float32 across zero: 1 ulp is not enough")
            << "float32" << double(floatOf(0x80000001u)) << double(floatOf(0x00000001u)) << R"("tolerance": {"ulp": 1})"
            << false;
        QTest::newRow("float16 default inside") << "float16" << one + 8 * f16ulp << one << "" << true;
        QTest::newRow("float16 default outside") << "float16" << one + 16 * f16ulp << one << "" << false;
        QTest::newRow("float16 2 ulp of 2")
            << "float16" << one + 2 * f16ulp << one << R"("tolerance": {"ulp": 2})" << true;
        QTest::newRow("float16 3 ulp of 2")
            << "float16" << one + 3 * f16ulp << one << R"("tolerance": {"ulp": 2})" << false;
        QTest::newRow("float16 ulp in its own dtype: 1 ulp at 2048")
            << "float16" << 2050.0 << 2048.0 << R"("tolerance": {"ulp": 1})" << true;
        QTest::newRow("bfloat16 1 ulp of 1")
            << "bfloat16" << one + bf16ulp << one << R"("tolerance": {"ulp": 1})" << true;
        QTest::newRow("bfloat16 2 ulp of 1")
            << "bfloat16" << one + 2 * bf16ulp << one << R"("tolerance": {"ulp": 1})" << false;
        QTest::newRow("float64 default inside") << "float64" << 1.0 + 1e-13 << 1.0 << "" << true;
        QTest::newRow("float64 default outside") << "float64" << 1.0 + 1e-11 << 1.0 << "" << false;
        QTest::newRow("float64 1 ulp of 1")
            << "float64" << std::nextafter(1.0, 2.0) << 1.0 << R"("tolerance": {"ulp": 1})" << true;
        // NaN never passes unless asked for, and then only against NaN.
        QTest::newRow("NaN vs NaN") << "float32" << kNaN << kNaN << "" << false;
        QTest::newRow("NaN vs NaN, nan: true") << "float32" << kNaN << kNaN << R"("nan": true)" << true;
        QTest::newRow("NaN vs 1, nan: true") << "float32" << kNaN << 1.0 << R"("nan": true)" << false;
        QTest::newRow("1 vs NaN, nan: true") << "float32" << 1.0 << kNaN << R"("nan": true)" << false;
        QTest::newRow("NaN with a huge tolerance")
            << "float32" << kNaN << 1.0 << R"("tolerance": {"abs": 1e300})" << false;
        // Inf passes only when equal.
        QTest::newRow("inf vs inf") << "float32" << kInf << kInf << "" << true;
        QTest::newRow("-inf vs -inf") << "float16" << -kInf << -kInf << "" << true;
        QTest::newRow("inf vs -inf") << "float32" << kInf << -kInf << "" << false;
        QTest::newRow("inf vs FLT_MAX, huge tolerance")
            << "float32" << kInf << double(std::numeric_limits<float>::max())
            << R"("tolerance": {"abs": 1e300, "ulp": 10})" << false;
        QTest::newRow("float16 overflow to inf vs 70000") << "float16" << 70000.0 << 70000.0 << "" << false;
        // Integers: exact.
        QTest::newRow("int32 equal") << "int32" << -7.0 << -7.0 << "" << true;
        QTest::newRow("int32 off by one") << "int32" << 8.0 << 7.0 << "" << false;
        QTest::newRow("uint8 equal") << "uint8" << 255.0 << 255.0 << "" << true;
        QTest::newRow("int16 vs a fraction") << "int16" << 3.0 << 3.5 << "" << false;
        QTest::newRow("float4 component") << "float4" << 2.5 << 2.5 << "" << true;
    }

    void tolerance()
    {
        QFETCH(QString, dtype);
        QFETCH(double, got);
        QFETCH(double, expected);
        QFETCH(QString, extra);
        QFETCH(bool, passes);
        const DType t = *dtypeFromName(dtype);
        const QList<BufferSpec> specs{specFor("out", t, {1}), specFor("ref", DType::Float64, {1})};
        const QByteArray json =
            R"({"buffer": "out", "reference": "ref")" + QByteArray(extra.isEmpty() ? "" : ", ") + extra.toUtf8() + "}";
        // float4: one element of 4 components, all alike; the reference is 4 float64 values.
        const int comps = dtypeInfo(t).components;
        QList<BufferSpec> specs4 = specs;
        specs4[1].shape = {comps};
        const CheckSpec check = parseCheck(json, specs4);
        QCOMPARE(check.buffer, QString("out"));

        HostData out = makeData(t, {1});
        HostData ref = makeData(DType::Float64, {comps});
        for (int c = 0; c < comps; ++c) {
            out.set(c, got);
            ref.set(c, expected);
        }
        CheckData data;
        data.after.insert("out", out.view());
        data.reference.insert("ref", ref.view());
        const Result<CheckResult> r = evaluateCheck(check, data, 0, "checks[0]");
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->compared, qint64(comps));
        QCOMPARE(r->passed, passes);
        QCOMPARE(r->mismatches, passes ? 0 : qint64(comps));
        if (!passes) {
            QVERIFY(r->worst);
            QCOMPARE(r->first.size(), comps);
        }
    }

    void int64Exact()
    {
        // 2^53 + 1 and 2^53 are one double: a reference of the same dtype is compared as integers.
        const QList<BufferSpec> specs{specFor("out", DType::Int64, {2}), specFor("ref", DType::Int64, {2})};
        const CheckSpec check = parseCheck(R"({"buffer": "out", "reference": "ref"})", specs);
        HostData out = makeData(DType::Int64, {2});
        HostData ref = makeData(DType::Int64, {2});
        const qint64 a[2] = {(qint64(1) << 53) + 1, -5};
        const qint64 b[2] = {qint64(1) << 53, -5};
        std::memcpy(out.bytes.data(), a, 16);
        std::memcpy(ref.bytes.data(), b, 16);
        CheckData data;
        data.after.insert("out", out.view());
        data.reference.insert("ref", ref.view());
        const Result<CheckResult> r = evaluateCheck(check, data, 0);
        KP_VERIFY_RESULT(r);
        QVERIFY(!r->passed);
        QCOMPARE(r->mismatches, qint64(1));
        QCOMPARE(r->first[0].index, qint64(0));
        QVERIFY(r->exact);
    }

    void defaults()
    {
        QVERIFY(defaultTolerance(DType::Float32) == (CheckTolerance{1e-6, 1e-5, 0}));
        QVERIFY(defaultTolerance(DType::Float4) == (CheckTolerance{1e-6, 1e-5, 0}));
        QVERIFY(defaultTolerance(DType::Float64) == (CheckTolerance{1e-12, 1e-12, 0}));
        QVERIFY(defaultTolerance(DType::Float16) == (CheckTolerance{1e-3, 1e-2, 0}));
        QVERIFY(defaultTolerance(DType::BFloat16) == (CheckTolerance{1e-3, 1e-2, 0}));
    }

    // --- Regions and coordinates ---
    void regions_data()
    {
        QTest::addColumn<QList<qint64>>("shape"); // outermost first
        QTest::addColumn<QByteArray>("region");   // JSON, empty: the whole buffer
        QTest::addColumn<QList<qint64>>("bad");   // flat indices corrupted
        QTest::addColumn<qint64>("compared");
        QTest::addColumn<QList<qint64>>("found"); // flat indices reported, in order
        QTest::addColumn<QList<qint64>>("firstCoords");

        QTest::newRow("1-D whole") << QList<qint64>{100} << QByteArray() << QList<qint64>{17, 60} << qint64(100)
                                   << QList<qint64>{17, 60} << QList<qint64>{17, 0, 0};
        QTest::newRow("1-D sub-range skips 17")
            << QList<qint64>{100} << QByteArray(R"({"begin": [20], "end": [90]})") << QList<qint64>{17, 60}
            << qint64(70) << QList<qint64>{60} << QList<qint64>{60, 0, 0};
        QTest::newRow("1-D region end is exclusive")
            << QList<qint64>{100} << QByteArray(R"({"begin": [0], "end": [60]})") << QList<qint64>{60} << qint64(60)
            << QList<qint64>{} << QList<qint64>{};
        // shape [8, 16]: y 0..7, x 0..15; index = y*16 + x.
        QTest::newRow("2-D whole") << QList<qint64>{8, 16} << QByteArray() << QList<qint64>{3 * 16 + 5} << qint64(128)
                                   << QList<qint64>{53} << QList<qint64>{5, 3, 0};
        QTest::newRow("2-D tile holding it")
            << QList<qint64>{8, 16} << QByteArray(R"({"begin": [4, 2], "end": [8, 4]})")
            << QList<qint64>{3 * 16 + 5, 7 * 16 + 15} << qint64(8) << QList<qint64>{53} << QList<qint64>{5, 3, 0};
        QTest::newRow("2-D tile beside it")
            << QList<qint64>{8, 16} << QByteArray(R"({"begin": [6, 0], "end": [16, 8]})") << QList<qint64>{53}
            << qint64(80) << QList<qint64>{} << QList<qint64>{};
        // shape [4, 5, 6]: z 0..3, y 0..4, x 0..5; index = (z*5 + y)*6 + x.
        QTest::newRow("3-D whole") << QList<qint64>{4, 5, 6} << QByteArray() << QList<qint64>{(1 * 5 + 3) * 6 + 2}
                                   << qint64(120) << QList<qint64>{50} << QList<qint64>{2, 3, 1};
        QTest::newRow("3-D box, order is z, y, x")
            << QList<qint64>{4, 5, 6} << QByteArray(R"({"begin": [1, 1, 1], "end": [6, 5, 4]})")
            << QList<qint64>{(3 * 5 + 1) * 6 + 1, (1 * 5 + 4) * 6 + 5, 0} << qint64(5 * 4 * 3) << QList<qint64>{59, 97}
            << QList<qint64>{5, 4, 1};
    }

    void regions()
    {
        QFETCH(QList<qint64>, shape);
        QFETCH(QByteArray, region);
        QFETCH(QList<qint64>, bad);
        QFETCH(qint64, compared);
        QFETCH(QList<qint64>, found);
        QFETCH(QList<qint64>, firstCoords);
        const QList<BufferSpec> specs{specFor("out", DType::Float32, shape)};
        const CheckSpec check = parseCheck(R"({"buffer": "out", "expected": "i * 0.5")" +
                                               (region.isEmpty() ? QByteArray() : ", \"region\": " + region) + "}",
                                           specs);
        HostData out = makeData(DType::Float32, shape);
        for (qint64 i = 0; i < out.count(); ++i) {
            out.set(i, i * 0.5);
        }
        for (qint64 i : bad) {
            out.set(i, -1);
        }
        CheckData data;
        data.after.insert("out", out.view());
        const Result<CheckResult> r = evaluateCheck(check, data, 0);
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->compared, compared);
        QCOMPARE(r->mismatches, qint64(found.size()));
        QCOMPARE(r->passed, found.isEmpty());
        QCOMPARE(r->axes, int(shape.size()));
        for (qsizetype k = 0; k < found.size(); ++k) {
            QCOMPARE(r->first[k].index, found[k]);
            QCOMPARE(r->first[k].got, -1.0);
            QCOMPARE(r->first[k].expected, found[k] * 0.5);
        }
        if (!firstCoords.isEmpty()) {
            QCOMPARE(r->first[0].coords[0], firstCoords[0]);
            QCOMPARE(r->first[0].coords[1], firstCoords[1]);
            QCOMPARE(r->first[0].coords[2], firstCoords[2]);
        }
    }

    // --- The report, against a CPU computation on random data ---
    // 100,000 values are judged in one pass; 1.5 million over several threads
    // (where the machine has them), whose report must be that of one pass.
    void mismatchReport_data()
    {
        QTest::addColumn<qint64>("n");
        QTest::newRow("one pass") << qint64(100000);
        QTest::newRow("threads") << qint64(1500017);
    }
    void mismatchReport()
    {
        QFETCH(qint64, n);
        const QList<BufferSpec> specs{specFor("a", DType::Float32, {n}), specFor("b", DType::Float32, {n}),
                                      specFor("c", DType::Float32, {n})};
        const CheckSpec check = parseCheck(R"({"name": "c = a + b", "buffer": "c", "expected": "a + b"})", specs);
        HostData a = makeData(DType::Float32, {n});
        HostData b = makeData(DType::Float32, {n});
        HostData c = makeData(DType::Float32, {n});
        QRandomGenerator rng(12345);
        for (qint64 i = 0; i < n; ++i) {
            a.set(i, rng.generateDouble());
            b.set(i, rng.generateDouble());
            c.set(i, float(float(a.get(i)) + float(b.get(i))));
        }
        // Corrupt 25 random elements by random amounts (some tiny enough to pass).
        QMap<qint64, double> corrupt;
        while (corrupt.size() < 25) {
            corrupt.insert(rng.bounded(int(n)), (rng.generateDouble() - 0.5) * 4);
        }
        corrupt.insert(77, 1e-9); // within tolerance: not a mismatch
        for (auto it = corrupt.begin(); it != corrupt.end(); ++it) {
            c.set(it.key(), c.get(it.key()) + it.value());
        }
        // Two equal worst errors far apart: the first is the worst, as in one pass.
        for (const qint64 tie : {n / 4 + 1, 3 * n / 4 + 1}) {
            a.set(tie, 0);
            b.set(tie, 0);
            c.set(tie, 16);
        }
        // The CPU's answer.
        qint64 mismatches = 0;
        double maxAbs = 0;
        double sumAbs = 0;
        double maxRel = 0;
        qint64 worst = -1;
        QList<qint64> first;
        for (qint64 i = 0; i < n; ++i) {
            const double exp = a.get(i) + b.get(i);
            const double d = std::fabs(c.get(i) - exp);
            sumAbs += d;
            if (exp != 0) {
                maxRel = std::max(maxRel, d / std::fabs(exp));
            }
            if (d > maxAbs) {
                maxAbs = d;
            }
            if (!(d <= 1e-6 + 1e-5 * std::fabs(exp)) && float(c.get(i)) != float(exp)) {
                ++mismatches;
                if (first.size() < 10) {
                    first << i;
                }
                if (worst < 0 || d > std::fabs(c.get(worst) - a.get(worst) - b.get(worst))) {
                    worst = i;
                }
            }
        }
        QVERIFY(mismatches >= 20);

        CheckData data;
        data.initial.insert("a", a.view());
        data.initial.insert("b", b.view());
        const HostData zeros = makeData(DType::Float32, {n});
        data.initial.insert("c", zeros.view());
        data.after.insert("c", c.view());
        const Result<CheckResult> r = evaluateCheck(check, data, 0);
        KP_VERIFY_RESULT(r);
        QVERIFY(!r->passed);
        QCOMPARE(r->name, QString("c = a + b"));
        QCOMPARE(r->compared, n);
        QCOMPARE(r->mismatches, mismatches);
        QCOMPARE(r->mismatchFraction(), double(mismatches) / double(n));
        QCOMPARE(r->maxAbsError, maxAbs);
        QVERIFY(std::fabs(r->meanAbsError - sumAbs / double(n)) < 1e-12);
        QVERIFY(std::fabs(r->maxRelError - maxRel) < 1e-12 * maxRel);
        QCOMPARE(r->first.size(), 10);
        for (int k = 0; k < 10; ++k) {
            QCOMPARE(r->first[k].index, first[k]);
            QCOMPARE(r->first[k].coords[0], first[k]);
            QCOMPARE(r->first[k].got, c.get(first[k]));
            QCOMPARE(r->first[k].expected, a.get(first[k]) + b.get(first[k]));
        }
        QCOMPARE(r->worst->index, worst);

        // The mask of failing elements (the GUI's heatmap) marks exactly the CPU's mismatches.
        QByteArray mask;
        data.failedMask = &mask;
        const Result<CheckResult> masked = evaluateCheck(check, data, 0);
        KP_VERIFY_RESULT(masked);
        QCOMPARE(mask.size(), qsizetype(n));
        QCOMPARE(qint64(mask.count(char(1))), mismatches);
        for (qint64 i : first) {
            QCOMPARE(int(mask[qsizetype(i)]), 1);
        }
        QCOMPARE(int(mask[77]), 0);
        data.failedMask = nullptr;

        // The forms of the report.
        const QString text = checkResultText(*r);
        QCOMPARE(worst, n / 4 + 1);
        QVERIFY2(text.startsWith(QStringLiteral("FAIL c = a + b: %1 of %2 elements differ (").arg(mismatches).arg(n)),
                 qPrintable(text));
        QVERIFY2(text.contains(
                     QStringLiteral("max abs err %1 at [%2] (x=%2): got ").arg(checkNumberText(maxAbs)).arg(worst)),
                 qPrintable(text));
        QCOMPARE(text.count(QLatin1Char('\n')), 2 + 10);
        const QJsonObject j = checkResultToJson(*r);
        QCOMPARE(j.value("passed").toBool(true), false);
        QCOMPARE(j.value("mismatches").toInteger(), mismatches);
        QCOMPARE(j.value("compared").toInteger(), n);
        QCOMPARE(j.value("kind").toString(), QString("expected"));
        QCOMPARE(j.value("target").toString(), QString("a + b"));
        QCOMPARE(j.value("firstMismatches").toArray().size(), 10);
        QCOMPARE(j.value("firstMismatches").toArray()[0].toObject().value("index").toInteger(), first[0]);
        QCOMPARE(j.value("firstMismatches").toArray()[0].toObject().value("coords").toArray(),
                 QJsonArray({first[0], 0, 0}));
        QCOMPARE(j.value("worst").toObject().value("index").toInteger(), worst);
        QCOMPARE(j.value("tolerance").toObject().value("rel").toDouble(), 1e-5);
        QVERIFY(j.value("error").isNull());
        QCOMPARE(j.value("seedRun").toInt(), 0);
    }

    // A 2-D buffer split over threads mid-row: every value's x and y are its own.
    void coordinatesAcrossThreads()
    {
        const qint64 ny = 1101;
        const qint64 nx = 1403;
        const QList<BufferSpec> specs{specFor("c", DType::Float32, {ny, nx})};
        const CheckSpec check = parseCheck(R"({"buffer": "c", "expected": "x + 2048 * y"})", specs);
        HostData c = makeData(DType::Float32, {ny, nx});
        for (qint64 y = 0; y < ny; ++y) {
            for (qint64 x = 0; x < nx; ++x) {
                c.set(y * nx + x, double(x + 2048 * y));
            }
        }
        const QList<std::pair<qint64, qint64>> wrong{{1, 0}, {700, 550}, {1402, 551}, {3, 1100}};
        for (const auto &[x, y] : wrong) {
            c.set(y * nx + x, -1);
        }
        CheckData data;
        data.after.insert("c", c.view());
        const Result<CheckResult> r = evaluateCheck(check, data, 0);
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->compared, nx * ny);
        QCOMPARE(r->mismatches, qint64(wrong.size()));
        QCOMPARE(r->first.size(), wrong.size());
        for (qsizetype k = 0; k < wrong.size(); ++k) {
            QCOMPARE(r->first[k].coords[0], wrong[k].first);
            QCOMPARE(r->first[k].coords[1], wrong[k].second);
            QCOMPARE(r->first[k].index, wrong[k].second * nx + wrong[k].first);
            QCOMPARE(r->first[k].expected, double(wrong[k].first + 2048 * wrong[k].second));
        }
    }

    void reportShapes()
    {
        // 2-D coordinates in the text, a vector component, non-finite numbers in JSON.
        const QList<BufferSpec> specs{specFor("img", DType::Float4, {4, 8})};
        const CheckSpec check = parseCheck(R"({"buffer": "img", "expected": "x + 10*y + 100*c"})", specs);
        QCOMPARE(check.displayName(), QString("img == x + 10*y + 100*c"));
        HostData img = makeData(DType::Float4, {4, 8});
        for (qint64 e = 0; e < 32; ++e) {
            for (int c = 0; c < 4; ++c) {
                img.set(e * 4 + c, (e % 8) + 10 * (e / 8) + 100 * c);
            }
        }
        img.set((2 * 8 + 5) * 4 + 3, kNaN); // x=5, y=2, c=3
        CheckData data;
        data.after.insert("img", img.view());
        const Result<CheckResult> r = evaluateCheck(check, data, 0);
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->compared, qint64(128));
        QCOMPARE(r->mismatches, qint64(1));
        QCOMPARE(r->first[0].index, qint64(21));
        QCOMPARE(r->first[0].component, 3);
        const QString text = checkResultText(*r);
        QVERIFY2(text.contains("1 of 128 values differ"), qPrintable(text));
        QVERIFY2(text.contains("at [21] (x=5, y=2, c=3): got nan, expected 325"), qPrintable(text));
        QVERIFY2(text.contains("max abs err inf"), qPrintable(text));
        const QJsonObject j = checkResultToJson(*r);
        const QJsonObject m = j.value("firstMismatches").toArray()[0].toObject();
        QCOMPARE(m.value("got").toString(), QString("nan"));
        QCOMPARE(m.value("expected").toDouble(), 325.0);
        QCOMPARE(m.value("component").toInt(), 3);
        // JSON numbers survive a round trip through text.
        QVERIFY(!QJsonDocument(j).toJson().isEmpty());
    }

    // --- Expression variables ---
    void expressionVariables_data()
    {
        QTest::addColumn<QString>("expected");
        QTest::addColumn<bool>("passes");
        // Buffers: x, y (float32 [64], random), out = 2*x + y; scalar alpha = 2; buffer k (int32 [64]) = i.
        QTest::newRow("buffers named x and y hide the coordinates") << "alpha*x + y" << true;
        QTest::newRow("coordinate i") << "alpha*x + y + 0*i" << true;
        QTest::newRow("buffer.n variable") << "alpha*x + y + (x.n - 64)" << true;
        QTest::newRow("a wrong expression") << "alpha*x - y" << false;
        QTest::newRow("an integer buffer") << "alpha*x + y + k - i" << true;
    }

    void expressionVariables()
    {
        QFETCH(QString, expected);
        QFETCH(bool, passes);
        const qint64 n = 64;
        const QList<BufferSpec> specs{specFor("x", DType::Float32, {n}), specFor("y", DType::Float32, {n}),
                                      specFor("k", DType::Int32, {n}), specFor("out", DType::Float32, {n})};
        const CheckSpec check =
            parseCheck(QJsonDocument(QJsonArray{QJsonObject{{"buffer", "out"}, {"expected", expected}}})
                           .toJson()
                           .mid(1)
                           .chopped(2),
                       specs);
        HostData x = makeData(DType::Float32, {n});
        HostData y = makeData(DType::Float32, {n});
        HostData k = makeData(DType::Int32, {n});
        HostData out = makeData(DType::Float32, {n});
        QRandomGenerator rng(7);
        for (qint64 i = 0; i < n; ++i) {
            x.set(i, rng.generateDouble() * 10);
            y.set(i, rng.generateDouble() * 10 + 1);
            k.set(i, double(i));
            out.set(i, 2 * x.get(i) + y.get(i));
        }
        CheckData data;
        data.initial = {{"x", x.view()}, {"y", y.view()}, {"k", k.view()}};
        data.after.insert("out", out.view());
        data.variables = {{"alpha", 2.0}, {"x.n", double(n)}};
        const Result<CheckResult> r = evaluateCheck(check, data, 0);
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->passed, passes);
    }

    void inPlaceUsesInitialContents()
    {
        // y = y * 3 in place: "y" in the expression is y before the run.
        const QList<BufferSpec> specs{specFor("y", DType::Float64, {3})};
        const CheckSpec check = parseCheck(R"({"buffer": "y", "expected": "3 * y"})", specs);
        HostData before = makeData(DType::Float64, {3});
        HostData after = makeData(DType::Float64, {3});
        for (int i = 0; i < 3; ++i) {
            before.set(i, 1.5 + i);
            after.set(i, 3 * (1.5 + i));
        }
        CheckData data;
        data.initial.insert("y", before.view());
        data.after.insert("y", after.view());
        const Result<CheckResult> r = evaluateCheck(check, data, 0);
        KP_VERIFY_RESULT(r);
        QVERIFY(r->passed);
    }

    void expressionErrors_data()
    {
        QTest::addColumn<QString>("expected");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown variable") << "q + 1"
                                          << "checks[3].expected: unknown variable 'q' in 'q + 1'; known: ";
        // Issue 28: these said "unknown variable '1e400'" and "Unexpected parenthesis".
        QTest::newRow("1e400") << "1e400"
                               << "checks[3].expected: the number 1e400 is outside the range of a double (about "
                                  "1.8e308) in '1e400'";
        QTest::newRow("unknown function") << "foo(i)"
                                          << "checks[3].expected: unknown function foo in 'foo(i)'; known: abs, ";
    }
    void expressionErrors()
    {
        QFETCH(QString, expected);
        QFETCH(QString, message);
        const QList<BufferSpec> specs{specFor("out", DType::Float32, {4})};
        const CheckSpec check = parseCheck(
            QStringLiteral(R"({"buffer": "out", "expected": "%1"})").arg(expected).toUtf8().constData(), specs);
        HostData out = makeData(DType::Float32, {4});
        CheckData data;
        data.after.insert("out", out.view());
        const Result<CheckResult> r = evaluateCheck(check, data, 0, "checks[3]");
        QVERIFY(!r);
        QCOMPARE(r.error().path, QString("checks[3].expected"));
        QVERIFY2(r.error().message.startsWith(message), qPrintable(r.error().message));
    }

    // --- npy ---
    void npy()
    {
        QTemporaryDir dir;
        const QList<BufferSpec> specs{specFor("out", DType::Float32, {6, 10})};
        // The whole buffer as float64, and a 3x2 region as int32.
        std::vector<double> whole(60);
        for (int i = 0; i < 60; ++i) {
            whole[i] = std::sin(i * 0.37) * 100;
        }
        KP_VERIFY_RESULT(writeNpy(dir.filePath("whole.npy"), DType::Float64, {6, 10}, whole.data()));
        std::vector<qint32> tile(6);
        for (int y = 0; y < 2; ++y) {
            for (int x = 0; x < 3; ++x) {
                tile[y * 3 + x] = (y + 4) * 10 + (x + 7); // region x 7..10, y 4..6
            }
        }
        KP_VERIFY_RESULT(writeNpy(dir.filePath("tile.npy"), DType::Int32, {2, 3}, tile.data()));
        KP_VERIFY_RESULT(writeNpy(dir.filePath("short.npy"), DType::Int32, {5}, tile.data()));

        HostData out = makeData(DType::Float32, {6, 10});
        for (int i = 0; i < 60; ++i) {
            out.set(i, whole[i]);
        }
        CheckData data;
        data.after.insert("out", out.view());
        data.projectDir = dir.path();
        const CheckSpec all = parseCheck(R"({"buffer": "out", "npy": "whole.npy"})", specs);
        Result<CheckResult> r = evaluateCheck(all, data, 0);
        KP_VERIFY_RESULT(r);
        QVERIFY(r->passed);
        QCOMPARE(r->compared, qint64(60));

        for (int i = 0; i < 60; ++i) {
            out.set(i, i);
        }
        const CheckSpec region =
            parseCheck(R"({"buffer": "out", "npy": "tile.npy", "region": {"begin": [7, 4], "end": [10, 6]}})", specs);
        r = evaluateCheck(region, data, 0);
        KP_VERIFY_RESULT(r);
        QVERIFY(r->passed);
        QCOMPARE(r->compared, qint64(6));
        out.set(5 * 10 + 8, 0);
        r = evaluateCheck(region, data, 0);
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->mismatches, qint64(1));
        QCOMPARE(r->first[0].index, qint64(58));
        QCOMPARE(r->first[0].expected, 58.0);

        const CheckSpec wrongCount =
            parseCheck(R"({"buffer": "out", "npy": "short.npy", "region": {"begin": [7, 4], "end": [10, 6]}})", specs);
        r = evaluateCheck(wrongCount, data, 0, "checks[1]");
        QVERIFY(!r);
        QCOMPARE(r.error().path, QString("checks[1].npy"));
        QVERIFY2(r.error().message.contains("checks[1].npy: 'short.npy' holds 5 values; the check compares 6 (buffer "
                                            "'out', float32 [6, 10] in the region x 7..10, y 4..6)"),
                 qPrintable(r.error().message));
        const CheckSpec missing = parseCheck(R"({"buffer": "out", "npy": "nope.npy"})", specs);
        r = evaluateCheck(missing, data, 0, "checks[0]");
        QVERIFY(!r);
        QVERIFY2(r.error().message.startsWith("checks[0].npy: cannot read 'nope.npy': "),
                 qPrintable(r.error().message));
    }

    // --- Integer tolerance: abs and rel, never ulp ---
    void integerTolerance_data()
    {
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<double>("got");
        QTest::addColumn<double>("expected");
        QTest::addColumn<QString>("tolerance"); // empty: none (exact)
        QTest::addColumn<bool>("passes");
        QTest::newRow("int32 exact without tolerance") << "int32" << 10.0 << 11.0 << "" << false;
        QTest::newRow("int32 abs 1 covers 1") << "int32" << 10.0 << 11.0 << R"({"abs": 1})" << true;
        QTest::newRow("int32 abs 1 not 2") << "int32" << 9.0 << 11.0 << R"({"abs": 1})" << false;
        QTest::newRow("uint8 rel 0.1 of 200") << "uint8" << 180.0 << 200.0 << R"({"rel": 0.1})" << true;
        QTest::newRow("uint8 rel 0.1 of 200, 21 off") << "uint8" << 179.0 << 200.0 << R"({"rel": 0.1})" << false;
        QTest::newRow("int64 abs 5") << "int64" << -5.0 << 0.0 << R"({"abs": 5})" << true;
        QTest::newRow("int4 vector abs 2") << "int4" << 3.0 << 1.0 << R"({"abs": 2})" << true;
    }
    void integerTolerance()
    {
        QFETCH(QString, dtype);
        QFETCH(double, got);
        QFETCH(double, expected);
        QFETCH(QString, tolerance);
        QFETCH(bool, passes);
        const DType t = *dtypeFromName(dtype);
        const int comps = dtypeInfo(t).components;
        const QList<BufferSpec> specs{specFor("out", t, {1}), specFor("ref", DType::Float64, {comps})};
        const QByteArray json = R"({"buffer": "out", "reference": "ref")" +
                                (tolerance.isEmpty() ? QByteArray() : ", \"tolerance\": " + tolerance.toUtf8()) + "}";
        const CheckSpec check = parseCheck(json, specs);
        QCOMPARE(check.tolerance.has_value(), !tolerance.isEmpty());
        HostData out = makeData(t, {1});
        HostData ref = makeData(DType::Float64, {comps});
        for (int c = 0; c < comps; ++c) {
            out.set(c, got);
            ref.set(c, expected);
        }
        CheckData data;
        data.after.insert("out", out.view());
        data.reference.insert("ref", ref.view());
        const Result<CheckResult> r = evaluateCheck(check, data, 0, "checks[0]");
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->passed, passes);
        QCOMPARE(r->exact, tolerance.isEmpty());
        QCOMPARE(r->mismatches, passes ? 0 : qint64(comps));
    }

    // --- Permutation and set: the same values in any order ---
    void collections_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<QList<double>>("got");
        QTest::addColumn<QList<double>>("other");
        QTest::addColumn<bool>("fromReference");
        QTest::addColumn<qint64>("mismatches");
        QTest::addColumn<QString>("firstLine"); // of the text report's list; empty when it passes
        using L = QList<double>;
        QTest::newRow("sorted is a permutation")
            << "permutation"
            << "int32" << L{1, 2, 3, 3, 9} << L{3, 9, 1, 3, 2} << false << qint64(0) << "";
        QTest::newRow("a duplicate lost") << "permutation"
                                          << "int32" << L{1, 2, 3, 9, 9} << L{3, 9, 1, 3, 2} << false << qint64(2)
                                          << "       3 is in other but not in out";
        QTest::newRow("a value changed") << "permutation"
                                         << "float32" << L{1, 2, 3.5, 4} << L{4, 3, 2, 1} << true << qint64(2)
                                         << "       3 is in reference other but not in out";
        QTest::newRow("NaN pairs with NaN") << "permutation"
                                            << "float32" << L{kNaN, 1, 2} << L{2, kNaN, 1} << false << qint64(0) << "";
        QTest::newRow("set ignores counts") << "set"
                                            << "int32" << L{5, 5, 5, 7} << L{7, 5, 7, 7} << false << qint64(0) << "";
        QTest::newRow("set: a value too many") << "set"
                                               << "int32" << L{5, 6, 7, 7} << L{7, 5, 7, 7} << false << qint64(1)
                                               << "       6 at [1] (x=1) is not in other";
        QTest::newRow("float2 permutes components")
            << "permutation"
            << "float2" << L{1, 2, 3, 4} << L{4, 3, 2, 1} << false << qint64(0) << "";
    }
    void collections()
    {
        QFETCH(QString, kind);
        QFETCH(QString, dtype);
        QFETCH(QList<double>, got);
        QFETCH(QList<double>, other);
        QFETCH(bool, fromReference);
        QFETCH(qint64, mismatches);
        QFETCH(QString, firstLine);
        const DType t = *dtypeFromName(dtype);
        const qint64 n = got.size() / dtypeInfo(t).components;
        const QList<BufferSpec> specs{specFor("out", t, {n}), specFor("other", t, {n})};
        const QByteArray target = fromReference ? QByteArray(R"({"reference": "other"})") : QByteArray(R"("other")");
        const CheckSpec check = parseCheck("{\"buffer\": \"out\", \"" + kind.toUtf8() + "\": " + target + "}", specs);
        QCOMPARE(CheckSpec::kindName(check.kind), kind);
        QCOMPARE(check.needsReference(), fromReference);
        HostData out = makeData(t, {n});
        HostData oth = makeData(t, {n});
        for (qsizetype k = 0; k < got.size(); ++k) {
            out.set(k, got[k]);
            oth.set(k, other[k]);
        }
        CheckData data;
        data.after.insert("out", out.view());
        (fromReference ? data.reference : data.initial).insert("other", oth.view());
        const Result<CheckResult> r = evaluateCheck(check, data, 0, "checks[0]");
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->mismatches, mismatches);
        QCOMPARE(r->passed, mismatches == 0);
        QCOMPARE(r->compared, qint64(got.size()));
        const QStringList lines = checkResultText(*r).split('\n');
        if (firstLine.isEmpty()) {
            QVERIFY2(lines[0].startsWith("PASS "), qPrintable(lines[0]));
        } else {
            QVERIFY2(lines[0].startsWith("FAIL "), qPrintable(lines[0]));
            QCOMPARE(lines[2], firstLine);
        }
        // The other side is read from where the check says: the wrong run has nothing.
        CheckData wrong;
        wrong.after.insert("out", out.view());
        (fromReference ? wrong.initial : wrong.reference).insert("other", oth.view());
        QVERIFY(!evaluateCheck(check, wrong, 0, "checks[0]"));
    }

    // --- Range: every value within bounds ---
    void range_data()
    {
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<QByteArray>("range");
        QTest::addColumn<QList<double>>("values");
        QTest::addColumn<qint64>("outside");
        QTest::addColumn<double>("maxAbsError"); // how far the worst value is outside
        using L = QList<double>;
        QTest::newRow("all inside, bounds inclusive")
            << "float32" << QByteArray("[0, 1]") << L{0, 0.5, 1} << qint64(0) << 0.0;
        QTest::newRow("one above") << "float32" << QByteArray("[0, 1]") << L{0, 1.5, 1} << qint64(1) << 0.5;
        QTest::newRow("one below, open top")
            << "int32" << QByteArray("[-1, null]") << L{-3, 100000, 0} << qint64(1) << 2.0;
        QTest::newRow("open bottom") << "uint8" << QByteArray("[null, 200]") << L{0, 201, 255} << qint64(2) << 55.0;
        QTest::newRow("NaN is outside") << "float32" << QByteArray("[0, 1]") << L{kNaN, 0.5} << qint64(1) << 0.0;
        QTest::newRow("histogram counts of a uint4")
            << "uint4" << QByteArray("[0, 10]") << L{0, 1, 10, 11} << qint64(1) << 1.0;
    }
    void range()
    {
        QFETCH(QString, dtype);
        QFETCH(QByteArray, range);
        QFETCH(QList<double>, values);
        QFETCH(qint64, outside);
        QFETCH(double, maxAbsError);
        const DType t = *dtypeFromName(dtype);
        const qint64 n = values.size() / dtypeInfo(t).components;
        const CheckSpec check = parseCheck("{\"buffer\": \"out\", \"range\": " + range + "}", {specFor("out", t, {n})});
        QCOMPARE(check.kind, CheckSpec::Kind::Range);
        HostData out = makeData(t, {n});
        for (qsizetype k = 0; k < values.size(); ++k) {
            out.set(k, values[k]);
        }
        CheckData data;
        data.after.insert("out", out.view());
        const Result<CheckResult> r = evaluateCheck(check, data, 0, "checks[0]");
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->mismatches, outside);
        QCOMPARE(r->passed, outside == 0);
        QCOMPARE(r->maxAbsError, maxAbsError);
        if (outside) {
            QVERIFY2(checkResultText(*r).contains(QStringLiteral(" outside %1 (").arg(check.target())),
                     qPrintable(checkResultText(*r)));
        }
    }

    // --- Printed: device printf output ---
    void printed_data()
    {
        QTest::addColumn<QByteArray>("printed"); // the check's "printed" value
        QTest::addColumn<QString>("output");
        QTest::addColumn<bool>("truncated");
        QTest::addColumn<bool>("passes");
        QTest::addColumn<QString>("detail");
        QTest::newRow("equals, trailing newline ignored") << QByteArray(R"({"equals": "sum = 42"})") << "sum = 42\n"
                                                          << false << true << "";
        QTest::newRow("equals, another number") << QByteArray(R"({"equals": "sum = 42"})") << "sum = 41\n"
                                                << false << false << "the kernels printed (9 characters): sum = 41\n";
        QTest::newRow("matches anywhere") << QByteArray(R"({"matches": "sum = \\d+"})") << "hello\nsum = 7\nbye\n"
                                          << false << true << "";
        QTest::newRow("matches per line with ^ and $")
            << QByteArray(R"({"matches": "^thread 0 done$"})") << "thread 1 done\nthread 0 done\n"
            << false << true << "";
        QTest::newRow("nothing printed") << QByteArray(R"({"matches": "x"})") << "" << false << false
                                         << "the kernels printed nothing";
        QTest::newRow("cut off") << QByteArray(R"({"equals": "abc"})") << "ab" << true << false
                                 << "the kernels printed (2 characters): ab (the output was cut off at the device "
                                    "printf buffer's size)";
    }
    void printed()
    {
        QFETCH(QByteArray, printed);
        QFETCH(QString, output);
        QFETCH(bool, truncated);
        QFETCH(bool, passes);
        QFETCH(QString, detail);
        const CheckSpec check = parseCheck("{\"printed\": " + printed + "}", {});
        QCOMPARE(check.kind, CheckSpec::Kind::Printed);
        QVERIFY(check.buffer.isEmpty());
        CheckData data;
        data.printed = output;
        data.printedTruncated = truncated;
        const Result<CheckResult> r = evaluateCheck(check, data, 0, "checks[0]");
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->passed, passes);
        QCOMPARE(r->detail, detail);
        QCOMPARE(checkResultText(*r).startsWith(passes ? "PASS " : "FAIL "), true);
        // Written back as read.
        QCOMPARE(checkResultToJson(*r).value("kind").toString(), QString("printed"));
    }

    void newKindsRoundTrip_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::newRow("permutation") << QByteArray(R"({"buffer": "c", "permutation": "c"})");
        QTest::newRow("set of the reference") << QByteArray(R"({"buffer": "c", "set": {"reference": "c"}})");
        QTest::newRow("range") << QByteArray(R"({"buffer": "c", "range": [0, null]})");
        QTest::newRow("printed") << QByteArray(R"({"printed": {"matches": "^ok$"}})");
        QTest::newRow("integer tolerance")
            << QByteArray(R"({"buffer": "h", "expected": "1", "tolerance": {"abs": 2}})");
    }
    void newKindsRoundTrip()
    {
        QFETCH(QByteArray, json);
        const QList<BufferSpec> specs{specFor("c", DType::Float32, {16}), specFor("h", DType::Int32, {8})};
        const CheckSpec check = parseCheck(json, specs);
        const QByteArray written = renderJson(checkSpecNode(check));
        QCOMPARE(QJsonDocument::fromJson(written).object(), QJsonDocument::fromJson(json).object());
        QCOMPARE(parseCheck(written, specs), check);
    }

    // --- Parsing: every mistake with its path and message ---
    void parseErrors_data()
    {
        QTest::addColumn<QByteArray>("checks"); // the "checks" value
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("message");
        QTest::newRow("not an array") << QByteArray(R"({"buffer": "c"})") << "checks"
                                      << "checks: expected an array, got an object";
        QTest::newRow("item not an object") << QByteArray(R"([3])") << "checks[0]"
                                            << "checks[0]: expected an object, got a number";
        QTest::newRow("no buffer") << QByteArray(R"([{"expected": "1"}])") << "checks[0].buffer"
                                   << "checks[0].buffer: missing; expected the name of the buffer to check";
        QTest::newRow("unknown buffer") << QByteArray(R"([{"buffer": "d", "expected": "1"}])") << "checks[0].buffer"
                                        << "checks[0].buffer: unknown buffer 'd'; buffers: a, c, h, img";
        QTest::newRow("none of the three") << QByteArray(R"([{"buffer": "c"}])") << "checks[0]"
                                           << "checks[0]: expected exactly one of \"expected\" (an expression), "
                                              "\"reference\" (a buffer of the reference run), \"npy\" (a file), "
                                              "\"permutation\" or \"set\" (another buffer), \"range\" ([min, max]) "
                                              "or \"printed\" (device printf output), got none";
        QTest::newRow("two of the three")
            << QByteArray(R"([{"buffer": "c", "expected": "1", "npy": "f.npy"}])") << "checks[0]"
            << "checks[0]: expected exactly one of \"expected\" (an expression), "
               "\"reference\" (a buffer of the reference run), \"npy\" (a file), "
               "\"permutation\" or \"set\" (another buffer), \"range\" ([min, max]) "
               "or \"printed\" (device printf output), got 2";
        QTest::newRow("empty expression") << QByteArray(R"([{"buffer": "c", "expected": " "}])") << "checks[0].expected"
                                          << "checks[0].expected: expected an expression string or a number, got a "
                                             "string";
        QTest::newRow("unknown reference buffer")
            << QByteArray(R"([{"buffer": "c", "reference": "C"}])") << "checks[0].reference"
            << "checks[0].reference: unknown buffer 'C'; buffers: a, c, h, img";
        QTest::newRow("reference of another size")
            << QByteArray(R"([{"buffer": "c", "reference": "h"}])") << "checks[0].reference"
            << "checks[0].reference: buffer 'h' (int32 [8]) does not have as many values as 'c' (float32 [16])";
        QTest::newRow("negative ulp at index 2")
            << QByteArray(R"([{"buffer": "c", "expected": "1"}, {"buffer": "a", "expected": "2"},
                              {"buffer": "c", "expected": "a", "tolerance": {"ulp": -1}}])")
            << "checks[2].tolerance.ulp"
            << "checks[2].tolerance.ulp: must be at least 0, got -1";
        QTest::newRow("fractional ulp") << QByteArray(
                                               R"([{"buffer": "c", "expected": "1", "tolerance": {"ulp": 1.5}}])")
                                        << "checks[0].tolerance.ulp"
                                        << "checks[0].tolerance.ulp: expected an integer, got 1.5";
        QTest::newRow("negative abs") << QByteArray(R"([{"buffer": "c", "expected": "1", "tolerance": {"abs": -1}}])")
                                      << "checks[0].tolerance.abs"
                                      << "checks[0].tolerance.abs: must be at least 0, got -1";
        QTest::newRow("misspelt tolerance key")
            << QByteArray(R"([{"buffer": "c", "expected": "1", "tolerance": {"ulps": 2}}])")
            << "checks[0].tolerance.ulps"
            << "checks[0].tolerance.ulps: unknown key";
        QTest::newRow("ulp on an integer buffer")
            << QByteArray(R"([{"buffer": "h", "expected": "1", "tolerance": {"ulp": 1}}])") << "checks[0].tolerance.ulp"
            << "checks[0].tolerance.ulp: buffer 'h' is int32; units in the last place are for floating point: give "
               "an integer check \"abs\" (and \"rel\")";
        QTest::newRow("permutation of an unknown buffer")
            << QByteArray(R"([{"buffer": "c", "permutation": "q"}])") << "checks[0].permutation"
            << "checks[0].permutation: unknown buffer 'q'; buffers: a, c, h, img";
        QTest::newRow("permutation of another size")
            << QByteArray(R"([{"buffer": "c", "permutation": "h"}])") << "checks[0].permutation"
            << "checks[0].permutation: buffer 'h' has 8 values and 'c' has 16; a permutation needs as many";
        QTest::newRow("permutation of the reference, misspelt")
            << QByteArray(R"([{"buffer": "c", "permutation": {"ref": "c"}}])") << "checks[0].permutation.ref"
            << "checks[0].permutation.ref: unknown key";
        QTest::newRow("permutation with a tolerance")
            << QByteArray(R"([{"buffer": "c", "permutation": "c", "tolerance": {"abs": 1}}])") << "checks[0].tolerance"
            << "checks[0].tolerance: a \"permutation\" check compares whole buffers exactly and takes no "
               "\"tolerance\"";
        QTest::newRow("set with a region")
            << QByteArray(R"([{"buffer": "c", "set": "a", "region": {"begin": [0], "end": [2]}}])")
            << "checks[0].region"
            << "checks[0].region: a \"set\" check compares whole buffers exactly and takes no \"region\"";
        QTest::newRow("range not a pair") << QByteArray(R"([{"buffer": "c", "range": [1]}])") << "checks[0].range"
                                          << "checks[0].range: expected [min, max] (numbers, inclusive; null for no "
                                             "bound), got an array";
        QTest::newRow("range without bounds")
            << QByteArray(R"([{"buffer": "c", "range": [null, null]}])") << "checks[0].range"
            << "checks[0].range: [null, null] bounds nothing; give min, max or both";
        QTest::newRow("range upside down") << QByteArray(R"([{"buffer": "c", "range": [2, 1]}])") << "checks[0].range"
                                           << "checks[0].range: min 2 is greater than max 1";
        QTest::newRow("range bound not a number")
            << QByteArray(R"([{"buffer": "c", "range": [0, "1"]}])") << "checks[0].range[1]"
            << "checks[0].range[1]: expected a number, got a string";
        QTest::newRow("printed with a buffer")
            << QByteArray(R"([{"buffer": "c", "printed": {"equals": "1"}}])") << "checks[0].buffer"
            << "checks[0].buffer: a \"printed\" check reads the device printf output, not a buffer, and takes no "
               "\"buffer\"";
        QTest::newRow("printed with both")
            << QByteArray(R"([{"printed": {"equals": "1", "matches": "1"}}])") << "checks[0].printed"
            << "checks[0].printed: expected one of \"matches\" (a regular expression searched in the output) or "
               "\"equals\" (the whole output), got both";
        QTest::newRow("printed bad pattern")
            << QByteArray("[{\"printed\": {\"matches\": \"sum = (\\\\d+\"}}]") << "checks[0].printed.matches"
            << "checks[0].printed.matches: 'sum = (\\d+' is not a valid regular expression: missing closing "
               "parenthesis at offset 10";
        QTest::newRow("printed misspelt key")
            << QByteArray(R"([{"printed": {"match": "x"}}])") << "checks[0].printed.match"
            << "checks[0].printed.match: unknown key";
        QTest::newRow("nan on an integer buffer")
            << QByteArray(R"([{"buffer": "h", "expected": "1", "nan": true}])") << "checks[0].nan"
            << "checks[0].nan: buffer 'h' is int32; integers have no NaN";
        QTest::newRow("seeds 0") << QByteArray(R"([{"buffer": "c", "expected": "1", "seeds": 0}])") << "checks[0].seeds"
                                 << "checks[0].seeds: must be at least 1, got 0";
        QTest::newRow("seeds too many") << QByteArray(R"([{"buffer": "c", "expected": "1", "seeds": 101}])")
                                        << "checks[0].seeds"
                                        << "checks[0].seeds: must be at most 100, got 101";
        QTest::newRow("nan not a boolean")
            << QByteArray(R"([{"buffer": "c", "expected": "1", "nan": "yes"}])") << "checks[0].nan"
            << "checks[0].nan: expected";
        QTest::newRow("region past the end")
            << QByteArray(R"([{"buffer": "c", "expected": "1", "region": {"begin": [0], "end": [17]}}])")
            << "checks[0].region.end[0]"
            << "checks[0].region.end[0]: 17 is past the buffer's x extent 16 (shape [16]; end is exclusive)";
        QTest::newRow("region y past the end")
            << QByteArray(R"([{"buffer": "img", "expected": "1", "region": {"begin": [0, 0], "end": [4, 9]}}])")
            << "checks[0].region.end[1]"
            << "checks[0].region.end[1]: 9 is past the buffer's y extent 8 (shape [8, 4]; end is exclusive)";
        QTest::newRow("region empty")
            << QByteArray(R"([{"buffer": "c", "expected": "1", "region": {"begin": [5], "end": [5]}}])")
            << "checks[0].region.end[0]"
            << "checks[0].region.end[0]: must be greater than begin[0] (5), got 5; the region is begin inclusive, "
               "end exclusive";
        QTest::newRow("region with too few axes")
            << QByteArray(R"([{"buffer": "img", "expected": "1", "region": {"begin": [0], "end": [2]}}])")
            << "checks[0].region.begin"
            << "checks[0].region.begin: expected 2 integers [x, y] (one per axis of the buffer), got [0]";
        QTest::newRow("region negative")
            << QByteArray(R"([{"buffer": "c", "expected": "1", "region": {"begin": [-1], "end": [2]}}])")
            << "checks[0].region.begin[0]"
            << "checks[0].region.begin[0]: must be at least 0, got -1";
        QTest::newRow("region without end")
            << QByteArray(R"([{"buffer": "c", "expected": "1", "region": {"begin": [1]}}])") << "checks[0].region.end"
            << "checks[0].region.end: missing";
        QTest::newRow("region unknown key")
            << QByteArray(R"([{"buffer": "c", "expected": "1", "region": {"begin": [1], "end": [2], "step": [1]}}])")
            << "checks[0].region.step"
            << "checks[0].region.step: unknown key";
        QTest::newRow("empty name") << QByteArray(R"([{"name": "", "buffer": "c", "expected": "1"}])")
                                    << "checks[0].name"
                                    << "checks[0].name: expected the check's name";
    }

    void parseErrors()
    {
        QFETCH(QByteArray, checks);
        QFETCH(QString, path);
        QFETCH(QString, message);
        const QByteArray json = R"({"format": "kernel-playground-project", "version": 1,
            "source": {"inline": "__global__ void k(float *a) {}"},
            "buffers": [{"name": "a", "dtype": "float32", "shape": [16]}, {"name": "c", "dtype": "float32", "shape": [16]},
                        {"name": "h", "dtype": "int32", "shape": [8]}, {"name": "img", "dtype": "float32", "shape": [8, 4]}],
            "checks": )" + checks +
                                "}";
        const Result<Project> r = parseProject(json);
        QVERIFY(!r);
        QCOMPARE(r.error().path, path);
        QVERIFY2(r.error().message.startsWith(message), qPrintable(r.error().message));
        QCOMPARE(r.error().code, Error::Code::BadInput);
    }

    void referenceErrors()
    {
        QTemporaryDir dir;
        QFile f(dir.filePath("p.kpg"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "kernel-playground-project", "version": 1,
            "source": {"inline": "__global__ void k(float *a) {}"},
            "buffers": [{"name": "a", "dtype": "float32", "shape": [16]}],
            "reference": {"source": "ref.cu"},
            "checks": [{"buffer": "a", "reference": "a"}]})");
        f.close();
        Result<Project> r = loadProject(f.fileName());
        QVERIFY(!r);
        QCOMPARE(r.error().path, QString("reference.source"));
        QVERIFY2(r.error().message.contains("reference.source: cannot read '" + dir.filePath("ref.cu") + "'"),
                 qPrintable(r.error().message));
        QFile ref(dir.filePath("ref.cu"));
        QVERIFY(ref.open(QIODevice::WriteOnly));
        ref.write("__global__ void r(float *a) { a[0] = 1; }\n");
        ref.close();
        r = loadProject(f.fileName());
        KP_VERIFY_RESULT(r);
        QCOMPARE(r->reference->sourceText, QString("__global__ void r(float *a) { a[0] = 1; }\n"));

        const Result<Project> bad = parseProject(QByteArray(R"({"format": "kernel-playground-project", "version": 1,
            "source": {"inline": "x"}, "buffers": [{"name": "a", "dtype": "float32", "shape": [16]}],
            "reference": {"launches": [{"kernel": "k", "grid": 1, "block": 1, "args": ["b"]}]}})"));
        QVERIFY(!bad);
        QCOMPARE(bad.error().path, QString("reference.launches[0].args[0]"));
        const Result<Project> emptySource = parseProject(QByteArray(R"({"format": "kernel-playground-project",
            "version": 1, "source": {"inline": "x"}, "reference": {"source": ""}})"));
        QVERIFY(!emptySource);
        QCOMPARE(emptySource.error().path, QString("reference.source"));
    }

    void roundTrip()
    {
        const QByteArray json = R"({"format": "kernel-playground-project", "version": 1,
            "source": {"inline": "__global__ void k(float *a) {}"},
            "buffers": [{"name": "a", "dtype": "float32", "shape": [4, 16]}, {"name": "h", "dtype": "int32", "shape": [8]}],
            "reference": {"launches": [{"kernel": "k", "grid": 1, "block": 1, "args": ["a"]}], "later": {"x": 1}},
            "checks": [{"buffer": "a", "expected": "x + y", "tolerance": {"ulp": 3}, "region": {"begin": [1, 2], "end": [5, 4]},
                        "seeds": 4, "nan": true, "futureKey": [1, 2]},
                       {"name": "hist", "buffer": "h", "npy": "h.npy"},
                       {"buffer": "a", "reference": "a", "tolerance": {}}]})";
        const Result<Project> p = parseProject(json);
        KP_VERIFY_RESULT(p);
        QCOMPARE(p->checks.size(), 3);
        QCOMPARE(p->checks[0].unknown.value("futureKey").toArray(), QJsonArray({1, 2}));
        QVERIFY(p->checks[0].tolerance == (CheckTolerance{0, 0, 3}));
        QVERIFY(p->checks[2].tolerance == (CheckTolerance{0, 0, 0}));
        QCOMPARE(p->checks[1].displayName(), QString("hist"));
        const QByteArray saved = serializeProject(*p);
        QVERIFY2(saved.contains(R"("futureKey": [1, 2])"), saved.constData());
        QVERIFY2(saved.contains(R"("later": {"x": 1})"), saved.constData());
        QVERIFY2(saved.contains(R"("tolerance": {"ulp": 3})"), saved.constData());
        const Result<Project> again = parseProject(saved);
        KP_VERIFY_RESULT(again);
        QVERIFY(again->checks == p->checks);
        QCOMPARE(again->reference->unknown, p->reference->unknown);
        QCOMPARE(serializeProject(*again), saved);
    }

    // --- Validation against resolved buffers ---
    void validate()
    {
        QTemporaryDir dir;
        const float vals[4] = {1, 2, 3, 4};
        KP_VERIFY_RESULT(writeNpy(dir.filePath("four.npy"), DType::Float32, {4}, vals));
        QFile f(dir.filePath("p.kpg"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "kernel-playground-project", "version": 1,
            "source": {"inline": "__global__ void k(float *a) {}"},
            "scalars": [{"name": "s", "type": "float32", "value": 2}],
            "buffers": [{"name": "a", "dtype": "float32", "shape": [4]}, {"name": "b", "dtype": "float32", "shape": [8]},
                        {"name": "w", "dtype": "float32", "init": {"kind": "npy", "file": "four.npy"}}],
            "checks": [{"buffer": "a", "expected": "s * a + i + a.n", "typo": 1},
                       {"buffer": "a", "npy": "four.npy", "seeds": 2},
                       {"buffer": "w", "reference": "a"},
                       {"buffer": "w", "expected": "b"}]})");
        f.close();
        Result<Project> p = loadProject(f.fileName());
        KP_VERIFY_RESULT(p);
        HostBuffers shapes;
        KP_VERIFY_RESULT(shapes.materialize(*p, true, HostBuffers::Fill::ShapesOnly));
        QHash<QString, BufferView> views;
        for (const auto &b : shapes.all()) {
            views.insert(b->spec.name, BufferView{b->spec.dtype, b->shape, nullptr, 0});
        }
        const QMap<QString, double> vars = Kp::expressionVariables(*p, shapes);
        // The last check names b, which has 8 elements, not w's 4 (from the file): not a variable there.
        Result<QStringList> v = validateChecks(*p, views, vars);
        QVERIFY(!v);
        QCOMPARE(v.error().path, QString("checks[3].expected"));
        QVERIFY2(v.error().message.startsWith("checks[3].expected: unknown variable 'b' in 'b'; known: "),
                 qPrintable(v.error().message));
        p.value().checks.removeLast();
        v = validateChecks(*p, views, vars);
        KP_VERIFY_RESULT(v);
        QCOMPARE(v->size(), 2);
        QVERIFY2(v->at(0).startsWith("checks[0].typo: unknown key, ignored"), qPrintable(v->at(0)));
        QVERIFY2(v->at(1).startsWith("checks[1].seeds: 2 runs, but no buffer has a random init"), qPrintable(v->at(1)));

        // A region checked against the shape from the file, and an npy of the wrong size.
        p.value().checks[2].region = CheckRegion{{0}, {5}};
        v = validateChecks(*p, views, vars);
        QVERIFY(!v);
        QCOMPARE(v.error().path, QString("checks[2].region.end[0]"));
        p.value().checks[2].region.reset();
        p.value().checks[1].region = CheckRegion{{1}, {3}};
        v = validateChecks(*p, views, vars);
        QVERIFY(!v);
        QCOMPARE(v.error().path, QString("checks[1].npy"));
        QVERIFY2(v.error().message.contains("holds 4 values (shape [4]); the check compares 2"),
                 qPrintable(v.error().message));
    }

    // --- Seed runs ---
    void seeds()
    {
        QCOMPARE(seedForRun(1, 0), quint64(1));
        QCOMPARE(seedForRun(1, 1), quint64(1000004));
        QCOMPARE(seedForRun(7, 3), quint64(7 + 3 * 1000003));
        QCOMPARE(seedForRun(~quint64(0), 1), quint64(1000002)); // wraps mod 2^64

        const Result<Project> p = parseProject(QByteArray(R"({"format": "kernel-playground-project", "version": 1,
            "source": {"inline": "x"},
            "buffers": [{"name": "a", "dtype": "float32", "shape": [64], "init": {"kind": "random", "seed": 5}},
                        {"name": "b", "dtype": "float32", "shape": [64], "init": {"kind": "ramp"}},
                        {"name": "n", "dtype": "float32", "shape": [64],
                         "init": {"kind": "random", "distribution": "normal", "seed": 9}}],
            "checks": [{"buffer": "b", "expected": "i", "seeds": 3}, {"buffer": "a", "expected": "a"}]})"));
        KP_VERIFY_RESULT(p);
        QCOMPARE(seedRunsNeeded(*p), 3);
        const Project p0 = projectForSeedRun(*p, 0);
        const Project p2 = projectForSeedRun(*p, 2);
        QCOMPARE(p0.buffers[0].init.seed, quint64(5));
        QCOMPARE(p2.buffers[0].init.seed, quint64(5 + 2 * 1000003));
        QCOMPARE(p2.buffers[2].init.seed, quint64(9 + 2 * 1000003));
        QCOMPARE(p2.buffers[1].init.kind, BufferInit::Kind::Ramp);
        QCOMPARE(p2.buffers[1].init.seed, p0.buffers[1].init.seed);

        // The contents differ from run 0's, and are the generator's for the new seed.
        HostBuffers b0;
        HostBuffers b2;
        KP_VERIFY_RESULT(b0.materialize(p0));
        KP_VERIFY_RESULT(b2.materialize(p2));
        const float *a0 = static_cast<const float *>(b0.find("a")->memory.data());
        const float *a2 = static_cast<const float *>(b2.find("a")->memory.data());
        int same = 0;
        for (int i = 0; i < 64; ++i) {
            same += a0[i] == a2[i] ? 1 : 0;
            QCOMPARE(a2[i], float(randomUnit(5 + 2 * 1000003, i)));
        }
        QVERIFY(same < 4);
        QCOMPARE(std::memcmp(b0.find("b")->memory.data(), b2.find("b")->memory.data(), 64 * 4), 0);

        // The first failing run is reported.
        CheckResult r0;
        r0.passed = true;
        r0.seedRuns = 3;
        CheckResult r1;
        r1.passed = false;
        r1.seedRun = 1;
        r1.seedRuns = 3;
        r1.mismatches = 4;
        CheckResult r2 = r1;
        r2.seedRun = 2;
        r2.mismatches = 9;
        CheckResult merged = r0;
        mergeSeedRun(merged, r1);
        mergeSeedRun(merged, r2);
        QVERIFY(!merged.passed);
        QCOMPARE(merged.seedRun, 1);
        QCOMPARE(merged.mismatches, qint64(4));
        QCOMPARE(merged.seedRuns, 3);
        QVERIFY(checkResultText(merged).contains("seed run 1 of 3"));
    }

    void referenceProject()
    {
        QTemporaryDir dir;
        QFile ref(dir.filePath("ref.cu"));
        QVERIFY(ref.open(QIODevice::WriteOnly));
        ref.write("__global__ void r(float *a) {}\n");
        ref.close();
        QFile f(dir.filePath("p.kpg"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "kernel-playground-project", "version": 1,
            "source": {"inline": "__global__ void k(float *a) {}"},
            "buffers": [{"name": "a", "dtype": "float32", "shape": [16]}],
            "launches": [{"kernel": "k", "grid": 1, "block": 16, "args": ["a"]}],
            "reference": {"source": "ref.cu", "launches": [{"kernel": "r", "grid": 2, "block": 8, "args": ["a"]}]},
            "checks": [{"buffer": "a", "reference": "a"}]})");
        f.close();
        const Result<Project> p = loadProject(f.fileName());
        KP_VERIFY_RESULT(p);
        const Project r = referenceProjectFor(*p);
        QCOMPARE(r.sourceFile, QString("ref.cu"));
        QCOMPARE(r.sourceText, QString("__global__ void r(float *a) {}\n"));
        QCOMPARE(r.launches.size(), 1);
        QCOMPARE(r.launches[0].kernel, QString("r"));
        QVERIFY(!r.timing.enabled);
        QVERIFY(r.checks.isEmpty());
        // Without a "reference": the project itself, untimed.
        Project plain = *p;
        plain.reference.reset();
        const Project r2 = referenceProjectFor(plain);
        QCOMPARE(r2.sourceText, p->sourceText);
        QCOMPARE(r2.launches[0].kernel, QString("k"));
        QVERIFY(!r2.timing.enabled);
    }

    // --- Speed: a 1M-element expression check ---
    void speed()
    {
        const qint64 n = 1 << 20;
        const QList<BufferSpec> specs{specFor("a", DType::Float32, {n}), specFor("b", DType::Float32, {n}),
                                      specFor("c", DType::Float32, {n})};
        const CheckSpec check = parseCheck(R"({"buffer": "c", "expected": "a + b"})", specs);
        HostData a = makeData(DType::Float32, {n});
        HostData b = makeData(DType::Float32, {n});
        HostData c = makeData(DType::Float32, {n});
        float *pa = reinterpret_cast<float *>(a.bytes.data());
        float *pb = reinterpret_cast<float *>(b.bytes.data());
        float *pc = reinterpret_cast<float *>(c.bytes.data());
        for (qint64 i = 0; i < n; ++i) {
            pa[i] = float(randomUnit(1, i));
            pb[i] = float(randomUnit(2, i));
            pc[i] = pa[i] + pb[i];
        }
        CheckData data;
        data.initial = {{"a", a.view()}, {"b", b.view()}, {"c", c.view()}};
        data.after.insert("c", c.view());
        QElapsedTimer t;
        t.start();
        const Result<CheckResult> r = evaluateCheck(check, data, 0);
        const double ms = double(t.nsecsElapsed()) / 1e6;
        KP_VERIFY_RESULT(r);
        QVERIFY(r->passed);
        QCOMPARE(r->compared, n);
        qInfo("1M-element expression check 'a + b': %.1f ms (%.1f ns per element)", ms, ms * 1e6 / double(n));
        QVERIFY2(ms < 1000, qPrintable(QString::number(ms)));

        const CheckSpec refCheck = parseCheck(R"({"buffer": "c", "reference": "c"})", specs);
        data.reference.insert("c", c.view());
        t.restart();
        const Result<CheckResult> r2 = evaluateCheck(refCheck, data, 0);
        qInfo("1M-element reference check: %.1f ms", double(t.nsecsElapsed()) / 1e6);
        KP_VERIFY_RESULT(r2);
        QVERIFY(r2->passed);
    }
};

QTEST_GUILESS_MAIN(TestChecks)
#include "tst_checks.moc"
