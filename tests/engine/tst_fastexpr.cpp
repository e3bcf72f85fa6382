// The block evaluator (core/fastexpr) against muparser (Kp::Expression), bit
// for bit: hand-written expressions for every operator, precedence case,
// function and constant, a few thousand expressions from a seeded grammar,
// the fallback for what it does not translate, and fillBuffer's values.

#include "buffers/bufferinit.h"
#include "buffers/bufferspec.h"
#include "core/expression.h"
#include "core/fastexpr.h"

#include <QtTest>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace Kp;

namespace {

const char *const kVarying[] = {"i", "x", "y", "z", "c"};
constexpr int kVaryingCount = 5;

struct Evaluators
{
    Expression expr;
    std::vector<const double *> storage; ///< what compile() gets
    std::vector<double *> vars;          ///< the same storage, to set per element
};

// Sets up the variables fillExpression defines: i x y z c vary, nx ny nz n
// and two scalars (w, h) are constants.
void define(Evaluators &ev)
{
    ev.expr.set(QStringLiteral("w"), 2.5);
    ev.expr.set(QStringLiteral("h"), -3);
    ev.expr.set(QStringLiteral("nx"), 640);
    ev.expr.set(QStringLiteral("ny"), 480);
    ev.expr.set(QStringLiteral("nz"), 1);
    ev.expr.set(QStringLiteral("n"), 640 * 480);
    for (const char *name : kVarying) {
        ev.vars.push_back(ev.expr.variable(QString::fromLatin1(name)));
        ev.storage.push_back(ev.vars.back());
    }
}

// Values for the varying variables: negatives, zeros of both signs,
// integers, non-integers, large and tiny magnitudes.
std::vector<std::vector<double>> sampleValues(std::mt19937_64 &rng, int count)
{
    std::vector<std::vector<double>> values(kVaryingCount, std::vector<double>(static_cast<std::size_t>(count)));
    std::uniform_int_distribution<int> pick(0, 7);
    std::uniform_int_distribution<int> smallInt(-6, 6);
    std::uniform_real_distribution<double> real(-10, 10);
    std::uniform_real_distribution<double> wide(-1e6, 1e6);
    for (auto &column : values) {
        for (double &v : column) {
            switch (pick(rng)) {
            case 0: v = 0.0; break;
            case 1: v = -0.0; break;
            case 2:
            case 3: v = smallInt(rng); break;
            case 4: v = real(rng); break;
            case 5: v = std::round(wide(rng)); break;
            case 6: v = wide(rng); break;
            default: v = real(rng) * 1e-5; break;
            }
        }
    }
    return values;
}

bool same(double a, double b)
{
    if (std::isnan(a) && std::isnan(b)) {
        return true;
    }
    std::uint64_t x;
    std::uint64_t y;
    std::memcpy(&x, &a, 8);
    std::memcpy(&y, &b, 8);
    return x == y;
}

// Compares both evaluators on the values; returns an empty string when every
// value agrees, else what differs.
QString compare(Evaluators &ev, const FastExpression &fast, const std::vector<std::vector<double>> &values)
{
    const int count = static_cast<int>(values[0].size());
    FastExpression::Scratch scratch;
    std::vector<double> got(static_cast<std::size_t>(count));
    for (int b = 0; b < count; b += FastExpression::kBlock) {
        const int m = std::min(FastExpression::kBlock, count - b);
        const double *inputs[kVaryingCount];
        for (int k = 0; k < kVaryingCount; ++k) {
            inputs[k] = values[static_cast<std::size_t>(k)].data() + b;
        }
        const Status s = fast.evaluate(inputs, m, got.data() + b, scratch);
        if (!s) {
            return s.error().message;
        }
    }
    for (int e = 0; e < count; ++e) {
        for (int k = 0; k < kVaryingCount; ++k) {
            *ev.vars[static_cast<std::size_t>(k)] = values[static_cast<std::size_t>(k)][static_cast<std::size_t>(e)];
        }
        const Result<double> want = ev.expr.evaluate();
        if (!want) {
            return QStringLiteral("muparser failed: ") + want.error().message;
        }
        if (!same(*want, got[static_cast<std::size_t>(e)])) {
            QStringList at;
            for (int k = 0; k < kVaryingCount; ++k) {
                at << QStringLiteral("%1=%2")
                          .arg(QLatin1String(kVarying[k]))
                          .arg(values[static_cast<std::size_t>(k)][static_cast<std::size_t>(e)], 0, 'g', 17);
            }
            return QStringLiteral("at %1: muparser %2, fast %3")
                .arg(at.join(QLatin1Char(' ')))
                .arg(*want, 0, 'g', 17)
                .arg(got[static_cast<std::size_t>(e)], 0, 'g', 17);
        }
    }
    return {};
}

// A seeded grammar over every operator, function and constant, with and
// without parentheses so that precedence and associativity are exercised.
class Grammar
{
public:
    explicit Grammar(std::uint64_t seed)
        : m_rng(seed)
    {
    }

    QString expression(int depth)
    {
        const int choice = depth <= 0 ? 0 : roll(10);
        switch (choice) {
        case 0:
        case 1: return leaf();
        case 2: return QStringLiteral("-") + expression(depth - 1);
        case 3: return QStringLiteral("(") + expression(depth - 1) + QStringLiteral(")");
        case 4: return call(depth - 1);
        case 5:
            return QStringLiteral("(%1 ? %2 : %3)")
                .arg(expression(depth - 1), expression(depth - 1), expression(depth - 1));
        default: {
            static const char *const ops[] = {"+",  "-",  "*",  "/",  "^",  "%",  "<", ">",
                                              "<=", ">=", "==", "!=", "&&", "||", "^", "*"};
            const QString op = QString::fromLatin1(ops[roll(16)]);
            const QString text =
                expression(depth - 1) + QLatin1Char(' ') + op + QLatin1Char(' ') + expression(depth - 1);
            return roll(3) == 0 ? QStringLiteral("(") + text + QStringLiteral(")") : text;
        }
        }
    }

private:
    int roll(int n) { return std::uniform_int_distribution<int>(0, n - 1)(m_rng); }

    QString leaf()
    {
        static const char *const leaves[] = {"x", "y", "z",   "i",  "c",   "nx",   "w",   "h",  "n",   "0", "1", "2",
                                             "3", "4", "0.5", "10", "300", "1e-3", "_pi", "_e", "2.5", "x", "y", "x"};
        return QString::fromLatin1(leaves[roll(static_cast<int>(std::size(leaves)))]);
    }

    QString call(int depth)
    {
        struct Fn
        {
            const char *name;
            int args; // -1: one to four
        };
        static const Fn fns[] = {{"sin", 1},      {"cos", 1},  {"tan", 1},   {"asin", 1}, {"acos", 1},  {"atan", 1},
                                 {"atan2", 2},    {"sinh", 1}, {"cosh", 1},  {"tanh", 1}, {"asinh", 1}, {"acosh", 1},
                                 {"atanh", 1},    {"log2", 1}, {"log10", 1}, {"log", 1},  {"ln", 1},    {"exp", 1},
                                 {"sqrt", 1},     {"sign", 1}, {"rint", 1},  {"abs", 1},  {"sum", -1},  {"avg", -1},
                                 {"min", -1},     {"max", -1}, {"floor", 1}, {"ceil", 1}, {"round", 1}, {"ceil_div", 2},
                                 {"round_up", 2}, {"fmod", 2}};
        const Fn &fn = fns[roll(static_cast<int>(std::size(fns)))];
        const int args = fn.args > 0 ? fn.args : 1 + roll(4);
        QStringList list;
        for (int a = 0; a < args; ++a) {
            list << expression(depth);
        }
        return QStringLiteral("%1(%2)").arg(QLatin1String(fn.name), list.join(QStringLiteral(", ")));
    }

    std::mt19937_64 m_rng;
};

} // namespace

class TestFastExpr : public QObject
{
    Q_OBJECT

private slots:
    void matchesMuparser_data();
    void matchesMuparser();
    void randomExpressionsMatch();
    void squareIsPowNotProduct_data();
    void squareIsPowNotProduct();
    void unsupportedFallsBack_data();
    void unsupportedFallsBack();
    void fillBufferMatchesMuparser_data();
    void fillBufferMatchesMuparser();
};

void TestFastExpr::matchesMuparser_data()
{
    QTest::addColumn<QString>("text");
    const auto row = [](const char *name, const char *text) { QTest::newRow(name) << QString::fromLatin1(text); };
    // Operators and their precedence and associativity.
    row("add", "x + y");
    row("sub", "x - y");
    row("mul", "x * y");
    row("div", "x / y");
    row("div_by_zero", "x / 0");
    row("zero_by_zero", "(x - x) / (y - y)");
    row("pow", "x ^ y");
    row("pow_right_assoc", "2 ^ 3 ^ y");
    row("pow_const_2", "(x - 300) ^ 2");
    row("pow_const_half", "(x + y) ^ 0.5");
    row("pow_const_neg", "(x + y) ^ -2");
    row("pow_var_0_1_2_3_4", "x^0 + x^1 + x^2 + x^3 + x^4");
    row("pow_var_5", "x ^ 5");
    row("mod", "x % y");
    row("mod_precedence", "x + y % 3 * 2");
    row("sub_left_assoc", "x - y - z");
    row("div_left_assoc", "x / y / 3");
    row("mul_before_add", "x + y * z");
    row("unary_minus_vs_pow", "-x ^ 2");
    row("unary_minus_vs_pow_const", "-2 ^ 2");
    row("pow_of_unary_minus", "2 ^ -x");
    row("double_minus", "-(-x)");
    row("unary_plus", "+x - +y");
    row("minus_paren_pow", "-(x) ^ 2 + (-x) ^ 2");
    // Comparisons and logic give 1 or 0.
    row("lt", "x < y");
    row("gt", "x > y");
    row("le", "x <= y");
    row("ge", "x >= y");
    row("eq", "x == y");
    row("ne", "x != y");
    row("and", "x && y");
    row("or", "x || y");
    row("and_nan", "(x - x) / (y - y) && 1");
    row("logic_precedence", "x < y && y < z || x == 0");
    row("compare_vs_add", "x + 1 < y * 2");
    row("ternary", "x < y ? x : y");
    row("ternary_nested", "x < 0 ? -1 : x == 0 ? 0 : 1");
    row("ternary_nan_condition", "(x - x) / (y - y) ? 1 : 2");
    row("ternary_in_args", "min(x ? y : z, 2)");
    row("ternary_then_op", "(x > 0 ? x : -x) * 3 + 1");
    row("ternary_const", "1 ? 2 : 3");
    // muparser's byte-code rewrites.
    row("varmul", "2 * x + 1");
    row("varmul_right", "x * 2 - 1");
    row("varmul_fold", "2 * (3 * x + 1)");
    row("varmul_div", "4 * x / 2");
    row("x_plus_x", "x + x");
    row("x_minus_x", "x - x");
    row("x_times_x", "x * x");
    row("const_fold", "1 + 2 * 3 - 4 / 8 + 2 ^ 10");
    row("const_logic_fold", "0.5 && 1");
    row("constant_vars", "nx * x + w - h ^ 2 + n / ny");
    // Functions and constants.
    row("trig", "sin(x) + cos(y) + tan(z)");
    row("arc", "asin(x / 10) + acos(y / 10) + atan(z)");
    row("atan2", "atan2(x, y)");
    row("hyperbolic", "sinh(x / 100) + cosh(y / 100) + tanh(z)");
    row("arc_hyperbolic", "asinh(x) + acosh(y) + atanh(z / 10)");
    row("logs", "log2(x) + log10(y) + log(z) + ln(x)");
    row("exp_sqrt", "exp(x / 100) + sqrt(y)");
    row("sign_rint_abs", "sign(x) + rint(y) + abs(z)");
    row("abs_negative_zero", "abs(x * 0)");
    row("sum_avg", "sum(x, y, z) + avg(x, y) + sum(x)");
    row("min_max", "min(x, y, z) + max(x, y, 3, z)");
    row("min_nan", "min((x - x) / (y - y), 1) + max(1, (x - x) / (y - y))");
    row("floor_ceil_round", "floor(x) + ceil(y) + round(z)");
    row("ceil_div", "ceil_div(x, y)");
    row("round_up", "round_up(x, 3)");
    row("fmod", "fmod(x, y)");
    row("constants", "_pi * x + _e");
    row("nested_calls", "sqrt(abs(sin(x) * 100)) + max(floor(x), ceil_div(y, 4))");
    row("heat", "100 * (((x - 300)^2 + (y - 400)^2 < 80^2) + ((x - 700)^2 + (y - 600)^2 < 120^2))");
    row("all_varying", "i + x * 2 + y * 3 + z * 4 + c * 5");
    row("constant_only", "3 * 4");
    row("single_var", "x");
    row("single_pow2", "y^2");
}

void TestFastExpr::matchesMuparser()
{
    QFETCH(QString, text);
    Evaluators ev;
    define(ev);
    KP_VERIFY_RESULT(ev.expr.parse(text, QStringLiteral("row")));
    const auto fast = FastExpression::compile(ev.expr, ev.storage);
    KP_VERIFY_RESULT(fast);
    std::mt19937_64 rng(qHash(text));
    auto values = sampleValues(rng, 3 * FastExpression::kBlock + 7);
    // The heat row also on its own grid of integers, as a fill gives them.
    for (std::size_t e = 0; e < values[1].size(); e += 3) {
        values[1][e] = static_cast<double>(e % 1024);
        values[2][e] = static_cast<double>(e / 3);
    }
    const QString diff = compare(ev, **fast, values);
    QVERIFY2(diff.isEmpty(), qPrintable(text + QStringLiteral(": ") + diff));
}

void TestFastExpr::randomExpressionsMatch()
{
    Grammar grammar(20261205);
    std::mt19937_64 rng(7);
    int compared = 0;
    int refused = 0;
    for (int r = 0; r < 3000; ++r) {
        const QString text = grammar.expression(1 + r % 5);
        Evaluators ev;
        define(ev);
        if (!ev.expr.parse(text, QStringLiteral("random"))) {
            continue; // muparser refuses it; so does the fill, before any fast path
        }
        const auto fast = FastExpression::compile(ev.expr, ev.storage);
        if (!fast) {
            ++refused;
            continue;
        }
        const QString diff = compare(ev, **fast, sampleValues(rng, 64));
        QVERIFY2(diff.isEmpty(), qPrintable(QStringLiteral("'%1': %2").arg(text, diff)));
        ++compared;
    }
    qInfo("%d random expressions compared, %d left to muparser", compared, refused);
    QVERIFY2(compared >= 2500, qPrintable(QStringLiteral("only %1 of 3000 compared").arg(compared)));
}

void TestFastExpr::squareIsPowNotProduct_data()
{
    QTest::addColumn<QString>("base");
    QTest::newRow("sum_squared") << QStringLiteral("x + y");
    QTest::newRow("shifted_squared") << QStringLiteral("x - 300");
    QTest::newRow("scaled_squared") << QStringLiteral("x * 3 + y");
}

// muparser computes (a)^2 with pow, which differs from a*a in the last bit
// for about one double in a thousand; integers (exact squares) take the
// product. Many non-integers, so that such values are surely among them.
void TestFastExpr::squareIsPowNotProduct()
{
    QFETCH(QString, base);
    const QString text = QStringLiteral("(%1) ^ 2").arg(base);
    Evaluators ev;
    define(ev);
    KP_VERIFY_RESULT(ev.expr.parse(text, QStringLiteral("row")));
    const auto fast = FastExpression::compile(ev.expr, ev.storage);
    KP_VERIFY_RESULT(fast);
    Evaluators baseEv;
    define(baseEv);
    KP_VERIFY_RESULT(baseEv.expr.parse(base, QStringLiteral("base")));
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> real(-1000, 1000);
    std::vector<std::vector<double>> values(kVaryingCount, std::vector<double>(100000));
    volatile double two = 2.0; // not folded into a product
    int differ = 0;
    for (std::size_t e = 0; e < values[1].size(); ++e) {
        values[1][e] = e % 4 == 0 ? std::round(real(rng)) : real(rng);
        values[2][e] = e % 4 == 0 ? 7 : real(rng);
        *baseEv.vars[1] = values[1][e];
        *baseEv.vars[2] = values[2][e];
        const double a = baseEv.expr.evaluate().value();
        differ += a * a != std::pow(a, two) ? 1 : 0;
    }
    QVERIFY2(differ > 10, "no value where pow and the product differ: the row would test nothing");
    const QString diff = compare(ev, **fast, values);
    QVERIFY2(diff.isEmpty(), qPrintable(text + QStringLiteral(": ") + diff));
}

void TestFastExpr::unsupportedFallsBack_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("reason");
    QTest::newRow("assignment") << QStringLiteral("y = x * 2") << QStringLiteral("an assignment (=)");
    QTest::newRow("assignment_in_sum") << QStringLiteral("x + (y = 3)") << QStringLiteral("an assignment (=)");
    // 70 nested right operands: 70 values on the stack at once.
    QString deep = QStringLiteral("x");
    for (int d = 0; d < 70; ++d) {
        deep = QStringLiteral("sin(x) + (%1)").arg(deep);
    }
    QTest::newRow("deep_stack") << deep << QStringLiteral("values on the stack (at most 64)");
}

void TestFastExpr::unsupportedFallsBack()
{
    QFETCH(QString, text);
    QFETCH(QString, reason);
    {
        Evaluators ev;
        define(ev);
        KP_VERIFY_RESULT(ev.expr.parse(text, QStringLiteral("row")));
        const auto fast = FastExpression::compile(ev.expr, ev.storage);
        QVERIFY(!fast);
        QVERIFY2(fast.error().message.contains(reason), qPrintable(fast.error().message));
    }
    // The fill still gives muparser's values, element by element.
    BufferSpec spec;
    spec.name = QStringLiteral("a");
    spec.dtype = DType::Float64;
    spec.shape = {3, 5};
    spec.init.kind = BufferInit::Kind::Expression;
    spec.init.expression = text;
    std::vector<double> got(15);
    KP_VERIFY_RESULT(fillBuffer(spec, got.data(), 15 * 8, QString(), {}));
    Expression ref;
    double *x = ref.variable(QStringLiteral("x"));
    double *y = ref.variable(QStringLiteral("y"));
    KP_VERIFY_RESULT(ref.parse(text, QStringLiteral("ref")));
    for (int e = 0; e < 15; ++e) {
        *x = e % 5;
        *y = e / 5;
        const Result<double> want = ref.evaluate();
        KP_VERIFY_RESULT(want);
        QCOMPARE(got[static_cast<std::size_t>(e)], *want);
    }
}

void TestFastExpr::fillBufferMatchesMuparser_data()
{
    QTest::addColumn<int>("dtype");
    QTest::addColumn<QList<qint64>>("shape");
    QTest::addColumn<QString>("text");
    const auto row = [](const char *name, DType d, QList<qint64> shape, const char *text) {
        QTest::newRow(name) << static_cast<int>(d) << shape << QString::fromLatin1(text);
    };
    row("heat_float32_threads", DType::Float32, {1024, 1024},
        "100 * (((x - 300)^2 + (y - 400)^2 < 80^2) + ((x - 700)^2 + (y - 600)^2 < 120^2))");
    row("float2_components_3d", DType::Float2, {3, 70, 90}, "i * 0.5 + c - z * 7 + sin(x + y)");
    row("float64_odd_block", DType::Float64, {1031}, "x / nx + n - (x % 7 ? 1 : -1)");
    row("int32_rounding", DType::Int32, {17, 33}, "(x - 8) * 2.5 + y ^ 3 - s");
    row("half", DType::Float16, {600, 600}, "sqrt(x * y) / 3");
    row("z_stepping_3d", DType::Float32, {4, 5, 6}, "z * 100 + y * 10 + x");
}

void TestFastExpr::fillBufferMatchesMuparser()
{
    QFETCH(int, dtype);
    QFETCH(QList<qint64>, shape);
    QFETCH(QString, text);
    BufferSpec spec;
    spec.name = QStringLiteral("a");
    spec.dtype = static_cast<DType>(dtype);
    spec.shape = shape;
    spec.init.kind = BufferInit::Kind::Expression;
    spec.init.expression = text;
    const QMap<QString, double> scalars{{QStringLiteral("s"), 4.25}};
    const qint64 bytes = spec.byteSize();
    QByteArray got(static_cast<qsizetype>(bytes), '\x55');
    KP_VERIFY_RESULT(fillBuffer(spec, got.data(), bytes, QString(), scalars));

    // The reference: muparser per element and component, as the fill did before.
    const DTypeInfo &info = dtypeInfo(spec.dtype);
    const qint64 n = spec.elementCount();
    const qsizetype nd = shape.size();
    const qint64 nx = shape[nd - 1];
    const qint64 ny = nd >= 2 ? shape[nd - 2] : 1;
    const qint64 nz = nd >= 3 ? shape[nd - 3] : 1;
    Expression ref;
    ref.set(QStringLiteral("s"), 4.25);
    ref.set(QStringLiteral("nx"), static_cast<double>(nx));
    ref.set(QStringLiteral("ny"), static_cast<double>(ny));
    ref.set(QStringLiteral("nz"), static_cast<double>(nz));
    ref.set(QStringLiteral("n"), static_cast<double>(n));
    double *vi = ref.variable(QStringLiteral("i"));
    double *vx = ref.variable(QStringLiteral("x"));
    double *vy = ref.variable(QStringLiteral("y"));
    double *vz = ref.variable(QStringLiteral("z"));
    double *vc = ref.variable(QStringLiteral("c"));
    KP_VERIFY_RESULT(ref.parse(text, QStringLiteral("ref")));
    QByteArray want(static_cast<qsizetype>(bytes), '\0');
    for (qint64 e = 0; e < n; ++e) {
        *vi = static_cast<double>(e);
        *vx = static_cast<double>(e % nx);
        *vy = static_cast<double>((e / nx) % ny);
        *vz = static_cast<double>(e / (nx * ny));
        for (int c = 0; c < info.components; ++c) {
            *vc = c;
            const Result<double> v = ref.evaluate();
            KP_VERIFY_RESULT(v);
            storeComponent(info.component, *v, want.data() + e * info.elementBytes() + c * info.componentBytes);
        }
    }
    if (got != want) {
        for (qint64 k = 0; k < bytes; ++k) {
            if (got[k] != want[k]) {
                QFAIL(qPrintable(QStringLiteral("byte %1 (element %2) differs").arg(k).arg(k / info.elementBytes())));
            }
        }
    }
}

QTEST_GUILESS_MAIN(TestFastExpr)
#include "tst_fastexpr.moc"
