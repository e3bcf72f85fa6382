#pragma once

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
    void refresh();

    Workbench &m_wb;
    QComboBox *m_target = nullptr;
    QLineEdit *m_folder = nullptr;
    QLabel *m_notes = nullptr;
    QPlainTextEdit *m_preview = nullptr;
};

} // namespace Kp
