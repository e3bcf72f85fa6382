#include "checkjson.h"

#include "buffers/bufferspec.h"
#include "project/fieldreader.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QRegularExpression>

#include <limits>
#include <optional>

namespace Kp {

namespace {

const QStringList &knownKeys()
{
    static const QStringList keys{QStringLiteral("name"),      QStringLiteral("buffer"), QStringLiteral("expected"),
                                  QStringLiteral("reference"), QStringLiteral("npy"),    QStringLiteral("permutation"),
                                  QStringLiteral("set"),       QStringLiteral("range"),  QStringLiteral("printed"),
                                  QStringLiteral("tolerance"), QStringLiteral("region"), QStringLiteral("seeds"),
                                  QStringLiteral("nan")};
    return keys;
}

QString namesOrNone(const QStringList &names)
{
    return names.isEmpty() ? QStringLiteral("none") : names.join(QStringLiteral(", "));
}

const char *axisName(int axis)
{
    static const char *names[] = {"x", "y", "z"};
    return names[axis];
}

class CheckParser : private FieldReader
{
public:
    explicit CheckParser(const QList<BufferSpec> &buffers)
        : m_buffers(buffers)
    {
    }

    Result<QList<CheckSpec>> run(const QJsonValue &v, const QString &path)
    {
        QList<CheckSpec> out;
        QJsonArray a;
        if (!array(v, path, &a)) {
            return error();
        }
        for (qsizetype i = 0; i < a.size(); ++i) {
            CheckSpec c;
            if (!parseCheck(a[i], jsonIndexPath(path, i), &c)) {
                return error();
            }
            out << c;
        }
        return out;
    }

private:
    const BufferSpec *findBuffer(const QString &name) const
    {
        for (const BufferSpec &b : m_buffers) {
            if (b.name == name) {
                return &b;
            }
        }
        return nullptr;
    }

    bool bufferName(const QJsonValue &v, const QString &path, QString *out, const BufferSpec **spec)
    {
        if (!nonEmptyString(v, path, QStringLiteral("a buffer's name"), out)) {
            return false;
        }
        *spec = findBuffer(*out);
        if (*spec) {
            return true;
        }
        QStringList names;
        for (const BufferSpec &b : m_buffers) {
            names << b.name;
        }
        return fail(path, QStringLiteral("unknown buffer '%1'; buffers: %2").arg(*out, namesOrNone(names)));
    }

    bool parseCheck(const QJsonValue &v, const QString &path, CheckSpec *c)
    {
        QJsonObject o;
        if (!object(v, path, &o)) {
            return false;
        }
        const auto at = [&](const char *key) { return jsonKeyPath(path, QString::fromLatin1(key)); };
        const auto has = [&](const char *key) { return o.contains(QString::fromLatin1(key)); };
        const auto field = [&](const char *key) { return o.value(QString::fromLatin1(key)); };

        if (has("name") && !nonEmptyString(field("name"), at("name"), QStringLiteral("the check's name"), &c->name)) {
            return false;
        }
        const int kinds = int(has("expected")) + int(has("reference")) + int(has("npy")) + int(has("permutation")) +
                          int(has("set")) + int(has("range")) + int(has("printed"));
        if (kinds != 1) {
            return fail(path, QStringLiteral("expected exactly one of \"expected\" (an expression), \"reference\" (a "
                                             "buffer of the reference run), \"npy\" (a file), \"permutation\" or "
                                             "\"set\" (another buffer), \"range\" ([min, max]) or \"printed\" "
                                             "(device printf output), got %1")
                                  .arg(kinds == 0 ? QStringLiteral("none") : QStringLiteral("%1").arg(kinds)));
        }
        if (has("printed")) {
            // The output of the run, not a buffer: nothing else of a buffer check applies.
            c->kind = CheckSpec::Kind::Printed;
            for (const char *key : {"buffer", "tolerance", "region", "nan"}) {
                if (has(key)) {
                    return fail(at(key), QStringLiteral("a \"printed\" check reads the device printf output, not a "
                                                        "buffer, and takes no \"%1\"")
                                             .arg(QLatin1String(key)));
                }
            }
            if (!parsePrinted(field("printed"), at("printed"), c)) {
                return false;
            }
            if (has("seeds")) {
                qint64 seeds = 1;
                if (!integer(field("seeds"), at("seeds"), 1, kMaxCheckSeeds, &seeds)) {
                    return false;
                }
                c->seeds = int(seeds);
            }
            keepUnknown(o, c);
            return true;
        }
        if (!has("buffer")) {
            return missing(at("buffer"), QStringLiteral("the name of the buffer to check"));
        }
        const BufferSpec *buf = nullptr;
        if (!bufferName(field("buffer"), at("buffer"), &c->buffer, &buf)) {
            return false;
        }
        if (has("permutation") || has("set")) {
            c->kind = has("permutation") ? CheckSpec::Kind::Permutation : CheckSpec::Kind::Set;
            const char *key = has("permutation") ? "permutation" : "set";
            if (!parseOther(field(key), at(key), *buf, c)) {
                return false;
            }
            for (const char *k : {"tolerance", "region"}) {
                if (has(k)) {
                    return fail(at(k), QStringLiteral("a \"%1\" check compares whole buffers exactly and takes no "
                                                      "\"%2\"")
                                           .arg(QLatin1String(key), QLatin1String(k)));
                }
            }
        } else if (has("range")) {
            c->kind = CheckSpec::Kind::Range;
            if (!parseRange(field("range"), at("range"), c)) {
                return false;
            }
            if (has("tolerance")) {
                return fail(at("tolerance"), QStringLiteral("a \"range\" check has its bounds and takes no tolerance: "
                                                            "widen the range instead"));
            }
        } else if (has("expected")) {
            c->kind = CheckSpec::Kind::Expected;
            const QJsonValue e = field("expected");
            if (e.isDouble()) {
                c->expected = numberText(e);
            } else if (!nonEmptyString(e, at("expected"), QStringLiteral("an expression string or a number"),
                                       &c->expected)) {
                return false;
            }
        } else if (has("reference")) {
            c->kind = CheckSpec::Kind::Reference;
            const BufferSpec *ref = nullptr;
            if (!bufferName(field("reference"), at("reference"), &c->reference, &ref)) {
                return false;
            }
            const qint64 n = buf->elementCount() * dtypeInfo(buf->dtype).components;
            const qint64 m = ref->elementCount() * dtypeInfo(ref->dtype).components;
            if (!buf->shape.isEmpty() && !ref->shape.isEmpty() && n != m) {
                return fail(at("reference"),
                            QStringLiteral("buffer '%1' (%2 %3) does not have as many values as '%4' (%5 %6)")
                                .arg(ref->name, dtypeName(ref->dtype), shapeText(ref->shape), buf->name,
                                     dtypeName(buf->dtype), shapeText(buf->shape)));
            }
        } else {
            c->kind = CheckSpec::Kind::Npy;
            if (!nonEmptyString(field("npy"), at("npy"), QStringLiteral("a .npy file name"), &c->npy)) {
                return false;
            }
        }
        const DTypeInfo &info = dtypeInfo(buf->dtype);
        const bool integral = info.kind == ScalarKind::SignedInt || info.kind == ScalarKind::UnsignedInt;
        if (has("tolerance") && !parseTolerance(field("tolerance"), at("tolerance"), integral, *buf, c)) {
            return false;
        }
        if (has("region") && !parseRegion(field("region"), at("region"), *buf, c)) {
            return false;
        }
        if (has("seeds")) {
            qint64 seeds = 1;
            if (!integer(field("seeds"), at("seeds"), 1, kMaxCheckSeeds, &seeds)) {
                return false;
            }
            c->seeds = int(seeds);
        }
        if (has("nan")) {
            if (!boolean(field("nan"), at("nan"), &c->nan)) {
                return false;
            }
            if (integral && c->nan) {
                return fail(
                    at("nan"),
                    QStringLiteral("buffer '%1' is %2; integers have no NaN").arg(buf->name, dtypeName(buf->dtype)));
            }
        }
        keepUnknown(o, c);
        return true;
    }

    static void keepUnknown(const QJsonObject &o, CheckSpec *c)
    {
        for (auto it = o.begin(); it != o.end(); ++it) {
            if (!knownKeys().contains(it.key())) {
                c->unknown.insert(it.key(), it.value());
            }
        }
    }

    // "permutation": "a" (a's initial contents) or {"reference": "a"} / {"initial": "a"}.
    bool parseOther(const QJsonValue &v, const QString &path, const BufferSpec &buf, CheckSpec *c)
    {
        QString otherPath = path;
        QJsonValue name = v;
        if (v.isObject()) {
            const QJsonObject o = v.toObject();
            if (!checkKeys(o, path, {QStringLiteral("initial"), QStringLiteral("reference")})) {
                return false;
            }
            if (o.size() != 1) {
                return fail(path, QStringLiteral("expected one of \"initial\" (a buffer before the run) or "
                                                 "\"reference\" (a buffer after the reference run), got %1")
                                      .arg(o.isEmpty() ? QStringLiteral("none") : QStringLiteral("both")));
            }
            c->otherFromReference = o.contains(QStringLiteral("reference"));
            const QString key = c->otherFromReference ? QStringLiteral("reference") : QStringLiteral("initial");
            otherPath = jsonKeyPath(path, key);
            name = o.value(key);
        } else if (!v.isString()) {
            return typeError(path, QStringLiteral("a buffer's name (its initial contents) or {\"reference\": name}"),
                             v);
        }
        const BufferSpec *other = nullptr;
        if (!bufferName(name, otherPath, &c->other, &other)) {
            return false;
        }
        const qint64 n = buf.elementCount() * dtypeInfo(buf.dtype).components;
        const qint64 m = other->elementCount() * dtypeInfo(other->dtype).components;
        if (c->kind == CheckSpec::Kind::Permutation && !buf.shape.isEmpty() && !other->shape.isEmpty() && n != m) {
            return fail(otherPath, QStringLiteral("buffer '%1' has %2 values and '%3' has %4; a permutation needs as "
                                                  "many")
                                       .arg(other->name)
                                       .arg(m)
                                       .arg(buf.name)
                                       .arg(n));
        }
        return true;
    }

    // "range": [min, max], either may be null (unbounded) but not both.
    bool parseRange(const QJsonValue &v, const QString &path, CheckSpec *c)
    {
        if (!v.isArray() || v.toArray().size() != 2) {
            return typeError(path, QStringLiteral("[min, max] (numbers, inclusive; null for no bound)"), v);
        }
        const QJsonArray a = v.toArray();
        std::optional<double> bounds[2];
        for (int i = 0; i < 2; ++i) {
            if (a[i].isNull()) {
                continue;
            }
            double x = 0;
            if (!number(a[i], jsonIndexPath(path, i), &x)) {
                return false;
            }
            bounds[i] = x;
        }
        if (!bounds[0] && !bounds[1]) {
            return fail(path, QStringLiteral("[null, null] bounds nothing; give min, max or both"));
        }
        if (bounds[0] && bounds[1] && *bounds[0] > *bounds[1]) {
            return fail(path, QStringLiteral("min %1 is greater than max %2").arg(numberText(a[0]), numberText(a[1])));
        }
        c->rangeMin = bounds[0];
        c->rangeMax = bounds[1];
        return true;
    }

    // "printed": {"matches": "regex"} or {"equals": "text"}.
    bool parsePrinted(const QJsonValue &v, const QString &path, CheckSpec *c)
    {
        QJsonObject o;
        if (!object(v, path, &o) || !checkKeys(o, path, {QStringLiteral("matches"), QStringLiteral("equals")})) {
            return false;
        }
        if (o.size() != 1) {
            return fail(path, QStringLiteral("expected one of \"matches\" (a regular expression searched in the "
                                             "output) or \"equals\" (the whole output), got %1")
                                  .arg(o.isEmpty() ? QStringLiteral("none") : QStringLiteral("both")));
        }
        c->printedIsPattern = o.contains(QStringLiteral("matches"));
        const QString key = c->printedIsPattern ? QStringLiteral("matches") : QStringLiteral("equals");
        if (!string(o.value(key), jsonKeyPath(path, key), &c->printed)) {
            return false;
        }
        if (c->printedIsPattern) {
            const QRegularExpression re(c->printed);
            if (!re.isValid()) {
                return fail(jsonKeyPath(path, key), QStringLiteral("'%1' is not a valid regular expression: %2 at "
                                                                   "offset %3")
                                                        .arg(c->printed, re.errorString())
                                                        .arg(re.patternErrorOffset()));
            }
        }
        return true;
    }

    bool parseTolerance(const QJsonValue &v, const QString &path, bool integral, const BufferSpec &buf, CheckSpec *c)
    {
        QJsonObject o;
        // Strict keys: a misspelt "ulps" must not silently leave a check stricter or looser than meant.
        if (!object(v, path, &o) ||
            !checkKeys(o, path, {QStringLiteral("abs"), QStringLiteral("rel"), QStringLiteral("ulp")})) {
            return false;
        }
        if (integral && o.contains(QStringLiteral("ulp"))) {
            return fail(jsonKeyPath(path, QStringLiteral("ulp")),
                        QStringLiteral("buffer '%1' is %2; units in the last place are for floating point: give an "
                                       "integer check \"abs\" (and \"rel\")")
                            .arg(buf.name, dtypeName(buf.dtype)));
        }
        CheckTolerance t;
        const QString absKey = QStringLiteral("abs");
        const QString relKey = QStringLiteral("rel");
        const QString ulpKey = QStringLiteral("ulp");
        if (o.contains(absKey) && !numberAtLeast(o.value(absKey), jsonKeyPath(path, absKey), 0, true, &t.abs)) {
            return false;
        }
        if (o.contains(relKey) && !numberAtLeast(o.value(relKey), jsonKeyPath(path, relKey), 0, true, &t.rel)) {
            return false;
        }
        if (o.contains(ulpKey) &&
            !integer(o.value(ulpKey), jsonKeyPath(path, ulpKey), 0, std::numeric_limits<qint64>::max() / 2, &t.ulp)) {
            return false;
        }
        c->tolerance = t;
        return true;
    }

    bool parseCorner(const QJsonValue &v, const QString &path, int axes, QList<qint64> *out)
    {
        const QString expected = axes > 0 ? QStringLiteral("%1 integer%2 [x%3]")
                                                .arg(axes)
                                                .arg(axes == 1 ? "" : "s")
                                                .arg(axes == 1   ? QString()
                                                     : axes == 2 ? QStringLiteral(", y")
                                                                 : QStringLiteral(", y, z"))
                                          : QStringLiteral("1 to 3 integers [x, y, z]");
        QJsonArray a;
        if (!v.isArray()) {
            return typeError(path, expected, v);
        }
        a = v.toArray();
        if ((axes > 0 && a.size() != axes) || a.isEmpty() || a.size() > 3) {
            return fail(path,
                        QStringLiteral("expected %1 (one per axis of the buffer), got %2").arg(expected, shownJson(v)));
        }
        out->clear();
        for (qsizetype i = 0; i < a.size(); ++i) {
            qint64 x = 0;
            if (!integer(a[i], jsonIndexPath(path, i), 0, std::numeric_limits<qint64>::max(), &x)) {
                return false;
            }
            *out << x;
        }
        return true;
    }

    bool parseRegion(const QJsonValue &v, const QString &path, const BufferSpec &buf, CheckSpec *c)
    {
        QJsonObject o;
        if (!object(v, path, &o) || !checkKeys(o, path, {QStringLiteral("begin"), QStringLiteral("end")})) {
            return false;
        }
        const int axes = int(buf.shape.size()); // 0: the shape comes from a file
        CheckRegion r;
        for (const char *key : {"begin", "end"}) {
            const QString k = QString::fromLatin1(key);
            if (!o.contains(k)) {
                return missing(jsonKeyPath(path, k), QStringLiteral("[x, y, z] coordinates (as many as the buffer has "
                                                                    "axes)"));
            }
            if (!parseCorner(o.value(k), jsonKeyPath(path, k), axes, k == QLatin1String("begin") ? &r.begin : &r.end)) {
                return false;
            }
        }
        if (r.begin.size() != r.end.size()) {
            return fail(jsonKeyPath(path, QStringLiteral("end")),
                        QStringLiteral("has %1 items but begin has %2").arg(r.end.size()).arg(r.begin.size()));
        }
        if (Status s = checkRegionFits(r, buf.shape, path); !s) {
            return adopt(s.error());
        }
        c->region = r;
        return true;
    }

    const QList<BufferSpec> &m_buffers;

public:
    /** The region lies inside shape (skipped while the shape is unknown). */
    static Status checkRegionFits(const CheckRegion &r, const QList<qint64> &shape, const QString &path)
    {
        if (shape.isEmpty()) {
            return Unit{};
        }
        const int axes = int(shape.size());
        if (r.begin.size() != axes) {
            return projectError(QStringLiteral("%1.begin: the buffer has %2 ax%3 (shape %4), so the region needs %2 "
                                               "coordinate%5, got %6")
                                    .arg(path)
                                    .arg(axes)
                                    .arg(axes == 1 ? "is" : "es")
                                    .arg(shapeText(shape))
                                    .arg(axes == 1 ? "" : "s")
                                    .arg(r.begin.size()),
                                jsonKeyPath(path, QStringLiteral("begin")));
        }
        for (int a = 0; a < axes; ++a) {
            const qint64 extent = shape[axes - 1 - a]; // x is the last axis of the shape
            const QString endPath = jsonIndexPath(jsonKeyPath(path, QStringLiteral("end")), a);
            if (r.end[a] > extent) {
                return projectError(QStringLiteral("%1: %2 is past the buffer's %3 extent %4 (shape %5; end is "
                                                   "exclusive)")
                                        .arg(endPath)
                                        .arg(r.end[a])
                                        .arg(QLatin1String(axisName(a)))
                                        .arg(extent)
                                        .arg(shapeText(shape)),
                                    endPath);
            }
            if (r.end[a] <= r.begin[a]) {
                return projectError(QStringLiteral("%1: must be greater than begin[%2] (%3), got %4; the region is "
                                                   "begin inclusive, end exclusive")
                                        .arg(endPath)
                                        .arg(a)
                                        .arg(r.begin[a])
                                        .arg(r.end[a]),
                                    endPath);
            }
        }
        return Unit{};
    }
};

} // namespace

Status checkRegionInside(const CheckRegion &region, const QList<qint64> &shape, const QString &path)
{
    return CheckParser::checkRegionFits(region, shape, path);
}

Result<QList<CheckSpec>> checksFromJson(const QJsonValue &json, const QList<BufferSpec> &buffers, const QString &path)
{
    return CheckParser(buffers).run(json, path);
}

JsonNode checkSpecNode(const CheckSpec &c)
{
    JsonNode o = jsonObject();
    if (!c.name.isEmpty()) {
        o.insert(QStringLiteral("name"), jsonString(c.name));
    }
    if (c.kind != CheckSpec::Kind::Printed) {
        o.insert(QStringLiteral("buffer"), jsonString(c.buffer));
    }
    switch (c.kind) {
    case CheckSpec::Kind::Expected: o.insert(QStringLiteral("expected"), jsonString(c.expected)); break;
    case CheckSpec::Kind::Reference: o.insert(QStringLiteral("reference"), jsonString(c.reference)); break;
    case CheckSpec::Kind::Npy: o.insert(QStringLiteral("npy"), jsonString(c.npy)); break;
    case CheckSpec::Kind::Permutation:
    case CheckSpec::Kind::Set: {
        JsonNode other = jsonString(c.other);
        if (c.otherFromReference) {
            other = jsonObject();
            other.insert(QStringLiteral("reference"), jsonString(c.other));
        }
        o.insert(CheckSpec::kindName(c.kind), other);
        break;
    }
    case CheckSpec::Kind::Range: {
        JsonNode r = jsonArray();
        r.append(c.rangeMin ? jsonNumber(*c.rangeMin) : jsonNodeFrom(QJsonValue(QJsonValue::Null)));
        r.append(c.rangeMax ? jsonNumber(*c.rangeMax) : jsonNodeFrom(QJsonValue(QJsonValue::Null)));
        o.insert(QStringLiteral("range"), r);
        break;
    }
    case CheckSpec::Kind::Printed: {
        JsonNode p = jsonObject();
        p.insert(c.printedIsPattern ? QStringLiteral("matches") : QStringLiteral("equals"), jsonString(c.printed));
        o.insert(QStringLiteral("printed"), p);
        break;
    }
    }
    if (c.tolerance) {
        JsonNode t = jsonObject();
        if (c.tolerance->abs != 0) {
            t.insert(QStringLiteral("abs"), jsonNumber(c.tolerance->abs));
        }
        if (c.tolerance->rel != 0) {
            t.insert(QStringLiteral("rel"), jsonNumber(c.tolerance->rel));
        }
        if (c.tolerance->ulp != 0) {
            t.insert(QStringLiteral("ulp"), jsonInteger(c.tolerance->ulp));
        }
        o.insert(QStringLiteral("tolerance"), t);
    }
    if (c.region) {
        JsonNode r = jsonObject();
        for (const auto &[key, list] :
             {std::pair{QStringLiteral("begin"), &c.region->begin}, std::pair{QStringLiteral("end"), &c.region->end}}) {
            JsonNode a = jsonArray();
            for (qint64 x : *list) {
                a.append(jsonInteger(x));
            }
            r.insert(key, a);
        }
        o.insert(QStringLiteral("region"), r);
    }
    if (c.seeds != 1) {
        o.insert(QStringLiteral("seeds"), jsonInteger(c.seeds));
    }
    if (c.nan) {
        o.insert(QStringLiteral("nan"), jsonBool(true));
    }
    o.appendUnknown(c.unknown);
    return o;
}

} // namespace Kp
