#pragma once

#include "check/sanitizedrun.h"
#include "compile/compiletypes.h"

#include <QHash>
#include <QObject>
#include <QStringList>

#include <atomic>

class QThread;

namespace Kp {

/**
 * Findings as diagnostics for the editor and the Problems list: one per
 * source line and kind, "compute-sanitizer: invalid write of 4 bytes by
 * thread (232,0,0) block (3,0,0), just past the end of `c` (element 1000)
 * (and 23 more on this line)"; a race marks both of its lines, each naming
 * the other. Only findings in the file named fileName (compared by file
 * name: the report gives the path NVRTC was given) get its name.
 */
QList<Diagnostic> sanitizerDiagnostics(const Sanitizer::Report &report, const QString &fileName);

/**
 * For the Inspector's failed-cells view: per buffer, a byte per element, 1
 * where a finding's address fell inside it (an access past the end marks the
 * last element, the nearest one there is). Buffers without findings are left out.
 */
QHash<QString, QByteArray> sanitizerMasks(const Sanitizer::Report &report, const QHash<QString, qint64> &elementCounts);

/** A kind of finding in words, plural: "invalid accesses", "hazards", "uninitialised reads". */
QString sanitizerKindWords(Sanitizer::Finding::Kind kind);
/** "1 race", "3 races". */
QString sanitizerKindCount(Sanitizer::Finding::Kind kind, qsizetype n);

/** The Log's lines: a summary with counts per kind, then the first firstN findings of each kind. */
QStringList sanitizerLogLines(const SanitizedRun &run, Sanitizer::Tool tool, int firstN = 10);

/**
 * Run > Check memory: runs the project once under compute-sanitizer
 * (runProjectSanitized) on a thread of its own, with its own worker, so the
 * GUI's worker and buffers are untouched; finished() comes on the GUI thread.
 */
class MemoryCheck : public QObject
{
    Q_OBJECT
public:
    explicit MemoryCheck(QObject *parent = nullptr);
    ~MemoryCheck() override;

    /** Starts a check; false (and nothing started) while one is running. */
    bool start(const Project &project, Sanitizer::Tool tool, bool hazards = false, int device = 0);
    bool isRunning() const { return m_running; }

Q_SIGNALS:
    void finished(const Kp::SanitizedRun &run, Kp::Sanitizer::Tool tool);

private:
    std::atomic<bool> m_running{false};
    QThread *m_thread = nullptr;
};

} // namespace Kp
