// The Project dock as an instructor uses it to make an exercise without
// writing JSON: title, Markdown description with its preview, throughput,
// the checks editor (every kind with its fields, add, remove, reorder) and
// the lab fields. Each edit goes through the document: the project reader
// judges it with a .kpg file's messages, and Undo takes it back.

#include "panelfixture.h"
#include "testutil.h"

#include "check/checkjson.h"
#include "panels/project/checkseditor.h"
#include "panels/project/projectpanel.h"
#include "project/orderedjson.h"

#include <QCheckBox>
#include <QComboBox>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTextBrowser>
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
};

QTEST_MAIN(TestProjectPanel)
#include "tst_projectpanel.moc"
