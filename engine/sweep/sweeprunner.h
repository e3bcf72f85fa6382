#pragma once

#include "check/checkedrun.h"
#include "cuda/deviceinfo.h"
#include "sweep/sweep.h"

#include <QElapsedTimer>
#include <QJsonObject>
#include <QList>
#include <QMutex>
#include <QObject>
#include <QSet>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace Kp {

class EngineClient;

/** One point of a sweep as it landed. A plain value (its run's buffers are dropped). */
struct SweepPointResult
{
    int index = -1; ///< in the sweep's point order
    SweepPoint point;
    QString label;  ///< "block.x=128 define.TILE=16"
    QString status; ///< ok, check-failed, skipped, failed
    QString reason;
    bool compiledFromCache = false;
    int device = 0;     ///< the GPU it ran on
    QString deviceName; ///< as the driver names it
    CheckedRun run;     ///< without its buffers

    /** Ran and was timed without an error (ok or check-failed). */
    bool timed() const;
    double medianUs() const;
    /** The project's throughput.bytes per second at the median, 0 when not given. */
    double bytesPerSecond() const;
    double flopsPerSecond() const;
};

/** The sweep table as CSV: one row per point, the axes first (docs/sweep.md). */
QByteArray sweepCsv(const QList<SweepAxis> &axes, const QList<SweepPointResult> &points);
/** The sweep as JSON (docs/sweep.md); complete when every planned point is in it. */
QJsonObject sweepJson(const Project &project, const QList<SweepAxis> &axes, bool zip, int planned,
                      const QList<SweepPointResult> &points, double wallSeconds, bool aborted);

/**
 * Runs the points of a sweep, each through runProjectWithChecks (so a point
 * is compiled, timed and checked exactly as `kpg run` does it), on one
 * thread per GPU with its own EngineClient and so its own kpg-worker: the
 * points spread over every device in Options::devices. Signals arrive on the
 * runner's thread as points land, in the order they finish. abort() kills
 * the runs in flight; the points already done are kept. Used by `kpg sweep`
 * and the GUI's Sweep panel.
 */
class SweepRunner : public QObject
{
    Q_OBJECT
public:
    struct Options
    {
        QList<int> devices{0}; ///< one worker each; the GPUs must exist (the caller checked)
        bool timing = true;
        bool checks = true;
    };

    explicit SweepRunner(QObject *parent = nullptr);
    /** Aborts a sweep still running and waits for its threads. */
    ~SweepRunner() override;

    /** Starts a sweep; refused while one runs, or for points that do not expand. */
    Status start(const Project &project, const QList<SweepAxis> &axes, bool zip, const Options &options);
    /** Stops at once: runs in flight are killed and dropped, finished points stay. Any thread. */
    void abort();
    /** Waits until the sweep ended (kpg); pumps this thread's events so signals are delivered. */
    void waitFinished();

    bool isRunning() const { return m_running; }
    bool wasAborted() const { return m_aborted; }
    int planned() const { return int(m_points.size()); }
    const QList<SweepAxis> &axes() const { return m_axes; }
    bool zip() const { return m_zip; }
    const Project &project() const { return m_project; }
    /** The points landed so far, in the order they landed. */
    const QList<SweepPointResult> &results() const { return m_results; }
    /** The landed points in the sweep's point order. */
    QList<SweepPointResult> resultsInOrder() const;
    double wallSeconds() const;
    /** Seconds left at the pace so far (-1 before the first point). */
    double secondsLeft() const;
    /** Set when the sweep stopped for want of a GPU, a worker or NVRTC. */
    std::optional<Error> fatalError() const { return m_fatal; }

Q_SIGNALS:
    void pointFinished(const Kp::SweepPointResult &result);
    void progress(int done, int total, double secondsLeft);
    void finished(bool aborted);

private:
    void worker(int device);
    void landed(SweepPointResult result);
    void threadDone();

    Project m_project;
    QList<SweepAxis> m_axes;
    bool m_zip = false;
    Options m_options;
    QList<SweepPoint> m_points;
    QList<SweepPointResult> m_results;
    bool m_running = false;
    bool m_aborted = false;
    std::optional<Error> m_fatal;
    QElapsedTimer m_wall;
    double m_wallSeconds = 0;
    int m_threadsLeft = 0;

    // Shared with the device threads.
    std::atomic<int> m_next{0};
    std::atomic<bool> m_stop{false};
    QMutex m_mutex;                  ///< guards m_engines and m_compiledKeys
    QList<EngineClient *> m_engines; ///< the device threads' clients, for abort()
    QSet<QString> m_compiledKeys;
    std::vector<std::thread> m_threads;
};

} // namespace Kp

Q_DECLARE_METATYPE(Kp::SweepPointResult)

namespace Kp {

/**
 * The GPUs a sweep uses: the one --device pins (refused, with what exists,
 * when there is no such device), else every GPU of the same model as GPU 0,
 * so that the points' times compare.
 */
Result<QList<int>> sweepDevices(const DeviceList &list, std::optional<int> pinned);

} // namespace Kp
