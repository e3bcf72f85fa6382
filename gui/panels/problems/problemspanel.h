#pragma once

#include "compile/compiletypes.h"

#include <QTreeWidget>

namespace Kp {

class Workbench;

/** The Problems list: one row per diagnostic of the last compile; clicking one jumps there. GUI thread only. */
class ProblemsPanel : public QTreeWidget
{
    Q_OBJECT
public:
    explicit ProblemsPanel(QWidget *parent = nullptr);
    /** The dock's panel: wb's compile diagnostics and Check Memory findings; a click goes to the line. */
    ProblemsPanel(Workbench &wb, QWidget *parent = nullptr);
    /** Shows diagnostics; those in other files than sourceFile name their file and do not jump. */
    void setDiagnostics(const QList<Diagnostic> &diagnostics, const QString &sourceFile);

Q_SIGNALS:
    /** A problem in the source was chosen: 1-based line and column (column 0 when unknown). */
    void jumpRequested(int line, int column);
};

} // namespace Kp
