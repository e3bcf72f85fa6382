#include "mainwindow.h"
#include "analysis/memorypanel.h"
#include "sweep/sweeppanel.h"

#include "compile/sandbox.h"

#include "checkrunner.h"
#include "checkspanel.h"
#include "client/engineclient.h"
#include "compilecontroller.h"
#include "core/format.h"
#include "cuda/nvrtcapi.h"
#include "descriptionview.h"
#include "devicestatus.h"
#include "editor/codeeditor.h"
#include "editor/disassembler.h"
#include "editor/findbar.h"
#include "editor/ptxview.h"
#include "inspector/bufferinspector.h"
#include "inspector/imageview.h"
#include "kernelstable.h"
#include "launch/bufferspanel.h"
#include "launch/launchpanel.h"
#include "logpanel.h"
#include "presetgallery.h"
#include "problemspanel.h"
#include "projectdocument.h"
#include "results/resultspanel.h"
#include "runcontroller.h"
#include "theme.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDesktopServices>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QKeyEvent>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMouseEvent>
#include <QProgressBar>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QShowEvent>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableWidget>
#include <QTimer>
#include <QToolButton>
#include <QUndoStack>
#include <QUrl>
#include <QVBoxLayout>

#include <tuple>

namespace Kp {

MainWindow::MainWindow(EngineClient *engine, QWidget *parent)
    : QMainWindow(parent)
    , m_engine(engine)
{
    m_doc = new ProjectDocument(this);
    m_editor = new CodeEditor(this);
    m_editor->setObjectName(QStringLiteral("editor"));
    // The menus' shortcuts (zoom, find, go to line) win over the editor's typing.
    m_editor->installEventFilter(this);
    m_findBar = new FindBar(m_editor, this);
    auto *central = new QWidget(this);
    auto *centralLayout = new QVBoxLayout(central);
    centralLayout->setContentsMargins(0, 0, 0, 0);
    centralLayout->setSpacing(0);
    centralLayout->addWidget(m_editor, 1);
    centralLayout->addWidget(m_findBar);
    setCentralWidget(central);
    m_compile = new CompileController(m_doc, m_editor, this);
    m_run = new RunController(m_engine, m_doc, m_compile, this);
    m_device = new DeviceStatus(m_engine, statusBar(), this);
    m_disassembler = new Disassembler(this);

    // Status bar: the GPU (DeviceStatus adds itself first), NVRTC, the cursor, compile and run state.
    auto *nvrtcLabel = new QLabel(this);
    nvrtcLabel->setObjectName(QStringLiteral("nvrtcStatus"));
    // NVRTC is opened here, in the GUI's process: compiling needs no GPU.
    const Result<const NvrtcApi *> nvrtc = NvrtcApi::instance();
    nvrtcLabel->setText(nvrtc ? tr("NVRTC %1").arg((*nvrtc)->versionString()) : tr("NVRTC not found: cannot compile"));
    nvrtcLabel->setToolTip(nvrtc ? (*nvrtc)->libraryPath : nvrtc.error().message);
    // Whether a source can read this machine's files while it compiles (docs/security.md).
    auto *sandboxLabel = new QLabel(this);
    sandboxLabel->setObjectName(QStringLiteral("sandboxStatus"));
    const Sandbox::Availability sandbox = Sandbox::availability();
    sandboxLabel->setText(sandbox.sandboxed ? tr("Sandboxed") : tr("Not sandboxed"));
    sandboxLabel->setToolTip(tr("Compiler: %1").arg(sandbox.text));
    auto *positionLabel = new QLabel(this);
    statusBar()->addPermanentWidget(nvrtcLabel);
    statusBar()->addPermanentWidget(sandboxLabel);
    statusBar()->addPermanentWidget(positionLabel);
    connect(m_editor, &QsciScintilla::cursorPositionChanged, positionLabel, [positionLabel](int line, int index) {
        positionLabel->setText(tr("Ln %1, Col %2").arg(line + 1).arg(index + 1));
    });
    m_compileLabel = new QLabel(this);
    m_compileLabel->setObjectName(QStringLiteral("compileStatus"));
    statusBar()->addPermanentWidget(m_compileLabel);
    auto *busy = new QProgressBar(this);
    busy->setObjectName(QStringLiteral("busy"));
    busy->setRange(0, 0); // a run's length is not known in advance
    busy->setMaximumWidth(140);
    busy->setFormat(tr("running"));
    auto *abortButton = new QToolButton(this);
    abortButton->setText(tr("Abort"));
    abortButton->setToolTip(tr("Stop the run (Esc)"));
    connect(abortButton, &QToolButton::clicked, this, &MainWindow::abortRun);
    m_busy = new QWidget(this);
    auto *busyLayout = new QHBoxLayout(m_busy);
    busyLayout->setContentsMargins(0, 0, 0, 0);
    busyLayout->addWidget(busy);
    busyLayout->addWidget(abortButton);
    m_busy->hide();
    statusBar()->addPermanentWidget(m_busy);

    // Docks: compile output at the bottom and right, the workbench around them.
    // The launch panel is tall (fields, arguments, buttons): it takes the left
    // edge from top to bottom, and the bottom docks sit beside it.
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    m_problems = new ProblemsPanel(this);
    QDockWidget *problemsDock =
        addDock(tr("Problems"), QStringLiteral("problemsDock"), m_problems, Qt::BottomDockWidgetArea);
    m_kernels = new KernelsTable(this);
    QDockWidget *kernelsDock =
        addDock(tr("Kernels"), QStringLiteral("kernelsDock"), m_kernels, Qt::BottomDockWidgetArea);
    tabifyDockWidget(problemsDock, kernelsDock);
    m_ptx = new PtxView(this);
    m_ptx->setObjectName(QStringLiteral("ptx"));
    QDockWidget *ptxDock = addDock(tr("PTX"), QStringLiteral("ptxDock"), m_ptx, Qt::RightDockWidgetArea);
    m_sass = new PtxView(this);
    m_sass->setObjectName(QStringLiteral("sass"));
    QDockWidget *sassDock = addDock(tr("SASS"), QStringLiteral("sassDock"), m_sass, Qt::RightDockWidgetArea);
    tabifyDockWidget(ptxDock, sassDock);
    ptxDock->raise();
    m_launch = new LaunchPanel(this);
    m_launch->setObjectName(QStringLiteral("launchPanel"));
    addDock(tr("Launch"), QStringLiteral("launchDock"), m_launch, Qt::LeftDockWidgetArea);
    m_buffersPanel = new BuffersPanel(this);
    QDockWidget *buffersDock =
        addDock(tr("Buffers"), QStringLiteral("buffersDock"), m_buffersPanel, Qt::BottomDockWidgetArea);
    tabifyDockWidget(kernelsDock, buffersDock);
    m_inspector = new BufferInspector(this);
    m_inspector->setObjectName(QStringLiteral("inspector"));
    QDockWidget *inspectorDock =
        addDock(tr("Inspector"), QStringLiteral("inspectorDock"), m_inspector, Qt::RightDockWidgetArea);
    tabifyDockWidget(sassDock, inspectorDock);
    m_results = new ResultsPanel(this);
    m_results->setObjectName(QStringLiteral("results"));
    QDockWidget *resultsDock =
        addDock(tr("Results"), QStringLiteral("resultsDock"), m_results, Qt::BottomDockWidgetArea);
    tabifyDockWidget(buffersDock, resultsDock);
    m_log = new LogPanel(this);
    QDockWidget *logDock = addDock(tr("Log"), QStringLiteral("logDock"), m_log, Qt::BottomDockWidgetArea);
    tabifyDockWidget(resultsDock, logDock);
    problemsDock->raise();

    // The panels follow the document themselves.
    m_launch->setDocument(m_doc);
    m_buffersPanel->setDocument(m_doc);
    connect(m_buffersPanel, &BuffersPanel::logMessage, this, &MainWindow::log);
    connect(m_doc, &ProjectDocument::buffersChanged, m_inspector, [this] {
        if (!m_run->isRunning()) {
            m_inspector->setBuffers(m_doc->hostBuffers().all());
        }
    });
    connect(m_doc, &ProjectDocument::loaded, this, [this] {
        takeSourceFromDocument();
        if (!m_doc->hostBuffers().all().isEmpty()) {
            m_inspector->showBuffer(m_doc->hostBuffers().all().first()->spec.name);
        }
    });
    connect(m_doc, &ProjectDocument::projectChanged, this, &MainWindow::projectChanged);
    connect(m_doc, &ProjectDocument::modifiedChanged, this, &MainWindow::updateTitle);
    connect(m_doc, &ProjectDocument::saved, this, [this](const QString &path) {
        m_editor->setModified(false);
        rebuildRecentMenu();
        log(tr("Saved %1").arg(path));
    });
    connect(m_editor, &QsciScintilla::modificationChanged, m_doc, &ProjectDocument::setSourceModified);
    connect(m_device, &DeviceStatus::deviceFound, m_compile, &CompileController::setDevice);
    connect(m_device, &DeviceStatus::ordinalChosen, this, &MainWindow::setDeviceOrdinal);
    connect(m_device, &DeviceStatus::changed, this, &MainWindow::deviceStatusChanged);
    connect(m_problems, &ProblemsPanel::jumpRequested, this, [this](int line, int column) {
        m_editor->setCursorPosition(line - 1, qMax(0, column - 1));
        m_editor->ensureLineVisible(line - 1);
        m_editor->setFocus();
    });
    connect(m_editor, &QsciScintilla::selectionChanged, this, &MainWindow::syncPtxToSelection);
    connect(m_editor, &QsciScintilla::cursorPositionChanged, this, &MainWindow::syncPtxToSelection);
    connect(m_ptx, &PtxView::sourceLineSelected, this, [this](int line) { m_editor->highlightLines(line, line); });
    connect(m_sass, &PtxView::sourceLineSelected, this, [this](int line) { m_editor->highlightLines(line, line); });
    wireCompile();
    wireRun();
    buildChecksAndPresets();
    buildSweep();
    buildAnalysis();
    buildMemory();
    buildMenus();
    fitToScreen();
    // Layouts and splitters as the user left them.
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    m_restoredLayout = restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    updateTitle();
}

MainWindow::~MainWindow() = default;

QDockWidget *MainWindow::addDock(const QString &title, const QString &name, QWidget *widget, Qt::DockWidgetArea area)
{
    auto *dock = new QDockWidget(title, this);
    dock->setObjectName(name);
    dock->setWidget(widget);
    addDockWidget(area, dock);
    // The View menu shows the title as it is: "&" is a mnemonic marker in menu text.
    dock->toggleViewAction()->setText(QString(title).replace(QLatin1Char('&'), QStringLiteral("&&")));
    return dock;
}

QSize MainWindow::initialSize(const QRect &available)
{
    return {qMin(1600, available.width() * 9 / 10), qMin(960, available.height() * 9 / 10)};
}

void MainWindow::fitToScreen()
{
    // At most 90 % of the screen the window opens on (its status bar stays
    // on screen), at most 1600 x 960 on large screens; the editor takes what
    // the docks leave.
    const QScreen *s = screen() ? screen() : QGuiApplication::primaryScreen();
    const QRect avail = s ? s->availableGeometry() : QRect(0, 0, 1600, 1000);
    const QSize size = initialSize(avail);
    resize(size);
    move(avail.center() - QPoint(size.width() / 2, size.height() / 2));
}

void MainWindow::showEvent(QShowEvent *event)
{
    QMainWindow::showEvent(event);
    if (!m_docksSized && !m_restoredLayout) {
        // Once the window has its size: dock sizes set before that are lost in the first layout.
        m_docksSized = true;
        QTimer::singleShot(0, this, &MainWindow::sizeDocks);
    }
}

void MainWindow::sizeDocks()
{
    const QSize size = this->size();
    auto *launchDock = findChild<QDockWidget *>(QStringLiteral("launchDock"));
    auto *ptxDock = findChild<QDockWidget *>(QStringLiteral("ptxDock"));
    auto *problemsDock = findChild<QDockWidget *>(QStringLiteral("problemsDock"));
    // Side docks about a quarter of the width each; the bottom docks short
    // (a few lines of Problems) until a run or an error gives them content.
    resizeDocks({launchDock, ptxDock}, {size.width() * 28 / 100, size.width() * 27 / 100}, Qt::Horizontal);
    resizeDocks({problemsDock}, {qMax(150, size.height() * 22 / 100)}, Qt::Vertical);
}

bool MainWindow::eventFilter(QObject *watched, QEvent *event)
{
    // QScintilla claims every key with text (Ctrl+= types "="). A key that a
    // menu action owns is left to the action, as in any editor.
    if (watched == m_editor && event->type() == QEvent::ShortcutOverride) {
        auto *key = static_cast<QKeyEvent *>(event);
        const QKeySequence pressed(key->keyCombination());
        for (QAction *a : m_editorOverrides) {
            for (const QKeySequence &k : a->shortcuts()) {
                if (k.matches(pressed) == QKeySequence::ExactMatch) {
                    event->ignore();
                    return true;
                }
            }
        }
    }
    return QMainWindow::eventFilter(watched, event);
}

void MainWindow::buildMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&New Project"), this, &MainWindow::newProject)->setShortcut(QKeySequence::New);
    file->addAction(tr("New from &Preset…"), this, &MainWindow::newFromPreset);
    file->addAction(tr("&Open…"), this, &MainWindow::openFileDialog)->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    file->addAction(tr("&Save"), this, &MainWindow::saveProject)->setShortcut(QKeySequence::Save);
    file->addAction(tr("Save &As…"), this, &MainWindow::saveProjectAs)->setShortcut(QKeySequence::SaveAs);
    file->addSeparator();
    file->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows)->setShortcut(QKeySequence::Quit);

    // Undo and Redo act on the editor's text while it has the focus, and on
    // the project's edits (launch, buffers, scalars, timing) elsewhere: each
    // keeps its own history, as in any IDE with text and property panels.
    QMenu *edit = menuBar()->addMenu(tr("&Edit"));
    QUndoStack *stack = m_doc->undoStack();
    QAction *undo = edit->addAction(tr("&Undo"));
    undo->setObjectName(QStringLiteral("undoAction"));
    undo->setShortcut(QKeySequence::Undo);
    QAction *redo = edit->addAction(tr("&Redo"));
    redo->setObjectName(QStringLiteral("redoAction"));
    // Ctrl+Y and Ctrl+Shift+Z both redo, whatever the platform's convention.
    redo->setShortcuts({QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)});
    const auto editorActive = [this] { return m_editor->hasFocus(); };
    connect(undo, &QAction::triggered, this, [this, stack, editorActive] {
        if (editorActive()) {
            m_editor->undo();
        } else {
            stack->undo();
        }
    });
    connect(redo, &QAction::triggered, this, [this, stack, editorActive] {
        if (editorActive()) {
            m_editor->redo();
        } else {
            stack->redo();
        }
    });
    // The menu says what it would undo before it opens.
    connect(edit, &QMenu::aboutToShow, this, [this, stack, undo, redo, editorActive] {
        const bool inEditor = editorActive();
        undo->setText(inEditor ? tr("&Undo Typing")
                               : (stack->canUndo() ? tr("&Undo %1").arg(stack->undoText()) : tr("&Undo")));
        redo->setText(inEditor ? tr("&Redo Typing")
                               : (stack->canRedo() ? tr("&Redo %1").arg(stack->redoText()) : tr("&Redo")));
        undo->setEnabled(inEditor ? m_editor->isUndoAvailable() : stack->canUndo());
        redo->setEnabled(inEditor ? m_editor->isRedoAvailable() : stack->canRedo());
    });
    // Shortcuts work with the menu closed: enable both, the handler decides.
    connect(edit, &QMenu::aboutToHide, this, [undo, redo] {
        undo->setEnabled(true);
        redo->setEnabled(true);
    });
    // Cut, Copy and Paste go to the widget with the focus: the editor or a panel's field.
    edit->addSeparator();
    const auto clipboardAction = [this, edit](const QString &text, QKeySequence::StandardKey key, const char *slot) {
        QAction *a = edit->addAction(text, this, [this, slot] {
            QWidget *w = QApplication::focusWidget();
            if (w) {
                QMetaObject::invokeMethod(w, slot);
            }
        });
        a->setShortcut(key);
        // The focused widget handles its own keys; the menu entry is for the mouse.
        a->setShortcutContext(Qt::WidgetShortcut);
        return a;
    };
    clipboardAction(tr("Cu&t"), QKeySequence::Cut, "cut");
    clipboardAction(tr("&Copy"), QKeySequence::Copy, "copy");
    clipboardAction(tr("&Paste"), QKeySequence::Paste, "paste");
    edit->addSeparator();
    QAction *find = edit->addAction(tr("&Find…"), this, [this] { m_findBar->open(false); });
    find->setObjectName(QStringLiteral("findAction"));
    find->setShortcut(QKeySequence::Find);
    QAction *findNext = edit->addAction(tr("Find &Next"), this, [this] { m_findBar->findNext(); });
    findNext->setShortcut(QKeySequence::FindNext);
    QAction *findPrevious = edit->addAction(tr("Find Pre&vious"), this, [this] { m_findBar->findNext(true); });
    findPrevious->setShortcut(QKeySequence::FindPrevious);
    QAction *replace = edit->addAction(tr("R&eplace…"), this, [this] { m_findBar->open(true); });
    replace->setObjectName(QStringLiteral("replaceAction"));
    replace->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_H));
    QAction *gotoLine = edit->addAction(tr("&Go to Line…"), this, &MainWindow::goToLine);
    gotoLine->setObjectName(QStringLiteral("goToLineAction"));
    gotoLine->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
    m_editorOverrides << redo << find << findNext << findPrevious << replace << gotoLine;

    QMenu *build = menuBar()->addMenu(tr("&Build"));
    build->addAction(tr("&Compile Now"), this, &MainWindow::compileNow)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    QAction *runAction = build->addAction(tr("&Run"), this, &MainWindow::runNow);
    runAction->setObjectName(QStringLiteral("runAction"));
    // Compile-only mode: the menu entry is off like the button, and says why.
    connect(m_device, &DeviceStatus::changed, runAction, [this, runAction] {
        runAction->setEnabled(m_device->canRun());
        runAction->setStatusTip(m_device->whyNoRun());
    });
    runAction->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Return), QKeySequence(Qt::CTRL | Qt::Key_Enter)});
    runAction->setShortcutContext(Qt::ApplicationShortcut);
    QMenu *memory = build->addMenu(tr("Check &Memory"));
    memory->setObjectName(QStringLiteral("checkMemoryMenu"));
    memory->setStatusTip(tr("Run the project once under compute-sanitizer and mark what it finds"));
    for (const auto &[label, tool, hazards] :
         {std::tuple{tr("&memcheck: out-of-bounds accesses"), Sanitizer::Tool::Memcheck, false},
          std::tuple{tr("&racecheck: shared-memory races"), Sanitizer::Tool::Racecheck, false},
          std::tuple{tr("racecheck, every &hazard"), Sanitizer::Tool::Racecheck, true},
          std::tuple{tr("&initcheck: uninitialised reads"), Sanitizer::Tool::Initcheck, false},
          std::tuple{tr("&synccheck: barrier errors"), Sanitizer::Tool::Synccheck, false}}) {
        memory->addAction(label, this, [this, tool = tool, hazards = hazards] { checkMemory(tool, hazards); });
    }
    QAction *sweepAction = build->addAction(tr("S&weep…"), this, [this] {
        QDockWidget *dock = findChild<QDockWidget *>(QStringLiteral("sweepDock"));
        dock->show();
        dock->raise();
    });
    sweepAction->setObjectName(QStringLiteral("sweepAction"));
    QAction *abortAction = build->addAction(tr("&Abort"), this, &MainWindow::abortRun);
    abortAction->setShortcut(QKeySequence(Qt::Key_Escape));
    abortAction->setShortcutContext(Qt::ApplicationShortcut);

    QMenu *view = menuBar()->addMenu(tr("&View"));
    for (QDockWidget *d : findChildren<QDockWidget *>()) {
        view->addAction(d->toggleViewAction());
    }
    view->addSeparator();
    // The editor's text size: the standard keys, and the keypad's (which QScintilla knows itself).
    QAction *zoomIn = view->addAction(tr("Zoom &In"), this, [this] { m_editor->zoomIn(); });
    zoomIn->setObjectName(QStringLiteral("zoomInAction"));
    zoomIn->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Equal), QKeySequence(Qt::CTRL | Qt::Key_Plus),
                          QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Plus),
                          QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Equal)});
    QAction *zoomOut = view->addAction(tr("Zoom &Out"), this, [this] { m_editor->zoomOut(); });
    zoomOut->setObjectName(QStringLiteral("zoomOutAction"));
    zoomOut->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Minus), QKeySequence(Qt::CTRL | Qt::Key_Underscore),
                           QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Minus)});
    QAction *zoomReset = view->addAction(tr("&Reset Zoom"), this, [this] { m_editor->zoomTo(0); });
    zoomReset->setObjectName(QStringLiteral("zoomResetAction"));
    zoomReset->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    m_editorOverrides << zoomIn << zoomOut << zoomReset;
    view->addSeparator();
    QMenu *themes = view->addMenu(tr("&Theme"));
    auto *themeGroup = new QActionGroup(this);
    for (const QString &name : themeNames()) {
        QAction *a = themes->addAction(name == QLatin1String("system")  ? tr("System")
                                       : name == QLatin1String("light") ? tr("Light")
                                                                        : tr("Dark"));
        a->setCheckable(true);
        a->setChecked(name == currentTheme());
        themeGroup->addAction(a);
        connect(a, &QAction::triggered, this, [name] {
            applyTheme(name);
            QSettings().setValue(QStringLiteral("theme"), name);
        });
    }

    QMenu *settings = menuBar()->addMenu(tr("&Settings"));
    QAction *confine = settings->addAction(tr("&Confine Projects to Their Folder"));
    confine->setObjectName(QStringLiteral("confineAction"));
    confine->setCheckable(true);
    confine->setChecked(ProjectDocument::confinePaths());
    confine->setStatusTip(tr("Refuse a project that names a source, include folder or input file outside its own "
                             "folder (applies to projects opened from now on)"));
    connect(confine, &QAction::toggled, this, [](bool on) { ProjectDocument::setConfinePaths(on); });

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    QAction *keys = help->addAction(tr("&Keyboard Shortcuts"), this, &MainWindow::showShortcuts);
    keys->setObjectName(QStringLiteral("shortcutsAction"));
    keys->setShortcut(QKeySequence::HelpContents);
    help->addAction(tr("&Documentation"), this, [this] {
        const QString docs = documentationPath();
        if (docs.isEmpty() || !QDesktopServices::openUrl(QUrl::fromLocalFile(docs))) {
            QMessageBox::information(this, tr("Documentation"),
                                     tr("The documentation is installed with the program (share/doc/"
                                        "kernel-playground); no copy was found beside this one."));
        }
    });
    help->addAction(tr("&About Kernel Playground"), this,
                    [this] { QMessageBox::about(this, tr("About Kernel Playground"), aboutText()); });
    for (QMenu *m : {file, edit, build, view, help}) {
        for (QAction *a : m->actions()) {
            if (!a->shortcuts().isEmpty() && !a->toolTip().isEmpty()) {
                // Menus show the keys; tooltips of the same actions elsewhere say them too.
                a->setToolTip(QStringLiteral("%1 (%2)").arg(a->text().remove(QLatin1Char('&')),
                                                            a->shortcut().toString(QKeySequence::NativeText)));
            }
        }
    }
    rebuildRecentMenu();
}

QString MainWindow::aboutText() const
{
    const Result<const NvrtcApi *> nvrtc = NvrtcApi::instance();
    return tr("<b>Kernel Playground %1</b><p>Write CUDA C kernels and run them visually.</p>"
              "<table><tr><td>Qt</td><td>%2 (built with %3)</td></tr>"
              "<tr><td>NVRTC</td><td>%4</td></tr>"
              "<tr><td>CUDA driver</td><td>%5</td></tr>"
              "<tr><td>Licence</td><td>MIT</td></tr></table>")
        .arg(QStringLiteral(KPG_VERSION), QString::fromLatin1(qVersion()), QStringLiteral(QT_VERSION_STR),
             nvrtc ? (*nvrtc)->versionString() : tr("not found"),
             m_device->known() ? m_device->driverVersion() : tr("not asked yet"));
}

QString MainWindow::documentationPath()
{
    // Installed: <prefix>/bin/kernel-playground and <prefix>/share/doc/kernel-playground/README.md.
    const QDir bin(QCoreApplication::applicationDirPath());
    for (const QString &rel :
         {QStringLiteral("../share/doc/kernel-playground/README.md"), QStringLiteral("../../README.md")}) {
        const QString path = QDir::cleanPath(bin.absoluteFilePath(rel));
        if (QFileInfo(path).isFile()) {
            return path;
        }
    }
    return {};
}

QList<QPair<QString, QString>> MainWindow::shortcutList() const
{
    QList<QPair<QString, QString>> out;
    for (QAction *menu : menuBar()->actions()) {
        if (!menu->menu()) {
            continue;
        }
        for (QAction *a : menu->menu()->actions()) {
            if (a->shortcuts().isEmpty()) {
                continue;
            }
            QStringList keys;
            for (const QKeySequence &k : a->shortcuts()) {
                keys << k.toString(QKeySequence::NativeText);
            }
            out.append(
                {a->text().remove(QLatin1Char('&')).remove(QStringLiteral("…")), keys.join(QStringLiteral(", "))});
        }
    }
    // The editor's own keys.
    out.append({tr("Complete the word"), QStringLiteral("Ctrl+Space")});
    out.append({tr("Zoom the editor (keypad)"), QStringLiteral("Ctrl+Keypad +, Ctrl+Keypad -")});
    out.append({tr("Go to a problem"), tr("click it in Problems")});
    return out;
}

void MainWindow::showShortcuts()
{
    QDialog dialog(this);
    dialog.setObjectName(QStringLiteral("shortcutsDialog"));
    dialog.setWindowTitle(tr("Keyboard Shortcuts"));
    auto *layout = new QVBoxLayout(&dialog);
    const auto list = shortcutList();
    auto *table = new QTableWidget(int(list.size()), 2, &dialog);
    table->setObjectName(QStringLiteral("shortcutsTable"));
    table->setHorizontalHeaderLabels({tr("Action"), tr("Keys")});
    table->verticalHeader()->hide();
    table->horizontalHeader()->setStretchLastSection(true);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    for (int r = 0; r < list.size(); ++r) {
        table->setItem(r, 0, new QTableWidgetItem(list[r].first));
        table->setItem(r, 1, new QTableWidgetItem(list[r].second));
    }
    table->resizeColumnToContents(0);
    layout->addWidget(table);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, &dialog);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    layout->addWidget(buttons);
    dialog.resize(520, 560);
    m_shortcutsDialog = &dialog;
    dialog.exec();
    m_shortcutsDialog = nullptr;
}

void MainWindow::goToLine()
{
    int line = 0, index = 0;
    m_editor->getCursorPosition(&line, &index);
    bool ok = false;
    const int lines = m_editor->lines();
    const int target =
        QInputDialog::getInt(this, tr("Go to Line"), tr("Line (1 to %1):").arg(lines), line + 1, 1, lines, 1, &ok);
    if (ok) {
        m_editor->setCursorPosition(target - 1, 0);
        m_editor->ensureLineVisible(target - 1);
        m_editor->setFocus();
    }
}

void MainWindow::wireCompile()
{
    connect(m_compile, &CompileController::statusChanged, this, [this](const QString &text, const QString &tip) {
        m_compileLabel->setText(text);
        m_compileLabel->setToolTip(tip);
    });
    connect(m_compile, &CompileController::compiled, this, &MainWindow::showCompile);
    connect(m_compile, &CompileController::settled, this, &MainWindow::compileFinished);
    connect(m_disassembler, &Disassembler::finished, this, [this](const QByteArray &text, const PtxLineMap &map) {
        m_sass->setAssembly(text, map);
        syncPtxToSelection();
        Q_EMIT sassFinished();
    });
}

void MainWindow::showCompile(const CompileResult &r)
{
    const QString name = m_doc->sourceFileName();
    m_editor->setDiagnostics(r.diagnostics, name);
    m_problems->setDiagnostics(r.diagnostics, name);
    m_kernels->setKernels(r.kernels);
    if (!r.ptx.isEmpty()) {
        m_ptx->setPtx(r.ptx, name);
        m_disassembler->disassemble(r, name);
        syncPtxToSelection();
    } else if (m_ptx->text().isEmpty() || m_ptx->lineMap().isEmpty()) {
        m_ptx->setPtx(QByteArrayLiteral("// No PTX: the source does not compile yet (see Problems).\n"), {});
    }
    // The argument table follows the signature as it is now.
    m_launch->setKernels(r.kernels);
}

void MainWindow::wireRun()
{
    connect(m_launch, &LaunchPanel::runRequested, this, &MainWindow::runNow);
    connect(m_launch, &LaunchPanel::abortRequested, this, &MainWindow::abortRun);
    connect(m_launch, &LaunchPanel::stepRequested, m_run, &RunController::step);
    connect(m_launch, &LaunchPanel::playToggled, m_run, &RunController::setPlaying);
    connect(m_run, &RunController::playStopped, m_launch, &LaunchPanel::stopPlaying);
    // Compile-only mode said where it matters: on the buttons that would run.
    connect(m_device, &DeviceStatus::changed, this,
            [this] { m_launch->setRunAvailable(m_device->canRun(), m_device->whyNoRun()); });
    connect(m_doc, &ProjectDocument::validationChanged, this, [this] {
        const QString estimate = m_run->occupancyEstimate(m_launch->currentStep());
        if (!estimate.isEmpty()) {
            m_launch->setOccupancy(estimate);
        }
    });
    connect(m_run, &RunController::message, this, &MainWindow::log);
    connect(m_run, &RunController::statusChanged, m_compileLabel, &QLabel::setText);
    connect(m_run, &RunController::busyChanged, m_busy, &QWidget::setVisible);
    connect(m_run, &RunController::started, this, [this] { m_launch->setRunning(true); });
    connect(m_run, &RunController::buffersReleased, this, [this] { m_inspector->setBuffers({}); });
    connect(m_run, &RunController::launching, this, [this] {
        m_inspector->setBuffers(m_doc->hostBuffers().all());
        m_inspector->beforeRun();
    });
    connect(m_run, &RunController::failed, this, [this] {
        m_launch->setRunning(false);
        m_inspector->setBuffers(m_doc->hostBuffers().all());
        Q_EMIT runFinished();
    });
    connect(m_run, &RunController::recorded, m_results, [this](const RunRecord &rec) {
        // In its own turn of the event loop, so the chart adds nothing to the inspector's stall.
        QTimer::singleShot(0, m_results, [this, rec] { m_results->addRun(rec); });
    });
    connect(m_run, &RunController::finished, this, [this](const RunResult &r, bool play) {
        m_launch->setRunning(false);
        m_inspector->setBuffers(m_doc->hostBuffers().all());
        if (!r.steps.isEmpty()) {
            const StepResult &s = r.steps.first();
            m_inspector->setLaunch(s.grid, s.block);
            m_launch->setOccupancy(occupancyText(s.occupancy, s.limits.numRegs) +
                                   tr(", %1 B static shared").arg(s.limits.staticSharedBytes));
        }
        // The inspector's refresh (statistics, image conversion) takes its own
        // turn of the event loop, so it adds nothing to the chart's stall.
        QTimer::singleShot(0, m_inspector, [this] { m_inspector->afterRun(); });
        const bool frame = play && !r.error && m_run->isPlaying();
        if (!frame) {
            if (auto *dock =
                    findChild<QDockWidget *>(r.error ? QStringLiteral("logDock") : QStringLiteral("resultsDock"))) {
                dock->raise(); // a failure's story is in the log; a result's in Results
            }
        }
        // After the deferred refreshes above: listeners see the result shown.
        QTimer::singleShot(0, this, [this] { Q_EMIT runFinished(); });
    });
}

void MainWindow::buildChecksAndPresets()
{
    // The start page stands in for the editor until a project is open.
    auto *central = new QStackedWidget(this);
    central->setObjectName(QStringLiteral("central"));
    // Whatever holds the editor (the editor itself, or it with its bars) goes into the stack as it is.
    QWidget *editorArea = takeCentralWidget();
    central->addWidget(editorArea);
    m_startPage = new StartPage(central);
    central->addWidget(m_startPage);
    central->setCurrentWidget(m_startPage);
    setCentralWidget(central);
    m_compile->setActive(false);
    connect(m_startPage, &StartPage::presetActivated, this, [this](const QString &path) {
        if (Status s = openProject(path); !s) {
            QMessageBox::warning(this, tr("Open Preset"), s.error().message);
        }
    });
    connect(m_startPage, &StartPage::newRequested, this, &MainWindow::newProject);
    connect(m_startPage, &StartPage::openRequested, this, &MainWindow::openFileDialog);

    m_checkRunner = new CheckRunner(this);
    m_checks = new ChecksPanel(this);
    m_checks->setObjectName(QStringLiteral("checks"));
    QDockWidget *checksDock = addDock(tr("Checks"), QStringLiteral("checksDock"), m_checks, Qt::BottomDockWidgetArea);
    if (auto *results = findChild<QDockWidget *>(QStringLiteral("resultsDock"))) {
        tabifyDockWidget(results, checksDock);
    }
    if (auto *problems = findChild<QDockWidget *>(QStringLiteral("problemsDock"))) {
        problems->raise(); // the Checks tab comes forward when a check fails
    }
    m_description = new DescriptionView(this);
    QDockWidget *descriptionDock =
        addDock(tr("Description"), QStringLiteral("descriptionDock"), m_description, Qt::LeftDockWidgetArea);
    if (auto *launch = findChild<QDockWidget *>(QStringLiteral("launchDock"))) {
        tabifyDockWidget(launch, descriptionDock);
        launch->raise();
    }

    const auto noteFor = [this](const Project &p) {
        m_checks->setNote(p.checks.isEmpty()
                              ? tr("This project has no checks (\"checks\" in the .kpg).")
                              : tr("%n check(s): run the project to evaluate them.", nullptr, int(p.checks.size())));
    };
    connect(m_doc, &ProjectDocument::loaded, this, [this, central, editorArea, noteFor] {
        central->setCurrentWidget(editorArea);
        m_compile->setActive(true);
        m_description->setProject(m_doc->project());
        m_checkRunner->clear();
        m_inspector->clearFailedCells();
        noteFor(m_doc->project());
    });
    connect(m_doc, &ProjectDocument::projectChanged, this, [this] { m_description->setProject(m_doc->project()); });
    connect(m_run, &RunController::started, this, [this](bool play) {
        // The buffers are about to change: failing cells of the last run no longer describe them.
        m_checkRunner->clear();
        m_inspector->clearFailedCells();
        if (!m_doc->project().checks.isEmpty()) {
            m_checks->setNote(play ? tr("Playing: checks are evaluated after a Run, not for Play or Step frames.")
                                   : tr("Running… the checks follow the run."));
        }
    });
    connect(m_run, &RunController::failed, this, [this] {
        m_checks->setNote(tr("The run failed before the GPU: checks were not evaluated."));
        Q_EMIT checksSettled();
    });
    connect(m_run, &RunController::finished, this, [this, noteFor](const RunResult &r, bool play) {
        if (play) {
            return; // frames continue from the last state: checks describe a Run
        }
        if (r.error) {
            m_checks->setNote(
                tr("The run failed (%1): checks were not evaluated.").arg(Error::codeName(r.error->code)));
            Q_EMIT checksSettled();
            return;
        }
        const Project &p = m_run->lastRunProject();
        m_checkRunner->evaluate(p, m_doc->hostBuffers().all(), m_run->deviceOrdinal());
        if (p.checks.isEmpty()) {
            noteFor(p);
            Q_EMIT checksSettled();
        }
        // A preset's own output image becomes its card's thumbnail.
        if (p.path.startsWith(QLatin1String(":/presets/"))) {
            const QString preset = QFileInfo(p.path).dir().dirName();
            if (const HostBuffer *b = m_doc->hostBuffers().find(thumbnailBufferOf(p))) {
                storeThumbnail(preset,
                               renderBufferThumbnail(*b, {PresetGallery::kThumbWidth, PresetGallery::kThumbHeight}));
            }
        }
    });
    connect(m_checkRunner, &CheckRunner::message, this, &MainWindow::log);
    connect(m_checkRunner, &CheckRunner::finished, this, &MainWindow::checksSettled);
    connect(m_checkRunner, &CheckRunner::evaluated, this, [this, checksDock](const QList<CheckOutcome> &outcomes) {
        m_checks->setOutcomes(outcomes);
        bool failed = false;
        for (const CheckOutcome &o : outcomes) {
            if (o.failedMask && !o.result.passed) {
                m_inspector->setFailedCells(o.result.buffer, o.result.name, o.failedMask);
            }
            failed = failed || (!o.pending && (!o.result.passed || o.result.error));
        }
        if (failed) {
            checksDock->raise(); // a failing check is the news of this run
        }
    });
    connect(m_checks, &ChecksPanel::mismatchActivated, this,
            [this](int, const QString &buffer, qint64 index, const QList<qint64> &coords) {
                inspectBuffer(buffer, QStringLiteral("grid"));
                // Coordinates outermost first, as the inspector's go-to field takes them.
                const HostBuffer *b = m_doc->hostBuffers().find(buffer);
                QStringList at;
                for (qsizetype a = b ? std::min<qsizetype>(b->shape.size(), 3) - 1 : -1; a >= 0; --a) {
                    at << QString::number(coords.value(a));
                }
                if (at.size() != (b ? b->shape.size() : 0) || !m_inspector->goTo(at.join(QStringLiteral(", ")))) {
                    m_inspector->goTo(QString::number(index));
                }
            });
    connect(m_checks, &ChecksPanel::checkActivated, this, [this](int check) {
        const CheckOutcome &o = m_checks->outcomes().value(check);
        if (!m_inspector->showFailedCells(o.result.name)) {
            inspectBuffer(o.result.buffer, QStringLiteral("grid"));
            return;
        }
        if (auto *dock = findChild<QDockWidget *>(QStringLiteral("inspectorDock"))) {
            dock->show();
            dock->raise();
        }
    });
}

void MainWindow::newFromPreset()
{
    if (isProjectModified() &&
        QMessageBox::question(this, tr("New from Preset"), tr("Discard the unsaved changes?")) != QMessageBox::Yes) {
        return;
    }
    PresetDialog dialog(this);
    if (dialog.exec() != QDialog::Accepted || dialog.chosenPath().isEmpty()) {
        return;
    }
    if (Status s = openProject(dialog.chosenPath()); !s) {
        QMessageBox::warning(this, tr("New from Preset"), s.error().message);
    }
}

void MainWindow::takeSourceFromDocument()
{
    // The editor takes the document's text first: the compile controller
    // reads the text from the editor.
    m_editor->setText(m_doc->project().sourceText);
    m_editor->setModified(false);
    m_inspector->setBuffers(m_doc->hostBuffers().all());
    updateTitle();
    m_compile->compileNow(); // the editor has the new text now
}

void MainWindow::syncPtxToSelection()
{
    int lineFrom = 0, indexFrom = 0, lineTo = 0, indexTo = 0;
    m_editor->getSelection(&lineFrom, &indexFrom, &lineTo, &indexTo);
    if (lineFrom < 0) {
        int index = 0;
        m_editor->getCursorPosition(&lineFrom, &index);
        lineTo = lineFrom;
    }
    m_ptx->highlightSourceLines(lineFrom + 1, lineTo + 1);
    m_sass->highlightSourceLines(lineFrom + 1, lineTo + 1);
}

Status MainWindow::openSource(const QString &path)
{
    return path.endsWith(QLatin1String(".kpg")) ? openProject(path) : m_doc->openSource(path);
}

Status MainWindow::openProject(const QString &path)
{
    const Status s = m_doc->openProject(path);
    if (s) {
        rebuildRecentMenu();
        const Project &p = m_doc->project();
        log(tr("Opened %1%2").arg(path, p.title.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(p.title)));
    }
    return s;
}

Status MainWindow::saveProjectTo(const QString &path)
{
    m_doc->setSourceText(m_editor->text());
    return m_doc->saveTo(path);
}

void MainWindow::openFileDialog()
{
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open"), QString(),
        tr("Projects and kernels (*.kpg *.cu *.cuh);;Projects (*.kpg);;CUDA sources (*.cu *.cuh);;All files (*)"));
    if (path.isEmpty()) {
        return;
    }
    if (const Status s = openSource(path); !s) {
        QMessageBox::warning(this, tr("Open"), s.error().message);
    }
}

void MainWindow::updateTitle()
{
    setWindowTitle(
        QStringLiteral("%1%2 — Kernel Playground").arg(m_doc->displayName(), isProjectModified() ? "*" : ""));
}

void MainWindow::refreshDeviceStatus()
{
    m_device->refresh();
}

bool MainWindow::deviceStatusKnown() const
{
    return m_device->known();
}

QString MainWindow::deviceStatusText() const
{
    return m_device->text();
}

void MainWindow::compileNow()
{
    m_compile->compileNow();
}

const CompileResult &MainWindow::lastCompile() const
{
    return m_compile->last();
}

QTreeWidget *MainWindow::problems() const
{
    return m_problems;
}

QTableWidget *MainWindow::kernelsTable() const
{
    return m_kernels;
}

QPlainTextEdit *MainWindow::logView() const
{
    return m_log;
}

const Project &MainWindow::project() const
{
    return m_doc->project();
}

bool MainWindow::isProjectModified() const
{
    return m_doc->isModified();
}

bool MainWindow::confirmSourceOverwrite(const QString &kpgPath)
{
    const QString conflict = m_doc->sourceConflict(kpgPath);
    return conflict.isEmpty() ||
           QMessageBox::question(this, tr("Save As"),
                                 tr("%1 already exists and holds another kernel (it may belong to another "
                                    "project). Replace it with this project's kernel?")
                                     .arg(conflict),
                                 QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel) == QMessageBox::Yes;
}

void MainWindow::saveProject()
{
    if (m_doc->path().isEmpty()) {
        saveProjectAs();
        return;
    }
    if (Status s = saveProjectTo(m_doc->path()); !s) {
        QMessageBox::warning(this, tr("Save"), s.error().message);
    }
}

void MainWindow::saveProjectAs()
{
    // A new project goes where projects were last saved (else the user's
    // documents), a bare kernel's beside its .cu; never the working directory.
    QString suggested = m_doc->path();
    if (suggested.isEmpty()) {
        const QString dir = !m_doc->sourceDir().isEmpty()
                                ? m_doc->sourceDir()
                                : QSettings()
                                      .value(QStringLiteral("lastSaveDir"),
                                             QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation))
                                      .toString();
        suggested = QDir(dir).filePath(m_doc->suggestedBaseName() + QStringLiteral(".kpg"));
    }
    QString path = QFileDialog::getSaveFileName(this, tr("Save Project As"), suggested, tr("Projects (*.kpg)"));
    if (path.isEmpty()) {
        return;
    }
    if (!path.endsWith(QLatin1String(".kpg"))) {
        path += QStringLiteral(".kpg");
    }
    m_doc->setSourceText(m_editor->text());
    if (!confirmSourceOverwrite(path)) {
        return;
    }
    if (Status s = m_doc->saveTo(path); !s) {
        QMessageBox::warning(this, tr("Save As"), s.error().message);
    } else {
        QSettings().setValue(QStringLiteral("lastSaveDir"), QFileInfo(path).absolutePath());
    }
}

bool MainWindow::maybeSave(const QString &title)
{
    if (!isProjectModified()) {
        return true;
    }
    const auto answer = QMessageBox::question(
        this, title,
        tr("Save the changes to %1 first?").arg(m_doc->path().isEmpty() ? tr("this project") : m_doc->path()),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Cancel) {
        return false;
    }
    if (answer == QMessageBox::Save) {
        saveProject();
        return !isProjectModified(); // saving failed or was cancelled: stay
    }
    return true;
}

void MainWindow::newProject()
{
    if (!maybeSave(tr("New Project"))) {
        return;
    }
    if (Status s = m_doc->newProject(); !s) {
        QMessageBox::warning(this, tr("New Project"), s.error().message);
    }
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = ProjectDocument::recentProjects();
    for (const QString &path : recent) {
        m_recentMenu->addAction(path, this, [this, path] {
            if (Status s = openProject(path); !s) {
                QMessageBox::warning(this, tr("Open Recent"), s.error().message);
            }
        });
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
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

void MainWindow::runNow()
{
    m_run->run();
}

void MainWindow::checkMemory(Sanitizer::Tool tool, bool hazards)
{
    if (!m_memoryCheck) {
        m_memoryCheck = new MemoryCheck(this);
        connect(m_memoryCheck, &MemoryCheck::finished, this, &MainWindow::showMemoryCheck);
    }
    m_compile->syncSource();
    if (!m_memoryCheck->start(m_doc->project(), tool, hazards, m_run->deviceOrdinal())) {
        log(tr("Check memory: a check is already running"));
        return;
    }
    statusBar()->showMessage(
        tr("Checking memory with %1 (one run under compute-sanitizer)…").arg(Sanitizer::toolName(tool)));
    m_memory->setChecking(tool);
}

void MainWindow::showMemoryCheck(const SanitizedRun &run, Sanitizer::Tool tool)
{
    for (const QString &line : sanitizerLogLines(run, tool)) {
        log(line);
    }
    m_memory->setCheck(run, tool);
    if (auto *dock = findChild<QDockWidget *>(QStringLiteral("memoryDock"))) {
        dock->show();
        dock->raise();
    }
    if (run.report) {
        const QString name = m_doc->sourceFileName();
        const QList<Diagnostic> d = sanitizerDiagnostics(*run.report, name);
        m_editor->setDiagnostics(d, name);
        m_problems->setDiagnostics(d, name);
        // The cells the findings touched, red in the Inspector as a failed check's are.
        QHash<QString, qint64> counts;
        for (const auto &b : m_doc->hostBuffers().all()) {
            counts.insert(b->spec.name, b->elementCount());
        }
        const QString label = tr("Check memory (%1)").arg(Sanitizer::toolName(tool));
        const QHash<QString, QByteArray> masks = sanitizerMasks(*run.report, counts);
        for (auto it = masks.cbegin(); it != masks.cend(); ++it) {
            m_inspector->setFailedCells(it.key(), label, std::make_shared<const QByteArray>(it.value()));
        }
        if (!masks.isEmpty()) {
            m_inspector->showFailedCells(label);
        }
        statusBar()->showMessage(
            run.report->findings.isEmpty() ? tr("Check memory (%1): no findings").arg(Sanitizer::toolName(tool))
            : run.report->findings.size() == 1
                ? tr("Check memory (%1): 1 finding, marked in the editor").arg(Sanitizer::toolName(tool))
                : tr("Check memory (%1): %2 findings, marked in the editor")
                      .arg(Sanitizer::toolName(tool))
                      .arg(run.report->findings.size()));
    } else {
        const std::optional<Error> &e = run.reportError ? run.reportError : run.checked.error;
        statusBar()->showMessage(tr("Check memory failed: %1").arg(e ? e->message : tr("no report")));
    }
    Q_EMIT memoryCheckFinished();
}

void MainWindow::abortRun()
{
    m_run->abort();
}

bool MainWindow::isRunning() const
{
    return m_run->isRunning();
}

HostBuffers &MainWindow::hostBuffers()
{
    return m_doc->hostBuffers();
}

const QList<RunResult> &MainWindow::runs() const
{
    return m_run->runs();
}

int MainWindow::deviceOrdinal() const
{
    return m_run->deviceOrdinal();
}

void MainWindow::setDeviceOrdinal(int ordinal)
{
    m_run->setDeviceOrdinal(ordinal);
    m_device->setOrdinal(m_run->deviceOrdinal());
}

void MainWindow::inspectBuffer(const QString &name, const QString &view)
{
    m_inspector->setBuffers(m_doc->hostBuffers().all());
    m_inspector->showBuffer(name);
    m_inspector->setCurrentTab(view == QLatin1String("image")  ? BufferInspector::Tab::Image
                               : view == QLatin1String("diff") ? BufferInspector::Tab::Diff
                                                               : BufferInspector::Tab::Grid);
    if (auto *dock = findChild<QDockWidget *>(QStringLiteral("inspectorDock"))) {
        dock->show();
        dock->raise();
    }
}

void MainWindow::hoverPixel(int x, int y)
{
    ImageView *view = m_inspector->imageView();
    const QPointF pos = view->origin() + QPointF((x + 0.5) * view->zoom(), (y + 0.5) * view->zoom());
    QMouseEvent move(QEvent::MouseMove, pos, view->mapToGlobal(pos), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QCoreApplication::sendEvent(view, &move);
}

void MainWindow::log(const QString &text)
{
    m_log->log(text);
}

void MainWindow::buildSweep()
{
    // The Sweep panel (gui/sweep): its own runner and workers; it reads the document at Run.
    m_sweep = new SweepPanel(this);
    m_sweep->setDocument(m_doc);
    // In a scroll area, so its controls never raise the window's minimum size.
    auto *scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(m_sweep);
    QDockWidget *dock = addDock(tr("Sweep"), QStringLiteral("sweepDock"), scroll, Qt::BottomDockWidgetArea);
    if (QDockWidget *log = findChild<QDockWidget *>(QStringLiteral("logDock"))) {
        tabifyDockWidget(log, dock);
    }
    // The roofline shows the current run beside the sweep's points.
    connect(this, &MainWindow::runFinished, m_sweep, [this] {
        if (!runs().isEmpty()) {
            m_sweep->setCurrentRun(runs().last());
        }
    });
}

} // namespace Kp
