#include "projectpanel.h"

#include "checkseditor.h"
#include "core/expression.h"
#include "exercisedialog.h"
#include "project/orderedjson.h"
#include "project/project.h"
#include "run/runner.h"
#include "workbench/compilecontroller.h"
#include "workbench/exercise.h"
#include "workbench/fieldplace.h"
#include "workbench/projectdocument.h"
#include "workbench/workbench.h"

#include <QDir>
#include <QEvent>
#include <QFileInfo>
#include <QFormLayout>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSettings>
#include <QTabWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace Kp {

namespace {

/**
 * The description as students will see it. A project's text is untrusted:
 * nothing is loaded (no images, no files) and links do not open here.
 */
class MarkdownPreview : public QTextBrowser
{
public:
    using QTextBrowser::QTextBrowser;
    QVariant loadResource(int, const QUrl &) override { return {}; }
};

/** A form whose labels go above their fields when the dock is narrow, rather than clipping either. */
QFormLayout *wrappingForm(QWidget *parent)
{
    auto *form = new QFormLayout(parent);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    return form;
}

/** A number typed as a number; anything else stays text, so the reader names what is wrong with it. */
QJsonValue numberOrText(const QString &text)
{
    bool ok = false;
    const double d = text.trimmed().toDouble(&ok);
    return ok ? QJsonValue(d) : QJsonValue(text.trimmed());
}

} // namespace

ProjectPanel::ProjectPanel(Workbench &wb, QWidget *parent)
    : QWidget(parent)
    , m_wb(wb)
    , m_doc(wb.document())
{
    setObjectName(QStringLiteral("projectPanel"));
    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("projectTabs"));
    m_tabs->setDocumentMode(true);

    // About: what students read.
    auto *about = new QWidget(m_tabs);
    auto *aboutForm = wrappingForm(about);
    m_title = new QLineEdit(about);
    m_title->setObjectName(QStringLiteral("projectTitle"));
    m_title->setPlaceholderText(tr("Vector add"));
    aboutForm->addRow(tr("&Title:"), m_title);
    m_descriptionTabs = new QTabWidget(about);
    m_description = new QPlainTextEdit(m_descriptionTabs);
    m_description->setObjectName(QStringLiteral("projectDescription"));
    m_description->setPlaceholderText(tr("What the exercise asks, in Markdown: **bold**, `code`, lists, links."));
    m_description->installEventFilter(this);
    m_preview = new MarkdownPreview(m_descriptionTabs);
    m_preview->setObjectName(QStringLiteral("projectPreview"));
    m_preview->setOpenLinks(false);
    m_descriptionTabs->addTab(m_description, tr("Write"));
    m_descriptionTabs->addTab(m_preview, tr("Preview"));
    auto *descriptionLabel = new QLabel(tr("&Description (Markdown):"), about);
    descriptionLabel->setBuddy(m_description);
    aboutForm->addRow(descriptionLabel);
    aboutForm->addRow(m_descriptionTabs);
    m_bytes = new QLineEdit(about);
    m_bytes->setObjectName(QStringLiteral("throughputBytes"));
    m_bytes->setPlaceholderText(tr("e.g. 12*n (none: not reported)"));
    m_bytes->setToolTip(tr("Bytes a run moves, an expression over the scalars: Results then shows GB/s"));
    aboutForm->addRow(tr("Bytes moved:"), m_bytes);
    m_flops = new QLineEdit(about);
    m_flops->setObjectName(QStringLiteral("throughputFlops"));
    m_flops->setPlaceholderText(tr("e.g. 2*n (none: not reported)"));
    m_flops->setToolTip(tr("Floating-point operations a run does, an expression over the scalars: Results then "
                           "shows GFLOP/s"));
    aboutForm->addRow(tr("FLOPs:"), m_flops);
    m_tabs->addTab(about, tr("About"));

    // Checks: what a right answer is.
    m_checks = new ChecksEditor(m_doc, m_tabs);
    m_tabs->addTab(m_checks, tr("Checks"));

    // Lab: what only the instructor's copy has (docs/labs.md).
    auto *lab = new QWidget(m_tabs);
    auto *labForm = wrappingForm(lab);
    auto *labNote = new QLabel(tr("For an exercise graded with kpg grade: the trusted solution that reference checks "
                                  "and the speed target compare with. Students' copies leave both out (kpg lab "
                                  "export-starter), and hidden checks too."),
                               lab);
    labNote->setWordWrap(true);
    labForm->addRow(labNote);
    m_reference = new QLineEdit(lab);
    m_reference->setObjectName(QStringLiteral("referenceSource"));
    m_reference->setPlaceholderText(tr("reference.cu, beside the project"));
    labForm->addRow(tr("&Reference kernel:"), m_reference);
    m_speedup = new QLineEdit(lab);
    m_speedup->setObjectName(QStringLiteral("speedTarget"));
    m_speedup->setPlaceholderText(tr("e.g. 0.5 (none: correctness only)"));
    m_speedup->setToolTip(tr("The least speed ratio that passes: the reference's median time over the "
                             "submission's (1 = as fast, 0.5 = half as fast)"));
    labForm->addRow(tr("&Speed target:"), m_speedup);
    m_exerciseButton = new QPushButton(tr("Save as &Exercise…"), lab);
    m_exerciseButton->setObjectName(QStringLiteral("saveAsExercise"));
    m_exerciseButton->setToolTip(tr("Write this project into a lab for kpg grade: the instructor's copy and the "
                                    "students' copy, with the exercise's points"));
    labForm->addRow(m_exerciseButton);
    m_exerciseNote = new QLabel(lab);
    m_exerciseNote->setObjectName(QStringLiteral("exerciseNote"));
    m_exerciseNote->setWordWrap(true);
    m_exerciseNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
    labForm->addRow(m_exerciseNote);
    m_tabs->addTab(lab, tr("Lab"));

    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("projectMessage"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message->setStyleSheet(QStringLiteral("color: #d73a49"));
    m_message->hide();

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_tabs, 1);
    layout->addWidget(m_message);

    connect(m_title, &QLineEdit::editingFinished, this,
            [this] { commitTop(QStringLiteral("title"), m_title->text().trimmed(), tr("Set title")); });
    const auto throughput = [this](QLineEdit *edit, const QString &key, const QString &label) {
        const QString t = edit->text().trimmed();
        // The reader takes any text; a run evaluates it over the scalars.
        // Evaluated now, a typo is refused where it was typed, in the run's words.
        if (!t.isEmpty()) {
            Expression ex;
            const QMap<QString, double> vars = expressionVariables(m_doc.project(), m_doc.bufferShapes());
            for (auto it = vars.cbegin(); it != vars.cend(); ++it) {
                ex.set(it.key(), it.value());
            }
            if (const Result<double> v = ex.evaluate(t, QStringLiteral("throughput.") + key); !v) {
                Error e = v.error();
                e.path = QStringLiteral("throughput.") + key;
                showStatus(e);
                return;
            }
        }
        commitSection(QStringLiteral("throughput"), key, t.isEmpty() ? QJsonValue() : t, label);
    };
    connect(m_bytes, &QLineEdit::editingFinished, this,
            [this, throughput] { throughput(m_bytes, QStringLiteral("bytes"), tr("Set bytes moved")); });
    connect(m_flops, &QLineEdit::editingFinished, this,
            [this, throughput] { throughput(m_flops, QStringLiteral("flops"), tr("Set FLOPs")); });
    connect(m_reference, &QLineEdit::editingFinished, this, [this] {
        const QString t = m_reference->text().trimmed();
        commitSection(QStringLiteral("reference"), QStringLiteral("source"), t.isEmpty() ? QJsonValue() : t,
                      tr("Set reference kernel"));
    });
    connect(m_speedup, &QLineEdit::editingFinished, this, [this] {
        const QString t = m_speedup->text().trimmed();
        commitSection(QStringLiteral("grading"), QStringLiteral("speedup"),
                      t.isEmpty() ? QJsonValue() : numberOrText(t), tr("Set speed target"));
    });
    connect(m_descriptionTabs, &QTabWidget::currentChanged, this, [this](int index) {
        if (m_descriptionTabs->widget(index) == m_preview) {
            commitDescription();
            m_preview->setMarkdown(m_description->toPlainText());
        }
    });
    connect(m_checks, &ChecksEditor::edited, this, &ProjectPanel::showStatus);
    connect(m_exerciseButton, &QPushButton::clicked, this, &ProjectPanel::saveAsExercise);

    const auto show = [this] { showProject(m_doc.project()); };
    connect(&m_doc, &ProjectDocument::loaded, this, [this, show] {
        showStatus(Unit{});
        show();
    });
    connect(&m_doc, &ProjectDocument::projectChanged, this, show);
    show();
}

bool ProjectPanel::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_description && event->type() == QEvent::FocusOut) {
        commitDescription();
    }
    return QWidget::eventFilter(watched, event);
}

void ProjectPanel::commitDescription()
{
    commitTop(QStringLiteral("description"), m_description->toPlainText(), tr("Set description"));
}

void ProjectPanel::saveAsExercise()
{
    // The form's fields and the editor's text are the project as the user sees it.
    commitDescription();
    m_wb.compile().syncSource();
    QSettings settings;
    const QString lab = settings.value(QStringLiteral("exercise/labDir")).toString();
    // Students hand in NAME.cu: the proposed name is one they can.
    const Project &p = m_doc.project();
    QString name = m_doc.suggestedBaseName();
    if (p.path.isEmpty() && !p.title.trimmed().isEmpty()) {
        // An unsaved project is "untitled"; its title names the exercise better.
        name = p.title.trimmed().toLower();
        name.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("_"));
        name.remove(QRegularExpression(QStringLiteral("^_+|_+$")));
    }
    name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.+-]")), QStringLiteral("_"));
    // A project that names its reference has its starter in the editor already.
    const bool solution = !(p.reference && !p.reference->sourceFile.isEmpty());
    ExerciseDialog dialog(lab, name, 10, solution, this);
    m_exerciseDialog = &dialog;
    const auto done = qScopeGuard([this] { m_exerciseDialog = nullptr; });
    while (dialog.exec() == QDialog::Accepted) {
        ExerciseTarget target = dialog.target();
        if (exerciseExists(target.labDir, target.name)) {
            const auto answer =
                QMessageBox::question(&dialog, tr("Save as Exercise"),
                                      tr("The lab already has an exercise %1 (%2). Replace it, and its students' copy?")
                                          .arg(target.name, QDir(target.labDir).filePath(target.name)),
                                      QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
            if (answer != QMessageBox::Yes) {
                continue;
            }
            target.replace = true;
        }
        const Result<SavedExercise> saved = saveExercise(m_doc.project(), target);
        if (!saved) {
            dialog.showError(panelMessage(saved.error(), m_doc.project()));
            continue;
        }
        settings.setValue(QStringLiteral("exercise/labDir"), target.labDir);
        const QString note = tr("Saved exercise %1: the instructor's copy in %2, the students' copy in %3 (%4 "
                                "points in %5).")
                                 .arg(target.name, saved->instructorDir, saved->studentsDir)
                                 .arg(target.points)
                                 .arg(saved->policyFile);
        m_exerciseNote->setText(note);
        m_wb.log(note);
        return;
    }
}

void ProjectPanel::commitTop(const QString &key, const QString &text, const QString &label)
{
    showStatus(m_doc.edit(label, [&](QJsonObject &o) {
        if (text.trimmed().isEmpty()) {
            o.remove(key);
        } else {
            o.insert(key, text);
        }
    }));
}

void ProjectPanel::commitSection(const QString &section, const QString &key, const QJsonValue &value,
                                 const QString &label)
{
    showStatus(m_doc.edit(label, [&](QJsonObject &o) {
        QJsonObject s = o.value(section).toObject();
        if (value.isUndefined() || value.isNull()) {
            s.remove(key);
        } else {
            s.insert(key, value);
        }
        if (s.isEmpty()) {
            o.remove(section);
        } else {
            o.insert(section, s);
        }
    }));
}

void ProjectPanel::showStatus(const Status &s)
{
    // The reader's message with the JSON path worded as the panels word it where they can.
    m_message->setText(s ? QString() : panelMessage(s.error(), m_doc.project()));
    m_message->setVisible(!s);
}

void ProjectPanel::showProject(const Project &p)
{
    // A field the user is typing in keeps their text; the others follow the project.
    const auto set = [](QLineEdit *edit, const QString &text) {
        if (!edit->hasFocus() && edit->text() != text) {
            edit->setText(text);
        }
    };
    set(m_title, p.title);
    set(m_bytes, p.throughput.bytes);
    set(m_flops, p.throughput.flops);
    set(m_reference, p.reference ? p.reference->sourceFile : QString());
    set(m_speedup, p.grading && p.grading->minSpeedup > 0 ? numberText(p.grading->minSpeedup) : QString());
    if (!m_description->hasFocus() && m_description->toPlainText() != p.description) {
        m_description->setPlainText(p.description);
    }
    if (m_descriptionTabs->currentWidget() == m_preview) {
        m_preview->setMarkdown(p.description);
    }
    m_checks->showChecks(p);
}

} // namespace Kp
