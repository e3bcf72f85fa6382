#include "kernelstable.h"

#include "workbench/compilecontroller.h"
#include "workbench/workbench.h"

#include <QHeaderView>

namespace Kp {

KernelsTable::KernelsTable(QWidget *parent)
    : QTableWidget(0, 8, parent)
{
    setObjectName(QStringLiteral("kernels"));
    setHorizontalHeaderLabels({tr("Kernel"), tr("Registers"), tr("Shared"), tr("Constant"), tr("Stack"),
                               tr("Spill st/ld"), tr("Lowered name"), tr("Parameters")});
    horizontalHeader()->setStretchLastSection(true);
    // A long parameter list wraps in its row rather than being cut at the dock's edge.
    setWordWrap(true);
    verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    verticalHeader()->hide();
    setEditTriggers(QAbstractItemView::NoEditTriggers);
}

void KernelsTable::setKernels(const QList<KernelInfo> &kernels)
{
    setRowCount(int(kernels.size()));
    for (int i = 0; i < kernels.size(); ++i) {
        const KernelInfo &k = kernels[i];
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
            setItem(i, c, new QTableWidgetItem(cells[c]));
        }
    }
    resizeColumnsToContents();
}

KernelsTable::KernelsTable(Workbench &wb, QWidget *parent)
    : KernelsTable(parent)
{
    wb.compile().follow(this, [this](const CompileResult &r) { setKernels(r.kernels); });
}

} // namespace Kp
