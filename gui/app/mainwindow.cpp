#include "mainwindow.h"

#include "buffers/bufferexport.h"
#include "buffers/npy.h"
#include "client/engineclient.h"
#include "compile/compileservice.h"
#include "cuda/deviceinfo.h"
#include "cuda/driverapi.h"
#include "cuda/nvrtcapi.h"
#include "editor/codeeditor.h"
#include "editor/ptxview.h"
#include "inspector/bufferinspector.h"
#include "inspector/imageview.h"
#include "launch/bufferspanel.h"
#include "launch/launchpanel.h"
#include "project/projectio.h"
#include "results/resultspanel.h"
#include "results/runhistory.h"
#include "theme.h"
#include "worker/protocol.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMouseEvent>
#include <QPlainTextEdit>
#include <QProcess>
#include <QProgressBar>
#include <QSettings>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryFile>
#include <QTime>
#include <QTimer>
#include <QToolButton>
#include <QTreeWidget>

namespace Kp {

namespace {
/** "100 % (8 blocks/SM, 64 of 64 warps), limited by ...; 12 registers/thread" */
QString occupancyText(const Occupancy &o, int registers)
{
    return MainWindow::tr("%1 % (%2 blocks/SM, %3 of %4 warps), limited by %5; %6 registers/thread")
        .arg(o.ratio * 100, 0, 'f', 0)
        .arg(o.blocksPerSm)
        .arg(o.activeWarps)
        .arg(o.maxWarps)
        .arg(o.limiter)
        .arg(registers);
}
} // namespace

MainWindow::MainWindow(EngineClient *engine, QWidget *parent)
    : QMainWindow(parent)
    , m_engine(engine)
{
    m_editor = new CodeEditor(this);
    m_editor->setObjectName(QStringLiteral("editor"));
    setCentralWidget(m_editor);

    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&New Project"), this, &MainWindow::newProject)->setShortcut(QKeySequence::New);
    QAction *open = file->addAction(tr("&Open…"), this, &MainWindow::openFileDialog);
    open->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    file->addAction(tr("&Save"), this, &MainWindow::saveProject)->setShortcut(QKeySequence::Save);
    file->addAction(tr("Save &As…"), this, &MainWindow::saveProjectAs)->setShortcut(QKeySequence::SaveAs);
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows);
    quit->setShortcut(QKeySequence::Quit);
    QMenu *help = menuBar()->addMenu(tr("&Help"));
    // (the Build menu is inserted before Help below)
    help->addAction(tr("&About Kernel Playground"), this, [this] {
        QMessageBox::about(this, tr("About Kernel Playground"),
                           tr("<b>Kernel Playground %1</b><p>Write CUDA C kernels and run them visually.</p>")
                               .arg(QStringLiteral(KPG_VERSION)));
    });

    m_deviceLabel = new QLabel(tr("Looking for a GPU…"), this);
    m_deviceLabel->setObjectName(QStringLiteral("deviceStatus"));
    m_deviceChooser = new QComboBox(this);
    m_deviceChooser->setObjectName(QStringLiteral("deviceChooser"));
    m_deviceChooser->setToolTip(tr("The GPU runs go to; each GPU has its own worker process"));
    m_deviceChooser->hide(); // shown when there is more than one GPU
    connect(m_deviceChooser, &QComboBox::activated, this, [this](int i) { setDeviceOrdinal(i); });
    m_nvrtcLabel = new QLabel(this);
    m_nvrtcLabel->setObjectName(QStringLiteral("nvrtcStatus"));
    m_positionLabel = new QLabel(this);
    statusBar()->addWidget(m_deviceChooser);
    statusBar()->addWidget(m_deviceLabel, 1);
    statusBar()->addPermanentWidget(m_nvrtcLabel);
    statusBar()->addPermanentWidget(m_positionLabel);

    // NVRTC is opened here, in the GUI's process: compiling needs no GPU.
    const Result<const NvrtcApi *> nvrtc = NvrtcApi::instance();
    if (nvrtc) {
        m_nvrtcLabel->setText(tr("NVRTC %1").arg((*nvrtc)->versionString()));
        m_nvrtcLabel->setToolTip((*nvrtc)->libraryPath);
    } else {
        m_nvrtcLabel->setText(tr("NVRTC not found: cannot compile"));
        m_nvrtcLabel->setToolTip(nvrtc.error().message);
    }

    connect(m_editor, &QsciScintilla::cursorPositionChanged, this, [this](int line, int index) {
        m_positionLabel->setText(tr("Ln %1, Col %2").arg(line + 1).arg(index + 1));
    });
    connect(m_editor, &QsciScintilla::modificationChanged, this, &MainWindow::updateTitle);
    connect(m_engine, &EngineClient::workerExited, this, [this](const QString &reason) {
        statusBar()->showMessage(tr("GPU worker stopped: %1").arg(reason), 10000);
    });

    // Compile as you type: NVRTC runs on the compile service's thread; a newer
    // edit replaces a compile still waiting, and results for old text are dropped.
    m_compiler = new CompileService({}, this);
    m_compileTimer = new QTimer(this);
    m_compileTimer->setSingleShot(true);
    m_compileTimer->setInterval(kCompileDelayMs);
    m_compileTimer->setTimerType(Qt::PreciseTimer); // a coarse timer may fire 5% early
    connect(m_compileTimer, &QTimer::timeout, this, &MainWindow::compileNow);
    connect(m_editor, &QsciScintilla::textChanged, this, [this] {
        ++m_revision; // whatever is in flight is now stale
        m_compileTimer->start();
    });
    m_compileLabel = new QLabel(this);
    m_compileLabel->setObjectName(QStringLiteral("compileStatus"));
    statusBar()->addPermanentWidget(m_compileLabel);
    auto *busy = new QProgressBar(this);
    busy->setObjectName(QStringLiteral("busy"));
    busy->setRange(0, 0); // a run's length is not known in advance
    busy->setMaximumWidth(140);
    busy->setFormat(tr("running"));
    busy->hide();
    auto *abortButton = new QToolButton(this);
    abortButton->setText(tr("Abort"));
    abortButton->setToolTip(tr("Stop the run (Esc)"));
    connect(abortButton, &QToolButton::clicked, this, &MainWindow::abortRun);
    auto *busyBox = new QWidget(this);
    auto *busyLayout = new QHBoxLayout(busyBox);
    busyLayout->setContentsMargins(0, 0, 0, 0);
    busyLayout->addWidget(busy);
    busyLayout->addWidget(abortButton);
    busyBox->hide();
    m_busy = busyBox;
    statusBar()->addPermanentWidget(busyBox);

    m_problems = new QTreeWidget(this);
    m_problems->setObjectName(QStringLiteral("problems"));
    m_problems->setHeaderLabels({tr("Severity"), tr("Line"), tr("Col"), tr("Message")});
    m_problems->setRootIsDecorated(false);
    m_problems->setUniformRowHeights(true);
    m_problems->header()->setStretchLastSection(true);
    m_problems->setColumnWidth(0, 80);
    m_problems->setColumnWidth(1, 50);
    m_problems->setColumnWidth(2, 40);
    connect(m_problems, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem *item) {
        const int line = item->data(1, Qt::UserRole).toInt();
        const int col = item->data(2, Qt::UserRole).toInt();
        if (line > 0) {
            m_editor->setCursorPosition(line - 1, qMax(0, col - 1));
            m_editor->ensureLineVisible(line - 1);
            m_editor->setFocus();
        }
    });
    connect(m_problems, &QTreeWidget::itemClicked, m_problems, &QTreeWidget::itemActivated);
    auto *problemsDock = new QDockWidget(tr("Problems"), this);
    problemsDock->setObjectName(QStringLiteral("problemsDock"));
    problemsDock->setWidget(m_problems);
    addDockWidget(Qt::BottomDockWidgetArea, problemsDock);

    m_kernels = new QTableWidget(0, 8, this);
    m_kernels->setObjectName(QStringLiteral("kernels"));
    m_kernels->setHorizontalHeaderLabels({tr("Kernel"), tr("Registers"), tr("Shared"), tr("Constant"), tr("Stack"),
                                          tr("Spill st/ld"), tr("Lowered name"), tr("Parameters")});
    m_kernels->horizontalHeader()->setStretchLastSection(true);
    m_kernels->verticalHeader()->hide();
    m_kernels->setEditTriggers(QAbstractItemView::NoEditTriggers);
    auto *kernelsDock = new QDockWidget(tr("Kernels"), this);
    kernelsDock->setObjectName(QStringLiteral("kernelsDock"));
    kernelsDock->setWidget(m_kernels);
    addDockWidget(Qt::BottomDockWidgetArea, kernelsDock);
    tabifyDockWidget(problemsDock, kernelsDock);
    problemsDock->raise();

    m_ptx = new PtxView(this);
    m_ptx->setObjectName(QStringLiteral("ptx"));
    auto *ptxDock = new QDockWidget(tr("PTX"), this);
    ptxDock->setObjectName(QStringLiteral("ptxDock"));
    ptxDock->setWidget(m_ptx);
    addDockWidget(Qt::RightDockWidgetArea, ptxDock);
    connect(m_editor, &QsciScintilla::selectionChanged, this, &MainWindow::syncPtxToSelection);
    connect(m_editor, &QsciScintilla::cursorPositionChanged, this, &MainWindow::syncPtxToSelection);
    connect(m_ptx, &PtxView::sourceLineSelected, this, [this](int line) { m_editor->highlightLines(line, line); });

    m_sass = new PtxView(this);
    m_sass->setObjectName(QStringLiteral("sass"));
    auto *sassDock = new QDockWidget(tr("SASS"), this);
    sassDock->setObjectName(QStringLiteral("sassDock"));
    sassDock->setWidget(m_sass);
    addDockWidget(Qt::RightDockWidgetArea, sassDock);
    tabifyDockWidget(ptxDock, sassDock);
    ptxDock->raise();
    connect(m_sass, &PtxView::sourceLineSelected, this, [this](int line) { m_editor->highlightLines(line, line); });

    QMenu *build = menuBar()->addMenu(tr("&Build"));
    QAction *compileAction = build->addAction(tr("&Compile Now"), this, &MainWindow::compileNow);
    compileAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    QAction *runAction = build->addAction(tr("&Run"), this, &MainWindow::runNow);
    runAction->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Return), QKeySequence(Qt::CTRL | Qt::Key_Enter)});
    runAction->setShortcutContext(Qt::ApplicationShortcut);
    QAction *abortAction = build->addAction(tr("&Abort"), this, &MainWindow::abortRun);
    abortAction->setShortcut(QKeySequence(Qt::Key_Escape));
    abortAction->setShortcutContext(Qt::ApplicationShortcut);
    menuBar()->insertMenu(help->menuAction(), build);
    QMenu *view = menuBar()->addMenu(tr("&View"));
    menuBar()->insertMenu(help->menuAction(), view);

    // The workbench: launch settings, buffers, the inspector, results and a log.
    m_runner = new Runner(m_engine, this);
    connect(m_runner, &Runner::recovered, this, [this](double ms) {
        log(tr("A fresh GPU worker is ready (%1 ms), with the buffers restored.").arg(ms, 0, 'f', 0));
    });
    m_launch = new LaunchPanel(this);
    m_launch->setObjectName(QStringLiteral("launchPanel"));
    auto *launchDock = new QDockWidget(tr("Kernel & Launch"), this);
    launchDock->setObjectName(QStringLiteral("launchDock"));
    launchDock->setWidget(m_launch);
    addDockWidget(Qt::LeftDockWidgetArea, launchDock);
    connect(m_launch, &LaunchPanel::edited, this, [this](int step, const QString &key, const QJsonValue &value) {
        applyEdit([&](QJsonObject &o) {
            QJsonArray launches = o.value(QStringLiteral("launches")).toArray();
            if (step >= launches.size()) {
                return;
            }
            QJsonObject l = launches[step].toObject();
            l.insert(key, value);
            launches[step] = l;
            o.insert(QStringLiteral("launches"), launches);
        });
    });
    connect(m_launch, &LaunchPanel::timingEdited, this, [this](const QString &key, const QJsonValue &value) {
        applyEdit([&](QJsonObject &o) {
            QJsonObject t = o.value(QStringLiteral("timing")).toObject();
            t.insert(key, value);
            o.insert(QStringLiteral("timing"), t);
        });
    });
    connect(m_launch, &LaunchPanel::runRequested, this, &MainWindow::runNow);
    connect(m_launch, &LaunchPanel::abortRequested, this, &MainWindow::abortRun);
    connect(m_launch, &LaunchPanel::stepRequested, this, [this] { startRun(true); });
    connect(m_launch, &LaunchPanel::playToggled, this, [this](bool on) {
        m_playing = on;
        m_playFrames = 0;
        m_playStartMs = QDateTime::currentMSecsSinceEpoch();
        if (on && !m_running) {
            startRun(true);
        }
    });

    m_buffersPanel = new BuffersPanel(this);
    auto *buffersDock = new QDockWidget(tr("Buffers"), this);
    buffersDock->setObjectName(QStringLiteral("buffersDock"));
    buffersDock->setWidget(m_buffersPanel);
    addDockWidget(Qt::BottomDockWidgetArea, buffersDock);
    tabifyDockWidget(kernelsDock, buffersDock);
    // Edits of the "buffers" and "scalars" lists go through the project's
    // validator; a refused one leaves the message and shows the valid project again.
    const auto editList = [this](const QString &key, const std::function<void(QJsonArray &)> &change) {
        const QString error = applyEdit([&](QJsonObject &o) {
            QJsonArray list = o.value(key).toArray();
            change(list);
            o.insert(key, list);
        });
        m_buffersPanel->setMessage(error);
        if (!error.isEmpty()) {
            m_buffersPanel->setProject(m_project, &m_host);
        }
    };
    const auto setField = [](QJsonArray &list, int index, const QString &field, const QJsonValue &v) {
        if (index < list.size()) {
            QJsonObject item = list[index].toObject();
            item.insert(field, v);
            list[index] = item;
        }
    };
    const auto removeAt = [](QJsonArray &list, int index) {
        if (index < list.size()) {
            list.removeAt(index);
        }
    };
    connect(m_buffersPanel, &BuffersPanel::edited, this,
            [editList, setField](int index, const QString &key, const QJsonValue &v) {
                editList(QStringLiteral("buffers"), [&](QJsonArray &list) { setField(list, index, key, v); });
            });
    connect(m_buffersPanel, &BuffersPanel::addRequested, this, [editList](QJsonObject b) {
        const QJsonObject init = b.value(QStringLiteral("init")).toObject();
        if (init.value(QStringLiteral("kind")).toString() == QLatin1String("npy")) {
            // Adopt the file's dtype, so an import never starts with a mismatch.
            QFile f(init.value(QStringLiteral("file")).toString());
            if (f.open(QIODevice::ReadOnly)) {
                if (const auto h = readNpyHeader(f, f.fileName())) {
                    b.insert(QStringLiteral("dtype"), dtypeName(h->dtype));
                }
            }
        }
        editList(QStringLiteral("buffers"), [&](QJsonArray &list) { list.append(b); });
    });
    connect(m_buffersPanel, &BuffersPanel::removeRequested, this, [editList, removeAt](int index) {
        editList(QStringLiteral("buffers"), [&](QJsonArray &list) { removeAt(list, index); });
    });
    connect(m_buffersPanel, &BuffersPanel::scalarEdited, this,
            [editList, setField](int index, const QString &key, const QJsonValue &v) {
                editList(QStringLiteral("scalars"), [&](QJsonArray &list) { setField(list, index, key, v); });
            });
    connect(m_buffersPanel, &BuffersPanel::scalarAddRequested, this, [editList](const QJsonObject &sc) {
        editList(QStringLiteral("scalars"), [&](QJsonArray &list) { list.append(sc); });
    });
    connect(m_buffersPanel, &BuffersPanel::scalarRemoveRequested, this, [editList, removeAt](int index) {
        editList(QStringLiteral("scalars"), [&](QJsonArray &list) { removeAt(list, index); });
    });
    connect(m_buffersPanel, &BuffersPanel::exportRequested, this, [this](int index, const QString &path) {
        const HostBuffer *b = m_host.find(m_project.buffers.value(index).name);
        if (!b) {
            m_buffersPanel->setMessage(tr("buffer %1 has no contents yet: run once or fix its definition").arg(index));
            return;
        }
        Status s = path.endsWith(QLatin1String(".csv"))   ? exportCsv(path, b->spec.dtype, b->shape, b->memory.data())
                   : path.endsWith(QLatin1String(".png")) ? exportPng(path, b->spec.dtype, b->shape, b->memory.data())
                                                          : exportNpy(path, b->spec.dtype, b->shape, b->memory.data());
        m_buffersPanel->setMessage(s ? QString() : s.error().message);
        if (s) {
            log(tr("Exported buffer '%1' to %2").arg(b->spec.name, path));
        }
    });

    m_inspector = new BufferInspector(this);
    m_inspector->setObjectName(QStringLiteral("inspector"));
    auto *inspectorDock = new QDockWidget(tr("Inspector"), this);
    inspectorDock->setObjectName(QStringLiteral("inspectorDock"));
    inspectorDock->setWidget(m_inspector);
    addDockWidget(Qt::RightDockWidgetArea, inspectorDock);
    tabifyDockWidget(sassDock, inspectorDock);

    m_results = new ResultsPanel(this);
    m_results->setObjectName(QStringLiteral("results"));
    auto *resultsDock = new QDockWidget(tr("Results"), this);
    resultsDock->setObjectName(QStringLiteral("resultsDock"));
    resultsDock->setWidget(m_results);
    addDockWidget(Qt::BottomDockWidgetArea, resultsDock);
    tabifyDockWidget(buffersDock, resultsDock);

    m_log = new QPlainTextEdit(this);
    m_log->setObjectName(QStringLiteral("log"));
    m_log->setReadOnly(true);
    m_log->setFont(monospaceFont());
    m_log->setMaximumBlockCount(20000);
    auto *logDock = new QDockWidget(tr("Log"), this);
    logDock->setObjectName(QStringLiteral("logDock"));
    logDock->setWidget(m_log);
    addDockWidget(Qt::BottomDockWidgetArea, logDock);
    tabifyDockWidget(resultsDock, logDock);
    problemsDock->raise();

    for (QDockWidget *d : findChildren<QDockWidget *>()) {
        view->addAction(d->toggleViewAction());
    }
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
    rebuildRecentMenu();

    resize(1600, 960);
    resizeDocks({ptxDock, launchDock}, {560, 360}, Qt::Horizontal);
    resizeDocks({problemsDock}, {340}, Qt::Vertical); // room for the Results charts
    // Layouts and splitters as the user left them.
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    updateTitle();
}

QString MainWindow::sourceFileName() const
{
    return m_path.isEmpty() ? QStringLiteral("kernel.cu") : QFileInfo(m_path).fileName();
}

void MainWindow::compileNow()
{
    m_compileTimer->stop();
    CompileRequest req;
    req.source = m_editor->text();
    req.fileName = sourceFileName();
    if (!m_path.isEmpty() && !m_path.startsWith(QLatin1Char(':'))) {
        req.projectDir = QFileInfo(m_path).absolutePath();
    }
    req.options = editorOptions();
    req.deviceCcMajor = m_ccMajor;
    req.deviceCcMinor = m_ccMinor;
    const quint64 revision = m_revision;
    m_compileLabel->setText(tr("Compiling…"));
    m_compiler->compile(
        req, this,
        [this, revision](const Result<CompileResult> &r) {
            if (revision != m_revision) {
                return; // the text changed meanwhile; a newer compile is coming
            }
            if (!r) {
                m_compileLabel->setText(tr("Cannot compile: %1").arg(r.error().message));
                return;
            }
            showCompile(r.value());
        },
        QStringLiteral("editor"));
}

void MainWindow::showCompile(const CompileResult &r)
{
    m_lastCompile = r;
    m_editor->setDiagnostics(r.diagnostics, sourceFileName());

    m_problems->clear();
    for (const Diagnostic &d : r.diagnostics) {
        auto *item = new QTreeWidgetItem(m_problems);
        item->setText(0, Diagnostic::severityName(d.severity));
        item->setText(1, d.line > 0 ? QString::number(d.line) : QString());
        item->setText(2, d.column > 0 ? QString::number(d.column) : QString());
        item->setText(3, (d.file == sourceFileName() || d.file.isEmpty() ? QString() : d.file + QStringLiteral(": ")) +
                             d.message.section(QLatin1Char('\n'), 0, 0));
        item->setToolTip(3, d.message);
        item->setData(1, Qt::UserRole, d.file == sourceFileName() ? d.line : 0);
        item->setData(2, Qt::UserRole, d.column);
        item->setForeground(0, d.severity == Diagnostic::Severity::Error     ? QColor(0xd73a49)
                               : d.severity == Diagnostic::Severity::Warning ? QColor(0xb08800)
                                                                             : palette().color(QPalette::Text));
    }

    m_kernels->setRowCount(int(r.kernels.size()));
    for (int i = 0; i < r.kernels.size(); ++i) {
        const KernelInfo &k = r.kernels[i];
        QStringList params;
        for (const KernelParam &p : k.params) {
            params << p.type + (p.type.endsWith(QLatin1Char('*')) ? QString() : QStringLiteral(" ")) + p.name;
        }
        const KernelResources &x = k.resources;
        auto num = [&](int v, const QString &unit = {}) {
            return x.known ? QString::number(v) + unit : QStringLiteral("–");
        };
        const QStringList cells{
            k.name,
            num(x.registers),
            num(x.sharedBytes, QStringLiteral(" B")),
            num(x.constBytes, QStringLiteral(" B")),
            num(x.stackBytes, QStringLiteral(" B")),
            x.known ? QStringLiteral("%1 / %2 B").arg(x.spillStores).arg(x.spillLoads) : QStringLiteral("–"),
            k.loweredName.isEmpty() && k.isTemplate ? tr("(template: add a name expression)") : k.loweredName,
            params.join(QStringLiteral(", "))};
        for (int c = 0; c < cells.size(); ++c) {
            m_kernels->setItem(i, c, new QTableWidgetItem(cells[c]));
        }
    }
    m_kernels->resizeColumnsToContents();

    if (!r.ptx.isEmpty()) {
        m_ptx->setPtx(r.ptx, sourceFileName());
        disassemble(r);
        syncPtxToSelection();
    } else if (m_ptx->text().isEmpty() || m_ptx->lineMap().isEmpty()) {
        m_ptx->setPtx(QByteArrayLiteral("// No PTX: the source does not compile yet (see Problems).\n"), {});
    }
    QString status = r.ok ? tr("Compiled for %1 in %2 ms").arg(r.arch).arg(r.compileMs, 0, 'f', 0)
                          : tr("Compile failed: %n error(s)", nullptr, r.errorCount());
    if (r.cached) {
        status += tr(" (cached)");
    }
    if (r.warningCount() > 0) {
        status += tr(", %n warning(s)", nullptr, r.warningCount());
    }
    m_compileLabel->setText(status);
    m_compileLabel->setToolTip(r.nvrtcOptions.join(QLatin1Char(' ')) + (r.note.isEmpty() ? QString() : "\n" + r.note));
    // The argument table follows the signature as it is now.
    m_launch->setKernels(r.kernels);
    // In its own turn of the event loop: one long stall becomes two short ones.
    QTimer::singleShot(0, this, [this] {
        revalidate();
        Q_EMIT compileFinished();
    });
}

MainWindow::~MainWindow()
{
    // A disassembler still running is killed by its QProcess destructor, which
    // emits finished() while the window is half destroyed (QWidget deletes
    // children before QObject drops connections): cut those connections first.
    for (QProcess *proc : findChildren<QProcess *>(Qt::FindDirectChildrenOnly)) {
        proc->disconnect(this);
    }
}

void MainWindow::disassemble(const CompileResult &r)
{
    static const QString tool = PtxLineMap::findDisassembler();
    if (r.cubin.isEmpty()) {
        m_sass->setAssembly(tr("// No SASS: arch %1 is virtual; choose an sm_XX arch.\n").arg(r.arch).toUtf8(), {});
        Q_EMIT sassFinished();
        return;
    }
    if (tool.isEmpty()) {
        m_sass->setAssembly(tr("// SASS needs nvdisasm or cuobjdump from the CUDA Toolkit;\n"
                               "// neither is in the toolkit's bin folder or on PATH.\n")
                                .toUtf8(),
                            {});
        Q_EMIT sassFinished();
        return;
    }
    // Asynchronous, so the GUI never waits on the disassembler.
    auto *file = new QTemporaryFile(this);
    if (!file->open() || file->write(r.cubin) != r.cubin.size() || !file->flush()) {
        delete file;
        return;
    }
    auto *proc = new QProcess(this);
    const quint64 revision = m_revision;
    const bool nvdisasm = tool.endsWith(QLatin1String("nvdisasm"));
    const QString name = sourceFileName();
    connect(proc, &QProcess::finished, this, [this, proc, file, revision, nvdisasm, name](int code) {
        const QByteArray out = proc->readAllStandardOutput();
        const QByteArray err = proc->readAllStandardError();
        proc->deleteLater();
        file->deleteLater();
        if (revision != m_revision) {
            return; // stale
        }
        if (code != 0) {
            m_sass->setAssembly("// disassembler failed: " + err, {});
        } else {
            m_sass->setAssembly(out, nvdisasm ? PtxLineMap::fromSass(out, name) : PtxLineMap());
            syncPtxToSelection();
        }
        Q_EMIT sassFinished();
    });
    proc->start(tool, nvdisasm ? QStringList{QStringLiteral("--print-line-info"), QStringLiteral("--print-code"),
                                             file->fileName()}
                               : QStringList{QStringLiteral("-sass"), file->fileName()});
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
    if (path.endsWith(QLatin1String(".kpg"))) {
        return openProject(path);
    }
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        return Error{
            QStringLiteral("editor"), Error::Code::BadInput, {}, tr("Cannot open %1: %2").arg(path, f.errorString())};
    }
    m_editor->setText(QString::fromUtf8(f.readAll()));
    m_editor->setModified(false);
    m_path = path;
    // A bare kernel: a project around it with nothing bound yet.
    m_project = Project{};
    m_project.sourceFile = QFileInfo(path).fileName();
    m_project.sourceText = m_editor->text();
    m_projectPath.clear();
    m_savedProject = serializeProject(m_project);
    m_host = HostBuffers();
    m_launch->setProject(m_project);
    m_buffersPanel->setProject(m_project, &m_host);
    m_inspector->setBuffers({});
    updateTitle();
    compileNow();
    return Unit{};
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
    const QString name = !m_projectPath.isEmpty() ? QFileInfo(m_projectPath).fileName()
                         : m_path.isEmpty()       ? tr("untitled")
                                                  : QFileInfo(m_path).fileName();
    setWindowTitle(QStringLiteral("%1%2 — Kernel Playground").arg(name, isProjectModified() ? "*" : ""));
}

void MainWindow::refreshDeviceStatus()
{
    m_engine->request(Protocol::Type::ListDevices, {}, this, [this](const Reply &reply) {
        if (reply) {
            const DeviceList list = DeviceList::fromVariant(reply.value());
            const DeviceInfo &d = list.devices.first();
            if (d.ccMajor != m_ccMajor || d.ccMinor != m_ccMinor) {
                // "auto" now means this GPU's architecture.
                m_ccMajor = d.ccMajor;
                m_ccMinor = d.ccMinor;
                compileNow();
            }
            QString text = tr("%1 · compute %2 · %3 SMs · %4 · CUDA %5 driver")
                               .arg(d.name, d.computeCapability())
                               .arg(d.smCount)
                               .arg(formatBytes(d.totalMemoryBytes), cudaVersionString(list.driverVersion));
            m_deviceChooser->clear();
            for (const DeviceInfo &dev : list.devices) {
                m_deviceChooser->addItem(tr("GPU %1: %2").arg(dev.ordinal).arg(dev.name));
            }
            m_deviceChooser->setCurrentIndex(qBound(0, m_deviceOrdinal, int(list.devices.size()) - 1));
            m_deviceChooser->setVisible(list.devices.size() > 1);
            if (list.devices.size() > 1) {
                text += tr(" (+%1 more)").arg(list.devices.size() - 1);
            }
            m_deviceLabel->setText(text);
            m_deviceLabel->setToolTip(d.pciBusId + QLatin1Char(' ') + d.uuid);
        } else {
            const Error &e = reply.error();
            switch (e.code) {
            case Error::Code::NoDriver: m_deviceLabel->setText(tr("No NVIDIA driver found: compile-only mode")); break;
            case Error::Code::NoDevice: m_deviceLabel->setText(tr("No CUDA device found: compile-only mode")); break;
            default: m_deviceLabel->setText(tr("GPU worker unavailable: compile-only mode")); break;
            }
            m_deviceLabel->setToolTip(e.toString());
        }
        m_deviceStatusKnown = true;
        Q_EMIT deviceStatusChanged();
    });
}

QString MainWindow::deviceStatusText() const
{
    return m_deviceLabel->text();
}

CompileOptions MainWindow::editorOptions() const
{
    // The project's defines and options, plus the template instances its
    // launch steps name, so the editor's compile is the one a run uses.
    return compileOptionsFor(m_project);
}

bool MainWindow::isProjectModified() const
{
    return m_editor->isModified() || serializeProject(m_project) != m_savedProject;
}

Status MainWindow::openProject(const QString &path)
{
    Result<Project> loaded = loadProject(path);
    if (!loaded) {
        return loaded.error();
    }
    m_project = std::move(loaded).value();
    m_projectPath = path.startsWith(QLatin1Char(':')) ? QString() : m_project.path; // a preset is saved elsewhere
    m_savedProject = serializeProject(m_project);
    m_path = m_project.sourceFile.isEmpty() ? QString() : QDir(m_project.dir()).filePath(m_project.sourceFile);
    m_host = HostBuffers();
    m_editor->setText(m_project.sourceText);
    m_editor->setModified(false);
    m_launch->setProject(m_project);
    if (Status s = m_host.materialize(m_project); !s) {
        m_buffersPanel->setMessage(s.error().message);
    }
    m_buffersPanel->setProject(m_project, &m_host);
    m_inspector->setBuffers(m_host.all());
    if (!m_host.all().isEmpty()) {
        m_inspector->showBuffer(m_host.all().first()->spec.name);
    }
    if (!m_projectPath.isEmpty()) {
        addRecent(m_projectPath);
    }
    log(tr("Opened %1%2")
            .arg(path, m_project.title.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(m_project.title)));
    updateTitle();
    compileNow();
    return Unit{};
}

Status MainWindow::saveProjectTo(const QString &path)
{
    Project p = m_project;
    p.sourceText = m_editor->text();
    if (p.sourceFile.isEmpty() && !m_path.isEmpty()) {
        p.sourceFile = QFileInfo(m_path).fileName();
    }
    if (p.sourceFile.isEmpty()) {
        p.sourceFile = QFileInfo(path).completeBaseName() + QStringLiteral(".cu");
    }
    // Files the buffers read stay where they were: make them absolute when
    // the project moves to another folder.
    if (Status s = saveProjectSource(p, path); !s) {
        return s;
    }
    if (Status s = Kp::saveProject(p, path); !s) {
        return s;
    }
    p.path = QFileInfo(path).absoluteFilePath();
    m_project = p;
    m_projectPath = p.path;
    m_path = QDir(m_project.dir()).filePath(m_project.sourceFile);
    m_savedProject = serializeProject(m_project);
    m_editor->setModified(false);
    addRecent(m_projectPath);
    updateTitle();
    log(tr("Saved %1").arg(m_projectPath));
    return Unit{};
}

void MainWindow::saveProject()
{
    if (m_projectPath.isEmpty()) {
        saveProjectAs();
        return;
    }
    if (Status s = saveProjectTo(m_projectPath); !s) {
        QMessageBox::warning(this, tr("Save"), s.error().message);
    }
}

void MainWindow::saveProjectAs()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save Project As"), m_projectPath.isEmpty() ? QStringLiteral("untitled.kpg") : m_projectPath,
        tr("Projects (*.kpg)"));
    if (path.isEmpty()) {
        return;
    }
    if (Status s = saveProjectTo(path.endsWith(QLatin1String(".kpg")) ? path : path + QStringLiteral(".kpg")); !s) {
        QMessageBox::warning(this, tr("Save As"), s.error().message);
    }
}

void MainWindow::newProject()
{
    if (isProjectModified() &&
        QMessageBox::question(this, tr("New Project"), tr("Discard the unsaved changes?")) != QMessageBox::Yes) {
        return;
    }
    openProject(QStringLiteral(":/presets/vector_add/vector_add.kpg"));
}

void MainWindow::addRecent(const QString &path)
{
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recentProjects")).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > 10) {
        recent.removeLast();
    }
    settings.setValue(QStringLiteral("recentProjects"), recent);
    settings.setValue(QStringLiteral("lastProject"), path);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(QStringLiteral("recentProjects")).toStringList();
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
    if (isProjectModified()) {
        const auto answer =
            QMessageBox::question(this, tr("Unsaved changes"),
                                  tr("Save the changes to %1 before closing?")
                                      .arg(m_projectPath.isEmpty() ? tr("this project") : m_projectPath),
                                  QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
        if (answer == QMessageBox::Cancel) {
            event->ignore();
            return;
        }
        if (answer == QMessageBox::Save) {
            saveProject();
            if (isProjectModified()) {
                event->ignore(); // saving failed or was cancelled: keep the window
                return;
            }
        }
    }
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    QMainWindow::closeEvent(event);
}

QString MainWindow::applyEdit(const std::function<void(QJsonObject &)> &edit)
{
    QJsonObject o = QJsonDocument::fromJson(serializeProject(m_project)).object();
    edit(o);
    Result<Project> parsed = parseProject(QJsonDocument(o));
    if (!parsed) {
        const QString error = parsed.error().message;
        m_launch->setValidation(error, {}, {});
        return error;
    }
    Project next = std::move(parsed).value();
    next.sourceText = m_project.sourceText;
    next.path = m_project.path;
    const bool recompile = compileOptionsFor(next).toVariant() != compileOptionsFor(m_project).toVariant();
    m_project = next;
    m_launch->setProject(m_project);
    if (Status s = m_host.materialize(m_project, false); !s) {
        m_buffersPanel->setMessage(s.error().message);
    }
    m_buffersPanel->setProject(m_project, &m_host);
    m_inspector->setBuffers(m_host.all());
    updateTitle();
    Q_EMIT projectChanged();
    if (recompile) {
        compileNow(); // a new template instance or define: revalidates when it lands
    } else {
        revalidate();
    }
    return {};
}

void MainWindow::revalidate()
{
    if (m_running) {
        return; // the host buffers may be being filled; the run's outcome will say what is wrong
    }
    if (m_project.launches.isEmpty()) {
        m_launch->setValidation(tr("No launch step yet: this kernel has no project around it. Open a .kpg "
                                   "project, or save this one and add buffers and a launch step."),
                                {}, {});
        return;
    }
    if (Status s = m_host.materialize(m_project, false); !s) {
        m_launch->setValidation(s.error().message, {}, {});
        return;
    }
    const Result<PreparedRun> r = prepareRun(m_project, m_lastCompile, m_host, 0);
    if (!r) {
        m_launch->setValidation(r.error().message, {}, {});
        return;
    }
    QStringList resolved;
    for (const QVariant &v : r->body.value(QStringLiteral("steps")).toList()) {
        const QVariantList g = v.toMap().value(QStringLiteral("grid")).toList();
        const QVariantList b = v.toMap().value(QStringLiteral("block")).toList();
        const qint64 threads = g[0].toLongLong() * g[1].toLongLong() * g[2].toLongLong() * b[0].toLongLong() *
                               b[1].toLongLong() * b[2].toLongLong();
        resolved << tr("grid (%1, %2, %3) × block (%4, %5, %6) = %7 threads")
                        .arg(g[0].toLongLong())
                        .arg(g[1].toLongLong())
                        .arg(g[2].toLongLong())
                        .arg(b[0].toLongLong())
                        .arg(b[1].toLongLong())
                        .arg(b[2].toLongLong())
                        .arg(QLocale().toString(threads));
    }
    const int step = qBound(0, m_launch->currentStep(), int(resolved.size()) - 1);
    m_launch->setValidation({}, r->warnings, resolved.value(step));

    // Occupancy for the configuration as it is now: the device and kernel
    // limits come from the last run of this kernel (registers, shared
    // memory), the block size and dynamic shared memory from the fields.
    const QVariantMap st = r->body.value(QStringLiteral("steps")).toList().value(step).toMap();
    const QString kernel = st.value(QStringLiteral("kernel")).toString();
    for (qsizetype i = m_runs.size() - 1; i >= 0; --i) {
        for (const StepResult &sr : m_runs[i].steps) {
            if (sr.kernel != kernel || sr.limits.numRegs == 0) {
                continue;
            }
            const QVariantList b = st.value(QStringLiteral("block")).toList();
            const int threads = int(b[0].toLongLong() * b[1].toLongLong() * b[2].toLongLong());
            const Occupancy o = estimateOccupancy(sr.limits, threads, st.value(QStringLiteral("shared")).toLongLong());
            m_launch->setOccupancy(occupancyText(o, sr.limits.numRegs) + tr(" (estimate for this block size)"));
            return;
        }
    }
}

void MainWindow::runNow()
{
    startRun(false);
}

void MainWindow::abortRun()
{
    m_playing = false;
    if (m_running) {
        runnerFor(m_deviceOrdinal)->abort();
        log(tr("Aborted by the user."));
    }
}

void MainWindow::startRun(bool play)
{
    if (m_running) {
        return;
    }
    Project p = m_project;
    p.sourceText = m_editor->text();
    if (play) {
        p.timing.enabled = false; // frames as fast as they come; timing is for Run
    }
    CompileRequest req;
    req.source = p.sourceText;
    req.fileName = sourceFileName();
    req.projectDir = m_project.dir();
    req.options = compileOptionsFor(p);
    req.deviceCcMajor = m_ccMajor;
    req.deviceCcMinor = m_ccMinor;
    m_running = true;
    m_launch->setRunning(true);
    m_compileLabel->setText(tr("Running…"));
    if (!play) {
        // Progress only for what takes long enough to wonder about.
        QTimer::singleShot(500, this, [this] {
            if (m_running) {
                m_busy->show();
                m_busy->findChild<QProgressBar *>()->show();
            }
        });
    }
    const auto fail = [this](const QString &message) {
        m_running = false;
        m_busy->hide();
        m_playing = false;
        m_launch->setRunning(false);
        m_compileLabel->setText(tr("Run failed"));
        log(message);
        m_inspector->setBuffers(m_host.all());
        Q_EMIT runFinished();
    };
    m_compiler->compile(
        req, this,
        [this, p, play, fail](const Result<CompileResult> &compiled) {
            if (!compiled) {
                fail(compiled.error().message);
                return;
            }
            if (!compiled->ok) {
                fail(tr("The kernel does not compile (%n error(s)); see Problems.", nullptr, compiled->errorCount()));
                return;
            }
            // Run: fresh contents from each buffer's init, so runs compare
            // like with like. Play/Step: continue from the last state.
            // Filling (a per-element expression over millions of elements)
            // runs off the GUI thread; the inspector lets go of the buffers
            // meanwhile so it never paints memory being written.
            if (!play) {
                m_inspector->setBuffers({}); // Play keeps the contents: nothing is written
            }
            const CompileResult result = *compiled;
            m_fillPool.start([this, p, play, result, fail] {
                Status filled = m_host.materialize(p, !play);
                QMetaObject::invokeMethod(
                    this,
                    [this, p, play, result, fail, filled] {
                        if (!filled) {
                            fail(filled.error().message);
                            return;
                        }
                        const Result<PreparedRun> prepared = prepareRun(p, result, m_host, m_deviceOrdinal);
                        if (!prepared) {
                            m_launch->setValidation(prepared.error().message, {}, {});
                            fail(prepared.error().message);
                            return;
                        }
                        m_inspector->setBuffers(m_host.all());
                        m_inspector->beforeRun();
                        runnerFor(m_deviceOrdinal)->run(*prepared, &m_host, [this, play](const RunResult &r) {
                            finishRun(r, play);
                        });
                    },
                    Qt::QueuedConnection);
            });
        },
        QStringLiteral("run"));
}

void MainWindow::finishRun(const RunResult &r, bool play)
{
    m_running = false;
    m_busy->hide();
    m_launch->setRunning(false);
    m_runs.append(r);
    m_inspector->setBuffers(m_host.all());
    if (!r.steps.isEmpty()) {
        const StepResult &s = r.steps.first();
        m_inspector->setLaunch(s.grid, s.block);
        m_launch->setOccupancy(occupancyText(s.occupancy, s.limits.numRegs) +
                               tr(", %1 B static shared").arg(s.limits.staticSharedBytes));
    }
    // The inspector's refresh (statistics, image conversion) and the chart
    // each take their own turn of the event loop, so neither adds to the
    // other's stall.
    QTimer::singleShot(0, m_inspector, [this] { m_inspector->afterRun(); });
    for (qsizetype i = 0; i < r.steps.size(); ++i) {
        if (!r.steps[i].printfOutput.isEmpty()) {
            log(tr("printf from step %1 (%2):\n%3")
                    .arg(i + 1)
                    .arg(r.steps[i].kernel, r.steps[i].printfOutput.trimmed()));
        }
    }
    for (const QString &w : r.warnings) {
        log(tr("warning: %1").arg(w));
    }
    if (play && m_playing && !r.error) {
        ++m_playFrames;
        const double seconds = (QDateTime::currentMSecsSinceEpoch() - m_playStartMs) / 1000.0;
        m_compileLabel->setText(
            tr("Playing: %1 frames, %2 fps").arg(m_playFrames).arg(m_playFrames / qMax(seconds, 1e-3), 0, 'f', 1));
        QTimer::singleShot(0, this, [this] {
            if (m_playing) {
                startRun(true);
            }
        });
        Q_EMIT runFinished();
        return;
    }
    if (!play || r.error) {
        RunRecord rec;
        rec.number = int(m_runs.size());
        rec.when = QDateTime::currentDateTime();
        rec.kernel = r.steps.isEmpty() ? (m_project.launches.isEmpty() ? QString() : m_project.launches.first().kernel)
                                       : r.steps.first().kernel;
        if (!r.steps.isEmpty()) {
            rec.grid = r.steps.first().grid;
            rec.block = r.steps.first().block;
            rec.label = tr("block %1").arg(r.steps.first().block[0]);
        }
        rec.defines = m_project.compile.defines;
        rec.result = r;
        QTimer::singleShot(0, m_results, [this, rec] { m_results->addRun(rec); });
    }
    if (auto *dock = findChild<QDockWidget *>(r.error ? QStringLiteral("logDock") : QStringLiteral("resultsDock"))) {
        dock->raise(); // a failure's story is in the log; a result's in Results
    }
    if (r.error) {
        m_playing = false;
        m_compileLabel->setText(tr("Run failed: %1").arg(Error::codeName(r.error->code)));
        log(tr("Run %1 failed: %2%3")
                .arg(m_runs.size())
                .arg(r.error->message,
                     r.buffersRestored ? tr(" (buffers are as they were before the run)") : QString()));
    } else if (r.timed) {
        QString line = tr("Run %1 on %2: median %3, min %4, max %5, noise %6 % over %7 %8 samples")
                           .arg(m_runs.size())
                           .arg(r.device, formatDuration(r.stats.medianMs), formatDuration(r.stats.minMs),
                                formatDuration(r.stats.maxMs))
                           .arg(r.stats.noise * 100, 0, 'f', 2)
                           .arg(r.stats.count)
                           .arg(r.timingMode);
        if (r.bytesPerSecond > 0) {
            line += QStringLiteral(", ") + formatRate(r.bytesPerSecond, QStringLiteral("B"));
        }
        m_compileLabel->setText(tr("Median %1").arg(formatDuration(r.stats.medianMs)));
        log(line);
    } else {
        m_compileLabel->setText(tr("Ran once"));
        log(tr("Run %1 on %2: ran once (not timed)").arg(m_runs.size()).arg(r.device));
    }
    // After the deferred refreshes above: listeners see the result shown.
    QTimer::singleShot(0, this, [this] { Q_EMIT runFinished(); });
}

void MainWindow::inspectBuffer(const QString &name, const QString &view)
{
    m_inspector->setBuffers(m_host.all());
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

void MainWindow::setDeviceOrdinal(int ordinal)
{
    if (ordinal == m_deviceOrdinal || m_running) {
        return;
    }
    m_deviceOrdinal = ordinal;
    log(tr("Runs go to GPU %1 now.").arg(ordinal));
}

Runner *MainWindow::runnerFor(int ordinal)
{
    if (ordinal <= 0) {
        return m_runner;
    }
    auto it = m_deviceRunners.find(ordinal);
    if (it != m_deviceRunners.end()) {
        return it->second;
    }
    // One worker per GPU: a CUDA context belongs to its process, and a fault
    // on one GPU must not cost the others their state.
    auto engine = std::make_unique<EngineClient>();
    auto *runner = new Runner(engine.get(), this);
    connect(runner, &Runner::recovered, this, [this, ordinal](double ms) {
        log(tr("A fresh worker for GPU %1 is ready (%2 ms), with the buffers restored.")
                .arg(ordinal)
                .arg(ms, 0, 'f', 0));
    });
    m_deviceEngines.emplace(ordinal, std::move(engine));
    m_deviceRunners.emplace(ordinal, runner);
    return runner;
}

void MainWindow::log(const QString &text)
{
    m_log->appendPlainText(
        QStringLiteral("[%1] %2").arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss")), text));
}

} // namespace Kp
