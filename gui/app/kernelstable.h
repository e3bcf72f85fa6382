#pragma once

#include "compile/compiletypes.h"

#include <QTableWidget>

namespace Kp {

/** The Kernels table: each kernel of the last compile with its parameters and ptxas resources. GUI thread only. */
class KernelsTable : public QTableWidget
{
    Q_OBJECT
public:
    explicit KernelsTable(QWidget *parent = nullptr);
    void setKernels(const QList<KernelInfo> &kernels);
};

} // namespace Kp
