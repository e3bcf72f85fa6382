#pragma once

#include "core/result.h"

#include <QJsonValue>
#include <QWidget>

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QPlainTextEdit;
class QTabWidget;
class QTextBrowser;

namespace Kp {

class ChecksEditor;
class ExerciseDialog;
class ProjectDocument;
class Workbench;
struct Project;

/**
 * The Project dock: what makes a project an exercise, edited without JSON.
 * "About" holds the title, the Markdown description (with a preview, as
 * students see it in the Description dock) and the throughput expressions;
 * "Checks" the checks editor (checkseditor.h); "Lab" the instructor's fields
 * of docs/labs.md, the reference kernel and the speed target. Every commit
 * is one ProjectDocument::edit, so the project reader judges it with the
 * messages a .kpg file gets, and Edit > Undo takes it back. A text field is
 * committed on Enter or on leaving it; the description when the editor loses
 * the focus or the preview is shown. "Save as Exercise…" on the Lab tab
 * writes the project into a lab for kpg grade, with the students' copy
 * (workbench/exercise.h). GUI thread only.
 */
class ProjectPanel : public QWidget
{
    Q_OBJECT
public:
    explicit ProjectPanel(Workbench &wb, QWidget *parent = nullptr);

    QLineEdit *titleField() const { return m_title; }
    QPlainTextEdit *descriptionField() const { return m_description; }
    QTextBrowser *preview() const { return m_preview; }
    /** Write and Preview of the description. */
    QTabWidget *descriptionTabs() const { return m_descriptionTabs; }
    QLineEdit *bytesField() const { return m_bytes; }
    QLineEdit *flopsField() const { return m_flops; }
    QLineEdit *referenceField() const { return m_reference; }
    QLineEdit *speedupField() const { return m_speedup; }
    ChecksEditor *checksEditor() const { return m_checks; }
    /** The last refused edit's message, or empty. */
    QLabel *messageLabel() const { return m_message; }
    QTabWidget *tabs() const { return m_tabs; }

    /** Commits the description as typed (the editor's focus-out does this too). */
    void commitDescription();

    /** The Lab tab's "Save as Exercise…" button. */
    QPushButton *exerciseButton() const { return m_exerciseButton; }
    /** What the last Save as Exercise wrote, or why it did not. */
    QLabel *exerciseLabel() const { return m_exerciseNote; }
    /**
     * Asks where to save the project as an exercise (ExerciseDialog) and saves
     * it there; a refusal keeps the dialog open with the reason, an existing
     * exercise of that name is replaced only when the user says so.
     */
    void saveAsExercise();
    /** The dialog while saveAsExercise() shows it (tests). */
    ExerciseDialog *exerciseDialog() const { return m_exerciseDialog; }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    /** The fields show the project as it is now (after a load, an edit, an undo). */
    void showProject(const Project &p);
    /** Commits key of the top level (an empty text removes the key). */
    void commitTop(const QString &key, const QString &text, const QString &label);
    /** Commits key of the object section ("throughput", "reference", "grading"); an empty value removes it. */
    void commitSection(const QString &section, const QString &key, const QJsonValue &value, const QString &label);
    /** Shows a refused edit's message (the reader's words), or clears it. */
    void showStatus(const Status &s);

    Workbench &m_wb;
    ProjectDocument &m_doc;
    QTabWidget *m_tabs;
    QTabWidget *m_descriptionTabs;
    QLineEdit *m_title;
    QPlainTextEdit *m_description;
    QTextBrowser *m_preview;
    QLineEdit *m_bytes;
    QLineEdit *m_flops;
    QLineEdit *m_reference;
    QLineEdit *m_speedup;
    QLabel *m_message;
    ChecksEditor *m_checks;
    QPushButton *m_exerciseButton;
    QLabel *m_exerciseNote;
    ExerciseDialog *m_exerciseDialog = nullptr;
};

} // namespace Kp
