#pragma once

#include "compile/compiletypes.h"

#include <QTableWidget>

namespace Kp {

class Workbench;

/** The Kernels table: each kernel of the last compile with its parameters and ptxas resources. GUI thread only. */
class KernelsTable : public QTableWidget
{
    Q_OBJECT
public:
    explicit KernelsTable(QWidget *parent = nullptr);
    /** The dock's table: the kernels of wb's last compile. */
    KernelsTable(Workbench &wb, QWidget *parent = nullptr);
    void setKernels(const QList<KernelInfo> &kernels);
};

} // namespace Kp
