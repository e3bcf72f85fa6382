#pragma once

#include "core/result.h"
#include "cuda/deviceinfo.h"

#include <QMutex>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <QThread>
#include <QVariantMap>

#include <atomic>
#include <functional>

namespace Kp {

class Supervisor;

/** A worker's answer: the reply body, or why there is none. */
using Reply = Result<QVariantMap>;
using ReplyCallback = std::function<void(const Reply &)>;

struct RequestOptions
{
    /** The request fails, and the worker is killed and later restarted, after this long in the worker. */
    int timeoutMs = 30000;
    /**
     * Requests with the same non-empty tag supersede each other: a newer one
     * cancels an older one still waiting in the queue (its callback receives
     * Error::Code::Cancelled). Compile-as-you-type relies on this.
     */
    QString tag;
};

/**
 * How the worker process is started. The default is kpg-worker itself; a
 * memory check starts it under compute-sanitizer (docs/memory-checking.md),
 * which must be left to finish after the worker ends, or it writes no report.
 */
struct WorkerLaunch
{
    /** Program and arguments put before kpg-worker's path ("compute-sanitizer --tool memcheck ..."). */
    QStringList prefix;
    /**
     * Where the worker runs (client/target.h, docs/remote.md): "local",
     * "ssh://[user@]host[:port][/path/to/kpg-worker]" or "slurm:...". Empty:
     * $KPG_TARGET, else local; kpg's --target sets that variable, so one
     * choice reaches every EngineClient of the process.
     */
    QString target;
    /** How long a starting worker has to answer the handshake. */
    int startTimeoutMs = 15000;
    /** How long an ending worker (after shutdown or a fault) may take before it is killed. */
    int exitWaitMs = 2000;
    /**
     * Start one worker only: once it has ended, requests fail instead of
     * starting another (a second sanitizer would overwrite the first's report).
     */
    bool single = false;
};

/**
 * The engine's door to kpg-worker. It owns the engine thread; the worker
 * process is started there on the first request, supervised (death, time-outs)
 * and restarted for the next request after it dies.
 *
 * Create and destroy it on one thread (the GUI or kpg's main thread); request()
 * may be called from any thread. Requests run one at a time, in order.
 */
class EngineClient : public QObject
{
    Q_OBJECT
public:
    explicit EngineClient(QObject *parent = nullptr);
    /** A client whose worker is started as launch says (a prefix such as compute-sanitizer). */
    explicit EngineClient(const WorkerLaunch &launch, QObject *parent = nullptr);
    /** Asks the worker to shut down (kills it after 2 s) and joins the engine thread. */
    ~EngineClient() override;

    /**
     * Sends a request. The callback runs on context's thread through its event
     * loop, and is dropped if context is destroyed first (a closed panel never
     * receives a result). With a null context it runs on the engine thread.
     */
    void request(const QString &type, const QVariantMap &body, QObject *context, ReplyCallback callback,
                 RequestOptions options = {});

    /** Sends a request and waits for the reply. Never call it on the engine thread. */
    Reply requestSync(const QString &type, const QVariantMap &body = {}, RequestOptions options = {});

    /** What listDevices() hands its callback. */
    using DeviceListCallback = std::function<void(const Result<DeviceList> &)>;

    /**
     * Asks the worker for the driver's version and its GPUs. The callback runs
     * on context's thread as for request(), and not at all once context is
     * gone. Without a driver or a GPU it receives NoDriver or NoDevice. Any
     * thread.
     */
    void listDevices(QObject *context, DeviceListCallback callback, int timeoutMs = 30000);

    /**
     * listDevices() for kpg: waits for the answer. Never on the engine
     * thread. On a machine without a driver the worker still starts and says
     * so, so this returns NoDriver rather than waiting.
     */
    Result<DeviceList> listDevicesSync(int timeoutMs = 30000);

    /**
     * Measures a round trip to the worker: a ping sent and answered, timed
     * on the engine thread (the wait in this thread's event loop is left
     * out). Starts a worker when none runs, which is then included. The
     * callback gets milliseconds, or why there was no answer; it runs on
     * context's thread, and not at all once context is gone. Any thread.
     */
    void roundTrip(QObject *context, std::function<void(const Result<double> &)> callback, int timeoutMs = 15000);

    /**
     * Stops the request the worker is running now, at once: the worker is
     * killed (a spinning kernel cannot be interrupted otherwise), the request
     * fails with Cancelled ("aborted"), and queued requests go to a fresh
     * worker. Does nothing when the worker is idle. Any thread.
     */
    void abortCurrent();

    /**
     * On a remote target, the bytes of buffer data the last finished request
     * sent to the worker and received back (docs/remote.md, "What travels");
     * 0 for a local worker, which maps the buffers instead. Thread-safe; true
     * when that request's callback runs.
     */
    qint64 lastUploadBytes() const { return m_uploaded.load(); }
    qint64 lastDownloadBytes() const { return m_downloaded.load(); }

    /**
     * Sends the following requests to another target ("local", "ssh://...",
     * "slurm:..."; client/target.h). The worker now running is stopped (a
     * request it is running fails with Cancelled, naming the new target);
     * queued requests and everything after go to a worker started on the new
     * target. The caller checks the spec first (Target::parse); a wrong one
     * makes the next request fail with its message. Any thread.
     */
    void setTarget(const QString &target);

    /** The process id of the running worker, or 0. Thread-safe. */
    qint64 workerPid() const { return m_workerPid.load(); }

    /** The engine <-> kpg-worker protocol version this engine speaks (for --version). */
    static int protocolVersion();

    /**
     * The target a request would go to now, as written ("local",
     * "ssh://lab-gpu-01"), or why it is wrong. Any thread.
     */
    QString targetName() const;

    /** Where kpg-worker is looked for: $KPG_WORKER, else next to this program. */
    static QString workerPath();

Q_SIGNALS:
    /** A fresh worker answered the handshake. */
    void workerStarted(qint64 pid);
    /** The worker exited or was killed; reason says how. */
    void workerExited(const QString &reason);
    /**
     * A remote target's buffer transfer of the running request moved on:
     * done of total bytes sent to the worker (upload) or received from it.
     * Emitted on the engine thread at most every 100 ms and once at the end
     * (done == total); queued to receivers on other threads. abortCurrent()
     * stops a transfer like any request.
     */
    void transferProgress(qint64 done, qint64 total, bool upload);

private:
    QThread m_thread;
    Supervisor *m_supervisor = nullptr;
    std::atomic<qint64> m_workerPid{0};
    std::atomic<qint64> m_uploaded{0};
    std::atomic<qint64> m_downloaded{0};
    mutable QMutex m_targetMutex; ///< m_target: set on one thread, read on any
    QString m_target;
};

} // namespace Kp
