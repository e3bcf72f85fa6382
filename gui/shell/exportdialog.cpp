#include "exportdialog.h"

#include "check/checkedrun.h"
#include "compile/compiler.h"
#include "export/exporter.h"
#include "run/projectcompile.h"
#include "workbench/compilecontroller.h"
#include "workbench/projectdocument.h"
#include "workbench/workbench.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

namespace Kp {

ExportDialog::ExportDialog(Workbench &wb, QWidget *parent)
    : QDialog(parent)
    , m_wb(wb)
{
    setObjectName(QStringLiteral("exportDialog"));
    setWindowTitle(tr("Export as Host Program"));
    m_target = new QComboBox(this);
    m_target->setObjectName(QStringLiteral("exportTarget"));
    m_target->addItem(tr("CuPy (RawModule)"), QStringLiteral("cupy"));
    m_target->addItem(tr("PyCUDA (SourceModule)"), QStringLiteral("pycuda"));
    m_target->addItem(tr("cuda-python (cuda.core)"), QStringLiteral("cuda-python"));
    m_target->addItem(tr("CUDA C++ (nvcc, runtime API)"), QStringLiteral("cuda-cpp"));
    m_folder = new QLineEdit(this);
    m_folder->setObjectName(QStringLiteral("exportFolder"));
    const QString base = wb.document().sourceDir().isEmpty() ? QDir::homePath() : wb.document().sourceDir();
    m_folder->setText(QDir(base).filePath(wb.document().suggestedBaseName() + QStringLiteral("-export")));
    auto *browse = new QToolButton(this);
    browse->setText(tr("…"));
    browse->setToolTip(tr("Choose the folder the program and its inputs are written to"));
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Export to"), m_folder->text());
        if (!dir.isEmpty()) {
            m_folder->setText(dir);
        }
    });
    auto *folderRow = new QHBoxLayout;
    folderRow->addWidget(m_folder, 1);
    folderRow->addWidget(browse);
    m_notes = new QLabel(this);
    m_notes->setObjectName(QStringLiteral("exportNotes"));
    m_notes->setWordWrap(true);
    m_notes->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_preview = new QPlainTextEdit(this);
    m_preview->setObjectName(QStringLiteral("exportPreview"));
    m_preview->setReadOnly(true);
    m_preview->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_preview->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    auto *form = new QFormLayout;
    form->addRow(tr("Target"), m_target);
    form->addRow(tr("Folder"), folderRow);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    QPushButton *write = buttons->addButton(tr("Export"), QDialogButtonBox::AcceptRole);
    write->setObjectName(QStringLiteral("exportButton"));
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(write, &QPushButton::clicked, this, [this] {
        if (exportNow()) {
            accept();
        }
    });
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_notes);
    layout->addWidget(m_preview, 1);
    layout->addWidget(buttons);
    connect(m_target, &QComboBox::currentIndexChanged, this, &ExportDialog::refresh);
    resize(820, 620);
    refresh();
}

void ExportDialog::setTarget(const QString &name)
{
    m_target->setCurrentIndex(qMax(0, m_target->findData(name)));
    refresh();
}

QString ExportDialog::program() const
{
    return m_preview->toPlainText();
}

QString ExportDialog::notes() const
{
    return m_notes->text();
}

void ExportDialog::setFolder(const QString &dir)
{
    m_folder->setText(dir);
}

Result<ExportResult> ExportDialog::currentExport(ExportTarget *target)
{
    // The project as it is now, the editor's text included.
    m_wb.compile().syncSource();
    ExportOptions options;
    options.target = exportTargetFromName(m_target->currentData().toString()).value_or(ExportTarget::CuPy);
    // PyCUDA launches C++ kernels by the symbols NVRTC lowered them to: from the last compile.
    const CompileResult &last = m_wb.compile().last();
    options.loweredNames = loweredNamesOf(last);
    if (last.ok) {
        // The same compile gives the structs' layouts and the device variables buffers fill (kpg export compiles).
        options.layouts = last.layouts;
        options.layoutError = last.layoutError;
        options.ptx = last.ptx;
    }
    const Project &project = m_wb.document().project();
    const bool fillsVariables = fillsDeviceVariables(project);
    if ((options.target == ExportTarget::PyCuda || fillsVariables) && project.reference &&
        !project.reference->sourceFile.isEmpty()) {
        // The reference kernels' C++ names too, as kpg export finds them: a
        // compile of the reference source (the compile cache answers it again).
        Compiler compiler;
        const Result<CompileResult> ref = compiler.compile(compileRequestFor(referenceProjectFor(project)));
        if (ref && ref->ok) {
            options.referenceLoweredNames = loweredNamesOf(*ref);
            options.referencePtx = ref->ptx;
        }
    }
    *target = options.target;
    return exportProject(m_wb.document().project(), options);
}

void ExportDialog::refresh()
{
    ExportTarget target;
    const Result<ExportResult> r = currentExport(&target);
    if (!r) {
        m_preview->setPlainText(QString());
        m_notes->setText(tr("Cannot export as %1: %2").arg(m_target->currentText(), r.error().message));
        return;
    }
    QStringList files;
    for (const ExportFile &f : r->files) {
        files << f.path;
        if (f.path == r->program) {
            m_preview->setPlainText(QString::fromUtf8(f.contents));
        }
    }
    m_notes->setText(tr("%n file(s): %1.", nullptr, int(files.size())).arg(files.join(QStringLiteral(", "))) +
                     (r->notes.isEmpty()
                          ? QString()
                          : QLatin1Char(' ') + tr("Approximated: %1").arg(r->notes.join(QStringLiteral("; ")))));
}

bool ExportDialog::exportNow()
{
    ExportTarget target;
    const Result<ExportResult> r = currentExport(&target);
    const QString dir = m_folder->text().trimmed();
    Status written = r ? Status(Unit{}) : Status(r.error());
    if (written && dir.isEmpty()) {
        written = Error{QStringLiteral("export"), Error::Code::Usage, {}, tr("choose a folder to export to")};
    } else if (written) {
        written = writeExport(*r, dir);
    }
    if (!written) {
        m_notes->setText(tr("Not exported: %1").arg(written.error().message));
        return false;
    }
    const bool cpp = target == ExportTarget::CudaCpp;
    m_wb.log(cpp ? tr("Exported as %1 to %2 (build.sh there builds %3 with nvcc)")
                       .arg(m_target->currentText(), dir, r->program)
                 : tr("Exported as %1 to %2 (python3 %3 there runs it)").arg(m_target->currentText(), dir, r->program));
    return true;
}

} // namespace Kp
