#pragma once

#include "workbench/exercise.h"

#include <QDialog>

class QCheckBox;
class QDialogButtonBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;

namespace Kp {

/**
 * "Save as Exercise": where the exercise goes (the lab folder, its name, the
 * students' copy) and what it is worth. It only asks; ProjectPanel saves
 * with saveExercise (workbench/exercise.h). The students' folder follows the
 * lab folder ("LAB-students") until the user types one of their own. GUI
 * thread only.
 */
class ExerciseDialog : public QDialog
{
    Q_OBJECT
public:
    /** solution: whether "the source is my solution" starts ticked (ExerciseTarget::solutionAsReference). */
    ExerciseDialog(const QString &labDir, const QString &name, double points, bool solution, QWidget *parent = nullptr);

    ExerciseTarget target() const;

    QLineEdit *labField() const { return m_lab; }
    QLineEdit *nameField() const { return m_name; }
    QDoubleSpinBox *pointsField() const { return m_points; }
    QLineEdit *studentsField() const { return m_students; }
    QCheckBox *solutionBox() const { return m_solution; }
    QDialogButtonBox *buttons() const { return m_buttons; }
    /** Why the dialog cannot be accepted yet (an empty field), or empty. */
    QLabel *messageLabel() const { return m_message; }

    /** Shows a refusal from saving (the dialog stays open so the user can fix the field). */
    void showError(const QString &message);

private:
    void updateState();

    QLineEdit *m_lab;
    QLineEdit *m_name;
    QDoubleSpinBox *m_points;
    QLineEdit *m_students;
    QCheckBox *m_solution;
    QLabel *m_message;
    QDialogButtonBox *m_buttons;
    bool m_studentsTyped = false;
};

} // namespace Kp
