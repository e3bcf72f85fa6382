#include "problemspanel.h"

#include "workbench/compilecontroller.h"
#include "workbench/memorycheck.h"
#include "workbench/projectdocument.h"
#include "workbench/workbench.h"

#include <QHeaderView>

namespace Kp {

ProblemsPanel::ProblemsPanel(QWidget *parent)
    : QTreeWidget(parent)
{
    setObjectName(QStringLiteral("problems"));
    setHeaderLabels({tr("Severity"), tr("Line"), tr("Col"), tr("Message")});
    setRootIsDecorated(false);
    setUniformRowHeights(true);
    header()->setStretchLastSection(true);
    setColumnWidth(0, 80);
    setColumnWidth(1, 50);
    setColumnWidth(2, 40);
    connect(this, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem *item) {
        const int line = item->data(1, Qt::UserRole).toInt();
        if (line > 0) {
            Q_EMIT jumpRequested(line, item->data(2, Qt::UserRole).toInt());
        }
    });
    connect(this, &QTreeWidget::itemClicked, this, &QTreeWidget::itemActivated);
    // By line, as the source reads, rather than in the order the compiler
    // reported; a click on a header sorts by that column.
    setSortingEnabled(true);
    sortByColumn(1, Qt::AscendingOrder);
}

void ProblemsPanel::setDiagnostics(const QList<Diagnostic> &diagnostics, const QString &sourceFile)
{
    clear();
    setSortingEnabled(false); // sorted once, after every row is in
    for (const Diagnostic &d : diagnostics) {
        const bool here = d.file == sourceFile;
        auto *item = new QTreeWidgetItem(this);
        item->setText(0, Diagnostic::severityName(d.severity));
        // Numbers sort as numbers (9 before 10); no line sorts first, as a file-level message.
        item->setData(1, Qt::DisplayRole, d.line > 0 ? QVariant(d.line) : QVariant(QString()));
        item->setData(2, Qt::DisplayRole, d.column > 0 ? QVariant(d.column) : QVariant(QString()));
        item->setText(3, (here || d.file.isEmpty() ? QString() : d.file + QStringLiteral(": ")) +
                             d.message.section(QLatin1Char('\n'), 0, 0));
        item->setToolTip(3, d.message);
        item->setData(1, Qt::UserRole, here ? d.line : 0);
        item->setData(2, Qt::UserRole, d.column);
        item->setForeground(0, d.severity == Diagnostic::Severity::Error     ? QColor(0xd73a49)
                               : d.severity == Diagnostic::Severity::Warning ? QColor(0xb08800)
                                                                             : palette().color(QPalette::Text));
    }
    setSortingEnabled(true);
}

ProblemsPanel::ProblemsPanel(Workbench &wb, QWidget *parent)
    : ProblemsPanel(parent)
{
    wb.compile().follow(
        this, [this, &wb](const CompileResult &r) { setDiagnostics(r.diagnostics, wb.document().sourceFileName()); });
    connect(&wb, &Workbench::memoryCheckFinished, this, [this, &wb](const SanitizedRun &run) {
        if (run.report) {
            const QString name = wb.document().sourceFileName();
            setDiagnostics(sanitizerDiagnostics(*run.report, name), name);
        }
    });
    connect(this, &ProblemsPanel::jumpRequested, &wb,
            [&wb](int line, int column) { wb.requestSourceLine(line, column, 0, 0, true); });
}

} // namespace Kp
