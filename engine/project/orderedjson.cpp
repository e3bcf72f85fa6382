#include "orderedjson.h"

#include <QJsonArray>

#include <algorithm>
#include <cmath>

namespace Kp {

namespace {

constexpr int kLineWidth = 100; ///< containers that fit are written on one line

QString quoted(const QString &s)
{
    QString out;
    out.reserve(s.size() + 2);
    out += QLatin1Char('"');
    for (const QChar c : s) {
        switch (c.unicode()) {
        case '"': out += QStringLiteral("\\\""); break;
        case '\\': out += QStringLiteral("\\\\"); break;
        case '\n': out += QStringLiteral("\\n"); break;
        case '\r': out += QStringLiteral("\\r"); break;
        case '\t': out += QStringLiteral("\\t"); break;
        case '\b': out += QStringLiteral("\\b"); break;
        case '\f': out += QStringLiteral("\\f"); break;
        default:
            if (c.unicode() < 0x20) {
                out += QStringLiteral("\\u%1").arg(c.unicode(), 4, 16, QLatin1Char('0'));
            } else {
                out += c;
            }
        }
    }
    out += QLatin1Char('"');
    return out;
}

int depth(const JsonNode &n)
{
    if (!n.isContainer()) {
        return 0;
    }
    int d = 0;
    for (const JsonNode &item : n.items) {
        d = std::max(d, depth(item));
    }
    return d + 1;
}

/**
 * Appends n at the current position: used columns are taken on this line
 * already. A container nested at most three deep goes on one line
 * when it fits, so the layout depends on the content alone (idempotent).
 */
void render(const JsonNode &n, int indent, qsizetype used, bool allowInline, QString &out)
{
    if (!n.isContainer() || n.items.empty()) {
        out += inlineJsonText(n);
        return;
    }
    if (allowInline && depth(n) <= 3) {
        const QString one = inlineJsonText(n);
        if (used + one.size() + 1 <= kLineWidth) { // + 1: the comma after it
            out += one;
            return;
        }
    }
    const bool isObject = n.type == JsonNode::Type::Object;
    const QString pad(indent + 2, QLatin1Char(' '));
    out += isObject ? QLatin1Char('{') : QLatin1Char('[');
    out += QLatin1Char('\n');
    for (std::size_t i = 0; i < n.items.size(); ++i) {
        out += pad;
        QString prefix;
        if (isObject) {
            prefix = quoted(n.keys[static_cast<qsizetype>(i)]) + QStringLiteral(": ");
            out += prefix;
        }
        render(n.items[i], indent + 2, pad.size() + prefix.size(), true, out);
        if (i + 1 < n.items.size()) {
            out += QLatin1Char(',');
        }
        out += QLatin1Char('\n');
    }
    out += QString(indent, QLatin1Char(' '));
    out += isObject ? QLatin1Char('}') : QLatin1Char(']');
}

} // namespace

void JsonNode::append(JsonNode item)
{
    items.push_back(std::move(item));
}

void JsonNode::insert(const QString &key, JsonNode value)
{
    keys << key;
    items.push_back(std::move(value));
}

void JsonNode::appendUnknown(const QJsonObject &unknown)
{
    for (auto it = unknown.begin(); it != unknown.end(); ++it) {
        if (!keys.contains(it.key())) {
            insert(it.key(), jsonNodeFrom(it.value()));
        }
    }
}

bool isWholeNumber(double d)
{
    // 9.2e18 stays below 2^63, so the value converts to qint64 without overflow.
    return std::isfinite(d) && std::floor(d) == d && std::abs(d) < 9.2e18;
}

QString numberText(double d)
{
    if (!std::isfinite(d)) {
        return QStringLiteral("null"); // JSON has no infinities; never produced by parsing
    }
    if (isWholeNumber(d)) {
        return QString::number(static_cast<qint64>(d));
    }
    return QString::number(d, 'g', QLocale::FloatingPointShortest);
}

QString numberText(const QJsonValue &v)
{
    if (isWholeNumber(v.toDouble())) {
        // Qt keeps integral JSON numbers as qint64, so digits beyond 2^53 survive.
        return QString::number(v.toInteger());
    }
    return numberText(v.toDouble());
}

JsonNode jsonString(const QString &s)
{
    JsonNode n;
    n.type = JsonNode::Type::String;
    n.text = s;
    return n;
}

JsonNode jsonNumberText(const QString &text)
{
    JsonNode n;
    n.type = JsonNode::Type::Number;
    n.text = text;
    return n;
}

JsonNode jsonNumber(double d)
{
    return jsonNumberText(numberText(d));
}

JsonNode jsonInteger(qint64 i)
{
    return jsonNumberText(QString::number(i));
}

JsonNode jsonBool(bool b)
{
    JsonNode n;
    n.type = JsonNode::Type::Bool;
    n.boolean = b;
    return n;
}

JsonNode jsonArray()
{
    JsonNode n;
    n.type = JsonNode::Type::Array;
    return n;
}

JsonNode jsonObject()
{
    JsonNode n;
    n.type = JsonNode::Type::Object;
    return n;
}

JsonNode jsonStrings(const QStringList &list)
{
    JsonNode a = jsonArray();
    for (const QString &s : list) {
        a.append(jsonString(s));
    }
    return a;
}

JsonNode jsonLines(const QString &text)
{
    if (!text.contains(QLatin1Char('\n'))) {
        return jsonString(text);
    }
    return jsonStrings(text.split(QLatin1Char('\n')));
}

JsonNode jsonNodeFrom(const QJsonValue &v)
{
    switch (v.type()) {
    case QJsonValue::Bool: return jsonBool(v.toBool());
    case QJsonValue::Double: return jsonNumberText(numberText(v));
    case QJsonValue::String: return jsonString(v.toString());
    case QJsonValue::Array: {
        JsonNode a = jsonArray();
        for (const QJsonValue &item : v.toArray()) {
            a.append(jsonNodeFrom(item));
        }
        return a;
    }
    case QJsonValue::Object: {
        JsonNode o = jsonObject();
        const QJsonObject obj = v.toObject();
        for (auto it = obj.begin(); it != obj.end(); ++it) {
            o.insert(it.key(), jsonNodeFrom(it.value()));
        }
        return o;
    }
    case QJsonValue::Null:
    case QJsonValue::Undefined: break;
    }
    return JsonNode{};
}

QString inlineJsonText(const JsonNode &n)
{
    switch (n.type) {
    case JsonNode::Type::Null: return QStringLiteral("null");
    case JsonNode::Type::Bool: return n.boolean ? QStringLiteral("true") : QStringLiteral("false");
    case JsonNode::Type::Number: return n.text;
    case JsonNode::Type::String: return quoted(n.text);
    case JsonNode::Type::Array: {
        QStringList parts;
        for (const JsonNode &item : n.items) {
            parts << inlineJsonText(item);
        }
        return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
    }
    case JsonNode::Type::Object: {
        QStringList parts;
        for (std::size_t i = 0; i < n.items.size(); ++i) {
            parts << quoted(n.keys[static_cast<qsizetype>(i)]) + QStringLiteral(": ") + inlineJsonText(n.items[i]);
        }
        return QLatin1Char('{') + parts.join(QStringLiteral(", ")) + QLatin1Char('}');
    }
    }
    return {};
}

QByteArray renderJson(const JsonNode &n)
{
    QString out;
    render(n, 0, 0, false, out);
    out += QLatin1Char('\n');
    return out.toUtf8();
}

QJsonValue toJsonValue(const JsonNode &n)
{
    switch (n.type) {
    case JsonNode::Type::Null: return QJsonValue(QJsonValue::Null);
    case JsonNode::Type::Bool: return n.boolean;
    case JsonNode::Type::Number: {
        // Integers as qint64, so a seed such as 2^53 + 1 keeps its digits.
        bool isInteger = false;
        const qint64 i = n.text.toLongLong(&isInteger);
        if (isInteger) {
            return i;
        }
        bool isNumber = false;
        const double d = n.text.toDouble(&isNumber);
        return isNumber ? QJsonValue(d) : QJsonValue(QJsonValue::Null);
    }
    case JsonNode::Type::String: return n.text;
    case JsonNode::Type::Array: {
        QJsonArray a;
        for (const JsonNode &item : n.items) {
            a.append(toJsonValue(item));
        }
        return a;
    }
    case JsonNode::Type::Object: {
        QJsonObject o;
        for (std::size_t i = 0; i < n.items.size(); ++i) {
            o.insert(n.keys[static_cast<qsizetype>(i)], toJsonValue(n.items[i]));
        }
        return o;
    }
    }
    return {};
}

} // namespace Kp
