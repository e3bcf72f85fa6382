#pragma once

#include "nvrtcjob.h"
#include "worker/protocol.h"

#include <QByteArray>
#include <QHash>
#include <QMutex>
#include <QString>
#include <QStringList>

#include <atomic>
#include <memory>

class QProcessEnvironment;
class QTemporaryDir;

namespace Kp {

/**
 * Takes a CUDA profiler's injection (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH
 * and its LD_PRELOAD libraries) out of kpg-compiler's environment; the
 * environment is left as it is when no profiler is injected.
 */
void withoutProfilerInjection(QProcessEnvironment &env);

/**
 * kpg-compiler's environment: of the parent's, only the loader's and the
 * sanitizers' variables and kpg-compiler's own (a profiler's injection taken
 * out as above); nothing else of the environment can reach a diagnostic.
 */
QProcessEnvironment compilerEnvironment(const QProcessEnvironment &parent);

/**
 * The parent's side of kpg-compiler: starts it once, keeps it warm (NVRTC's
 * PCH and loaded libraries stay hot), sends one NvrtcJob at a time and waits
 * for the answer with a time limit.
 *
 * Plain blocking calls on a socket pair, not a Supervisor with an event loop:
 * Compiler::compile is synchronous and runs on whatever thread calls it (a
 * CompileService pool thread, kpg's main thread), so no thread needs an event
 * loop and none is added.
 *
 * Heavy headers: a job with -pch whose leading directives (NvrtcJob::
 * headerPrefix) have no precompiled header in this process yet is compiled
 * without -pch, as fast as plain NVRTC, and once it has answered the process
 * compiles those directives alone with -pch while the caller looks at the
 * answer. The next job with the same directives and options then uses that
 * header (NVRTC's automatic PCH makes a first compile about 1.5x slower
 * than one without, and its later ones several times faster). A job sent
 * while that header is still being made waits for it, within its own time
 * limit; cancel() then ends the wait and leaves the header to finish.
 *
 * The process is sandboxed with Landlock to the CUDA toolkit, NVRTC's and the
 * system's library folders, a private temporary folder and the user folders
 * of the job (Sandbox::FsPolicy). Landlock cannot be relaxed once applied, so
 * a job with other user folders restarts the process.
 *
 * run() is thread-safe (jobs are serialised); cancel() may be called from any
 * thread. Owned by Compiler.
 */
class CompilerProcess
{
public:
    CompilerProcess();
    ~CompilerProcess();

    /**
     * Runs the job in the child. userDirs are the folders its sources may
     * include from (project folder, include folders). Errors: WorkerStart (no
     * kpg-compiler), WorkerDied (it crashed; with apiCall "RLIMIT_AS" and
     * memoryMessage() as the message when it ran past memoryLimitMiB), Timeout
     * (killed after timeoutMs), Cancelled (cancel() was called), Protocol.
     * memoryLimitMiB limits the address space of the process for this job;
     * 0: memoryLimitMiB() (the environment's or the default).
     */
    Result<NvrtcOutput> run(const NvrtcJob &job, const QStringList &userDirs, int timeoutMs, qint64 memoryLimitMiB = 0);

    /**
     * Spawns the process for userDirs now, if it is not running for them
     * already, and returns without waiting for it: its start (NVRTC's
     * libraries loaded, the sandbox applied) then overlaps other work, such
     * as the worker's start. The next run() with the same folders greets it
     * and uses it. Call it on the thread that will run the jobs: the child
     * dies with the thread that spawned it (PR_SET_PDEATHSIG).
     */
    Status warmUp(const QStringList &userDirs);

    /** Kills the job now running, if any; its run() returns Cancelled. The next job starts a fresh process. */
    void cancel();

    /** Stops the process (it is started again by the next run()). */
    void stop();

    /** One line: "sandboxed (Landlock ABI 7)", or why not; empty before the first start. */
    QString sandboxState() const;

    /**
     * The memory limit of a compile in MiB: $KPG_COMPILER_MEMORY_LIMIT when set
     * (an Error naming it when it is not a whole number from kMinMemoryLimitMiB),
     * else defaultMemoryLimitMiB().
     */
    static Result<qint64> memoryLimitMiB();
    /**
     * Half of the machine's memory shared by as many compiles as run at once
     * by default (one per core, at most 16), from 2 GiB to 8 GiB.
     */
    static qint64 defaultMemoryLimitMiB();
    /** "the compiler used more than 2048 MiB on this source and was stopped" */
    static QString memoryMessage(qint64 mib);
    /** Below this, NVRTC cannot even start (its libraries map about 400 MiB with a precompiled header). */
    static constexpr qint64 kMinMemoryLimitMiB = 256;
    /** Above this, a limit is no limit: 1 TiB. */
    static constexpr qint64 kMaxMemoryLimitMiB = 1024 * 1024;

    /** $KPG_COMPILER, else kpg-compiler next to the running program. */
    static QString programPath();

private:
    /** Spawns the process (the hello is finishStart()'s). */
    Status start(const QStringList &userDirs);
    /** Greets the spawned process and waits for its answer (sandbox state). */
    Status finishStart();
    /**
     * Starts the process for userDirs unless it runs for them already, and
     * with greet waits for its hello (m_runMutex held).
     */
    Status ensureStarted(const QStringList &userDirs, bool greet);
    /** Sends one request and waits for its answer's body; on any failure the process is gone afterwards. */
    Result<QVariantMap> exchange(const Protocol::Message &request, int timeoutMs);
    /** Kills and reaps the process; its wait status (or -1 when there was none). */
    int stopAfterFailure();
    /** Sends the prefix job that makes a precompiled header, and returns without its answer. */
    void startHeader(const NvrtcJob &prefix, const QByteArray &key, qint64 memoryLimitMiB);
    /**
     * Waits for the header that startHeader() asked for, at most timeoutMs; an
     * error only when cancel() ended the wait (the header goes on being made).
     * A process that died or ran out of time making it is gone afterwards.
     */
    Status awaitHeader(int timeoutMs);

    QMutex m_runMutex;           // one job at a time
    mutable QMutex m_stateMutex; // m_pid and m_busy, for cancel()
    int m_pid = 0;
    bool m_busy = false;
    std::atomic<bool> m_cancelled{false};
    int m_fd = -1;
    QStringList m_userDirs;
    QString m_sandboxState;
    std::unique_ptr<QTemporaryDir> m_tempDir;
    quint64 m_nextId = 1;
    bool m_helloPending = false; ///< spawned, not greeted yet (warmUp())
    qint64 m_memoryLimitMiB = 0; // of the job now running, for its message
    /** Precompiled headers of this process, by key: true made (send -pch), false failed (never again). */
    QHash<QByteArray, bool> m_headers;
    QByteArray m_headerKey;       ///< the header being made now; empty when none
    quint64 m_headerId = 0;       ///< its request's id
    bool m_waitingHeader = false; ///< a run() waits for it (m_stateMutex): cancel() ends the wait, kills nothing
};

} // namespace Kp
