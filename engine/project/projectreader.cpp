#include "check/checkjson.h"
#include "compile/compiler.h"
#include "core/safefile.h"
#include "projectio.h"
#include "sweep/sweep.h"

#include "kernel/structlayout.h"
#include "project/bufferjson.h"
#include "project/fieldreader.h"
#include "project/orderedjson.h"
#include "project/stepgraph.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonParseError>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace Kp {

namespace {

QString namesOrNone(const QStringList &names)
{
    return names.isEmpty() ? QStringLiteral("none") : names.join(QStringLiteral(", "));
}

// Each function returns false after fail() stored the message; the first
// error ends the parse.

class Parser : private FieldReader
{
public:
    explicit Parser(QString dir, PathScope scope = PathScope::Anywhere)
        : m_dir(std::move(dir))
        , m_scope(scope)
    {
    }

    Result<Project> run(const QJsonDocument &doc);

private:
    bool parseHeader(const QJsonObject &top);
    bool parseSource(const QJsonValue &v);
    bool parseCompile(const QJsonValue &v);
    bool parseDefines(const QJsonValue &v, const QString &path, QStringList *out);
    bool parseScalars(const QJsonValue &v);
    bool parseBuffers(const QJsonValue &v);
    bool parseLaunches(const QJsonValue &v, const QString &path, QList<LaunchStep> *out);
    bool parseStep(const QJsonValue &v, const QString &path, bool inChunks, LaunchStep *out);
    /** What every kind of step has: its kind, its stream and the events it waits for. */
    bool parseStepCommon(const QJsonObject &o, const QString &path, bool inChunks, LaunchStep &l);
    /** The keys a step of one kind allows: those, and the common ones. */
    bool stepKeys(const QJsonObject &o, const QString &path, QStringList allowed);
    /** A copy's or memset's "offset" and "count". */
    bool stepRange(const QJsonObject &o, const QString &path, LaunchStep &l);
    /** A copy's or memset's "buffer", which must be a buffer of the project. */
    bool stepBuffer(const QJsonObject &o, const QString &path, LaunchStep &l);
    bool parseKernelStep(const QJsonObject &o, const QString &path, LaunchStep &l);
    bool parseCopyStep(const QJsonObject &o, const QString &path, LaunchStep &l);
    bool parseMemsetStep(const QJsonObject &o, const QString &path, LaunchStep &l);
    bool parseChunkStep(const QJsonObject &o, const QString &path, LaunchStep &l);
    bool nonNegativeOrExpression(const QJsonValue &v, const QString &path, QString *out);
    bool parseStreams(const QJsonValue &v);
    bool checkStepGraph();
    bool parseReference(const QJsonValue &v);
    bool parseGrading(const QJsonValue &v);
    bool parseChecks(const QJsonValue &v);
    bool parseDims(const QJsonValue &v, const QString &path, QStringList *out);
    bool parseSharedBytes(const QJsonValue &v, const QString &path, QString *out);
    bool parseArgs(const QJsonValue &v, const QString &path, QList<ArgBinding> *out);
    bool parseBinding(const QJsonValue &v, const QString &path, ArgBinding *out);
    bool parseTexture(const QJsonObject &o, const QString &path, ArgBinding *out);
    bool bufferName(const QString &name, const QString &path, const BufferSpec **out);
    bool scalarName(const QString &name, const QString &path);
    bool checkOffset(const BufferSpec &b, qint64 offset, const QString &path);
    bool parseRepeat(const QJsonValue &v);
    bool parseTiming(const QJsonValue &v);
    bool parseThroughput(const QJsonValue &v);
    bool parseSweep(const QJsonValue &v);
    bool expressionOrNumber(const QJsonValue &v, const QString &path, QString *out);
    bool readSource();
    bool readSourceFile(const QString &name, const QString &path, QString *out);

    QString unknownName(const QString &name) const;

    QString m_dir;
    PathScope m_scope;
    Project m_p;
    QHash<QString, qsizetype> m_scalarIndex;
    QHash<QString, qsizetype> m_bufferIndex;
};

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
        return projectError(QStringLiteral("expected a JSON object at the top level, got %1").arg(jsonTypeName(what)));
    }
    const QJsonObject top = doc.object();
    const bool ok =
        parseHeader(top) && parseSource(top.value(QStringLiteral("source"))) &&
        parseCompile(top.value(QStringLiteral("compile"))) && parseScalars(top.value(QStringLiteral("scalars"))) &&
        parseBuffers(top.value(QStringLiteral("buffers"))) && parseStreams(top.value(QStringLiteral("streams"))) &&
        parseLaunches(top.value(QStringLiteral("launches")), QStringLiteral("launches"), &m_p.launches) &&
        parseRepeat(top.value(QStringLiteral("repeat"))) && parseTiming(top.value(QStringLiteral("timing"))) &&
        parseThroughput(top.value(QStringLiteral("throughput"))) && checkStepGraph();
    if (!ok) {
        return error();
    }
    const QJsonValue graph = top.value(QStringLiteral("graph"));
    if (!graph.isUndefined() && !boolean(graph, QStringLiteral("graph"), &m_p.graph)) {
        return error();
    }
    const QJsonValue timeout = top.value(QStringLiteral("timeout"));
    if (!timeout.isUndefined() &&
        !numberAtLeast(timeout, QStringLiteral("timeout"), 0, false, &m_p.killTimeoutSeconds)) {
        return error();
    }
    if (!parseReference(top.value(QStringLiteral("reference"))) || !parseChecks(top.value(QStringLiteral("checks"))) ||
        !parseGrading(top.value(QStringLiteral("grading"))) || !parseSweep(top.value(QStringLiteral("sweep")))) {
        return error();
    }
    static const QStringList known{
        QStringLiteral("format"),      QStringLiteral("version"),   QStringLiteral("title"),
        QStringLiteral("description"), QStringLiteral("source"),    QStringLiteral("compile"),
        QStringLiteral("scalars"),     QStringLiteral("buffers"),   QStringLiteral("launches"),
        QStringLiteral("repeat"),      QStringLiteral("timing"),    QStringLiteral("throughput"),
        QStringLiteral("timeout"),     QStringLiteral("reference"), QStringLiteral("checks"),
        QStringLiteral("grading"),     QStringLiteral("streams"),   QStringLiteral("graph"),
        QStringLiteral("sweep")};
    for (auto it = top.begin(); it != top.end(); ++it) {
        if (!known.contains(it.key())) {
            m_p.unknown.insert(it.key(), it.value());
        }
    }
    // Last, so that a broken project reports what is wrong in it before a missing file.
    if (!readSource()) {
        return error();
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
        return missing(jsonKeyPath(path, QStringLiteral("inline")),
                       QStringLiteral("the kernel source (a string or an array of lines)"));
    }
    return lines(text, jsonKeyPath(path, QStringLiteral("inline")), &m_p.sourceText);
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
            return fail(jsonKeyPath(path, QStringLiteral("arch")),
                        QStringLiteral("expected \"auto\", \"sm_XX\" or \"compute_XX\", got %1").arg(shownChoice(a)));
        }
        c.arch = a.toString();
    }
    if (o.contains(QStringLiteral("opt"))) {
        qint64 opt = 0;
        if (!integer(o.value(QStringLiteral("opt")), jsonKeyPath(path, QStringLiteral("opt")), 0, 3, &opt)) {
            return false;
        }
        c.optLevel = static_cast<int>(opt);
    }
    const auto flag = [&](const char *name, bool *out) {
        const QString k = QString::fromLatin1(name);
        return !o.contains(k) || boolean(o.value(k), jsonKeyPath(path, k), out);
    };
    if (!flag("fastMath", &c.fastMath) || !flag("lineInfo", &c.lineInfo) || !flag("debug", &c.debug)) {
        return false;
    }
    if (o.contains(QStringLiteral("std"))) {
        static const QRegularExpression re(QStringLiteral("^c\\+\\+[0-9][0-9]$"));
        const QJsonValue s = o.value(QStringLiteral("std"));
        if (!s.isString() || !re.match(s.toString()).hasMatch()) {
            return fail(jsonKeyPath(path, QStringLiteral("std")),
                        QStringLiteral("expected \"c++NN\" (c++11, c++14, c++17, c++20), got %1").arg(shownChoice(s)));
        }
        c.std = s.toString();
    }
    if (o.contains(QStringLiteral("defines")) &&
        !parseDefines(o.value(QStringLiteral("defines")), jsonKeyPath(path, QStringLiteral("defines")), &c.defines)) {
        return false;
    }
    if (o.contains(QStringLiteral("includeDirs")) &&
        !strings(o.value(QStringLiteral("includeDirs")), jsonKeyPath(path, QStringLiteral("includeDirs")),
                 &c.includeDirs)) {
        return false;
    }
    return !o.contains(QStringLiteral("extra")) ||
           strings(o.value(QStringLiteral("extra")), jsonKeyPath(path, QStringLiteral("extra")), &c.extra);
}

bool Parser::parseDefines(const QJsonValue &v, const QString &path, QStringList *out)
{
    out->clear();
    if (v.isObject()) {
        const QJsonObject o = v.toObject();
        for (auto it = o.begin(); it != o.end(); ++it) {
            const QString p = jsonKeyPath(path, it.key());
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
        const QString p = jsonIndexPath(path, i);
        QString d;
        if (!string(a[i], p, &d)) {
            return false;
        }
        const QString macro = d.section(QLatin1Char('='), 0, 0);
        if (!isIdentifier(macro)) {
            return fail(p, QStringLiteral("expected \"NAME\" or \"NAME=VALUE\" with NAME a C identifier, got %1")
                               .arg(shownJson(a[i])));
        }
        if (seen.contains(macro)) {
            return fail(
                p, QStringLiteral("'%1' is already defined by %2").arg(macro, jsonIndexPath(path, seen.value(macro))));
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
    for (qsizetype i = 0; i < a.size(); ++i) {
        const QString p = jsonIndexPath(path, i);
        QJsonObject o;
        QString n;
        // The name first: a scalar defined twice is reported before what else is wrong in it.
        if (!object(a[i], p, &o) ||
            !name(o.value(QStringLiteral("name")), jsonKeyPath(p, QStringLiteral("name")), &n)) {
            return false;
        }
        if (m_scalarIndex.contains(n)) {
            return fail(
                jsonKeyPath(p, QStringLiteral("name")),
                QStringLiteral("'%1' is already defined by %2").arg(n, jsonIndexPath(path, m_scalarIndex.value(n))));
        }
        Result<ScalarSpec> s = scalarSpecFromJson(a[i], p);
        if (!s) {
            return adopt(s.error());
        }
        m_scalarIndex.insert(n, i);
        m_p.scalars << *s;
    }
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
    for (qsizetype i = 0; i < a.size(); ++i) {
        const QString p = jsonIndexPath(path, i);
        const QString np = jsonKeyPath(p, QStringLiteral("name"));
        QJsonObject o;
        QString n;
        // The name first: a clash with another name is reported before what else is wrong in the buffer.
        if (!object(a[i], p, &o) || !name(o.value(QStringLiteral("name")), np, &n)) {
            return false;
        }
        if (m_scalarIndex.contains(n)) {
            return fail(np, QStringLiteral("'%1' is already a scalar").arg(n));
        }
        if (m_bufferIndex.contains(n)) {
            return fail(
                np,
                QStringLiteral("'%1' is already defined by %2").arg(n, jsonIndexPath(path, m_bufferIndex.value(n))));
        }
        Result<BufferSpec> b = bufferSpecFromJson(a[i], p);
        if (!b) {
            return adopt(b.error());
        }
        m_bufferIndex.insert(n, i);
        m_p.buffers << *b;
    }
    return true;
}

bool Parser::parseLaunches(const QJsonValue &v, const QString &path, QList<LaunchStep> *out)
{
    if (v.isUndefined()) {
        return true;
    }
    QJsonArray a;
    if (!array(v, path, &a)) {
        return false;
    }
    for (qsizetype i = 0; i < a.size(); ++i) {
        LaunchStep l;
        if (!parseStep(a[i], jsonIndexPath(path, i), false, &l)) {
            return false;
        }
        *out << l;
    }
    return true;
}

bool Parser::parseStep(const QJsonValue &v, const QString &p, bool inChunks, LaunchStep *out)
{
    QJsonObject o;
    if (!object(v, p, &o)) {
        return false;
    }
    LaunchStep l;
    if (!parseStepCommon(o, p, inChunks, l)) {
        return false;
    }
    bool ok = true;
    switch (l.kind) {
    case LaunchStep::Kind::Kernel: ok = parseKernelStep(o, p, l); break;
    case LaunchStep::Kind::Copy: ok = parseCopyStep(o, p, l); break;
    case LaunchStep::Kind::Memset: ok = parseMemsetStep(o, p, l); break;
    case LaunchStep::Kind::Record: {
        const QString ep = jsonKeyPath(p, QStringLiteral("event"));
        if (!stepKeys(o, p, {QStringLiteral("event")})) {
            return false;
        }
        if (!o.contains(QStringLiteral("event"))) {
            return missing(ep, QStringLiteral("the event's name"));
        }
        ok = name(o.value(QStringLiteral("event")), ep, &l.event);
        break;
    }
    case LaunchStep::Kind::Wait:
        if (!stepKeys(o, p, {})) {
            return false;
        }
        if (l.waitFor.isEmpty()) {
            return missing(jsonKeyPath(p, QStringLiteral("waitFor")),
                           QStringLiteral("the events to wait for (a name or an array)"));
        }
        break;
    case LaunchStep::Kind::Chunks: ok = parseChunkStep(o, p, l); break;
    }
    if (!ok) {
        return false;
    }
    *out = l;
    return true;
}

bool Parser::parseStepCommon(const QJsonObject &o, const QString &p, bool inChunks, LaunchStep &l)
{
    const QString kindKey = QStringLiteral("kind");
    if (o.contains(kindKey)) {
        static const QStringList kinds{QStringLiteral("kernel"), QStringLiteral("copy"), QStringLiteral("memset"),
                                       QStringLiteral("record"), QStringLiteral("wait"), QStringLiteral("chunks")};
        const QJsonValue k = o.value(kindKey);
        const qsizetype at = k.isString() ? kinds.indexOf(k.toString()) : -1;
        if (at < 0) {
            return fail(jsonKeyPath(p, kindKey),
                        QStringLiteral("expected \"kernel\", \"copy\", \"memset\", \"record\", \"wait\" or \"chunks\", "
                                       "got %1")
                            .arg(shownChoice(k)));
        }
        l.kind = static_cast<LaunchStep::Kind>(at);
    }
    if (l.kind == LaunchStep::Kind::Chunks && inChunks) {
        return fail(jsonKeyPath(p, kindKey), QStringLiteral("a chunks group cannot hold another chunks group"));
    }
    const QString streamKey = QStringLiteral("stream");
    if (o.contains(streamKey)) {
        if (l.kind == LaunchStep::Kind::Chunks) {
            return fail(jsonKeyPath(p, streamKey),
                        QStringLiteral("a chunks group runs chunk i on stream NAME.(i % streams); give \"streams\" "
                                       "(a count) and \"name\" instead, or a stream to each of its steps"));
        }
        if (!name(o.value(streamKey), jsonKeyPath(p, streamKey), &l.stream)) {
            return false;
        }
    }
    const QString waitKey = QStringLiteral("waitFor");
    if (o.contains(waitKey)) {
        const QJsonValue w = o.value(waitKey);
        const QString wp = jsonKeyPath(p, waitKey);
        if (w.isString()) {
            l.waitFor << QString();
            if (!name(w, wp, &l.waitFor.first())) {
                return false;
            }
        } else {
            QJsonArray items;
            if (!array(w, wp, &items)) {
                return false;
            }
            for (qsizetype k = 0; k < items.size(); ++k) {
                QString e;
                if (!name(items[k], jsonIndexPath(wp, k), &e)) {
                    return false;
                }
                l.waitFor << e;
            }
        }
    }
    return true;
}

bool Parser::stepKeys(const QJsonObject &o, const QString &p, QStringList allowed)
{
    allowed << QStringLiteral("kind") << QStringLiteral("stream") << QStringLiteral("waitFor");
    return checkKeys(o, p, allowed);
}

bool Parser::stepRange(const QJsonObject &o, const QString &p, LaunchStep &l)
{
    for (const char *key : {"offset", "count"}) {
        const QString k = QString::fromLatin1(key);
        if (o.contains(k) && !nonNegativeOrExpression(o.value(k), jsonKeyPath(p, k),
                                                      k == QLatin1String("offset") ? &l.offset : &l.count)) {
            return false;
        }
    }
    return true;
}

bool Parser::stepBuffer(const QJsonObject &o, const QString &p, LaunchStep &l)
{
    const QString bp = jsonKeyPath(p, QStringLiteral("buffer"));
    const QJsonValue b = o.value(QStringLiteral("buffer"));
    if (b.isUndefined()) {
        return missing(bp, QStringLiteral("the name of a buffer"));
    }
    const BufferSpec *buf = nullptr;
    return string(b, bp, &l.buffer) && bufferName(l.buffer, bp, &buf);
}

bool Parser::parseKernelStep(const QJsonObject &o, const QString &p, LaunchStep &l)
{
    if (!nonEmptyString(o.value(QStringLiteral("kernel")), jsonKeyPath(p, QStringLiteral("kernel")),
                        QStringLiteral("the kernel's name"), &l.kernel)) {
        return false;
    }
    for (const char *dim : {"grid", "block"}) {
        const QString k = QString::fromLatin1(dim);
        const QJsonValue dv = o.value(k);
        if (dv.isUndefined()) {
            return missing(jsonKeyPath(p, k),
                           QStringLiteral("1 to 3 items, each a positive integer or an expression string"));
        }
        if (!parseDims(dv, jsonKeyPath(p, k), k == QLatin1String("grid") ? &l.grid : &l.block)) {
            return false;
        }
    }
    const QJsonValue shared = o.value(QStringLiteral("sharedBytes"));
    if (!shared.isUndefined() &&
        !parseSharedBytes(shared, jsonKeyPath(p, QStringLiteral("sharedBytes")), &l.sharedBytes)) {
        return false;
    }
    const QJsonValue args = o.value(QStringLiteral("args"));
    if (!args.isUndefined() && !parseArgs(args, jsonKeyPath(p, QStringLiteral("args")), &l.args)) {
        return false;
    }
    const QJsonValue coop = o.value(QStringLiteral("cooperative"));
    if (!coop.isUndefined() && !boolean(coop, jsonKeyPath(p, QStringLiteral("cooperative")), &l.cooperative)) {
        return false;
    }
    // A kernel step keeps keys this version does not know, as it always did.
    static const QStringList known{QStringLiteral("kernel"), QStringLiteral("cooperative"), QStringLiteral("grid"),
                                   QStringLiteral("block"),  QStringLiteral("sharedBytes"), QStringLiteral("args"),
                                   QStringLiteral("kind"),   QStringLiteral("stream"),      QStringLiteral("waitFor")};
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (!known.contains(it.key())) {
            l.unknown.insert(it.key(), it.value());
        }
    }
    return true;
}

bool Parser::parseCopyStep(const QJsonObject &o, const QString &p, LaunchStep &l)
{
    if (!stepKeys(
            o, p,
            {QStringLiteral("buffer"), QStringLiteral("to"), QStringLiteral("offset"), QStringLiteral("count")}) ||
        !stepBuffer(o, p, l) || !stepRange(o, p, l)) {
        return false;
    }
    const QJsonValue to = o.value(QStringLiteral("to"));
    const QString tp = jsonKeyPath(p, QStringLiteral("to"));
    if (to.isUndefined()) {
        return missing(tp, QStringLiteral("\"device\" (host to device) or \"host\" (device to host)"));
    }
    if (to.toString() != QLatin1String("device") && to.toString() != QLatin1String("host")) {
        return fail(tp, QStringLiteral("expected \"device\" (host to device) or \"host\" (device to host), got %1")
                            .arg(shownChoice(to)));
    }
    l.toDevice = to.toString() == QLatin1String("device");
    return true;
}

bool Parser::parseMemsetStep(const QJsonObject &o, const QString &p, LaunchStep &l)
{
    if (!stepKeys(
            o, p,
            {QStringLiteral("buffer"), QStringLiteral("value"), QStringLiteral("offset"), QStringLiteral("count")}) ||
        !stepBuffer(o, p, l) || !stepRange(o, p, l)) {
        return false;
    }
    if (o.contains(QStringLiteral("value"))) {
        qint64 byte = 0;
        if (!integer(o.value(QStringLiteral("value")), jsonKeyPath(p, QStringLiteral("value")), 0, 255, &byte)) {
            return false;
        }
        l.memsetValue = int(byte);
    }
    return true;
}

bool Parser::parseChunkStep(const QJsonObject &o, const QString &p, LaunchStep &l)
{
    if (!stepKeys(o, p,
                  {QStringLiteral("count"), QStringLiteral("streams"), QStringLiteral("elements"),
                   QStringLiteral("name"), QStringLiteral("steps")})) {
        return false;
    }
    for (const char *key : {"count", "elements"}) {
        const QString k = QString::fromLatin1(key);
        if (!o.contains(k)) {
            return missing(jsonKeyPath(p, k), k == QLatin1String("count")
                                                  ? QStringLiteral("how many chunks (a number or an expression)")
                                                  : QStringLiteral("how many elements the chunks split (a "
                                                                   "number or an expression, e.g. \"n\")"));
        }
    }
    if (!nonNegativeOrExpression(o.value(QStringLiteral("count")), jsonKeyPath(p, QStringLiteral("count")),
                                 &l.chunkCount) ||
        !nonNegativeOrExpression(o.value(QStringLiteral("elements")), jsonKeyPath(p, QStringLiteral("elements")),
                                 &l.elements)) {
        return false;
    }
    if (o.contains(QStringLiteral("streams")) &&
        !nonNegativeOrExpression(o.value(QStringLiteral("streams")), jsonKeyPath(p, QStringLiteral("streams")),
                                 &l.chunkStreams)) {
        return false;
    }
    if (o.contains(QStringLiteral("name")) &&
        !name(o.value(QStringLiteral("name")), jsonKeyPath(p, QStringLiteral("name")), &l.groupName)) {
        return false;
    }
    const QString sp = jsonKeyPath(p, QStringLiteral("steps"));
    QJsonArray inner;
    if (!o.contains(QStringLiteral("steps"))) {
        return missing(sp, QStringLiteral("the steps run for every chunk"));
    }
    if (!array(o.value(QStringLiteral("steps")), sp, &inner)) {
        return false;
    }
    for (qsizetype k = 0; k < inner.size(); ++k) {
        LaunchStep s;
        if (!parseStep(inner[k], jsonIndexPath(sp, k), true, &s)) {
            return false;
        }
        l.steps << s;
    }
    return true;
}

bool Parser::nonNegativeOrExpression(const QJsonValue &v, const QString &path, QString *out)
{
    if (v.isDouble()) {
        const double d = v.toDouble();
        if (std::floor(d) != d || d < 0 || d > 9007199254740992.0) {
            return fail(
                path,
                QStringLiteral("expected a non-negative integer or an expression string, got %1").arg(numberText(v)));
        }
        *out = QString::number(qint64(d));
        return true;
    }
    if (v.isString() && !v.toString().trimmed().isEmpty()) {
        *out = v.toString();
        return true;
    }
    return typeError(path, QStringLiteral("a non-negative integer or an expression string"), v);
}

bool Parser::parseStreams(const QJsonValue &v)
{
    const QString path = QStringLiteral("streams");
    if (v.isUndefined()) {
        return true;
    }
    QJsonArray a;
    if (!array(v, path, &a)) {
        return false;
    }
    for (qsizetype i = 0; i < a.size(); ++i) {
        const QString p = jsonIndexPath(path, i);
        QJsonObject o;
        StreamSpec s;
        const QString np = jsonKeyPath(p, QStringLiteral("name"));
        if (!object(a[i], p, &o) || !name(o.value(QStringLiteral("name")), np, &s.name)) {
            return false;
        }
        if (s.name == QLatin1String("default") || s.name == QLatin1String("legacy")) {
            return fail(np, QStringLiteral("'%1' is built in; steps use it without declaring it").arg(s.name));
        }
        for (const StreamSpec &other : m_p.streams) {
            if (other.name == s.name) {
                return fail(np, QStringLiteral("stream '%1' is declared twice").arg(s.name));
            }
        }
        if (o.contains(QStringLiteral("priority"))) {
            qint64 prio = 0;
            if (!integer(o.value(QStringLiteral("priority")), jsonKeyPath(p, QStringLiteral("priority")), -1000, 1000,
                         &prio)) {
                return false;
            }
            s.priority = int(prio);
        }
        for (auto it = o.begin(); it != o.end(); ++it) {
            if (it.key() != QLatin1String("name") && it.key() != QLatin1String("priority")) {
                s.unknown.insert(it.key(), it.value());
            }
        }
        m_p.streams << s;
    }
    return true;
}

bool Parser::checkStepGraph()
{
    QStringList known = declaredStreams(m_p);
    for (const LaunchStep &s : m_p.launches) {
        if (s.kind == LaunchStep::Kind::Chunks) {
            known << chunkStreamName(s.groupName, 0, 1);
        }
    }
    const Result<StepGraph> g = validateStepGraph(loadTimeGraph(m_p), known);
    return g ? true : adopt(g.error());
}

bool Parser::parseReference(const QJsonValue &v)
{
    const QString path = QStringLiteral("reference");
    if (v.isUndefined()) {
        return true;
    }
    QJsonObject o;
    if (!object(v, path, &o)) {
        return false;
    }
    ReferenceSpec r;
    const QString sourceKey = QStringLiteral("source");
    const QString launchesKey = QStringLiteral("launches");
    if (o.contains(sourceKey) &&
        !nonEmptyString(o.value(sourceKey), jsonKeyPath(path, sourceKey),
                        QStringLiteral("a kernel file beside the project (\"reference.cu\")"), &r.sourceFile)) {
        return false;
    }
    if (o.contains(launchesKey)) {
        QList<LaunchStep> launches;
        if (!parseLaunches(o.value(launchesKey), jsonKeyPath(path, launchesKey), &launches)) {
            return false;
        }
        r.launches = launches;
    }
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (it.key() != sourceKey && it.key() != launchesKey) {
            r.unknown.insert(it.key(), it.value());
        }
    }
    m_p.reference = r;
    return true;
}

bool Parser::parseGrading(const QJsonValue &v)
{
    const QString path = QStringLiteral("grading");
    if (v.isUndefined()) {
        return true;
    }
    QJsonObject o;
    const QString speedupKey = QStringLiteral("speedup");
    if (!object(v, path, &o) || !checkKeys(o, path, {speedupKey})) {
        return false;
    }
    GradingSpec g;
    if (o.contains(speedupKey)) {
        const QString at = jsonKeyPath(path, speedupKey);
        if (!numberAtLeast(o.value(speedupKey), at, 0, false, &g.minSpeedup)) {
            return false;
        }
        // The ratio is taken against the reference kernel; the project's own
        // source is the students' starter, so timing against it says nothing.
        if (!m_p.reference || m_p.reference->sourceFile.isEmpty()) {
            return fail(at, QStringLiteral("a speed target needs a reference kernel to compare with: add "
                                           "\"reference\": {\"source\": \"reference.cu\"}"));
        }
    }
    m_p.grading = g;
    return true;
}

bool Parser::parseSweep(const QJsonValue &v)
{
    const QString path = QStringLiteral("sweep");
    if (v.isUndefined()) {
        return true;
    }
    QJsonObject o;
    const QString axesKey = QStringLiteral("axes");
    const QString zipKey = QStringLiteral("zip");
    if (!object(v, path, &o) || !checkKeys(o, path, {axesKey, zipKey})) {
        return false;
    }
    SweepSpec spec;
    QJsonArray axes;
    const QString axesPath = jsonKeyPath(path, axesKey);
    if (!o.contains(axesKey)) {
        return fail(axesPath, QStringLiteral("missing: a sweep needs its axes, e.g. [\"block.x=32:1024:pow2\"]"));
    }
    if (!array(o.value(axesKey), axesPath, &axes)) {
        return false;
    }
    // Each axis is expanded to validate it; a bounded count keeps a shared
    // project's load bounded too (at most kMaxSweepAxes times kMaxSweepAxisValues values).
    if (axes.size() > kMaxSweepAxes) {
        return fail(axesPath, QStringLiteral("%1 axes; a sweep has at most %2").arg(axes.size()).arg(kMaxSweepAxes));
    }
    for (qsizetype i = 0; i < axes.size(); ++i) {
        const QString at = QStringLiteral("%1[%2]").arg(axesPath).arg(i);
        QString axis;
        if (!nonEmptyString(axes[i], at, QStringLiteral("an axis such as \"block.x=32:1024:pow2\""), &axis)) {
            return false;
        }
        // The same words as kpg sweep --axis, so a project's axes mean what the option does.
        const Result<SweepAxis> parsed = parseSweepAxis(axis);
        if (!parsed) {
            // "--axis block.q: ..." in the command's words; here the field names it.
            QString message = parsed.error().message;
            if (message.startsWith(QLatin1String("--axis "))) {
                message.remove(0, 7);
            }
            return fail(at, message);
        }
        spec.axes << axis;
    }
    if (o.contains(zipKey) && !boolean(o.value(zipKey), jsonKeyPath(path, zipKey), &spec.zip)) {
        return false;
    }
    m_p.sweep = spec;
    return true;
}

bool Parser::parseChecks(const QJsonValue &v)
{
    // null: what earlier versions wrote for a project without checks (every
    // project the GUI made from a bare .cu); it still opens, with none.
    if (v.isUndefined() || v.isNull()) {
        return true;
    }
    Result<QList<CheckSpec>> checks = checksFromJson(v, m_p.buffers, QStringLiteral("checks"));
    if (!checks) {
        return adopt(checks.error());
    }
    m_p.checks = std::move(checks).value();
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
                        .arg(shownJson(v)));
    }
    out->clear();
    for (qsizetype i = 0; i < items.size(); ++i) {
        const QJsonValue item = items[i];
        const QString p = v.isArray() ? jsonIndexPath(path, i) : path;
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
            return fail(p, expected.arg(kMaxLaunchDim).arg(jsonTypeName(item)));
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
    return fail(path, expected.arg(kMaxLaunchDim).arg(jsonTypeName(v)));
}

bool Parser::parseArgs(const QJsonValue &v, const QString &path, QList<ArgBinding> *out)
{
    out->clear();
    if (v.isArray()) {
        const QJsonArray a = v.toArray();
        for (qsizetype i = 0; i < a.size(); ++i) {
            ArgBinding b;
            if (!parseBinding(a[i], jsonIndexPath(path, i), &b)) {
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
            const QString p = jsonKeyPath(path, it.key());
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
    if (v.isNull()) {
        b.kind = ArgBinding::Kind::Literal;
        b.null = true;
        *out = b;
        return true;
    }
    if (v.isArray()) {
        // [1, 2] or [1.5, [2, 3]]: a vector or struct value, flattened in order.
        std::function<bool(const QJsonValue &, const QString &, int)> flatten;
        flatten = [&](const QJsonValue &x, const QString &p, int depth) -> bool {
            if (depth > 16) {
                return fail(p, QStringLiteral("arrays nested more than 16 deep"));
            }
            if (x.isArray()) {
                const QJsonArray a = x.toArray();
                for (qsizetype i = 0; i < a.size(); ++i) {
                    if (!flatten(a[i], jsonIndexPath(p, i), depth + 1)) {
                        return false;
                    }
                }
                return true;
            }
            if (x.isBool() || x.isNull()) {
                b.values << (x.toBool() ? 1 : 0);
                return true;
            }
            double d = 0;
            if (!number(x, p, &d)) {
                return false;
            }
            b.values << d;
            return true;
        };
        if (!flatten(v, path, 0)) {
            return false;
        }
        if (b.values.isEmpty()) {
            return fail(path, QStringLiteral("an empty array is no value; a vector or struct needs one number per "
                                             "member, e.g. [1, 2] for a float2"));
        }
        b.kind = ArgBinding::Kind::Literal;
        *out = b;
        return true;
    }
    if (v.isString() && (v.toString().contains(QLatin1Char('{')) || v.toString().contains(QLatin1Char('}')))) {
        // "float2 {1, 2}": checked against the parameter's type when the project runs.
        Result<QList<double>> parsed = parseBracedValues(v.toString(), QString(), path);
        if (!parsed) {
            return fail(path, parsed.error().message.section(QStringLiteral(": "), 1));
        }
        b.kind = ArgBinding::Kind::Literal;
        b.values = *parsed;
        b.text = v.toString().trimmed();
        *out = b;
        return true;
    }
    if (v.isString() &&
        (v.toString().trimmed() == QLatin1String("NULL") || v.toString().trimmed() == QLatin1String("nullptr")) &&
        !m_bufferIndex.contains(v.toString().trimmed()) && !m_scalarIndex.contains(v.toString().trimmed())) {
        b.kind = ArgBinding::Kind::Literal;
        b.null = true;
        *out = b;
        return true;
    }
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
            return fail(path, QStringLiteral("expected a buffer or scalar name, \"buffer+offset\", a number, null, a "
                                             "braced value (\"float2 {1, 2}\") or an object, got %1")
                                  .arg(shownJson(v)));
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
    if (o.contains(QStringLiteral("texture")) || o.contains(QStringLiteral("surface"))) {
        return parseTexture(o, path, out);
    }
    if (!checkKeys(o, path,
                   {QStringLiteral("buffer"), QStringLiteral("offset"), QStringLiteral("scalar"),
                    QStringLiteral("value"), QStringLiteral("texture"), QStringLiteral("surface")})) {
        return false;
    }
    const int kinds = int(o.contains(QStringLiteral("buffer"))) + int(o.contains(QStringLiteral("scalar"))) +
                      int(o.contains(QStringLiteral("value")));
    if (kinds != 1) {
        return fail(
            path,
            QStringLiteral("expected exactly one of \"buffer\", \"scalar\" or \"value\", got %1").arg(shownJson(v)));
    }
    if (o.contains(QStringLiteral("offset")) && !o.contains(QStringLiteral("buffer"))) {
        return fail(jsonKeyPath(path, QStringLiteral("offset")), QStringLiteral("only allowed with \"buffer\""));
    }
    if (o.contains(QStringLiteral("buffer"))) {
        const QString bp = jsonKeyPath(path, QStringLiteral("buffer"));
        const BufferSpec *buf = nullptr;
        if (!string(o.value(QStringLiteral("buffer")), bp, &b.name) || !bufferName(b.name, bp, &buf)) {
            return false;
        }
        b.kind = ArgBinding::Kind::Buffer;
        if (o.contains(QStringLiteral("offset"))) {
            const QString op = jsonKeyPath(path, QStringLiteral("offset"));
            if (!integer(o.value(QStringLiteral("offset")), op, 0, std::numeric_limits<qint64>::max(), &b.offset) ||
                !checkOffset(*buf, b.offset, op)) {
                return false;
            }
        }
    } else if (o.contains(QStringLiteral("scalar"))) {
        const QString sp = jsonKeyPath(path, QStringLiteral("scalar"));
        if (!string(o.value(QStringLiteral("scalar")), sp, &b.name) || !scalarName(b.name, sp)) {
            return false;
        }
        b.kind = ArgBinding::Kind::Scalar;
    } else {
        const QJsonValue val = o.value(QStringLiteral("value"));
        if (val.isBool()) {
            b.value = val.toBool() ? 1 : 0;
        } else if (val.isString() && !val.toString().trimmed().isEmpty()) {
            b.expression = val.toString(); // evaluated when the project runs, like grid expressions
        } else if (!number(val, jsonKeyPath(path, QStringLiteral("value")), &b.value)) {
            return false;
        }
        b.kind = ArgBinding::Kind::Literal;
    }
    *out = b;
    return true;
}

bool Parser::parseTexture(const QJsonObject &o, const QString &path, ArgBinding *out)
{
    // {"texture": "img", ...} or {"surface": "img"}: an object the worker makes over a buffer (docs/buffers.md).
    const Result<TextureSpec> spec = TextureSpec::fromJson(o, path);
    if (!spec) {
        return adopt(spec.error());
    }
    const QString key = spec->isSurface() ? QStringLiteral("surface") : QStringLiteral("texture");
    const BufferSpec *buf = nullptr;
    if (!bufferName(spec->buffer, jsonKeyPath(path, key), &buf)) {
        return false;
    }
    if (Result<TextureFormat> f = textureFormatFor(buf->dtype, jsonKeyPath(path, key)); !f) {
        return fail(
            jsonKeyPath(path, key),
            QStringLiteral("buffer '%1': %2").arg(buf->name, f.error().message.section(QStringLiteral(": "), 1, -1)));
    }
    if (!buf->shape.isEmpty()) {
        // The shape from a file is checked when the project runs.
        if (Result<TextureDescriptors> d = buildTextureDescriptors(*spec, buf->dtype, buf->shape, path); !d) {
            return adopt(d.error());
        }
    }
    if (!buf->symbol.isEmpty()) {
        return fail(jsonKeyPath(path, key),
                    QStringLiteral("buffer '%1' is the device variable '%2'; a texture or surface is made over an "
                                   "ordinary buffer")
                        .arg(buf->name, buf->symbol));
    }
    ArgBinding b;
    b.kind = ArgBinding::Kind::Texture;
    b.name = spec->buffer;
    b.texture = *spec;
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
        !intField(o.value(QStringLiteral("count")), jsonKeyPath(path, QStringLiteral("count")), 1, &m_p.repeat.count)) {
        return false;
    }
    if (!o.contains(QStringLiteral("swap"))) {
        return true;
    }
    const QString sp = jsonKeyPath(path, QStringLiteral("swap"));
    const QJsonValue sv = o.value(QStringLiteral("swap"));
    if (!sv.isArray()) {
        return typeError(sp, QStringLiteral("an array of buffer name pairs"), sv);
    }
    const QJsonArray swaps = sv.toArray();
    for (qsizetype i = 0; i < swaps.size(); ++i) {
        const QString p = jsonIndexPath(sp, i);
        const QJsonArray pair = swaps[i].toArray();
        if (!swaps[i].isArray() || pair.size() != 2 || !pair[0].isString() || !pair[1].isString()) {
            return fail(p, QStringLiteral("expected a pair of buffer names, got %1").arg(shownJson(swaps[i])));
        }
        const BufferSpec *a = nullptr;
        const BufferSpec *b = nullptr;
        if (!bufferName(pair[0].toString(), jsonIndexPath(p, 0), &a) ||
            !bufferName(pair[1].toString(), jsonIndexPath(p, 1), &b)) {
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
    static const QStringList known{QStringLiteral("mode"),       QStringLiteral("enabled"),
                                   QStringLiteral("warmup"),     QStringLiteral("minSamples"),
                                   QStringLiteral("maxSamples"), QStringLiteral("minSeconds"),
                                   QStringLiteral("maxNoise"),   QStringLiteral("timeoutSeconds"),
                                   QStringLiteral("batch"),      QStringLiteral("resetBeforeEachSample")};
    if (o.contains(QStringLiteral("mode"))) {
        const QJsonValue m = o.value(QStringLiteral("mode"));
        if (m.toString() == QLatin1String("cold")) {
            t.mode = TimingSpec::Mode::Cold;
        } else if (m.toString() == QLatin1String("hot")) {
            t.mode = TimingSpec::Mode::Hot;
        } else {
            return fail(jsonKeyPath(path, QStringLiteral("mode")),
                        QStringLiteral("expected \"cold\" or \"hot\", got %1").arg(shownChoice(m)));
        }
    }
    const auto field = [&](const char *name) { return o.value(QString::fromLatin1(name)); };
    const auto has = [&](const char *name) { return o.contains(QString::fromLatin1(name)); };
    const auto at = [&](const char *name) { return jsonKeyPath(path, QString::fromLatin1(name)); };
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
    if (has("resetBeforeEachSample")) {
        const QString rp = at("resetBeforeEachSample");
        if (!strings(field("resetBeforeEachSample"), rp, &t.resetBeforeEachSample)) {
            return false;
        }
        for (qsizetype i = 0; i < t.resetBeforeEachSample.size(); ++i) {
            const BufferSpec *b = nullptr;
            if (!bufferName(t.resetBeforeEachSample[i], jsonIndexPath(rp, i), &b)) {
                return false;
            }
            if (b->init.kind == BufferInit::Kind::Uninitialized) {
                return fail(jsonIndexPath(rp, i),
                            QStringLiteral("buffer '%1' is uninitialized: it has no contents to restore").arg(b->name));
            }
        }
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
            expressionOrNumber(o.value(QStringLiteral("bytes")), jsonKeyPath(path, QStringLiteral("bytes")),
                               &m_p.throughput.bytes)) &&
           (!o.contains(QStringLiteral("flops")) ||
            expressionOrNumber(o.value(QStringLiteral("flops")), jsonKeyPath(path, QStringLiteral("flops")),
                               &m_p.throughput.flops));
}

bool Parser::readSource()
{
    if (m_dir.isEmpty()) {
        return true;
    }
    if (!m_p.sourceFile.isEmpty() && !readSourceFile(m_p.sourceFile, QStringLiteral("source"), &m_p.sourceText)) {
        return false;
    }
    return !m_p.reference || m_p.reference->sourceFile.isEmpty() ||
           readSourceFile(m_p.reference->sourceFile, QStringLiteral("reference.source"), &m_p.reference->sourceText);
}

bool Parser::readSourceFile(const QString &name, const QString &path, QString *out)
{
    if (m_scope == PathScope::ProjectFolder) {
        // Refused before anything of the file is read.
        if (const QString why = outsideFolder(name, m_dir); !why.isEmpty()) {
            return fail(path, why);
        }
    }
    const QString file = QDir::cleanPath(QDir(m_dir).absoluteFilePath(name));
    // "source": "/dev/zero" must not read without end, nor a FIFO block.
    Result<std::unique_ptr<QFile>> f =
        openRegularFile(file, Compiler::kMaxSourceBytes, QStringLiteral("a source file"));
    if (!f) {
        return fail(path, QStringLiteral("cannot read '%1': %2").arg(file, f.error().message));
    }
    const QByteArray bytes = (*f)->read(Compiler::kMaxSourceBytes + 1);
    if (bytes.size() > Compiler::kMaxSourceBytes) {
        return fail(path, QStringLiteral("cannot read '%1': it grew past %2 bytes while being read")
                              .arg(file)
                              .arg(Compiler::kMaxSourceBytes));
    }
    *out = QString::fromUtf8(bytes);
    return true;
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

namespace {
Result<Project> parseBytes(const QByteArray &json, const QString &dir, PathScope scope);
} // namespace

Result<Project> parseProject(const QByteArray &json, const QString &dir)
{
    return parseBytes(json, dir, PathScope::Anywhere);
}

namespace {

Result<Project> parseBytes(const QByteArray &json, const QString &dir, PathScope scope)
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
    return Parser(dir, scope).run(doc);
}

} // namespace

Result<Project> loadProject(const QString &path)
{
    return loadProject(path, PathScope::Anywhere);
}

Result<Project> loadProject(const QString &path, PathScope scope)
{
    const QFileInfo fi(path);
    if (!fi.exists()) {
        return projectError(QStringLiteral("%1: no such file").arg(path));
    }
    if (fi.isDir()) {
        return projectError(QStringLiteral("%1: is a folder, not a project file").arg(path));
    }
    Result<std::unique_ptr<QFile>> f = openRegularFile(path, kMaxProjectFileBytes, QStringLiteral("a project file"));
    if (!f) {
        return projectError(QStringLiteral("%1: cannot read: %2").arg(path, f.error().message));
    }
    const QByteArray bytes = (*f)->read(kMaxProjectFileBytes + 1);
    if (bytes.size() > kMaxProjectFileBytes) {
        return projectError(QStringLiteral("%1: cannot read: it grew past %2 bytes while being read")
                                .arg(path)
                                .arg(kMaxProjectFileBytes));
    }
    Result<Project> r = parseBytes(bytes, fi.absolutePath(), scope);
    if (r && scope == PathScope::ProjectFolder) {
        r.value().path = fi.absoluteFilePath();
        if (Status s = confineProjectPaths(*r); !s) {
            r = s.error();
        }
    }
    if (!r) {
        Error e = r.error();
        e.message = path + QStringLiteral(": ") + e.message;
        return e;
    }
    r.value().path = fi.absoluteFilePath();
    return r;
}

} // namespace Kp
