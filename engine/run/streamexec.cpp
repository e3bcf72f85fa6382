#include "run/streamexec.h"

#include "cuda/driverapi.h"
#include "run/gpusession.h"
#include "run/gpusessionstep.h"

#include <QElapsedTimer>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace Kp {

namespace {

Error execError(Error::Code code, const QString &message)
{
    return Error{QStringLiteral("kpg-worker"), code, {}, message};
}

const char *kindName(RunStep::Kind k)
{
    switch (k) {
    case RunStep::Kind::Kernel: return "kernel";
    case RunStep::Kind::CopyToDevice:
    case RunStep::Kind::CopyToHost: return "copy";
    case RunStep::Kind::Memset: return "memset";
    case RunStep::Kind::Record: return "record";
    case RunStep::Kind::Wait: return "wait";
    }
    return "kernel";
}

double median(std::vector<double> v)
{
    if (v.empty()) {
        return 0;
    }
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
    return v[v.size() / 2];
}

/** Replays of the graph, and passes launched step by step, timed for graph mode. */
constexpr int kGraphReplays = 50;

} // namespace

#define KP_CU(call)                                                                                                    \
    do {                                                                                                               \
        const CUresult kp_r_ = (call);                                                                                 \
        if (kp_r_ != CUDA_SUCCESS) {                                                                                   \
            return cudaError(kp_r_, #call);                                                                            \
        }                                                                                                              \
    } while (false)

StreamExec::StreamExec(const DriverApi *api)
    : m_api(api)
{
}

StreamExec::~StreamExec()
{
    destroy();
}

Error StreamExec::cudaError(CUresult r, const char *call) const
{
    Error e = m_api->error(r, call);
    e.where = QStringLiteral("kpg-worker");
    return e;
}

void StreamExec::abandon() noexcept
{
    m_streams.clear();
    m_ownStream.clear();
    m_events.clear();
    m_stepEvents.clear();
    m_join.clear();
    m_fork = m_origin = m_end = nullptr;
    m_scratch = nullptr;
}

void StreamExec::destroy() noexcept
{
    const auto drop = [this](CUevent &e) {
        if (e) {
            m_api->cuEventDestroy(e);
            e = nullptr;
        }
    };
    for (size_t i = 0; i < m_streams.size(); ++i) {
        if (m_ownStream[i] && m_streams[i]) {
            m_api->cuStreamSynchronize(m_streams[i]);
            m_api->cuStreamDestroy(m_streams[i]);
        }
    }
    for (CUevent &e : m_events) {
        drop(e);
    }
    for (CUevent &e : m_stepEvents) {
        drop(e);
    }
    for (CUevent &e : m_join) {
        drop(e);
    }
    drop(m_fork);
    drop(m_origin);
    drop(m_end);
    if (m_scratch) {
        m_api->cuMemFreeHost(m_scratch);
    }
    abandon();
}

Status StreamExec::setup(const RunRequest &request, CUstream defaultStream)
{
    destroy();
    m_steps.assign(request.steps.cbegin(), request.steps.cend());
    m_streamSpecs.assign(request.streams.cbegin(), request.streams.cend());
    if (m_streamSpecs.empty()) {
        m_streamSpecs.push_back(RunStream{QStringLiteral("default"), 0, false});
    }
    int least = 0, greatest = 0;
    m_api->cuCtxGetStreamPriorityRange(&least, &greatest);
    for (size_t i = 0; i < m_streamSpecs.size(); ++i) {
        const RunStream &spec = m_streamSpecs[i];
        if (i == 0) {
            m_streams.push_back(defaultStream);
            m_ownStream.push_back(false);
        } else if (spec.legacy) {
            m_streams.push_back(CU_STREAM_LEGACY);
            m_ownStream.push_back(false);
        } else {
            // Blocking streams, as cudaStreamCreate makes them: the legacy
            // stream then serialises with them, as it would in a program.
            const int priority = std::clamp(spec.priority, std::min(least, greatest), std::max(least, greatest));
            CUstream s = nullptr;
            KP_CU(m_api->cuStreamCreateWithPriority(&s, CU_STREAM_DEFAULT, priority));
            m_streams.push_back(s);
            m_ownStream.push_back(true);
        }
    }
    const auto make = [this](CUevent *e, unsigned flags) -> Status {
        KP_CU(m_api->cuEventCreate(e, flags));
        return Unit{};
    };
    m_events.assign(size_t(request.events.size()), nullptr);
    for (CUevent &e : m_events) {
        if (Status st = make(&e, CU_EVENT_DISABLE_TIMING); !st) {
            return st;
        }
    }
    m_stepEvents.assign(m_steps.size() * 2, nullptr);
    for (CUevent &e : m_stepEvents) {
        if (Status st = make(&e, CU_EVENT_DEFAULT); !st) {
            return st;
        }
    }
    m_join.assign(m_streams.size(), nullptr);
    for (CUevent &e : m_join) {
        if (Status st = make(&e, CU_EVENT_DISABLE_TIMING); !st) {
            return st;
        }
    }
    if (Status st = make(&m_fork, CU_EVENT_DISABLE_TIMING); !st) {
        return st;
    }
    if (Status st = make(&m_origin, CU_EVENT_DEFAULT); !st) {
        return st;
    }
    if (Status st = make(&m_end, CU_EVENT_DEFAULT); !st) {
        return st;
    }
    qint64 toHost = 0;
    for (const RunStep &s : m_steps) {
        if (s.kind == RunStep::Kind::CopyToHost) {
            toHost = std::max(toHost, s.bytes);
        }
    }
    if (toHost > 0) {
        // Without it, later passes would write into the host copies the
        // correctness run left; they then do, and the results are unchanged
        // for steps that compute the same thing each time.
        if (m_api->cuMemHostAlloc(&m_scratch, size_t(toHost), 0) != CUDA_SUCCESS) {
            m_scratch = nullptr;
        } else {
            m_scratchBytes = toHost;
        }
    }
    return Unit{};
}

QString StreamExec::streamName(int step) const
{
    const int s = m_steps[size_t(step)].stream;
    return s >= 0 && size_t(s) < m_streamSpecs.size() ? m_streamSpecs[size_t(s)].name : QStringLiteral("default");
}

Status StreamExec::issue(CUstream origin, const Access &access, bool withEvents, bool scratch)
{
    if (withEvents) {
        KP_CU(m_api->cuEventRecord(m_origin, origin));
    }
    KP_CU(m_api->cuEventRecord(m_fork, origin));
    for (size_t s = 0; s < m_streams.size(); ++s) {
        if (m_streams[s] != origin) {
            KP_CU(m_api->cuStreamWaitEvent(m_streams[s], m_fork, 0));
        }
    }
    for (size_t i = 0; i < m_steps.size(); ++i) {
        const RunStep &step = m_steps[i];
        const size_t si = step.stream >= 0 && size_t(step.stream) < m_streams.size() ? size_t(step.stream) : 0;
        CUstream st = m_streams[si];
        for (int w : step.waits) {
            if (w < 0 || size_t(w) >= m_events.size()) {
                return execError(
                    Error::Code::Protocol,
                    QStringLiteral("step %1 waits for event %2 of %3").arg(i + 1).arg(w).arg(m_events.size()));
            }
            KP_CU(m_api->cuStreamWaitEvent(st, m_events[size_t(w)], 0));
        }
        if (withEvents) {
            KP_CU(m_api->cuEventRecord(m_stepEvents[2 * i], st));
        }
        switch (step.kind) {
        case RunStep::Kind::Kernel:
            if (Status r = access.launch(int(i), st); !r) {
                return r;
            }
            break;
        case RunStep::Kind::CopyToDevice:
            if (step.bytes > 0) {
                KP_CU(m_api->cuMemcpyHtoDAsync(access.device(step.buffer) + CUdeviceptr(step.offset),
                                               static_cast<char *>(access.host(step.buffer)) + step.offset,
                                               size_t(step.bytes), st));
            }
            break;
        case RunStep::Kind::CopyToHost:
            if (step.bytes > 0) {
                void *dst =
                    scratch && m_scratch ? m_scratch : static_cast<char *>(access.host(step.buffer)) + step.offset;
                KP_CU(m_api->cuMemcpyDtoHAsync(dst, access.device(step.buffer) + CUdeviceptr(step.offset),
                                               size_t(step.bytes), st));
            }
            break;
        case RunStep::Kind::Memset:
            if (step.bytes > 0) {
                KP_CU(m_api->cuMemsetD8Async(access.device(step.buffer) + CUdeviceptr(step.offset),
                                             static_cast<unsigned char>(step.memsetValue), size_t(step.bytes), st));
            }
            break;
        case RunStep::Kind::Record:
            if (step.event < 0 || size_t(step.event) >= m_events.size()) {
                return execError(
                    Error::Code::Protocol,
                    QStringLiteral("step %1 records event %2 of %3").arg(i + 1).arg(step.event).arg(m_events.size()));
            }
            KP_CU(m_api->cuEventRecord(m_events[size_t(step.event)], st));
            break;
        case RunStep::Kind::Wait: break; // its waits are above
        }
        if (withEvents) {
            KP_CU(m_api->cuEventRecord(m_stepEvents[2 * i + 1], st));
        }
    }
    for (size_t s = 0; s < m_streams.size(); ++s) {
        if (m_streams[s] != origin) {
            KP_CU(m_api->cuEventRecord(m_join[s], m_streams[s]));
            KP_CU(m_api->cuStreamWaitEvent(origin, m_join[s], 0));
        }
    }
    if (withEvents) {
        KP_CU(m_api->cuEventRecord(m_end, origin));
    }
    return Unit{};
}

int StreamExec::firstUnfinished() const
{
    for (size_t i = 0; i < m_steps.size(); ++i) {
        if (m_api->cuEventQuery(m_stepEvents[2 * i + 1]) != CUDA_SUCCESS) {
            return int(i);
        }
    }
    return -1;
}

QList<TimelineSpan> StreamExec::spans(double *totalMs) const
{
    QList<TimelineSpan> out;
    float total = 0;
    m_api->cuEventElapsedTime(&total, m_origin, m_end);
    *totalMs = total;
    for (size_t i = 0; i < m_steps.size(); ++i) {
        const RunStep &s = m_steps[i];
        TimelineSpan t;
        t.step = int(i);
        t.kind = QString::fromLatin1(kindName(s.kind));
        t.label = s.kind == RunStep::Kind::Kernel ? s.kernel : s.label;
        t.stream = streamName(int(i));
        t.direction = s.kind == RunStep::Kind::CopyToDevice ? QStringLiteral("HtoD")
                      : s.kind == RunStep::Kind::CopyToHost ? QStringLiteral("DtoH")
                                                            : QString();
        float a = 0, b = 0;
        m_api->cuEventElapsedTime(&a, m_origin, m_stepEvents[2 * i]);
        m_api->cuEventElapsedTime(&b, m_origin, m_stepEvents[2 * i + 1]);
        t.startMs = a;
        t.endMs = std::max(a, b);
        t.bytes = s.bytes;
        t.grid = s.grid;
        t.block = s.block;
        out << t;
    }
    return out;
}

Status StreamExec::timeGraph(CUstream origin, const Access &access, int replays, double *graphUs, double *streamUs)
{
    for (const RunStream &s : m_streamSpecs) {
        if (s.legacy) {
            return execError(Error::Code::BadInput, QStringLiteral("graph mode: a CUDA graph cannot capture the legacy "
                                                                   "default stream; move its steps to a named stream"));
        }
    }
    KP_CU(m_api->cuStreamBeginCapture(origin, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    const Status issued = issue(origin, access, false, true);
    CUgraph graph = nullptr;
    const CUresult ended = m_api->cuStreamEndCapture(origin, &graph);
    if (!issued) {
        if (graph) {
            m_api->cuGraphDestroy(graph);
        }
        return issued;
    }
    if (ended != CUDA_SUCCESS) {
        return cudaError(ended, "cuStreamEndCapture");
    }
    CUgraphExec exec = nullptr;
    const CUresult inst = m_api->cuGraphInstantiateWithFlags(&exec, graph, 0);
    m_api->cuGraphDestroy(graph);
    if (inst != CUDA_SUCCESS) {
        return cudaError(inst, "cuGraphInstantiateWithFlags");
    }
    std::vector<double> g, s;
    Status st = Unit{};
    // One of each first: the graph's upload and the first launches are not what a replay costs.
    // The step-by-step pass first in each round, so the device buffers end
    // as a replay left them (compared with the correctness run's afterwards).
    for (int r = -1; r < replays && st; ++r) {
        QElapsedTimer t;
        t.start();
        st = issue(origin, access, false, true);
        if (st) {
            const CUresult res = m_api->cuStreamSynchronize(origin);
            if (res != CUDA_SUCCESS) {
                st = cudaError(res, "cuStreamSynchronize");
            }
        }
        if (!st) {
            break;
        }
        if (r >= 0) {
            s.push_back(double(t.nsecsElapsed()) / 1000.0);
        }
        t.restart();
        CUresult res = m_api->cuGraphLaunch(exec, origin);
        if (res == CUDA_SUCCESS) {
            res = m_api->cuStreamSynchronize(origin);
        }
        if (res != CUDA_SUCCESS) {
            st = cudaError(res, "cuGraphLaunch");
            break;
        }
        if (r >= 0) {
            g.push_back(double(t.nsecsElapsed()) / 1000.0);
        }
    }
    m_api->cuGraphExecDestroy(exec);
    if (!st) {
        return st;
    }
    *graphUs = median(g);
    *streamUs = median(s);
    return Unit{};
}

// GpuSession's part for streams: small hooks in gpusession.cpp call these.

bool GpuSession::setupStreams(const RunRequest &request, Plan &plan, RunResult &result)
{
    plan.streamed = request.usesStreams();
    if (!plan.streamed && !request.timeline && !request.graph) {
        m_exec.reset();
        return true;
    }
    if (!m_exec) {
        m_exec = std::make_unique<StreamExec>(m_api);
    }
    if (Status st = m_exec->setup(request, m_stream.get()); !st) {
        return fail(result, st.error());
    }
    // A copy from memory the driver could not pin goes through a staging
    // buffer and returns only when done: it overlaps nothing.
    for (qsizetype i = 0; i < request.steps.size(); ++i) {
        const RunStep &s = request.steps[i];
        const bool copy = s.kind == RunStep::Kind::CopyToDevice || s.kind == RunStep::Kind::CopyToHost;
        if (copy && s.buffer >= 0 && size_t(s.buffer) < m_buffers.size() &&
            !m_buffers[size_t(s.buffer)]->registration) {
            result.warnings << QStringLiteral("step %1 (%2): buffer '%3' could not be pinned (the locked-memory "
                                              "limit?), so its copies are synchronous and overlap nothing")
                                   .arg(i + 1)
                                   .arg(s.label,
                                        s.buffer < request.buffers.size() ? request.buffers[s.buffer].name : QString());
        }
    }
    return true;
}

Status GpuSession::issueStreamed(Plan &plan)
{
    StreamExec::Access access;
    access.device = [this, &plan](int b) { return m_buffers[size_t(plan.perm[size_t(b)])]->ptr(); };
    access.host = [this](int b) { return m_buffers[size_t(b)]->host.data(); };
    access.launch = [this, &plan](int i, CUstream s) { return launch(plan.steps[size_t(i)], plan.perm, s); };
    return m_exec->issue(m_stream.get(), access, false, true);
}

bool GpuSession::streamedRun(Plan &plan, RunResult &result)
{
    // Every repetition's steps issued on their streams at once, then waited
    // for: the asynchronous run is the one whose results are kept, so a race
    // shows in the results as it would in a program.
    const std::vector<RunStep> &rsteps = m_exec->steps();
    for (size_t i = 0; i < plan.steps.size(); ++i) {
        const Step &st = plan.steps[i];
        const RunStep &r = rsteps[i];
        StepResult sr;
        sr.kind = QString::fromLatin1(kindName(r.kind));
        sr.label = r.kind == RunStep::Kind::Kernel ? QString() : r.label;
        sr.stream = m_exec->streamName(int(i));
        sr.bytes = r.bytes;
        sr.kernel = st.kernel;
        sr.loweredName = st.lowered;
        sr.grid = st.grid;
        sr.block = st.block;
        sr.sharedBytes = st.shared;
        sr.limits = st.limits;
        if (st.function) {
            const int threads = int(st.block[0] * st.block[1] * st.block[2]);
            sr.occupancy = stepOccupancy(*m_api, st.function, st.limits, threads, st.shared);
        }
        result.steps << sr;
    }
    StreamExec::Access access;
    access.device = [this, &plan](int b) { return m_buffers[size_t(plan.perm[size_t(b)])]->ptr(); };
    access.host = [this](int b) { return m_buffers[size_t(b)]->host.data(); };
    access.launch = [this, &plan](int i, CUstream s) { return launch(plan.steps[size_t(i)], plan.perm, s); };
    for (int rep = 0; rep < result.repeat; ++rep) {
        const QString where =
            result.repeat > 1
                ? QStringLiteral("repetition %1 of %2 of the steps on streams").arg(rep + 1).arg(result.repeat)
                : QStringLiteral("the steps on streams");
        if (Status st = m_exec->issue(m_stream.get(), access, true, false); !st) {
            m_mustExit = true;
            Error e = st.error();
            e.message = QStringLiteral("%1: %2").arg(where, e.message);
            return fail(result, e);
        }
        m_api->cuEventRecord(m_ev[1].get(), m_stream.get());
        const auto deadline =
            std::chrono::steady_clock::now() +
            std::chrono::microseconds(qint64(plan.killMs * 1000) * qMax<qint64>(1, qint64(plan.steps.size())));
        if (Status st = waitEvent(m_ev[1].get(), deadline,
                                  QStringLiteral("%1 ran past the time-out of %2 s per step; they were stopped")
                                      .arg(where)
                                      .arg(plan.killMs / 1000.0));
            !st) {
            m_mustExit = true;
            const int failed = m_exec->firstUnfinished();
            Error e = st.error();
            if (failed >= 0) {
                e.message = QStringLiteral("%1 (the first step not finished: %2): %3")
                                .arg(where, plan.steps[size_t(failed)].label, e.message);
            }
            bool truncated = false;
            if (!result.steps.isEmpty()) {
                result.steps.first().printfOutput = takePrintf(&truncated);
            }
            return fail(result, e, failed);
        }
        m_api->cuStreamSynchronize(m_stream.get());
        double total = 0;
        const QList<TimelineSpan> spans = m_exec->spans(&total);
        for (const TimelineSpan &t : spans) {
            result.steps[t.step].firstRunMs += t.durationMs();
        }
        if (!result.steps.isEmpty()) {
            bool truncated = false;
            result.steps.first().printfOutput += takePrintf(&truncated);
            result.steps.first().printfTruncated = result.steps.first().printfTruncated || truncated;
        }
        for (const auto &[a, b] : plan.swaps) {
            std::swap(plan.perm[size_t(a)], plan.perm[size_t(b)]);
        }
    }
    return true;
}

void GpuSession::streamPasses(const RunRequest &request, Plan &plan, RunResult &result)
{
    if (!m_exec) {
        return;
    }
    StreamExec::Access access;
    access.device = [this, &plan](int b) { return m_buffers[size_t(plan.perm[size_t(b)])]->ptr(); };
    access.host = [this](int b) { return m_buffers[size_t(b)]->host.data(); };
    access.launch = [this, &plan](int i, CUstream s) { return launch(plan.steps[size_t(i)], plan.perm, s); };
    plan.resetPerm();
    if (request.timeline) {
        // One more pass, after timing so the caches and clocks are as warm as
        // the samples', with an event before and after every step on its own
        // stream; the first repetition only.
        Status st = m_exec->issue(m_stream.get(), access, true, true);
        if (st) {
            m_api->cuEventRecord(m_ev[1].get(), m_stream.get());
            st = waitEvent(
                m_ev[1].get(),
                std::chrono::steady_clock::now() +
                    std::chrono::microseconds(qint64(plan.killMs * 1000) * qMax<qint64>(1, qint64(plan.steps.size()))),
                QStringLiteral("the timeline pass ran past the time-out"));
        }
        if (!st) {
            m_mustExit = true;
            fail(result, st.error(), m_exec->firstUnfinished());
            return;
        }
        std::fflush(stdout);
        resetPrintf();
        result.timeline = m_exec->spans(&result.timelineTotalMs);
    }
    if (request.graph) {
        double graphUs = 0, streamUs = 0;
        if (Status st = m_exec->timeGraph(m_stream.get(), access, kGraphReplays, &graphUs, &streamUs); !st) {
            if (st.error().code == Error::Code::BadInput) {
                result.warnings << st.error().message;
            } else {
                m_mustExit = true;
                fail(result, st.error());
            }
            return;
        }
        std::fflush(stdout);
        resetPrintf();
        result.graphReplays = kGraphReplays;
        result.graphReplayUs = graphUs;
        result.streamLaunchUs = streamUs;
        // The last replay's buffers against the correctness run's, byte for
        // byte (only where the run downloaded them; steps that compute the
        // same thing each time must agree).
        if (request.download) {
            result.graphCompared = true;
            for (size_t i = 0; i < m_buffers.size(); ++i) {
                const DeviceBuffer &b = *m_buffers[i];
                if (b.bytes <= 0) {
                    continue;
                }
                QByteArray after(b.bytes, Qt::Uninitialized);
                if (m_api->cuMemcpyDtoHAsync(after.data(), b.ptr(), size_t(b.bytes), m_stream.get()) != CUDA_SUCCESS ||
                    m_api->cuStreamSynchronize(m_stream.get()) != CUDA_SUCCESS) {
                    m_mustExit = true;
                    fail(result, execError(Error::Code::Fault, QStringLiteral("graph mode: reading the buffers back "
                                                                              "after the replays failed")));
                    return;
                }
                if (std::memcmp(after.constData(), b.host.data(), size_t(b.bytes)) != 0) {
                    result.graphDiffers << request.buffers.value(qsizetype(i)).name;
                }
            }
        }
    }
}

} // namespace Kp
