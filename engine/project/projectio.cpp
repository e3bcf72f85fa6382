#include "projectio.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonParseError>
#include <QRegularExpression>
#include <QSaveFile>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace Kp {

namespace {

constexpr int kLineWidth = 100;                         ///< containers that fit are written on one line
constexpr qsizetype kShownChars = 60;                   ///< values quoted in messages are cut to this
constexpr double kMaxExactInteger = 9007199254740992.0; // 2^53: doubles are exact up to here
constexpr qint64 kMaxLaunchDim = std::numeric_limits<qint32>::max();
constexpr qint64 kMaxInt = std::numeric_limits<int>::max();

Error projectError(const QString &message)
{
    return Error{QStringLiteral("project"), Error::Code::BadInput, {}, message};
}

// ---------------------------------------------------------------------------
// Ordered JSON output. QJsonObject sorts its keys; the file format has a
// fixed, readable key order, so the writer is our own.

struct JsonNode
{
    enum class Type { Null, Bool, Number, String, Array, Object };
    Type type = Type::Null;
    bool boolean = false;
    QString text;                ///< String: the string; Number: its JSON text
    std::vector<JsonNode> items; ///< Array items or Object values
    QStringList keys;            ///< Object keys, parallel to items

    bool isContainer() const { return type == Type::Array || type == Type::Object; }
};

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

JsonNode jString(const QString &s)
{
    JsonNode n;
    n.type = JsonNode::Type::String;
    n.text = s;
    return n;
}

JsonNode jNumberText(const QString &text)
{
    JsonNode n;
    n.type = JsonNode::Type::Number;
    n.text = text;
    return n;
}

JsonNode jNumber(double d)
{
    return jNumberText(numberText(d));
}

JsonNode jInteger(qint64 i)
{
    return jNumberText(QString::number(i));
}

JsonNode jBool(bool b)
{
    JsonNode n;
    n.type = JsonNode::Type::Bool;
    n.boolean = b;
    return n;
}

JsonNode jArray()
{
    JsonNode n;
    n.type = JsonNode::Type::Array;
    return n;
}

JsonNode jObject()
{
    JsonNode n;
    n.type = JsonNode::Type::Object;
    return n;
}

void append(JsonNode &array, JsonNode item)
{
    array.items.push_back(std::move(item));
}

void insert(JsonNode &object, const QString &key, JsonNode value)
{
    object.keys << key;
    object.items.push_back(std::move(value));
}

JsonNode jStrings(const QStringList &list)
{
    JsonNode a = jArray();
    for (const QString &s : list) {
        append(a, jString(s));
    }
    return a;
}

JsonNode fromJson(const QJsonValue &v)
{
    switch (v.type()) {
    case QJsonValue::Bool: return jBool(v.toBool());
    case QJsonValue::Double: return jNumberText(numberText(v));
    case QJsonValue::String: return jString(v.toString());
    case QJsonValue::Array: {
        JsonNode a = jArray();
        for (const QJsonValue &item : v.toArray()) {
            append(a, fromJson(item));
        }
        return a;
    }
    case QJsonValue::Object: {
        JsonNode o = jObject();
        const QJsonObject obj = v.toObject();
        for (auto it = obj.begin(); it != obj.end(); ++it) {
            insert(o, it.key(), fromJson(it.value()));
        }
        return o;
    }
    case QJsonValue::Null:
    case QJsonValue::Undefined: break;
    }
    return JsonNode{};
}

/** Appends the unknown keys (sorted, as QJsonObject keeps them) that the known ones do not shadow. */
void appendUnknown(JsonNode &object, const QJsonObject &unknown)
{
    for (auto it = unknown.begin(); it != unknown.end(); ++it) {
        if (!object.keys.contains(it.key())) {
            insert(object, it.key(), fromJson(it.value()));
        }
    }
}

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

QString inlineText(const JsonNode &n)
{
    switch (n.type) {
    case JsonNode::Type::Null: return QStringLiteral("null");
    case JsonNode::Type::Bool: return n.boolean ? QStringLiteral("true") : QStringLiteral("false");
    case JsonNode::Type::Number: return n.text;
    case JsonNode::Type::String: return quoted(n.text);
    case JsonNode::Type::Array: {
        QStringList parts;
        for (const JsonNode &item : n.items) {
            parts << inlineText(item);
        }
        return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
    }
    case JsonNode::Type::Object: {
        QStringList parts;
        for (std::size_t i = 0; i < n.items.size(); ++i) {
            parts << quoted(n.keys[static_cast<qsizetype>(i)]) + QStringLiteral(": ") + inlineText(n.items[i]);
        }
        return QLatin1Char('{') + parts.join(QStringLiteral(", ")) + QLatin1Char('}');
    }
    }
    return {};
}

/**
 * Appends n at the current position: used columns are taken on this line
 * already. A container nested at most three deep goes on one line
 * when it fits, so the layout depends on the content alone (idempotent).
 */
void render(const JsonNode &n, int indent, qsizetype used, bool allowInline, QString &out)
{
    if (!n.isContainer() || n.items.empty()) {
        out += inlineText(n);
        return;
    }
    if (allowInline && depth(n) <= 3) {
        const QString one = inlineText(n);
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

/** Multi-line text as an array of lines, so long Markdown and inline kernels stay readable. */
JsonNode jLines(const QString &text)
{
    if (!text.contains(QLatin1Char('\n'))) {
        return jString(text);
    }
    return jStrings(text.split(QLatin1Char('\n')));
}

// ---------------------------------------------------------------------------
// Describing values in messages.

QString typeName(const QJsonValue &v)
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

/** The value itself, as JSON, shortened. */
QString shown(const QJsonValue &v)
{
    QString s = inlineText(fromJson(v));
    if (s.size() > kShownChars) {
        s = s.left(kShownChars - 3) + QStringLiteral("...");
    }
    return s;
}

/** For a choice among strings: a wrong string is shown, anything else described. */
QString shownChoice(const QJsonValue &v)
{
    return v.isString() ? shown(v) : typeName(v);
}

QString key(const QString &path, const QString &k)
{
    return path.isEmpty() ? k : path + QLatin1Char('.') + k;
}

QString index(const QString &path, qsizetype i)
{
    return QStringLiteral("%1[%2]").arg(path).arg(i);
}

QString namesOrNone(const QStringList &names)
{
    return names.isEmpty() ? QStringLiteral("none") : names.join(QStringLiteral(", "));
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

QStringList scalarDTypeNames()
{
    QStringList names;
    for (const QString &n : dtypeNames()) {
        if (dtypeInfo(*dtypeFromName(n)).components == 1) {
            names << n;
        }
    }
    return names;
}

QString initKindName(BufferInit::Kind k)
{
    switch (k) {
    case BufferInit::Kind::Zeros: return QStringLiteral("zeros");
    case BufferInit::Kind::Constant: return QStringLiteral("constant");
    case BufferInit::Kind::Ramp: return QStringLiteral("ramp");
    case BufferInit::Kind::Random: return QStringLiteral("random");
    case BufferInit::Kind::Expression: return QStringLiteral("expression");
    case BufferInit::Kind::Npy: return QStringLiteral("npy");
    case BufferInit::Kind::Image: return QStringLiteral("image");
    }
    return {};
}

const QList<BufferInit::Kind> &initKinds()
{
    static const QList<BufferInit::Kind> kinds{
        BufferInit::Kind::Zeros,      BufferInit::Kind::Constant, BufferInit::Kind::Ramp, BufferInit::Kind::Random,
        BufferInit::Kind::Expression, BufferInit::Kind::Npy,      BufferInit::Kind::Image};
    return kinds;
}

QString imageModeName(BufferInit::ImageMode m)
{
    switch (m) {
    case BufferInit::ImageMode::Rgba8: return QStringLiteral("rgba8");
    case BufferInit::ImageMode::Gray: return QStringLiteral("gray");
    case BufferInit::ImageMode::Rgba: return QStringLiteral("rgba");
    }
    return {};
}

/** Text of a grid/block item or shared bytes that is written back as a JSON number. */
bool isPlainInteger(const QString &text, qint64 min)
{
    static const QRegularExpression re(QStringLiteral("^(0|[1-9][0-9]{0,9})$"));
    if (!re.match(text).hasMatch()) {
        return false;
    }
    const qint64 v = text.toLongLong();
    return v >= min && v <= kMaxLaunchDim;
}

// ---------------------------------------------------------------------------
// Parsing. Each function returns false after fail() stored the message; the
// first error ends the parse.

class Parser
{
public:
    explicit Parser(QString dir)
        : m_dir(std::move(dir))
    {
    }

    Result<Project> run(const QJsonDocument &doc);

private:
    bool fail(const QString &path, const QString &message)
    {
        m_error = path.isEmpty() ? message : path + QStringLiteral(": ") + message;
        return false;
    }
    bool typeError(const QString &path, const QString &expected, const QJsonValue &v)
    {
        return fail(path, QStringLiteral("expected %1, got %2").arg(expected, typeName(v)));
    }
    bool missing(const QString &path, const QString &expected)
    {
        return fail(path, QStringLiteral("missing; expected %1").arg(expected));
    }

    bool object(const QJsonValue &v, const QString &path, QJsonObject *out);
    bool array(const QJsonValue &v, const QString &path, QJsonArray *out);
    bool string(const QJsonValue &v, const QString &path, QString *out);
    bool nonEmptyString(const QJsonValue &v, const QString &path, const QString &what, QString *out);
    bool boolean(const QJsonValue &v, const QString &path, bool *out);
    bool number(const QJsonValue &v, const QString &path, double *out);
    bool numberAtLeast(const QJsonValue &v, const QString &path, double min, bool inclusive, double *out);
    bool integer(const QJsonValue &v, const QString &path, qint64 min, qint64 max, qint64 *out);
    bool intField(const QJsonValue &v, const QString &path, int min, int *out);
    bool strings(const QJsonValue &v, const QString &path, QStringList *out);
    bool lines(const QJsonValue &v, const QString &path, QString *out);
    bool name(const QJsonValue &v, const QString &path, QString *out);
    bool checkKeys(const QJsonObject &o, const QString &path, const QStringList &allowed);

    bool parseHeader(const QJsonObject &top);
    bool parseSource(const QJsonValue &v);
    bool parseCompile(const QJsonValue &v);
    bool parseDefines(const QJsonValue &v, const QString &path, QStringList *out);
    bool parseScalars(const QJsonValue &v);
    bool parseScalarValue(const QJsonValue &v, const QString &path, DType type, double *out);
    bool parseBuffers(const QJsonValue &v);
    bool parseShape(const QJsonValue &v, const QString &path, QList<qint64> *out);
    bool checkSize(const BufferSpec &b, const QString &path);
    bool parseInit(const QJsonValue &v, const QString &path, BufferInit *out);
    bool checkImageMode(const BufferSpec &b, const QString &path);
    bool parseLaunches(const QJsonValue &v);
    bool parseDims(const QJsonValue &v, const QString &path, QStringList *out);
    bool parseSharedBytes(const QJsonValue &v, const QString &path, QString *out);
    bool parseArgs(const QJsonValue &v, const QString &path, QList<ArgBinding> *out);
    bool parseBinding(const QJsonValue &v, const QString &path, ArgBinding *out);
    bool bufferName(const QString &name, const QString &path, const BufferSpec **out);
    bool scalarName(const QString &name, const QString &path);
    bool checkOffset(const BufferSpec &b, qint64 offset, const QString &path);
    bool parseRepeat(const QJsonValue &v);
    bool parseTiming(const QJsonValue &v);
    bool parseThroughput(const QJsonValue &v);
    bool expressionOrNumber(const QJsonValue &v, const QString &path, QString *out);
    bool readSource();

    QString unknownName(const QString &name) const;

    QString m_dir;
    Project m_p;
    QString m_error;
    QHash<QString, qsizetype> m_scalarIndex;
    QHash<QString, qsizetype> m_bufferIndex;
};

bool Parser::object(const QJsonValue &v, const QString &path, QJsonObject *out)
{
    if (!v.isObject()) {
        return typeError(path, QStringLiteral("an object"), v);
    }
    *out = v.toObject();
    return true;
}

bool Parser::array(const QJsonValue &v, const QString &path, QJsonArray *out)
{
    if (!v.isArray()) {
        return typeError(path, QStringLiteral("an array"), v);
    }
    *out = v.toArray();
    return true;
}

bool Parser::string(const QJsonValue &v, const QString &path, QString *out)
{
    if (!v.isString()) {
        return typeError(path, QStringLiteral("a string"), v);
    }
    *out = v.toString();
    return true;
}

bool Parser::nonEmptyString(const QJsonValue &v, const QString &path, const QString &what, QString *out)
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

bool Parser::boolean(const QJsonValue &v, const QString &path, bool *out)
{
    if (!v.isBool()) {
        return typeError(path, QStringLiteral("true or false"), v);
    }
    *out = v.toBool();
    return true;
}

bool Parser::number(const QJsonValue &v, const QString &path, double *out)
{
    if (!v.isDouble()) {
        return typeError(path, QStringLiteral("a number"), v);
    }
    *out = v.toDouble();
    return true;
}

bool Parser::numberAtLeast(const QJsonValue &v, const QString &path, double min, bool inclusive, double *out)
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

bool Parser::integer(const QJsonValue &v, const QString &path, qint64 min, qint64 max, qint64 *out)
{
    if (!v.isDouble()) {
        return typeError(path, QStringLiteral("an integer"), v);
    }
    const double d = v.toDouble();
    if (std::floor(d) != d) {
        return fail(path, QStringLiteral("expected an integer, got %1").arg(numberText(v)));
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

bool Parser::intField(const QJsonValue &v, const QString &path, int min, int *out)
{
    qint64 i = 0;
    if (!integer(v, path, min, kMaxInt, &i)) {
        return false;
    }
    *out = static_cast<int>(i);
    return true;
}

bool Parser::strings(const QJsonValue &v, const QString &path, QStringList *out)
{
    QJsonArray a;
    if (!array(v, path, &a)) {
        return false;
    }
    out->clear();
    for (qsizetype i = 0; i < a.size(); ++i) {
        QString s;
        if (!string(a[i], index(path, i), &s)) {
            return false;
        }
        *out << s;
    }
    return true;
}

bool Parser::lines(const QJsonValue &v, const QString &path, QString *out)
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

bool Parser::name(const QJsonValue &v, const QString &path, QString *out)
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

bool Parser::checkKeys(const QJsonObject &o, const QString &path, const QStringList &allowed)
{
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (!allowed.contains(it.key())) {
            return fail(key(path, it.key()),
                        QStringLiteral("unknown key; allowed: %1").arg(allowed.join(QStringLiteral(", "))));
        }
    }
    return true;
}

QString Parser::unknownName(const QString &name) const
{
    QStringList buffers;
    for (const BufferSpec &b : m_p.buffers) {
        buffers << b.name;
    }
    QStringList scalars;
    for (const ScalarSpec &s : m_p.scalars) {
        scalars << s.name;
    }
    return QStringLiteral("unknown buffer or scalar '%1'; buffers: %2; scalars: %3")
        .arg(name, namesOrNone(buffers), namesOrNone(scalars));
}

Result<Project> Parser::run(const QJsonDocument &doc)
{
    if (!doc.isObject()) {
        const QJsonValue what = doc.isArray() ? QJsonValue(doc.array()) : QJsonValue();
        return projectError(QStringLiteral("expected a JSON object at the top level, got %1").arg(typeName(what)));
    }
    const QJsonObject top = doc.object();
    const bool ok =
        parseHeader(top) && parseSource(top.value(QStringLiteral("source"))) &&
        parseCompile(top.value(QStringLiteral("compile"))) && parseScalars(top.value(QStringLiteral("scalars"))) &&
        parseBuffers(top.value(QStringLiteral("buffers"))) && parseLaunches(top.value(QStringLiteral("launches"))) &&
        parseRepeat(top.value(QStringLiteral("repeat"))) && parseTiming(top.value(QStringLiteral("timing"))) &&
        parseThroughput(top.value(QStringLiteral("throughput")));
    if (!ok) {
        return projectError(m_error);
    }
    const QJsonValue timeout = top.value(QStringLiteral("timeout"));
    if (!timeout.isUndefined() &&
        !numberAtLeast(timeout, QStringLiteral("timeout"), 0, false, &m_p.killTimeoutSeconds)) {
        return projectError(m_error);
    }
    m_p.checks = top.value(QStringLiteral("checks"));
    static const QStringList known{
        QStringLiteral("format"),   QStringLiteral("version"), QStringLiteral("title"),   QStringLiteral("description"),
        QStringLiteral("source"),   QStringLiteral("compile"), QStringLiteral("scalars"), QStringLiteral("buffers"),
        QStringLiteral("launches"), QStringLiteral("repeat"),  QStringLiteral("timing"),  QStringLiteral("throughput"),
        QStringLiteral("timeout"),  QStringLiteral("checks")};
    for (auto it = top.begin(); it != top.end(); ++it) {
        if (!known.contains(it.key())) {
            m_p.unknown.insert(it.key(), it.value());
        }
    }
    // Last, so that a broken project reports what is wrong in it before a missing file.
    if (!readSource()) {
        return projectError(m_error);
    }
    return m_p;
}

bool Parser::parseHeader(const QJsonObject &top)
{
    const QString format = projectFormatName();
    const QJsonValue f = top.value(QStringLiteral("format"));
    if (f.isUndefined()) {
        return missing(QStringLiteral("format"),
                       QStringLiteral("\"%1\" (is this a Kernel Playground project?)").arg(format));
    }
    if (f.toString() != format) {
        return fail(QStringLiteral("format"), QStringLiteral("expected \"%1\", got %2").arg(format, shownChoice(f)));
    }
    const QJsonValue v = top.value(QStringLiteral("version"));
    const QString expected = QString::number(Project::kVersion);
    if (v.isUndefined()) {
        return missing(QStringLiteral("version"), expected);
    }
    if (!v.isDouble()) {
        return typeError(QStringLiteral("version"), expected, v);
    }
    const double d = v.toDouble();
    if (std::floor(d) == d && d > Project::kVersion) {
        return fail(
            QStringLiteral("version"),
            QStringLiteral("this file is version %1; this Kernel Playground reads version %2; update the program")
                .arg(numberText(v), expected));
    }
    if (d != Project::kVersion) {
        return fail(QStringLiteral("version"), QStringLiteral("expected %1, got %2").arg(expected, numberText(v)));
    }
    const QJsonValue title = top.value(QStringLiteral("title"));
    if (!title.isUndefined() && !string(title, QStringLiteral("title"), &m_p.title)) {
        return false;
    }
    const QJsonValue description = top.value(QStringLiteral("description"));
    return description.isUndefined() || lines(description, QStringLiteral("description"), &m_p.description);
}

bool Parser::parseSource(const QJsonValue &v)
{
    const QString path = QStringLiteral("source");
    const QString expected = QStringLiteral("a file name (\"kernel.cu\") or {\"inline\": \"...\"}");
    if (v.isUndefined()) {
        return missing(path, expected);
    }
    if (v.isString()) {
        if (v.toString().trimmed().isEmpty()) {
            return typeError(path, expected, v);
        }
        m_p.sourceFile = v.toString();
        return true;
    }
    if (!v.isObject()) {
        return typeError(path, expected, v);
    }
    const QJsonObject o = v.toObject();
    if (!checkKeys(o, path, {QStringLiteral("inline")})) {
        return false;
    }
    const QJsonValue text = o.value(QStringLiteral("inline"));
    if (text.isUndefined()) {
        return missing(key(path, QStringLiteral("inline")),
                       QStringLiteral("the kernel source (a string or an array of lines)"));
    }
    return lines(text, key(path, QStringLiteral("inline")), &m_p.sourceText);
}

bool Parser::parseCompile(const QJsonValue &v)
{
    const QString path = QStringLiteral("compile");
    if (v.isUndefined()) {
        return true;
    }
    QJsonObject o;
    if (!object(v, path, &o)) {
        return false;
    }
    static const QStringList allowed{
        QStringLiteral("arch"),     QStringLiteral("opt"),         QStringLiteral("fastMath"),
        QStringLiteral("lineInfo"), QStringLiteral("debug"),       QStringLiteral("std"),
        QStringLiteral("defines"),  QStringLiteral("includeDirs"), QStringLiteral("extra")};
    if (!checkKeys(o, path, allowed)) {
        return false;
    }
    CompileOptions &c = m_p.compile;
    if (o.contains(QStringLiteral("arch"))) {
        static const QRegularExpression re(QStringLiteral("^(auto|(sm|compute)_[0-9]+[af]?)$"));
        const QJsonValue a = o.value(QStringLiteral("arch"));
        if (!a.isString() || !re.match(a.toString()).hasMatch()) {
            return fail(key(path, QStringLiteral("arch")),
                        QStringLiteral("expected \"auto\", \"sm_XX\" or \"compute_XX\", got %1").arg(shownChoice(a)));
        }
        c.arch = a.toString();
    }
    if (o.contains(QStringLiteral("opt"))) {
        qint64 opt = 0;
        if (!integer(o.value(QStringLiteral("opt")), key(path, QStringLiteral("opt")), 0, 3, &opt)) {
            return false;
        }
        c.optLevel = static_cast<int>(opt);
    }
    const auto flag = [&](const char *name, bool *out) {
        const QString k = QString::fromLatin1(name);
        return !o.contains(k) || boolean(o.value(k), key(path, k), out);
    };
    if (!flag("fastMath", &c.fastMath) || !flag("lineInfo", &c.lineInfo) || !flag("debug", &c.debug)) {
        return false;
    }
    if (o.contains(QStringLiteral("std"))) {
        static const QRegularExpression re(QStringLiteral("^c\\+\\+[0-9][0-9]$"));
        const QJsonValue s = o.value(QStringLiteral("std"));
        if (!s.isString() || !re.match(s.toString()).hasMatch()) {
            return fail(key(path, QStringLiteral("std")),
                        QStringLiteral("expected \"c++NN\" (c++11, c++14, c++17, c++20), got %1").arg(shownChoice(s)));
        }
        c.std = s.toString();
    }
    if (o.contains(QStringLiteral("defines")) &&
        !parseDefines(o.value(QStringLiteral("defines")), key(path, QStringLiteral("defines")), &c.defines)) {
        return false;
    }
    if (o.contains(QStringLiteral("includeDirs")) &&
        !strings(o.value(QStringLiteral("includeDirs")), key(path, QStringLiteral("includeDirs")), &c.includeDirs)) {
        return false;
    }
    return !o.contains(QStringLiteral("extra")) ||
           strings(o.value(QStringLiteral("extra")), key(path, QStringLiteral("extra")), &c.extra);
}

bool Parser::parseDefines(const QJsonValue &v, const QString &path, QStringList *out)
{
    out->clear();
    if (v.isObject()) {
        const QJsonObject o = v.toObject();
        for (auto it = o.begin(); it != o.end(); ++it) {
            const QString p = key(path, it.key());
            if (!isIdentifier(it.key())) {
                return fail(p, QStringLiteral("'%1' is not a C identifier (a macro name)").arg(it.key()));
            }
            const QJsonValue val = it.value();
            if (val.isBool()) {
                if (val.toBool()) {
                    *out << it.key();
                }
            } else if (val.isDouble()) {
                *out << it.key() + QLatin1Char('=') + numberText(val);
            } else if (val.isString()) {
                *out << it.key() + QLatin1Char('=') + val.toString();
            } else {
                return typeError(p, QStringLiteral("a number, a string or true/false"), val);
            }
        }
        return true;
    }
    if (!v.isArray()) {
        return typeError(path, QStringLiteral("an object {\"NAME\": value} or an array of \"NAME=VALUE\""), v);
    }
    const QJsonArray a = v.toArray();
    QHash<QString, qsizetype> seen;
    for (qsizetype i = 0; i < a.size(); ++i) {
        const QString p = index(path, i);
        QString d;
        if (!string(a[i], p, &d)) {
            return false;
        }
        const QString macro = d.section(QLatin1Char('='), 0, 0);
        if (!isIdentifier(macro)) {
            return fail(p, QStringLiteral("expected \"NAME\" or \"NAME=VALUE\" with NAME a C identifier, got %1")
                               .arg(shown(a[i])));
        }
        if (seen.contains(macro)) {
            return fail(p, QStringLiteral("'%1' is already defined by %2").arg(macro, index(path, seen.value(macro))));
        }
        seen.insert(macro, i);
        *out << d;
    }
    return true;
}

bool Parser::parseScalars(const QJsonValue &v)
{
    const QString path = QStringLiteral("scalars");
    if (v.isUndefined()) {
        return true;
    }
    QJsonArray a;
    if (!array(v, path, &a)) {
        return false;
    }
    static const QStringList known{QStringLiteral("name"), QStringLiteral("type"), QStringLiteral("value")};
    for (qsizetype i = 0; i < a.size(); ++i) {
        const QString p = index(path, i);
        QJsonObject o;
        if (!object(a[i], p, &o)) {
            return false;
        }
        ScalarSpec s;
        if (!name(o.value(QStringLiteral("name")), key(p, QStringLiteral("name")), &s.name)) {
            return false;
        }
        if (m_scalarIndex.contains(s.name)) {
            return fail(
                key(p, QStringLiteral("name")),
                QStringLiteral("'%1' is already defined by %2").arg(s.name, index(path, m_scalarIndex.value(s.name))));
        }
        const QJsonValue t = o.value(QStringLiteral("type"));
        if (!t.isUndefined()) {
            const QString tp = key(p, QStringLiteral("type"));
            const QString allowed = scalarDTypeNames().join(QStringLiteral(", "));
            if (!t.isString()) {
                return typeError(tp, QStringLiteral("a dtype name"), t);
            }
            const std::optional<DType> dt = dtypeFromName(t.toString());
            if (!dt) {
                return fail(tp, QStringLiteral("unknown dtype '%1'; allowed: %2").arg(t.toString(), allowed));
            }
            if (dtypeInfo(*dt).components != 1) {
                return fail(
                    tp,
                    QStringLiteral("'%1' is a vector type; a scalar must be one of: %2").arg(t.toString(), allowed));
            }
            s.type = *dt;
        }
        if (!parseScalarValue(o.value(QStringLiteral("value")), key(p, QStringLiteral("value")), s.type, &s.value)) {
            return false;
        }
        for (auto it = o.begin(); it != o.end(); ++it) {
            if (!known.contains(it.key())) {
                s.unknown.insert(it.key(), it.value());
            }
        }
        m_scalarIndex.insert(s.name, i);
        m_p.scalars << s;
    }
    return true;
}

bool Parser::parseScalarValue(const QJsonValue &v, const QString &path, DType type, double *out)
{
    if (v.isUndefined()) {
        return missing(path, QStringLiteral("a number"));
    }
    if (v.isBool()) {
        *out = v.toBool() ? 1 : 0;
        return true;
    }
    if (!v.isDouble()) {
        return typeError(path, QStringLiteral("a number"), v);
    }
    const double d = v.toDouble();
    const DTypeInfo &info = dtypeInfo(type);
    const QString tn = dtypeName(type);
    const auto outOfRange = [&](const QString &lo, const QString &hi) {
        return fail(path, QStringLiteral("%1 is out of range for %2 (%3 to %4)").arg(numberText(v), tn, lo, hi));
    };
    if (info.kind == ScalarKind::SignedInt || info.kind == ScalarKind::UnsignedInt) {
        if (std::floor(d) != d) {
            return fail(path, QStringLiteral("%1 is not an integer (type %2)").arg(numberText(v), tn));
        }
        const int bits = info.componentBytes * 8;
        const bool isSigned = info.kind == ScalarKind::SignedInt;
        // Scalar values are doubles; 64-bit integers beyond 2^53 would silently change.
        // toInteger(): the JSON digits, which the double d may already have rounded to 2^53.
        if (bits == 64 &&
            (std::abs(d) > kMaxExactInteger || std::abs(v.toInteger()) > static_cast<qint64>(kMaxExactInteger))) {
            return fail(path, QStringLiteral("%1 is too large to be exact (scalar values are doubles; at most "
                                             "9007199254740992 in magnitude)")
                                  .arg(numberText(v)));
        }
        const double lo = isSigned ? -std::ldexp(1.0, bits - 1) : 0.0;
        const double hi = isSigned ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
        if (d < lo || d > hi) {
            if (bits == 64) {
                return outOfRange(isSigned ? QString::number(std::numeric_limits<qint64>::min()) : QStringLiteral("0"),
                                  isSigned ? QString::number(std::numeric_limits<qint64>::max())
                                           : QString::number(std::numeric_limits<quint64>::max()));
            }
            return outOfRange(numberText(lo), numberText(hi));
        }
    } else {
        double max = std::numeric_limits<double>::max();
        if (info.kind == ScalarKind::Half) {
            max = 65504;
        } else if (info.kind == ScalarKind::BFloat) {
            max = 3.3895313892515355e38;
        } else if (info.componentBytes == 4) {
            max = std::numeric_limits<float>::max();
        }
        if (std::abs(d) > max) {
            return outOfRange(numberText(-max), numberText(max));
        }
    }
    *out = d;
    return true;
}

bool Parser::parseBuffers(const QJsonValue &v)
{
    const QString path = QStringLiteral("buffers");
    if (v.isUndefined()) {
        return true;
    }
    QJsonArray a;
    if (!array(v, path, &a)) {
        return false;
    }
    static const QStringList known{QStringLiteral("name"), QStringLiteral("dtype"), QStringLiteral("shape"),
                                   QStringLiteral("init")};
    for (qsizetype i = 0; i < a.size(); ++i) {
        const QString p = index(path, i);
        QJsonObject o;
        if (!object(a[i], p, &o)) {
            return false;
        }
        BufferSpec b;
        const QString np = key(p, QStringLiteral("name"));
        if (!name(o.value(QStringLiteral("name")), np, &b.name)) {
            return false;
        }
        if (m_scalarIndex.contains(b.name)) {
            return fail(np, QStringLiteral("'%1' is already a scalar").arg(b.name));
        }
        if (m_bufferIndex.contains(b.name)) {
            return fail(
                np,
                QStringLiteral("'%1' is already defined by %2").arg(b.name, index(path, m_bufferIndex.value(b.name))));
        }
        const QString dp = key(p, QStringLiteral("dtype"));
        const QString allowed = dtypeNames().join(QStringLiteral(", "));
        const QJsonValue dt = o.value(QStringLiteral("dtype"));
        if (dt.isUndefined()) {
            return missing(dp, QStringLiteral("one of: %1").arg(allowed));
        }
        if (!dt.isString()) {
            return typeError(dp, QStringLiteral("a dtype name"), dt);
        }
        const std::optional<DType> t = dtypeFromName(dt.toString());
        if (!t) {
            return fail(dp, QStringLiteral("unknown dtype '%1'; allowed: %2").arg(dt.toString(), allowed));
        }
        b.dtype = *t;
        const QString sp = key(p, QStringLiteral("shape"));
        const QJsonValue shape = o.value(QStringLiteral("shape"));
        if (!shape.isUndefined() && !parseShape(shape, sp, &b.shape)) {
            return false;
        }
        const QJsonValue init = o.value(QStringLiteral("init"));
        if (!init.isUndefined() && !parseInit(init, key(p, QStringLiteral("init")), &b.init)) {
            return false;
        }
        const bool fromFile = b.init.kind == BufferInit::Kind::Npy || b.init.kind == BufferInit::Kind::Image;
        if (shape.isUndefined() && !fromFile) {
            return missing(sp, QStringLiteral("1 to 3 positive integers (only npy and image inits take the shape "
                                              "from the file)"));
        }
        if (!checkSize(b, sp)) {
            return false;
        }
        if (b.init.kind == BufferInit::Kind::Image &&
            !checkImageMode(b, key(key(p, QStringLiteral("init")), QStringLiteral("mode")))) {
            return false;
        }
        for (auto it = o.begin(); it != o.end(); ++it) {
            if (!known.contains(it.key())) {
                b.unknown.insert(it.key(), it.value());
            }
        }
        m_bufferIndex.insert(b.name, i);
        m_p.buffers << b;
    }
    return true;
}

bool Parser::parseShape(const QJsonValue &v, const QString &path, QList<qint64> *out)
{
    const auto bad = [&] {
        return fail(path, QStringLiteral("expected 1 to 3 positive integers, got %1").arg(shown(v)));
    };
    QJsonArray a;
    if (v.isDouble()) {
        a.append(v);
    } else if (v.isArray()) {
        a = v.toArray();
    } else {
        return bad();
    }
    if (a.isEmpty() || a.size() > 3) {
        return bad();
    }
    QList<qint64> shape;
    for (const QJsonValue &e : a) {
        const double d = e.toDouble();
        if (!e.isDouble() || std::floor(d) != d || d < 1) {
            return bad();
        }
        if (d > static_cast<double>(kMaxBufferBytes)) {
            // Too big anyway; checkSize() words the message with the limit.
            shape << kMaxBufferBytes + 1;
        } else {
            shape << static_cast<qint64>(d);
        }
    }
    *out = shape;
    return true;
}

bool Parser::checkSize(const BufferSpec &b, const QString &path)
{
    const QString limit = QStringLiteral("the limit of 64 GiB (%1 bytes)").arg(kMaxBufferBytes);
    qint64 elements = 1;
    bool overflow = false;
    for (qint64 e : b.shape) {
        overflow = overflow || e > kMaxBufferBytes || qMulOverflow(elements, e, &elements);
    }
    qint64 bytes = 0;
    overflow = overflow || qMulOverflow(elements, static_cast<qint64>(dtypeInfo(b.dtype).elementBytes()), &bytes);
    if (overflow) {
        return fail(path,
                    QStringLiteral("%1 of %2 is more than %3").arg(shapeText(b.shape), dtypeName(b.dtype), limit));
    }
    if (bytes > kMaxBufferBytes) {
        return fail(path, QStringLiteral("%1 of %2 is %3 bytes (%4 elements), more than %5")
                              .arg(shapeText(b.shape), dtypeName(b.dtype))
                              .arg(bytes)
                              .arg(elements)
                              .arg(limit));
    }
    return true;
}

bool Parser::parseInit(const QJsonValue &v, const QString &path, BufferInit *out)
{
    QJsonObject o;
    if (!object(v, path, &o)) {
        return false;
    }
    QStringList kindNames;
    for (BufferInit::Kind k : initKinds()) {
        kindNames << initKindName(k);
    }
    const QString kp = key(path, QStringLiteral("kind"));
    const QJsonValue kv = o.value(QStringLiteral("kind"));
    if (kv.isUndefined()) {
        return missing(kp, QStringLiteral("one of: %1").arg(kindNames.join(QStringLiteral(", "))));
    }
    if (!kv.isString()) {
        return typeError(kp, QStringLiteral("a string (one of: %1)").arg(kindNames.join(QStringLiteral(", "))), kv);
    }
    const qsizetype ki = kindNames.indexOf(kv.toString());
    if (ki < 0) {
        return fail(
            kp,
            QStringLiteral("unknown kind '%1'; allowed: %2").arg(kv.toString(), kindNames.join(QStringLiteral(", "))));
    }
    BufferInit init;
    init.kind = initKinds()[ki];
    const QString kindText = kv.toString();

    // Keys that belong to another kind are errors: a typo here would silently give wrong data.
    QStringList allowed{QStringLiteral("kind")};
    switch (init.kind) {
    case BufferInit::Kind::Zeros: break;
    case BufferInit::Kind::Constant: allowed << QStringLiteral("value"); break;
    case BufferInit::Kind::Ramp: allowed << QStringLiteral("start") << QStringLiteral("step"); break;
    case BufferInit::Kind::Random: {
        const QJsonValue dist = o.value(QStringLiteral("distribution"));
        if (!dist.isUndefined()) {
            if (dist.toString() == QLatin1String("normal")) {
                init.distribution = BufferInit::Distribution::Normal;
            } else if (dist.toString() != QLatin1String("uniform")) {
                return fail(key(path, QStringLiteral("distribution")),
                            QStringLiteral("expected \"uniform\" or \"normal\", got %1").arg(shownChoice(dist)));
            }
        }
        const bool normal = init.distribution == BufferInit::Distribution::Normal;
        allowed << QStringLiteral("distribution");
        allowed << (normal ? QStringList{QStringLiteral("mean"), QStringLiteral("stddev")}
                           : QStringList{QStringLiteral("min"), QStringLiteral("max")});
        allowed << QStringLiteral("seed");
        for (auto it = o.begin(); it != o.end(); ++it) {
            const QString &k = it.key();
            if (!normal && (k == QLatin1String("mean") || k == QLatin1String("stddev"))) {
                return fail(key(path, k), QStringLiteral("only for distribution \"normal\""));
            }
            if (normal && (k == QLatin1String("min") || k == QLatin1String("max"))) {
                return fail(key(path, k), QStringLiteral("only for distribution \"uniform\""));
            }
        }
        break;
    }
    case BufferInit::Kind::Expression: allowed << QStringLiteral("expr"); break;
    case BufferInit::Kind::Npy: allowed << QStringLiteral("file"); break;
    case BufferInit::Kind::Image: allowed << QStringLiteral("file") << QStringLiteral("mode"); break;
    }
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (!allowed.contains(it.key())) {
            return fail(key(path, it.key()), QStringLiteral("not a key of a \"%1\" init; allowed: %2")
                                                 .arg(kindText, allowed.join(QStringLiteral(", "))));
        }
    }

    const auto num = [&](const char *name, double *dst) {
        const QString k = QString::fromLatin1(name);
        return !o.contains(k) || number(o.value(k), key(path, k), dst);
    };
    switch (init.kind) {
    case BufferInit::Kind::Zeros: break;
    case BufferInit::Kind::Constant:
        if (!o.contains(QStringLiteral("value"))) {
            return missing(key(path, QStringLiteral("value")), QStringLiteral("a number"));
        }
        if (!num("value", &init.value)) {
            return false;
        }
        break;
    case BufferInit::Kind::Ramp:
        if (!num("start", &init.start) || !num("step", &init.step)) {
            return false;
        }
        break;
    case BufferInit::Kind::Random: {
        if (!num("min", &init.min) || !num("max", &init.max) || !num("mean", &init.mean)) {
            return false;
        }
        if (init.distribution == BufferInit::Distribution::Uniform && init.max <= init.min) {
            return fail(key(path, QStringLiteral("max")), QStringLiteral("must be greater than min (%1), got %2")
                                                              .arg(numberText(init.min), numberText(init.max)));
        }
        if (o.contains(QStringLiteral("stddev")) &&
            !numberAtLeast(o.value(QStringLiteral("stddev")), key(path, QStringLiteral("stddev")), 0, true,
                           &init.stddev)) {
            return false;
        }
        if (o.contains(QStringLiteral("seed"))) {
            qint64 seed = 0;
            if (!integer(o.value(QStringLiteral("seed")), key(path, QStringLiteral("seed")), 0,
                         std::numeric_limits<qint64>::max(), &seed)) {
                return false;
            }
            init.seed = static_cast<quint64>(seed);
        }
        break;
    }
    case BufferInit::Kind::Expression:
        if (!nonEmptyString(o.value(QStringLiteral("expr")), key(path, QStringLiteral("expr")),
                            QStringLiteral("an expression string such as \"sin(x)\""), &init.expression)) {
            return false;
        }
        break;
    case BufferInit::Kind::Npy:
    case BufferInit::Kind::Image:
        if (!nonEmptyString(o.value(QStringLiteral("file")), key(path, QStringLiteral("file")),
                            QStringLiteral("a file name"), &init.file)) {
            return false;
        }
        if (init.kind == BufferInit::Kind::Image && o.contains(QStringLiteral("mode"))) {
            const QJsonValue m = o.value(QStringLiteral("mode"));
            const QString ms = m.toString();
            if (ms == QLatin1String("rgba8")) {
                init.imageMode = BufferInit::ImageMode::Rgba8;
            } else if (ms == QLatin1String("gray")) {
                init.imageMode = BufferInit::ImageMode::Gray;
            } else if (ms == QLatin1String("rgba")) {
                init.imageMode = BufferInit::ImageMode::Rgba;
            } else {
                return fail(key(path, QStringLiteral("mode")),
                            QStringLiteral("expected \"rgba8\", \"gray\" or \"rgba\", got %1").arg(shownChoice(m)));
            }
        }
        break;
    }
    *out = init;
    return true;
}

bool Parser::checkImageMode(const BufferSpec &b, const QString &path)
{
    const DTypeInfo &info = dtypeInfo(b.dtype);
    const bool lastIs4 = b.shape.isEmpty() || b.shape.last() == 4;
    const QString got =
        b.shape.isEmpty() ? dtypeName(b.dtype) : dtypeName(b.dtype) + QLatin1Char(' ') + shapeText(b.shape);
    const bool isFloat =
        info.kind == ScalarKind::Float || info.kind == ScalarKind::Half || info.kind == ScalarKind::BFloat;
    switch (b.init.imageMode) {
    case BufferInit::ImageMode::Rgba8:
        if (b.dtype == DType::UChar4 || (b.dtype == DType::UInt8 && lastIs4)) {
            return true;
        }
        return fail(
            path, QStringLiteral("\"rgba8\" needs dtype uchar4, or uint8 with a last dimension of 4; got %1").arg(got));
    case BufferInit::ImageMode::Gray:
        if (info.components == 1) {
            return true;
        }
        return fail(path, QStringLiteral("\"gray\" needs a scalar dtype (one value per pixel), got %1").arg(got));
    case BufferInit::ImageMode::Rgba:
        if (b.dtype == DType::Float4 || (info.components == 1 && isFloat && lastIs4)) {
            return true;
        }
        return fail(
            path,
            QStringLiteral("\"rgba\" needs dtype float4, or a float type with a last dimension of 4; got %1").arg(got));
    }
    return true;
}

bool Parser::parseLaunches(const QJsonValue &v)
{
    const QString path = QStringLiteral("launches");
    if (v.isUndefined()) {
        return true;
    }
    QJsonArray a;
    if (!array(v, path, &a)) {
        return false;
    }
    static const QStringList known{QStringLiteral("kernel"), QStringLiteral("grid"), QStringLiteral("block"),
                                   QStringLiteral("sharedBytes"), QStringLiteral("args")};
    for (qsizetype i = 0; i < a.size(); ++i) {
        const QString p = index(path, i);
        QJsonObject o;
        if (!object(a[i], p, &o)) {
            return false;
        }
        LaunchStep l;
        if (!nonEmptyString(o.value(QStringLiteral("kernel")), key(p, QStringLiteral("kernel")),
                            QStringLiteral("the kernel's name"), &l.kernel)) {
            return false;
        }
        for (const char *dim : {"grid", "block"}) {
            const QString k = QString::fromLatin1(dim);
            const QJsonValue dv = o.value(k);
            if (dv.isUndefined()) {
                return missing(key(p, k),
                               QStringLiteral("1 to 3 items, each a positive integer or an expression string"));
            }
            if (!parseDims(dv, key(p, k), k == QLatin1String("grid") ? &l.grid : &l.block)) {
                return false;
            }
        }
        const QJsonValue shared = o.value(QStringLiteral("sharedBytes"));
        if (!shared.isUndefined() && !parseSharedBytes(shared, key(p, QStringLiteral("sharedBytes")), &l.sharedBytes)) {
            return false;
        }
        const QJsonValue args = o.value(QStringLiteral("args"));
        if (!args.isUndefined() && !parseArgs(args, key(p, QStringLiteral("args")), &l.args)) {
            return false;
        }
        for (auto it = o.begin(); it != o.end(); ++it) {
            if (!known.contains(it.key())) {
                l.unknown.insert(it.key(), it.value());
            }
        }
        m_p.launches << l;
    }
    return true;
}

bool Parser::parseDims(const QJsonValue &v, const QString &path, QStringList *out)
{
    QJsonArray items;
    if (v.isDouble() || v.isString()) {
        items.append(v);
    } else if (v.isArray() && !v.toArray().isEmpty() && v.toArray().size() <= 3) {
        items = v.toArray();
    } else {
        return fail(path,
                    QStringLiteral("expected 1 to 3 items, each a positive integer or an expression string, got %1")
                        .arg(shown(v)));
    }
    out->clear();
    for (qsizetype i = 0; i < items.size(); ++i) {
        const QJsonValue item = items[i];
        const QString p = v.isArray() ? index(path, i) : path;
        const QString expected =
            QStringLiteral("expected a positive integer (at most %1) or an expression string, got %2");
        if (item.isDouble()) {
            const double d = item.toDouble();
            if (std::floor(d) != d || d < 1 || d > static_cast<double>(kMaxLaunchDim)) {
                return fail(p, expected.arg(kMaxLaunchDim).arg(numberText(item)));
            }
            *out << QString::number(static_cast<qint64>(d));
        } else if (item.isString() && !item.toString().trimmed().isEmpty()) {
            *out << item.toString();
        } else {
            return fail(p, expected.arg(kMaxLaunchDim).arg(typeName(item)));
        }
    }
    return true;
}

bool Parser::parseSharedBytes(const QJsonValue &v, const QString &path, QString *out)
{
    const QString expected =
        QStringLiteral("expected a non-negative integer (at most %1) or an expression string, got %2");
    if (v.isDouble()) {
        const double d = v.toDouble();
        if (std::floor(d) != d || d < 0 || d > static_cast<double>(kMaxLaunchDim)) {
            return fail(path, expected.arg(kMaxLaunchDim).arg(numberText(v)));
        }
        *out = QString::number(static_cast<qint64>(d));
        return true;
    }
    if (v.isString() && !v.toString().trimmed().isEmpty()) {
        *out = v.toString();
        return true;
    }
    return fail(path, expected.arg(kMaxLaunchDim).arg(typeName(v)));
}

bool Parser::parseArgs(const QJsonValue &v, const QString &path, QList<ArgBinding> *out)
{
    out->clear();
    if (v.isArray()) {
        const QJsonArray a = v.toArray();
        for (qsizetype i = 0; i < a.size(); ++i) {
            ArgBinding b;
            if (!parseBinding(a[i], index(path, i), &b)) {
                return false;
            }
            *out << b;
        }
        return true;
    }
    if (v.isObject()) {
        // By name: the order does not matter (QJsonObject keeps the keys sorted).
        const QJsonObject o = v.toObject();
        for (auto it = o.begin(); it != o.end(); ++it) {
            const QString p = key(path, it.key());
            if (!isIdentifier(it.key())) {
                return fail(p, QStringLiteral("'%1' is not a C identifier (a parameter name)").arg(it.key()));
            }
            ArgBinding b;
            if (!parseBinding(it.value(), p, &b)) {
                return false;
            }
            b.param = it.key();
            *out << b;
        }
        return true;
    }
    return typeError(path, QStringLiteral("an array (by position) or an object (by parameter name)"), v);
}

bool Parser::bufferName(const QString &name, const QString &path, const BufferSpec **out)
{
    if (m_bufferIndex.contains(name)) {
        *out = &m_p.buffers[m_bufferIndex.value(name)];
        return true;
    }
    if (m_scalarIndex.contains(name)) {
        return fail(path, QStringLiteral("'%1' is a scalar, not a buffer").arg(name));
    }
    QStringList buffers;
    for (const BufferSpec &b : m_p.buffers) {
        buffers << b.name;
    }
    return fail(path, QStringLiteral("unknown buffer '%1'; buffers: %2").arg(name, namesOrNone(buffers)));
}

bool Parser::scalarName(const QString &name, const QString &path)
{
    if (m_scalarIndex.contains(name)) {
        return true;
    }
    if (m_bufferIndex.contains(name)) {
        return fail(path, QStringLiteral("'%1' is a buffer, not a scalar").arg(name));
    }
    QStringList scalars;
    for (const ScalarSpec &s : m_p.scalars) {
        scalars << s.name;
    }
    return fail(path, QStringLiteral("unknown scalar '%1'; scalars: %2").arg(name, namesOrNone(scalars)));
}

bool Parser::checkOffset(const BufferSpec &b, qint64 offset, const QString &path)
{
    if (b.shape.isEmpty()) {
        return true; // the size comes from a file: checked when the file is read
    }
    qint64 count = 1;
    for (qint64 e : b.shape) {
        count *= e; // checkSize() already ruled out overflow
    }
    if (offset > count) {
        return fail(path, QStringLiteral("offset %1 is past the end of buffer '%2' (%3 elements)")
                              .arg(offset)
                              .arg(b.name)
                              .arg(count));
    }
    return true;
}

bool Parser::parseBinding(const QJsonValue &v, const QString &path, ArgBinding *out)
{
    ArgBinding b;
    if (v.isDouble() || v.isBool()) {
        b.kind = ArgBinding::Kind::Literal;
        b.value = v.isBool() ? (v.toBool() ? 1 : 0) : v.toDouble();
        *out = b;
        return true;
    }
    if (v.isString()) {
        static const QRegularExpression offsetRe(
            QStringLiteral("^\\s*([A-Za-z_][A-Za-z0-9_]*)\\s*\\+\\s*([0-9]+)\\s*$"));
        const QString s = v.toString();
        const QRegularExpressionMatch m = offsetRe.match(s);
        if (m.hasMatch()) {
            const QString n = m.captured(1);
            if (m_scalarIndex.contains(n)) {
                return fail(path, QStringLiteral("'%1' is a scalar; only a buffer takes an offset").arg(n));
            }
            if (!m_bufferIndex.contains(n)) {
                return fail(path, unknownName(n));
            }
            bool ok = false;
            b.offset = m.captured(2).toLongLong(&ok);
            const BufferSpec &buf = m_p.buffers[m_bufferIndex.value(n)];
            if (!ok) {
                return fail(path, QStringLiteral("offset %1 is past the end of buffer '%2'").arg(m.captured(2), n));
            }
            if (!checkOffset(buf, b.offset, path)) {
                return false;
            }
            b.kind = ArgBinding::Kind::Buffer;
            b.name = n;
            *out = b;
            return true;
        }
        const QString n = s.trimmed();
        if (!isIdentifier(n)) {
            return fail(path, QStringLiteral("expected a buffer or scalar name, \"buffer+offset\", a number or an "
                                             "object, got %1")
                                  .arg(shown(v)));
        }
        if (m_bufferIndex.contains(n)) {
            b.kind = ArgBinding::Kind::Buffer;
        } else if (m_scalarIndex.contains(n)) {
            b.kind = ArgBinding::Kind::Scalar;
        } else {
            return fail(path, unknownName(n));
        }
        b.name = n;
        *out = b;
        return true;
    }
    if (!v.isObject()) {
        return typeError(path, QStringLiteral("a buffer or scalar name, a number or an object"), v);
    }
    const QJsonObject o = v.toObject();
    if (!checkKeys(
            o, path,
            {QStringLiteral("buffer"), QStringLiteral("offset"), QStringLiteral("scalar"), QStringLiteral("value")})) {
        return false;
    }
    const int kinds = int(o.contains(QStringLiteral("buffer"))) + int(o.contains(QStringLiteral("scalar"))) +
                      int(o.contains(QStringLiteral("value")));
    if (kinds != 1) {
        return fail(
            path, QStringLiteral("expected exactly one of \"buffer\", \"scalar\" or \"value\", got %1").arg(shown(v)));
    }
    if (o.contains(QStringLiteral("offset")) && !o.contains(QStringLiteral("buffer"))) {
        return fail(key(path, QStringLiteral("offset")), QStringLiteral("only allowed with \"buffer\""));
    }
    if (o.contains(QStringLiteral("buffer"))) {
        const QString bp = key(path, QStringLiteral("buffer"));
        const BufferSpec *buf = nullptr;
        if (!string(o.value(QStringLiteral("buffer")), bp, &b.name) || !bufferName(b.name, bp, &buf)) {
            return false;
        }
        b.kind = ArgBinding::Kind::Buffer;
        if (o.contains(QStringLiteral("offset"))) {
            const QString op = key(path, QStringLiteral("offset"));
            if (!integer(o.value(QStringLiteral("offset")), op, 0, std::numeric_limits<qint64>::max(), &b.offset) ||
                !checkOffset(*buf, b.offset, op)) {
                return false;
            }
        }
    } else if (o.contains(QStringLiteral("scalar"))) {
        const QString sp = key(path, QStringLiteral("scalar"));
        if (!string(o.value(QStringLiteral("scalar")), sp, &b.name) || !scalarName(b.name, sp)) {
            return false;
        }
        b.kind = ArgBinding::Kind::Scalar;
    } else {
        const QJsonValue val = o.value(QStringLiteral("value"));
        if (val.isBool()) {
            b.value = val.toBool() ? 1 : 0;
        } else if (!number(val, key(path, QStringLiteral("value")), &b.value)) {
            return false;
        }
        b.kind = ArgBinding::Kind::Literal;
    }
    *out = b;
    return true;
}

bool Parser::parseRepeat(const QJsonValue &v)
{
    const QString path = QStringLiteral("repeat");
    if (v.isUndefined()) {
        return true;
    }
    QJsonObject o;
    if (!object(v, path, &o) || !checkKeys(o, path, {QStringLiteral("count"), QStringLiteral("swap")})) {
        return false;
    }
    if (o.contains(QStringLiteral("count")) &&
        !intField(o.value(QStringLiteral("count")), key(path, QStringLiteral("count")), 1, &m_p.repeat.count)) {
        return false;
    }
    if (!o.contains(QStringLiteral("swap"))) {
        return true;
    }
    const QString sp = key(path, QStringLiteral("swap"));
    const QJsonValue sv = o.value(QStringLiteral("swap"));
    if (!sv.isArray()) {
        return typeError(sp, QStringLiteral("an array of buffer name pairs"), sv);
    }
    const QJsonArray swaps = sv.toArray();
    for (qsizetype i = 0; i < swaps.size(); ++i) {
        const QString p = index(sp, i);
        const QJsonArray pair = swaps[i].toArray();
        if (!swaps[i].isArray() || pair.size() != 2 || !pair[0].isString() || !pair[1].isString()) {
            return fail(p, QStringLiteral("expected a pair of buffer names, got %1").arg(shown(swaps[i])));
        }
        const BufferSpec *a = nullptr;
        const BufferSpec *b = nullptr;
        if (!bufferName(pair[0].toString(), index(p, 0), &a) || !bufferName(pair[1].toString(), index(p, 1), &b)) {
            return false;
        }
        if (a == b) {
            return fail(p, QStringLiteral("cannot swap buffer '%1' with itself").arg(a->name));
        }
        if (a->dtype != b->dtype || a->shape != b->shape) {
            return fail(p,
                        QStringLiteral("buffers '%1' and '%2' must have the same dtype and shape; %1 is %3 %4, %2 is "
                                       "%5 %6")
                            .arg(a->name, b->name, dtypeName(a->dtype), shapeText(a->shape), dtypeName(b->dtype),
                                 shapeText(b->shape)));
        }
        m_p.repeat.swaps << qMakePair(a->name, b->name);
    }
    return true;
}

bool Parser::parseTiming(const QJsonValue &v)
{
    const QString path = QStringLiteral("timing");
    if (v.isUndefined()) {
        return true;
    }
    QJsonObject o;
    if (!object(v, path, &o)) {
        return false;
    }
    TimingSpec &t = m_p.timing;
    static const QStringList known{
        QStringLiteral("mode"),       QStringLiteral("enabled"),        QStringLiteral("warmup"),
        QStringLiteral("minSamples"), QStringLiteral("maxSamples"),     QStringLiteral("minSeconds"),
        QStringLiteral("maxNoise"),   QStringLiteral("timeoutSeconds"), QStringLiteral("batch")};
    if (o.contains(QStringLiteral("mode"))) {
        const QJsonValue m = o.value(QStringLiteral("mode"));
        if (m.toString() == QLatin1String("cold")) {
            t.mode = TimingSpec::Mode::Cold;
        } else if (m.toString() == QLatin1String("hot")) {
            t.mode = TimingSpec::Mode::Hot;
        } else {
            return fail(key(path, QStringLiteral("mode")),
                        QStringLiteral("expected \"cold\" or \"hot\", got %1").arg(shownChoice(m)));
        }
    }
    const auto field = [&](const char *name) { return o.value(QString::fromLatin1(name)); };
    const auto has = [&](const char *name) { return o.contains(QString::fromLatin1(name)); };
    const auto at = [&](const char *name) { return key(path, QString::fromLatin1(name)); };
    if ((has("enabled") && !boolean(field("enabled"), at("enabled"), &t.enabled)) ||
        (has("warmup") && !intField(field("warmup"), at("warmup"), 0, &t.warmup)) ||
        (has("minSamples") && !intField(field("minSamples"), at("minSamples"), 1, &t.minSamples)) ||
        (has("maxSamples") && !intField(field("maxSamples"), at("maxSamples"), 1, &t.maxSamples))) {
        return false;
    }
    if (t.maxSamples < t.minSamples) {
        return fail(at("maxSamples"),
                    QStringLiteral("must be at least minSamples (%1), got %2").arg(t.minSamples).arg(t.maxSamples));
    }
    if ((has("minSeconds") && !numberAtLeast(field("minSeconds"), at("minSeconds"), 0, true, &t.minSeconds)) ||
        (has("maxNoise") && !numberAtLeast(field("maxNoise"), at("maxNoise"), 0, false, &t.maxNoise)) ||
        (has("timeoutSeconds") &&
         !numberAtLeast(field("timeoutSeconds"), at("timeoutSeconds"), 0, false, &t.timeoutSeconds)) ||
        (has("batch") && !intField(field("batch"), at("batch"), 0, &t.batch))) {
        return false;
    }
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (!known.contains(it.key())) {
            t.unknown.insert(it.key(), it.value());
        }
    }
    return true;
}

bool Parser::expressionOrNumber(const QJsonValue &v, const QString &path, QString *out)
{
    if (v.isString()) {
        *out = v.toString();
        return true;
    }
    if (v.isDouble()) {
        *out = numberText(v);
        return true;
    }
    return typeError(path, QStringLiteral("an expression string or a number"), v);
}

bool Parser::parseThroughput(const QJsonValue &v)
{
    const QString path = QStringLiteral("throughput");
    if (v.isUndefined()) {
        return true;
    }
    QJsonObject o;
    if (!object(v, path, &o) || !checkKeys(o, path, {QStringLiteral("bytes"), QStringLiteral("flops")})) {
        return false;
    }
    return (!o.contains(QStringLiteral("bytes")) ||
            expressionOrNumber(o.value(QStringLiteral("bytes")), key(path, QStringLiteral("bytes")),
                               &m_p.throughput.bytes)) &&
           (!o.contains(QStringLiteral("flops")) ||
            expressionOrNumber(o.value(QStringLiteral("flops")), key(path, QStringLiteral("flops")),
                               &m_p.throughput.flops));
}

bool Parser::readSource()
{
    if (m_p.sourceFile.isEmpty() || m_dir.isEmpty()) {
        return true;
    }
    const QString file = QDir::cleanPath(QDir(m_dir).absoluteFilePath(m_p.sourceFile));
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly)) {
        return fail(QStringLiteral("source"), QStringLiteral("cannot read '%1': %2").arg(file, f.errorString()));
    }
    m_p.sourceText = QString::fromUtf8(f.readAll());
    return true;
}

// ---------------------------------------------------------------------------
// Serializing.

JsonNode dimsNode(const QStringList &dims, qint64 min)
{
    JsonNode a = jArray();
    for (const QString &d : dims) {
        append(a, isPlainInteger(d, min) ? jNumberText(d) : jString(d));
    }
    return a;
}

JsonNode bindingNode(const ArgBinding &b)
{
    switch (b.kind) {
    case ArgBinding::Kind::Buffer:
        return jString(b.offset == 0 ? b.name : QStringLiteral("%1+%2").arg(b.name).arg(b.offset));
    case ArgBinding::Kind::Scalar: return jString(b.name);
    case ArgBinding::Kind::Literal: return jNumber(b.value);
    }
    return JsonNode{};
}

JsonNode initNode(const BufferInit &init)
{
    JsonNode o = jObject();
    insert(o, QStringLiteral("kind"), jString(initKindName(init.kind)));
    switch (init.kind) {
    case BufferInit::Kind::Zeros: break;
    case BufferInit::Kind::Constant: insert(o, QStringLiteral("value"), jNumber(init.value)); break;
    case BufferInit::Kind::Ramp:
        insert(o, QStringLiteral("start"), jNumber(init.start));
        insert(o, QStringLiteral("step"), jNumber(init.step));
        break;
    case BufferInit::Kind::Random:
        if (init.distribution == BufferInit::Distribution::Normal) {
            insert(o, QStringLiteral("distribution"), jString(QStringLiteral("normal")));
            insert(o, QStringLiteral("mean"), jNumber(init.mean));
            insert(o, QStringLiteral("stddev"), jNumber(init.stddev));
        } else {
            insert(o, QStringLiteral("distribution"), jString(QStringLiteral("uniform")));
            insert(o, QStringLiteral("min"), jNumber(init.min));
            insert(o, QStringLiteral("max"), jNumber(init.max));
        }
        insert(o, QStringLiteral("seed"), jNumberText(QString::number(init.seed)));
        break;
    case BufferInit::Kind::Expression: insert(o, QStringLiteral("expr"), jString(init.expression)); break;
    case BufferInit::Kind::Npy: insert(o, QStringLiteral("file"), jString(init.file)); break;
    case BufferInit::Kind::Image:
        insert(o, QStringLiteral("file"), jString(init.file));
        insert(o, QStringLiteral("mode"), jString(imageModeName(init.imageMode)));
        break;
    }
    return o;
}

JsonNode projectNode(const Project &p)
{
    JsonNode top = jObject();
    insert(top, QStringLiteral("format"), jString(projectFormatName()));
    insert(top, QStringLiteral("version"), jInteger(Project::kVersion));
    insert(top, QStringLiteral("title"), jString(p.title));
    insert(top, QStringLiteral("description"), jLines(p.description));
    if (p.sourceFile.isEmpty()) {
        JsonNode s = jObject();
        insert(s, QStringLiteral("inline"), jLines(p.sourceText));
        insert(top, QStringLiteral("source"), s);
    } else {
        insert(top, QStringLiteral("source"), jString(p.sourceFile));
    }

    const CompileOptions &c = p.compile;
    JsonNode compile = jObject();
    insert(compile, QStringLiteral("arch"), jString(c.arch));
    insert(compile, QStringLiteral("opt"), jInteger(c.optLevel));
    insert(compile, QStringLiteral("fastMath"), jBool(c.fastMath));
    insert(compile, QStringLiteral("lineInfo"), jBool(c.lineInfo));
    insert(compile, QStringLiteral("debug"), jBool(c.debug));
    insert(compile, QStringLiteral("std"), jString(c.std));
    insert(compile, QStringLiteral("defines"), jStrings(c.defines));
    insert(compile, QStringLiteral("includeDirs"), jStrings(c.includeDirs));
    insert(compile, QStringLiteral("extra"), jStrings(c.extra));
    insert(top, QStringLiteral("compile"), compile);

    JsonNode scalars = jArray();
    for (const ScalarSpec &s : p.scalars) {
        JsonNode o = jObject();
        insert(o, QStringLiteral("name"), jString(s.name));
        insert(o, QStringLiteral("type"), jString(dtypeName(s.type)));
        insert(o, QStringLiteral("value"), jNumber(s.value));
        appendUnknown(o, s.unknown);
        append(scalars, o);
    }
    insert(top, QStringLiteral("scalars"), scalars);

    JsonNode buffers = jArray();
    for (const BufferSpec &b : p.buffers) {
        JsonNode o = jObject();
        insert(o, QStringLiteral("name"), jString(b.name));
        insert(o, QStringLiteral("dtype"), jString(dtypeName(b.dtype)));
        if (!b.shape.isEmpty()) {
            JsonNode shape = jArray();
            for (qint64 e : b.shape) {
                append(shape, jInteger(e));
            }
            insert(o, QStringLiteral("shape"), shape);
        }
        insert(o, QStringLiteral("init"), initNode(b.init));
        appendUnknown(o, b.unknown);
        append(buffers, o);
    }
    insert(top, QStringLiteral("buffers"), buffers);

    JsonNode launches = jArray();
    for (const LaunchStep &l : p.launches) {
        JsonNode o = jObject();
        insert(o, QStringLiteral("kernel"), jString(l.kernel));
        insert(o, QStringLiteral("grid"), dimsNode(l.grid, 1));
        insert(o, QStringLiteral("block"), dimsNode(l.block, 1));
        insert(o, QStringLiteral("sharedBytes"),
               isPlainInteger(l.sharedBytes, 0) ? jNumberText(l.sharedBytes) : jString(l.sharedBytes));
        // By name only when every binding has a name; a mix cannot be written as either form.
        const bool byName = !l.args.isEmpty() && std::all_of(l.args.begin(), l.args.end(),
                                                             [](const ArgBinding &b) { return !b.param.isEmpty(); });
        JsonNode args = byName ? jObject() : jArray();
        for (const ArgBinding &b : l.args) {
            if (byName) {
                insert(args, b.param, bindingNode(b));
            } else {
                append(args, bindingNode(b));
            }
        }
        insert(o, QStringLiteral("args"), args);
        appendUnknown(o, l.unknown);
        append(launches, o);
    }
    insert(top, QStringLiteral("launches"), launches);

    JsonNode repeat = jObject();
    insert(repeat, QStringLiteral("count"), jInteger(p.repeat.count));
    JsonNode swaps = jArray();
    for (const auto &s : p.repeat.swaps) {
        append(swaps, jStrings({s.first, s.second}));
    }
    insert(repeat, QStringLiteral("swap"), swaps);
    insert(top, QStringLiteral("repeat"), repeat);

    const TimingSpec &t = p.timing;
    JsonNode timing = jObject();
    insert(timing, QStringLiteral("mode"),
           jString(t.mode == TimingSpec::Mode::Hot ? QStringLiteral("hot") : QStringLiteral("cold")));
    insert(timing, QStringLiteral("enabled"), jBool(t.enabled));
    insert(timing, QStringLiteral("warmup"), jInteger(t.warmup));
    insert(timing, QStringLiteral("minSamples"), jInteger(t.minSamples));
    insert(timing, QStringLiteral("maxSamples"), jInteger(t.maxSamples));
    insert(timing, QStringLiteral("minSeconds"), jNumber(t.minSeconds));
    insert(timing, QStringLiteral("maxNoise"), jNumber(t.maxNoise));
    insert(timing, QStringLiteral("timeoutSeconds"), jNumber(t.timeoutSeconds));
    insert(timing, QStringLiteral("batch"), jInteger(t.batch));
    appendUnknown(timing, t.unknown);
    insert(top, QStringLiteral("timing"), timing);

    JsonNode throughput = jObject();
    if (!p.throughput.bytes.isEmpty()) {
        insert(throughput, QStringLiteral("bytes"), jString(p.throughput.bytes));
    }
    if (!p.throughput.flops.isEmpty()) {
        insert(throughput, QStringLiteral("flops"), jString(p.throughput.flops));
    }
    insert(top, QStringLiteral("throughput"), throughput);

    insert(top, QStringLiteral("timeout"), jNumber(p.killTimeoutSeconds));
    if (!p.checks.isUndefined()) {
        insert(top, QStringLiteral("checks"), fromJson(p.checks));
    }
    appendUnknown(top, p.unknown);
    return top;
}

Status writeAtomically(const QString &path, const QByteArray &data)
{
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly)) {
        return projectError(QStringLiteral("cannot write '%1': %2").arg(path, f.errorString()));
    }
    if (f.write(data) != data.size() || !f.commit()) {
        return projectError(QStringLiteral("cannot write '%1': %2").arg(path, f.errorString()));
    }
    return Unit{};
}

} // namespace

QString projectFormatName()
{
    return QStringLiteral("kernel-playground-project");
}

Result<Project> parseProject(const QJsonDocument &json, const QString &dir)
{
    return Parser(dir).run(json);
}

Result<Project> parseProject(const QByteArray &json, const QString &dir)
{
    if (json.trimmed().isEmpty()) {
        return projectError(QStringLiteral("not valid JSON: the text is empty"));
    }
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (pe.error != QJsonParseError::NoError) {
        const qsizetype offset = std::clamp<qsizetype>(pe.offset, 0, json.size());
        const QByteArray before = json.left(offset);
        const qsizetype line = before.count('\n') + 1;
        const qsizetype column = offset - (before.lastIndexOf('\n') + 1) + 1;
        return projectError(QStringLiteral("not valid JSON: %1 at line %2, column %3 (offset %4)")
                                .arg(pe.errorString())
                                .arg(line)
                                .arg(column)
                                .arg(offset));
    }
    return parseProject(doc, dir);
}

Result<Project> loadProject(const QString &path)
{
    const QFileInfo fi(path);
    if (!fi.exists()) {
        return projectError(QStringLiteral("%1: no such file").arg(path));
    }
    if (fi.isDir()) {
        return projectError(QStringLiteral("%1: is a folder, not a project file").arg(path));
    }
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        return projectError(QStringLiteral("%1: cannot read: %2").arg(path, f.errorString()));
    }
    Result<Project> r = parseProject(f.readAll(), fi.absolutePath());
    if (!r) {
        Error e = r.error();
        e.message = path + QStringLiteral(": ") + e.message;
        return e;
    }
    r.value().path = fi.absoluteFilePath();
    return r;
}

QByteArray serializeProject(const Project &project)
{
    QString out;
    render(projectNode(project), 0, 0, false, out);
    out += QLatin1Char('\n');
    return out.toUtf8();
}

Status saveProject(const Project &project, const QString &path)
{
    return writeAtomically(path, serializeProject(project));
}

Status saveProjectSource(const Project &project, const QString &projectPath)
{
    if (project.sourceFile.isEmpty()) {
        return Unit{};
    }
    const QString file =
        QDir::cleanPath(QDir(QFileInfo(projectPath).absolutePath()).absoluteFilePath(project.sourceFile));
    const QByteArray data = project.sourceText.toUtf8();
    QFile existing(file);
    if (existing.open(QIODevice::ReadOnly) && existing.readAll() == data) {
        return Unit{};
    }
    existing.close();
    return writeAtomically(file, data);
}

} // namespace Kp
