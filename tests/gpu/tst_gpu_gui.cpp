// On a machine with an NVIDIA GPU: presets run from the workbench as a user
// would, the result shows in the inspector and the timing chart, and Play
// keeps a time-stepping kernel going.

#include "client/engineclient.h"
#include "cuda/deviceinfo.h"
#include "gpurun.h"
#include "panels/inspector/buffergridmodel.h"
#include "panels/inspector/bufferinspector.h"
#include "panels/inspector/imageview.h"
#include "panels/launch/launchpanel.h"
#include "panels/results/resultspanel.h"
#include "plots/timingchart.h"
#include "shell/mainwindow.h"
#include "testutil.h"
#include "workbench/checkrunner.h"
#include "workbench/runhistory.h"
#include "workbench/workbench.h"

#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest>

#include <algorithm>
#include <cstring>

using namespace Kp;

class TestGpuGui : public QObject
{
    Q_OBJECT

private:
    /**
     * Opens a preset, waits for its compile and runs it once. Fails the test
     * (QVERIFY in a helper: callers check QTest::currentTestFailed()) when any
     * step does not happen, so "no error" below never means "no run".
     */
    static void runPreset(MainWindow &w, const QString &name, RunResult &result)
    {
        QSignalSpy compiled(&w, &MainWindow::compileFinished);
        KP_VERIFY_RESULT(w.openProject(QStringLiteral(":/presets/%1/%1.kpg").arg(name)));
        QVERIFY2(compiled.wait(30000), "the preset did not compile within 30 s");
        QVERIFY2(w.lastCompile().ok, "the preset does not compile");
        QSignalSpy done(&w, &MainWindow::runFinished);
        const qsizetype before = w.runs().size();
        w.runNow();
        QVERIFY2(done.wait(60000), "the run did not finish within 60 s");
        QCOMPARE(w.runs().size(), before + 1);
        result = w.runs().last();
    }

    /** heat's temperature at (x, y) of its 1024x1024 plate t. */
    static float heatAt(MainWindow &w, int x, int y)
    {
        const HostBuffer *t = w.hostBuffers().find("t");
        return t ? static_cast<const float *>(t->memory.data())[qint64(y) * 1024 + x] : -1.0f;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        if (const std::optional<QString> why = KpTest::noGpu()) {
            QSKIP(qPrintable(*why));
        }
    }

    void vectorAddShowsInInspectorAndChart()
    {
        EngineClient engine;
        MainWindow w(&engine);
        w.show();
        RunResult r;
        runPreset(w, "vector_add", r);
        if (QTest::currentTestFailed()) {
            return;
        }
        QVERIFY2(!r.error, qPrintable(r.error ? r.error->message : QString()));
        QVERIFY(r.stats.count >= 10);
        // Inspector: c = a + b, read through the grid model.
        auto *inspector = w.findChild<BufferInspector *>("inspector");
        QVERIFY(inspector);
        inspector->showBuffer("c");
        const HostBuffer *a = w.hostBuffers().find("a");
        const HostBuffer *b = w.hostBuffers().find("b");
        float av[20], bv[20];
        std::memcpy(av, a->memory.data(), sizeof av);
        std::memcpy(bv, b->memory.data(), sizeof bv);
        BufferGridModel *model = inspector->gridModel();
        const QModelIndex cell = model->index(1, 3); // element 1 * columns + 3
        const qint64 flat = model->flatIndex(cell);
        QVERIFY(flat >= 0 && flat < 20);
        const double want = double(av[flat] + bv[flat]);
        QVERIFY(want > 0); // random inputs, not zeros
        QCOMPARE(model->data(cell).toString().toDouble(), QString::number(want, 'g', 6).toDouble());
        // Results: one row, and the samples chart has a point per sample.
        auto *results = w.findChild<ResultsPanel *>("results");
        QVERIFY(results);
        QCOMPARE(results->model()->rowCount(), 1);
        QTRY_COMPARE(results->timingChart()->pointCount(), int(r.samplesMs.size()));
        // Occupancy follows the block size as it is typed, from the run's kernel limits.
        QVERIFY(w.launchPanel()->findChild<QLabel *>("occupancy")->text().startsWith("100 %"));
        w.launchPanel()->blockField(0)->setText("32");
        Q_EMIT w.launchPanel()->blockField(0)->editingFinished();
        QTRY_VERIFY(w.launchPanel()->findChild<QLabel *>("occupancy")->text().contains("estimate for this block size"));
        const QString occ = w.launchPanel()->findChild<QLabel *>("occupancy")->text();
        QVERIFY2(occ.startsWith("50 % (32 blocks/SM, 32 of 64 warps)"), qPrintable(occ));
    }

    void mandelbrotHoverNamesTheThread()
    {
        EngineClient engine;
        MainWindow w(&engine);
        w.resize(1600, 1000);
        w.show();
        RunResult r;
        runPreset(w, "mandelbrot", r);
        if (QTest::currentTestFailed()) {
            return;
        }
        QVERIFY2(!r.error, qPrintable(r.error ? r.error->message : QString()));
        w.inspectBuffer("image", "image");
        auto *inspector = w.findChild<BufferInspector *>("inspector");
        ImageView *view = inspector->imageView();
        QTRY_VERIFY(view->isVisible());
        // Pixel (300, 200) at zoom 1 with the image's corner at the origin.
        view->setView(1.0, QPointF(0, 0));
        const QString text = view->hoverText(QPoint(300, 200));
        QVERIFY2(text.contains("blockIdx (18, 12, 0)"), qPrintable(text));
        QVERIFY2(text.contains("threadIdx (12, 8, 0)"), qPrintable(text));
    }

    /**
     * NVIDIA's cdpSimpleQuicksort as a user runs it from the window: a
     * kernel that launches kernels (relocatable code linked with the device
     * runtime), timed, then its checks judged against the reference. A GUI
     * run of it once did not settle within 100 s while `kpg run` took
     * milliseconds; the log lines and the time of each stage are printed so
     * a failure says where it stopped.
     */
    void dynamicParallelismPresetRunsAndSettles()
    {
        EngineClient engine;
        MainWindow w(&engine);
        w.show();
        QElapsedTimer t;
        t.start();
        QObject::connect(&w.workbench(), &Workbench::message, &w,
                         [&t](const QString &line) { qInfo("[%lld ms] log: %s", t.elapsed(), qPrintable(line)); });
        w.refreshDeviceStatus(); // as the program's start does: the compile is then for this GPU
        RunResult result;
        runPreset(w, QStringLiteral("cdp_quicksort"), result);
        if (QTest::currentTestFailed()) {
            return;
        }
        qInfo("[%lld ms] run finished", t.elapsed());
        QVERIFY2(!result.error, qPrintable(result.error ? result.error->message : QString()));
        QSignalSpy settled(&w, &MainWindow::checksSettled);
        QTRY_VERIFY_WITH_TIMEOUT(settled.count() > 0 || !w.checkRunner()->isBusy(), 90000);
        qInfo("[%lld ms] checks settled", t.elapsed());
        const QList<CheckOutcome> &outcomes = w.checkRunner()->outcomes();
        QCOMPARE(outcomes.size(), 2);
        for (const CheckOutcome &o : outcomes) {
            QVERIFY2(!o.pending, qPrintable(o.result.name));
            QVERIFY2(!o.result.error, qPrintable(o.result.error ? o.result.error->message : o.result.name));
            QVERIFY2(o.result.passed, qPrintable(o.result.name));
        }
        // Sorted on the GPU: check it here too, on the buffer the window shows.
        const HostBuffer *data = w.hostBuffers().find("data");
        QVERIFY(data);
        const auto *v = static_cast<const quint32 *>(data->memory.data());
        QVERIFY(std::is_sorted(v, v + 4096));
        QVERIFY(v[0] != v[4095]); // random data, not a constant
    }

    void heatPlays()
    {
        EngineClient engine;
        MainWindow w(&engine);
        w.show();
        QSignalSpy compiled(&w, &MainWindow::compileFinished);
        KP_VERIFY_RESULT(w.openProject(":/presets/heat/heat.kpg"));
        QVERIFY(compiled.wait(30000));
        // Inside the hot disk around (300, 400), radius 80, near its rim; and just outside it.
        QCOMPARE(heatAt(w, 375, 400), 100.0f);
        QCOMPARE(heatAt(w, 385, 400), 0.0f);
        QSignalSpy frames(&w, &MainWindow::runFinished);
        auto *play = w.launchPanel()->findChild<QPushButton *>("play");
        QVERIFY(play);
        QElapsedTimer t;
        t.start();
        play->setChecked(true);
        QTest::qWait(3000);
        play->setChecked(false);
        QTRY_VERIFY(!w.isRunning());
        const double fps = frames.count() / (t.elapsed() / 1000.0);
        qInfo("heat Play: %d frames of 50 steps each in %lld ms: %.1f frames/s (1024x1024 float)", int(frames.count()),
              t.elapsed(), fps);
        QVERIFY(frames.count() >= 10);
        QTRY_COMPARE(int(w.runs().size()), int(frames.count()));
        for (const RunResult &r : w.runs()) {
            QVERIFY2(!r.error, qPrintable(r.error ? r.error->message : QString()));
        }
        // Time has advanced between frames: the plate has cooled where it was
        // hot and warmed just outside, and the scheme stayed stable (no cell
        // above the hottest start value).
        const float rim = heatAt(w, 375, 400);
        const float outside = heatAt(w, 385, 400);
        QVERIFY2(rim < 100.0f && rim > 0.0f, qPrintable(QString::number(rim)));
        QVERIFY2(outside > 0.0f && outside < 100.0f, qPrintable(QString::number(outside)));
        const HostBuffer *plate = w.hostBuffers().find("t");
        const auto *v = static_cast<const float *>(plate->memory.data());
        QVERIFY(*std::max_element(v, v + 1024 * 1024) <= 100.0f);
    }
};

QTEST_MAIN(TestGpuGui)
#include "tst_gpu_gui.moc"
