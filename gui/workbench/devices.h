#pragma once

#include "core/result.h"
#include "cuda/deviceinfo.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>
#include <map>
#include <memory>

namespace Kp {

class EngineClient;

/**
 * The GPUs of the target and their workers: one EngineClient (a thread, a
 * kpg-worker process and its CUDA context) per GPU, made on first use, so a
 * fault on one GPU never costs another its state. The list of devices is
 * asked once (refresh()) and shared by every panel: nothing else in the GUI
 * starts a worker to learn what the machine has.
 *
 * The target (docs/remote.md) is this machine or a remote one reached by ssh
 * or Slurm: setTarget() moves every worker there (the same EngineClient
 * objects, so Runners keep theirs) and asks again; the document, its buffers
 * and the run history live elsewhere and are not touched. No widgets; GUI
 * thread only.
 */
class Devices : public QObject
{
    Q_OBJECT
public:
    /** primary is GPU 0's worker, not owned (the program's, made before any window); must outlive this. */
    explicit Devices(EngineClient *primary, QObject *parent = nullptr);
    ~Devices() override;

    /** Asks the worker for the GPUs; changed() tells when the answer is in. */
    void refresh();
    /** True once the answer is in (GPUs found, or why not). */
    bool known() const { return m_known; }
    /** True once a GPU was found: runs can happen. False before the answer and in compile-only mode. */
    bool canRun() const { return m_canRun; }
    /** Why runs cannot happen, in words for a tooltip; empty when they can. */
    QString whyNoRun() const { return m_whyNoRun; }
    /** The status bar's one line: the GPU, or compile-only mode and why. */
    QString summary() const { return m_summary; }
    /** The status line's tooltip: the GPU's bus id and UUID, or the error. */
    QString detail() const { return m_detail; }
    /** The CUDA driver's version ("13.0"), or why there is none. */
    QString driverVersion() const { return m_driverVersion; }
    /** The answer itself: every GPU with its limits (empty before the answer and without a GPU). */
    const DeviceList &list() const { return m_list; }
    /** The answer as the worker gave it: the list, or why there is none. Only once known(). */
    Result<DeviceList> answer() const;

    /** The GPU runs go to (0 = the first). */
    int ordinal() const { return m_ordinal; }
    /** Chooses the GPU runs go to; ordinalChanged() when it changed. */
    void setOrdinal(int ordinal);

    /** The worker of GPU ordinal, started on first use. Owned here. */
    EngineClient &engine(int ordinal);
    /** GPU 0's worker (the program's). */
    EngineClient &primary() { return *m_primary; }

    /** Where the workers run: "local", "ssh://lab-gpu-01", "slurm:..." (as Target::parse normalises it). */
    QString target() const { return m_target; }
    /** The target's host as lists name it ("lab-gpu-01"; "slurm" for a Slurm node); empty for local. */
    QString hostLabel() const { return m_hostLabel; }
    /** A GPU as lists show it: "GPU 0: NVIDIA H200" here, "lab-gpu-01: GPU 0, NVIDIA H200" on a remote target. */
    QString deviceLabel(const DeviceInfo &device) const { return deviceLabel(m_hostLabel, device); }
    /** deviceLabel() for a GPU of host (hostOf(); empty: this machine). */
    static QString deviceLabel(const QString &host, const DeviceInfo &device);
    /** The host label of a target spec ("ssh://ana@lab-gpu-01:2222" -> "lab-gpu-01"); empty for local or a wrong spec.
     */
    static QString hostOf(const QString &spec);
    /**
     * Moves every worker to spec and asks for the GPUs again (changed() when
     * the answer is in). A spec Target::parse refuses changes nothing and
     * returns its message. The spec becomes the newest recent target and
     * the process's KPG_TARGET, so workers made by an engine function
     * (a sweep, a check's reference runs) go there too. Running and queued
     * requests fail with Cancelled; the next run starts a worker there.
     */
    Status setTarget(const QString &spec);
    /** Milliseconds the last devices query took, starting the worker (and its connection) included; -1 before. */
    double queryMs() const { return m_queryMs; }
    /** A remote target's round trip (a ping after the devices answer), in ms; -1 when not measured. */
    double roundTripMs() const { return m_roundTripMs; }

    /** What probe() hands its callback: the devices query's answer and the milliseconds it took. */
    using ProbeCallback = std::function<void(const Result<DeviceList> &answer, double ms)>;
    /**
     * Tests spec as `kpg devices --target spec` does, with a worker of its
     * own that ends after the answer; the workers of the window are not
     * touched. The callback runs on context's thread, and not at all once
     * context is gone.
     */
    void probe(const QString &spec, QObject *context, ProbeCallback callback);

    /** The recent targets from the program's settings, newest first, at most kMaxRecent ("local" is not listed). */
    static QStringList recentTargets();
    /** Puts spec first among the recent targets (local is not kept). */
    static void rememberTarget(const QString &spec);
    static constexpr int kMaxRecent = 8;

Q_SIGNALS:
    /** The chosen GPU's compute capability (0.0 when there is none); arch "auto" follows it. */
    void deviceFound(int ccMajor, int ccMinor);
    void ordinalChanged(int ordinal);
    /** The answer to refresh() is in. */
    void changed();
    /** A worker stopped (crash, kill, time-out); reason in words. */
    void workerExited(const QString &reason);
    /** setTarget() moved the workers; the answer about its GPUs follows as changed(). */
    void targetChanged(const QString &target);
    /** A remote target's buffer transfer of a running request: done of total bytes (EngineClient::transferProgress). */
    void transferProgress(qint64 done, qint64 total, bool upload);

private:
    void watch(EngineClient *client);
    void measureRoundTrip(quint64 ticket);

    EngineClient *m_primary;
    std::map<int, std::unique_ptr<EngineClient>> m_others; ///< workers for GPUs 1, 2, ...
    DeviceList m_list;
    Error m_error; ///< why there are no GPUs (when known and !canRun)
    int m_ordinal = 0;
    bool m_known = false;
    bool m_canRun = false;
    QString m_whyNoRun;
    QString m_summary;
    QString m_detail;
    QString m_driverVersion;
    QString m_target;
    QString m_hostLabel;
    bool m_switching = false; ///< from setTarget() to the new target's answer: the old workers' ends are expected
    quint64 m_ticket = 0;     ///< of the last refresh(); older answers (another target's) are dropped
    double m_queryMs = -1;
    double m_roundTripMs = -1;
};

} // namespace Kp
