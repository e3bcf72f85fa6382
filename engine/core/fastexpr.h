#pragma once

#include "result.h"

#include <memory>
#include <vector>

namespace Kp {

class Expression;

/**
 * Evaluates a parsed Expression over blocks of elements at a time: each step
 * of the program is one tight loop over a block's array, which the compiler
 * vectorises, instead of one interpreted byte-code walk per element.
 *
 * The program is translated from the byte code muparser built for the
 * Expression (after its own constant folding and rewrites such as a*a ->
 * a^2 or 2*a+1 as one token), and every step computes what muparser's
 * interpreter computes for that token, with the same double operations in
 * the same order; functions are called through the same callbacks. So a
 * value is the same, bit for bit, as Expression::evaluate() gives.
 * Both arms of a ?: are evaluated and one is selected per element, which is
 * the same value because every callback is a pure function.
 *
 * compile() refuses (and the caller keeps using Expression) what it does not
 * translate: assignments, string and bulk functions, functions of five to ten
 * fixed arguments, a ?: whose arms do not each leave one value, and a stack
 * deeper than kMaxDepth.
 *
 * Immutable after compile(); evaluate() may be called from many threads at
 * once, each with its own Scratch.
 */
class FastExpression
{
public:
    /** Elements per block: the arrays of a few stack levels stay in the L1/L2 cache. */
    static constexpr int kBlock = 512;
    /** Deepest stack compile() accepts (64 blocks, 256 KiB a thread); deeper texts stay with muparser. */
    static constexpr int kMaxDepth = 64;

    /** Per-thread work space for evaluate(). */
    struct Scratch
    {
        std::vector<double> stack;
        std::vector<double> args;
    };

    /**
     * Translates expr, which parse() accepted. varying lists the storage of
     * the variables that change per element (expr.variable("x"), ...), in the
     * order evaluate() receives their arrays; every other variable the text
     * uses is read now, as a constant. Fails with a message saying what is
     * not supported.
     */
    static Result<std::shared_ptr<const FastExpression>> compile(const Expression &expr,
                                                                 const std::vector<const double *> &varying);

    /** Whether the program reads varying variable k (so its array need not be filled otherwise). */
    bool uses(int k) const { return k >= 0 && k < static_cast<int>(m_uses.size()) && m_uses[k]; }

    /**
     * Evaluates count (1..kBlock) elements: inputs[k] holds count values of
     * varying variable k (may be null when !uses(k)); writes out[0, count).
     * Fails only when a callback throws (muparser's message).
     */
    Status evaluate(const double *const *inputs, int count, double *out, Scratch &scratch) const;

    struct Op;
    ~FastExpression();

private:
    FastExpression();
    void run(const double *const *inputs, int count, double *out, Scratch &scratch) const;

    std::vector<Op> m_ops;
    std::vector<bool> m_uses;
    int m_depth = 0;
    int m_maxArgs = 0;
};

} // namespace Kp
