#pragma once

#include "core/result.h"
#include "run/runrequest.h"
#include "run/runtypes.h"

#include <cuda.h>

#include <functional>
#include <vector>

namespace Kp {

class DriverApi;

/**
 * Runs a request's steps on their streams (docs/streams.md), inside
 * kpg-worker: creates the named streams (with their priorities, clamped to
 * the device's range) and events, and issues every step on its own stream
 * after waiting for its events. A pass forks from an origin stream (every
 * stream waits for an event recorded there) and joins back into it, so the
 * origin stream's events bracket the whole pass, the blocking kernel holds
 * all of it, and a CUDA graph captured on the origin stream holds every
 * stream's work. GpuSession owns one and calls it from small hooks.
 * Single-threaded.
 */
class StreamExec
{
public:
    /** How a pass reaches the buffers and kernels it does not own. */
    struct Access
    {
        std::function<CUdeviceptr(int buffer)> device; ///< the device copy (after the repetition's swaps)
        std::function<void *(int buffer)> host;        ///< the pinned host copy
        std::function<Status(int step, CUstream stream)> launch;
    };

    explicit StreamExec(const DriverApi *api);
    ~StreamExec();
    StreamExec(const StreamExec &) = delete;
    StreamExec &operator=(const StreamExec &) = delete;

    /** Streams, events and the scratch host memory for one request. */
    Status setup(const RunRequest &request, CUstream defaultStream);
    /** A poisoned context frees nothing: the process exit does. */
    void abandon() noexcept;

    /**
     * Issues every step once, forked from and joined into origin. withEvents:
     * an event before and after each step on its stream, read by spans().
     * scratch: copies to the host go to scratch memory, so passes after the
     * correctness run leave the host copies as that run left them.
     */
    Status issue(CUstream origin, const Access &access, bool withEvents, bool scratch);
    /** The step whose end event has not completed first, after a failed pass; -1 if none is known. */
    int firstUnfinished() const;
    /** After a pass with events has finished: each step's start and end from the pass's first event. */
    QList<TimelineSpan> spans(double *totalMs) const;

    /**
     * Graph mode: captures one pass (no events, scratch copies) on origin,
     * then times `replays` replays of it and as many passes launched step by
     * step, each followed by a synchronisation, on the host's clock.
     */
    Status timeGraph(CUstream origin, const Access &access, int replays, double *graphUs, double *streamUs);

    /** The stream's name for step i. */
    QString streamName(int step) const;
    const std::vector<RunStep> &steps() const { return m_steps; }

private:
    Error cudaError(CUresult r, const char *call) const;
    void destroy() noexcept;

    const DriverApi *m_api;
    std::vector<RunStep> m_steps;
    std::vector<RunStream> m_streamSpecs;
    std::vector<CUstream> m_streams; ///< [0]: the default stream (not owned)
    std::vector<bool> m_ownStream;
    std::vector<CUevent> m_events;     ///< the project's events (no timing)
    std::vector<CUevent> m_stepEvents; ///< 2 per step: start, end
    CUevent m_fork = nullptr;          ///< recorded on the origin stream before a pass
    CUevent m_origin = nullptr;        ///< the timed start of a pass with events
    std::vector<CUevent> m_join;       ///< one per stream: its end of the pass
    CUevent m_end = nullptr;           ///< the timed end of a pass with events
    void *m_scratch = nullptr;         ///< pinned, for copies to the host after the correctness run
    qint64 m_scratchBytes = 0;
};

} // namespace Kp
