#include "fieldreader.h"

#include "orderedjson.h"

#include <QCborValue>
#include <QRegularExpression>

#include <cmath>
#include <limits>

namespace Kp {

namespace {

constexpr qsizetype kShownChars = 60; ///< values quoted in messages are cut to this
constexpr qint64 kMaxInt = std::numeric_limits<int>::max();

} // namespace

Error projectError(const QString &message, const QString &path)
{
    Error e{QStringLiteral("project"), Error::Code::BadInput, {}, message};
    e.path = path;
    return e;
}

QString jsonKeyPath(const QString &path, const QString &key)
{
    return path.isEmpty() ? key : path + QLatin1Char('.') + key;
}

QString jsonIndexPath(const QString &path, qsizetype index)
{
    return QStringLiteral("%1[%2]").arg(path).arg(index);
}

QString jsonTypeName(const QJsonValue &v)
{
    switch (v.type()) {
    case QJsonValue::Null: return QStringLiteral("null");
    case QJsonValue::Bool: return QStringLiteral("a boolean");
    case QJsonValue::Double: return QStringLiteral("a number");
    case QJsonValue::String:
        return v.toString().isEmpty() ? QStringLiteral("an empty string") : QStringLiteral("a string");
    case QJsonValue::Array: return QStringLiteral("an array");
    case QJsonValue::Object: return QStringLiteral("an object");
    case QJsonValue::Undefined: break;
    }
    return QStringLiteral("nothing");
}

QString shownJson(const QJsonValue &v)
{
    QString s = inlineJsonText(jsonNodeFrom(v));
    if (s.size() > kShownChars) {
        s = s.left(kShownChars - 3) + QStringLiteral("...");
    }
    return s;
}

QString shownChoice(const QJsonValue &v)
{
    return v.isString() ? shownJson(v) : jsonTypeName(v);
}

QString shapeText(const QList<qint64> &shape)
{
    if (shape.isEmpty()) {
        return QStringLiteral("[from the file]");
    }
    QStringList parts;
    for (qint64 e : shape) {
        parts << QString::number(e);
    }
    return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

bool isIdentifier(const QString &name)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
    return re.match(name).hasMatch();
}

bool FieldReader::fail(const QString &path, const QString &message)
{
    m_message = path.isEmpty() ? message : path + QStringLiteral(": ") + message;
    m_path = path;
    return false;
}

bool FieldReader::typeError(const QString &path, const QString &expected, const QJsonValue &v)
{
    return fail(path, QStringLiteral("expected %1, got %2").arg(expected, jsonTypeName(v)));
}

bool FieldReader::missing(const QString &path, const QString &expected)
{
    return fail(path, QStringLiteral("missing; expected %1").arg(expected));
}

bool FieldReader::adopt(const Error &error)
{
    m_message = error.message;
    m_path = error.path;
    return false;
}

Error FieldReader::error() const
{
    return projectError(m_message, m_path);
}

bool FieldReader::object(const QJsonValue &v, const QString &path, QJsonObject *out)
{
    if (!v.isObject()) {
        return typeError(path, QStringLiteral("an object"), v);
    }
    *out = v.toObject();
    return true;
}

bool FieldReader::array(const QJsonValue &v, const QString &path, QJsonArray *out)
{
    if (!v.isArray()) {
        return typeError(path, QStringLiteral("an array"), v);
    }
    *out = v.toArray();
    return true;
}

bool FieldReader::string(const QJsonValue &v, const QString &path, QString *out)
{
    if (!v.isString()) {
        return typeError(path, QStringLiteral("a string"), v);
    }
    *out = v.toString();
    return true;
}

bool FieldReader::nonEmptyString(const QJsonValue &v, const QString &path, const QString &what, QString *out)
{
    if (v.isUndefined()) {
        return missing(path, what);
    }
    if (!v.isString() || v.toString().trimmed().isEmpty()) {
        return typeError(path, what, v);
    }
    *out = v.toString();
    return true;
}

bool FieldReader::boolean(const QJsonValue &v, const QString &path, bool *out)
{
    if (!v.isBool()) {
        return typeError(path, QStringLiteral("true or false"), v);
    }
    *out = v.toBool();
    return true;
}

bool FieldReader::number(const QJsonValue &v, const QString &path, double *out)
{
    if (!v.isDouble()) {
        return typeError(path, QStringLiteral("a number"), v);
    }
    *out = v.toDouble();
    return true;
}

bool FieldReader::numberAtLeast(const QJsonValue &v, const QString &path, double min, bool inclusive, double *out)
{
    double d = 0;
    if (!number(v, path, &d)) {
        return false;
    }
    if (inclusive && d < min) {
        return fail(path, QStringLiteral("must be at least %1, got %2").arg(numberText(min), numberText(v)));
    }
    if (!inclusive && d <= min) {
        return fail(path, QStringLiteral("must be greater than %1, got %2").arg(numberText(min), numberText(v)));
    }
    *out = d;
    return true;
}

bool FieldReader::integer(const QJsonValue &v, const QString &path, qint64 min, qint64 max, qint64 *out)
{
    if (!v.isDouble()) {
        return typeError(path, QStringLiteral("an integer"), v);
    }
    // An integer the JSON reader kept exactly (every one in the 64-bit range)
    // is compared as one: 2^63-1 as a double is 2^63, once refused as "got 9223372036854776000".
    if (const QCborValue exact = QCborValue::fromJsonValue(v); exact.isInteger()) {
        const qint64 i = exact.toInteger();
        if (i < min) {
            return fail(path, QStringLiteral("must be at least %1, got %2").arg(min).arg(i));
        }
        if (i > max) {
            return fail(path, QStringLiteral("must be at most %1, got %2").arg(max).arg(i));
        }
        *out = i;
        return true;
    }
    const double d = v.toDouble();
    if (std::floor(d) != d) {
        return fail(path, QStringLiteral("expected an integer, got %1").arg(numberText(v)));
    }
    // Whole but not kept exactly: past the 64-bit range, where its digits are
    // already lost (9223372036854775808 reads as 9223372036854776000).
    if (std::abs(d) >= 9223372036854775808.0) {
        return fail(path, QStringLiteral("must be %1 %2; the number given is past the 64-bit integer range (%3)")
                              .arg(d > 0 ? QStringLiteral("at most") : QStringLiteral("at least"))
                              .arg(d > 0 ? max : min)
                              .arg(QString::number(d, 'g', 6)));
    }
    if (d < static_cast<double>(min)) {
        return fail(path, QStringLiteral("must be at least %1, got %2").arg(min).arg(numberText(v)));
    }
    // The second test catches 2^63 itself, which equals double(INT64_MAX).
    if (d > static_cast<double>(max) || !isWholeNumber(d) || v.toInteger() > max) {
        return fail(path, QStringLiteral("must be at most %1, got %2").arg(max).arg(numberText(v)));
    }
    *out = v.toInteger();
    return true;
}

bool FieldReader::intField(const QJsonValue &v, const QString &path, int min, int *out)
{
    qint64 i = 0;
    if (!integer(v, path, min, kMaxInt, &i)) {
        return false;
    }
    *out = static_cast<int>(i);
    return true;
}

bool FieldReader::strings(const QJsonValue &v, const QString &path, QStringList *out)
{
    QJsonArray a;
    if (!array(v, path, &a)) {
        return false;
    }
    out->clear();
    for (qsizetype i = 0; i < a.size(); ++i) {
        QString s;
        if (!string(a[i], jsonIndexPath(path, i), &s)) {
            return false;
        }
        *out << s;
    }
    return true;
}

bool FieldReader::lines(const QJsonValue &v, const QString &path, QString *out)
{
    if (v.isString()) {
        *out = v.toString();
        return true;
    }
    if (!v.isArray()) {
        return typeError(path, QStringLiteral("a string or an array of lines"), v);
    }
    QStringList l;
    if (!strings(v, path, &l)) {
        return false;
    }
    *out = l.join(QLatin1Char('\n'));
    return true;
}

bool FieldReader::name(const QJsonValue &v, const QString &path, QString *out)
{
    if (v.isUndefined()) {
        return missing(path, QStringLiteral("a C identifier"));
    }
    if (!v.isString()) {
        return typeError(path, QStringLiteral("a string"), v);
    }
    const QString n = v.toString();
    if (!isIdentifier(n)) {
        return fail(
            path,
            QStringLiteral("'%1' is not a C identifier (letters, digits and _, not starting with a digit)").arg(n));
    }
    *out = n;
    return true;
}

bool FieldReader::checkKeys(const QJsonObject &o, const QString &path, const QStringList &allowed)
{
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (!allowed.contains(it.key())) {
            return fail(jsonKeyPath(path, it.key()),
                        QStringLiteral("unknown key; allowed: %1").arg(allowed.join(QStringLiteral(", "))));
        }
    }
    return true;
}

} // namespace Kp
