#include "launchedits.h"

#include "buffers/dtype.h"

#include <QJsonArray>

#include <functional>

namespace Kp::LaunchEdits {

namespace {

bool isIntegerType(DType t)
{
    const ScalarKind k = dtypeInfo(t).kind;
    return dtypeInfo(t).components == 1 && (k == ScalarKind::SignedInt || k == ScalarKind::UnsignedInt);
}

bool nameTaken(const QJsonObject &o, const QString &name)
{
    for (const QString &list : {QStringLiteral("buffers"), QStringLiteral("scalars")}) {
        for (const QJsonValue &v : o.value(list).toArray()) {
            if (v.toObject().value(QStringLiteral("name")).toString() == name) {
                return true;
            }
        }
    }
    return false;
}
/** What the Launch panel says when a new step cannot be made yet. */
Error refused(const QString &why)
{
    return Error{QStringLiteral("launch"), Error::Code::BadInput, {}, why};
}

} // namespace

QJsonValue numberOrText(const QString &text)
{
    bool ok = false;
    const double v = text.trimmed().toDouble(&ok);
    return ok ? QJsonValue(v) : QJsonValue(text.trimmed());
}

bool canCreateFor(const KernelParam &p)
{
    if (p.category == KernelParam::Category::Pointer) {
        return true;
    }
    const auto type = dtypeForCudaType(p.baseType);
    return (p.category == KernelParam::Category::Scalar || p.category == KernelParam::Category::Half) && type &&
           dtypeInfo(*type).components == 1;
}

/** The step's bindings from its JSON args (array by position, or object by name) keyed by parameter name. */
QMap<QString, QJsonValue> bindings(const QJsonValue &args, const KernelInfo &kernel)
{
    QMap<QString, QJsonValue> out;
    if (args.isObject()) {
        const QJsonObject o = args.toObject();
        for (auto it = o.begin(); it != o.end(); ++it) {
            out.insert(it.key(), it.value());
        }
        return out;
    }
    const QJsonArray a = args.toArray();
    for (qsizetype i = 0; i < a.size() && i < kernel.params.size(); ++i) {
        if (!kernel.params[i].name.isEmpty()) {
            out.insert(kernel.params[i].name, a[i]);
        }
    }
    return out;
}

QJsonValue args(const KernelInfo &kernel, const QMap<QString, QJsonValue> &bound, bool byName)
{
    bool complete = true;
    for (const KernelParam &p : kernel.params) {
        complete = complete && !p.name.isEmpty() && bound.contains(p.name);
    }
    if (complete && !byName) {
        QJsonArray a;
        for (const KernelParam &p : kernel.params) {
            a.append(bound.value(p.name));
        }
        return a;
    }
    QJsonObject o;
    for (const KernelParam &p : kernel.params) {
        if (!p.name.isEmpty() && bound.contains(p.name)) {
            o.insert(p.name, bound.value(p.name));
        }
    }
    return o;
}

QJsonObject defaultStep(const KernelInfo &kernel, const Project &project)
{
    // The size the kernel covers: an integer parameter (n, count, width), else
    // the element count of the first pointer's buffer, named after it.
    QString size;
    for (const KernelParam &p : kernel.params) {
        const auto t = dtypeForCudaType(p.baseType);
        if (p.category == KernelParam::Category::Scalar && t && isIntegerType(*t) && !p.name.isEmpty()) {
            size = p.name;
            break;
        }
    }
    if (size.isEmpty()) {
        for (const KernelParam &p : kernel.params) {
            if (p.category == KernelParam::Category::Pointer && !p.name.isEmpty()) {
                size = p.name + QStringLiteral(".n");
                break;
            }
        }
    }
    const QJsonArray grid =
        size.isEmpty() ? QJsonArray{1} : QJsonArray{QStringLiteral("ceil_div(%1, block.x)").arg(size)};
    QJsonObject step{{QStringLiteral("kernel"), kernel.name},
                     {QStringLiteral("block"), QJsonArray{256}},
                     {QStringLiteral("grid"), grid}};
    QJsonObject args;
    for (const KernelParam &p : kernel.params) {
        const bool pointer = p.category == KernelParam::Category::Pointer;
        if (!p.name.isEmpty() && (pointer ? project.buffer(p.name) != nullptr : project.scalar(p.name) != nullptr)) {
            args.insert(p.name, p.name);
        }
    }
    if (!args.isEmpty()) {
        step.insert(QStringLiteral("args"), args);
    }
    return step;
}

Result<QJsonObject> defaultOtherStep(const QString &kind, const Project &project)
{
    const bool copy = kind.startsWith(QLatin1String("copy"));
    if (copy || kind == QLatin1String("memset")) {
        if (project.buffers.isEmpty()) {
            return refused(QStringLiteral("No buffer to %1 yet: add one in the Buffers panel first.")
                               .arg(copy ? QStringLiteral("copy") : QStringLiteral("set")));
        }
        // A copy back to the host most likely fetches what a kernel wrote: the last buffer.
        const QString buffer =
            kind == QLatin1String("copy-to-host") ? project.buffers.last().name : project.buffers.first().name;
        if (copy) {
            return QJsonObject{{QStringLiteral("kind"), QStringLiteral("copy")},
                               {QStringLiteral("buffer"), buffer},
                               {QStringLiteral("to"), kind == QLatin1String("copy-to-device")
                                                          ? QStringLiteral("device")
                                                          : QStringLiteral("host")}};
        }
        return QJsonObject{{QStringLiteral("kind"), QStringLiteral("memset")},
                           {QStringLiteral("buffer"), buffer},
                           {QStringLiteral("value"), 0}};
    }
    QStringList recorded;
    const std::function<void(const QList<LaunchStep> &)> collect = [&](const QList<LaunchStep> &steps) {
        for (const LaunchStep &s : steps) {
            if (s.kind == LaunchStep::Kind::Record && !recorded.contains(s.event)) {
                recorded << s.event;
            }
            collect(s.steps);
        }
    };
    collect(project.launches);
    if (kind == QLatin1String("record")) {
        QString name;
        for (int i = 1; name.isEmpty() || recorded.contains(name); ++i) {
            name = QStringLiteral("event%1").arg(i);
        }
        return QJsonObject{{QStringLiteral("kind"), QStringLiteral("record")}, {QStringLiteral("event"), name}};
    }
    if (kind == QLatin1String("wait")) {
        if (recorded.isEmpty()) {
            return refused(QStringLiteral(
                "No event to wait for yet: add a \"Record an event\" step first (on the stream to wait for)."));
        }
        return QJsonObject{{QStringLiteral("kind"), QStringLiteral("wait")},
                           {QStringLiteral("waitFor"), recorded.last()}};
    }
    return refused(QStringLiteral("unknown kind of step '%1'").arg(kind));
}

void createMissing(QJsonObject &o, int step, const KernelInfo &kernel, const QStringList &only)
{
    QJsonArray launches = o.value(QStringLiteral("launches")).toArray();
    if (step < 0 || step >= launches.size()) {
        return;
    }
    QJsonObject l = launches[step].toObject();
    const bool byName = l.value(QStringLiteral("args")).isObject();
    QMap<QString, QJsonValue> bound = bindings(l.value(QStringLiteral("args")), kernel);
    for (const KernelParam &p : kernel.params) {
        if (p.name.isEmpty() || bound.contains(p.name) || (!only.isEmpty() && !only.contains(p.name)) ||
            !canCreateFor(p)) {
            continue; // structs and vectors by value among them: no scalar can hold them
        }
        const auto type = dtypeForCudaType(p.baseType);
        QString name = p.name;
        for (int n = 2; nameTaken(o, name); ++n) {
            name = QStringLiteral("%1_%2").arg(p.name).arg(n);
        }
        if (p.category == KernelParam::Category::Pointer) {
            // Inputs (const data) start random so a result shows something; outputs start zeroed.
            const QJsonObject init = p.isConst ? QJsonObject{{QStringLiteral("kind"), QStringLiteral("random")}}
                                               : QJsonObject{{QStringLiteral("kind"), QStringLiteral("zeros")}};
            QJsonArray buffers = o.value(QStringLiteral("buffers")).toArray();
            buffers.append(QJsonObject{{QStringLiteral("name"), name},
                                       {QStringLiteral("dtype"), dtypeName(type.value_or(DType::Float32))},
                                       {QStringLiteral("shape"), QJsonArray{kDefaultElements}},
                                       {QStringLiteral("init"), init}});
            o.insert(QStringLiteral("buffers"), buffers);
        } else {
            QJsonArray scalars = o.value(QStringLiteral("scalars")).toArray();
            scalars.append(QJsonObject{{QStringLiteral("name"), name},
                                       {QStringLiteral("type"), dtypeName(*type)},
                                       {QStringLiteral("value"), isIntegerType(*type) ? kDefaultElements : 1.0}});
            o.insert(QStringLiteral("scalars"), scalars);
        }
        bound.insert(p.name, name);
    }
    l.insert(QStringLiteral("args"), args(kernel, bound, byName));
    launches[step] = l;
    o.insert(QStringLiteral("launches"), launches);
}

QString stepTitle(const LaunchStep &step)
{
    const auto range = [&step] {
        if (step.offset.isEmpty() && step.count.isEmpty()) {
            return QString();
        }
        return QStringLiteral("[%1 +%2]")
            .arg(step.offset.isEmpty() ? QStringLiteral("0") : step.offset,
                 step.count.isEmpty() ? QStringLiteral("to end") : step.count);
    };
    QString t;
    switch (step.kind) {
    case LaunchStep::Kind::Kernel:
        t = step.kernel.isEmpty() ? QStringLiteral("kernel (none chosen)") : step.kernel;
        break;
    case LaunchStep::Kind::Copy:
        t = QStringLiteral("copy %1%2 → %3")
                .arg(step.buffer, range(), step.toDevice ? QStringLiteral("device") : QStringLiteral("host"));
        break;
    case LaunchStep::Kind::Memset:
        t = QStringLiteral("memset %1%2 = %3").arg(step.buffer, range()).arg(step.memsetValue);
        break;
    case LaunchStep::Kind::Record: t = QStringLiteral("record event %1").arg(step.event); break;
    case LaunchStep::Kind::Wait: t = QStringLiteral("wait for %1").arg(step.waitFor.join(QStringLiteral(", "))); break;
    case LaunchStep::Kind::Chunks: {
        QStringList inner;
        for (const LaunchStep &s : step.steps) {
            inner << stepTitle(s);
        }
        t = QStringLiteral("%1 chunks of %2: %3").arg(step.chunkCount, step.elements, inner.join(QStringLiteral(", ")));
        break;
    }
    }
    if (!step.stream.isEmpty()) {
        t += QStringLiteral(" (stream %1)").arg(step.stream);
    }
    return t;
}

} // namespace Kp::LaunchEdits
