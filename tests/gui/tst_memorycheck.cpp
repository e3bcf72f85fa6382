// Run > Check memory's display, offscreen and without a GPU: recorded
// compute-sanitizer reports (tests/data/sanitizer) become annotations and
// markers on the right editor lines, Problems entries, and a Log summary
// with counts per kind and the first N of each.

#include "core/safefile.h"
#include "editor/codeeditor.h"
#include "memorycheck.h"
#include "problemspanel.h"

#include <QtTest>

using namespace Kp;

namespace {

Sanitizer::Report report(const QString &name)
{
    const auto bytes = readRegularFile(QStringLiteral(KPG_SOURCE_DIR "/tests/data/sanitizer/") + name, 1 << 20,
                                       QStringLiteral("fixture"));
    if (!bytes) {
        qFatal("%s", qPrintable(bytes.error().message));
    }
    const Result<Sanitizer::Report> r = Sanitizer::parseXml(*bytes);
    if (!r) {
        qFatal("%s", qPrintable(r.error().message));
    }
    return *r;
}

QString lines(int n)
{
    QString text;
    for (int i = 1; i <= n; ++i) {
        text += QStringLiteral("// line %1\n").arg(i);
    }
    return text;
}

} // namespace

class TestMemoryCheck : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void memcheckFindingsMarkTheirLine()
    {
        Sanitizer::Report r = report(QStringLiteral("memcheck_oob.xml"));
        Sanitizer::mapAddresses(r, {DeviceAllocation{QStringLiteral("c"), 0x7f0acb802000ull, 4000, 0}},
                                {{QStringLiteral("c"), 4}});
        const QList<Diagnostic> d = sanitizerDiagnostics(r, QStringLiteral("oob.cu"));
        // Four invalid writes on line 13: one diagnostic that counts the rest; the launch failure has no line.
        QCOMPARE(d.first().line, 13);
        QVERIFY2(d.first().message.contains(QStringLiteral("invalid write of 4 bytes by thread (224,0,0) block "
                                                           "(3,0,0), 64 bytes past the end of `c` (element 1016)")),
                 qPrintable(d.first().message));
        QVERIFY(d.first().message.contains(QStringLiteral("and 3 more on this line")));

        CodeEditor editor;
        editor.setText(lines(20));
        editor.setDiagnostics(d, QStringLiteral("oob.cu"));
        QCOMPARE(editor.markedLines(Diagnostic::Severity::Error), QList<int>{12});
        QVERIFY(editor.annotationAt(12).contains(QStringLiteral("compute-sanitizer: invalid write")));
        QVERIFY(editor.annotationAt(11).isEmpty());

        ProblemsPanel problems;
        problems.setDiagnostics(d, QStringLiteral("oob.cu"));
        QVERIFY(problems.topLevelItemCount() >= 1);

        // A report about another file marks nothing here.
        const QList<Diagnostic> other = sanitizerDiagnostics(r, QStringLiteral("other.cu"));
        editor.setDiagnostics(other, QStringLiteral("other.cu"));
        QVERIFY(editor.markedLines(Diagnostic::Severity::Error).isEmpty());
    }

    void masksMarkTheTouchedCells()
    {
        Sanitizer::Report r = report(QStringLiteral("memcheck_oob.xml"));
        // c placed so that the recorded writes fall inside it: elements 992, 993, 994, 991.
        Sanitizer::mapAddresses(r, {DeviceAllocation{QStringLiteral("c"), 0x7f0acb802fe0ull - 992 * 4, 4000, 0}},
                                {{QStringLiteral("c"), 4}});
        const QHash<QString, QByteArray> m = sanitizerMasks(r, {{QStringLiteral("c"), 1000}});
        QCOMPARE(m.size(), 1);
        const QByteArray c = m.value(QStringLiteral("c"));
        QCOMPARE(c.size(), 1000);
        QCOMPARE(c.count('\1'), 4);
        for (int e : {991, 992, 993, 994}) {
            QCOMPARE(int(c[e]), 1);
        }
        // Past the end: the last element stands for it.
        Sanitizer::Report past = report(QStringLiteral("memcheck_oob.xml"));
        Sanitizer::mapAddresses(past, {DeviceAllocation{QStringLiteral("c"), 0x7f0acb802000ull, 4000, 0}},
                                {{QStringLiteral("c"), 4}});
        const QByteArray p = sanitizerMasks(past, {{QStringLiteral("c"), 1000}}).value(QStringLiteral("c"));
        QCOMPARE(p.count('\1'), 1);
        QCOMPARE(int(p[999]), 1);
    }

    void raceJoinsItsLines()
    {
        Sanitizer::Report r = report(QStringLiteral("racecheck_default_race.xml"));
        // The recording's race is within one line; move its write to line 14 to see the join.
        r.findings.first().other.line = 14;
        const QList<Diagnostic> d = sanitizerDiagnostics(r, QStringLiteral("race.cu"));
        QCOMPARE(d.size(), 2);
        QCOMPARE(d[0].line, 11);
        QCOMPARE(d[1].line, 14);
        QVERIFY2(d[1].message.contains(QStringLiteral("races with the read at line 11")), qPrintable(d[1].message));
        CodeEditor editor;
        editor.setText(lines(20));
        editor.setDiagnostics(d, QStringLiteral("race.cu"));
        QCOMPARE(editor.markedLines(Diagnostic::Severity::Error), (QList<int>{10, 13}));
    }

    void logSummaryCountsAndShowsTheFirstFew()
    {
        SanitizedRun run;
        run.report = report(QStringLiteral("racecheck_hazard_race.xml"));
        const QStringList l = sanitizerLogLines(run, Sanitizer::Tool::Racecheck, 2);
        QCOMPARE(l.first(), QStringLiteral("Check memory (racecheck): 3 hazards"));
        QCOMPARE(l.size(), 1 + 2 + 1);
        QVERIFY(l[1].startsWith(QStringLiteral("  race.cu:11: RAW hazard on shared memory offset 1280")));
        QVERIFY(l.last().contains(QStringLiteral("and 1 more hazards")));

        SanitizedRun clean;
        clean.report = Sanitizer::Report{};
        QCOMPARE(sanitizerLogLines(clean, Sanitizer::Tool::Memcheck),
                 QStringList{QStringLiteral("Check memory (memcheck): no findings")});
        SanitizedRun broken;
        broken.reportError = Error{QStringLiteral("compute-sanitizer"),
                                   Error::Code::BadInput,
                                   {},
                                   QStringLiteral("the compute-sanitizer report ends in the middle")};
        QVERIFY(sanitizerLogLines(broken, Sanitizer::Tool::Memcheck)
                    .first()
                    .contains(QStringLiteral("ends in the middle")));
    }
};

QTEST_MAIN(TestMemoryCheck)
#include "tst_memorycheck.moc"
