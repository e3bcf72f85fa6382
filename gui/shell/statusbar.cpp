#include "statusbar.h"

#include "compile/sandbox.h"
#include "core/format.h"
#include "cuda/nvrtcapi.h"
#include "devicestatus.h"
#include "editor/codeeditor.h"
#include "workbench/compilecontroller.h"
#include "workbench/devices.h"
#include "workbench/memorycheck.h"
#include "workbench/runcontroller.h"
#include "workbench/workbench.h"

#include <QFuture>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPromise>
#include <QStatusBar>
#include <QThreadPool>
#include <QToolButton>

#include <algorithm>
#include <memory>

namespace Kp {

namespace {

/**
 * A temporary message that ends before the permanent labels (NVRTC, the
 * sandbox, the cursor): QStatusBar hides the normal widgets (the GPU line)
 * for it but draws a long one underneath the permanent ones. Elided to the
 * room left of firstPermanent; the tooltip has it whole.
 */
void showShort(QStatusBar *bar, const QWidget *firstPermanent, const QString &text)
{
    const int room = std::max(0, firstPermanent->x() - bar->fontMetrics().averageCharWidth() - 8);
    bar->setToolTip(text);
    bar->showMessage(bar->fontMetrics().elidedText(text, Qt::ElideRight, room));
}

} // namespace

void StatusLine::openNvrtc()
{
    if (m_nvrtcOpening) {
        return;
    }
    m_nvrtcOpening = true;
    // NVRTC is opened in the GUI's process: compiling needs no GPU. Opening
    // it (a library of 100 MB: its relocations and its own start-up) took a
    // fifth of the window's start, so it is opened on a pool thread, after the
    // first paint, and the label filled when it is; the first compile, on its
    // own thread, shares the one opening (NvrtcApi::instance).
    QLabel *nvrtcLabel = m_nvrtcLabel;
    auto promise = std::make_shared<QPromise<QStringList>>();
    QFuture<QStringList> opened = promise->future();
    promise->start();
    QThreadPool::globalInstance()->start([promise] {
        const Result<const NvrtcApi *> nvrtc = NvrtcApi::instance();
        // Without it, an ssh target compiles (its kpg-compiler over ssh; docs/remote.md).
        promise->addResult(nvrtc ? QStringList{tr("NVRTC %1").arg((*nvrtc)->versionString()), (*nvrtc)->libraryPath}
                                 : QStringList{tr("No NVRTC here"),
                                               tr("%1\nWith an ssh target, compiles run there (Settings > Target).")
                                                   .arg(nvrtc.error().message)});
        promise->finish();
    });
    // Runs on the label's thread, and not at all once the label is gone.
    opened.then(nvrtcLabel, [nvrtcLabel](const QStringList &text) {
        nvrtcLabel->setText(text.value(0));
        nvrtcLabel->setToolTip(text.value(1));
    });
}

StatusLine::StatusLine(Workbench &wb, QStatusBar *bar, CodeEditor *editor, QObject *parent)
    : QObject(parent)
{
    // The GPU first (DeviceStatus adds itself), then NVRTC, the cursor, compile and run state.
    m_device = new DeviceStatus(wb.devices(), bar, this);
    auto *nvrtcLabel = new QLabel(bar);
    nvrtcLabel->setObjectName(QStringLiteral("nvrtcStatus"));
    nvrtcLabel->setText(tr("NVRTC …"));
    m_nvrtcLabel = nvrtcLabel;
    // Whether a source can read this machine's files while it compiles (docs/security.md).
    auto *sandboxLabel = new QLabel(bar);
    sandboxLabel->setObjectName(QStringLiteral("sandboxStatus"));
    const Sandbox::Availability sandbox = Sandbox::availability();
    sandboxLabel->setText(sandbox.sandboxed ? tr("Sandboxed") : tr("Not sandboxed"));
    sandboxLabel->setToolTip(tr("Compiler: %1").arg(sandbox.text));
    auto *positionLabel = new QLabel(bar);
    bar->addPermanentWidget(nvrtcLabel);
    bar->addPermanentWidget(sandboxLabel);
    bar->addPermanentWidget(positionLabel);
    connect(editor, &QsciScintilla::cursorPositionChanged, positionLabel, [positionLabel](int line, int index) {
        positionLabel->setText(tr("Ln %1, Col %2").arg(line + 1).arg(index + 1));
    });
    m_compileLabel = new QLabel(bar);
    m_compileLabel->setObjectName(QStringLiteral("compileStatus"));
    bar->addPermanentWidget(m_compileLabel);
    auto *busy = new QProgressBar(bar);
    busy->setObjectName(QStringLiteral("busy"));
    busy->setRange(0, 0); // a run's length is not known in advance
    busy->setMaximumWidth(140);
    busy->setFormat(tr("running"));
    auto *abortButton = new QToolButton(bar);
    abortButton->setText(tr("Abort"));
    abortButton->setToolTip(tr("Stop the run (Esc)"));
    connect(abortButton, &QToolButton::clicked, &wb.runs(), &RunController::abort);
    // A remote target's buffer transfer: how far it got, beside the same Abort.
    m_transfer = new QProgressBar(bar);
    m_transfer->setObjectName(QStringLiteral("transferProgress"));
    m_transfer->setRange(0, 1000);
    m_transfer->setMinimumWidth(200);
    m_transfer->hide();
    m_busy = new QWidget(bar);
    auto *busyLayout = new QHBoxLayout(m_busy);
    busyLayout->setContentsMargins(0, 0, 0, 0);
    busyLayout->addWidget(busy);
    busyLayout->addWidget(m_transfer);
    busyLayout->addWidget(abortButton);
    m_busy->hide();
    bar->addPermanentWidget(m_busy);

    connect(&wb.compile(), &CompileController::statusChanged, m_compileLabel,
            [this](const QString &text, const QString &tip) {
                m_compileLabel->setText(text);
                m_compileLabel->setToolTip(tip);
            });
    connect(&wb.runs(), &RunController::statusChanged, m_compileLabel, &QLabel::setText);
    connect(&wb.runs(), &RunController::busyChanged, m_busy, [this](bool busy) {
        m_busy->setVisible(busy);
        if (!busy) {
            m_transfer->hide();
        }
    });
    connect(&wb.devices(), &Devices::transferProgress, m_transfer, [this](qint64 done, qint64 total, bool upload) {
        if (total <= 0 || done >= total) {
            m_transfer->hide();
            return;
        }
        m_transfer->setValue(int(done * 1000 / total));
        m_transfer->setFormat(upload ? tr("Sending %1 of %2").arg(formatBytes(done), formatBytes(total))
                                     : tr("Receiving %1 of %2").arg(formatBytes(done), formatBytes(total)));
        m_transfer->setToolTip(upload ? tr("The buffers go to the target; Abort stops the transfer and the run")
                                      : tr("The changed buffers come back from the target; Abort stops it"));
        m_transfer->show();
    });
    connect(&wb, &Workbench::memoryCheckStarted, bar, [bar, nvrtcLabel](Sanitizer::Tool tool) {
        showShort(bar, nvrtcLabel,
                  tr("Checking memory with %1 (one run under compute-sanitizer)…").arg(Sanitizer::toolName(tool)));
    });
    connect(
        &wb, &Workbench::memoryCheckFinished, bar, [bar, nvrtcLabel](const SanitizedRun &run, Sanitizer::Tool tool) {
            if (!run.report) {
                // The reason can be a paragraph (a missing tool, the paths looked in): elided here, whole in the Log.
                const std::optional<Error> &e = run.reportError ? run.reportError : run.checked.error;
                showShort(bar, nvrtcLabel, tr("Check memory failed: %1").arg(e ? e->message : tr("no report")));
                return;
            }
            const qsizetype n = run.report->findings.size();
            showShort(
                bar, nvrtcLabel,
                n == 0 ? tr("Check memory (%1): no findings").arg(Sanitizer::toolName(tool))
                : n == 1
                    ? tr("Check memory (%1): 1 finding, marked in the editor").arg(Sanitizer::toolName(tool))
                    : tr("Check memory (%1): %2 findings, marked in the editor").arg(Sanitizer::toolName(tool)).arg(n));
        });
}

} // namespace Kp
