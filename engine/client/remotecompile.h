#pragma once

#include "client/target.h"
#include "compile/compiler.h"
#include "core/result.h"

#include <QByteArray>
#include <QMutex>

#include <optional>

namespace Kp {

/**
 * Remote compiling (docs/remote.md, "What travels"): for a machine that
 * cannot load NVRTC, `kpg-compiler --serve --remote` runs on the ssh target,
 * over its own connection made with the same ssh command as the worker's, and
 * speaks the compiler's frames (the same NvrtcJob and NvrtcOutput as a local
 * kpg-compiler). It sandboxes itself there and names its NVRTC in its hello.
 * The checks, the options, the cache and the reading of the output stay here
 * (Compiler::compile through Compiler::setNvrtcFallback).
 *
 * Plain blocking I/O on a socket pair, like CompilerProcess: compiles run on
 * threads without an event loop. run() and nvrtc() are thread-safe (one job at
 * a time); the connection is started on first use, kept warm, and started
 * again after a failure.
 */
class RemoteCompiler
{
public:
    explicit RemoteCompiler(Target target);
    ~RemoteCompiler();
    RemoteCompiler(const RemoteCompiler &) = delete;
    RemoteCompiler &operator=(const RemoteCompiler &) = delete;

    /**
     * The remote NVRTC (connecting first when needed), with run bound to this
     * object, or why there is none: the target unreachable (Target's one
     * message), kpg-compiler missing there, or no NVRTC there either.
     */
    Result<NvrtcElsewhere> nvrtc();

    /** Runs one job there; Timeout after timeoutMs (the connection is then closed), WorkerDied when it dropped. */
    Result<NvrtcOutput> run(const NvrtcJob &job, int timeoutMs);

    /**
     * Makes Compiler::compile turn to the ssh target of $KPG_TARGET (or a
     * Slurm target's login node) when NVRTC cannot be loaded here (one
     * RemoteCompiler per target, kept for the process). Called once by kpg
     * and the GUI at start. With a local target, or a Slurm target without
     * a login node, the local error stands, extended by what to do.
     */
    static void install();

    /** How long the connection and the remote hello may take. */
    static constexpr int kStartTimeoutMs = 40000;

private:
    Status start();
    Result<QVariantMap> exchange(const QVariantMap &body, const QString &type, int timeoutMs);
    /** Closes the connection and reaps ssh; its wait status, or -1. */
    int stop();
    /** Why ssh or the remote kpg-compiler ended, in one message naming the target. */
    Error endedError(int status, bool started, const QString &during);
    void drainStderr();

    Target m_target;
    QMutex m_mutex;
    int m_pid = 0;
    int m_fd = -1;  ///< frames: ssh's stdin and stdout
    int m_err = -1; ///< ssh's stderr
    QByteArray m_stderr;
    quint64 m_nextId = 1;
    std::optional<NvrtcElsewhere> m_info;
};

} // namespace Kp
