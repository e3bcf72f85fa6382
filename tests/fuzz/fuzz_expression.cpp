// libFuzzer target: the expression evaluator (engine/core/expression.h, over
// muparser). The input is one expression, as typed into a grid size or a
// buffer's contents, with the variables the launch panel defines.

#include "core/expression.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QString text = QString::fromUtf8(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    (void)Kp::Expression::isNumber(text);

    // A new evaluator per input: muparser keeps state between parses, and a
    // crash must reproduce from its input alone.
    Kp::Expression e;
    e.set(QStringLiteral("n"), 1 << 20);
    e.set(QStringLiteral("block.x"), 256);
    e.set(QStringLiteral("block.y"), 1);
    e.set(QStringLiteral("x"), 3.5);
    e.set(QStringLiteral("i"), 7);
    if (e.parse(text, QStringLiteral("launches[0].grid[0]"))) {
        (void)e.evaluate();
        // A loop sets a variable through its storage and evaluates again.
        *e.variable(QStringLiteral("x")) = -0.0;
        (void)e.evaluate();
    }
    return 0;
}
