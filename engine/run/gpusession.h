#pragma once

#include "buffers/sharedmemory.h"
#include "core/result.h"
#include "cuda/handles.h"
#include "run/accesstrace.h"
#include "run/ceilings.h"
#include "run/guardzonesdevice.h"
#include "run/runrequest.h"
#include "run/runtypes.h"
#include "run/samplereset.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QVariantMap>

#include <cuda.h>

#include <array>
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

namespace Kp {

class DriverApi;
class StreamExec;
class TextureBindings;

/**
 * The GPU side of a run, inside kpg-worker: one primary context, one stream,
 * the loaded module and the device buffers, kept between requests so that a
 * second run with the same buffers skips mapping and registering them.
 *
 * Every driver object is held by an owner from cuda/handles.h, declared so
 * that the context is released last; the destructor only waits for the
 * stream. A fault is an ordinary result: RunResult::error is set and
 * mustExit() turns true when the context can no longer be trusted (every
 * error after the driver saw a launch), so the worker replies and then ends
 * itself. Single-threaded: the worker's one thread.
 */
class GpuSession
{
public:
    GpuSession();
    ~GpuSession();
    GpuSession(const GpuSession &) = delete;
    GpuSession &operator=(const GpuSession &) = delete;

    /** Compiles nothing: loads request.image, uploads, launches, downloads, times. */
    RunResult run(const RunRequest &request);
    /** Creates the context and restores request.buffers on the device (after a fault). */
    Result<QVariantMap> prepare(const RunRequest &request);

    /**
     * Measures the device ceilings (engine/run/ceilings.h): a copy for the
     * bandwidth, FMA chains for FP32 and FP64, each timed with events, the
     * best of request.rounds launches after a warm-up.
     */
    Result<QVariantMap> ceilings(const CeilingsRequest &request);

    bool mustExit() const { return m_mustExit; }

private:
    struct DeviceBuffer
    {
        QString path;
        quint64 id = 0; ///< the engine's SharedMemory::id(): paths get reused, ids do not
        qint64 bytes = 0;
        QString name;              ///< the buffer of this run it was allocated for (messages)
        int elementBytes = 1;      ///< its dtype's size (guard messages)
        bool upload = true;        ///< false: "uninitialized", never written from the host
        qint64 guard = 0;          ///< guard bytes on each side of the buffer in dev (run/guardzones.h)
        bool guardsFilled = false; ///< its guards were filled in this session
        /** Not empty: the module's global of this name is the device copy (no allocation, no guards). */
        QString symbol;
        CUdeviceptr symbolPtr = 0; ///< its address in the loaded module; 0 before a module is loaded
        /** The pointer kernels, copies and the sanitizer see: past the front guard, or the global. */
        CUdeviceptr ptr() const { return symbol.isEmpty() ? Cuda::address(dev) + CUdeviceptr(guard) : symbolPtr; }
        // Declared in this order so that the device copy goes first, then the
        // pinning, then the mapping it pins.
        SharedMemory host;
        Cuda::HostRegistration registration; ///< empty when pinning was refused
        Cuda::DeviceMemory dev;
    };
    struct Step;
    /** What the phases of one run share. */
    struct Plan
    {
        std::vector<Step> steps;
        std::vector<std::pair<int, int>> swaps;
        std::vector<int> perm; ///< buffer i of the request lives in m_buffers[perm[i]] after the swaps
        double killMs = 10000;
        bool streamed = false; ///< steps on streams, run asynchronously by m_exec (docs/streams.md)
        void resetPerm();
        /** Request buffers filled with 0xFF before each timing sample (kpg grade's anti-gaming). */
        std::vector<int> sentinel;
        /** Per step: request buffers filled with 0xFF before each of its launches in the correctness run. */
        QList<QList<int>> sentinelBefore;
    };

    // The phases of run(), in order; each returns false after recording the
    // error (and the failing step) in result.
    bool openDevice(const RunRequest &request, RunResult &result);
    bool decodeStep(const RunRequest &request, qsizetype index, Step &step, RunResult &result);
    bool validateStep(const RunRequest &request, qsizetype index, Step &step, RunResult &result);
    bool uploadBuffers(const RunRequest &request, RunResult &result);
    /** Makes the run's texture and surface objects (RunRequest::textures), checked against the device. */
    bool setupTextures(const RunRequest &request, RunResult &result);
    /** timing.resetBeforeEachSample: device copies of the named buffers as uploaded (run/samplereset). */
    bool snapshotForSamples(const RunRequest &request, RunResult &result);
    bool correctnessRun(Plan &plan, RunResult &result);
    bool downloadBuffers(const Plan &plan, RunResult &result);
    void timingRun(const RunTiming &timing, Plan &plan, RunResult &result);
    /** Queues the blocking kernel; releaseStream() lets the queued work start. */
    Status holdStream();
    void releaseStream();
    /** Queues kpg_l2_flush: reads the 2x-L2 buffer so the L2 holds clean lines only. */
    Status flushL2();
    /** Once per session: the event time of a cold sample of an empty kernel, and of nothing. */
    Status measureEventOverhead();
    /** Launches every step once per repetition, without waiting (timing). */
    Status launchAll(Plan &plan, int repeat);
    bool fail(RunResult &result, const Error &error, int step = -1);
    /** Queues 0xFF over request buffers (after the swaps so far) on stream: kpg grade's sentinel. */
    Status fillSentinel(const QList<int> &buffers, const Plan &plan, CUstream stream);
    /** The allocations with guards, and (owner) the index of each one's buffer. */
    std::vector<GuardZonesDevice::Zone> guardZones(std::vector<size_t> *owner) const;
    /**
     * Checks every buffer's guards after the work queued so far; step -1:
     * after the timing samples. enqueued: the comparison was queued with
     * GuardZonesDevice::enqueueCheck and the stream synchronised since.
     */
    bool checkGuards(const Plan &plan, int step, int repetition, RunResult &result, bool enqueued = false);

    Status ensureContext(int ordinal);
    Status loadModule(const QByteArray &image);
    Status setupBuffers(const QList<RunBuffer> &buffers);
    Status upload(double *ms);
    Status download(const std::vector<int> &perm, double *ms);
    /** Waits for an event with a deadline; polls so that a hung kernel can be reported. */
    Status waitEvent(CUevent event, std::chrono::steady_clock::time_point deadline, const QString &what);
    Status launch(const Step &step, const std::vector<int> &perm, CUstream stream = nullptr);
    // Streams, events and the timeline (run/streamexec.cpp).
    bool setupStreams(const RunRequest &request, Plan &plan, RunResult &result);
    bool streamedRun(Plan &plan, RunResult &result);
    Status issueStreamed(Plan &plan);
    void streamPasses(const RunRequest &request, Plan &plan, RunResult &result);
    Error cudaError(CUresult r, const char *call) const;
    void resetPrintf();
    QString takePrintf(bool *truncated);
    /** Lets go of every driver object without freeing it: a poisoned context is torn down by the process exit. */
    void abandonDeviceObjects() noexcept;

    const DriverApi *m_api = nullptr;
    int m_ordinal = -1;
    CUdevice m_device = 0;
    // Driver objects, the context first: members are destroyed in reverse
    // order, so everything made in the context is freed before it is released.
    Cuda::PrimaryContext m_context;
    Cuda::Stream m_stream;
    std::array<Cuda::Event, 4> m_ev;
    Cuda::Module m_blockerModule;
    CUfunction m_blocker = nullptr;     ///< owned by m_blockerModule
    CUfunction m_flushKernel = nullptr; ///< owned by m_blockerModule
    CUfunction m_emptyKernel = nullptr; ///< owned by m_blockerModule
    int m_smCount = 1;
    double m_eventOverheadMs = -1; ///< -1: not measured yet
    double m_eventPairMs = -1;
    Cuda::PinnedHostMemory m_blockFlagMemory;
    volatile unsigned *m_blockFlag = nullptr; ///< m_blockFlagMemory
    CUdeviceptr m_blockFlagDev = 0;           ///< its device alias
    Cuda::DeviceMemory m_l2Flush;
    qint64 m_l2FlushBytes = 0;
    Cuda::Module m_module;
    QByteArray m_moduleHash;
    std::vector<std::unique_ptr<DeviceBuffer>> m_buffers;
    GuardZonesDevice m_guards;
    SampleReset m_sampleReset; ///< timing.resetBeforeEachSample: the uploaded contents, restored before each sample
    std::vector<CUdeviceptr> m_sampleResetTargets;
    qint64 m_guardBytes = Guard::kGuardBytes; ///< for buffers allocated from now on; 0 under the sanitizer
    /** Every guard held its pattern when the last run ended (its last check came after its last kernel). */
    bool m_guardsClean = false;
    /** The texture and surface objects of the current run (run/texturebindings.h); null without any. */
    std::unique_ptr<TextureBindings> m_textures;
    std::unique_ptr<StreamExec> m_exec;          ///< streams and events of the current request
    std::unique_ptr<AccessTraceDevice> m_access; ///< the memory-access map's records, for this run only
    int m_accessStep = -1;                       ///< RunRequest::accessStep of that run
    LaunchLimits m_deviceLimits;
    QString m_deviceName;
    int m_printfFd = -1;
    bool m_mustExit = false;
};

} // namespace Kp
