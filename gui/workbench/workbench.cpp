#include "workbench.h"

#include "accessmap.h"
#include "checkrunner.h"
#include "compilecontroller.h"
#include "devices.h"
#include "memorycheck.h"
#include "projectdocument.h"
#include "runcontroller.h"
#include "runhistory.h"
#include "selection.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QPointer>
#include <QThreadPool>
#include <QTimer>

#include <memory>

namespace Kp {

namespace {

/** One thread: history files are written in the order of the runs, off the GUI thread. */
QThreadPool &historyWriter()
{
    static QThreadPool pool;
    pool.setMaxThreadCount(1);
    return pool;
}

} // namespace

void Workbench::waitForHistoryWrites()
{
    historyWriter().waitForDone();
}

Workbench::Workbench(EngineClient *engine, QObject *parent)
    : QObject(parent)
{
    m_doc = new ProjectDocument(this);
    m_selection = new Selection(this);
    m_devices = new Devices(engine, this);
    m_compile = new CompileController(m_doc, this);
    m_runs = new RunController(*m_devices, m_doc, m_compile, this);
    m_checks = new CheckRunner(this);
    m_memory = new MemoryCheck(this);
    m_access = new AccessMap(this);
    m_history = new RunHistoryModel(this);
    m_runs->setNumbering([this] { return m_history->nextNumber(); });

    connect(m_devices, &Devices::deviceFound, m_compile, &CompileController::setDevice);
    connect(m_devices, &Devices::ordinalChanged, m_runs, &RunController::setDeviceOrdinal);
    connect(m_devices, &Devices::targetChanged, this, [this](const QString &target) {
        log(tr("Target: %1. The GPU workers start there; the project, its buffers and the run history stay.")
                .arg(target));
    });
    connect(m_runs, &RunController::message, this, &Workbench::log);
    connect(m_checks, &CheckRunner::message, this, &Workbench::log);
    connect(m_runs, &RunController::started, m_checks, &CheckRunner::clear);
    connect(m_doc, &ProjectDocument::loaded, m_checks, &CheckRunner::clear);
    connect(m_runs, &RunController::failed, this, [this](const QString &text) {
        Q_EMIT runFailed(text);
        Q_EMIT checksSettled();
    });
    connect(m_runs, &RunController::finished, this, [this](const RunResult &r, bool play) {
        Q_EMIT runFinished(r, play ? RunKind::Frame : RunKind::Run);
        // A failure's story is in the Log, a result's in Results; Play's
        // frames leave the window as it is while they go on.
        if (!(play && !r.error && m_runs->isPlaying())) {
            requestAttention(r.error ? PanelId::Log : PanelId::Results, Attention::RunResult);
        }
        if (play) {
            return; // frames continue from the last state: checks describe a Run
        }
        if (r.error) {
            Q_EMIT checksSettled();
            return;
        }
        const Project &p = m_runs->lastRunProject();
        m_checks->evaluate(p, m_doc->hostBuffers().all(), m_runs->deviceOrdinal(), &r);
        if (p.checks.isEmpty()) {
            Q_EMIT checksSettled();
        }
    });
    connect(m_checks, &CheckRunner::finished, this, &Workbench::checksSettled);
    connect(m_memory, &MemoryCheck::finished, this, [this](const SanitizedRun &run, Sanitizer::Tool tool) {
        for (const QString &line : sanitizerLogLines(run, tool)) {
            log(line);
        }
        Q_EMIT memoryCheckFinished(run, tool);
    });
    connect(m_access, &AccessMap::finished, this, [this](const AccessOutcome &o) {
        if (o.report) {
            log(tr("Memory access of step %1 (%2): %3 warp requests recorded%4")
                    .arg(o.report->step + 1)
                    .arg(o.report->kernel)
                    .arg(o.report->summary.recorded)
                    .arg(o.report->summary.truncated()
                             ? tr(" of %1 (the rest counted, not recorded)").arg(o.report->summary.requested)
                             : QString()));
        } else {
            log(tr("Memory access: %1").arg(o.error.message));
        }
        Q_EMIT accessFinished(o);
    });
    // An access report describes the project it was recorded from.
    connect(m_doc, &ProjectDocument::loaded, m_access, [this] { m_access->setReport(nullptr); });
    keepHistory();
}

Workbench::~Workbench() = default;

bool Workbench::checkMemory(Sanitizer::Tool tool, bool hazards)
{
    m_compile->syncSource();
    if (!m_memory->start(m_doc->project(), tool, hazards, m_runs->deviceOrdinal())) {
        log(tr("Check memory: a check is already running"));
        return false;
    }
    Q_EMIT memoryCheckStarted(tool);
    return true;
}

bool Workbench::analyzeAccess(int step)
{
    m_compile->syncSource();
    AccessRunOptions options;
    options.step = step;
    options.device = m_runs->deviceOrdinal();
    if (!m_access->start(m_doc->project(), options)) {
        log(tr("Memory access: an analysis is already running"));
        return false;
    }
    Q_EMIT accessStarted(step);
    return true;
}

void Workbench::requestBuffer(const QString &name, InspectorView view, qint64 element)
{
    Q_EMIT showBuffer(name, view, element);
    Q_EMIT attention(PanelId::Inspector, Attention::UserAsked);
}

void Workbench::requestTouches(const QString &buffer, qint64 element)
{
    Q_EMIT showTouches(buffer, element);
    Q_EMIT attention(PanelId::MemoryAccess, Attention::UserAsked);
}

void Workbench::requestSourceLine(int line, int column, int highlightFrom, int highlightTo, bool focus)
{
    Q_EMIT showSourceLine(line, column, highlightFrom, qMax(highlightFrom, highlightTo), focus);
}

void Workbench::requestFailedCells(const QString &check, const QString &buffer)
{
    Q_EMIT showFailedCellsOf(check, buffer);
}

void Workbench::requestAttention(PanelId panel, Attention why)
{
    Q_EMIT attention(panel, why);
}

void Workbench::requestCompare(int a, int b)
{
    Q_EMIT compareRequested(a, b);
    Q_EMIT attention(PanelId::Compare, Attention::UserAsked);
}

void Workbench::log(const QString &text)
{
    if (m_logBacklog.size() == kLogBacklog) {
        m_logBacklog.removeFirst();
    }
    m_logBacklog.append({QTime::currentTime(), text});
    Q_EMIT message(text);
}

void Workbench::keepHistory()
{
    // Timed runs (and failed ones) join the history two turns of the event
    // loop later: the run's landing (the inspector, the launch panel, the
    // Log) is painted in the turn between, so the Results chart's geometry
    // and its own paint never add to that turn's stall (bench_gui).
    connect(m_runs, &RunController::recorded, this, [this](const RunRecord &rec) {
        ++m_recordsOnTheWay; // RunController::finished() follows: its runSettled() waits for the row
        QTimer::singleShot(0, this, [this, rec] {
            QTimer::singleShot(0, this, [this, rec] {
                const int row = m_history->append(rec);
                Q_EMIT historyRecord(rec, row);
                --m_recordsOnTheWay;
                Q_EMIT runSettled();
            });
        });
    });
    connect(m_runs, &RunController::finished, this, [this] {
        if (m_recordsOnTheWay == 0) {
            QTimer::singleShot(0, this, &Workbench::runSettled); // a Play frame: no row to wait for
        }
    });
    // The history beside the project: loaded with it, written after every
    // change, so runs of earlier sessions (and earlier sources) can be compared.
    auto loading = std::make_shared<bool>(false);
    const auto save = [this, loading](const QString &projectPath) {
        const QString path = historyPathFor(projectPath);
        if (*loading || path.isEmpty()) {
            return;
        }
        const QList<RunRecord> records = m_history->records();
        // No runs and no file: nothing to keep, so no empty file beside the
        // project. (A history the user cleared still overwrites its file.)
        if (records.isEmpty() && !QFileInfo::exists(path)) {
            return;
        }
        QPointer<Workbench> self(this);
        historyWriter().start([path, records, self] {
            const Status s = saveHistory(path, records);
            if (!s) {
                const QString message = s.error().message;
                // Through the application object, which outlives any workbench: this one may be gone by now.
                QMetaObject::invokeMethod(qApp, [self, message] {
                    if (self) {
                        self->log(tr("The run history could not be saved: %1").arg(message));
                    }
                });
            }
        });
    };
    connect(m_doc, &ProjectDocument::loaded, this, [this, loading] {
        *loading = true;
        const QString path = historyPathFor(m_doc->path());
        Result<QList<RunRecord>> history =
            path.isEmpty() ? Result<QList<RunRecord>>(QList<RunRecord>{}) : loadHistory(path);
        if (history) {
            m_history->setRecords(*history);
            if (!history->isEmpty()) {
                log(tr("Run history: %1 runs from %2").arg(history->size()).arg(path));
            }
        } else {
            // The project opens all the same; the unreadable file is kept under another name, not overwritten.
            m_history->setRecords({});
            const QString aside = path + QStringLiteral(".unreadable");
            QFile::remove(aside);
            const bool kept = QFile::rename(path, aside);
            log(tr("The run history was not loaded: %1. %2")
                    .arg(history.error().message,
                         kept ? tr("It was kept as %1, and a new history starts.").arg(aside)
                              : tr("It is left as it is, and runs of this session are not saved over it.")));
            if (!kept) {
                // Nothing may replace a file we could not move aside.
                *loading = true;
                return;
            }
        }
        *loading = false;
    });
    connect(m_history, &QAbstractItemModel::rowsInserted, this, [this, save] { save(m_doc->path()); });
    connect(m_history, &QAbstractItemModel::modelReset, this, [this, save] { save(m_doc->path()); });
    connect(m_doc, &ProjectDocument::saved, this, [save](const QString &path) { save(path); });
}

} // namespace Kp
