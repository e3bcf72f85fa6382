#include "fastexpr.h"

#include "expression.h"

#include <muParser.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

// The block loops also as AVX2 code, chosen at load time where the CPU has
// it (4 doubles a step instead of SSE2's 2). AVX2 does not include FMA, and
// contraction is off for this file, so the values are the same.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define KP_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define KP_VECTOR_CLONES
#endif

namespace Kp {

namespace {

enum class Kind {
    Val,     ///< push a constant
    Var,     ///< push varying input `input`
    VarMul,  ///< push input * a + b (muparser's cmVARMUL)
    VarPow2, ///< push v*v
    VarPow3, ///< push v*v*v
    VarPow4, ///< push v*v*v*v
    Le,
    Ge,
    Ne,
    Eq,
    Lt,
    Gt,
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    PowConst, ///< top = pow(top, a): the exponent was a constant pushed just before
    And,
    Or,
    If,       ///< the condition stays on the stack until EndIf
    Else,     ///< marks the end of the first arm (nothing to do)
    EndIf,    ///< [cond, then, else] -> cond == 0 ? else : then
    Neg,      ///< muparser's unary minus
    Func,     ///< a callback of `argc` (0..4) fixed arguments
    FuncMulti ///< a callback of -argc arguments passed as an array
};

// The unary minus muparser defines for its parsers, found by compiling "-v":
// its address is inside the muparser library, not a function this program
// can name.
mu::generic_callable_type unaryMinus()
{
    static const mu::generic_callable_type cb = [] {
        mu::generic_callable_type found{nullptr, nullptr};
        try {
            mu::Parser probe;
            double v = 0;
            probe.DefineVar("v", &v);
            probe.SetExpr("-v");
            probe.Eval();
            const mu::ParserByteCode &code = probe.GetByteCode();
            const mu::SToken *tok = code.GetBase();
            if (code.GetSize() == 3 && tok[0].Cmd == mu::cmVAR && tok[1].Cmd == mu::cmFUNC && tok[1].Fun.argc == 1) {
                found = tok[1].Fun.cb;
            }
        } catch (const mu::Parser::exception_type &) {
            // Not found: unary minus is then called through its callback like any function.
        }
        return found;
    }();
    return cb;
}

Error unsupported(const QString &what)
{
    return Error{QStringLiteral("expression"), Error::Code::BadInput, {}, QStringLiteral("fast path: %1").arg(what)};
}

} // namespace

struct FastExpression::Op
{
    Kind kind = Kind::Val;
    int input = -1;
    double a = 0;
    double b = 0;
    int argc = 0;
    bool constRight = false; ///< a binary operator whose right operand is b
    mu::generic_callable_type cb{nullptr, nullptr};
};

FastExpression::FastExpression() = default;
FastExpression::~FastExpression() = default;

Result<std::shared_ptr<const FastExpression>> FastExpression::compile(const Expression &expr,
                                                                      const std::vector<const double *> &varying)
{
    std::shared_ptr<FastExpression> fast(new FastExpression);
    fast->m_uses.assign(varying.size(), false);
    const mu::ParserByteCode &code = expr.m_parser->GetByteCode();
    if (code.GetSize() < 2 || code.GetBase()[code.GetSize() - 1].Cmd != mu::cmEND) {
        return unsupported(QStringLiteral("no complete byte code (the text was not parsed)"));
    }
    const mu::SToken *tok = code.GetBase();
    const mu::generic_callable_type minus = unaryMinus();

    // Depth of this program's stack, which keeps each ?: condition until its
    // end; ifDepth holds that depth at each open IF to check the arms.
    int depth = 0;
    std::vector<int> ifDepth;
    const auto push = [&](Op op) {
        fast->m_ops.push_back(op);
        fast->m_depth = std::max(fast->m_depth, ++depth);
    };
    const auto inputOf = [&](const double *ptr) {
        const auto it = std::find(varying.begin(), varying.end(), ptr);
        return it == varying.end() ? -1 : static_cast<int>(it - varying.begin());
    };
    for (std::size_t t = 0; t + 1 < code.GetSize(); ++t) {
        const mu::SToken &k = tok[t];
        Op op;
        switch (k.Cmd) {
        case mu::cmVAL:
            op.kind = Kind::Val;
            op.a = k.Val.data2;
            push(op);
            continue;
        case mu::cmVAR:
        case mu::cmVARMUL:
        case mu::cmVARPOW2:
        case mu::cmVARPOW3:
        case mu::cmVARPOW4: {
            const int input = inputOf(k.Val.ptr);
            if (input >= 0) {
                fast->m_uses[static_cast<std::size_t>(input)] = true;
                op.input = input;
                op.a = k.Val.data;
                op.b = k.Val.data2;
                op.kind = k.Cmd == mu::cmVAR       ? Kind::Var
                          : k.Cmd == mu::cmVARMUL  ? Kind::VarMul
                          : k.Cmd == mu::cmVARPOW2 ? Kind::VarPow2
                          : k.Cmd == mu::cmVARPOW3 ? Kind::VarPow3
                                                   : Kind::VarPow4;
            } else {
                // A constant: computed now with the operations muparser's interpreter uses.
                const double v = *k.Val.ptr;
                op.kind = Kind::Val;
                switch (k.Cmd) {
                case mu::cmVAR: op.a = v; break;
                case mu::cmVARMUL: op.a = v * k.Val.data + k.Val.data2; break;
                case mu::cmVARPOW2: op.a = v * v; break;
                case mu::cmVARPOW3: op.a = v * v * v; break;
                default: op.a = v * v * v * v; break;
                }
            }
            push(op);
            continue;
        }
        case mu::cmLE: op.kind = Kind::Le; break;
        case mu::cmGE: op.kind = Kind::Ge; break;
        case mu::cmNEQ: op.kind = Kind::Ne; break;
        case mu::cmEQ: op.kind = Kind::Eq; break;
        case mu::cmLT: op.kind = Kind::Lt; break;
        case mu::cmGT: op.kind = Kind::Gt; break;
        case mu::cmADD: op.kind = Kind::Add; break;
        case mu::cmSUB: op.kind = Kind::Sub; break;
        case mu::cmMUL: op.kind = Kind::Mul; break;
        case mu::cmDIV: op.kind = Kind::Div; break;
        case mu::cmPOW: op.kind = Kind::Pow; break;
        case mu::cmLAND: op.kind = Kind::And; break;
        case mu::cmLOR: op.kind = Kind::Or; break;
        case mu::cmIF:
            if (depth < 1) {
                return unsupported(QStringLiteral("?: without a condition"));
            }
            ifDepth.push_back(depth);
            op.kind = Kind::If;
            fast->m_ops.push_back(op);
            continue;
        case mu::cmELSE:
            if (ifDepth.empty() || depth != ifDepth.back() + 1) {
                return unsupported(QStringLiteral("a ?: whose first arm is not one value"));
            }
            op.kind = Kind::Else;
            fast->m_ops.push_back(op);
            continue;
        case mu::cmENDIF:
            if (ifDepth.empty() || depth != ifDepth.back() + 2) {
                return unsupported(QStringLiteral("a ?: whose second arm is not one value"));
            }
            ifDepth.pop_back();
            depth -= 2;
            op.kind = Kind::EndIf;
            fast->m_ops.push_back(op);
            continue;
        case mu::cmFUNC: {
            const int argc = k.Fun.argc;
            const int n = argc >= 0 ? argc : -argc;
            if (argc > 4 || n == 0 || n > depth) {
                if (argc == 0) {
                    op.kind = Kind::Func;
                    op.cb = k.Fun.cb;
                    push(op);
                    continue;
                }
                return unsupported(QStringLiteral("a function of %1 arguments").arg(n));
            }
            op.cb = k.Fun.cb;
            op.argc = argc;
            if (argc == 1 && minus._pRawFun && k.Fun.cb == minus) {
                op.kind = Kind::Neg;
            } else {
                op.kind = argc > 0 ? Kind::Func : Kind::FuncMulti;
                fast->m_maxArgs = std::max(fast->m_maxArgs, n);
            }
            fast->m_ops.push_back(op);
            depth -= n - 1;
            continue;
        }
        case mu::cmASSIGN: return unsupported(QStringLiteral("an assignment (=)"));
        case mu::cmFUNC_STR: return unsupported(QStringLiteral("a function of a string"));
        case mu::cmFUNC_BULK: return unsupported(QStringLiteral("a bulk-mode function"));
        default:
            // cmSTRING and codes of a newer muparser.
            return unsupported(QStringLiteral("muparser byte code %1").arg(static_cast<int>(k.Cmd)));
        }
        // A binary operator.
        if (depth < 2) {
            return unsupported(QStringLiteral("an operator without two operands"));
        }
        // A constant right operand is read from the op rather than from an
        // array filled with it.
        if (fast->m_ops.back().kind == Kind::Val) {
            if (op.kind == Kind::Pow) {
                op.kind = Kind::PowConst;
                op.a = fast->m_ops.back().a;
            } else {
                op.constRight = true;
                op.b = fast->m_ops.back().a;
            }
            fast->m_ops.pop_back();
        }
        fast->m_ops.push_back(op);
        --depth;
    }
    if (depth != 1 || !ifDepth.empty()) {
        return unsupported(QStringLiteral("%1 results").arg(depth));
    }
    // Each level is a block of doubles per thread; muparser needs one double.
    if (fast->m_depth > kMaxDepth) {
        return unsupported(QStringLiteral("%1 values on the stack (at most %2)").arg(fast->m_depth).arg(kMaxDepth));
    }
    return std::shared_ptr<const FastExpression>(std::move(fast));
}

namespace {

// The exponent 2 where the compiler cannot see it: GCC rewrites pow(v, 2.0)
// as v*v, but glibc's pow(v, 2) differs from v*v in the last bit for about
// one double in a thousand, and muparser calls pow.
volatile double g_two = 2.0;

// Whether v*v is exact: v is 0, or its significand has at most 26 bits (the
// low 27 of its 52 stored bits are 0) and 2^-500 <= |v| < 2^500. Read as two
// 32-bit halves so that the loop vectorises with SSE2, which has no 64-bit
// compare.
inline std::uint32_t squareIsExact(std::uint32_t low, std::uint32_t high)
{
    // Bitwise rather than && and ||, which would branch and stop the vectoriser.
    const std::uint32_t exponent = (high >> 20) & 0x7ffu;
    const std::uint32_t zero = (low | (high & 0x7fffffffu)) == 0 ? 1u : 0u;
    const std::uint32_t shortSignificand = (low & 0x7ffffffu) == 0 ? 1u : 0u;
    const std::uint32_t inRange = exponent - 523u < 1000u ? 1u : 0u;
    return zero | (shortSignificand & inRange);
}

// pow(v, 2). Where v*v is exact it is the value pow gives, as pow returns an
// exact result exactly (glibc's pow errs by less than 0.52 ulp); all other
// elements call pow.
KP_VECTOR_CLONES void square(double *t, int count)
{
    std::uint32_t words[2 * FastExpression::kBlock];
    std::memcpy(words, t, static_cast<std::size_t>(count) * sizeof(double));
    unsigned inexact = 0;
    for (int k = 0; k < count; ++k) {
        inexact |= squareIsExact(words[2 * k], words[2 * k + 1]) ^ 1u;
    }
    for (int k = 0; k < count; ++k) {
        t[k] = t[k] * t[k];
    }
    if (inexact) {
        const double two = g_two;
        for (int k = 0; k < count; ++k) {
            if (!squareIsExact(words[2 * k], words[2 * k + 1])) {
                double v;
                std::memcpy(&v, &words[2 * k], sizeof v);
                t[k] = std::pow(v, two);
            }
        }
    }
}

} // namespace

Status FastExpression::evaluate(const double *const *inputs, int count, double *out, Scratch &scratch) const
{
    if (count < 1 || count > kBlock) {
        return Error{QStringLiteral("expression"),
                     Error::Code::Internal,
                     {},
                     QStringLiteral("%1 elements in a block of at most %2").arg(count).arg(kBlock)};
    }
    try {
        run(inputs, count, out, scratch);
    } catch (const mu::Parser::exception_type &e) {
        const QString msg = QString::fromStdString(e.GetMsg());
        return Error{QStringLiteral("expression"),
                     Error::Code::BadInput,
                     {},
                     msg.endsWith(QLatin1Char('.')) ? msg.chopped(1) : msg};
    }
    return Unit{};
}

KP_VECTOR_CLONES void FastExpression::run(const double *const *inputs, int count, double *out, Scratch &scratch) const
{
    const std::size_t need = static_cast<std::size_t>(m_depth) * kBlock;
    if (scratch.stack.size() < need) {
        scratch.stack.resize(need);
    }
    if (scratch.args.size() < static_cast<std::size_t>(m_maxArgs)) {
        scratch.args.resize(static_cast<std::size_t>(m_maxArgs));
    }
    double *const base = scratch.stack.data();
    int sp = 0; // number of arrays on the stack
    const auto level = [base](int i) { return base + static_cast<std::ptrdiff_t>(i) * kBlock; };
    const int n = count;
    for (const Op &op : m_ops) {
        switch (op.kind) {
        case Kind::Val: {
            double *r = level(sp++);
            const double v = op.a;
            for (int k = 0; k < n; ++k) {
                r[k] = v;
            }
            break;
        }
        case Kind::Var: {
            std::memcpy(level(sp++), inputs[op.input], static_cast<std::size_t>(n) * sizeof(double));
            break;
        }
        case Kind::VarMul: {
            double *r = level(sp++);
            const double *in = inputs[op.input];
            const double a = op.a;
            const double b = op.b;
            for (int k = 0; k < n; ++k) {
                r[k] = in[k] * a + b;
            }
            break;
        }
        case Kind::VarPow2: {
            double *r = level(sp++);
            const double *in = inputs[op.input];
            for (int k = 0; k < n; ++k) {
                r[k] = in[k] * in[k];
            }
            break;
        }
        case Kind::VarPow3: {
            double *r = level(sp++);
            const double *in = inputs[op.input];
            for (int k = 0; k < n; ++k) {
                r[k] = in[k] * in[k] * in[k];
            }
            break;
        }
        case Kind::VarPow4: {
            double *r = level(sp++);
            const double *in = inputs[op.input];
            for (int k = 0; k < n; ++k) {
                r[k] = in[k] * in[k] * in[k] * in[k];
            }
            break;
        }
#define KP_BINARY(KIND, EXPR)                                                                                          \
    case Kind::KIND: {                                                                                                 \
        if (op.constRight) {                                                                                           \
            double *l = level(sp - 1);                                                                                 \
            const double rv = op.b;                                                                                    \
            for (int k = 0; k < n; ++k) {                                                                              \
                const double lv = l[k];                                                                                \
                l[k] = (EXPR);                                                                                         \
            }                                                                                                          \
        } else {                                                                                                       \
            --sp;                                                                                                      \
            double *l = level(sp - 1);                                                                                 \
            const double *r = level(sp);                                                                               \
            for (int k = 0; k < n; ++k) {                                                                              \
                const double lv = l[k];                                                                                \
                const double rv = r[k];                                                                                \
                l[k] = (EXPR);                                                                                         \
            }                                                                                                          \
        }                                                                                                              \
        break;                                                                                                         \
    }
            // The comparisons and && || give 1 or 0 as muparser's bool to double does.
            KP_BINARY(Le, lv <= rv ? 1.0 : 0.0)
            KP_BINARY(Ge, lv >= rv ? 1.0 : 0.0)
            KP_BINARY(Ne, lv != rv ? 1.0 : 0.0)
            KP_BINARY(Eq, lv == rv ? 1.0 : 0.0)
            KP_BINARY(Lt, lv < rv ? 1.0 : 0.0)
            KP_BINARY(Gt, lv > rv ? 1.0 : 0.0)
            KP_BINARY(Add, lv + rv)
            KP_BINARY(Sub, lv - rv)
            KP_BINARY(Mul, lv * rv)
            KP_BINARY(Div, lv / rv)
            KP_BINARY(Pow, std::pow(lv, rv))
            // A double is true when it is not 0 (NaN included), as in C++.
            KP_BINARY(And, (lv != 0 && rv != 0) ? 1.0 : 0.0)
            KP_BINARY(Or, (lv != 0 || rv != 0) ? 1.0 : 0.0)
#undef KP_BINARY
        case Kind::PowConst: {
            double *t = level(sp - 1);
            if (op.a == 2.0) {
                square(t, n);
            } else {
                const double e = op.a;
                for (int k = 0; k < n; ++k) {
                    t[k] = std::pow(t[k], e);
                }
            }
            break;
        }
        case Kind::If:
        case Kind::Else: break;
        case Kind::EndIf: {
            // muparser takes the first arm unless the condition == 0 (so NaN takes it).
            sp -= 2;
            double *c = level(sp - 1);
            const double *a = level(sp);
            const double *b = level(sp + 1);
            for (int k = 0; k < n; ++k) {
                c[k] = c[k] == 0 ? b[k] : a[k];
            }
            break;
        }
        case Kind::Neg: {
            double *t = level(sp - 1);
            for (int k = 0; k < n; ++k) {
                t[k] = -t[k];
            }
            break;
        }
        case Kind::Func: {
            switch (op.argc) {
            case 0: {
                double *r = level(sp++);
                for (int k = 0; k < n; ++k) {
                    r[k] = op.cb.call_fun<0>();
                }
                break;
            }
            case 1: {
                double *t = level(sp - 1);
                for (int k = 0; k < n; ++k) {
                    t[k] = op.cb.call_fun<1>(t[k]);
                }
                break;
            }
            case 2: {
                sp -= 1;
                double *t0 = level(sp - 1);
                const double *t1 = level(sp);
                for (int k = 0; k < n; ++k) {
                    t0[k] = op.cb.call_fun<2>(t0[k], t1[k]);
                }
                break;
            }
            case 3: {
                sp -= 2;
                double *t0 = level(sp - 1);
                const double *t1 = level(sp);
                const double *t2 = level(sp + 1);
                for (int k = 0; k < n; ++k) {
                    t0[k] = op.cb.call_fun<3>(t0[k], t1[k], t2[k]);
                }
                break;
            }
            default: {
                sp -= 3;
                double *t0 = level(sp - 1);
                const double *t1 = level(sp);
                const double *t2 = level(sp + 1);
                const double *t3 = level(sp + 2);
                for (int k = 0; k < n; ++k) {
                    t0[k] = op.cb.call_fun<4>(t0[k], t1[k], t2[k], t3[k]);
                }
                break;
            }
            }
            break;
        }
        case Kind::FuncMulti: {
            const int argc = -op.argc;
            sp -= argc - 1;
            double *t0 = level(sp - 1);
            double *args = scratch.args.data();
            for (int k = 0; k < n; ++k) {
                for (int a = 0; a < argc; ++a) {
                    args[a] = level(sp - 1 + a)[k];
                }
                t0[k] = op.cb.call_multfun(args, argc);
            }
            break;
        }
        }
    }
    std::memcpy(out, level(0), static_cast<std::size_t>(n) * sizeof(double));
}

} // namespace Kp
