#include "runcontroller.h"

#include "client/engineclient.h"
#include "compile/compileservice.h"
#include "compilecontroller.h"
#include "core/format.h"
#include "devices.h"
#include "projectdocument.h"
#include "run/runner.h"

#include <QDateTime>
#include <QTimer>

namespace Kp {

RunController::RunController(Devices &devices, ProjectDocument *document, CompileController *compile, QObject *parent)
    : QObject(parent)
    , m_devices(devices)
    , m_doc(document)
    , m_compile(compile)
{
}

RunController::~RunController()
{
    // A fill in progress writes the document's buffers: let it end first.
    m_fillPool.waitForDone();
}

void RunController::setPlaying(bool playing)
{
    m_playing = playing;
    m_playFrames = 0;
    m_playStartMs = QDateTime::currentMSecsSinceEpoch();
    if (playing && !m_running) {
        start(true);
    }
}

void RunController::abort()
{
    m_playing = false;
    if (m_running) {
        runnerFor(m_deviceOrdinal)->abort();
        Q_EMIT message(tr("Aborted by the user."));
    }
}

void RunController::setDeviceOrdinal(int ordinal)
{
    if (ordinal == m_deviceOrdinal || m_running) {
        return;
    }
    m_deviceOrdinal = ordinal;
    Q_EMIT message(tr("Runs go to GPU %1 now.").arg(ordinal));
}

QString RunController::occupancyEstimate(int step) const
{
    const Validation &v = m_doc->validation();
    if (step < 0 || step >= v.steps.size()) {
        return {};
    }
    const Validation::Step &st = v.steps[step];
    for (qsizetype i = m_runs.size() - 1; i >= 0; --i) {
        for (const StepResult &sr : m_runs[i].steps) {
            if (sr.kernel == st.kernel && sr.limits.numRegs != 0) {
                const Occupancy o = estimateOccupancy(sr.limits, st.threadsPerBlock, st.sharedBytes);
                return occupancyText(o, sr.limits.numRegs) + tr(" (estimate for this block size)");
            }
        }
    }
    return {};
}

void RunController::fail(const QString &text)
{
    m_running = false;
    m_playing = false;
    m_doc->setBusy(false);
    Q_EMIT busyChanged(false);
    Q_EMIT statusChanged(tr("Run failed"));
    Q_EMIT message(text);
    Q_EMIT playStopped();
    Q_EMIT failed(text);
}

void RunController::start(bool play)
{
    if (m_running) {
        return;
    }
    // The run compiles the editor's text as it is now; the editor's own compile
    // (Problems, PTX) follows on its timer. Compiling for the editor here
    // would run the disassembler and revalidate on every Play frame.
    m_compile->syncSource();
    Project p = m_doc->project();
    if (play) {
        p.timing.enabled = false; // frames as fast as they come; timing is for Run
    } else {
        m_lastRunProject = p; // what the checks check once it has run
    }
    const CompileRequest req = m_doc->compileRequest(m_compile->ccMajor(), m_compile->ccMinor());
    m_phases = {};
    m_phaseClock.start();
    m_running = true;
    m_sentSteps.clear();
    m_doc->setBusy(true);
    Q_EMIT started(play);
    Q_EMIT statusChanged(tr("Running…"));
    if (!play) {
        // Progress only for what takes long enough to wonder about.
        QTimer::singleShot(500, this, [this] {
            if (m_running) {
                Q_EMIT busyChanged(true);
            }
        });
    }
    m_compile->service()->compile(
        req, this,
        [this, p, play](const Result<CompileResult> &compiled) {
            m_phases.compileMs = phaseMs();
            if (!compiled) {
                fail(compiled.error().message);
                return;
            }
            if (!compiled->ok && compiled->errorCount() == 0) {
                // No diagnostic to point at: the compiler's own words.
                const QString first = compiled->log.trimmed().section(QLatin1Char('\n'), 0, 0);
                fail(first.isEmpty() ? tr("The kernel did not compile, and the compiler said nothing; see the Log.")
                                     : tr("The kernel did not compile: %1").arg(first));
                return;
            }
            if (!compiled->ok) {
                fail(tr("The kernel does not compile (%n error(s)); see Problems.", nullptr, compiled->errorCount()));
                return;
            }
            // Run: fresh contents from each buffer's init, so runs compare
            // like with like. Play/Step: continue from the last state.
            // Filling (a per-element expression over millions of elements)
            // runs off the GUI thread; views let go of the buffers meanwhile
            // so none paints memory being written.
            if (!play) {
                Q_EMIT buffersReleased(); // Play keeps the contents: nothing is written
            }
            const CompileResult result = *compiled;
            HostBuffers *host = &m_doc->buffersToFill();
            m_fillPool.start([this, host, p, play, result] {
                const Status filled = host->materialize(p, !play);
                QMetaObject::invokeMethod(
                    this,
                    [this, host, p, play, result, filled] {
                        const double filledAt = phaseMs();
                        m_phases.fillMs = filledAt - m_phases.compileMs;
                        if (!filled) {
                            fail(filled.error().message);
                            return;
                        }
                        const Result<PreparedRun> prepared = prepareRun(p, result, *host, m_deviceOrdinal);
                        if (!prepared) {
                            fail(prepared.error().message);
                            m_doc->revalidate(); // the panel marks the field
                            return;
                        }
                        // What was sent, for the history row of a run that fails before reporting its steps.
                        m_sentSteps = prepared->request.steps;
                        Q_EMIT launching();
                        const double sentAt = phaseMs();
                        m_phases.prepareMs = sentAt - filledAt;
                        runnerFor(m_deviceOrdinal)->run(*prepared, host, [this, play, sentAt](const RunResult &r) {
                            m_phases.workerMs = phaseMs() - sentAt;
                            finish(r, play);
                        });
                    },
                    Qt::QueuedConnection);
            });
        },
        QStringLiteral("run"));
}

void RunController::finish(const RunResult &r, bool play)
{
    m_running = false;
    m_doc->setBusy(false);
    Q_EMIT busyChanged(false);
    m_runs.append(r);
    if (m_runs.size() > kRunsKept) {
        m_runs.remove(0, m_runs.size() - kRunsKept);
    }
    for (qsizetype i = 0; i < r.steps.size(); ++i) {
        if (!r.steps[i].printfOutput.isEmpty()) {
            Q_EMIT message(tr("printf from step %1 (%2):\n%3")
                               .arg(i + 1)
                               .arg(r.steps[i].kernel, r.steps[i].printfOutput.trimmed()));
        }
    }
    for (const QString &w : r.warnings) {
        Q_EMIT message(tr("warning: %1").arg(w));
    }
    if (play && m_playing && !r.error) {
        ++m_playFrames;
        // Four times a second, not every frame: each new text relays out
        // the status bar and with it the main window and its docks (two
        // layouts and some 25 dock animations a frame, bench_gui).
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        if (m_playFrames == 1 || now - m_playStatusMs >= 250) {
            m_playStatusMs = now;
            const double seconds = (now - m_playStartMs) / 1000.0;
            Q_EMIT statusChanged(
                tr("Playing: %1 frames, %2 fps").arg(m_playFrames).arg(m_playFrames / qMax(seconds, 1e-3), 0, 'f', 1));
        }
        const double deliverStart = phaseMs();
        Q_EMIT finished(r, play);
        m_phases.deliverMs = phaseMs() - deliverStart;
        // The next frame after what this one's listeners queued (a bench
        // reads lastPhases() so, before the next start resets them).
        QTimer::singleShot(0, this, [this] {
            if (m_playing) {
                start(true);
            }
        });
        return;
    }
    const Project &project = m_doc->project();
    if (!play || r.error) {
        RunRecord rec;
        m_runNumber = std::max(m_runNumber + 1, m_nextNumber ? m_nextNumber() : 0);
        rec.number = m_runNumber;
        rec.when = QDateTime::currentDateTime();
        // The first kernel names the run (a streamed project may start with a copy).
        const StepResult *firstKernel = nullptr;
        for (const StepResult &st : r.steps) {
            if (st.kind == QLatin1String("kernel")) {
                firstKernel = &st;
                break;
            }
        }
        rec.kernel = firstKernel                  ? firstKernel->kernel
                     : !r.steps.isEmpty()         ? r.steps.first().kernel
                     : project.launches.isEmpty() ? QString()
                                                  : project.launches.first().kernel;
        // A run that failed before any step reported (no driver, a dead worker)
        // still launched what was prepared: its row says that, not 1 x 1.
        const RunStep *sent = m_sentSteps.isEmpty() ? nullptr : &m_sentSteps.first();
        if (firstKernel) {
            rec.grid = firstKernel->grid;
            rec.block = firstKernel->block;
        } else if (!r.steps.isEmpty()) {
            rec.grid = r.steps.first().grid;
            rec.block = r.steps.first().block;
        } else if (sent) {
            rec.grid = sent->grid;
            rec.block = sent->block;
            if (rec.kernel.isEmpty()) {
                rec.kernel = sent->kernel;
            }
        }
        if (firstKernel || (r.steps.isEmpty() && sent)) {
            rec.label = tr("block %1").arg(rec.block[0]);
        }
        rec.defines = project.compile.defines;
        rec.result = r;
        // What ran, for comparing runs later (the Compare panel, the history file).
        rec.source = m_lastRunProject.sourceText;
        rec.compileOptions = m_doc->compiled().nvrtcOptions;
        for (const KernelInfo &k : m_doc->compiled().kernels) {
            rec.resources.insert(k.name, k.resources);
        }
        Q_EMIT recorded(rec);
    }
    if (r.error) {
        m_playing = false;
        Q_EMIT playStopped();
        // In words: the first sentence of the message, not a code name.
        const QString first = r.error->message.section(QStringLiteral(". "), 0, 0);
        Q_EMIT statusChanged(
            tr("Run failed: %1").arg(first.size() > 90 ? first.left(87) + QStringLiteral("…") : first));
        Q_EMIT message(tr("Run %1 failed: %2%3")
                           .arg(m_runNumber)
                           .arg(r.error->message,
                                r.buffersRestored ? tr(" (buffers are as they were before the run)") : QString()));
    } else if (r.timed) {
        QString line = tr("Run %1 on %2: median %3, min %4, max %5, noise %6 % over %7 %8 samples")
                           .arg(m_runNumber)
                           .arg(r.device, formatDuration(r.stats.medianMs), formatDuration(r.stats.minMs),
                                formatDuration(r.stats.maxMs))
                           .arg(r.stats.noise * 100, 0, 'f', 2)
                           .arg(r.stats.count)
                           .arg(r.timingMode);
        if (r.bytesPerSecond > 0) {
            line += QStringLiteral(", ") + formatRate(r.bytesPerSecond, QStringLiteral("B/s"));
        }
        Q_EMIT statusChanged(tr("Median %1").arg(formatDuration(r.stats.medianMs)));
        Q_EMIT message(line);
    } else {
        Q_EMIT statusChanged(tr("Ran once"));
        // A Step (or Play's last frame) is not a run of the history: it has no number.
        Q_EMIT message(play ? tr("Step on %1: ran once (not timed)").arg(r.device)
                            : tr("Run %1 on %2: ran once (not timed)").arg(m_runNumber).arg(r.device));
    }
    // Writes outside a buffer (guard zones, docs/memory-checking.md): in the
    // Log each, and in the status bar, which they take over.
    for (const GuardViolation &v : r.guardViolations) {
        Q_EMIT message(tr("memory: %1").arg(v.message()));
    }
    if (!r.guardViolations.isEmpty()) {
        Q_EMIT statusChanged(
            r.guardViolations.size() == 1
                ? tr("Memory: %1").arg(r.guardViolations.first().message())
                : tr("Memory: %1 writes outside buffers (see the Memory panel)").arg(r.guardViolations.size()));
    }
    const double deliverStart = phaseMs();
    Q_EMIT finished(r, play);
    m_phases.deliverMs = phaseMs() - deliverStart;
}

Runner *RunController::runnerFor(int ordinal)
{
    ordinal = qMax(0, ordinal);
    auto it = m_runners.find(ordinal);
    if (it != m_runners.end()) {
        return it->second;
    }
    auto *runner = new Runner(&m_devices.engine(ordinal), this);
    connect(runner, &Runner::recovered, this, [this, ordinal](double ms) {
        Q_EMIT message(ordinal == 0
                           ? tr("A fresh GPU worker is ready (%1 ms), with the buffers restored.").arg(ms, 0, 'f', 0)
                           : tr("A fresh worker for GPU %1 is ready (%2 ms), with the buffers restored.")
                                 .arg(ordinal)
                                 .arg(ms, 0, 'f', 0));
    });
    m_runners.emplace(ordinal, runner);
    return runner;
}

} // namespace Kp
