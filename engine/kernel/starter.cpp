#include "starter.h"

#include "kernel/cxxtokens.h"

#include <QList>

#include <utility>

namespace Kp {

Starter starterSource(const QString &solution)
{
    using namespace Cxx;
    const QList<Token> t = tokenize(solution);
    QList<std::pair<qsizetype, qsizetype>> bodies; // offsets of each body's '{' and '}'
    for (qsizetype i = 0; i < t.size(); ++i) {
        if (t[i].kind != Token::Ident || t[i].text != QLatin1String("__global__")) {
            continue;
        }
        // The body is the first '{' after the keyword outside parentheses
        // (the parameters, __launch_bounds__(...)). A '{' or ';' inside them
        // is a declaration the scanner does not follow: left as written, and
        // the search ends there, so what comes later never changes which
        // body an earlier kernel has (making a starter again changes nothing).
        qsizetype j = i + 1;
        int parens = 0;
        for (; j < t.size() && !isPunct(t[j], '{') && !isPunct(t[j], ';') && parens >= 0; ++j) {
            parens += isPunct(t[j], '(') ? 1 : isPunct(t[j], ')') ? -1 : 0;
        }
        if (j >= t.size() || parens != 0 || !isPunct(t[j], '{')) {
            i = j; // a declaration, or one the scanner does not follow
            continue;
        }
        const qsizetype close = matchClose(t, j);
        if (close < 0) {
            break; // an unclosed body: leave the rest as it is
        }
        bodies.append({t[j].pos, t[close].pos});
        i = close;
    }
    Starter out;
    out.source = solution;
    // From the end, so the earlier offsets stay right.
    for (qsizetype k = bodies.size() - 1; k >= 0; --k) {
        const auto [open, close] = bodies[k];
        out.source.replace(open + 1, close - open - 1,
                           QStringLiteral("\n    // Your code here: the exercise's description says what this kernel "
                                          "computes.\n"));
    }
    out.kernels = int(bodies.size());
    return out;
}

} // namespace Kp
