#pragma once

#include "core/result.h"
#include "cuda/deviceinfo.h"

#include <QObject>
#include <QString>

#include <map>
#include <memory>

namespace Kp {

class EngineClient;

/**
 * The GPUs of this machine and their workers: one EngineClient (a thread, a
 * kpg-worker process and its CUDA context) per GPU, made on first use, so a
 * fault on one GPU never costs another its state. The list of devices is
 * asked once (refresh()) and shared by every panel: nothing else in the GUI
 * starts a worker to learn what the machine has. No widgets; GUI thread only.
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

Q_SIGNALS:
    /** The chosen GPU's compute capability (0.0 when there is none); arch "auto" follows it. */
    void deviceFound(int ccMajor, int ccMinor);
    void ordinalChanged(int ordinal);
    /** The answer to refresh() is in. */
    void changed();
    /** A worker stopped (crash, kill, time-out); reason in words. */
    void workerExited(const QString &reason);

private:
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
};

} // namespace Kp
