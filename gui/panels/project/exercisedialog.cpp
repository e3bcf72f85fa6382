#include "exercisedialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace Kp {

ExerciseDialog::ExerciseDialog(const QString &labDir, const QString &name, double points, bool solution,
                               QWidget *parent)
    : QDialog(parent)
{
    setObjectName(QStringLiteral("exerciseDialog"));
    setWindowTitle(tr("Save as Exercise"));
    auto *note = new QLabel(tr("Writes the instructor's copy into the lab folder (LAB/NAME: the project, "
                               "starter.cu, reference.cu, the data files, and the points in LAB/grading.json) and "
                               "the students' copy (no reference, no hidden checks) for kpg grade."),
                            this);
    note->setWordWrap(true);
    m_lab = new QLineEdit(labDir, this);
    m_lab->setObjectName(QStringLiteral("exerciseLab"));
    m_lab->setPlaceholderText(tr("the lab's folder, e.g. ~/teaching/lab1"));
    auto *browse = new QPushButton(tr("&Browse…"), this);
    browse->setObjectName(QStringLiteral("exerciseBrowse"));
    auto *labRow = new QHBoxLayout;
    labRow->addWidget(m_lab, 1);
    labRow->addWidget(browse);
    m_name = new QLineEdit(name, this);
    m_name->setObjectName(QStringLiteral("exerciseName"));
    m_name->setToolTip(tr("Students hand in NAME.cu"));
    m_points = new QDoubleSpinBox(this);
    m_points->setObjectName(QStringLiteral("exercisePoints"));
    m_points->setRange(0, 1e6);
    m_points->setDecimals(2);
    m_points->setValue(points);
    m_points->setToolTip(tr("What a full answer earns (grading.json's \"points\")"));
    m_students = new QLineEdit(this);
    m_students->setObjectName(QStringLiteral("exerciseStudents"));
    m_students->setText(labDir.isEmpty() ? QString() : defaultStudentsDir(labDir));
    // An instructor writes the solution first; the students' starter is
    // then the same kernels with empty bodies, made for them.
    m_solution = new QCheckBox(tr("The source is my &solution: save it as reference.cu and give the students its "
                                  "kernels with empty bodies"),
                               this);
    m_solution->setObjectName(QStringLiteral("exerciseSolution"));
    m_solution->setChecked(solution);
    m_solution->setToolTip(tr("Off: the source as it is is the students' starter, and the reference is the one the "
                              "Lab tab names"));
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("exerciseMessage"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel, this);

    auto *form = new QFormLayout;
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    // A row holding a layout gets no buddy from addRow: the label names its field itself, so '&' is a mnemonic.
    auto *labLabel = new QLabel(tr("&Lab folder:"), this);
    labLabel->setBuddy(m_lab);
    form->addRow(labLabel, labRow);
    form->addRow(tr("&Exercise name:"), m_name);
    form->addRow(tr("&Points:"), m_points);
    form->addRow(tr("&Students' copy:"), m_students);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(note);
    layout->addLayout(form);
    layout->addWidget(m_solution);
    layout->addWidget(m_message);
    layout->addWidget(m_buttons);

    connect(browse, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Lab Folder"), m_lab->text());
        if (!dir.isEmpty()) {
            m_lab->setText(dir);
        }
    });
    connect(m_lab, &QLineEdit::textChanged, this, [this](const QString &text) {
        if (!m_studentsTyped) {
            m_students->setText(text.trimmed().isEmpty() ? QString() : defaultStudentsDir(text.trimmed()));
        }
        updateState();
    });
    connect(m_students, &QLineEdit::textEdited, this, [this] { m_studentsTyped = true; });
    connect(m_name, &QLineEdit::textChanged, this, &ExerciseDialog::updateState);
    connect(m_students, &QLineEdit::textChanged, this, &ExerciseDialog::updateState);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    updateState();
}

ExerciseTarget ExerciseDialog::target() const
{
    ExerciseTarget t;
    t.labDir = m_lab->text().trimmed();
    t.name = m_name->text().trimmed();
    t.points = m_points->value();
    t.studentsDir = m_students->text().trimmed();
    t.solutionAsReference = m_solution->isChecked();
    return t;
}

void ExerciseDialog::showError(const QString &message)
{
    m_message->setText(message);
    m_message->setStyleSheet(QStringLiteral("color: #d73a49"));
}

void ExerciseDialog::updateState()
{
    // Saying which field is missing beats a Save button that does nothing.
    QString missing;
    if (m_lab->text().trimmed().isEmpty()) {
        missing = tr("Choose the lab folder.");
    } else if (m_name->text().trimmed().isEmpty()) {
        missing = tr("Name the exercise: students hand in NAME.cu.");
    } else if (m_students->text().trimmed().isEmpty()) {
        missing = tr("Choose the folder for the students' copy.");
    }
    m_message->setStyleSheet(QString());
    m_message->setText(missing);
    m_buttons->button(QDialogButtonBox::Save)->setEnabled(missing.isEmpty());
}

} // namespace Kp
