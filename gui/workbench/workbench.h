#pragma once

#include "check/sanitizedrun.h"
#include "run/runtypes.h"
#include "run/sanitizer.h"
#include "workbench/runhistory.h"

#include <QObject>
#include <QString>
#include <QTime>

namespace Kp {

class AccessMap;
struct AccessOutcome;
class CheckRunner;
class CompileController;
class Devices;
class EngineClient;
class MemoryCheck;
class ProjectDocument;
class RunController;
class RunHistoryModel;
class Selection;

/** A Run (timed, checked) or a frame of Play/Step (untimed, continues from the last state). */
enum class RunKind {
    Run,
    Frame,
};

/** Every dock of the window; the shell's dock table maps each to its dock. */
enum class PanelId {
    Problems,
    Kernels,
    Ptx,
    Sass,
    Launch,
    Buffers,
    Inspector,
    Results,
    Log,
    Checks,
    Description,
    Sweep,
    Occupancy,
    Compare,
    Memory,
    MemoryAccess,
    Project, ///< title, description, throughput, checks and lab fields (panels/project)
};

/**
 * Why a panel asks to come forward. The shell's one raise policy ranks them:
 * within one run the most important news stays in front (a failed check over
 * a write outside a buffer over the run's result), and what the user asked
 * for always comes forward.
 */
enum class Attention {
    RunResult,   ///< a run's result or its failure: Results or the Log
    GuardHit,    ///< a run wrote outside a buffer
    CheckFailed, ///< a check of the run failed
    Findings,    ///< a Check Memory finished
    UserAsked,   ///< a menu entry, a double-click: always
};

/** Which of the Inspector's views shows a buffer. */
enum class InspectorView {
    Grid,
    Image,
    Diff,
};

/**
 * The one context every panel gets (RenderDoc's ICaptureContext): the
 * project document, the selection, the compile/run/check/memory controllers,
 * the GPUs with their workers and the run history. Panels subscribe to its
 * signals and never include the shell or another panel: "go to element 17
 * of out" is showBuffer(), "raise me" is attention(). No widgets; GUI thread
 * only.
 */
class Workbench : public QObject
{
    Q_OBJECT
public:
    /** engine is GPU 0's worker, not owned; it must outlive the workbench. */
    explicit Workbench(EngineClient *engine, QObject *parent = nullptr);
    ~Workbench() override;

    ProjectDocument &document() { return *m_doc; }
    const ProjectDocument &document() const { return *m_doc; }
    Selection &selection() { return *m_selection; }
    CompileController &compile() { return *m_compile; }
    RunController &runs() { return *m_runs; }
    const RunController &runs() const { return *m_runs; }
    CheckRunner &checks() { return *m_checks; }
    MemoryCheck &memory() { return *m_memory; }
    AccessMap &access() { return *m_access; }
    Devices &devices() { return *m_devices; }
    const Devices &devices() const { return *m_devices; }
    RunHistoryModel &history() { return *m_history; }
    /** Blocks until the history files queued so far are written (tests; the writer is one thread for all). */
    static void waitForHistoryWrites();

    /** Build > Check Memory: the project once under compute-sanitizer with tool. False when one is running. */
    bool checkMemory(Sanitizer::Tool tool, bool hazards = false);

    /**
     * Build > Analyze Memory Access: records launch step `step` (0-based) of
     * the project as the editor has it now (docs/memory-access.md). False
     * when one is running.
     */
    bool analyzeAccess(int step);
    /**
     * Navigation: the Memory Access panel lists who touched element of
     * buffer in the current access report, and comes forward.
     */
    void requestTouches(const QString &buffer, qint64 element);
    /** Navigation: show buffer name in the Inspector (element -1: where it is), and bring it forward. */
    void requestBuffer(const QString &name, InspectorView view = InspectorView::Grid, qint64 element = -1);
    /**
     * Navigation: the editor's cursor goes to line and column (1-based) and
     * lines highlightFrom..highlightTo are marked (none when 0); focus gives
     * the editor the keyboard.
     */
    void requestSourceLine(int line, int column = 1, int highlightFrom = 0, int highlightTo = 0, bool focus = false);
    /** Asks the shell to bring panel forward for why (its one raise policy decides). */
    void requestAttention(PanelId panel, Attention why);
    /** Navigation: the Inspector shows the cells check failed on (buffer itself when it has none marked). */
    void requestFailedCells(const QString &check, const QString &buffer);
    /** Compare the runs in these history rows: a the baseline, b the candidate. */
    void requestCompare(int a, int b);
    /** A line for the Log (message()); the last ones are kept for a Log panel made later (logBacklog()). */
    void log(const QString &text);
    /** One line of the Log, as logged. */
    struct LogLine
    {
        QTime at;
        QString text;
    };
    /** The last kLogBacklog lines logged, oldest first: a Log panel made after them starts with them. */
    const QList<LogLine> &logBacklog() const { return m_logBacklog; }
    static constexpr qsizetype kLogBacklog = 500;

Q_SIGNALS:
    /** A run or frame reached its end on the GPU (or failed there); one emitter, every panel subscribes. */
    void runFinished(const Kp::RunResult &result, Kp::RunKind kind);
    /** A run ended before the GPU (no compile, a bad buffer or binding): message says why. */
    void runFailed(const QString &message);
    /** After a Run: its checks are judged, or it has none, or it failed. */
    void checksSettled();
    /** A Check Memory started with tool. */
    void memoryCheckStarted(Kp::Sanitizer::Tool tool);
    /** A Check Memory finished. */
    void memoryCheckFinished(const Kp::SanitizedRun &run, Kp::Sanitizer::Tool tool);
    /** An Analyze Memory Access started on step (0-based). */
    void accessStarted(int step);
    /** An Analyze Memory Access ended: its report, or why there is none. */
    void accessFinished(const Kp::AccessOutcome &outcome);
    void showBuffer(const QString &name, Kp::InspectorView view, qint64 element);
    void showTouches(const QString &buffer, qint64 element);
    void showSourceLine(int line, int column, int highlightFrom, int highlightTo, bool focus);
    void showFailedCellsOf(const QString &check, const QString &buffer);
    void attention(Kp::PanelId panel, Kp::Attention why);
    void compareRequested(int a, int b);
    void message(const QString &text);
    /**
     * A timed run (or a failed one) joined the run history at row, two turns
     * of the event loop after the run landed (its landing painted between). The workbench appends it, so
     * the history never depends on a panel (the Results panel shows it).
     */
    void historyRecord(const Kp::RunRecord &record, int row);
    /**
     * A run's landing is whole: after runFinished() and, for a run the
     * history keeps, its row (historyRecord()); a Play frame's one turn of
     * the event loop after runFinished(). Screenshots and tests wait for it.
     */
    void runSettled();

private:
    void keepHistory();

    ProjectDocument *m_doc = nullptr;
    Selection *m_selection = nullptr;
    Devices *m_devices = nullptr;
    CompileController *m_compile = nullptr;
    RunController *m_runs = nullptr;
    CheckRunner *m_checks = nullptr;
    MemoryCheck *m_memory = nullptr;
    AccessMap *m_access = nullptr;
    RunHistoryModel *m_history = nullptr;
    QList<LogLine> m_logBacklog;
    int m_recordsOnTheWay = 0; ///< runs recorded whose history rows are not appended yet
};

} // namespace Kp
