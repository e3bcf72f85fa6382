#include "compilecontroller.h"

#include "compile/compileservice.h"
#include "projectdocument.h"
#include "run/deviceglobals.h"
#include "run/runner.h"

#include <QTimer>

namespace Kp {

CompileController::CompileController(ProjectDocument *document, QObject *parent)
    : QObject(parent)
    , m_doc(document)
{
    m_service = new CompileService({}, this);
    // The first prepareRun of a new module scans its PTX for device
    // globals; with a toolkit header (cub) that PTX is megabytes and the
    // scan took 6 ms of the GUI thread when the compile landed (bench_gui).
    // The scans are cached by text, so doing it here leaves a lookup there.
    m_service->setAfterCompile([](const CompileResult &r) { ptxGlobals(r.ptx); });
    m_timer = new QTimer(this);
    m_timer->setSingleShot(true);
    m_timer->setInterval(kDelayMs);
    m_timer->setTimerType(Qt::PreciseTimer); // a coarse timer may fire 5% early
    connect(m_timer, &QTimer::timeout, this, &CompileController::compileNow);
    connect(m_doc, &ProjectDocument::projectChanged, this, [this] {
        if (compileOptionsFor(m_doc->project()).toVariant() != m_options) {
            compileNow(); // a new template instance or define: revalidates when it lands
        } else {
            m_doc->revalidate();
        }
    });
}

void CompileController::setDevice(int ccMajor, int ccMinor)
{
    if (ccMajor != m_ccMajor || ccMinor != m_ccMinor) {
        // "auto" now means this GPU's architecture.
        m_ccMajor = ccMajor;
        m_ccMinor = ccMinor;
        compileNow();
    }
}

bool CompileController::isPending() const
{
    return m_timer->isActive() || m_inFlight;
}

void CompileController::setTextSource(std::function<QString()> text)
{
    m_text = std::move(text);
}

void CompileController::textEdited()
{
    ++m_revision; // whatever is in flight is now stale
    m_timer->start();
}

void CompileController::syncSource()
{
    if (m_text) {
        m_doc->setSourceText(m_text());
    }
}

void CompileController::setActive(bool active)
{
    m_active = active;
    if (active && m_skipped) {
        compileNow();
    }
}

void CompileController::compileNow()
{
    m_timer->stop();
    if (!m_active) {
        m_skipped = true;
        return;
    }
    m_skipped = false;
    syncSource();
    const CompileRequest req = m_doc->compileRequest(m_ccMajor, m_ccMinor);
    m_options = req.options.toVariant();
    const quint64 revision = m_revision;
    Q_EMIT statusChanged(tr("Compiling…"), {});
    // The service drops a request that a newer one replaced before it ran:
    // only the newest's answer ends the wait.
    const quint64 serial = ++m_sent;
    m_inFlight = true;
    m_service->compile(
        req, this,
        [this, revision, serial](const Result<CompileResult> &r) {
            if (serial != m_sent) {
                return; // a newer request (a device found, an option changed) answers next
            }
            m_inFlight = false;
            if (revision != m_revision) {
                return; // the text changed meanwhile; a newer compile is coming
            }
            if (!r) {
                Q_EMIT statusChanged(tr("Cannot compile: %1").arg(r.error().message), {});
                return;
            }
            show(r.value());
        },
        QStringLiteral("editor"));
}

void CompileController::follow(QObject *context, const std::function<void(const CompileResult &)> &show)
{
    connect(this, &CompileController::compiled, context, show);
    if (m_answered) {
        show(m_last);
    }
}

void CompileController::show(const CompileResult &r)
{
    m_last = r;
    m_answered = true;
    QString status = r.ok ? tr("Compiled for %1 in %2 ms").arg(r.arch).arg(r.compileMs, 0, 'f', 0)
                          : tr("Compile failed: %n error(s)", nullptr, r.errorCount());
    if (r.cached) {
        status += tr(" (cached)");
    }
    if (r.warningCount() > 0) {
        status += tr(", %n warning(s)", nullptr, r.warningCount());
    }
    Q_EMIT statusChanged(status,
                         r.nvrtcOptions.join(QLatin1Char(' ')) + (r.note.isEmpty() ? QString() : "\n" + r.note));
    Q_EMIT compiled(r);
    // Validation in its own turn of the event loop: one long stall becomes two short ones.
    QTimer::singleShot(0, this, [this, r] {
        m_doc->setCompiled(r);
        Q_EMIT settled();
    });
}

} // namespace Kp
