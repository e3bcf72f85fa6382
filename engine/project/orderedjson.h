#pragma once

#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <QStringList>

#include <vector>

namespace Kp {

/**
 * A JSON value that keeps its keys in the order they were inserted.
 * QJsonObject sorts its keys; the .kpg format has a fixed, readable key
 * order, so project files are built from these and written by renderJson().
 */
struct JsonNode
{
    enum class Type { Null, Bool, Number, String, Array, Object };
    Type type = Type::Null;
    bool boolean = false;
    QString text;                ///< String: the string; Number: its JSON text
    std::vector<JsonNode> items; ///< Array items or Object values
    QStringList keys;            ///< Object keys, parallel to items

    bool isContainer() const { return type == Type::Array || type == Type::Object; }
    /** Appends an item to an array. */
    void append(JsonNode item);
    /** Appends a key to an object, after the ones already there. */
    void insert(const QString &key, JsonNode value);
    /** Appends the keys of unknown (sorted, as QJsonObject keeps them) that this object does not have yet. */
    void appendUnknown(const QJsonObject &unknown);
};

/** True for finite whole numbers that convert to qint64 without overflow. */
bool isWholeNumber(double d);
/** d as JSON text: whole numbers without a fraction, others in the shortest exact form. */
QString numberText(double d);
/** A JSON number as text, keeping the digits of integers beyond 2^53. */
QString numberText(const QJsonValue &v);

/** A string node. */
JsonNode jsonString(const QString &s);
/** A number node with the given JSON text (written as it is). */
JsonNode jsonNumberText(const QString &text);
/** A number node for d (see numberText()). */
JsonNode jsonNumber(double d);
/** A number node for an integer. */
JsonNode jsonInteger(qint64 i);
/** true or false. */
JsonNode jsonBool(bool b);
/** An empty array. */
JsonNode jsonArray();
/** An empty object. */
JsonNode jsonObject();
/** An array of strings. */
JsonNode jsonStrings(const QStringList &list);
/** Multi-line text as an array of lines, so long Markdown and inline kernels stay readable; one line as a string. */
JsonNode jsonLines(const QString &text);
/** A node for v; object keys come in QJsonObject's (sorted) order. */
JsonNode jsonNodeFrom(const QJsonValue &v);

/** n on one line: "{"kind": "zeros"}", "[1, 2]". */
QString inlineJsonText(const JsonNode &n);
/**
 * n as a .kpg document: 2-space indentation, containers at most three deep on
 * one line when they fit in 100 columns, a final newline. The layout depends
 * on the content alone, so rendering what was read back gives the same bytes.
 */
QByteArray renderJson(const JsonNode &n);
/** n as a QJsonValue (key order is lost; integers stay integers). */
QJsonValue toJsonValue(const JsonNode &n);

} // namespace Kp
