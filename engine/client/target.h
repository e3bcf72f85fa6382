#pragma once

#include "core/result.h"

#include <QString>
#include <QStringList>

namespace Kp {

/**
 * Where kpg-worker runs (docs/remote.md): here ("local"), on a host reached
 * through the system's OpenSSH client ("ssh://[user@]host[:port][/path/to/kpg-worker]"),
 * or on a Slurm node allocated by srun, run here or on a login node reached by
 * ssh ("slurm:partition=gpu,gpus=1,time=30,via=ssh://login"). A remote
 * worker is started as `kpg-worker --stdio` and speaks the framed protocol on
 * the command's standard streams, so ssh's own configuration, agent, keys,
 * ProxyJump and known_hosts apply and nothing here handles keys or crypto.
 *
 * A plain value; any thread.
 */
struct Target
{
    enum class Kind { Local, Ssh, Slurm };
    Kind kind = Kind::Local;
    QString spec; ///< as the user wrote it (normalised: "local" when empty)

    // ssh, and the login node of a Slurm target ("via")
    QString user;
    QString host;
    int port = 0; ///< 0: ssh's own choice (its config, else 22)
    /** The remote kpg-worker; "kpg-worker" (looked for on the remote PATH) when the target names none. */
    QString workerPath;

    // slurm
    QString partition;
    int gpus = 1;
    QString timeLimit;              ///< srun --time; empty: the partition's default
    QString account;                ///< srun --account; empty: the user's default
    int allocationWaitSeconds = 60; ///< srun --immediate: how long the allocation may take
    bool viaSsh = false;            ///< srun runs on the login node user@host:port above

    bool isRemote() const { return kind != Kind::Local; }

    /** The target named in messages: "ssh://lab-gpu-01:2222", "slurm:partition=gpu (via ssh://login)". */
    QString displayName() const { return spec; }

    /**
     * Parses a target. Empty or "local" is this machine. Every wrong part is
     * named with the values allowed ("ssh://host:99999: the port must be 1 to 65535").
     */
    static Result<Target> parse(const QString &spec);

    /**
     * The target this process uses when none is passed: $KPG_TARGET, else
     * local. kpg's --target sets that variable, so every command and every
     * EngineClient sees one choice.
     */
    static Result<Target> fromEnvironment();

    /**
     * The program and arguments that start `kpg-worker --stdio` on the
     * target: ssh -T -o BatchMode=yes ... host 'exec' 'path' '--stdio', or
     * srun ... path --stdio (itself through ssh with a login node). ssh is
     * $KPG_SSH or "ssh"; $KPG_SSH_CONFIG is passed as `-F` (tests point ssh
     * at their own config this way, never at the user's ~/.ssh).
     */
    QStringList command() const;

    /**
     * The program and arguments that start `kpg-compiler --serve --remote`
     * on an ssh target, or on a Slurm target's login node (via=ssh://...)
     * (remote compiling, client/remotecompile.h): the same ssh command, with
     * kpg-compiler from the worker's folder (on the remote PATH when the
     * target names no folder). Empty for local targets and Slurm targets
     * without a login node: a Slurm node is not allocated for compiling.
     */
    QStringList compilerCommand() const;

    /**
     * Why a remote worker's command ended before or during its work, in one
     * sentence naming the target: host unreachable, authentication refused,
     * host key not trusted, remote kpg-worker missing, connection dropped,
     * Slurm allocation refused or timed out, the allocation ended. stderr is
     * what ssh or srun wrote; handshakeDone says whether the worker had
     * answered. Returns an empty string when stderr shows none of these (the
     * worker itself ended; the caller says so as for a local worker).
     */
    QString explainFailure(const QString &stderrText, int exitCode, bool handshakeDone) const;
};

} // namespace Kp
