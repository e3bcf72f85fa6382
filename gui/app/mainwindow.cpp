#include "mainwindow.h"

#include "client/engineclient.h"
#include "compile/compileservice.h"
#include "cuda/deviceinfo.h"
#include "cuda/driverapi.h"
#include "cuda/nvrtcapi.h"
#include "editor/codeeditor.h"
#include "editor/ptxview.h"
#include "worker/protocol.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProcess>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryFile>
#include <QTimer>
#include <QTreeWidget>

namespace Kp {

MainWindow::MainWindow(EngineClient *engine, QWidget *parent)
    : QMainWindow(parent)
    , m_engine(engine)
{
    m_editor = new CodeEditor(this);
    m_editor->setObjectName(QStringLiteral("editor"));
    setCentralWidget(m_editor);

    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *open = file->addAction(tr("&Open Kernel…"), this, &MainWindow::openFileDialog);
    open->setShortcut(QKeySequence::Open);
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
    m_nvrtcLabel = new QLabel(this);
    m_nvrtcLabel->setObjectName(QStringLiteral("nvrtcStatus"));
    m_positionLabel = new QLabel(this);
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
    menuBar()->insertMenu(help->menuAction(), build);

    resize(1400, 860);
    resizeDocks({ptxDock}, {520}, Qt::Horizontal);
    resizeDocks({problemsDock}, {180}, Qt::Vertical);
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
    Q_EMIT compileFinished();
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
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        return Error{
            QStringLiteral("editor"), Error::Code::BadInput, {}, tr("Cannot open %1: %2").arg(path, f.errorString())};
    }
    m_editor->setText(QString::fromUtf8(f.readAll()));
    m_editor->setModified(false);
    m_path = path;
    updateTitle();
    compileNow();
    return Unit{};
}

void MainWindow::openFileDialog()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Kernel"), QString(),
                                                      tr("CUDA sources (*.cu *.cuh);;All files (*)"));
    if (path.isEmpty()) {
        return;
    }
    if (const Status s = openSource(path); !s) {
        QMessageBox::warning(this, tr("Open Kernel"), s.error().message);
    }
}

void MainWindow::updateTitle()
{
    const QString name = m_path.isEmpty() ? tr("untitled") : QFileInfo(m_path).fileName();
    setWindowTitle(QStringLiteral("%1%2 — Kernel Playground").arg(name, m_editor->isModified() ? "*" : ""));
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

} // namespace Kp
