#pragma once

#include "project/project.h"
#include "run/runrequest.h"
#include "run/runtypes.h"
#include "workbench/runhistory.h"

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QThreadPool>

#include <functional>
#include <map>
#include <memory>

namespace Kp {

class CompileController;
class Devices;
class ProjectDocument;
class Runner;

/**
 * The run pipeline, from the Run button to a result: compile the editor's
 * text (the compile service's cache makes this free when nothing changed),
 * fill the host buffers off the GUI thread, prepare the launch, send it to
 * the worker of the chosen GPU and report. Also Play/Step (frames that
 * continue from the last state, untimed) and Abort. Each GPU gets its own
 * worker, created on first use. GUI thread only.
 */
class RunController : public QObject
{
    Q_OBJECT
public:
    /** Not owned, and must outlive the controller: devices (the workers), document, compile. */
    RunController(Devices &devices, ProjectDocument *document, CompileController *compile, QObject *parent = nullptr);
    ~RunController() override;

    /** Runs the project once, timed as its timing settings say (Ctrl+Enter). */
    void run() { start(false); }
    /** One untimed frame that continues from the buffers' last state. */
    void step() { start(true); }
    /** Frames one after another until stopped or one fails. */
    void setPlaying(bool playing);
    /** Stops the run in flight (Esc), and Play. */
    void abort();
    bool isRunning() const { return m_running; }
    /** True while Play goes on (frames one after another). */
    bool isPlaying() const { return m_playing; }

    /** The GPU runs go to (0 = the first). Ignored while a run is in flight. */
    void setDeviceOrdinal(int ordinal);
    /**
     * Where recorded runs are numbered from: the history's next number (a
     * history loaded with the project may already hold runs 1 to 7), so the
     * Log's "Run 8" is the history's row 8. Without it runs count from 1.
     */
    void setNumbering(std::function<int()> nextNumber) { m_nextNumber = std::move(nextNumber); }
    int deviceOrdinal() const { return m_deviceOrdinal; }

    /** The project as the last Run (not a Play/Step frame) started it: source, buffers, checks. */
    const Project &lastRunProject() const { return m_lastRunProject; }

    /**
     * The runs and Play frames of this session, failed ones included, the
     * newest kRunsKept of them (Play left on adds one every frame).
     */
    const QList<RunResult> &runs() const { return m_runs; }
    static constexpr qsizetype kRunsKept = 1000;

    /**
     * Occupancy for the launch as it is configured now: the device and kernel
     * limits from the last run of that kernel, the block size and dynamic
     * shared memory from the document's validation. Empty before any run.
     */
    QString occupancyEstimate(int step) const;

    /**
     * Where the last run or frame spent its time, in milliseconds of wall
     * clock from the Run (bench_gui prints them for Play): the compile (a
     * cache hit when nothing changed), filling the buffers off the GUI
     * thread, preparing the launch, the worker (upload, launches, download,
     * the answer's way back) and the fan-out of finished() to the panels.
     */
    struct Phases
    {
        double compileMs = 0;
        double fillMs = 0;
        double prepareMs = 0;
        double workerMs = 0;
        double deliverMs = 0;
    };
    const Phases &lastPhases() const { return m_phases; }

Q_SIGNALS:
    /** A run was accepted; play says whether it is a Play/Step frame. */
    void started(bool play);
    /** The host buffers are about to be refilled off the GUI thread: let go of them. */
    void buffersReleased();
    /** The buffers are filled and the launch goes to the worker now. */
    void launching();
    /** A run or frame ended (its result is runs().last()); failures carry their error. */
    void finished(const RunResult &result, bool play);
    /** A timed run (or a failed one) for the run history. */
    void recorded(const RunRecord &record);
    /** A run has gone on long enough to show progress (half a second), or has ended. */
    void busyChanged(bool busy);
    /** Text for the status bar ("Running…", "Median 8.03 us", "Playing: 12 frames, 40 fps"). */
    void statusChanged(const QString &text);
    /** A line for the Log. */
    void message(const QString &text);
    /** The run ended before reaching the worker (no compile, a bad buffer or binding); message says why. */
    void failed(const QString &message);
    /** Play stopped by itself (a frame failed). */
    void playStopped();

private:
    void start(bool play);
    void fail(const QString &message);
    void finish(const RunResult &result, bool play);
    /** The runner for a GPU, over that GPU's worker (Devices). */
    Runner *runnerFor(int ordinal);

    Devices &m_devices;
    ProjectDocument *m_doc;
    CompileController *m_compile;
    std::map<int, Runner *> m_runners; ///< one per GPU used so far
    int m_deviceOrdinal = 0;
    QList<RunResult> m_runs;
    int m_runNumber = 0; ///< the last recorded run's number (Play frames are not recorded), as the Log says it
    std::function<int()> m_nextNumber;
    QList<RunStep> m_sentSteps; ///< the steps of the run in flight, as sent to the worker
    Project m_lastRunProject;
    bool m_running = false;
    bool m_playing = false;
    qint64 m_playFrames = 0;
    qint64 m_playStartMs = 0;
    qint64 m_playStatusMs = 0; ///< when Play's frame count was last put in the status line
    Phases m_phases;
    QElapsedTimer m_phaseClock; ///< from the start of the run in flight
    double phaseMs() const { return double(m_phaseClock.nsecsElapsed()) / 1e6; }
    /** Fills host buffers off the GUI thread; the destructor waits for a fill in progress. */
    QThreadPool m_fillPool;
};

} // namespace Kp
