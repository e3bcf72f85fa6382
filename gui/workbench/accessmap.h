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
};

/**
 * Build > Analyze Memory Access (docs/memory-access.md): runAccessMap on a
 * thread of its own with its own worker, as Check Memory does, so the
 * window's worker, buffers and run history are untouched; finished() comes
 * on the GUI thread. No widgets.
 */
class AccessMap : public QObject
{
    Q_OBJECT
public:
    explicit AccessMap(QObject *parent = nullptr);
    ~AccessMap() override;

    /** Starts recording project's step; false (and nothing started) while one is running. */
    bool start(const Project &project, const AccessRunOptions &options);
    bool isRunning() const { return m_running; }
    /** The last report (null before the first that succeeded). */
    std::shared_ptr<const AccessReport> last() const { return m_last; }

Q_SIGNALS:
    void finished(const Kp::AccessOutcome &outcome);

private:
    std::atomic<bool> m_running{false};
    QThread *m_thread = nullptr;
    std::shared_ptr<const AccessReport> m_last;
};

} // namespace Kp
