#pragma once

#include "core/result.h"
#include "export/exporter.h"

#include <QDialog>

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;

namespace Kp {

class Workbench;

/**
 * File > Export as…: the project as the host program a user would write
 * (engine/export, docs/export.md), with the program previewed before it is
 * written: a target (PyCUDA, CuPy, cuda-python, CUDA C++), a folder, what
 * the target only approximates, and the program's text. GUI thread only.
 */
class ExportDialog : public QDialog
{
    Q_OBJECT
public:
    ExportDialog(Workbench &wb, QWidget *parent = nullptr);

    /** The target shown ("pycuda", "cupy", "cuda-python", "cuda-cpp"). */
    void setTarget(const QString &name);
    QString program() const;
    QString notes() const;
    void setFolder(const QString &dir);
    /** Writes the export into the folder; false (and the reason shown) when refused. */
    bool exportNow();

private:
    /** The export of the project as it is now for the chosen target (which target is set to). */
    Result<ExportResult> currentExport(ExportTarget *target);
    void refresh();

    Workbench &m_wb;
    QComboBox *m_target = nullptr;
    QLineEdit *m_folder = nullptr;
    QLabel *m_notes = nullptr;
    QPlainTextEdit *m_preview = nullptr;
};

} // namespace Kp
