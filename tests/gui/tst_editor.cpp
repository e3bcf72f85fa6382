// Typing in the kernel editor as a user types: Enter after plain C's
// braceless if/for/else indents as a C programmer expects, and Undo takes
// back the last word typed, not everything since the typing began.

#include "editor/codeeditor.h"

#include <QtTest>

using namespace Kp;

namespace {

/** Types text into the editor key by key; '\n' is the Return key. */
void type(CodeEditor *e, const QString &text)
{
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (qsizetype i = 0; i < lines.size(); ++i) {
        if (i > 0) {
            QTest::keyClick(e, Qt::Key_Return);
        }
        QTest::keyClicks(e, lines[i]);
    }
}

} // namespace

class TestEditor : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void autoIndent_data()
    {
        QTest::addColumn<QString>("typed");
        QTest::addColumn<QString>("expected");
        QTest::newRow("braceless if with its statement") << "if (i >= n) return;\nx = 1;"
                                                         << "if (i >= n) return;\nx = 1;";
        QTest::newRow("braceless if inside a block") << "{\nif (i >= n) return;\ny[i] = 0;"
                                                     << "{\n    if (i >= n) return;\n    y[i] = 0;";
        QTest::newRow("braceless for, then back out") << "for (int i = 0; i < n; ++i)\ny[i] = 0;\nz = 1;"
                                                      << "for (int i = 0; i < n; ++i)\n    y[i] = 0;\nz = 1;";
        QTest::newRow("braceless if and else") << "if (a)\nb();\nelse\nc();\nd();"
                                               << "if (a)\n    b();\nelse\n    c();\nd();";
        QTest::newRow("while with a comment") << "while (k < 4) // spin\nk++;\nm = k;"
                                              << "while (k < 4) // spin\n    k++;\nm = k;";
        QTest::newRow("braces still indent") << "if (a) {\nb();"
                                             << "if (a) {\n    b();";
        QTest::newRow("a call is no header") << "foo(a);\nbar(b);"
                                             << "foo(a);\nbar(b);";
    }

    void autoIndent()
    {
        QFETCH(QString, typed);
        QFETCH(QString, expected);
        CodeEditor e;
        e.show();
        QVERIFY(QTest::qWaitForWindowExposed(&e));
        e.setFocus();
        type(&e, typed);
        QCOMPARE(e.text(), expected);
    }

    void undoTakesBackAWord()
    {
        CodeEditor e;
        e.show();
        QVERIFY(QTest::qWaitForWindowExposed(&e));
        e.setFocus();
        type(&e, "int a = 1;\nfloat b");
        QTest::keyClick(&e, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(e.text(), QString("int a = 1;\nfloat "));
        QTest::keyClick(&e, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(e.text(), QString("int a = 1;\n"));
        QTest::keyClick(&e, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(e.text(), QString("int a = 1;"));
        // Redo gives the words back in order.
        QTest::keyClick(&e, Qt::Key_Y, Qt::ControlModifier);
        QTest::keyClick(&e, Qt::Key_Y, Qt::ControlModifier);
        QCOMPARE(e.text(), QString("int a = 1;\nfloat "));
    }
};

QTEST_MAIN(TestEditor)
#include "tst_editor.moc"
