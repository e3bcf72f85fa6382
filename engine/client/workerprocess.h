#pragma once

#include <QObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QStringList>

class QSocketNotifier;

namespace Kp {

/**
 * kpg-worker's process, as the Supervisor needs it: a program with
 * arguments and an environment, stdout to /dev/null, stderr read as it
 * comes, and its end. Backed by QProcess, or by posix_spawn with a pidfd
 * watched for the end: under a CUDA profiler that follows the process tree
 * (ncu --target-processes all), a QProcess start crashed kpg (a thread of
 * the profiler's interceptor jumped to address 0) while posix_spawn, as
 * kpg-compiler is started, worked. posix_spawn is used when the profiler's
 * variables are set (run/timingstop.h, profilerInjectionVariable(): NV_TPS_LAUNCH_TOKEN,
 * NV_NSIGHT_INJECTION_TRANSPORT_TYPE, CUDA_INJECTION64_PATH) or KPG_WORKER_SPAWN=posix; KPG_WORKER_SPAWN=qprocess
 * forces QProcess. GUI thread (or the Supervisor's) only.
 */
class WorkerProcess : public QObject
{
    Q_OBJECT
public:
    explicit WorkerProcess(QObject *parent = nullptr);
    ~WorkerProcess() override;

    /** Whether start() will use posix_spawn (see the class comment). */
    static bool usePosixSpawn();

    void setProgram(const QString &program) { m_program = program; }
    void setArguments(const QStringList &arguments) { m_arguments = arguments; }
    void setProcessEnvironment(const QProcessEnvironment &env) { m_env = env; }
    /**
     * Frames on the child's stdin and stdout instead of a socket (a remote
     * target's ssh or srun): channel() is then the QIODevice to read and
     * write. Always QProcess: such a child is ssh or srun, never a CUDA
     * process a profiler follows.
     */
    void setStdio(bool stdio) { m_stdio = stdio; }
    void start();
    /** With setStdio(true), after start(): the child's stdin/stdout; else nullptr. */
    QIODevice *channel() const;

    QProcess::ProcessState state() const;
    bool waitForFinished(int msecs);
    void kill();
    QByteArray readAllStandardError();
    int exitCode() const;
    QProcess::ExitStatus exitStatus() const;
    QString errorString() const;

Q_SIGNALS:
    void readyReadStandardError();
    void errorOccurred(QProcess::ProcessError error);
    void finished();

private:
    void readStderr();
    /** Reaps the child when it has ended; true once it has. */
    bool reap(bool block);

    QString m_program;
    bool m_stdio = false;
    QStringList m_arguments;
    QProcessEnvironment m_env = QProcessEnvironment::systemEnvironment();
    QProcess *m_qprocess = nullptr; ///< the QProcess backend; nullptr with posix_spawn
    // posix_spawn backend
    qint64 m_pid = -1;
    int m_pidfd = -1;
    int m_stderrFd = -1;
    bool m_ended = false;
    int m_exitCode = 0;
    QProcess::ExitStatus m_exitStatus = QProcess::NormalExit;
    QString m_error;
    QByteArray m_stderr;
    QSocketNotifier *m_endNotifier = nullptr;
    QSocketNotifier *m_stderrNotifier = nullptr;
};

} // namespace Kp
