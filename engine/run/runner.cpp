#include "runner.h"

#include "buffers/bufferinit.h"
#include "buffers/npy.h"
#include "client/engineclient.h"
#include "worker/protocol.h"

#include <QElapsedTimer>

#include <algorithm>

namespace Kp {

namespace {

bool sameSpec(const BufferSpec &a, const BufferSpec &b)
{
    const BufferInit &x = a.init;
    const BufferInit &y = b.init;
    return a.name == b.name && a.dtype == b.dtype && a.shape == b.shape && x.kind == y.kind && x.value == y.value &&
           x.start == y.start && x.step == y.step && x.distribution == y.distribution && x.min == y.min &&
           x.max == y.max && x.mean == y.mean && x.stddev == y.stddev && x.seed == y.seed &&
           x.expression == y.expression && x.file == y.file && x.imageMode == y.imageMode && a.symbol == b.symbol;
}

} // namespace

const KernelInfo *findKernel(const QList<KernelInfo> &kernels, const QString &name)
{
    const QString want = QString(name).remove(QLatin1Char(' '));
    for (const KernelInfo &k : kernels) {
        if (QString(k.name).remove(QLatin1Char(' ')) == want) {
            return &k;
        }
    }
    // An unqualified name for a kernel inside a namespace.
    for (const KernelInfo &k : kernels) {
        if (k.name.endsWith(QStringLiteral("::") + want)) {
            return &k;
        }
    }
    return nullptr;
}

qint64 HostBuffer::elementCount() const
{
    return shapeElementCount(shape);
}

qint64 HostBuffer::byteSize() const
{
    return elementCount() * dtypeInfo(spec.dtype).elementBytes();
}

Status HostBuffers::materialize(const Project &project, bool reinit, Fill fill)
{
    QMap<QString, double> scalars;
    for (const ScalarSpec &s : project.scalars) {
        scalars.insert(s.name, s.value);
    }
    QList<std::shared_ptr<HostBuffer>> next;
    for (qsizetype i = 0; i < project.buffers.size(); ++i) {
        const BufferSpec &spec = project.buffers[i];
        const QString field = QStringLiteral("buffers[%1]").arg(i);
        QList<qint64> shape = spec.shape;
        if (shape.isEmpty() && spec.init.kind == BufferInit::Kind::Npy) {
            auto s = npyShapeFor(resolveInitFile(spec.init.file, project.dir()), spec.dtype, spec.name);
            if (!s) {
                Error e = s.error();
                e.message = QStringLiteral("%1 ('%2').init.file: %3").arg(field, spec.name, e.message);
                return e;
            }
            shape = *s;
        } else if (shape.isEmpty() && spec.init.kind == BufferInit::Kind::Image) {
            auto s = imageShapeFor(resolveInitFile(spec.init.file, project.dir()), spec.init.imageMode, spec.dtype);
            if (!s) {
                Error e = s.error();
                e.message = QStringLiteral("%1 ('%2').init.file: %3").arg(field, spec.name, e.message);
                return e;
            }
            shape = *s;
        }
        BufferSpec resolved = spec;
        resolved.shape = shape;
        if (Status st = checkSpec(resolved, field); !st) {
            return st;
        }
        std::shared_ptr<HostBuffer> buf;
        for (const auto &old : m_buffers) {
            if (old->spec.name == spec.name) {
                buf = old;
            }
        }
        const qint64 bytes = resolved.byteSize();
        const bool keep = buf && sameSpec(buf->spec, spec) && buf->shape == shape && !reinit &&
                          (buf->filled || fill == Fill::ShapesOnly);
        if (keep) {
            next << buf;
            continue;
        }
        bool fresh = false;
        if (!buf || buf->byteSize() != bytes || !buf->memory.isValid()) {
            auto mem = SharedMemory::create(bytes, spec.name);
            if (!mem) {
                Error e = mem.error();
                e.message = QStringLiteral("%1 ('%2', %3 bytes): %4").arg(field, spec.name).arg(bytes).arg(e.message);
                return e;
            }
            buf = std::make_shared<HostBuffer>();
            buf->memory = std::move(mem).value();
            fresh = true;
        }
        buf->spec = spec;
        buf->shape = shape;
        // Fresh shared memory already reads as zeros; touching it would
        // commit every page of a buffer that may never be read.
        const bool zeroed =
            fresh && (spec.init.kind == BufferInit::Kind::Zeros || spec.init.kind == BufferInit::Kind::Uninitialized);
        buf->filled = zeroed;
        if (fill == Fill::Contents && !zeroed) {
            if (Status st = fillBuffer(resolved, buf->memory.data(), bytes, project.dir(), scalars); !st) {
                return st;
            }
            buf->filled = true;
        }
        ++buf->generation;
        next << buf;
    }
    m_buffers = next;
    return Unit{};
}

bool HostBuffers::allFilled() const
{
    return std::all_of(m_buffers.begin(), m_buffers.end(), [](const auto &b) { return b->filled; });
}

const HostBuffer *HostBuffers::find(const QString &name) const
{
    for (const auto &b : m_buffers) {
        if (b->spec.name == name) {
            return b.get();
        }
    }
    return nullptr;
}

HostBuffer *HostBuffers::find(const QString &name)
{
    for (const auto &b : m_buffers) {
        if (b->spec.name == name) {
            return b.get();
        }
    }
    return nullptr;
}

QMap<QString, double> expressionVariables(const Project &project, const HostBuffers &buffers)
{
    QMap<QString, double> vars;
    for (const ScalarSpec &s : project.scalars) {
        vars.insert(s.name, s.value);
    }
    for (const auto &b : buffers.all()) {
        const QList<qint64> &sh = b->shape;
        const qsizetype d = sh.size();
        vars.insert(b->spec.name + QStringLiteral(".n"), double(b->elementCount()));
        // x is the innermost (last) extent, as in the expression init.
        vars.insert(b->spec.name + QStringLiteral(".nx"), d >= 1 ? double(sh[d - 1]) : 1.0);
        vars.insert(b->spec.name + QStringLiteral(".ny"), d >= 2 ? double(sh[d - 2]) : 1.0);
        vars.insert(b->spec.name + QStringLiteral(".nz"), d >= 3 ? double(sh[d - 3]) : 1.0);
    }
    return vars;
}

CompileOptions compileOptionsFor(const Project &project)
{
    CompileOptions o = project.compile;
    const auto add = [&o](const LaunchStep &s) {
        if (s.kernel.contains(QLatin1Char('<')) && !o.nameExpressions.contains(s.kernel.trimmed())) {
            o.nameExpressions << s.kernel.trimmed();
        }
    };
    for (const LaunchStep &s : project.launches) {
        add(s);
        for (const LaunchStep &inner : s.steps) {
            add(inner);
        }
    }
    return o;
}

void applyThroughput(RunResult &r, double bytes, double flops)
{
    r.bytes = bytes;
    r.flops = flops;
    if (r.stats.count > 0 && r.stats.medianMs > 0) {
        r.bytesPerSecond = bytes / (r.stats.medianMs / 1000.0);
        r.flopsPerSecond = flops / (r.stats.medianMs / 1000.0);
    }
}

Runner::Runner(EngineClient *client, QObject *parent)
    : QObject(parent)
    , m_client(client)
{
}

RunResult Runner::finish(const PreparedRun &prepared, HostBuffers *buffers, const Result<QVariantMap> &reply)
{
    RunResult r;
    if (reply) {
        r = RunResult::fromVariant(*reply);
    } else {
        r.error = reply.error();
    }
    r.warnings = prepared.warnings + r.warnings;
    if (!r.error) {
        applyThroughput(r, prepared.bytes, prepared.flops);
        for (const auto &b : buffers->all()) {
            ++b->generation; // the download rewrote them
        }
        return r;
    }
    const Error::Code c = r.error->code;
    if (c == Error::Code::Fault || c == Error::Code::Timeout || c == Error::Code::WorkerDied ||
        c == Error::Code::Cancelled) {
        // Results are downloaded only after every launch succeeded, so the
        // host copies still hold what the run started from.
        r.buffersRestored = true;
        if (c != Error::Code::Cancelled || m_client->workerPid() == 0) {
            recover(prepared);
        }
    }
    return r;
}

void Runner::recover(const PreparedRun &prepared)
{
    auto timer = std::make_shared<QElapsedTimer>();
    timer->start();
    m_client->request(
        Protocol::Type::Prepare, prepared.request.toPrepareVariant(), this,
        [this, timer](const Reply &reply) {
            if (reply) {
                m_lastRecoveryMs = double(timer->nsecsElapsed()) / 1e6;
                Q_EMIT recovered(m_lastRecoveryMs);
            }
        },
        RequestOptions{30000, QStringLiteral("prepare")});
}

void Runner::run(const PreparedRun &prepared, HostBuffers *buffers, Callback callback)
{
    m_client->request(
        Protocol::Type::Run, prepared.request.toVariant(), this,
        [this, prepared, buffers, callback](const Reply &reply) { callback(finish(prepared, buffers, reply)); },
        RequestOptions{prepared.timeoutMs, QStringLiteral("run")});
}

RunResult Runner::runSync(const PreparedRun &prepared, HostBuffers *buffers)
{
    const Reply reply = m_client->requestSync(Protocol::Type::Run, prepared.request.toVariant(),
                                              RequestOptions{prepared.timeoutMs, {}});
    return finish(prepared, buffers, reply);
}

void Runner::abort()
{
    m_client->abortCurrent();
}

} // namespace Kp
