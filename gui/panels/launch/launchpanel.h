#pragma once

#include "compile/compiletypes.h"
#include "project/project.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QMap>
#include <QWidget>

class QComboBox;
class QFormLayout;
class QLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QVBoxLayout;
class QToolButton;

namespace Kp {

class ProjectDocument;
class Workbench;

/**
 * The Launch panel: the launch steps (added, removed, reordered),
 * the kernel of the shown step, its grid, block and dynamic shared memory
 * (numbers or expressions), one row per kernel parameter with what is bound
 * to it, the repeat count and swaps, and timing settings. It edits nothing
 * itself: every change is reported through a signal (edited(),
 * kernelChanged(), addStepRequested(), ...), which setDocument() applies to
 * the document (with the project's own validation); the verdict is shown
 * on the field it concerns. Fields commit on Enter, on focus-out or on a
 * choice from a list, never per keystroke. GUI thread only.
 */
class LaunchPanel : public QWidget
{
    Q_OBJECT
public:
    explicit LaunchPanel(QWidget *parent = nullptr);
    /** The dock's panel: edits wb's document, runs through its controller, follows its compiles and runs. */
    LaunchPanel(Workbench &wb, QWidget *parent = nullptr);
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
     * error whose path is "launches[i].grid[k]", ".block[k]", ".block" (all three), ".sharedBytes",
     * ".kernel", ".args[k]" or ".args" marks that field or row(s); every error
     * also goes to the message line. resolved says what the expressions give.
     */
    void setValidation(const QString &error, const QString &errorPath, const QStringList &warnings,
                       const QString &resolved);
    void setOccupancy(const QString &text);
    void setRunning(bool running);
    /**
     * Whether runs can happen at all (a GPU with a driver): without one,
     * Run, Play and Step are disabled and their tooltip says why.
     */
    void setRunAvailable(bool available, const QString &why);
    /** Play stopped by itself (a frame failed): the button shows Play again, without a signal. */
    void stopPlaying();

    int currentStep() const { return m_step; }
    void setCurrentStep(int step);

    // For tests.
    QLineEdit *gridField(int axis) const { return m_grid[axis]; }
    QLineEdit *blockField(int axis) const { return m_block[axis]; }
    QTableWidget *argumentTable() const { return m_args; }
    QComboBox *kernelChooser() const { return m_kernel; }
    QLabel *messageLabel() const { return m_message; }
    QLabel *resolvedLabel() const { return m_resolved; }
    QPushButton *runButton() const { return m_run; }
    QPushButton *playButton() const { return m_play; }
    QPushButton *stepOnceButton() const { return m_stepOnce; }
    QComboBox *stepChooser() const { return m_stepChooser; }
    /** The binding editor of argument row `row` (an editable combo box). */
    QComboBox *bindingEditor(int row) const;
    QPushButton *createMissingButton() const { return m_createMissing; }
    QToolButton *addStepButton() const { return m_addStep; }
    QToolButton *removeStepButton() const { return m_removeStep; }
    QToolButton *moveStepUpButton() const { return m_moveUp; }
    QToolButton *moveStepDownButton() const { return m_moveDown; }
    QSpinBox *repeatCount() const { return m_repeat; }
    // The fields of the other kinds of step (docs/streams.md).
    QComboBox *streamField() const { return m_stream; }
    QLineEdit *waitForField() const { return m_waitFor; }
    QComboBox *stepBufferField() const { return m_stepBuffer; }
    QComboBox *copyDirectionField() const { return m_copyTo; }
    QSpinBox *memsetValueField() const { return m_memsetValue; }
    QLineEdit *offsetField() const { return m_offset; }
    QLineEdit *countField() const { return m_count; }
    QLineEdit *eventField() const { return m_event; }
    QLineEdit *chunkCountField() const { return m_chunkCount; }
    QLineEdit *chunkStreamsField() const { return m_chunkStreams; }
    QLineEdit *chunkElementsField() const { return m_chunkElements; }
    QLabel *chunkStepsLabel() const { return m_chunkSteps; }
    /** Whether the form row holding field is shown (kernel rows hide for a copy step, and so on). */
    bool isRowShown(QWidget *field) const;
    QLineEdit *swapField() const { return m_swaps; }

Q_SIGNALS:
    /** A field of launch step `step` changed: key is "kernel", "grid", "block", "sharedBytes" or "args". */
    void edited(int step, const QString &key, const QJsonValue &value);
    /** A timing setting changed: key as in the .kpg "timing" object. */
    void timingEdited(const QString &key, const QJsonValue &value);
    void runRequested();
    /** The step shown changed (a choice, an added or removed step). */
    void currentStepChanged(int step);
    void abortRequested();
    void playToggled(bool playing);
    void stepRequested();
    /** A new launch step (its .kpg JSON), added after the current one. */
    void addStepRequested(const QJsonObject &step);
    void removeStepRequested(int step);
    void moveStepRequested(int from, int to);
    /** The kernel of step changed: the new name and the arguments rebound by parameter name, as one edit. */
    void kernelChanged(int step, const QString &kernel, const QJsonValue &args);
    /** Create buffers and scalars for the parameters of step named in params (all unbound ones when empty). */
    void createMissingRequested(int step, const QStringList &params);
    /** The stream of step changed (empty: the default stream); a new name is declared in "streams" with it. */
    void streamChanged(int step, const QString &stream);
    /** The "repeat" object changed: count and swap pairs. */
    void repeatEdited(const QJsonObject &repeat);

private:
    // The constructor's parts, top to bottom as the panel shows them.
    void buildStepRow(QFormLayout *form);
    void buildStreamFields(QFormLayout *form);
    /** What +, -, up and down do, and the + button's menu of other kinds of step. */
    void connectStepButtons();
    void buildKernelFields(QFormLayout *form);
    /** The fields of copies, memsets, events and chunk groups, shown for a step of that kind. */
    void buildStepKindFields(QFormLayout *form);
    void buildRepeat(QFormLayout *form);
    /** The arguments table, Create and bind, and the message line. */
    void buildArguments(QVBoxLayout *layout);
    void buildTiming(QVBoxLayout *layout);
    void buildButtons(QVBoxLayout *layout);
    void rebuildArgs();
    void emitDims(const QString &key, QLineEdit *const fields[3]);
    void emitArgs();
    void commitKernel();
    void emitRepeat();
    void updateCreateMissing();
    QString bindingText(const ArgBinding &b) const;
    /** The JSON of an argument the user left as text, given what the row held before (null if nothing). */
    QJsonValue argJsonFor(const ArgBinding *current, const QString &text) const;
    /** What row (a parameter) of step is bound to, by name or position; null when unbound. */
    const ArgBinding *bindingAt(const LaunchStep &step, const KernelInfo *kernel, int row) const;
    /** The binding of each parameter of kernel (by name), from the step's args; missing ones absent. */
    QMap<QString, QJsonValue> bindingsByName(const LaunchStep &step, const KernelInfo *kernel) const;
    QStringList unboundParams() const;
    /** Shows the rows of the current step's kind and fills the fields of a step that is no kernel launch. */
    void showStepKind(const LaunchStep &step, bool has);
    /** A text field of the step: empty removes the key (its default applies). */
    void emitStepText(const QString &key, const QString &text, bool number);

    Project m_project;
    QList<KernelInfo> m_kernels;
    int m_step = 0;
    int m_announcedStep = -1; ///< the step currentStepChanged() last told
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
    QPushButton *m_createMissing = nullptr;
    QToolButton *m_addStep = nullptr;
    QToolButton *m_removeStep = nullptr;
    QToolButton *m_moveUp = nullptr;
    QToolButton *m_moveDown = nullptr;
    QSpinBox *m_repeat = nullptr;
    QLineEdit *m_swaps = nullptr;
    QFormLayout *m_form = nullptr;
    QLayout *m_blockRow = nullptr;
    QLayout *m_gridRow = nullptr;
    QComboBox *m_stream = nullptr;
    QLineEdit *m_waitFor = nullptr;
    QComboBox *m_stepBuffer = nullptr;
    QComboBox *m_copyTo = nullptr;
    QSpinBox *m_memsetValue = nullptr;
    QLineEdit *m_offset = nullptr;
    QLineEdit *m_count = nullptr;
    QLineEdit *m_event = nullptr;
    QLineEdit *m_chunkCount = nullptr;
    QLineEdit *m_chunkStreams = nullptr;
    QLineEdit *m_chunkElements = nullptr;
    QLineEdit *m_chunkName = nullptr;
    QLabel *m_chunkSteps = nullptr;
    bool m_running = false;
    bool m_runAvailable = true;
    QString m_runUnavailable;
    bool m_valid = true;
};

} // namespace Kp
