// The editor's memory-access heat margin (editor/accessheat), offscreen on a
// real CodeEditor: reports built from synthetic warp records put a marker of
// the right class on the right lines (and none on a header's lines or on
// lines without memory access), the margin's tooltip gives the readings,
// editing the source greys the markers and undoing it brings them back, a
// new analysis or "Show in editor" off clears them, and the diagnostics'
// margin never shows them.

#include "editor/accessheat.h"
#include "editor/codeeditor.h"
#include "panelfixture.h"
#include "panels/access/accesspanel.h"
#include "recordedaccess.h"
#include "screenshot.h"
#include "workbench/accessmap.h"

#include <QDir>
#include <QFile>
#include <QHelpEvent>
#include <QTableWidget>
#include <QToolTip>

#include <optional>

using namespace Kp;
using KpTest::HeatLine;
using KpTest::screenshot;

namespace {

const QString kSource = QStringLiteral("// heat\n"
                                       "float a = in[i];\n"
                                       "float b = in[i + 1];\n"
                                       "float c = in[2 * i];\n"
                                       "float d = in[32 * i];\n"
                                       "float e = tile[2 * i];\n"
                                       "float f = tile[32 * i];\n"
                                       "int g = 0;\n"
                                       "int h = 1;\n");

/** One warp per line: coalesced, misaligned, stride 2 and 32 floats, shared stride 2 and 32 words; a header's line 9.
 */
std::shared_ptr<const AccessReport> sampleReport()
{
    const QString own;
    return KpTest::heatReport(kSource, {HeatLine{2, 0, 4, false, own}, HeatLine{3, 4, 4, false, own},
                                        HeatLine{4, 0, 8, false, own}, HeatLine{5, 0, 128, false, own},
                                        HeatLine{6, 0, 8, true, own}, HeatLine{7, 0, 128, true, own},
                                        HeatLine{9, 0, 128, false, QStringLiteral("/x/inc.cuh")}});
}

QString heatName(std::optional<AccessHeat> h)
{
    return h ? accessHeatName(*h) : QStringLiteral("none");
}

/** The middle of the heat margin at line (1-based), in the editor's viewport. */
QPoint marginPoint(CodeEditor &editor, int line)
{
    int x = 0;
    for (int m = 0; m < AccessHeatMargin::kMargin; ++m) {
        x += editor.marginWidth(m);
    }
    x += editor.marginWidth(AccessHeatMargin::kMargin) / 2;
    const long pos = editor.SendScintilla(QsciScintilla::SCI_POSITIONFROMLINE, line - 1);
    const int y = int(editor.SendScintilla(QsciScintilla::SCI_POINTYFROMPOSITION, 0, pos)) +
                  int(editor.SendScintilla(QsciScintilla::SCI_TEXTHEIGHT, line - 1)) / 2;
    return {x, y};
}

} // namespace

class TestAccessHeat : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void marksEachLineByItsCost_data()
    {
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("heat");
        QTest::newRow("coalesced load: ideal") << 2 << "ideal";
        QTest::newRow("misaligned load, 5 sectors of 4: mild") << 3 << "under 2x the ideal";
        QTest::newRow("stride of 2 floats, 8 sectors of 4: costly") << 4 << "2 to 4x the ideal";
        QTest::newRow("stride of 32 floats, 32 sectors of 4: severe") << 5 << "over 4x the ideal";
        QTest::newRow("2-way bank conflict: costly") << 6 << "2 to 4x the ideal";
        QTest::newRow("32-way bank conflict: severe") << 7 << "over 4x the ideal";
        QTest::newRow("no memory access: no marker") << 8 << "none";
        QTest::newRow("a header's line 9 is not this file's") << 9 << "none";
        QTest::newRow("the comment") << 1 << "none";
    }
    void marksEachLineByItsCost()
    {
        QFETCH(int, line);
        QFETCH(QString, heat);
        CodeEditor editor;
        editor.setText(kSource);
        AccessHeatMargin margin(&editor);
        margin.setReport(sampleReport());
        QVERIFY(!margin.isStale());
        QCOMPARE(heatName(margin.heatAt(line)), heat);
        QVERIFY(editor.marginWidth(AccessHeatMargin::kMargin) > 0);
        // The marker Scintilla holds is the class's own.
        const unsigned markers = editor.markersAtLine(line - 1);
        QCOMPARE(markers & ~(0x1fu << AccessHeatMargin::kFirstMarker), 0u);
        if (heat == QLatin1String("none")) {
            QCOMPARE(markers, 0u);
        } else {
            QCOMPARE(markers, 1u << (AccessHeatMargin::kFirstMarker + int(*margin.heatAt(line))));
        }
    }

    void linesOfEachClass()
    {
        CodeEditor editor;
        editor.setText(kSource);
        AccessHeatMargin margin(&editor);
        margin.setReport(sampleReport());
        QCOMPARE(margin.linesWith(AccessHeat::Ideal), QList<int>{2});
        QCOMPARE(margin.linesWith(AccessHeat::Mild), QList<int>{3});
        QCOMPARE(margin.linesWith(AccessHeat::Costly), (QList<int>{4, 6}));
        QCOMPARE(margin.linesWith(AccessHeat::Severe), (QList<int>{5, 7}));
        QVERIFY(margin.staleLines().isEmpty());
        editor.resize(400, 200);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        screenshot(&editor, QStringLiteral("access-heat-classes"));
    }

    void toolTipGivesTheReading_data()
    {
        QTest::addColumn<int>("line");
        QTest::addColumn<QStringList>("parts");
        QTest::newRow("column access")
            << 5
            << QStringList{"Line 5, memory access: over 4x the ideal",
                           "global load (float, 1 request): stride of 32 floats between neighbouring threads: 32 "
                           "sectors per request, ideal 4"};
        QTest::newRow("bank conflict") << 7
                                       << QStringList{"Line 7, memory access: over 4x the ideal",
                                                      "shared load (float, 1 request): 32-way bank conflict: 32 "
                                                      "wavefronts per request, ideal 1"};
        QTest::newRow("coalesced") << 2
                                   << QStringList{"Line 2, memory access: ideal",
                                                  "global load (float, 1 request): coalesced: 4 sectors per "
                                                  "request, ideal 4"};
        QTest::newRow("no marker, no tip") << 8 << QStringList{};
    }
    void toolTipGivesTheReading()
    {
        QFETCH(int, line);
        QFETCH(QStringList, parts);
        CodeEditor editor;
        editor.resize(600, 400);
        editor.setText(kSource);
        AccessHeatMargin margin(&editor);
        margin.setReport(sampleReport());
        const QString tip = margin.toolTipAt(line);
        if (parts.isEmpty()) {
            QVERIFY2(tip.isEmpty(), qPrintable(tip));
            return;
        }
        for (const QString &p : parts) {
            QVERIFY2(tip.contains(p), qPrintable(tip));
        }
        // The same text as a real tooltip: a help event over the heat margin at that line.
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        const QPoint at = marginPoint(editor, line);
        QHelpEvent help(QEvent::ToolTip, at, editor.viewport()->mapToGlobal(at));
        QVERIFY(QCoreApplication::sendEvent(editor.viewport(), &help));
        QTRY_COMPARE(QToolTip::text(), tip);
        QToolTip::hideText();
    }

    // Editing after the analysis: the line mapping is no longer the
    // analysis', so every marker turns grey where its line went; undoing the
    // edit brings the colours back.
    void editingMakesTheMarkersStale_data()
    {
        QTest::addColumn<int>("line"); // where to insert, 0-based
        QTest::addColumn<QString>("text");
        QTest::addColumn<QList<int>>("stale");
        QTest::newRow("typing on a marked line") << 3 << "x" << QList<int>{2, 3, 4, 5, 6, 7};
        QTest::newRow("a line inserted above them") << 0 << "\n" << QList<int>{3, 4, 5, 6, 7, 8};
        QTest::newRow("a line inserted below them") << 8 << "\n" << QList<int>{2, 3, 4, 5, 6, 7};
    }
    void editingMakesTheMarkersStale()
    {
        QFETCH(int, line);
        QFETCH(QString, text);
        QFETCH(QList<int>, stale);
        CodeEditor editor;
        editor.setText(kSource);
        AccessHeatMargin margin(&editor);
        margin.setReport(sampleReport());
        editor.insertAt(text, line, 0);
        QVERIFY(margin.isStale());
        QCOMPARE(margin.staleLines(), stale);
        for (AccessHeat h : {AccessHeat::Ideal, AccessHeat::Mild, AccessHeat::Costly, AccessHeat::Severe}) {
            QVERIFY(margin.linesWith(h).isEmpty());
        }
        QVERIFY(!margin.heatAt(stale.first()));
        QVERIFY2(margin.toolTipAt(stale.first()).startsWith(QLatin1String("Stale: the source changed")),
                 qPrintable(margin.toolTipAt(stale.first())));
        editor.undo();
        QCOMPARE(editor.text(), kSource);
        QVERIFY(!margin.isStale());
        QVERIFY(margin.staleLines().isEmpty());
        QCOMPARE(margin.linesWith(AccessHeat::Severe), (QList<int>{5, 7}));
    }

    // The editor counts UTF-8 bytes: a source with other letters is fresh, and fresh again after an undo.
    void aSourceBeyondAscii()
    {
        const QString source = QStringLiteral("// Größe, 幅\n") + kSource.section(QLatin1Char('\n'), 1);
        CodeEditor editor;
        editor.setText(source);
        AccessHeatMargin margin(&editor);
        margin.setReport(KpTest::heatReport(source, {HeatLine{5, 0, 128, false, QString()}}));
        QCOMPARE(margin.linesWith(AccessHeat::Severe), QList<int>{5});
        editor.insertAt(QStringLiteral("ä"), 4, 0);
        QCOMPARE(margin.staleLines(), QList<int>{5});
        editor.undo();
        QCOMPARE(margin.linesWith(AccessHeat::Severe), QList<int>{5});
    }

    // A report that arrives after the text moved on is stale from the start.
    void aReportOfOtherTextIsStale()
    {
        CodeEditor editor;
        editor.setText(QStringLiteral("// edited while it ran\n") + kSource);
        AccessHeatMargin margin(&editor);
        margin.setReport(sampleReport());
        QVERIFY(margin.isStale());
        QCOMPARE(margin.staleLines(), (QList<int>{2, 3, 4, 5, 6, 7}));
    }

    // The window's margin follows the access map: a new analysis clears it
    // (even one that fails), and the panel's "Show in editor" hides it.
    void followsTheAccessMap()
    {
        std::optional<AccessOutcome> outcome;
        KpTest::PanelFixture f;
        CodeEditor editor;
        editor.setText(kSource);
        AccessHeatMargin margin(&editor, f.wb);
        AccessPanel panel(f.wb);
        QVERIFY(margin.linesWith(AccessHeat::Severe).isEmpty());
        f.wb.access().setReport(sampleReport());
        QCOMPARE(margin.linesWith(AccessHeat::Severe), (QList<int>{5, 7}));
        QVERIFY2(
            margin.toolTipAt(5).endsWith(QLatin1String("Click to see its instructions in the Memory Access panel.")),
            qPrintable(margin.toolTipAt(5)));

        // A click on a marker selects the line's rows in the panel and brings it forward.
        QList<PanelId> raised;
        connect(&f.wb, &Workbench::attention, this, [&raised](PanelId p, Attention) { raised << p; });
        editor.resize(600, 300);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        QTest::mouseClick(editor.viewport(), Qt::LeftButton, Qt::NoModifier, marginPoint(editor, 4));
        QCOMPARE(raised, QList<PanelId>{PanelId::MemoryAccess});
        auto *table = panel.findChild<QTableWidget *>(QStringLiteral("accessTable"));
        const QModelIndexList rows = table->selectionModel()->selectedRows();
        QCOMPARE(rows.size(), 1);
        QCOMPARE(table->item(rows.first().row(), 0)->text(), QStringLiteral("4"));
        QTest::mouseClick(editor.viewport(), Qt::LeftButton, Qt::NoModifier, marginPoint(editor, 8));
        QCOMPARE(raised.size(), 1); // line 8 has no marker
        disconnect(&f.wb, &Workbench::attention, this, nullptr);

        f.wb.access().setShowInEditor(false);
        QCOMPARE(editor.marginWidth(AccessHeatMargin::kMargin), 0);
        QVERIFY(margin.linesWith(AccessHeat::Severe).isEmpty());
        f.wb.access().setShowInEditor(true);
        QCOMPARE(margin.linesWith(AccessHeat::Severe), (QList<int>{5, 7}));

        connect(&f.wb.access(), &AccessMap::finished, this, [&outcome](const AccessOutcome &o) { outcome = o; });
        QVERIFY(f.wb.access().start(Project{}, AccessRunOptions{}));
        QVERIFY(!f.wb.access().last());
        QCOMPARE(editor.marginWidth(AccessHeatMargin::kMargin), 0);
        QCOMPARE(
            int(editor.SendScintilla(QsciScintilla::SCI_MARKERNEXT, 0, long(0x1f << AccessHeatMargin::kFirstMarker))),
            -1);
        QTRY_VERIFY_WITH_TIMEOUT(outcome.has_value(), 120000);
        QVERIFY(!outcome->report); // an empty project has no step to record
        QVERIFY(margin.linesWith(AccessHeat::Severe).isEmpty());
    }

    // The diagnostics' margin keeps showing errors and never the heat.
    void diagnosticsMarginShowsNoHeat()
    {
        CodeEditor editor;
        editor.setText(kSource);
        AccessHeatMargin margin(&editor);
        margin.setReport(sampleReport());
        const int heatMask = 0x1f << AccessHeatMargin::kFirstMarker;
        QCOMPARE(editor.marginMarkerMask(1) & heatMask, 0);
        QCOMPARE(editor.marginMarkerMask(AccessHeatMargin::kMargin), heatMask);
        Diagnostic d;
        d.file = QStringLiteral("k.cu");
        d.line = 5;
        d.severity = Diagnostic::Severity::Error;
        d.message = QStringLiteral("identifier \"in\" is undefined");
        editor.setDiagnostics({d}, QStringLiteral("k.cu"));
        QCOMPARE(editor.markedLines(Diagnostic::Severity::Error), QList<int>{4});
        QCOMPARE(margin.linesWith(AccessHeat::Severe), (QList<int>{5, 7}));
    }

    // For looking at (KPG_TEST_SCREENSHOTS): transpose_naive's source with a
    // report of its launch's shape (coalesced load, column store 600 floats
    // apart), and the panel beside it.
    void screenshotOfTheHeat()
    {
        QFile file(QStringLiteral(":/presets/transpose_naive/transpose_naive.cu"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString source = QString::fromUtf8(file.readAll());
        const int line = int(source.left(source.indexOf(QLatin1String("out[x * height + y]"))).count(u'\n')) + 1;
        QVERIFY(line > 1);
        auto report = std::make_shared<AccessReport>(*KpTest::heatReport(source, {}));
        report->sourceName = QStringLiteral("transpose_naive.cu");
        const QString path = QStringLiteral("/p/transpose_naive.cu");
        report->kernel = QStringLiteral("transpose_naive");
        report->sites = {KpTest::accessSite(0, AccessSpace::Global, AccessKind::Load, line, path),
                         KpTest::accessSite(1, AccessSpace::Global, AccessKind::Store, line, path)};
        for (quint32 w = 0; w < 8; ++w) {
            report->trace += KpTest::accessRecord(0, {0, 0, 0}, w, KpTest::kInAddress + w * 4000, 4);
            report->trace += KpTest::accessRecord(1, {0, 0, 0}, w, KpTest::kOutAddress + w * 4, 2400);
        }
        report->summary = *summarizeAccess(report->sites, report->trace, 16,
                                           {{QStringLiteral("in"), KpTest::kInAddress, 2400000, 4},
                                            {QStringLiteral("out"), KpTest::kOutAddress, 2400000, 4}});
        KpTest::PanelFixture f;
        CodeEditor editor;
        editor.resize(900, 420);
        editor.setText(source);
        AccessHeatMargin margin(&editor, f.wb);
        AccessPanel panel(f.wb);
        panel.resize(1100, 300);
        f.wb.access().setReport(report);
        QCOMPARE(margin.heatAt(line), std::optional<AccessHeat>(AccessHeat::Severe));
        QVERIFY2(margin.toolTipAt(line).contains(QLatin1String("stride of 600 floats")),
                 qPrintable(margin.toolTipAt(line)));
        editor.show();
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        screenshot(&editor, QStringLiteral("access-heat-editor"));
        screenshot(&panel, QStringLiteral("access-heat-panel"));
        editor.insertAt(QStringLiteral("\n"), line - 2, 0);
        QCOMPARE(margin.staleLines(), QList<int>{line + 1});
        screenshot(&editor, QStringLiteral("access-heat-stale"));
    }
};

QTEST_MAIN(TestAccessHeat)
#include "tst_accessheat.moc"
