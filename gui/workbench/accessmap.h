#pragma once

#include "access/accessrun.h"
#include "core/result.h"

#include <QObject>

#include <atomic>
#include <memory>
#include <optional>

class QThread;

namespace Kp {

/** How an Analyze Memory Access ended: the report, or why there is none. */
struct AccessOutcome
{
    std::shared_ptr<const AccessReport> report; ///< null when it failed
    Error error;
    int step = 0; ///< the launch step (0-based) that was asked for
};

/**
 * Build > Analyze Memory Access (docs/memory-access.md): runAccessMap on a
 * thread of its own with its own worker, as Check Memory does, so the
 * window's worker, buffers and run history are untouched; finished() comes
 * on the GUI thread. No widgets.
 *
 * It also holds what every view of the analysis shows: the current report
 * (the panel's table, the editor's heat margin, the Inspector's "Who touched
 * this cell?"), cleared when a new analysis starts or another project is
 * loaded, and whether the editor shows it.
 */
class AccessMap : public QObject
{
    Q_OBJECT
public:
    explicit AccessMap(QObject *parent = nullptr);
    ~AccessMap() override;

    /**
     * Starts recording project's step; false (and nothing started) while one
     * is running. The current report is cleared: its lines describe the
     * source as the last analysis saw it.
     */
    bool start(const Project &project, const AccessRunOptions &options);
    bool isRunning() const { return m_running; }
    /** The current report (null before the first that succeeded, and after clearing). */
    std::shared_ptr<const AccessReport> last() const { return m_last; }
    /** Makes report the current one (null clears it); reportChanged() follows. Tests give a recorded one. */
    void setReport(std::shared_ptr<const AccessReport> report);

    /** Whether the editor's margin shows the report's heat (the panel's "Show in editor"). On at first. */
    bool showInEditor() const { return m_showInEditor; }
    void setShowInEditor(bool on);

    /** Navigation: the Memory Access panel shows the rows of source line (1-based; a click on the editor's heat). */
    void requestLine(int line) { Q_EMIT lineRequested(line); }

Q_SIGNALS:
    void finished(const Kp::AccessOutcome &outcome);
    /** The current report changed (null: there is none now). */
    void reportChanged(std::shared_ptr<const Kp::AccessReport> report);
    void showInEditorChanged(bool on);
    void lineRequested(int line);

private:
    std::atomic<bool> m_running{false};
    QThread *m_thread = nullptr;
    std::shared_ptr<const AccessReport> m_last;
    bool m_showInEditor = true;
};

} // namespace Kp
