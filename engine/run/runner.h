#pragma once

#include "buffers/sharedmemory.h"
#include "compile/compiletypes.h"
#include "core/result.h"
#include "project/project.h"
#include "run/runrequest.h"
#include "run/runtypes.h"

#include <QHash>
#include <QList>
#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QVariantMap>

#include <functional>
#include <memory>

namespace Kp {

class EngineClient;

/** One buffer's host copy: its resolved shape and the shared memory holding it. */
struct HostBuffer
{
    BufferSpec spec;        ///< as the project gives it
    QList<qint64> shape;    ///< resolved (from the file for npy/image inits)
    SharedMemory memory;    ///< exactly spec.dtype elements x shape, in C order
    quint64 generation = 0; ///< bumped whenever the contents change (init or a run's download)
    bool filled = false;    ///< false while only Fill::ShapesOnly made it: the contents are not its init yet

    qint64 elementCount() const;
    qint64 byteSize() const;
};

/**
 * The host copies of a project's buffers, in shared memory. They outlive
 * runs and workers: a faulting kernel never touches them, because results are
 * downloaded only after every launch succeeded. Owned by the GUI's document
 * or by kpg; not thread-safe (the engine thread only reads the memory's path
 * and size while a run is in flight).
 */
class HostBuffers
{
public:
    /** What materialize() does with the contents. */
    enum class Fill {
        Contents,  ///< fill every buffer from its init
        ShapesOnly ///< resolve shapes and create the memory (fresh pages cost nothing) but fill nothing
    };

    /**
     * Creates or refills the host copy of every buffer from its init. A
     * buffer whose spec is unchanged keeps its memory and contents unless
     * reinit is true. Buffers no longer in the project are dropped.
     * Fill::ShapesOnly is enough for prepareRun() to check bindings, so a
     * typo in a large project is reported before seconds of filling; a later
     * Fill::Contents fills what it left unfilled even without reinit.
     */
    Status materialize(const Project &project, bool reinit = true, Fill fill = Fill::Contents);
    /** True when every buffer holds its init or later contents (none left by Fill::ShapesOnly). */
    bool allFilled() const;

    const HostBuffer *find(const QString &name) const;
    HostBuffer *find(const QString &name);
    const QList<std::shared_ptr<HostBuffer>> &all() const { return m_buffers; }

private:
    QList<std::shared_ptr<HostBuffer>> m_buffers;
};

/** The variables expressions see: scalars by name, and a.n, a.nx, a.ny, a.nz for every buffer a. */
QMap<QString, double> expressionVariables(const Project &project, const HostBuffers &buffers);

/**
 * The kernel a launch step names: "k", "k<16>" (spaces ignored), or an
 * unqualified name for a kernel inside a namespace. Null when none matches.
 */
const KernelInfo *findKernel(const QList<KernelInfo> &kernels, const QString &name);

/** The compile options for a project: its own, plus a name expression for every templated launch step. */
CompileOptions compileOptionsFor(const Project &project);

/** A run ready to send to kpg-worker. */
struct PreparedRun
{
    RunRequest request;   ///< what the worker runs
    QStringList warnings; ///< binding mismatches that are allowed but suspicious
    double bytes = 0;     ///< throughput.bytes evaluated; 0 when not given
    double flops = 0;
    int timeoutMs = 60000; ///< for the whole request (the worker enforces the per-launch one)
};

/**
 * Resolves everything the worker should not have to know: the kernel of
 * each step in the compile result, grid/block/shared expressions, and the
 * argument bytes, checked against the kernel's parsed signature (count,
 * pointer vs value, element type vs dtype, offsets in range and aligned).
 * Messages name the field: "launches[0].args[2] (parameter 'n', int): ...",
 * and an error about one field carries its JSON path in Error::path
 * ("launches[0].args[2]", "launches[0].grid[1]") for panels to mark it.
 * Needs no GPU, so it is tested in CI. Any thread.
 */
Result<PreparedRun> prepareRun(const Project &project, const CompileResult &compiled, const HostBuffers &buffers,
                               int device);

/** Fills in throughput from the run's median. */
void applyThroughput(RunResult &result, double bytes, double flops);

/**
 * Runs projects through an EngineClient and handles the fault path: after a
 * kernel fault, a time-out or a dead worker the result carries the error, the
 * host copies are as they were before the run, and a fresh worker is started
 * at once with those buffers restored on the device, so the next run starts
 * without waiting. Lives on the thread that uses it (GUI or kpg main).
 */
class Runner : public QObject
{
    Q_OBJECT
public:
    explicit Runner(EngineClient *client, QObject *parent = nullptr);

    using Callback = std::function<void(const RunResult &)>;

    /**
     * Sends a prepared run. The callback runs on this object's thread;
     * buffers must stay alive until then. After a successful run the host
     * copies hold the results.
     */
    void run(const PreparedRun &prepared, HostBuffers *buffers, Callback callback);
    /** Runs and waits (kpg). Never on the engine thread. */
    RunResult runSync(const PreparedRun &prepared, HostBuffers *buffers);

    /** Stops the run in flight at once (the worker is killed; buffers are kept). */
    void abort();

    /** Milliseconds from the last fault to the fresh worker being ready (-1 if none yet). */
    double lastRecoveryMs() const { return m_lastRecoveryMs; }

Q_SIGNALS:
    /** A fresh worker is ready after a fault, with the buffers restored on the device. */
    void recovered(double ms);

private:
    RunResult finish(const PreparedRun &prepared, HostBuffers *buffers, const Result<QVariantMap> &reply);
    void recover(const PreparedRun &prepared);

    EngineClient *m_client;
    double m_lastRecoveryMs = -1;
};

} // namespace Kp
