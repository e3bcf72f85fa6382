// The Memory Access dock on a Workbench (no MainWindow): a recorded report
// shown costliest line first, double-click to the line, who touched a cell,
// and Analyze through the real controller, worker and compile on a machine
// without a GPU (the compile and instrumentation happen; the message says
// what is missing).

#include "access/accessrun.h"
#include "panelfixture.h"
#include "panels/access/accesspanel.h"
#include "workbench/accessmap.h"
#include "workbench/devices.h"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QTreeWidget>

#include <cstring>

using namespace Kp;

namespace {

QByteArray record(quint32 site, std::array<quint32, 3> block, quint32 warp, quint64 base, qint64 stride,
                  quint64 tag = 0)
{
    QByteArray r(AccessTraceLayout::kRecordBytes, '\0');
    const quint32 header[] = {site, 0xffffffffu, block[0], block[1], block[2], warp};
    std::memcpy(r.data(), header, sizeof header);
    for (int lane = 0; lane < 32; ++lane) {
        const quint64 a = (base + quint64(qint64(lane) * stride)) | tag;
        std::memcpy(r.data() + AccessTraceLayout::kLaneOffset + 8 * lane, &a, sizeof a);
    }
    return r;
}

AccessSite site(int id, AccessSpace space, AccessKind kind, int line)
{
    AccessSite s;
    s.id = id;
    s.space = space;
    s.kind = kind;
    s.width = 4;
    s.typeName = QStringLiteral("float");
    s.sourceLine = line;
    s.sourcePath = QStringLiteral("/x/k.cu");
    return s;
}

/** A transpose-like launch: a coalesced load on line 3, a column store on line 4, a conflicted shared read on 5. */
std::shared_ptr<const AccessReport> recordedReport()
{
    auto r = std::make_shared<AccessReport>();
    r->kernel = QStringLiteral("k");
    r->device = QStringLiteral("a GPU");
    r->block = {32, 1, 1};
    r->sourceName = QStringLiteral("k.cu");
    r->sourceText = QStringLiteral("// k\n\nfloat v = in[i];\nout[i * 1024] = v;\nfloat t = tile[i * 32];\n");
    r->sites = {site(0, AccessSpace::Global, AccessKind::Load, 3), site(1, AccessSpace::Global, AccessKind::Store, 4),
                site(2, AccessSpace::Shared, AccessKind::Load, 5)};
    const quint64 in = 0x7f0000000000ull;
    const quint64 out = 0x7f0000100000ull;
    for (quint32 b = 0; b < 2; ++b) {
        r->trace += record(0, {b, 0, 0}, 0, in + b * 128, 4);
        r->trace += record(1, {b, 0, 0}, 0, out + b * 4, 4096);
        r->trace += record(2, {b, 0, 0}, 0, 0, 128, AccessTraceLayout::kSharedTag);
    }
    const QList<TraceBuffer> buffers{{QStringLiteral("in"), in, 1 << 20, 4}, {QStringLiteral("out"), out, 1 << 20, 4}};
    r->summary = *summarizeAccess(r->sites, r->trace, 6, buffers);
    return r;
}

} // namespace

class TestAccessPanel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void showsTheCostliestLineFirst()
    {
        KpTest::PanelFixture f;
        AccessPanel panel(f.wb);
        panel.showReport(recordedReport());
        auto *table = panel.findChild<QTableWidget *>(QStringLiteral("accessTable"));
        QVERIFY(table);
        QCOMPARE(table->rowCount(), 3);
        // The column store wastes 28 sectors a request, the shared read 31 wavefronts: the read first.
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("5"));
        QVERIFY2(table->item(0, 7)->text().contains(QLatin1String("32-way bank conflict")),
                 qPrintable(table->item(0, 7)->text()));
        QCOMPARE(table->item(1, 0)->text(), QStringLiteral("4"));
        QVERIFY2(table->item(1, 7)->text().contains(QLatin1String("stride of 1024 floats")),
                 qPrintable(table->item(1, 7)->text()));
        QCOMPARE(table->item(1, 3)->text(), QStringLiteral("32"));
        QCOMPARE(table->item(1, 4)->text(), QStringLiteral("4"));
        QCOMPARE(table->item(2, 0)->text(), QStringLiteral("3"));
        QVERIFY(table->item(2, 7)->text().startsWith(QLatin1String("coalesced")));
        QCOMPARE(table->item(1, 0)->toolTip(), QStringLiteral("out[i * 1024] = v;"));
        auto *summary = panel.findChild<QLabel *>(QStringLiteral("accessSummary"));
        QVERIFY(summary->text().contains(QLatin1String("6 warp requests recorded")));

        QSignalSpy line(&f.wb, &Workbench::showSourceLine);
        Q_EMIT table->cellDoubleClicked(1, 2);
        QCOMPARE(line.size(), 1);
        QCOMPARE(line.first().at(0).toInt(), 4);
    }

    void findsWhoTouchedACell_data()
    {
        QTest::addColumn<QString>("buffer");
        QTest::addColumn<QString>("element");
        QTest::addColumn<QStringList>("first"); // access, block, thread, line; or the message
        QTest::newRow("read by block 1, thread 5") << "in"
                                                   << "37" << QStringList{"read", "(1, 0, 0)", "(5, 0, 0)", "3"};
        QTest::newRow("written by block 1, thread 2")
            << "out"
            << "2049" << QStringList{"written", "(1, 0, 0)", "(2, 0, 0)", "4"};
        QTest::newRow("untouched") << "out"
                                   << "2" << QStringList{"No thread of the recorded launch touched out[2]"};
        QTest::newRow("not an element") << "in"
                                        << "x" << QStringList{"x is not an element of in (0 to 262143)"};
        QTest::newRow("past the end") << "in"
                                      << "262144" << QStringList{"262144 is not an element of in (0 to 262143)"};
    }
    void findsWhoTouchedACell()
    {
        QFETCH(QString, buffer);
        QFETCH(QString, element);
        QFETCH(QStringList, first);
        KpTest::PanelFixture f;
        AccessPanel panel(f.wb);
        panel.showReport(recordedReport());
        panel.findChild<QComboBox *>(QStringLiteral("accessBuffer"))->setCurrentText(buffer);
        panel.findChild<QLineEdit *>(QStringLiteral("accessElement"))->setText(element);
        panel.findChild<QPushButton *>(QStringLiteral("findTouches"))->click();
        auto *touches = panel.findChild<QTreeWidget *>(QStringLiteral("accessTouches"));
        QCOMPARE(touches->topLevelItemCount(), 1);
        for (int c = 0; c < first.size(); ++c) {
            QCOMPARE(touches->topLevelItem(0)->text(c), first[c]);
        }
    }

    // Analyze goes through the controller, its own worker and a real compile
    // and instrumentation; without a GPU it ends in one message, and the
    // button says why it is off.
    void analyzeWithoutAGpuSaysWhy()
    {
        KpTest::PanelFixture f;
        AccessPanel panel(f.wb);
        QVERIFY(f.open(QStringLiteral(":/presets/transpose_naive/transpose_naive.kpg")));
        QSignalSpy known(&f.wb.devices(), &Devices::changed);
        f.wb.devices().refresh();
        QVERIFY(f.wb.devices().known() || known.wait(30000));
        if (f.wb.devices().canRun()) {
            QSKIP("a GPU is here: tst_gpu_access records real launches");
        }
        auto *analyze = panel.findChild<QPushButton *>(QStringLiteral("analyzeAccess"));
        QVERIFY(!analyze->isEnabled());
        QVERIFY2(!analyze->toolTip().isEmpty(), "the button says why it is off");
        QSignalSpy done(&f.wb, &Workbench::accessFinished);
        QVERIFY(f.wb.analyzeAccess(0));
        QVERIFY(!f.wb.analyzeAccess(0)); // one at a time
        QVERIFY(done.wait(120000));
        auto *summary = panel.findChild<QLabel *>(QStringLiteral("accessSummary"));
        QVERIFY2(summary->text().startsWith(QLatin1String("Not analysed: ")), qPrintable(summary->text()));
        QVERIFY2(summary->text().contains(QLatin1String("driver")), qPrintable(summary->text()));
        QVERIFY(!f.wb.access().isRunning());
    }
};

QTEST_MAIN(TestAccessPanel)
#include "tst_accesspanel.moc"
