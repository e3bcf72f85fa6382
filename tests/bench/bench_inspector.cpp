// Inspector frame times, offscreen: scrolling the grid of a 1 GiB float32
// buffer, panning and zooming an 8192 x 8192 float32 image (converted per
// paint) and a 4096 x 4096 one (cached), and computeBufferStats of 1 GiB.
// Every frame is a QWidget::grab() of the view, so it includes the whole
// paint. Prints a table; asserts nothing.
//   bench_inspector [frames]

#include "panels/inspector/buffergridmodel.h"
#include "panels/inspector/imageview.h"
#include "run/runner.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QRandomGenerator>
#include <QScrollBar>
#include <QTableView>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

using namespace Kp;

namespace {

std::shared_ptr<HostBuffer> makeBuffer(const QString &name, QList<qint64> shape)
{
    auto b = std::make_shared<HostBuffer>();
    b->spec.name = name;
    b->spec.dtype = DType::Float32;
    b->spec.shape = shape;
    b->shape = shape;
    Result<SharedMemory> mem = SharedMemory::create(b->byteSize(), name);
    if (!mem) {
        std::fprintf(stderr, "cannot allocate %s: %s\n", qPrintable(name), qPrintable(mem.error().message));
        std::exit(1);
    }
    b->memory = std::move(mem).value();
    return b;
}

struct Row
{
    std::string what;
    std::vector<double> ms;
    double target;
};

double percentile(std::vector<double> v, double p)
{
    std::sort(v.begin(), v.end());
    if (v.empty()) {
        return 0;
    }
    return v[std::min(v.size() - 1, std::size_t(p * double(v.size() - 1) + 0.5))];
}

double timeMs(const std::function<void()> &f)
{
    QElapsedTimer t;
    t.start();
    f();
    return double(t.nsecsElapsed()) / 1e6;
}

std::vector<double> frames(int n, const std::function<void(int)> &step, QWidget *w)
{
    std::vector<double> ms;
    for (int i = 0; i < n; ++i) {
        ms.push_back(timeMs([&] {
            step(i);
            w->grab();
        }));
    }
    return ms;
}

void print(const std::vector<Row> &rows)
{
    std::printf("\n%-66s %8s %8s %8s %8s  %s\n", "what", "median", "p95", "max", "target", "");
    std::printf("%-66s %8s %8s %8s %8s\n", "", "ms", "ms", "ms", "ms");
    for (const Row &r : rows) {
        const double med = percentile(r.ms, 0.5);
        const double p95 = percentile(r.ms, 0.95);
        const double mx = *std::max_element(r.ms.begin(), r.ms.end());
        std::printf("%-66s %8.2f %8.2f %8.2f %8.0f  %s\n", r.what.c_str(), med, p95, mx, r.target,
                    r.target <= 0 ? "" : (p95 < r.target ? "ok" : "OVER"));
    }
}

} // namespace

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    const int n = argc > 1 ? std::max(5, QString::fromLocal8Bit(argv[1]).toInt()) : 60;
    std::vector<Row> rows;

    // 1 GiB of float32, every page touched.
    const qint64 count = 1024ll * 1024 * 1024 / 4;
    auto big = makeBuffer(QStringLiteral("big"), {count});
    float *f = static_cast<float *>(big->memory.data());
    for (qint64 i = 0; i < count; ++i) {
        f[i] = float(i % 1000) * 0.001f - 0.5f;
    }
    f[12345] = std::nanf("");
    f[count - 1] = INFINITY;

    std::vector<double> stats;
    BufferStats s;
    for (int i = 0; i < 5; ++i) {
        stats.push_back(timeMs([&] { s = computeBufferStats(*big); }));
    }
    std::printf("stats of 1 GiB: min %g max %g mean %g NaN %lld Inf %lld count %lld\n", s.min, s.max, s.mean,
                static_cast<long long>(s.nanCount), static_cast<long long>(s.infCount),
                static_cast<long long>(s.count));
    rows.push_back({"computeBufferStats, 1 GiB float32 (268 M values)", stats, 1000});

    // The grid: a table view on the model, 1280 x 800, with Qt's delegate
    // and with the one the inspector uses.
    for (const bool lean : {false, true}) {
        const std::string tag = lean ? "grid, BufferGridDelegate" : "grid, QStyledItemDelegate";
        BufferGridModel model;
        QTableView view;
        BufferGridDelegate delegate;
        if (lean) {
            view.setItemDelegate(&delegate);
        }
        view.resize(1280, 800);
        view.horizontalHeader()->setDefaultSectionSize(96);
        view.verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
        std::vector<double> setup;
        setup.push_back(timeMs([&] {
            model.setBuffer(big);
            view.setModel(&model);
            view.show();
            (void)QTest::qWaitForWindowExposed(&view);
            view.grab();
        }));
        rows.push_back({tag + ": set 1 GiB (16.8 M rows), first frame", setup, 0});
        QScrollBar *sb = view.verticalScrollBar();
        const auto pageDown = [sb](int) { sb->setValue(sb->value() + sb->pageStep()); };
        rows.push_back({tag + ": page down", frames(n, pageDown, &view), 16});
        QRandomGenerator rng(7);
        const auto jump = [sb, &rng](int) { sb->setValue(int(rng.bounded(sb->maximum() + 1))); };
        rows.push_back({tag + ": jump anywhere in 1 GiB", frames(n, jump, &view), 16});
        model.setPrecision(3);
        model.setNumberFormat(NumberFormat::Scientific);
        rows.push_back({tag + ": page down, scientific", frames(n, pageDown, &view), 16});
    }

    // The image: 8192 x 8192 float32 (256 MiB), above the cache limit.
    qint64 side = 8192;
    auto img = makeBuffer(QStringLiteral("img"), {side, side});
    float *p = static_cast<float *>(img->memory.data());
    for (qint64 y = 0; y < side; ++y) {
        for (qint64 x = 0; x < side; ++x) {
            p[y * side + x] = float(std::sin(double(x) / 300) * std::cos(double(y) / 200));
        }
    }
    const auto imageRows = [&](const std::shared_ptr<HostBuffer> &buffer, const char *prefix) {
        const auto label = [prefix](const char *what) { return std::string(prefix) + ": " + what; };
        ImageView view;
        view.resize(1280, 800);
        view.show();
        (void)QTest::qWaitForWindowExposed(&view);
        // The first frame of a new buffer: auto range (a pass over all of
        // it) and, when cached, the conversion of every pixel.
        std::vector<double> first{timeMs([&] {
            view.setBuffer(buffer);
            view.grab();
        })};
        rows.push_back(
            {label(view.isCached() ? "first frame (auto range + cache)" : "first frame (auto range)"), first, 0});
        // Back and forth, so the image stays in view.
        const auto wiggle = [&view](int i) { view.panBy(i % 2 ? QPointF(13, 7) : QPointF(-13, -7)); };
        view.fitToWindow();
        rows.push_back({label("pan, fitted (whole image in view)"), frames(n, wiggle, &view), 16});
        view.fitToWindow();
        const QPointF centre = view.origin() + QPointF(double(side) / 2, double(side) / 2) * view.zoom() * 0.9;
        const auto wheel = [&view, centre](int i) { view.zoomAt((i / 10) % 2 ? 0.8 : 1.25, centre); };
        rows.push_back({label("wheel zoom in/out (fit .. 9x fit)"), frames(n, wheel, &view), 16});
        const auto at = [&view](double zoom) { view.setView(zoom, QPointF(640 - 4000 * zoom, 400 - 3000 * zoom)); };
        at(1);
        rows.push_back({label("pan at 1:1"), frames(n, wiggle, &view), 16});
        at(8);
        rows.push_back({label("pan at 8x"), frames(n, wiggle, &view), 16});
        at(64);
        rows.push_back({label("pan at 64x (values written in pixels)"), frames(n, wiggle, &view), 16});
    };
    imageRows(img, "image 8192^2, per paint");

    auto mid = makeBuffer(QStringLiteral("mid"), {4096, 4096});
    float *q = static_cast<float *>(mid->memory.data());
    for (qint64 i = 0; i < 4096ll * 4096; ++i) {
        q[i] = float(i % 4099) / 4099.0f;
    }
    side = 4096;
    imageRows(mid, "image 4096^2, cached");

    print(rows);
    return 0;
}
