// The Project dock as an instructor uses it to make an exercise without
// writing JSON: title, Markdown description with its preview, throughput,
// the checks editor (every kind with its fields, add, remove, reorder) and
// the lab fields. Each edit goes through the document: the project reader
// judges it with a .kpg file's messages, and Undo takes it back.

#include "panelfixture.h"
#include "testutil.h"

#include "check/checkjson.h"
#include "panels/project/checkseditor.h"
#include "panels/project/exercisedialog.h"
#include "panels/project/projectpanel.h"
#include "project/orderedjson.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTimer>
#include <QUndoStack>

using namespace Kp;
using namespace KpTest;

namespace {

const QString kVectorAdd = QStringLiteral(":/presets/vector_add/vector_add.kpg");

/** Types text into a line edit as a user does, and presses Enter. */
void typeAndEnter(QLineEdit *edit, const QString &text)
{
    edit->setFocus();
    edit->selectAll();
    QTest::keyClick(edit, Qt::Key_Delete);
    QTest::keyClicks(edit, text);
    QTest::keyClick(edit, Qt::Key_Return);
}

/** Sets a form field's text without committing (Apply commits the whole form). */
void fill(QLineEdit *edit, const QString &text)
{
    edit->setText(text);
}

QString checkJson(const CheckSpec &c)
{
    return QString::fromUtf8(QJsonDocument(toJsonValue(checkSpecNode(c)).toObject()).toJson(QJsonDocument::Compact));
}

bool writeText(const QString &path, const QByteArray &text)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(text) == text.size();
}

QByteArray readText(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QJsonObject readJson(const QString &path)
{
    return QJsonDocument::fromJson(readText(path)).object();
}

const QByteArray kStarter = "extern \"C\" __global__ void vectorAdd(const float *a, const float *b, float *c, int n)\n"
                            "{\n"
                            "    // TODO: c[i] = a[i] + b[i] for every i < n\n"
                            "}\n";
const QByteArray kAnswer = "extern \"C\" __global__ void vectorAdd(const float *a, const float *b, float *c, int n)\n"
                           "{\n"
                           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "    if (i < n) c[i] = a[i] + b[i];\n"
                           "}\n";

QString compact(const char *json)
{
    return QString::fromUtf8(QJsonDocument::fromJson(json).toJson(QJsonDocument::Compact));
}

} // namespace

class TestProjectPanel : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    // Title, description and throughput typed in the panel are the project's,
    // one undoable edit each; a bad throughput gets the reader's message.
    void aboutFieldsAreUndoableEdits()
    {
        PanelFixture f;
        ProjectPanel panel(f.wb);
        panel.show();
        KP_VERIFY_RESULT(f.wb.document().openProject(kVectorAdd));
        QCOMPARE(panel.titleField()->text(), QStringLiteral("Vector add"));
        typeAndEnter(panel.titleField(), QStringLiteral("Grid-stride add"));
        QCOMPARE(f.wb.document().project().title, QStringLiteral("Grid-stride add"));

        panel.descriptionField()->setFocus();
        panel.descriptionField()->selectAll();
        QTest::keyClick(panel.descriptionField(), Qt::Key_Delete);
        for (const char *line : {"# Grid stride", "", "Loop over `n` with a **stride**."}) {
            if (*line == 0 || line[0] == 'L') {
                QTest::keyClick(panel.descriptionField(), Qt::Key_Return);
            }
            QTest::keyClicks(panel.descriptionField(), QString::fromLatin1(line));
        }
        panel.descriptionTabs()->setCurrentWidget(
            panel.preview()); // the user looks at the preview: the text is committed
        QCOMPARE(f.wb.document().project().description,
                 QStringLiteral("# Grid stride\n\nLoop over `n` with a **stride**."));
        QVERIFY(panel.preview()->toPlainText().startsWith(QLatin1String("Grid stride")));
        QVERIFY(!panel.preview()->toPlainText().contains(QLatin1String("**")));

        typeAndEnter(panel.bytesField(), QStringLiteral("8*n"));
        QCOMPARE(f.wb.document().project().throughput.bytes, QStringLiteral("8*n"));
        // An expression over a scalar the project lacks is refused where it was typed.
        typeAndEnter(panel.bytesField(), QStringLiteral("8*m"));
        QVERIFY2(panel.messageLabel()->text().contains(QLatin1String("'m'")), qPrintable(panel.messageLabel()->text()));
        QCOMPARE(f.wb.document().project().throughput.bytes, QStringLiteral("8*n"));
        // Refused as a .kpg would be, the field's place in the message; nothing changes.
        typeAndEnter(panel.flopsField(), QStringLiteral("2*(n"));
        QVERIFY2(panel.messageLabel()->text().startsWith(QLatin1String("throughput, flops")),
                 qPrintable(panel.messageLabel()->text()));
        QVERIFY(panel.messageLabel()->isVisible());
        QCOMPARE(f.wb.document().project().throughput.flops, QStringLiteral("n"));
        typeAndEnter(panel.flopsField(), QStringLiteral("2*n"));
        QVERIFY(!panel.messageLabel()->isVisible());

        // Each edit is one step back, and the fields follow.
        QUndoStack *undo = f.wb.document().undoStack();
        QCOMPARE(undo->count(), 4);
        undo->undo(); // flops
        undo->undo(); // bytes
        QCOMPARE(panel.bytesField()->text(), QStringLiteral("12*n"));
        undo->undo(); // description
        undo->undo(); // title
        QCOMPARE(f.wb.document().project().title, QStringLiteral("Vector add"));
        QCOMPARE(panel.titleField()->text(), QStringLiteral("Vector add"));
        QVERIFY(!f.wb.document().isModified());
    }

    // The lab fields: a speed target needs a reference kernel, as the reader says.
    void labFieldsSayWhatTheyNeed()
    {
        PanelFixture f;
        ProjectPanel panel(f.wb);
        panel.show();
        KP_VERIFY_RESULT(f.wb.document().openProject(kVectorAdd));
        typeAndEnter(panel.speedupField(), QStringLiteral("0.5"));
        QVERIFY2(panel.messageLabel()->text().contains(QLatin1String("needs a reference kernel")),
                 qPrintable(panel.messageLabel()->text()));
        QVERIFY(!f.wb.document().project().grading);
        typeAndEnter(panel.referenceField(), QStringLiteral("reference.cu"));
        typeAndEnter(panel.speedupField(), QStringLiteral("0.5"));
        QVERIFY(f.wb.document().project().reference);
        QCOMPARE(f.wb.document().project().reference->sourceFile, QStringLiteral("reference.cu"));
        QVERIFY(f.wb.document().project().grading);
        QCOMPARE(f.wb.document().project().grading->minSpeedup, 0.5);
    }

    // Every check kind with its own fields, written by the form as a .kpg
    // would write it.
    void everyCheckKindFromTheForm_data()
    {
        QTest::addColumn<QString>("kind");       // the kind chooser's value
        QTest::addColumn<QStringList>("fields"); // objectName=value, set before Apply
        QTest::addColumn<QString>("expected");   // the check as the project then writes it
        QTest::newRow("expected with tolerance and region")
            << "expected"
            << QStringList{"checkName=sum", "checkBuffer=c", "checkTarget=a + b", "checkAbs=1e-5", "checkUlp=2",
                           "checkBegin=0",  "checkEnd=1000", "checkSeeds=3",      "checkNan=1"}
            << compact(R"({"name":"sum","buffer":"c","expected":"a + b","tolerance":{"abs":1e-5,"ulp":2},
                          "region":{"begin":[0],"end":[1000]},"seeds":3,"nan":true})");
        QTest::newRow("reference") << "reference" << QStringList{"checkBuffer=c", "checkOther=c", "checkRel=0.001"}
                                   << compact(R"({"buffer":"c","reference":"c","tolerance":{"rel":0.001}})");
        QTest::newRow("npy") << "npy" << QStringList{"checkBuffer=c", "checkTarget=expected_c.npy"}
                             << compact(R"({"buffer":"c","npy":"expected_c.npy"})");
        QTest::newRow("permutation of an initial buffer")
            << "permutation" << QStringList{"checkBuffer=c", "checkOther=a", "checkOtherWhen=0"}
            << compact(R"({"buffer":"c","permutation":"a"})");
        QTest::newRow("set after the reference run")
            << "set" << QStringList{"checkBuffer=c", "checkOther=b", "checkOtherWhen=1"}
            << compact(R"({"buffer":"c","set":{"reference":"b"}})");
        QTest::newRow("range with both bounds") << "range" << QStringList{"checkBuffer=c", "checkMin=0", "checkMax=2"}
                                                << compact(R"({"buffer":"c","range":[0,2]})");
        QTest::newRow("range with a lower bound only")
            << "range" << QStringList{"checkBuffer=c", "checkMin=0", "checkMax="}
            << compact(R"({"buffer":"c","range":[0,null]})");
        QTest::newRow("printed matches") << "printed"
                                         << QStringList{"checkName=greeting", "checkTarget=hello [0-9]+",
                                                        "checkPrintedMode=0"}
                                         << compact(R"({"name":"greeting","printed":{"matches":"hello [0-9]+"}})");
        QTest::newRow("printed equals") << "printed" << QStringList{"checkTarget=done", "checkPrintedMode=1"}
                                        << compact(R"({"printed":{"equals":"done"}})");
        QTest::newRow("hidden") << "expected" << QStringList{"checkBuffer=c", "checkTarget=a + b", "checkHidden=1"}
                                << compact(R"({"buffer":"c","expected":"a + b","hidden":true})");
    }

    void everyCheckKindFromTheForm()
    {
        QFETCH(QString, kind);
        QFETCH(QStringList, fields);
        QFETCH(QString, expected);
        PanelFixture f;
        ProjectPanel panel(f.wb);
        KP_VERIFY_RESULT(f.wb.document().openProject(kVectorAdd));
        ChecksEditor *e = panel.checksEditor();
        QCOMPARE(e->list()->count(), 1);
        QCOMPARE(e->list()->item(0)->text(), QStringLiteral("c = a + b"));
        e->select(0);
        QCOMPARE(e->targetField()->text(), QStringLiteral("a + b"));
        QCOMPARE(e->seedsField()->value(), 3);
        // Clear the form's optional fields: each row sets what it needs.
        e->nameField()->clear();
        e->seedsField()->setValue(1);
        QComboBox *kinds = e->kindChooser();
        kinds->setCurrentIndex(kinds->findData(kind));
        QVERIFY(kinds->currentIndex() >= 0);
        for (const QString &field : fields) {
            const QString name = field.section(QLatin1Char('='), 0, 0);
            const QString value = field.section(QLatin1Char('='), 1);
            QWidget *w = e->findChild<QWidget *>(name);
            QVERIFY2(w, qPrintable(name));
            if (auto *line = qobject_cast<QLineEdit *>(w)) {
                QVERIFY2(line->isVisibleTo(e), qPrintable(name + " shows for " + kind));
                fill(line, value);
            } else if (auto *combo = qobject_cast<QComboBox *>(w)) {
                QVERIFY2(combo->isVisibleTo(e), qPrintable(name + " shows for " + kind));
                bool index = false;
                const int i = value.toInt(&index);
                combo->setCurrentIndex(index ? i : combo->findText(value));
                QVERIFY2(combo->currentIndex() >= 0, qPrintable(field));
            } else if (auto *spin = qobject_cast<QSpinBox *>(w)) {
                spin->setValue(value.toInt());
            } else if (auto *box = qobject_cast<QCheckBox *>(w)) {
                QVERIFY2(box->isVisibleTo(e), qPrintable(name + " shows for " + kind));
                box->setChecked(value == QLatin1String("1"));
            }
        }
        QTest::mouseClick(e->applyButton(), Qt::LeftButton);
        QVERIFY2(!panel.messageLabel()->isVisible(), qPrintable(panel.messageLabel()->text()));
        QCOMPARE(f.wb.document().project().checks.size(), 1);
        QCOMPARE(checkJson(f.wb.document().project().checks[0]), expected);
        // The form reads the check back as the project has it.
        QCOMPARE(kinds->currentData().toString(), kind);
        f.wb.document().undoStack()->undo();
        QCOMPARE(f.wb.document().project().checks[0].displayName(), QStringLiteral("c = a + b"));
        QCOMPARE(e->targetField()->text(), QStringLiteral("a + b"));
    }

    // A wrong field is refused with the message a .kpg file gets; the form
    // keeps what was typed, the project is unchanged.
    void refusedWithTheReadersMessage_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("message");
        QTest::newRow("negative ulp") << "checkUlp"
                                      << "-1"
                                      << "checks[0].tolerance.ulp: must be at least 0, got -1";
        QTest::newRow("tolerance not a number") << "checkAbs"
                                                << "tiny"
                                                << "checks[0].tolerance.abs:";
        QTest::newRow("region past the end") << "checkEnd"
                                             << "2000000"
                                             << "checks[0].region.end[0]: 2000000 is past";
        QTest::newRow("region without an end") << "checkBegin"
                                               << "0"
                                               << "checks[0].region.end:";
        QTest::newRow("empty expression") << "checkTarget"
                                          << ""
                                          << "checks[0].expected:";
    }

    void refusedWithTheReadersMessage()
    {
        QFETCH(QString, field);
        QFETCH(QString, value);
        QFETCH(QString, message);
        PanelFixture f;
        ProjectPanel panel(f.wb);
        panel.show();
        KP_VERIFY_RESULT(f.wb.document().openProject(kVectorAdd));
        ChecksEditor *e = panel.checksEditor();
        e->select(0);
        if (field == QLatin1String("checkEnd")) {
            fill(e->beginField(), QStringLiteral("0"));
        }
        auto *line = e->findChild<QLineEdit *>(field);
        QVERIFY(line);
        typeAndEnter(line, value); // Enter in a field applies the form
        QVERIFY2(panel.messageLabel()->text().startsWith(message), qPrintable(panel.messageLabel()->text()));
        QVERIFY(!f.wb.document().isModified());
        QCOMPARE(line->text(), value);
    }

    // Add, reorder and remove, each one undoable step; the list follows.
    void addRemoveReorderUndo()
    {
        PanelFixture f;
        ProjectPanel panel(f.wb);
        panel.show();
        KP_VERIFY_RESULT(f.wb.document().openProject(kVectorAdd));
        ChecksEditor *e = panel.checksEditor();
        QTest::mouseClick(e->findChild<QPushButton *>(QStringLiteral("addCheck")), Qt::LeftButton);
        QCOMPARE(f.wb.document().project().checks.size(), 2);
        QCOMPARE(e->current(), 1);
        QCOMPARE(e->nameField()->text(), QStringLiteral("check 2"));
        typeAndEnter(e->nameField(), QStringLiteral("all in range"));
        e->kindChooser()->setCurrentIndex(e->kindChooser()->findData(QStringLiteral("range")));
        fill(e->minField(), QStringLiteral("0"));
        typeAndEnter(e->maxField(), QStringLiteral("2"));
        QCOMPARE(f.wb.document().project().checks[1].kind, CheckSpec::Kind::Range);
        QCOMPARE(e->list()->item(1)->text(), QStringLiteral("all in range"));
        QTest::mouseClick(e->findChild<QPushButton *>(QStringLiteral("checkUp")), Qt::LeftButton);
        QCOMPARE(f.wb.document().project().checks[0].name, QStringLiteral("all in range"));
        QCOMPARE(e->current(), 0);
        QCOMPARE(e->list()->item(1)->text(), QStringLiteral("c = a + b"));
        QTest::mouseClick(e->findChild<QPushButton *>(QStringLiteral("removeCheck")), Qt::LeftButton);
        QCOMPARE(f.wb.document().project().checks.size(), 1);
        QCOMPARE(e->list()->count(), 1);
        QCOMPARE(e->targetField()->text(), QStringLiteral("a + b"));
        QUndoStack *undo = f.wb.document().undoStack();
        undo->undo(); // remove
        undo->undo(); // up
        QCOMPARE(f.wb.document().project().checks[1].name, QStringLiteral("all in range"));
        while (undo->canUndo()) {
            undo->undo();
        }
        QCOMPARE(e->list()->count(), 1);
        // With no buffers only the printed output can be checked.
        KP_VERIFY_RESULT(f.wb.document().newProject());
        QCOMPARE(e->list()->count(), 0);
        QVERIFY(!e->applyButton()->isEnabled() || !e->applyButton()->parentWidget()->isEnabled());
        KP_VERIFY_RESULT(e->addCheck());
        QCOMPARE(f.wb.document().project().checks.value(0).kind, CheckSpec::Kind::Printed);
    }
    // Issue 29: an instructor builds an exercise in the panel (a reference
    // kernel, a hidden check), saves it as an exercise worth 25 points, and
    // grades two students with the real kpg grade. Without a GPU grading
    // stops after compiling and binding: one student's kernel compiles, the
    // other's compile error is reported with its line.
    void savedAsExerciseIsGradedByKpg()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        PanelFixture f;
        ProjectPanel panel(f.wb);
        panel.show();
        KP_VERIFY_RESULT(f.wb.document().openProject(kVectorAdd));
        // The instructor's working copy: the template saved, the starter typed, a reference beside it.
        const QString work = dir.filePath(QStringLiteral("work/vecadd.kpg"));
        QVERIFY(QDir().mkpath(QFileInfo(work).absolutePath()));
        f.wb.document().setSourceText(QString::fromUtf8(kStarter));
        KP_VERIFY_RESULT(f.wb.document().saveTo(work));
        QVERIFY(writeText(dir.filePath(QStringLiteral("work/solution.cu")), kAnswer));
        panel.tabs()->setCurrentIndex(2);
        typeAndEnter(panel.referenceField(), QStringLiteral("solution.cu"));
        QVERIFY2(!panel.messageLabel()->isVisible(), qPrintable(panel.messageLabel()->text()));
        // A second check against the reference, hidden from the students.
        ChecksEditor *e = panel.checksEditor();
        QTest::mouseClick(e->findChild<QPushButton *>(QStringLiteral("addCheck")), Qt::LeftButton);
        typeAndEnter(e->nameField(), QStringLiteral("same as the reference"));
        e->kindChooser()->setCurrentIndex(e->kindChooser()->findData(QStringLiteral("reference")));
        e->bufferChooser()->setCurrentIndex(e->bufferChooser()->findText(QStringLiteral("c")));
        e->otherChooser()->setCurrentIndex(e->otherChooser()->findText(QStringLiteral("c")));
        e->hiddenBox()->setChecked(true);
        QTest::mouseClick(e->applyButton(), Qt::LeftButton);
        QVERIFY2(!panel.messageLabel()->isVisible(), qPrintable(panel.messageLabel()->text()));
        QCOMPARE(f.wb.document().project().checks.size(), 2);

        // Save as Exercise: the dialog, filled in as typed; its Save button.
        QSettings().remove(QStringLiteral("exercise/labDir")); // a first exercise: no lab folder used before
        const QString lab = dir.filePath(QStringLiteral("lab1"));
        QString refused;
        QTimer::singleShot(0, &panel, [&] {
            ExerciseDialog *d = panel.exerciseDialog();
            if (!d) {
                refused = QStringLiteral("no dialog");
                return;
            }
            // Any surprise is recorded and the dialog closed, so the test reports instead of waiting.
            const auto fail = [&](const QString &why) {
                refused = why;
                d->reject();
            };
            if (d->nameField()->text() != QLatin1String("vecadd")) {
                return fail(QStringLiteral("proposed name: ") + d->nameField()->text());
            }
            if (d->buttons()->button(QDialogButtonBox::Save)->isEnabled() ||
                !d->messageLabel()->text().contains(QLatin1String("lab folder"))) {
                return fail(QStringLiteral("Save is on without a lab folder: ") + d->messageLabel()->text());
            }
            // The label's '&' is a mnemonic for the field, not shown ("&Lab folder:" once was).
            bool buddied = false;
            for (const QLabel *l : d->findChildren<QLabel *>()) {
                buddied = buddied || (l->text() == QLatin1String("&Lab folder:") && l->buddy() == d->labField());
            }
            if (!buddied) {
                return fail(QStringLiteral("the lab folder's label is no buddy of its field"));
            }
            QTest::keyClicks(d->labField(), lab);
            if (d->studentsField()->text() != lab + QStringLiteral("-students")) {
                return fail(QStringLiteral("students' folder: ") + d->studentsField()->text());
            }
            d->nameField()->selectAll();
            QTest::keyClicks(d->nameField(), QStringLiteral("vector_add"));
            d->pointsField()->setValue(25);
            QTest::mouseClick(d->buttons()->button(QDialogButtonBox::Save), Qt::LeftButton);
            // A refusal keeps the dialog open: say why and close it, so the test ends.
            if (panel.exerciseDialog() && panel.exerciseDialog()->isVisible()) {
                refused = d->messageLabel()->text();
                d->reject();
            }
        });
        QTest::mouseClick(panel.exerciseButton(), Qt::LeftButton);
        QVERIFY2(refused.isEmpty(), qPrintable(refused));
        QVERIFY2(panel.exerciseLabel()->text().startsWith(QLatin1String("Saved exercise vector_add")),
                 qPrintable(panel.exerciseLabel()->text()));
        QCOMPARE(QSettings().value(QStringLiteral("exercise/labDir")).toString(), lab); // proposed next time

        // The instructor's copy: the starter, the reference, both checks; the points.
        const QJsonObject teacher = readJson(lab + QStringLiteral("/vector_add/vector_add.kpg"));
        QCOMPARE(teacher.value("source").toString(), QStringLiteral("starter.cu"));
        QCOMPARE(teacher.value("reference").toObject().value("source").toString(), QStringLiteral("reference.cu"));
        QCOMPARE(teacher.value("checks").toArray().size(), 2);
        QVERIFY(teacher.value("checks").toArray().at(1).toObject().value("hidden").toBool());
        QCOMPARE(readText(lab + QStringLiteral("/vector_add/starter.cu")), kStarter);
        QCOMPARE(readText(lab + QStringLiteral("/vector_add/reference.cu")), kAnswer);
        QCOMPARE(readJson(lab + QStringLiteral("/grading.json"))
                     .value("exercises")
                     .toObject()
                     .value("vector_add")
                     .toObject()
                     .value("points")
                     .toDouble(),
                 25.0);
        // The students' copy: the starter as vector_add.cu, no reference, no hidden check.
        const QString students = lab + QStringLiteral("-students/vector_add");
        const QJsonObject student = readJson(students + QStringLiteral("/vector_add.kpg"));
        QCOMPARE(student.value("source").toString(), QStringLiteral("vector_add.cu"));
        QVERIFY(!student.contains("reference"));
        QCOMPARE(student.value("checks").toArray().size(), 1);
        QCOMPARE(student.value("checks").toArray().at(0).toObject().value("name").toString(),
                 QStringLiteral("c = a + b"));
        QCOMPARE(readText(students + QStringLiteral("/vector_add.cu")), kStarter);
        QVERIFY(!QFileInfo::exists(students + QStringLiteral("/reference.cu")));
        QVERIFY(!QFileInfo::exists(students + QStringLiteral("/solution.cu")));

        // Two students hand in; the real kpg grade grades them against the saved lab.
        const QString subs = dir.filePath(QStringLiteral("submissions"));
        QVERIFY(writeText(subs + QStringLiteral("/alice/vector_add.cu"), kAnswer));
        QVERIFY(writeText(subs + QStringLiteral("/bob/vector_add.cu"),
                          "extern \"C\" __global__ void vectorAdd(const float *a, const float *b, float *c, int n)\n"
                          "{\n"
                          "    c[0] = a[0] + b[0]\n"
                          "}\n"));
        const QString csv = dir.filePath(QStringLiteral("grades.csv"));
        const QString book = dir.filePath(QStringLiteral("gradebook.csv"));
        const Run r =
            run(QStringLiteral("kpg"),
                {QStringLiteral("grade"), lab, QStringLiteral("--submissions"), subs, QStringLiteral("--no-sandbox"),
                 QStringLiteral("--csv"), csv, QStringLiteral("--gradebook"), book},
                {QStringLiteral("KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1")}, 240000);
        QVERIFY2(r.status == QProcess::NormalExit, qPrintable(r.err));
        const QString grades = QString::fromUtf8(readText(csv));
        QVERIFY2(grades.contains(QLatin1String("alice,vector_add,no-gpu")), qPrintable(grades + r.out + r.err));
        QVERIFY2(grades.contains(QLatin1String("bob,vector_add,compile-error")), qPrintable(grades + r.out + r.err));
        QVERIFY2(grades.contains(QLatin1String("vector_add.cu:4:")), qPrintable(grades));
        // The gradebook's full grade is the points the dialog set.
        const QStringList lines = QString::fromUtf8(readText(book)).split(QLatin1Char('\n'));
        QVERIFY2(lines.size() >= 3, qPrintable(lines.join('\n')));
        QVERIFY2(lines[0].startsWith(QLatin1String("student,total,max,")), qPrintable(lines[0]));
        QCOMPARE(lines[1].section(QLatin1Char(','), 0, 0), QStringLiteral("alice"));
        QCOMPARE(lines[1].section(QLatin1Char(','), 2, 2).toDouble(), 25.0);
    }

    // Saving again asks before replacing, and a refusal names the field.
    void saveAsExerciseRefusals_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("noChecks");
        QTest::addColumn<QString>("message");
        QTest::newRow("a name students cannot hand in")
            << "vector add" << false << "exercise name 'vector add': students hand in";
        QTest::newRow("no checks") << "vector_add" << true << "the project has no checks";
    }

    void saveAsExerciseRefusals()
    {
        QFETCH(QString, name);
        QFETCH(bool, noChecks);
        QFETCH(QString, message);
        QTemporaryDir dir;
        PanelFixture f;
        KP_VERIFY_RESULT(f.wb.document().openProject(kVectorAdd));
        Project p = f.wb.document().project();
        if (noChecks) {
            p.checks.clear();
        }
        ExerciseTarget t;
        t.labDir = dir.filePath(QStringLiteral("lab"));
        t.name = name;
        const Result<SavedExercise> saved = saveExercise(p, t);
        QVERIFY(!saved);
        QVERIFY2(saved.error().message.startsWith(message), qPrintable(saved.error().message));
        QVERIFY(!QFileInfo::exists(t.labDir + QStringLiteral("/grading.json")));
    }

    // The instructor wrote the solution in the editor and ticks "the source
    // is my solution" (the default without a reference): the solution is the
    // reference, and the students get the kernel with an empty body.
    void solutionBecomesTheReference()
    {
        QTemporaryDir dir;
        PanelFixture f;
        KP_VERIFY_RESULT(f.wb.document().openProject(kVectorAdd));
        f.wb.document().setSourceText(QString::fromUtf8(kAnswer));
        ExerciseTarget t;
        t.labDir = dir.filePath(QStringLiteral("lab"));
        t.name = QStringLiteral("va");
        t.solutionAsReference = true;
        const Result<SavedExercise> saved = saveExercise(f.wb.document().project(), t);
        QVERIFY2(saved, saved ? "" : qPrintable(saved.error().message));
        const QString ex = t.labDir + QStringLiteral("/va");
        QCOMPARE(readText(ex + QStringLiteral("/reference.cu")), kAnswer);
        const QByteArray starter = "extern \"C\" __global__ void vectorAdd(const float *a, const float *b, float *c, "
                                   "int n)\n"
                                   "{\n"
                                   "    // Your code here: the exercise's description says what this kernel computes.\n"
                                   "}\n";
        QCOMPARE(readText(ex + QStringLiteral("/starter.cu")), starter);
        const QJsonObject teacher = readJson(ex + QStringLiteral("/va.kpg"));
        QCOMPARE(teacher.value("source").toString(), QStringLiteral("starter.cu"));
        QCOMPARE(teacher.value("reference").toObject().value("source").toString(), QStringLiteral("reference.cu"));
        // The students' copy has the starter and nothing of the solution.
        const QString students = t.labDir + QStringLiteral("-students/va");
        QCOMPARE(readText(students + QStringLiteral("/va.cu")), starter);
        QVERIFY(!QFileInfo::exists(students + QStringLiteral("/reference.cu")));
        QVERIFY(!readJson(students + QStringLiteral("/va.kpg")).contains("reference"));
        // The editor still holds the solution: saving does not change the project.
        QCOMPARE(f.wb.document().project().sourceText, QString::fromUtf8(kAnswer));

        // A project that names its reference keeps its source as the starter: ticking the box is refused, named.
        Project named = f.wb.document().project();
        named.reference = ReferenceSpec{QStringLiteral("solution.cu"), QString::fromUtf8(kAnswer), {}, {}};
        t.replace = true;
        const Result<SavedExercise> refused = saveExercise(named, t);
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.startsWith(
                     QLatin1String("the project already names its reference kernel ('solution.cu')")),
                 qPrintable(refused.error().message));
        // A source without a kernel body has nothing to empty.
        Project none = f.wb.document().project();
        none.sourceText = QStringLiteral("__device__ float twice(float v) { return 2 * v; }\n");
        const Result<SavedExercise> empty = saveExercise(none, t);
        QVERIFY(!empty);
        QVERIFY2(empty.error().message.contains(QLatin1String("no __global__ kernel with a body")),
                 qPrintable(empty.error().message));
    }

    void existingExerciseIsReplacedOnlyWhenAsked()
    {
        QTemporaryDir dir;
        PanelFixture f;
        KP_VERIFY_RESULT(f.wb.document().openProject(kVectorAdd));
        ExerciseTarget t;
        t.labDir = dir.filePath(QStringLiteral("lab"));
        t.name = QStringLiteral("va");
        t.points = 5;
        const Result<SavedExercise> first = saveExercise(f.wb.document().project(), t);
        QVERIFY2(first, first ? "" : qPrintable(first.error().message));
        QVERIFY(exerciseExists(t.labDir, t.name));
        const Result<SavedExercise> again = saveExercise(f.wb.document().project(), t);
        QVERIFY(!again);
        QVERIFY2(again.error().message.contains(QLatin1String("already exists")), qPrintable(again.error().message));
        t.replace = true;
        t.points = 7;
        const Result<SavedExercise> replaced = saveExercise(f.wb.document().project(), t);
        QVERIFY2(replaced, replaced ? "" : qPrintable(replaced.error().message));
        QCOMPARE(readJson(t.labDir + QStringLiteral("/grading.json"))
                     .value("exercises")
                     .toObject()
                     .value("va")
                     .toObject()
                     .value("points")
                     .toDouble(),
                 7.0);
        // A folder of other files under that name is never removed.
        QVERIFY(writeText(t.labDir + QStringLiteral("/notes/todo.txt"), "mine"));
        t.name = QStringLiteral("notes");
        const Result<SavedExercise> notes = saveExercise(f.wb.document().project(), t);
        QVERIFY(!notes);
        QVERIFY2(notes.error().message.contains(QLatin1String("not the exercise notes")),
                 qPrintable(notes.error().message));
        QCOMPARE(readText(t.labDir + QStringLiteral("/notes/todo.txt")), QByteArray("mine"));
    }
};

QTEST_MAIN(TestProjectPanel)
#include "tst_projectpanel.moc"
