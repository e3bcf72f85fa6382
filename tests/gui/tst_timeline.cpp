// The Results panel's Timeline (gui/results/timelineview), offscreen: lanes,
// hovering a bar, zoom and pan, the export to PNG, SVG and trace JSON, and
// the tab following the selected run.

#include "panels/results/resultspanel.h"
#include "panels/results/timelineview.h"
#include "workbench/runhistory.h"

#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

using namespace Kp;

class TestTimeline : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void lanesAndHover();
    void zoomAndPan();
    void exports();
    void followsTheSelectedRun();
};

namespace {

RunResult run()
{
    RunResult r;
    r.device = QStringLiteral("GPU (0)");
    r.timed = true;
    const auto add = [&r](int step, const QString &kind, const QString &stream, const QString &dir, double a,
                          double b) {
        TimelineSpan t;
        t.step = step;
        t.kind = kind;
        t.label = kind + QString::number(step);
        t.stream = stream;
        t.direction = dir;
        t.startMs = a;
        t.endMs = b;
        t.bytes = dir.isEmpty() ? 0 : 1 << 20;
        r.timeline << t;
    };
    add(0, "copy", "s0", "HtoD", 0.0, 0.4);
    add(1, "kernel", "s0", "", 0.4, 0.8);
    add(2, "copy", "s1", "HtoD", 0.4, 0.8);
    add(3, "kernel", "s1", "", 0.8, 1.0);
    r.timelineTotalMs = 1.0;
    return r;
}

} // namespace

void TestTimeline::lanesAndHover()
{
    TimelineView view;
    view.resize(800, 240);
    view.showRun(run(), QStringLiteral("#1"));
    QCOMPARE(view.lanes().size(), 3);
    QCOMPARE(view.lanes()[2].name, QStringLiteral("copy engine HtoD"));
    // Find the kernel of stream s1 by scanning its lane: the bar under the pointer is that step.
    int found = -1;
    for (int x = 0; x < view.width() && found != 3; ++x) {
        for (int y = 0; y < view.height() && found != 3; y += 2) {
            if (view.spanAt(QPoint(x, y)) == 3) {
                found = 3;
            }
        }
    }
    QCOMPARE(found, 3);
    QVERIFY2(view.spanText(3).contains(QStringLiteral("stream s1")), qPrintable(view.spanText(3)));
    QVERIFY(view.spanText(0).contains(QStringLiteral("GB/s")));
    QCOMPARE(view.spanAt(QPoint(2, 2)), -1); // the label column
}

void TestTimeline::zoomAndPan()
{
    TimelineView view;
    view.resize(800, 240);
    view.showRun(run(), QStringLiteral("#1"));
    QCOMPARE(view.viewStartMs(), 0.0);
    QCOMPARE(view.viewEndMs(), 1.0);
    const QPoint middle(130 + (800 - 130 - 8) / 2, 120);
    QWheelEvent in(middle, view.mapToGlobal(middle), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                   Qt::NoScrollPhase, false);
    QApplication::sendEvent(&view, &in);
    QVERIFY(view.viewEndMs() - view.viewStartMs() < 0.9);
    QVERIFY(view.viewStartMs() > 0.05); // around the pointer, not the left edge
    const double width = view.viewEndMs() - view.viewStartMs();
    QTest::mousePress(&view, Qt::LeftButton, {}, middle);
    QTest::mouseMove(&view, middle + QPoint(100, 0));
    QTest::mouseRelease(&view, Qt::LeftButton, {}, middle + QPoint(100, 0));
    QVERIFY(view.viewStartMs() < 0.1); // dragged right: earlier times come into view
    QCOMPARE(view.viewEndMs() - view.viewStartMs(), width);
    QTest::mouseDClick(&view, Qt::LeftButton, {}, middle);
    QCOMPARE(view.viewStartMs(), 0.0);
    QCOMPARE(view.viewEndMs(), 1.0);
}

void TestTimeline::exports()
{
    QTemporaryDir dir;
    TimelineView view;
    view.resize(640, 200);
    view.showRun(run(), QStringLiteral("#1"));
    QVERIFY(view.exportPng(dir.filePath("t.png"), QSize(640, 200)));
    const QImage image(dir.filePath("t.png"));
    QCOMPARE(image.size(), QSize(640, 200));
    // A copy bar is painted in the copy colour somewhere in the image.
    bool blue = false;
    for (int y = 0; y < image.height() && !blue; ++y) {
        for (int x = 0; x < image.width() && !blue; ++x) {
            blue = image.pixelColor(x, y) == QColor(0x2e, 0x86, 0xde);
        }
    }
    QVERIFY(blue);
    QVERIFY(view.exportSvg(dir.filePath("t.svg"), QSize(640, 200)));
    QFile svg(dir.filePath("t.svg"));
    QVERIFY(svg.open(QIODevice::ReadOnly));
    QVERIFY(svg.readAll().contains("<svg"));
    QVERIFY(view.exportTrace(dir.filePath("t.json")));
    QFile trace(dir.filePath("t.json"));
    QVERIFY(trace.open(QIODevice::ReadOnly));
    QVERIFY(QJsonDocument::fromJson(trace.readAll()).object().contains("traceEvents"));
}

void TestTimeline::followsTheSelectedRun()
{
    ResultsPanel panel;
    panel.resize(1000, 300);
    RunRecord a;
    a.kernel = QStringLiteral("k");
    a.result = run();
    a.result.samplesMs = {1.0, 1.1, 0.9};
    panel.addRun(a);
    panel.setCurrentTab(ResultsPanel::Tab::Timeline);
    QCOMPARE(panel.chartTabs()->currentWidget(), panel.timelineView());
    QCOMPARE(panel.timelineView()->lanes().size(), 3);
    RunRecord b;
    b.kernel = QStringLiteral("k");
    b.result.timed = false;
    panel.addRun(b);
    QVERIFY(panel.timelineView()->lanes().isEmpty());
    QTemporaryDir dir;
    QVERIFY(panel.exportChartPng(dir.filePath("p.png"), QSize(300, 100)));
}

QTEST_MAIN(TestTimeline)
#include "tst_timeline.moc"
