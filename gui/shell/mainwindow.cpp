#include "mainwindow.h"

#include "devicestatus.h"
#include "docks.h"
#include "editor/accessheat.h"
#include "editor/codeeditor.h"
#include "editor/disassembler.h"
#include "editor/findbar.h"
#include "editor/ptxview.h"
#include "panels/start/presetgallery.h"
#include "statusbar.h"
#include "windowplacement.h"
#include "workbench/compilecontroller.h"
#include "workbench/devices.h"
#include "workbench/projectdocument.h"
#include "workbench/runcontroller.h"
#include "workbench/selection.h"

#include <QCloseEvent>
#include <QCoreApplication>
#include <QDockWidget>
#include <QMessageBox>
#include <QSettings>
#include <QShowEvent>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTimer>
#include <QVBoxLayout>

namespace Kp {

MainWindow::MainWindow(EngineClient *engine, QWidget *parent)
    : QMainWindow(parent)
{
    m_wb = new Workbench(engine, this);
    buildCentral();
    m_status = new StatusLine(*m_wb, statusBar(), m_editor, this);
    // The launch panel is tall (fields, arguments, buttons): it takes the left
    // edge from top to bottom, and the bottom docks sit beside it.
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    m_docks = new Docks(*m_wb, this);
    m_docks->waitForFirstPaint();
    // The start's second half waits for the first paint (firstPainted()).
    m_editor->viewport()->installEventFilter(this);
    QTimer::singleShot(0, this, [this] {
        if (!m_editor->viewport()->isVisible()) {
            settleStart(); // never shown by the event loop's first turn: tests, a screenshot without a screen
        } else {
            // Shown but maybe never painted (started minimized, on another
            // desktop): the compile and the panels do not wait past 2 s.
            QTimer::singleShot(2000, this, &MainWindow::settleStart);
        }
    });
    connect(this, &MainWindow::firstPainted, m_docks, &Docks::windowPainted);
    // The panels built after the first paint bring their minimum sizes: the default layout is
    // shared out again (a saved one keeps its sizes), and the window kept inside the screen.
    connect(m_docks, &Docks::allBuilt, this, [this] {
        QTimer::singleShot(0, this, [this] { // after the layout has taken them in
            if (m_docksSized && !m_restoredLayout) {
                sizeDocks();
            }
            if (m_placed) {
                moveOnScreen();
            }
        });
    });
    followWorkbench();
    buildMenus();
    fitToScreen();
    // Layouts and splitters as the user left them.
    QSettings settings;
    const bool restored = restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    m_restoredLayout = restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    if (restored) {
        keepOnScreen(); // after the docks' saved sizes, which can widen it too
    }
    updateTitle();
}

MainWindow::~MainWindow() = default;

FindBar *MainWindow::findBar()
{
    if (!m_findBar) {
        m_findBar = new FindBar(m_editor, m_editorLayout->parentWidget());
        m_editorLayout->addWidget(m_findBar);
    }
    return m_findBar;
}

void MainWindow::buildCentral()
{
    m_editor = new CodeEditor(this);
    m_editor->setObjectName(QStringLiteral("editor"));
    new AccessHeatMargin(m_editor, *m_wb); // parented to the editor
    // The find bar below the editor is made at its first use (findBar()).
    auto *editorArea = new QWidget(this);
    m_editorLayout = new QVBoxLayout(editorArea);
    m_editorLayout->setContentsMargins(0, 0, 0, 0);
    m_editorLayout->setSpacing(0);
    m_editorLayout->addWidget(m_editor, 1);
    // The start page stands in for the editor until a project is open.
    auto *central = new QStackedWidget(this);
    central->setObjectName(QStringLiteral("central"));
    central->addWidget(editorArea);
    m_startPage = new StartPage(*m_wb, central);
    central->addWidget(m_startPage);
    central->setCurrentWidget(m_startPage);
    setCentralWidget(central);
    m_wb->compile().setActive(false);
    connect(&m_wb->document(), &ProjectDocument::loaded, this, [this, central, editorArea] {
        central->setCurrentWidget(editorArea);
        // The editor takes the project's text before anything may compile:
        // a compile skipped on the start page (a GPU found meanwhile asks for
        // one) reads the editor's text into the document, and done first it
        // would have replaced the project's source with the empty editor's.
        takeSourceFromDocument();
        m_wb->compile().setActive(m_settled); // else at the first paint (settleStart())
    });
    connect(m_startPage, &StartPage::presetActivated, this, [this](const QString &path) {
        if (!maybeSave(tr("Open Preset"))) {
            return;
        }
        if (Status s = openProject(path); !s) {
            QMessageBox::warning(this, tr("Open Preset"), s.error().message);
        }
    });
    connect(m_startPage, &StartPage::newRequested, this, &MainWindow::newProject);
    connect(m_startPage, &StartPage::openRequested, this, &MainWindow::openFileDialog);
}

void MainWindow::followWorkbench()
{
    ProjectDocument &doc = m_wb->document();
    CompileController &compile = m_wb->compile();
    // The editor is the text the workbench compiles and runs.
    compile.setTextSource([this] { return m_editor->text(); });
    connect(m_editor, &QsciScintilla::textChanged, &compile, &CompileController::textEdited);
    connect(m_editor, &QsciScintilla::modificationChanged, &doc, &ProjectDocument::setSourceModified);
    const auto selectionToWorkbench = [this] {
        int lineFrom = 0, indexFrom = 0, lineTo = 0, indexTo = 0;
        m_editor->getSelection(&lineFrom, &indexFrom, &lineTo, &indexTo);
        if (lineFrom < 0) {
            int index = 0;
            m_editor->getCursorPosition(&lineFrom, &index);
            lineTo = lineFrom;
        }
        m_wb->selection().setSourceLines(lineFrom + 1, lineTo + 1);
    };
    connect(m_editor, &QsciScintilla::selectionChanged, this, selectionToWorkbench);
    connect(m_editor, &QsciScintilla::cursorPositionChanged, this, selectionToWorkbench);
    connect(&doc, &ProjectDocument::modifiedChanged, this, &MainWindow::updateTitle);
    connect(&doc, &ProjectDocument::saved, this, [this](const QString &path) {
        m_editor->setModified(false);
        rebuildRecentMenu();
        m_wb->log(tr("Saved %1").arg(path));
    });
    // Diagnostics in the editor's margin: the compile's, then a memory check's.
    connect(&compile, &CompileController::compiled, m_editor, [this](const CompileResult &r) {
        m_editor->setDiagnostics(r.diagnostics, m_wb->document().sourceFileName());
    });
    connect(m_wb, &Workbench::memoryCheckFinished, m_editor, [this](const SanitizedRun &run) {
        if (run.report) {
            const QString name = m_wb->document().sourceFileName();
            m_editor->setDiagnostics(sanitizerDiagnostics(*run.report, name), name);
        }
    });
    connect(m_wb, &Workbench::showSourceLine, m_editor,
            [this](int line, int column, int highlightFrom, int highlightTo, bool focus) {
                if (line > 0) {
                    m_editor->setCursorPosition(line - 1, qMax(0, column - 1));
                    m_editor->ensureLineVisible(line - 1);
                }
                if (highlightFrom > 0) {
                    m_editor->highlightLines(highlightFrom, highlightTo);
                }
                if (focus) {
                    m_editor->setFocus();
                }
            });

    // What tests and the screenshot mode wait for, after the panels have shown it.
    connect(&m_wb->devices(), &Devices::changed, this, &MainWindow::deviceStatusChanged);
    connect(&compile, &CompileController::settled, this, &MainWindow::compileFinished);
    // The SASS panel's disassembler, once its panel is built (never with the window: it is behind PTX).
    connect(m_docks, &Docks::panelBuilt, this, [this](PanelId id, QWidget *panel) {
        if (auto *d = id == PanelId::Sass ? panel->findChild<Disassembler *>() : nullptr) {
            connect(d, &Disassembler::finished, this, &MainWindow::sassFinished);
        }
    });
    connect(&doc, &ProjectDocument::projectChanged, this, &MainWindow::projectChanged);
    connect(&m_wb->runs(), &RunController::failed, this, &MainWindow::runFinished);
    // After the panels' deferred refreshes and the history's row: listeners see the result shown.
    connect(m_wb, &Workbench::runSettled, this, &MainWindow::runFinished);
    connect(m_wb, &Workbench::checksSettled, this, &MainWindow::checksSettled);
    connect(m_wb, &Workbench::memoryCheckFinished, this, &MainWindow::memoryCheckFinished);
}

void MainWindow::fitToScreen()
{
    // At most 90 % of the screen the window opens on (its status bar stays
    // on screen), at most 1600 x 960 on large screens; the editor takes what
    // the docks leave.
    const QRect avail = WindowPlacement::availableFor(this).value_or(QRect(0, 0, 1600, 1000));
    place(WindowPlacement::initialGeometry(avail, minimumSizeHint()));
}

void MainWindow::place(const QRect &g)
{
    // move() places the frame: unchanged where the rules left the window as it is.
    if (g != geometry()) {
        resize(g.size());
        move(g.topLeft());
    }
}

void MainWindow::moveOnScreen()
{
    const std::optional<QRect> avail = WindowPlacement::availableFor(this);
    if (avail && !avail->contains(geometry())) {
        move(WindowPlacement::movedInside(geometry(), *avail).topLeft());
    }
}

void MainWindow::keepOnScreen()
{
    // A size saved on a larger screen (an external monitor, then the laptop
    // alone) would put the status bar and the right docks off this one.
    if (const std::optional<QRect> avail = WindowPlacement::availableFor(this)) {
        place(WindowPlacement::keptOnScreen(geometry(), *avail, minimumSizeHint()));
    }
}

void MainWindow::showEvent(QShowEvent *event)
{
    QMainWindow::showEvent(event);
    if (!m_placed) {
        // The first layout may raise the window to a minimum larger than the
        // one estimated before the panels were polished: move it back inside
        // (its size is the layout's or the caller's, and stays).
        m_placed = true;
        QTimer::singleShot(0, this, &MainWindow::moveOnScreen);
    }
    if (!m_docksSized && !m_restoredLayout) {
        // Once the window has its size: dock sizes set before that are lost in the first layout.
        m_docksSized = true;
        QTimer::singleShot(0, this, &MainWindow::sizeDocks);
    }
}

void MainWindow::sizeDocks()
{
    const QSize size = this->size();
    // Side docks about a quarter of the width each; the bottom docks short
    // (a few lines of Problems) until a run or an error gives them content.
    resizeDocks({m_docks->dock(PanelId::Launch), m_docks->dock(PanelId::Ptx)},
                {size.width() * 28 / 100, size.width() * 27 / 100}, Qt::Horizontal);
    resizeDocks({m_docks->dock(PanelId::Problems)}, {qMax(150, size.height() * 22 / 100)}, Qt::Vertical);
}

void MainWindow::settleStart()
{
    if (m_settled) {
        return;
    }
    m_settled = true;
    // The compile (a thread and a child process) and NVRTC's opening start
    // first; then the panels, on this thread, while they work.
    if (m_wb->document().isOpen()) {
        m_wb->compile().setActive(true);
    }
    m_status->openNvrtc();
    Q_EMIT firstPainted();
}

bool MainWindow::eventFilter(QObject *watched, QEvent *event)
{
    if (!m_settled && watched == m_editor->viewport() && event->type() == QEvent::Paint) {
        m_editor->viewport()->removeEventFilter(this);
        // After this paint has reached the screen: the next turn of the event loop.
        QTimer::singleShot(0, this, &MainWindow::settleStart);
    }
    return QMainWindow::eventFilter(watched, event);
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (!maybeSave(tr("Unsaved changes"))) {
        event->ignore();
        return;
    }
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    QMainWindow::closeEvent(event);
}

void MainWindow::takeSourceFromDocument()
{
    // The editor takes the document's text first: the compile controller
    // reads the text from the editor.
    m_editor->setText(m_wb->document().project().sourceText);
    m_editor->setModified(false);
    updateTitle();
    m_wb->compile().compileNow(); // the editor has the new text now
}

void MainWindow::updateTitle()
{
    setWindowTitle(
        QStringLiteral("%1%2 — Kernel Playground").arg(m_wb->document().displayName(), isProjectModified() ? "*" : ""));
}

const Project &MainWindow::project() const
{
    return m_wb->document().project();
}

bool MainWindow::isProjectModified() const
{
    return m_wb->document().isModified();
}

void MainWindow::runNow()
{
    m_wb->runs().run();
}

void MainWindow::abortRun()
{
    m_wb->runs().abort();
}

void MainWindow::checkMemory(Sanitizer::Tool tool, bool hazards)
{
    m_wb->checkMemory(tool, hazards);
}

bool MainWindow::isRunning() const
{
    return m_wb->runs().isRunning();
}

HostBuffers &MainWindow::hostBuffers()
{
    return m_wb->document().hostBuffers();
}

const QList<RunResult> &MainWindow::runs() const
{
    return m_wb->runs().runs();
}

int MainWindow::deviceOrdinal() const
{
    return m_wb->runs().deviceOrdinal();
}

void MainWindow::setDeviceOrdinal(int ordinal)
{
    m_wb->runs().setDeviceOrdinal(ordinal);
    m_wb->devices().setOrdinal(m_wb->runs().deviceOrdinal());
}

void MainWindow::refreshDeviceStatus()
{
    m_wb->devices().refresh();
}

bool MainWindow::deviceStatusKnown() const
{
    return m_wb->devices().known();
}

QString MainWindow::deviceStatusText() const
{
    return m_status->device()->text();
}

void MainWindow::compileNow()
{
    m_wb->compile().compileNow();
}

const CompileResult &MainWindow::lastCompile() const
{
    return m_wb->compile().last();
}

} // namespace Kp
