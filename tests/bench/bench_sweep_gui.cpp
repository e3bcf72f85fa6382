// The Sweep panel while a sweep streams in: 64 recorded points land one every
// 2 ms (faster than any real sweep) into the panel on screen (offscreen
// platform works too); prints the longest event-loop stall, the time of the
// slowest addResult and of the slowest plot redraw. Needs no GPU.
//   QT_QPA_PLATFORM=offscreen bench_sweep_gui
//
// Target: the longest stall under 16 ms (one frame at 60 Hz).

#include "panels/sweep/sweeppanel.h"
#include "panels/sweep/sweepplotview.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QTimer>

#include <cstdio>

using namespace Kp;

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    SweepPanel panel;
    panel.resize(1400, 700);
    panel.show();
    const QList<SweepAxis> axes{*parseSweepAxis(QStringLiteral("block.x=32:1024:pow2")),
                                *parseSweepAxis(QStringLiteral("define.TILE=1:11:1"))};
    panel.showSweep(axes, 66);
    QRandomGenerator rng(99);
    QList<SweepPointResult> points;
    for (int i = 0; i < 64; ++i) {
        SweepPointResult p;
        p.index = i;
        p.point.values = {QString::number(32 << (i % 6)), QString::number(1 + i / 6)};
        p.label = p.point.values.join(QLatin1Char(' '));
        p.status = QStringLiteral("ok");
        p.run.ran = true;
        p.run.run.timed = true;
        p.run.run.stats.medianMs = 0.01 + rng.generateDouble();
        p.run.run.stats.minMs = p.run.run.stats.medianMs * 0.98;
        p.run.run.stats.maxMs = p.run.run.stats.medianMs * 1.2;
        p.run.run.bytes = 1e8;
        p.run.run.bytesPerSecond = 1e8 / (p.run.run.stats.medianMs / 1000);
        StepResult s;
        s.occupancy.ratio = rng.generateDouble();
        p.run.run.steps << s;
        points << p;
    }
    QElapsedTimer sinceTick;
    qint64 longestStall = 0;
    QTimer tick;
    tick.setInterval(1);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        longestStall = std::max(longestStall, sinceTick.elapsed());
        sinceTick.restart();
    });
    qint64 slowestAdd = 0;
    int next = 0;
    QTimer feed;
    feed.setInterval(2);
    QObject::connect(&feed, &QTimer::timeout, [&] {
        if (next < points.size()) {
            QElapsedTimer t;
            t.start();
            panel.addResult(points[next++]);
            slowestAdd = std::max(slowestAdd, t.nsecsElapsed());
        } else {
            feed.stop();
            QTimer::singleShot(400, &app, &QApplication::quit);
        }
    });
    // Let the window settle first: the first layout is not the sweep's cost.
    QTimer::singleShot(500, &app, [&] {
        sinceTick.start();
        tick.start();
        feed.start();
    });
    app.exec();
    QElapsedTimer redraw;
    redraw.start();
    panel.refreshPlot();
    panel.plotView()->repaint();
    const qint64 redrawNs = redraw.nsecsElapsed();
    std::printf("64 points: longest event-loop stall %lld ms (target < 16), slowest addResult %.2f ms, "
                "plot rebuild and repaint %.2f ms\n",
                static_cast<long long>(longestStall), double(slowestAdd) / 1e6, double(redrawNs) / 1e6);
    return 0;
}
