#include "mainwindow.h"

#include "client/engineclient.h"
#include "cuda/deviceinfo.h"
#include "cuda/driverapi.h"
#include "cuda/nvrtcapi.h"
#include "editor/codeeditor.h"
#include "worker/protocol.h"

#include <QAction>
#include <QApplication>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>

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

    resize(1100, 720);
    updateTitle();
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
