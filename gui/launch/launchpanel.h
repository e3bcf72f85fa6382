#pragma once

#include "compile/compiletypes.h"
#include "project/project.h"

#include <QJsonValue>
#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace Kp {

class ProjectDocument;

/**
 * The Kernel & Launch panel: the kernel of a launch step, its grid, block and
 * dynamic shared memory (numbers or expressions), one row per kernel
 * parameter with what is bound to it, and timing settings. It edits nothing
 * itself: every change is reported through edited(), the main window applies
 * it to the project (with the project's own validation) and calls
 * setValidation() with the verdict, which is shown on the field it concerns.
 * GUI thread only.
 */
class LaunchPanel : public QWidget
{
    Q_OBJECT
public:
    explicit LaunchPanel(QWidget *parent = nullptr);
    /**
     * Follows document: shows its launch steps and validation as they
     * change, and applies this panel's edits to it (a refused edit shows its
     * message on the field). document is not owned and must outlive the panel.
     */
    void setDocument(ProjectDocument *document);

    /** Shows the project's launch steps (without emitting edited()). */
    void setProject(const Project &project);
    /** The kernels of the last compile: names for the chooser, parameters for the table. */
    void setKernels(const QList<KernelInfo> &kernels);
    /**
     * The outcome of checking the launch: error is empty when it is fine. An
     * error whose path is "launches[i].grid[k]", ".block[k]", ".sharedBytes",
     * ".kernel", ".args[k]" or ".args" marks that field or row(s); every error
     * also goes to the message line. resolved says what the expressions give.
     */
    void setValidation(const QString &error, const QString &errorPath, const QStringList &warnings,
                       const QString &resolved);
    void setOccupancy(const QString &text);
    void setRunning(bool running);

    int currentStep() const { return m_step; }

    // For tests.
    QLineEdit *gridField(int axis) const { return m_grid[axis]; }
    QLineEdit *blockField(int axis) const { return m_block[axis]; }
    QTableWidget *argumentTable() const { return m_args; }
    QComboBox *kernelChooser() const { return m_kernel; }
    QLabel *messageLabel() const { return m_message; }
    QLabel *resolvedLabel() const { return m_resolved; }
    QPushButton *runButton() const { return m_run; }

Q_SIGNALS:
    /** A field of launch step `step` changed: key is "kernel", "grid", "block", "sharedBytes" or "args". */
    void edited(int step, const QString &key, const QJsonValue &value);
    /** A timing setting changed: key as in the .kpg "timing" object. */
    void timingEdited(const QString &key, const QJsonValue &value);
    void runRequested();
    void abortRequested();
    void playToggled(bool playing);
    void stepRequested();

private:
    void rebuildArgs();
    void emitDims(const QString &key, QLineEdit *const fields[3]);
    void emitArgs();
    QString bindingText(const ArgBinding &b) const;

    Project m_project;
    QList<KernelInfo> m_kernels;
    int m_step = 0;
    bool m_updating = false;
    QString m_argsKey; ///< what the argument rows were built from
    QComboBox *m_stepChooser = nullptr;
    QComboBox *m_kernel = nullptr;
    QLineEdit *m_grid[3] = {};
    QLineEdit *m_block[3] = {};
    QLineEdit *m_shared = nullptr;
    QTableWidget *m_args = nullptr;
    QLabel *m_resolved = nullptr;
    QLabel *m_occupancy = nullptr;
    QLabel *m_message = nullptr;
    QComboBox *m_timingMode = nullptr;
    QSpinBox *m_minSamples = nullptr;
    QPushButton *m_run = nullptr;
    QPushButton *m_abort = nullptr;
    QPushButton *m_play = nullptr;
    QPushButton *m_stepOnce = nullptr;
};

} // namespace Kp
