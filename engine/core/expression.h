#pragma once

#include "result.h"

#include <QString>
#include <QStringList>

#include <map>
#include <memory>

namespace mu {
class Parser;
}

namespace Kp {

/**
 * Arithmetic expressions over named variables, for grid and block sizes
 * ("ceil_div(n, block.x)"), throughput ("12*n") and per-element buffer
 * contents ("sin(x) * 0.5"). A thin wrapper over muparser, which parses once
 * into byte code and evaluates fast, so per-element loops over millions of
 * elements stay cheap.
 *
 * Besides muparser's own functions (sin, sqrt, exp, log, min, max, abs, ...,
 * operators + - * / ^, comparisons, ?:) it knows floor, ceil, round,
 * ceil_div(a, b), round_up(a, b), fmod(a, b) and the operator %, and the
 * constants _pi and _e. Variable names may contain dots ("block.x").
 *
 * Not thread-safe; one per thread. Variables live in the evaluator and keep
 * their address, so a loop can set them through variable().
 */
class Expression
{
public:
    Expression();
    ~Expression();
    Expression(const Expression &) = delete;
    Expression &operator=(const Expression &) = delete;

    /** Defines (or updates) a variable. */
    void set(const QString &name, double value);
    /** The storage of a variable (defined as 0 if new); stable until the evaluator dies. */
    double *variable(const QString &name);
    QStringList variableNames() const;

    /**
     * Parses text for later evaluate() calls. On failure the message names
     * the field ("launches[0].grid[0]"), the text and what is wrong.
     */
    Status parse(const QString &text, const QString &field);
    /** Evaluates the parsed text with the current variable values. */
    Result<double> evaluate() const;

    /** parse() + evaluate(). */
    Result<double> evaluate(const QString &text, const QString &field);

    /** True when text is a plain number (no expression needed). */
    static bool isNumber(const QString &text, double *value = nullptr);

private:
    // Reads the byte code muparser built, to translate it (core/fastexpr).
    friend class FastExpression;

    Error error(const QString &what) const;

    std::unique_ptr<mu::Parser> m_parser;
    std::map<QString, std::unique_ptr<double>> m_vars;
    QString m_text;
    QString m_field;
};

} // namespace Kp
