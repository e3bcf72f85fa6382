#include "result.h"

#include <array>
#include <utility>

namespace Kp {

namespace {
constexpr std::array<std::pair<Error::Code, const char *>, 13> kCodeNames{{
    {Error::Code::Internal, "internal"},
    {Error::Code::Usage, "usage"},
    {Error::Code::BadInput, "bad-input"},
    {Error::Code::NoDriver, "no-driver"},
    {Error::Code::NoDevice, "no-device"},
    {Error::Code::NoCompiler, "no-compiler"},
    {Error::Code::CompileError, "compile-error"},
    {Error::Code::Fault, "fault"},
    {Error::Code::Timeout, "timeout"},
    {Error::Code::WorkerDied, "worker-died"},
    {Error::Code::WorkerStart, "worker-start"},
    {Error::Code::Protocol, "protocol"},
    {Error::Code::Cancelled, "cancelled"},
}};
} // namespace

QString Error::codeName(Code code)
{
    for (const auto &[c, name] : kCodeNames) {
        if (c == code) {
            return QString::fromLatin1(name);
        }
    }
    return QStringLiteral("internal");
}

std::optional<Error::Code> Error::codeFromName(const QString &name)
{
    for (const auto &[c, n] : kCodeNames) {
        if (name == QLatin1String(n)) {
            return c;
        }
    }
    return std::nullopt;
}

QString Error::toString() const
{
    QString s = where.isEmpty() ? QString() : where + QStringLiteral(": ");
    s += message;
    if (!apiCall.isEmpty() && !message.contains(apiCall)) {
        s += QStringLiteral(" (%1)").arg(apiCall);
    }
    return s;
}

QVariantMap Error::toVariant() const
{
    QVariantMap m;
    m.insert(QStringLiteral("where"), where);
    m.insert(QStringLiteral("code"), codeName(code));
    if (!apiCall.isEmpty()) {
        m.insert(QStringLiteral("apiCall"), apiCall);
    }
    m.insert(QStringLiteral("message"), message);
    if (!path.isEmpty()) {
        m.insert(QStringLiteral("path"), path);
    }
    return m;
}

Error Error::fromVariant(const QVariantMap &map)
{
    Error e;
    e.where = map.value(QStringLiteral("where")).toString();
    e.code = codeFromName(map.value(QStringLiteral("code")).toString()).value_or(Code::Internal);
    e.apiCall = map.value(QStringLiteral("apiCall")).toString();
    e.message = map.value(QStringLiteral("message")).toString();
    e.path = map.value(QStringLiteral("path")).toString();
    return e;
}

} // namespace Kp
