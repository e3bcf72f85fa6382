// Line diffs for the Compare panel (engine/compare/linediff): edit scripts
// on hand-made texts, and unified-diff text as `diff -u` writes it.

#include "compare/linediff.h"

#include <QtTest>

using namespace Kp;

namespace {

QString script(const QList<DiffLine> &d)
{
    QString s;
    for (const DiffLine &l : d) {
        s += l.kind == DiffLine::Kind::Same    ? QLatin1Char('=')
             : l.kind == DiffLine::Kind::Added ? QLatin1Char('+')
                                               : QLatin1Char('-');
        s += l.text;
        s += QLatin1Char(' ');
    }
    return s.trimmed();
}

} // namespace

class TestLineDiff : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void scripts_data()
    {
        QTest::addColumn<QStringList>("a");
        QTest::addColumn<QStringList>("b");
        QTest::addColumn<QString>("expected");
        QTest::newRow("same") << QStringList{"x", "y"} << QStringList{"x", "y"} << "=x =y";
        QTest::newRow("one line changed") << QStringList{"a", "b", "c"} << QStringList{"a", "B", "c"} << "=a -b +B =c";
        QTest::newRow("added at the end") << QStringList{"a"} << QStringList{"a", "b"} << "=a +b";
        QTest::newRow("removed at the start") << QStringList{"a", "b"} << QStringList{"b"} << "-a =b";
        QTest::newRow("both empty") << QStringList{} << QStringList{} << "";
        // The longest common subsequence a c e: b and d removed, x and y added.
        QTest::newRow("interleaved") << QStringList{"a", "b", "c", "d", "e"} << QStringList{"a", "x", "c", "y", "e"}
                                     << "=a -b +x =c -d +y =e";
    }
    void scripts()
    {
        QFETCH(QStringList, a);
        QFETCH(QStringList, b);
        QFETCH(QString, expected);
        const QList<DiffLine> d = diffLines(a, b);
        QCOMPARE(script(d), expected);
        // Line numbers count each side's own lines.
        for (const DiffLine &l : d) {
            if (l.kind != DiffLine::Kind::Added) {
                QCOMPARE(a[l.lineA - 1], l.text);
            }
            if (l.kind != DiffLine::Kind::Removed) {
                QCOMPARE(b[l.lineB - 1], l.text);
            }
        }
    }

    void tooLargeFallsBackToBlocks()
    {
        QStringList a{"head"};
        QStringList b{"head"};
        for (int i = 0; i < 50; ++i) {
            a << QString("a%1").arg(i);
            b << QString("b%1").arg(i);
        }
        const QList<DiffLine> d = diffLines(a, b, 100);
        QCOMPARE(d.size(), 101);
        QCOMPARE(d[1].kind, DiffLine::Kind::Removed);
        QCOMPARE(d[51].kind, DiffLine::Kind::Added);
    }

    void unified()
    {
        QStringList a;
        for (int i = 1; i <= 20; ++i) {
            a << QString("line %1").arg(i);
        }
        QStringList b = a;
        b[9] = "line ten";
        const QString u = unifiedDiff(diffLines(a, b), "A", "B");
        QCOMPARE(u, QString("--- A\n+++ B\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n line 11\n"
                            " line 12\n line 13\n"));
        QVERIFY(unifiedDiff(diffLines(a, a), "A", "B").isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestLineDiff)
#include "tst_linediff.moc"
