#include "check/checkjson.h"
#include "compile/compiler.h"
#include "core/safefile.h"
#include "projectio.h"

#include "project/bufferjson.h"
#include "project/fieldreader.h"
#include "project/orderedjson.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>

#include <algorithm>

namespace Kp {

namespace {

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

JsonNode dimsNode(const QStringList &dims, qint64 min)
{
    JsonNode a = jsonArray();
    for (const QString &d : dims) {
        a.append(isPlainInteger(d, min) ? jsonNumberText(d) : jsonString(d));
    }
    return a;
}

JsonNode bindingNode(const ArgBinding &b)
{
    switch (b.kind) {
    case ArgBinding::Kind::Buffer:
        return jsonString(b.offset == 0 ? b.name : QStringLiteral("%1+%2").arg(b.name).arg(b.offset));
    case ArgBinding::Kind::Scalar: return jsonString(b.name);
    case ArgBinding::Kind::Texture: return jsonNodeFrom(b.texture.toJson());
    case ArgBinding::Kind::Literal:
        if (b.null) {
            return jsonNodeFrom(QJsonValue(QJsonValue::Null));
        }
        if (b.isAggregate()) {
            if (!b.text.isEmpty()) {
                return jsonString(b.text);
            }
            JsonNode a = jsonArray();
            for (double x : b.values) {
                a.append(jsonNumber(x));
            }
            return a;
        }
        if (!b.expression.isEmpty()) {
            JsonNode o = jsonObject();
            o.insert(QStringLiteral("value"), jsonString(b.expression));
            return o;
        }
        return jsonNumber(b.value);
    }
    return JsonNode{};
}

JsonNode countNode(const QString &text)
{
    static const QRegularExpression re(QStringLiteral("^(0|[1-9][0-9]{0,15})$"));
    return re.match(text).hasMatch() ? jsonNumberText(text) : jsonString(text);
}

JsonNode stepNode(const LaunchStep &l)
{
    JsonNode o = jsonObject();
    static const char *kinds[] = {"kernel", "copy", "memset", "record", "wait", "chunks"};
    // A kernel step is written as it always was; the other kinds name themselves.
    if (l.kind != LaunchStep::Kind::Kernel) {
        o.insert(QStringLiteral("kind"), jsonString(QString::fromLatin1(kinds[int(l.kind)])));
    }
    switch (l.kind) {
    case LaunchStep::Kind::Kernel: {
        o.insert(QStringLiteral("kernel"), jsonString(l.kernel));
        o.insert(QStringLiteral("grid"), dimsNode(l.grid, 1));
        o.insert(QStringLiteral("block"), dimsNode(l.block, 1));
        o.insert(QStringLiteral("sharedBytes"),
                 isPlainInteger(l.sharedBytes, 0) ? jsonNumberText(l.sharedBytes) : jsonString(l.sharedBytes));
        if (l.cooperative) {
            o.insert(QStringLiteral("cooperative"), jsonBool(true));
        }
        // By name only when every binding has a name; a mix cannot be written as either form.
        const bool byName = !l.args.isEmpty() && std::all_of(l.args.begin(), l.args.end(),
                                                             [](const ArgBinding &b) { return !b.param.isEmpty(); });
        JsonNode args = byName ? jsonObject() : jsonArray();
        for (const ArgBinding &b : l.args) {
            if (byName) {
                args.insert(b.param, bindingNode(b));
            } else {
                args.append(bindingNode(b));
            }
        }
        o.insert(QStringLiteral("args"), args);
        break;
    }
    case LaunchStep::Kind::Copy:
    case LaunchStep::Kind::Memset:
        o.insert(QStringLiteral("buffer"), jsonString(l.buffer));
        if (l.kind == LaunchStep::Kind::Copy) {
            o.insert(QStringLiteral("to"), jsonString(l.toDevice ? QStringLiteral("device") : QStringLiteral("host")));
        } else {
            o.insert(QStringLiteral("value"), jsonInteger(l.memsetValue));
        }
        if (!l.offset.isEmpty()) {
            o.insert(QStringLiteral("offset"), countNode(l.offset));
        }
        if (!l.count.isEmpty()) {
            o.insert(QStringLiteral("count"), countNode(l.count));
        }
        break;
    case LaunchStep::Kind::Record: o.insert(QStringLiteral("event"), jsonString(l.event)); break;
    case LaunchStep::Kind::Wait: break;
    case LaunchStep::Kind::Chunks: {
        o.insert(QStringLiteral("count"), countNode(l.chunkCount));
        if (!l.chunkStreams.isEmpty()) {
            o.insert(QStringLiteral("streams"), countNode(l.chunkStreams));
        }
        o.insert(QStringLiteral("elements"), countNode(l.elements));
        if (!l.groupName.isEmpty()) {
            o.insert(QStringLiteral("name"), jsonString(l.groupName));
        }
        JsonNode inner = jsonArray();
        for (const LaunchStep &s : l.steps) {
            inner.append(stepNode(s));
        }
        o.insert(QStringLiteral("steps"), inner);
        break;
    }
    }
    if (!l.stream.isEmpty()) {
        o.insert(QStringLiteral("stream"), jsonString(l.stream));
    }
    if (!l.waitFor.isEmpty()) {
        o.insert(QStringLiteral("waitFor"), jsonStrings(l.waitFor));
    }
    o.appendUnknown(l.unknown);
    return o;
}

JsonNode launchesNode(const QList<LaunchStep> &steps)
{
    JsonNode launches = jsonArray();
    for (const LaunchStep &l : steps) {
        launches.append(stepNode(l));
    }
    return launches;
}

JsonNode projectNode(const Project &p)
{
    JsonNode top = jsonObject();
    top.insert(QStringLiteral("format"), jsonString(projectFormatName()));
    top.insert(QStringLiteral("version"), jsonInteger(Project::kVersion));
    top.insert(QStringLiteral("title"), jsonString(p.title));
    top.insert(QStringLiteral("description"), jsonLines(p.description));
    if (p.sourceFile.isEmpty()) {
        JsonNode s = jsonObject();
        s.insert(QStringLiteral("inline"), jsonLines(p.sourceText));
        top.insert(QStringLiteral("source"), s);
    } else {
        top.insert(QStringLiteral("source"), jsonString(p.sourceFile));
    }

    const CompileOptions &c = p.compile;
    JsonNode compile = jsonObject();
    compile.insert(QStringLiteral("arch"), jsonString(c.arch));
    compile.insert(QStringLiteral("opt"), jsonInteger(c.optLevel));
    compile.insert(QStringLiteral("fastMath"), jsonBool(c.fastMath));
    compile.insert(QStringLiteral("lineInfo"), jsonBool(c.lineInfo));
    compile.insert(QStringLiteral("debug"), jsonBool(c.debug));
    compile.insert(QStringLiteral("std"), jsonString(c.std));
    compile.insert(QStringLiteral("defines"), jsonStrings(c.defines));
    compile.insert(QStringLiteral("includeDirs"), jsonStrings(c.includeDirs));
    compile.insert(QStringLiteral("extra"), jsonStrings(c.extra));
    top.insert(QStringLiteral("compile"), compile);

    JsonNode scalars = jsonArray();
    for (const ScalarSpec &s : p.scalars) {
        scalars.append(scalarSpecNode(s));
    }
    top.insert(QStringLiteral("scalars"), scalars);

    JsonNode buffers = jsonArray();
    for (const BufferSpec &b : p.buffers) {
        buffers.append(bufferSpecNode(b));
    }
    top.insert(QStringLiteral("buffers"), buffers);

    top.insert(QStringLiteral("launches"), launchesNode(p.launches));
    // Written only when used, so a project without streams saves as it always did.
    if (!p.streams.isEmpty()) {
        JsonNode streams = jsonArray();
        for (const StreamSpec &st : p.streams) {
            JsonNode so = jsonObject();
            so.insert(QStringLiteral("name"), jsonString(st.name));
            so.insert(QStringLiteral("priority"), jsonInteger(st.priority));
            so.appendUnknown(st.unknown);
            streams.append(so);
        }
        top.insert(QStringLiteral("streams"), streams);
    }
    if (p.graph) {
        top.insert(QStringLiteral("graph"), jsonBool(true));
    }

    JsonNode repeat = jsonObject();
    repeat.insert(QStringLiteral("count"), jsonInteger(p.repeat.count));
    JsonNode swaps = jsonArray();
    for (const auto &s : p.repeat.swaps) {
        swaps.append(jsonStrings({s.first, s.second}));
    }
    repeat.insert(QStringLiteral("swap"), swaps);
    top.insert(QStringLiteral("repeat"), repeat);

    const TimingSpec &t = p.timing;
    JsonNode timing = jsonObject();
    timing.insert(QStringLiteral("mode"),
                  jsonString(t.mode == TimingSpec::Mode::Hot ? QStringLiteral("hot") : QStringLiteral("cold")));
    timing.insert(QStringLiteral("enabled"), jsonBool(t.enabled));
    timing.insert(QStringLiteral("warmup"), jsonInteger(t.warmup));
    timing.insert(QStringLiteral("minSamples"), jsonInteger(t.minSamples));
    timing.insert(QStringLiteral("maxSamples"), jsonInteger(t.maxSamples));
    timing.insert(QStringLiteral("minSeconds"), jsonNumber(t.minSeconds));
    timing.insert(QStringLiteral("maxNoise"), jsonNumber(t.maxNoise));
    timing.insert(QStringLiteral("timeoutSeconds"), jsonNumber(t.timeoutSeconds));
    timing.insert(QStringLiteral("batch"), jsonInteger(t.batch));
    if (!t.resetBeforeEachSample.isEmpty()) {
        timing.insert(QStringLiteral("resetBeforeEachSample"), jsonStrings(t.resetBeforeEachSample));
    }
    timing.appendUnknown(t.unknown);
    top.insert(QStringLiteral("timing"), timing);

    JsonNode throughput = jsonObject();
    if (!p.throughput.bytes.isEmpty()) {
        throughput.insert(QStringLiteral("bytes"), jsonString(p.throughput.bytes));
    }
    if (!p.throughput.flops.isEmpty()) {
        throughput.insert(QStringLiteral("flops"), jsonString(p.throughput.flops));
    }
    top.insert(QStringLiteral("throughput"), throughput);

    top.insert(QStringLiteral("timeout"), jsonNumber(p.killTimeoutSeconds));
    if (p.reference) {
        JsonNode r = jsonObject();
        if (!p.reference->sourceFile.isEmpty()) {
            r.insert(QStringLiteral("source"), jsonString(p.reference->sourceFile));
        }
        if (p.reference->launches) {
            r.insert(QStringLiteral("launches"), launchesNode(*p.reference->launches));
        }
        r.appendUnknown(p.reference->unknown);
        top.insert(QStringLiteral("reference"), r);
    }
    if (!p.checks.isEmpty()) {
        JsonNode checks = jsonArray();
        for (const CheckSpec &c : p.checks) {
            checks.append(checkSpecNode(c));
        }
        top.insert(QStringLiteral("checks"), checks);
    }
    if (p.grading) {
        JsonNode g = jsonObject();
        if (p.grading->minSpeedup > 0) {
            g.insert(QStringLiteral("speedup"), jsonNumber(p.grading->minSpeedup));
        }
        top.insert(QStringLiteral("grading"), g);
    }
    if (p.sweep) {
        JsonNode sw = jsonObject();
        JsonNode axes = jsonArray();
        for (const QString &a : p.sweep->axes) {
            axes.append(jsonString(a));
        }
        sw.insert(QStringLiteral("axes"), axes);
        sw.insert(QStringLiteral("zip"), jsonBool(p.sweep->zip));
        top.insert(QStringLiteral("sweep"), sw);
    }
    top.appendUnknown(p.unknown);
    return top;
}

Status writeAtomically(const QString &path, const QByteArray &data)
{
    // core/safefile: atomic for a regular file; a device or FIFO is written into, never replaced.
    const Status s = writeOutput(path, data, QStringLiteral("the project"));
    if (!s) {
        const QString prefix = QStringLiteral("cannot write %1: ").arg(path);
        const QString reason =
            s.error().message.startsWith(prefix) ? s.error().message.mid(prefix.size()) : s.error().message;
        return projectError(QStringLiteral("cannot write '%1': %2").arg(path, reason));
    }
    return Unit{};
}

} // namespace

QByteArray serializeProject(const Project &project)
{
    return renderJson(projectNode(project));
}

QJsonValue argBindingJson(const ArgBinding &binding)
{
    return toJsonValue(bindingNode(binding));
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
    // Compared only when it is a regular file: "source": "/dev/zero" must not be read without end.
    const Result<QByteArray> existing =
        readRegularFile(file, Compiler::kMaxSourceBytes, QStringLiteral("a source file"));
    if (existing && *existing == data) {
        return Unit{};
    }
    return writeAtomically(file, data);
}

} // namespace Kp
