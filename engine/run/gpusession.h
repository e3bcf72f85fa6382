#pragma once

#include "buffers/sharedmemory.h"
#include "core/result.h"
#include "run/runrequest.h"
#include "run/runtypes.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QVariantMap>

#include <cuda.h>

#include <chrono>
#include <memory>
#include <vector>

namespace Kp {

class DriverApi;

/**
 * The GPU side of a run, inside kpg-worker: one primary context, one stream,
 * the loaded module and the device buffers, kept between requests so that a
 * second run with the same buffers skips mapping and registering them.
 *
 * run() and prepare() take the request bodies described in
 * docs/ARCHITECTURE.md ("Running a kernel"). A fault is an ordinary result:
 * RunResult::error is set and mustExit() turns true when the context can no
 * longer be trusted (every error after the driver saw a launch), so the worker
 * replies and then ends itself. Single-threaded.
 */
class GpuSession
{
public:
    GpuSession();
    ~GpuSession();

    /** Compiles nothing: loads request.image, uploads, launches, times, downloads. The reply is a RunResult. */
    QVariantMap run(const RunRequest &request);
    /** Creates the context and restores request.buffers on the device (after a fault). */
    Result<QVariantMap> prepare(const RunRequest &request);

    bool mustExit() const { return m_mustExit; }

private:
    struct DeviceBuffer
    {
        QString path;
        quint64 id = 0; ///< the engine's SharedMemory::id(): paths get reused, ids do not
        qint64 bytes = 0;
        SharedMemory host;
        bool registered = false;
        CUdeviceptr dev = 0;
    };
    struct Step;

    Status ensureContext(int ordinal);
    Status loadModule(const QByteArray &image);
    Status setupBuffers(const QList<RunBuffer> &buffers);
    void releaseBuffer(DeviceBuffer &b);
    Status upload(double *ms);
    Status download(const std::vector<int> &perm, double *ms);
    /** Waits for an event with a deadline; polls so that a hung kernel can be reported. */
    Status waitEvent(CUevent event, std::chrono::steady_clock::time_point deadline, const QString &what);
    Status launch(const Step &step, const std::vector<int> &perm);
    Error cudaError(CUresult r, const char *call) const;
    void resetPrintf();
    QString takePrintf(bool *truncated);

    const DriverApi *m_api = nullptr;
    int m_ordinal = -1;
    CUdevice m_device = 0;
    CUcontext m_context = nullptr;
    CUstream m_stream = nullptr;
    CUevent m_ev[4] = {};
    CUmodule m_module = nullptr;
    QByteArray m_moduleHash;
    CUmodule m_blockerModule = nullptr;
    CUfunction m_blocker = nullptr;
    volatile unsigned *m_blockFlag = nullptr;
    CUdeviceptr m_blockFlagDev = 0;
    CUdeviceptr m_l2Flush = 0;
    qint64 m_l2FlushBytes = 0;
    LaunchLimits m_deviceLimits;
    QString m_deviceName;
    std::vector<std::unique_ptr<DeviceBuffer>> m_buffers;
    int m_printfFd = -1;
    bool m_mustExit = false;
};

} // namespace Kp
