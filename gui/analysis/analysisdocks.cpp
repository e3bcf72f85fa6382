// MainWindow's analysis docks (Occupancy, Compare) and the run history file
// beside the project: built here rather than in mainwindow.cpp so the
// window's own file stays as it is.

#include "mainwindow.h"

#include "analysis/comparepanel.h"
#include "analysis/memorypanel.h"
#include "analysis/occupancyview.h"
#include "devicestatus.h"
#include "editor/codeeditor.h"
#include "inspector/bufferinspector.h"
#include "projectdocument.h"
#include "results/resultspanel.h"
#include "runcontroller.h"

#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QPointer>
#include <QThreadPool>

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

void MainWindow::buildAnalysis()
{
    auto *occupancy = new OccupancyView(this);
    occupancy->setObjectName(QStringLiteral("occupancy"));
    QDockWidget *occupancyDock =
        addDock(tr("Occupancy"), QStringLiteral("occupancyDock"), occupancy, Qt::RightDockWidgetArea);
    if (auto *inspector = findChild<QDockWidget *>(QStringLiteral("inspectorDock"))) {
        tabifyDockWidget(inspector, occupancyDock);
        inspector->raise();
    }
    occupancy->follow(m_doc, m_run, m_launch);
    connect(m_device, &DeviceStatus::deviceFound, occupancy, &OccupancyView::setDevice);

    auto *compare = new ComparePanel(m_results->model(), this);
    compare->setObjectName(QStringLiteral("compare"));
    QDockWidget *compareDock = addDock(tr("Compare"), QStringLiteral("compareDock"), compare, Qt::BottomDockWidgetArea);
    if (auto *results = findChild<QDockWidget *>(QStringLiteral("resultsDock"))) {
        tabifyDockWidget(results, compareDock);
    }
    if (auto *problems = findChild<QDockWidget *>(QStringLiteral("problemsDock"))) {
        problems->raise();
    }
    connect(m_results, &ResultsPanel::compareRequested, this, [compare, compareDock](int a, int b) {
        compare->compareRows(a, b);
        compareDock->show();
        compareDock->raise();
    });

    // The history beside the project: loaded with it, written after every
    // change, so runs of earlier sessions (and earlier sources) can be compared.
    auto loading = std::make_shared<bool>(false);
    const auto save = [this, loading](const QString &projectPath) {
        const QString path = historyPathFor(projectPath);
        if (*loading || path.isEmpty()) {
            return;
        }
        const QList<RunRecord> records = m_results->model()->records();
        QPointer<MainWindow> self(this);
        historyWriter().start([path, records, self] {
            const Status s = saveHistory(path, records);
            if (!s) {
                const QString message = s.error().message;
                // Through the application object, which outlives any window: the window may be gone by now.
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
            m_results->model()->setRecords(*history);
            if (!history->isEmpty()) {
                log(tr("Run history: %1 runs from %2").arg(history->size()).arg(path));
            }
        } else {
            // The project opens all the same; the unreadable file is kept under another name, not overwritten.
            m_results->model()->setRecords({});
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
    connect(m_results->model(), &QAbstractItemModel::rowsInserted, this, [this, save] { save(m_doc->path()); });
    connect(m_results->model(), &QAbstractItemModel::modelReset, this, [this, save] { save(m_doc->path()); });
    connect(m_doc, &ProjectDocument::saved, this, [save](const QString &path) { save(path); });
}

void MainWindow::buildMemory()
{
    m_memory = new MemoryPanel(this);
    m_memory->setObjectName(QStringLiteral("memory"));
    QDockWidget *memoryDock = addDock(tr("Memory"), QStringLiteral("memoryDock"), m_memory, Qt::BottomDockWidgetArea);
    if (auto *log = findChild<QDockWidget *>(QStringLiteral("logDock"))) {
        tabifyDockWidget(log, memoryDock);
        log->raise();
    }
    connect(m_doc, &ProjectDocument::loaded, m_memory, &MemoryPanel::clear);
    // Every run's guard zones: the panel lists the writes outside a buffer,
    // and the Inspector marks the buffer's edge element they went past.
    connect(m_run, &RunController::finished, this, [this, memoryDock](const RunResult &r, bool play) {
        m_memory->setGuardViolations(r.guardViolations);
        if (r.guardViolations.isEmpty()) {
            return;
        }
        const QString label = tr("Guard zones (last run)");
        QHash<QString, QByteArray> masks;
        for (const GuardViolation &v : r.guardViolations) {
            const HostBuffer *b = m_doc->hostBuffers().find(v.buffer);
            const qint64 n = b ? b->elementCount() : 0;
            if (n <= 0) {
                continue;
            }
            QByteArray &m = masks[v.buffer];
            if (m.isEmpty()) {
                m = QByteArray(n, '\0');
            }
            m[qMin(v.edgeElement(), n - 1)] = 1;
        }
        for (auto it = masks.cbegin(); it != masks.cend(); ++it) {
            m_inspector->setFailedCells(it.key(), label, std::make_shared<const QByteArray>(it.value()));
        }
        if (!play) {
            memoryDock->show();
            memoryDock->raise();
            // The first buffer written past, at the edge element the write went beyond.
            const GuardViolation &v = r.guardViolations.first();
            if (masks.contains(v.buffer)) {
                inspectBuffer(v.buffer, QStringLiteral("grid"));
                m_inspector->goTo(QString::number(v.edgeElement()));
            }
        }
    });
    connect(m_memory, &MemoryPanel::sourceLineActivated, this, [this](int line, int otherLine) {
        m_editor->setCursorPosition(line - 1, 0);
        m_editor->ensureLineVisible(line - 1);
        // A race's two lines, marked together.
        m_editor->highlightLines(otherLine > 0 ? qMin(line, otherLine) : line,
                                 otherLine > 0 ? qMax(line, otherLine) : line);
    });
    connect(m_memory, &MemoryPanel::elementActivated, this, [this](const QString &buffer, qint64 element) {
        const HostBuffer *b = m_doc->hostBuffers().find(buffer);
        if (!b) {
            return;
        }
        inspectBuffer(buffer, QStringLiteral("grid"));
        // Past the end there is no cell: the last one is the nearest.
        m_inspector->goTo(QString::number(qBound<qint64>(0, element, b->elementCount() - 1)));
    });
}

} // namespace Kp
