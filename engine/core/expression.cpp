#include "expression.h"

#include <muParser.h>

#include <QRegularExpression>

#include <cmath>

namespace Kp {

namespace {
double ceilDiv(double a, double b)
{
    return b == 0 ? NAN : std::ceil(a / b);
}
double roundUp(double a, double b)
{
    return b == 0 ? NAN : std::ceil(a / b) * b;
}
double floorFn(double v)
{
    return std::floor(v);
}
double ceilFn(double v)
{
    return std::ceil(v);
}
double roundFn(double v)
{
    return std::round(v);
}
double fmodFn(double a, double b)
{
    return std::fmod(a, b);
}
const char *kNameChars = "0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.";
} // namespace

Expression::Expression()
    : m_parser(std::make_unique<mu::Parser>())
{
    m_parser->DefineNameChars(kNameChars);
    m_parser->DefineFun("floor", floorFn);
    m_parser->DefineFun("ceil", ceilFn);
    m_parser->DefineFun("round", roundFn);
    m_parser->DefineFun("ceil_div", ceilDiv);
    m_parser->DefineFun("round_up", roundUp);
    m_parser->DefineFun("fmod", fmodFn);
    m_parser->DefineOprt("%", fmodFn, mu::prMUL_DIV, mu::oaLEFT);
}

Expression::~Expression() = default;

void Expression::set(const QString &name, double value)
{
    *variable(name) = value;
}

double *Expression::variable(const QString &name)
{
    auto it = m_vars.find(name);
    if (it == m_vars.end()) {
        auto slot = std::make_unique<double>(0.0);
        double *p = slot.get();
        try {
            m_parser->DefineVar(name.toStdString(), p);
        } catch (const mu::Parser::exception_type &) {
            // An invalid name is never used by an expression either; keep the slot.
        }
        it = m_vars.emplace(name, std::move(slot)).first;
    }
    return it->second.get();
}

QStringList Expression::variableNames() const
{
    QStringList names;
    for (const auto &[name, _] : m_vars) {
        names << name;
    }
    return names;
}

Error Expression::error(const QString &what) const
{
    QString msg = m_field.isEmpty() ? QString() : m_field + QStringLiteral(": ");
    msg += QStringLiteral("%1 in '%2'").arg(what, m_text);
    return Error{QStringLiteral("expression"), Error::Code::BadInput, {}, msg};
}

Status Expression::parse(const QString &text, const QString &field)
{
    m_text = text.trimmed();
    m_field = field;
    if (m_text.isEmpty()) {
        return error(QStringLiteral("empty expression"));
    }
    // Before muparser, whose words for these are misleading: it reads 1e400
    // as the name of a variable and foo(a) as a misplaced parenthesis.
    static const QRegularExpression number(
        QStringLiteral("(?<![A-Za-z0-9_.])(\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d+)?(?![A-Za-z0-9_.])"));
    for (auto it = number.globalMatch(m_text); it.hasNext();) {
        const QString literal = it.next().captured(0);
        bool ok = false;
        const double v = literal.toDouble(&ok);
        if (!ok || !std::isfinite(v)) {
            return error(QStringLiteral("the number %1 is outside the range of a double (about 1.8e308)").arg(literal));
        }
    }
    static const QRegularExpression call(QStringLiteral("(?<![A-Za-z0-9_.])([A-Za-z_][A-Za-z0-9_.]*)\\s*\\("));
    for (auto it = call.globalMatch(m_text); it.hasNext();) {
        const std::string name = it.next().captured(1).toStdString();
        const auto &functions = m_parser->GetFunDef();
        if (!functions.count(name)) {
            QStringList known;
            for (const auto &[f, _] : functions) {
                known << QString::fromStdString(f);
            }
            known.sort();
            Error e = error(QStringLiteral("unknown function %1").arg(QString::fromStdString(name)));
            e.message += QStringLiteral("; known: %1").arg(known.join(QStringLiteral(", ")));
            return e;
        }
    }
    try {
        m_parser->SetExpr(m_text.toStdString());
        // Parse now (muparser parses lazily on the first Eval), so that errors
        // surface here; an unknown name is reported with the known ones.
        // GetUsedVar() lists undefined names too (with a null pointer): muparser
        // tokenises with IgnoreUndefVar on for this call.
        const auto used = m_parser->GetUsedVar();
        for (const auto &[name, _] : used) {
            if (!m_vars.count(QString::fromStdString(name))) {
                const QStringList known = variableNames();
                // The text goes right after the unknown name, before the (long) list.
                Error e = error(QStringLiteral("unknown variable '%1'").arg(QString::fromStdString(name)));
                e.message += QStringLiteral("; known: %1")
                                 .arg(known.isEmpty() ? QStringLiteral("none") : known.join(QStringLiteral(", ")));
                return e;
            }
        }
        m_parser->Eval();
        // "a, b" evaluates to b in muparser; a single value is all any caller wants.
        if (m_parser->GetNumResults() > 1) {
            return error(
                QStringLiteral("%1 comma-separated values where one is expected").arg(m_parser->GetNumResults()));
        }
    } catch (const mu::Parser::exception_type &e) {
        const QString msg = QString::fromStdString(e.GetMsg());
        return error(msg.endsWith(QLatin1Char('.')) ? msg.chopped(1) : msg);
    }
    return Unit{};
}

Result<double> Expression::evaluate() const
{
    try {
        return m_parser->Eval();
    } catch (const mu::Parser::exception_type &e) {
        const QString msg = QString::fromStdString(e.GetMsg());
        return error(msg.endsWith(QLatin1Char('.')) ? msg.chopped(1) : msg);
    }
}

Result<double> Expression::evaluate(const QString &text, const QString &field)
{
    if (Status s = parse(text, field); !s) {
        return s.error();
    }
    return evaluate();
}

bool Expression::isNumber(const QString &text, double *value)
{
    bool ok = false;
    const double v = text.trimmed().toDouble(&ok);
    if (ok && value) {
        *value = v;
    }
    return ok;
}

} // namespace Kp
