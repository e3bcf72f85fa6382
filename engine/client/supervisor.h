#pragma once

#include "client/remotebuffers.h"
#include "client/target.h"
#include "engineclient.h"
#include "worker/protocol.h"

#include <QByteArray>
#include <QElapsedTimer>
#include <QList>
#include <QObject>

#include <functional>
#include <optional>

class QIODevice;
class QTimer;

namespace Kp {

class LocalChannel;
class LocalListener;
class WorkerProcess;

/**
 * Lives on the engine thread (private to EngineClient). Owns the worker
 * process and its socket, queues requests, sends them one at a time, and turns
 * every way a worker can fail into an Error for the request that was running.
 */
class Supervisor : public QObject
{
    Q_OBJECT
public:
    struct Job
    {
        QString type;
        QVariantMap body;
        RequestOptions options;
        std::function<void(const Reply &)> done;
        quint64 id = 0;
        qint64 uploaded = 0;   ///< remote targets: buffer bytes sent for this request
        qint64 downloaded = 0; ///< remote targets: buffer bytes received with its reply
    };

    explicit Supervisor(const WorkerLaunch &launch = {}, QObject *parent = nullptr);
    ~Supervisor() override;

    void submit(Job job);
    /** Kills the worker if it is running a request, which then fails with Cancelled. */
    void abortCurrent();
    /** Ends the worker politely (then by force) and fails what is queued. */
    void shutdown();
    /**
     * Later requests go to target: the worker is stopped (a request it runs
     * fails with Cancelled) and the next request starts one there.
     */
    void setTarget(const QString &target);

Q_SIGNALS:
    void workerStarted(qint64 pid);
    void workerExited(const QString &reason);
    /** Remote targets: the buffer bytes a request sent and received, emitted before its callback runs. */
    void transferred(qint64 uploaded, qint64 downloaded);
    /** Remote targets: the running request's buffer bytes sent (upload) or received so far, of total. */
    void transferProgress(qint64 done, qint64 total, bool upload);

private:
    enum class State { Idle, Starting, Ready };

    void startWorker();
    /** A remote target: ssh or srun starts kpg-worker --stdio; frames on its stdin and stdout. */
    void startRemote();
    /** Sends the current request's buffer pieces while the channel takes them, then the request. */
    void pumpUpload();
    /** transferProgress(), at most every 100 ms unless final (done == total). */
    void reportProgress(qint64 done, qint64 total, bool upload, bool force = false);
    /** The error of a request whose worker went away, in the target's words when it is remote. */
    Error goneError(const QString &reason, const QString &tail, bool wasStarting, const QString &type) const;
    /** A remote worker's error names the target ("ssh://lab-gpu-01: no NVIDIA driver ..."). */
    Error fromTarget(Error e) const;
    void onConnection(Kp::LocalChannel *channel);
    void onReadyRead();
    void onWorkerGone();
    void stopWorker(const QString &reason, bool graceful = false);
    void onStartTimeout();
    void onRequestTimeout();
    void pump();
    void send(const Protocol::Message &message);
    void finish(Job &job, const Reply &reply);
    void failQueue(const Error &error);
    /** graceful: wait WorkerLaunch::exitWaitMs for a worker that is ending itself before killing it. */
    void teardown(bool graceful = false);
    QString stderrTail() const;

    State m_state = State::Idle;
    LocalListener *m_server = nullptr;
    WorkerProcess *m_process = nullptr;
    LocalChannel *m_socket = nullptr;
    QIODevice *m_channel = nullptr; ///< m_socket, or a remote target's ssh/srun stdin and stdout
    Target m_target;                ///< resolved when a worker starts
    RemoteBuffers m_buffers;        ///< what a remote worker holds of the buffers
    bool m_uploading = false;       ///< the current request's buffer pieces are still going out
    qint64 m_uploadReported = 0;    ///< the current request's upload bytes last reported as sent
    qint64 m_downloadTotal = 0;     ///< the worker's announced bytes of changed buffers for the current request
    QElapsedTimer m_progressClock;  ///< since the last transferProgress()
    bool m_copyBuffers = false;     ///< the worker cannot map the buffers (remote, sandboxed): they go in frames
    QTimer *m_startTimer = nullptr;
    QTimer *m_requestTimer = nullptr;
    Protocol::FrameDecoder m_decoder;
    QList<Job> m_queue;
    std::optional<Job> m_current;
    quint64 m_helloId = 0;
    quint64 m_nextId = 1;
    qint64 m_pid = 0;
    QByteArray m_stderr;
    bool m_shuttingDown = false;
    WorkerLaunch m_launch;
    bool m_started = false; ///< a worker was started once (WorkerLaunch::single)
};

} // namespace Kp
