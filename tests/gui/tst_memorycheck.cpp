// Run > Check memory's display, offscreen and without a GPU: recorded
// compute-sanitizer reports (tests/data/sanitizer) become annotations and
// markers on the right editor lines, Problems entries, and a Log summary
// with counts per kind and the first N of each.

#include "core/safefile.h"
#include "editor/codeeditor.h"
#include "panels/memory/memorypanel.h"
#include "panels/problems/problemspanel.h"
#include "workbench/memorycheck.h"

#include <QLabel>
#include <QSignalSpy>
#include <QTreeWidget>
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

    void findingsWithoutALineAreOneWarningEach()
    {
        // initcheck reports a download of a half-written buffer as dozens of host accesses without a line.
        Sanitizer::Report r;
        Sanitizer::Finding host;
        host.kind = Sanitizer::Finding::Kind::Other;
        host.text = QStringLiteral("Host API uninitialized memory access");
        for (int i = 0; i < 63; ++i) {
            r.findings << host;
        }
        const QList<Diagnostic> d = sanitizerDiagnostics(r, QStringLiteral("k.cu"));
        QCOMPARE(d.size(), 1);
        QCOMPARE(d.first().message,
                 QStringLiteral("compute-sanitizer: Host API uninitialized memory access (63 times)"));
        QCOMPARE(d.first().severity, Diagnostic::Severity::Warning);
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
    void panelListsTheFirstFewOfEachKindAndShowsAll()
    {
        // 25 invalid writes (the recording's four, repeated) and the launch failure's API records.
        Sanitizer::Report r = report(QStringLiteral("memcheck_oob.xml"));
        Sanitizer::mapAddresses(r, {DeviceAllocation{QStringLiteral("c"), 0x7f0acb802000ull, 4000, 0}},
                                {{QStringLiteral("c"), 4}});
        QList<Sanitizer::Finding> writes;
        for (const Sanitizer::Finding &f : r.findings) {
            if (f.kind == Sanitizer::Finding::Kind::InvalidAccess) {
                writes << f;
            }
        }
        QCOMPARE(writes.size(), 4);
        while (r.findings.size() < 40) {
            r.findings << writes[r.findings.size() % 4];
        }
        int invalid = 0;
        for (const Sanitizer::Finding &f : r.findings) {
            invalid += f.kind == Sanitizer::Finding::Kind::InvalidAccess;
        }
        SanitizedRun run;
        run.report = r;
        MemoryPanel panel;
        panel.resize(700, 500);
        panel.setCheck(run, Sanitizer::Tool::Memcheck);
        QVERIFY2(panel.summary()->text().contains(QStringLiteral("%1 invalid accesses").arg(invalid)),
                 qPrintable(panel.summary()->text()));
        QTreeWidgetItem *top = nullptr;
        for (int i = 0; i < panel.tree()->topLevelItemCount(); ++i) {
            if (panel.tree()->topLevelItem(i)->text(0).startsWith(QStringLiteral("invalid accesses"))) {
                top = panel.tree()->topLevelItem(i);
            }
        }
        QVERIFY(top);
        QCOMPARE(top->text(0), QStringLiteral("invalid accesses: %1").arg(invalid));
        QCOMPARE(top->childCount(), MemoryPanel::kFirstN + 1);
        QTreeWidgetItem *more = top->child(MemoryPanel::kFirstN);
        QCOMPARE(more->text(0),
                 QStringLiteral("Show all %1 (%2 more)").arg(invalid).arg(invalid - MemoryPanel::kFirstN));

        // A finding goes to its line and the element it touched.
        QSignalSpy lines(&panel, &MemoryPanel::sourceLineActivated);
        QSignalSpy cells(&panel, &MemoryPanel::elementActivated);
        Q_EMIT panel.tree()->itemActivated(top->child(0), 0);
        QCOMPARE(lines.size(), 1);
        QCOMPARE(lines.first().at(0).toInt(), 13);
        QCOMPARE(cells.size(), 1);
        QCOMPARE(cells.first().at(0).toString(), QStringLiteral("c"));
        QVERIFY(cells.first().at(1).toLongLong() >= 1000); // past the end: the inspector clamps to the last cell

        // "Show all" lists every one.
        Q_EMIT panel.tree()->itemActivated(more, 0);
        top = nullptr;
        for (int i = 0; i < panel.tree()->topLevelItemCount(); ++i) {
            if (panel.tree()->topLevelItem(i)->text(0).startsWith(QStringLiteral("invalid accesses"))) {
                top = panel.tree()->topLevelItem(i);
            }
        }
        QVERIFY(top);
        QCOMPARE(top->childCount(), invalid);
        QVERIFY(panel.sharedGrid()->isHidden() || !panel.sharedGrid()->isVisibleTo(&panel));
    }

    void hazardsFillTheSharedMemoryGrid()
    {
        Sanitizer::Report r = report(QStringLiteral("racecheck_hazard_race.xml"));
        // The recording's addresses 0x500..0x502 are 0x100.. into the block's memory past the reserved 1 KiB.
        Sanitizer::mapAddresses(r, {}, {}, 1024);
        r.findings[2].address = 0x400 + 4 * 37; // one hazard on another word: float index 37, bank 5
        Sanitizer::mapAddresses(r, {}, {}, 1024);
        SanitizedRun run;
        run.report = r;
        MemoryPanel panel;
        panel.resize(800, 600);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.setCheck(run, Sanitizer::Tool::Racecheck);
        SharedMemoryGrid *grid = panel.sharedGrid();
        QVERIFY(grid->isVisible());
        QCOMPARE(grid->counts().value(64), 2); // bytes 256 and 257
        QCOMPARE(grid->counts().value(37), 1);
        QCOMPARE(grid->counts().size(), 2);
        QCOMPARE(grid->words(), qint64(96)); // whole rows of 32 banks up to word 64
        // The busiest word is chosen first; its two hazards (one per byte) are one pair of accesses.
        QCOMPARE(grid->selectedWord(), qint64(64));
        QCOMPARE(panel.pairs()->topLevelItemCount(), 1);
        QVERIFY(panel.pairs()->topLevelItem(0)->text(1).contains(QStringLiteral("(64,0,0) write")));
        QCOMPARE(panel.pairs()->topLevelItem(0)->text(4), QStringLiteral("2"));
        // A click on word 37 lists its one pair.
        const QPoint at = grid->cellRect(37).center();
        QCOMPARE(grid->wordAt(at), qint64(37));
        QTest::mouseClick(grid, Qt::LeftButton, {}, at);
        QCOMPARE(grid->selectedWord(), qint64(37));
        QCOMPARE(panel.pairs()->topLevelItemCount(), 1);
        QCOMPARE(grid->wordAt(QPoint(1, 1)), qint64(-1)); // the offsets' label column
        // The summary names the offset into the block's memory, not the raw shared address.
        QVERIFY(r.findings[0].summary().contains(QStringLiteral("offset 256")));
    }

    void guardHitsAreListedAndGoToTheBuffersEdge()
    {
        GuardViolation v;
        v.step = 1;
        v.kernel = QStringLiteral("shifted_copy");
        v.buffer = QStringLiteral("c");
        v.side = GuardViolation::Side::After;
        v.bufferBytes = 4000;
        v.elementBytes = 4;
        v.firstByte = 4000;
        v.lastByte = 4095;
        v.changedBytes = 96;
        MemoryPanel panel;
        panel.setGuardViolations({v});
        QCOMPARE(panel.tree()->topLevelItemCount(), 1);
        QTreeWidgetItem *item = panel.tree()->topLevelItem(0)->child(0);
        QVERIFY2(item->text(0).contains(QStringLiteral("step 2 (shifted_copy) wrote past the end of `c`: 96 bytes, "
                                                       "elements 1000..1023 of the guard")),
                 qPrintable(item->text(0)));
        QSignalSpy cells(&panel, &MemoryPanel::elementActivated);
        Q_EMIT panel.tree()->itemActivated(item, 0);
        QCOMPARE(cells.size(), 1);
        QCOMPARE(cells.first().at(1).toLongLong(), 999);
        panel.clear();
        QCOMPARE(panel.tree()->topLevelItemCount(), 0);
    }
};

QTEST_MAIN(TestMemoryCheck)
#include "tst_memorycheck.moc"
