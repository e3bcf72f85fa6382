// The buffer inspector, offscreen: the grid model (under
// QAbstractItemModelTester), number formats, go to index, highlighting of
// changes, statistics, the image view's hover line at several zooms, the
// colormaps, the diff, and a screenshot of the whole panel.

#include "buffers/colormap.h"
#include "panels/inspector/buffergridmodel.h"
#include "panels/inspector/bufferinspector.h"
#include "panels/inspector/diffview.h"
#include "panels/inspector/imageview.h"
#include "run/runner.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>

using namespace Kp;

namespace {

std::shared_ptr<HostBuffer> makeBuffer(const QString &name, DType dtype, const QList<qint64> &shape)
{
    auto b = std::make_shared<HostBuffer>();
    b->spec.name = name;
    b->spec.dtype = dtype;
    b->spec.shape = shape;
    b->shape = shape;
    b->memory = SharedMemory::create(std::max<qint64>(1, b->byteSize()), QStringLiteral("t")).value();
    return b;
}

/** Sets component k (counted over the whole buffer) to v, converted to the component type. */
void setComponent(HostBuffer &b, qint64 k, double v)
{
    const DTypeInfo &info = dtypeInfo(b.spec.dtype);
    storeComponent(info.component, v, static_cast<char *>(b.memory.data()) + k * info.componentBytes);
}

/** Fills every component k with f(k). */
template<typename F> void fill(HostBuffer &b, F f)
{
    const qint64 n = b.elementCount() * dtypeInfo(b.spec.dtype).components;
    for (qint64 k = 0; k < n; ++k) {
        setComponent(b, k, f(k));
    }
}

float *floats(HostBuffer &b)
{
    return static_cast<float *>(b.memory.data());
}

void sendMouse(QWidget *w, QEvent::Type type, QPointF pos, Qt::MouseButton button, Qt::MouseButtons buttons)
{
    QMouseEvent e(type, pos, w->mapToGlobal(pos), button, buttons, Qt::NoModifier);
    QCoreApplication::sendEvent(w, &e);
}

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

} // namespace

class TestInspector : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    // ---- the grid model -----------------------------------------------

    void modelTester_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<QList<qint64>>("shape");
        QTest::newRow("1-D float32, short last row") << int(DType::Float32) << QList<qint64>{100};
        QTest::newRow("1-D shorter than a row") << int(DType::Int8) << QList<qint64>{5};
        QTest::newRow("2-D int32") << int(DType::Int32) << QList<qint64>{5, 7};
        QTest::newRow("3-D float64") << int(DType::Float64) << QList<qint64>{3, 4, 5};
        QTest::newRow("float4 vector") << int(DType::Float4) << QList<qint64>{10};
        QTest::newRow("uchar4 image") << int(DType::UChar4) << QList<qint64>{4, 4};
        QTest::newRow("float16") << int(DType::Float16) << QList<qint64>{33};
    }
    void modelTester()
    {
        QFETCH(int, dtype);
        QFETCH(QList<qint64>, shape);
        auto b = makeBuffer(QStringLiteral("a"), DType(dtype), shape);
        fill(*b, [](qint64 k) { return double(k % 100) - 7.25; });
        BufferGridModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setBuffer(b);
        QVERIFY(model.rowCount() > 0);
        model.setColumns1D(10);
        model.setSlice(model.sliceCount() - 1);
        model.setNumberFormat(NumberFormat::Scientific);
        model.setPrecision(3);
        QVERIFY(model.takeSnapshot());
        setComponent(*b, 0, 42);
        model.refresh();
        // Every cell answers every role the views ask for.
        for (int r = 0; r < model.rowCount(); ++r) {
            for (int c = 0; c < model.columnCount(); ++c) {
                const QModelIndex i = model.index(r, c);
                for (int role : {int(Qt::DisplayRole), int(Qt::ToolTipRole), int(Qt::BackgroundRole),
                                 int(Qt::TextAlignmentRole)}) {
                    model.data(i, role);
                }
            }
        }
        // A smaller shape resets the model.
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        b->shape[0] = 1;
        model.refresh();
        QCOMPARE(reset.count(), 1);
        model.setBuffer(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void layout()
    {
        auto b = makeBuffer(QStringLiteral("a"), DType::Float32, {100});
        BufferGridModel model;
        model.setBuffer(b);
        QCOMPARE(model.columnCount(), 16);
        QCOMPARE(model.rowCount(), 7);
        QCOMPARE(model.headerData(2, Qt::Vertical).toString(), QString("32"));
        QCOMPARE(model.headerData(5, Qt::Horizontal).toString(), QString("5"));
        QVERIFY(!model.data(model.index(6, 5)).isValid()); // 101: past the end
        QCOMPARE(model.flags(model.index(6, 5)), Qt::NoItemFlags);
        model.setColumns1D(10);
        QCOMPARE(model.rowCount(), 10);
        QCOMPARE(model.headerData(3, Qt::Vertical).toString(), QString("30"));

        auto m = makeBuffer(QStringLiteral("m"), DType::Int32, {5, 7});
        model.setBuffer(m);
        QCOMPARE(model.rowCount(), 5);
        QCOMPARE(model.columnCount(), 7);
        QCOMPARE(model.headerData(4, Qt::Vertical).toString(), QString("4"));

        auto v = makeBuffer(QStringLiteral("v"), DType::Float64, {3, 4, 5});
        model.setBuffer(v);
        QCOMPARE(model.sliceCount(), 3);
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(model.columnCount(), 5);
    }

    void formats_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<QList<double>>("values");
        QTest::addColumn<int>("format");
        QTest::addColumn<int>("precision");
        QTest::addColumn<QString>("text");
        const int G = int(NumberFormat::General);
        const int F = int(NumberFormat::Fixed);
        const int S = int(NumberFormat::Scientific);
        const int H = int(NumberFormat::Hex);
        const int f32 = int(DType::Float32);
        QTest::newRow("general") << f32 << QList<double>{1.5} << G << 6 << "1.5";
        QTest::newRow("general 0.1f") << f32 << QList<double>{0.1} << G << 6 << "0.1";
        QTest::newRow("fixed") << f32 << QList<double>{1.5} << F << 3 << "1.500";
        QTest::newRow("fixed negative") << f32 << QList<double>{-2.26} << F << 1 << "-2.3";
        QTest::newRow("scientific") << f32 << QList<double>{1234.5} << S << 2 << "1.23e+03";
        QTest::newRow("scientific small") << int(DType::Float64) << QList<double>{0.000125} << S << 3 << "1.250e-04";
        QTest::newRow("nan") << f32 << QList<double>{kNan} << F << 3 << "nan";
        QTest::newRow("inf") << f32 << QList<double>{kInf} << S << 3 << "inf";
        QTest::newRow("-inf") << int(DType::Float16) << QList<double>{-kInf} << G << 6 << "-inf";
        QTest::newRow("hex on a float is general") << f32 << QList<double>{1.5} << H << 6 << "1.5";
        QTest::newRow("float16 general") << int(DType::Float16) << QList<double>{0.1} << G << 6 << "0.0999756";
        QTest::newRow("int8 -1 hex") << int(DType::Int8) << QList<double>{-1} << H << 6 << "0xff";
        QTest::newRow("int16 -2 hex") << int(DType::Int16) << QList<double>{-2} << H << 6 << "0xfffe";
        QTest::newRow("uint16 5 hex") << int(DType::UInt16) << QList<double>{5} << H << 6 << "0x0005";
        QTest::newRow("int32 -1 hex") << int(DType::Int32) << QList<double>{-1} << H << 6 << "0xffffffff";
        QTest::newRow("int64 min hex") << int(DType::Int64) << QList<double>{-9223372036854775808.0} << H << 6
                                       << "0x8000000000000000";
        QTest::newRow("int32 fixed is exact")
            << int(DType::Int32) << QList<double>{-123456789} << F << 3 << "-123456789";
        QTest::newRow("int32 scientific") << int(DType::Int32) << QList<double>{42} << S << 2 << "4.20e+01";
        QTest::newRow("float4") << int(DType::Float4) << QList<double>{1.5, 2, 0, 1} << G << 6 << "(1.5, 2, 0, 1)";
        QTest::newRow("float4 fixed") << int(DType::Float4) << QList<double>{1.5, 2, 0, 1} << F << 1
                                      << "(1.5, 2.0, 0.0, 1.0)";
        QTest::newRow("uchar4 hex") << int(DType::UChar4) << QList<double>{1, 2, 255, 16} << H << 6
                                    << "(0x01, 0x02, 0xff, 0x10)";
        QTest::newRow("int2") << int(DType::Int2) << QList<double>{-3, 7} << G << 6 << "(-3, 7)";
        QTest::newRow("char4 hex") << int(DType::Char4) << QList<double>{-1, 0, 127, -128} << H << 6
                                   << "(0xff, 0x00, 0x7f, 0x80)";
    }
    void formats()
    {
        QFETCH(int, dtype);
        QFETCH(QList<double>, values);
        QFETCH(int, format);
        QFETCH(int, precision);
        QFETCH(QString, text);
        auto b = makeBuffer(QStringLiteral("a"), DType(dtype), {3});
        for (qsizetype c = 0; c < values.size(); ++c) {
            setComponent(*b, values.size() + c, values[c]); // element 1
        }
        BufferGridModel model;
        model.setBuffer(b);
        model.setNumberFormat(NumberFormat(format));
        model.setPrecision(precision);
        QCOMPARE(model.data(model.indexOfElement(1)).toString(), text);
    }

    void exactText_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("text");
        QTest::newRow("float32 0.1") << int(DType::Float32) << 0.1 << "0.1";
        QTest::newRow("float32 1/3") << int(DType::Float32) << 1.0 / 3 << "0.33333334";
        QTest::newRow("float64 1/3") << int(DType::Float64) << 1.0 / 3 << "0.3333333333333333";
        QTest::newRow("float16 0.1") << int(DType::Float16) << 0.1 << "0.1";
        QTest::newRow("bfloat16 3.14") << int(DType::BFloat16) << 3.14 << "3.14";
        QTest::newRow("int64 large") << int(DType::Int64) << 9007199254740993.0 << "9007199254740992";
        QTest::newRow("float32 nan") << int(DType::Float32) << kNan << "nan";
    }
    void exactText()
    {
        QFETCH(int, dtype);
        QFETCH(double, value);
        QFETCH(QString, text);
        char bytes[16] = {};
        storeComponent(DType(dtype), value, bytes);
        QCOMPARE(exactElementText(DType(dtype), bytes), text);
    }

    void uint64Exact()
    {
        auto b = makeBuffer(QStringLiteral("a"), DType::UInt64, {2});
        const quint64 big = 18446744073709551615ull;
        std::memcpy(static_cast<char *>(b->memory.data()) + 8, &big, 8);
        BufferGridModel model;
        model.setBuffer(b);
        QCOMPARE(model.data(model.index(0, 1)).toString(), QString("18446744073709551615"));
        model.setNumberFormat(NumberFormat::Hex);
        QCOMPARE(model.data(model.index(0, 1)).toString(), QString("0xffffffffffffffff"));
    }

    void goToIndex()
    {
        BufferGridModel model;
        auto line = makeBuffer(QStringLiteral("a"), DType::Float32, {100});
        model.setBuffer(line);
        QModelIndex i = model.indexOfElement(37);
        QCOMPARE(i.row(), 2);
        QCOMPARE(i.column(), 5);
        QCOMPARE(model.flatIndex(i), qint64(37));
        QVERIFY(!model.indexOfElement(100).isValid());
        QVERIFY(!model.indexOfElement(-1).isValid());
        QCOMPARE(model.flatIndex(model.index(6, 5)), qint64(-1));
        model.setColumns1D(10);
        QCOMPARE(model.indexOfElement(37).row(), 3);
        QCOMPARE(model.indexOfElement(37).column(), 7);

        auto matrix = makeBuffer(QStringLiteral("m"), DType::Int32, {5, 7});
        model.setBuffer(matrix);
        i = model.indexOfElement(23);
        QCOMPARE(i.row(), 3);
        QCOMPARE(i.column(), 2);
        QCOMPARE(model.flatIndex(i), qint64(23));

        auto volume = makeBuffer(QStringLiteral("v"), DType::Float64, {3, 4, 5});
        model.setBuffer(volume);
        QCOMPARE(model.sliceOfElement(47), qint64(2));
        QVERIFY(!model.indexOfElement(47).isValid()); // slice 0 is shown
        model.setSlice(2);
        i = model.indexOfElement(47);
        QCOMPARE(i.row(), 1);
        QCOMPARE(i.column(), 2);
        QCOMPARE(model.flatIndex(i), qint64(47));
    }

    void tooltip()
    {
        auto b = makeBuffer(QStringLiteral("a"), DType::Float32, {4, 4});
        fill(*b, [](qint64 k) { return double(k) + 0.5; });
        BufferGridModel model;
        model.setBuffer(b);
        QCOMPARE(model.data(model.index(1, 2), Qt::ToolTipRole).toString(), QString("index 6, [1, 2]\nfloat32 6.5"));
        auto v = makeBuffer(QStringLiteral("v"), DType::Float2, {2, 3, 4});
        model.setBuffer(v);
        model.setSlice(1);
        QCOMPARE(model.data(model.index(2, 3), Qt::ToolTipRole).toString(),
                 QString("index 23, [1, 2, 3]\nfloat2 (0, 0)"));
    }

    void changedCells()
    {
        auto b = makeBuffer(QStringLiteral("a"), DType::Float32, {4, 4});
        fill(*b, [](qint64 k) { return double(k); });
        floats(*b)[7] = float(kNan);
        BufferGridModel model;
        model.setBuffer(b);
        QVERIFY(model.takeSnapshot());
        QVERIFY(model.snapshot());
        floats(*b)[5] = 50;
        floats(*b)[10] = -0.0f + 10.25f;
        floats(*b)[7] = float(kNan); // the same NaN: unchanged
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.refresh();
        QCOMPARE(changed.count(), 1);
        QCOMPARE(reset.count(), 0);
        QList<qint64> highlighted;
        for (qint64 k = 0; k < 16; ++k) {
            const QModelIndex i = model.indexOfElement(k);
            const QVariant bg = model.data(i, Qt::BackgroundRole);
            if (bg.isValid()) {
                QCOMPARE(bg.value<QColor>(), BufferGridModel::changedColor());
                highlighted << k;
            }
            QCOMPARE(model.data(i, BufferGridModel::ChangedRole).toBool(), bg.isValid());
        }
        QCOMPARE(highlighted, (QList<qint64>{5, 10}));
        QCOMPARE(model.data(model.indexOfElement(5), Qt::ToolTipRole).toString(),
                 QString("index 5, [1, 1]\nfloat32 50\nbefore the run: 5"));

        // A snapshot of another size (the buffer was resized) highlights nothing.
        model.setSnapshot(std::make_shared<const QByteArray>(8, '\0'));
        QVERIFY(!model.data(model.indexOfElement(5), Qt::BackgroundRole).isValid());

        model.setHighlightChanges(false);
        QVERIFY(!model.takeSnapshot());
        QVERIFY(!model.snapshot());
        QVERIFY(!model.data(model.indexOfElement(5), Qt::BackgroundRole).isValid());

        model.setHighlightChanges(true);
        model.setSnapshotLimit(16);
        QVERIFY(!model.takeSnapshot()); // 64 bytes is over the limit
    }

    void gridDelegatePaints()
    {
        auto b = makeBuffer(QStringLiteral("a"), DType::Float32, {4, 4});
        fill(*b, [](qint64 k) { return double(k) * 1000 + 0.5; });
        BufferGridModel model;
        model.setBuffer(b);
        QVERIFY(model.takeSnapshot());
        floats(*b)[5] = -1;
        model.refresh();
        QTableView view;
        BufferGridDelegate delegate;
        view.setItemDelegate(&delegate);
        view.setModel(&model);
        view.resize(500, 200);
        const QImage shot = view.grab().toImage();
        const auto cellPixel = [&](int row, int column, QPoint offset) {
            const QRect r = view.visualRect(model.index(row, column));
            return shot.pixel(view.viewport()->mapTo(&view, r.topLeft() + offset));
        };
        // The changed cell's background, at its left edge (the text is right-aligned).
        const QRgb changed = cellPixel(1, 1, QPoint(2, 2));
        const QRgb plain = cellPixel(1, 2, QPoint(2, 2));
        QVERIFY(changed != plain);
        QVERIFY(qRed(changed) > qBlue(changed)); // amber, not a blue selection
        // Text was drawn: some dark pixels in a cell holding "15000.5".
        const QRect r = view.visualRect(model.index(3, 3));
        int dark = 0;
        for (int y = r.top(); y <= r.bottom(); ++y) {
            for (int x = r.left(); x <= r.right(); ++x) {
                dark += qGray(shot.pixel(view.viewport()->mapTo(&view, QPoint(x, y)))) < 100;
            }
        }
        QVERIFY(dark > 10);
    }

    // ---- statistics ---------------------------------------------------

    void stats()
    {
        auto f = makeBuffer(QStringLiteral("f"), DType::Float32, {8});
        const double values[8] = {1, 2, kNan, kInf, -kInf, 3, -4, kNan};
        fill(*f, [&](qint64 k) { return values[k]; });
        BufferStats s = computeBufferStats(*f);
        QCOMPARE(s.min, -4.0);
        QCOMPARE(s.max, 3.0);
        QCOMPARE(s.mean, 0.5);
        QCOMPARE(s.nanCount, qint64(2));
        QCOMPARE(s.infCount, qint64(2));
        QCOMPARE(s.count, qint64(8));
        QCOMPARE(s.finiteCount(), qint64(4));

        auto i = makeBuffer(QStringLiteral("i"), DType::Int16, {4});
        const double ints[4] = {-5, 10, 0, 7};
        fill(*i, [&](qint64 k) { return ints[k]; });
        s = computeBufferStats(*i);
        QCOMPARE(s.min, -5.0);
        QCOMPARE(s.max, 10.0);
        QCOMPARE(s.mean, 3.0);
        QCOMPARE(s.nanCount + s.infCount, qint64(0));

        auto v = makeBuffer(QStringLiteral("v"), DType::Float2, {3});
        const double pooled[6] = {1, 2, 3, 4, 5, kNan};
        fill(*v, [&](qint64 k) { return pooled[k]; });
        s = computeBufferStats(*v);
        QCOMPARE(s.min, 1.0);
        QCOMPARE(s.max, 5.0);
        QCOMPARE(s.mean, 3.0);
        QCOMPARE(s.nanCount, qint64(1));
        QCOMPARE(s.count, qint64(6));

        auto h = makeBuffer(QStringLiteral("h"), DType::Float16, {3});
        const double halves[3] = {0.5, -2, kInf};
        fill(*h, [&](qint64 k) { return halves[k]; });
        s = computeBufferStats(*h);
        QCOMPARE(s.min, -2.0);
        QCOMPARE(s.max, 0.5);
        QCOMPARE(s.mean, -0.75);
        QCOMPARE(s.infCount, qint64(1));

        auto d = makeBuffer(QStringLiteral("d"), DType::Float64, {3});
        fill(*d, [](qint64) { return kNan; });
        s = computeBufferStats(*d);
        QVERIFY(std::isnan(s.min) && std::isnan(s.max) && std::isnan(s.mean));
        QCOMPARE(s.nanCount, qint64(3));

        // Across block boundaries, with one NaN in the middle.
        auto big = makeBuffer(QStringLiteral("big"), DType::Float32, {10000});
        fill(*big, [](qint64 k) { return double(k); });
        floats(*big)[5000] = float(kNan);
        s = computeBufferStats(*big);
        QCOMPARE(s.min, 0.0);
        QCOMPARE(s.max, 9999.0);
        QCOMPARE(s.nanCount, qint64(1));
        QVERIFY(qFuzzyCompare(s.mean, (49995000.0 - 5000.0) / 9999.0));
    }

    // ---- colormaps ----------------------------------------------------

    void colormapEndpoints()
    {
        QCOMPARE(colormapTable(Colormap::Grayscale)[0], qRgb(0, 0, 0));
        QCOMPARE(colormapTable(Colormap::Grayscale)[255], qRgb(255, 255, 255));
        QCOMPARE(colormapTable(Colormap::Viridis)[0], qRgb(68, 1, 84));      // #440154
        QCOMPARE(colormapTable(Colormap::Viridis)[128], qRgb(33, 145, 140)); // #21918c, matplotlib's middle
        QCOMPARE(colormapTable(Colormap::Viridis)[255], qRgb(253, 231, 37)); // #fde725
        QCOMPARE(colormapTable(Colormap::Diverging)[0], qRgb(0, 0, 255));
        QCOMPARE(colormapTable(Colormap::Diverging)[128], qRgb(255, 255, 255));
        QCOMPARE(colormapTable(Colormap::Diverging)[255], qRgb(255, 0, 0));

        const ColorMapper v(Colormap::Viridis, 0, 10);
        QCOMPARE(v.map(0), qRgb(68, 1, 84));
        QCOMPARE(v.map(10), qRgb(253, 231, 37));
        QCOMPARE(v.map(-5), qRgb(68, 1, 84));
        QCOMPARE(v.map(float(kInf)), qRgb(253, 231, 37));
        QCOMPARE(v.map(float(-kInf)), qRgb(68, 1, 84));
        QCOMPARE(v.map(float(kNan)), colormapNanColor(Colormap::Viridis));
        QCOMPARE(v.indexOf(5), 128);

        // Diverging: centred on 0 whatever the data's range.
        const ColorMapper d(Colormap::Diverging, -2, 8);
        QCOMPARE(d.low(), -8.0);
        QCOMPARE(d.high(), 8.0);
        QCOMPARE(d.map(0), qRgb(255, 255, 255));
        QCOMPARE(d.map(8), qRgb(255, 0, 0));
        QCOMPARE(d.map(-8), qRgb(0, 0, 255));
        QCOMPARE(d.map(float(kNan)), colormapNanColor(Colormap::Diverging));

        const ColorMapper flat(Colormap::Grayscale, 3, 3);
        QCOMPARE(flat.map(3), qRgb(0, 0, 0));
        QCOMPARE(flat.map(4), qRgb(255, 255, 255));
    }

    // ---- the image view -----------------------------------------------

    void hover_data()
    {
        QTest::addColumn<double>("zoom");
        QTest::addColumn<QPointF>("origin");
        QTest::addColumn<QPoint>("pos");
        QTest::addColumn<QString>("text");
        const QString tail = QStringLiteral(" (if one thread per element)");
        QTest::newRow("zoom 10") << 10.0 << QPointF(0, 0) << QPoint(35, 22)
                                 << "x 3, y 2, index 23: 23.5 | blockIdx (0, 0, 0), threadIdx (3, 2, 0)" + tail;
        QTest::newRow("zoom 10, second block")
            << 10.0 << QPointF(0, 0) << QPoint(95, 55)
            << "x 9, y 5, index 59: 59.5 | blockIdx (1, 1, 0), threadIdx (1, 1, 0)" + tail;
        QTest::newRow("zoom 4, offset") << 4.0 << QPointF(20, 10) << QPoint(49, 24)
                                        << "x 7, y 3, index 37: 37.5 | blockIdx (0, 0, 0), threadIdx (7, 3, 0)" + tail;
        QTest::newRow("zoom 0.5") << 0.5 << QPointF(0, 0) << QPoint(3, 1)
                                  << "x 7, y 3, index 37: 37.5 | blockIdx (0, 0, 0), threadIdx (7, 3, 0)" + tail;
        QTest::newRow("zoom 50, panned") << 50.0 << QPointF(-100, -50) << QPoint(60, 30)
                                         << "x 3, y 1, index 13: 13.5 | blockIdx (0, 0, 0), threadIdx (3, 1, 0)" + tail;
        QTest::newRow("left of the image") << 10.0 << QPointF(20, 0) << QPoint(5, 5) << QString();
        QTest::newRow("below the image") << 10.0 << QPointF(0, 0) << QPoint(5, 65) << QString();
    }
    void hover()
    {
        QFETCH(double, zoom);
        QFETCH(QPointF, origin);
        QFETCH(QPoint, pos);
        QFETCH(QString, text);
        auto b = makeBuffer(QStringLiteral("img"), DType::Float32, {6, 10});
        fill(*b, [](qint64 k) { return double(k) + 0.5; });
        ImageView view;
        view.resize(200, 100);
        view.setBuffer(b);
        view.setLaunch({2, 2, 1}, {8, 4, 1});
        view.setView(zoom, origin);
        QCOMPARE(view.hoverText(pos), text);
    }

    void panAndZoomInteractively()
    {
        auto b = makeBuffer(QStringLiteral("img"), DType::Float32, {6, 10});
        fill(*b, [](qint64 k) { return double(k) + 0.5; });
        ImageView view;
        view.resize(200, 100);
        view.setBuffer(b);
        view.setLaunch({2, 2, 1}, {8, 4, 1});
        const QString tail = QStringLiteral(" (if one thread per element)");

        view.setView(10, QPointF(0, 0));
        view.panBy(QPointF(-30, -20));
        QCOMPARE(view.origin(), QPointF(-30, -20));
        QCOMPARE(view.hoverText(QPoint(5, 5)),
                 "x 3, y 2, index 23: 23.5 | blockIdx (0, 0, 0), threadIdx (3, 2, 0)" + tail);

        // Zoom keeps the point under the cursor.
        view.setView(10, QPointF(0, 0));
        view.zoomAt(2, QPointF(50, 50));
        QCOMPARE(view.zoom(), 20.0);
        QCOMPARE(view.origin(), QPointF(-50, -50));
        QCOMPARE(view.hoverText(QPoint(50, 50)),
                 "x 5, y 5, index 55: 55.5 | blockIdx (0, 1, 0), threadIdx (5, 1, 0)" + tail);

        // The wheel: one notch is 1.25 times, around the cursor.
        view.setView(10, QPointF(0, 0));
        QWheelEvent wheel(QPointF(40, 40), view.mapToGlobal(QPointF(40, 40)), QPoint(), QPoint(0, 120), Qt::NoButton,
                          Qt::NoModifier, Qt::NoScrollPhase, false);
        QCoreApplication::sendEvent(&view, &wheel);
        QCOMPARE(view.zoom(), 12.5);
        QCOMPARE(view.origin(), QPointF(-10, -10));

        // Dragging pans, and the hover signal follows the cursor.
        view.setView(10, QPointF(0, 0));
        QSignalSpy hovered(&view, &ImageView::hovered);
        sendMouse(&view, QEvent::MouseButtonPress, QPointF(50, 50), Qt::LeftButton, Qt::LeftButton);
        sendMouse(&view, QEvent::MouseMove, QPointF(70, 60), Qt::NoButton, Qt::LeftButton);
        sendMouse(&view, QEvent::MouseButtonRelease, QPointF(70, 60), Qt::LeftButton, Qt::NoButton);
        QCOMPARE(view.origin(), QPointF(20, 10));
        QVERIFY(!hovered.isEmpty());
        // (70, 60) is image point (5.05, 5.05) after the pan.
        QCOMPARE(hovered.last().first().toString(),
                 "x 5, y 5, index 55: 55.5 | blockIdx (0, 1, 0), threadIdx (5, 1, 0)" + tail);
        sendMouse(&view, QEvent::MouseMove, QPointF(33, 24), Qt::NoButton, Qt::NoButton);
        QCOMPARE(hovered.last().first().toString(),
                 "x 1, y 1, index 11: 11.5 | blockIdx (0, 0, 0), threadIdx (1, 1, 0)" + tail);
    }

    void hoverThreads()
    {
        const QString tail = QStringLiteral(" (if one thread per element)");
        // A 1-D buffer shown 10 wide: the thread comes from the flat index.
        auto line = makeBuffer(QStringLiteral("line"), DType::Float32, {25});
        fill(*line, [](qint64 k) { return double(k) + 0.5; });
        ImageView view;
        view.resize(200, 100);
        view.setWidth1D(10);
        view.setBuffer(line);
        view.setView(10, QPointF(0, 0));
        QCOMPARE(view.hoverText(QPoint(35, 15)), QString("x 3, y 1, index 13: 13.5"));
        view.setLaunch({4, 1, 1}, {8, 1, 1});
        QCOMPARE(view.hoverText(QPoint(35, 15)),
                 "x 3, y 1, index 13: 13.5 | blockIdx (1, 0, 0), threadIdx (5, 0, 0)" + tail);
        QCOMPARE(view.hoverText(QPoint(75, 25)), QString()); // index 27: past the end
        view.setLaunch({1, 1, 1}, {8, 1, 1});
        QCOMPARE(view.hoverText(QPoint(35, 15)),
                 "x 3, y 1, index 13: 13.5 | no thread of grid (1, 1, 1) x block (8, 1, 1)" + tail);

        // A 2-D buffer under a 1-D launch: flat index again.
        auto img = makeBuffer(QStringLiteral("img"), DType::Float32, {6, 10});
        fill(*img, [](qint64 k) { return double(k) + 0.5; });
        view.setWidth1D(0);
        view.setBuffer(img);
        view.setView(10, QPointF(0, 0));
        view.setLaunch({8, 1, 1}, {32, 1, 1});
        QCOMPARE(view.hoverText(QPoint(95, 55)),
                 "x 9, y 5, index 59: 59.5 | blockIdx (1, 0, 0), threadIdx (27, 0, 0)" + tail);

        // A 3-D buffer under a 2-D launch: slices stacked along y.
        auto vol = makeBuffer(QStringLiteral("vol"), DType::Float32, {3, 4, 5});
        fill(*vol, [](qint64 k) { return double(k); });
        view.setBuffer(vol);
        view.setSlice(2);
        view.setView(10, QPointF(0, 0));
        view.setLaunch({1, 2, 1}, {8, 8, 1});
        QCOMPARE(view.hoverText(QPoint(15, 35)),
                 "x 1, y 3, z 2, index 56: 56 | blockIdx (0, 1, 0), threadIdx (1, 3, 0)" + tail);
        view.setLaunch({1, 1, 3}, {8, 4, 1});
        QCOMPARE(view.hoverText(QPoint(15, 35)),
                 "x 1, y 3, z 2, index 56: 56 | blockIdx (0, 0, 2), threadIdx (1, 3, 0)" + tail);

        // RGBA: a pixel is one element, with every channel in the value.
        auto rgba = makeBuffer(QStringLiteral("rgba"), DType::UChar4, {2, 2});
        fill(*rgba, [](qint64 k) { return double(k * 10); });
        view.setBuffer(rgba);
        view.clearLaunch();
        view.setView(10, QPointF(0, 0));
        QCOMPARE(view.hoverText(QPoint(15, 5)), QString("x 1, y 0, index 1: (40, 50, 60, 70)"));
        auto bytes = makeBuffer(QStringLiteral("bytes"), DType::UInt8, {2, 2, 4});
        fill(*bytes, [](qint64 k) { return double(k); });
        view.setBuffer(bytes);
        view.setView(10, QPointF(0, 0));
        QCOMPARE(view.hoverText(QPoint(5, 15)), QString("x 0, y 1, index 8: (8, 9, 10, 11)"));
    }

    void threadMapping()
    {
        ThreadIndex t = threadForElement({4, 1, 1}, {256, 1, 1}, 1, {700, 0, 0}, {1000, 1, 1}, 700);
        QVERIFY(t.covered);
        QCOMPARE(t.blockIdx, (Dim3{2, 0, 0}));
        QCOMPARE(t.threadIdx, (Dim3{188, 0, 0}));
        t = threadForElement({2, 1, 1}, {256, 1, 1}, 1, {700, 0, 0}, {1000, 1, 1}, 700);
        QVERIFY(!t.covered);
    }

    void renderedColors_data()
    {
        QTest::addColumn<bool>("cached");
        QTest::newRow("cached") << true;
        QTest::newRow("converted per paint") << false;
    }
    void renderedColors()
    {
        QFETCH(bool, cached);
        auto b = makeBuffer(QStringLiteral("img"), DType::Float32, {100, 200});
        fill(*b, [](qint64 k) { return double(k % 200 + k / 200); }); // x + y: 0 .. 298
        ImageView view;
        view.resize(200, 100);
        view.setCacheLimit(cached ? 1 << 20 : 0);
        view.setLegendVisible(false);
        view.setBuffer(b);
        view.setColormap(Colormap::Grayscale);
        QCOMPARE(view.range(), (std::pair<double, double>(0, 298)));
        const ColorMapper gray(Colormap::Grayscale, 0, 298);

        view.setView(10, QPointF(0, 0));
        QImage shot = view.grab().toImage();
        QCOMPARE(view.isCached(), cached);
        QCOMPARE(shot.pixel(35, 25), gray.map(3 + 2));
        QCOMPARE(shot.pixel(199, 99), gray.map(19 + 9));

        // Zoomed out: each screen pixel shows the image pixel under its centre.
        view.setView(0.5, QPointF(0, 0));
        shot = view.grab().toImage();
        QCOMPARE(shot.pixel(10, 5), gray.map(21 + 11));
        QCOMPARE(shot.pixel(99, 49), gray.map(199 + 99));
        QCOMPARE(shot.pixel(150, 20), qRgb(48, 48, 48)); // background right of the image

        view.setRange(100, 200);
        shot = view.grab().toImage();
        QCOMPARE(shot.pixel(10, 5), qRgb(0, 0, 0));
        QCOMPARE(shot.pixel(99, 49), qRgb(255, 255, 255));
    }

    void rgbaChannels()
    {
        auto b = makeBuffer(QStringLiteral("rgba"), DType::UChar4, {2, 2});
        const double px[4] = {10, 20, 30, 255};
        for (int c = 0; c < 4; ++c) {
            setComponent(*b, 4 + c, px[c]); // pixel (1, 0)
        }
        ImageView view;
        view.resize(40, 40);
        view.setBuffer(b);
        view.setView(10, QPointF(0, 0));
        QCOMPARE(view.grab().toImage().pixel(15, 5), qRgb(10, 20, 30));
        view.setChannels(ImageView::Red);
        QCOMPARE(view.grab().toImage().pixel(15, 5), qRgb(10, 10, 10));
        view.setChannels(ImageView::Red | ImageView::Green);
        QCOMPARE(view.grab().toImage().pixel(15, 5), qRgb(10, 20, 0));

        auto f = makeBuffer(QStringLiteral("f4"), DType::Float4, {1, 1});
        const double fx[4] = {1, 0.5, 0, 1};
        fill(*f, [&](qint64 k) { return fx[k]; });
        view.setBuffer(f);
        view.setChannels(ImageView::AllChannels);
        view.setView(10, QPointF(0, 0));
        QCOMPARE(view.grab().toImage().pixel(5, 5), qRgb(255, 128, 0));
    }

    // ---- the diff -----------------------------------------------------

    void diffFindsPlantedMismatches()
    {
        auto a = makeBuffer(QStringLiteral("a"), DType::Float32, {1000});
        auto b = makeBuffer(QStringLiteral("b"), DType::Float32, {1000});
        fill(*a, [](qint64 k) { return double(k); });
        fill(*b, [](qint64 k) { return double(k); });
        floats(*b)[3] = 3.5f;
        floats(*b)[17] = 17.001f;
        floats(*b)[500] = float(kNan);
        floats(*b)[999] = 1001;
        floats(*a)[42] = float(kNan); // NaN on both sides is equal
        floats(*b)[42] = float(kNan);

        DiffView view;
        view.compare(a, b);
        QList<qint64> found;
        for (const DiffMismatch &m : view.result().first) {
            found << m.index;
        }
        QCOMPARE(found, (QList<qint64>{3, 17, 500, 999}));
        QCOMPARE(view.result().mismatchCount, qint64(4));
        QCOMPARE(view.result().compared, qint64(1000));
        QVERIFY(view.result().infiniteError);
        QCOMPARE(view.result().maxError, 2.0);
        QCOMPARE(view.result().first[0].a, 3.0);
        QCOMPARE(view.result().first[0].b, 3.5);
        QCOMPARE(view.result().first[0].absError, 0.5);
        QCOMPARE(view.mismatchTable()->rowCount(), 4);
        QCOMPARE(view.mismatchTable()->item(0, 0)->text(), QString("3"));
        QCOMPARE(view.mismatchTable()->item(0, 1)->text(), QString("3"));
        QCOMPARE(view.mismatchTable()->item(0, 2)->text(), QString("3.5"));
        QCOMPARE(view.mismatchTable()->item(0, 3)->text(), QString("0.5"));
        QCOMPARE(view.mismatchTable()->item(2, 2)->text(), QString("nan"));
        QCOMPARE(view.mismatchTable()->item(2, 3)->text(), QString("inf"));
        QCOMPARE(view.summary(),
                 QString("4 of 1000 elements differ (|a-b| > 0); largest |a-b| inf (NaN or Inf on one side)"));

        view.setTolerance(0.01);
        found.clear();
        for (const DiffMismatch &m : view.result().first) {
            found << m.index;
        }
        QCOMPARE(found, (QList<qint64>{3, 500, 999}));

        view.setErrorKind(ErrorKind::Relative);
        view.setTolerance(0.01);
        found.clear();
        for (const DiffMismatch &m : view.result().first) {
            found << m.index;
        }
        QCOMPARE(found, (QList<qint64>{3, 500})); // 999: 2 / 1001 is under 1 %
        QVERIFY(qFuzzyCompare(view.result().first[0].relError, 0.5 / 3.5));

        // The heatmap's hover line gives both sides.
        view.setErrorKind(ErrorKind::Absolute);
        ImageView *heat = view.heatmap();
        heat->resize(400, 400);
        heat->setView(10, QPointF(0, 0)); // 1000 elements: 32 wide
        QCOMPARE(heat->hoverText(QPoint(35, 5)),
                 QString("x 3, y 0, index 3: a 3, b 3.5, |a-b| 0.5, relative 0.142857"));
    }

    void heatmapKeepsSinglePixels()
    {
        auto a = makeBuffer(QStringLiteral("a"), DType::Float32, {512, 512});
        auto b = makeBuffer(QStringLiteral("b"), DType::Float32, {512, 512});
        floats(*b)[301 * 512 + 203] = 1; // one pixel of 512 x 512
        DiffView view;
        view.compare(a, b);
        ImageView *heat = view.heatmap();
        heat->resize(200, 200);
        heat->setLegendVisible(false);
        heat->setView(0.25, QPointF(0, 0)); // 16 image pixels per screen pixel
        const QRgb top = colormapTable(Colormap::Viridis)[255];
        QImage shot = heat->grab().toImage();
        QCOMPARE(shot.pixel(203 / 4, 301 / 4), top);
        QCOMPARE(shot.pixel(10, 10), colormapTable(Colormap::Viridis)[0]);
        // Nearest-neighbour sampling would have dropped it.
        heat->setReduceByMax(false);
        shot = heat->grab().toImage();
        QCOMPARE(shot.pixel(203 / 4, 301 / 4), colormapTable(Colormap::Viridis)[0]);
    }

    void diffListsTheFirstHundred()
    {
        auto a = makeBuffer(QStringLiteral("a"), DType::Int32, {30, 10});
        auto b = makeBuffer(QStringLiteral("b"), DType::Int32, {30, 10});
        fill(*b, [](qint64 k) { return k % 2 == 0 ? 1.0 : 0.0; }); // 150 differ
        DiffView view;
        view.compare(a, b);
        QCOMPARE(view.result().mismatchCount, qint64(150));
        QCOMPARE(view.result().first.size(), qsizetype(DiffView::kMaxListed));
        QCOMPARE(view.result().first.last().index, qint64(198));
        QCOMPARE(view.mismatchTable()->rowCount(), DiffView::kMaxListed);

        auto other = makeBuffer(QStringLiteral("c"), DType::Int32, {10, 30});
        view.compare(a, other);
        QCOMPARE(view.result().compared, qint64(0));
        QCOMPARE(view.summary(), QString("a [30, 10] and c [10, 30] differ in shape"));
    }

    void diffAgainstSnapshot()
    {
        auto a = makeBuffer(QStringLiteral("a"), DType::Float64, {4, 4});
        fill(*a, [](qint64 k) { return double(k); });
        BufferGridModel model;
        model.setBuffer(a);
        QVERIFY(model.takeSnapshot());
        static_cast<double *>(a->memory.data())[6] = -1;
        static_cast<double *>(a->memory.data())[15] = 100;
        DiffView view;
        view.compareWithSnapshot(a, model.snapshot());
        QCOMPARE(view.result().mismatchCount, qint64(2));
        QCOMPARE(view.result().first[0].index, qint64(6));
        QCOMPARE(view.result().first[0].b, 6.0);
        QCOMPARE(view.result().first[1].index, qint64(15));
        view.compareWithSnapshot(a, nullptr);
        QVERIFY(view.summary().startsWith("No copy of a from before the run"));
    }

    // ---- the whole panel ----------------------------------------------

    void inspector()
    {
        auto a = makeBuffer(QStringLiteral("a"), DType::Float32, {8});
        const double values[8] = {1, 2, kNan, kInf, 3, -4, 0, 0};
        fill(*a, [&](qint64 k) { return values[k]; });
        auto m = makeBuffer(QStringLiteral("m"), DType::Int32, {3, 4});
        fill(*m, [](qint64 k) { return double(k); });
        auto m2 = makeBuffer(QStringLiteral("m2"), DType::Int32, {3, 4});
        fill(*m2, [](qint64 k) { return double(k); });
        BufferInspector inspector;
        inspector.setBuffers({a, m, m2});
        QCOMPARE(inspector.currentBufferName(), QString("a"));
        QCOMPARE(inspector.statsText(), QString("min -4  max 3  mean 0.333333  NaN 1  Inf 1"));
        auto *chooser = inspector.findChild<QComboBox *>("bufferChooser");
        QVERIFY(chooser);
        QCOMPARE(chooser->count(), 3);

        inspector.showBuffer("m");
        QCOMPARE(inspector.currentBufferName(), QString("m"));
        QCOMPARE(inspector.statsText(), QString("min 0  max 11  mean 5.5  NaN 0  Inf 0"));
        QCOMPARE(inspector.gridModel()->rowCount(), 3);

        // Setting the same buffers again touches nothing.
        QSignalSpy reset(inspector.gridModel(), &QAbstractItemModel::modelReset);
        inspector.setBuffers({a, m, m2});
        QCOMPARE(reset.count(), 0);

        // A run changes two elements: they are highlighted afterwards.
        inspector.beforeRun();
        QVERIFY(inspector.snapshotOf("m"));
        QVERIFY(inspector.snapshotOf("a"));
        static_cast<qint32 *>(m->memory.data())[5] = -7;
        static_cast<qint32 *>(m->memory.data())[11] = 70;
        ++m->generation;
        inspector.afterRun();
        BufferGridModel *model = inspector.gridModel();
        QVERIFY(model->data(model->indexOfElement(5), Qt::BackgroundRole).isValid());
        QVERIFY(model->data(model->indexOfElement(11), Qt::BackgroundRole).isValid());
        QVERIFY(!model->data(model->indexOfElement(4), Qt::BackgroundRole).isValid());
        QCOMPARE(inspector.statsText(), QString("min -7  max 70  mean 9.41667  NaN 0  Inf 0"));

        // Go to, by coordinates and by flat index.
        QVERIFY(inspector.goTo("2, 3"));
        QCOMPARE(inspector.gridView()->currentIndex(), model->indexOfElement(11));
        QVERIFY(inspector.goTo("[1,1]"));
        QCOMPARE(inspector.gridView()->currentIndex(), model->indexOfElement(5));
        QVERIFY(inspector.goTo("6"));
        QCOMPARE(inspector.gridView()->currentIndex(), model->indexOfElement(6));
        QVERIFY(!inspector.goTo("12"));
        QVERIFY(!inspector.goTo("3, 0"));
        QVERIFY(!inspector.goTo("x"));

        // The diff tab: against the previous run, then against m2.
        inspector.setCurrentTab(BufferInspector::Tab::Diff);
        QCOMPARE(inspector.diffView()->result().mismatchCount, qint64(2));
        auto *against = inspector.findChild<QComboBox *>("against");
        QVERIFY(against);
        QCOMPARE(against->count(), 2); // itself before the run, m2
        against->setCurrentIndex(1);
        QCOMPARE(inspector.diffView()->result().mismatchCount, qint64(2));
        QCOMPARE(inspector.diffView()->result().first[1].b, 11.0);

        // Snapshots off: nothing is copied, nothing highlighted.
        inspector.setSnapshotsEnabled(false);
        inspector.beforeRun();
        QVERIFY(!inspector.snapshotOf("m"));
        inspector.afterRun();
        QVERIFY(!model->data(model->indexOfElement(5), Qt::BackgroundRole).isValid());

        // Contents changed without a run (a re-init): refreshed from the event loop.
        static_cast<qint32 *>(m->memory.data())[0] = 1000;
        ++m->generation;
        inspector.setBuffers({a, m, m2});
        QTRY_COMPARE(inspector.statsText(), QString("min -7  max 1000  mean 92.75  NaN 0  Inf 0"));
    }

    void inspectorStatsOffThread()
    {
        const qint64 n = BufferInspector::kSyncStatsComponents + 16;
        auto big = makeBuffer(QStringLiteral("big"), DType::Float32, {n});
        float *f = floats(*big);
        for (qint64 i = 0; i < n; ++i) {
            f[i] = 1;
        }
        f[n - 1] = 5;
        BufferInspector inspector;
        inspector.setBuffers({big});
        QVERIFY(inspector.statsText().startsWith("Computing statistics"));
        QTRY_COMPARE_WITH_TIMEOUT(inspector.statsText(), QString("min 1  max 5  mean 1  NaN 0  Inf 0"), 20000);
    }

    void screenshot()
    {
        auto img = makeBuffer(QStringLiteral("field"), DType::Float32, {512, 512});
        float *f = floats(*img);
        for (int y = 0; y < 512; ++y) {
            for (int x = 0; x < 512; ++x) {
                f[y * 512 + x] = float(std::sin(x / 40.0) * std::cos(y / 55.0) + 0.002 * (x - y));
            }
        }
        auto other = makeBuffer(QStringLiteral("out"), DType::Float32, {512, 512});
        BufferInspector inspector;
        inspector.resize(1000, 760);
        inspector.setBuffers({img, other});
        inspector.setLaunch({32, 32, 1}, {16, 16, 1});
        inspector.showImage(true);
        inspector.show();
        QVERIFY(QTest::qWaitForWindowExposed(&inspector));
        ImageView *view = inspector.imageView();
        QCOMPARE(view->colormap(), Colormap::Viridis);
        // Fitted: whole image in view.
        QCoreApplication::processEvents();
        view->grab();
        QVERIFY(view->zoom() > 0.5);
        // The screen pixel whose centre lies in image pixel (300, 200).
        const QPointF centre = view->origin() + QPointF(300.5, 200.5) * view->zoom();
        const QPointF at(std::floor(centre.x()), std::floor(centre.y()));
        sendMouse(view, QEvent::MouseMove, at, Qt::NoButton, Qt::NoButton);
        const QString line = inspector.hoverLine();
        QVERIFY2(line.startsWith("x 300, y 200, index 102700: "), qPrintable(line));
        QVERIFY2(line.endsWith(" | blockIdx (18, 12, 0), threadIdx (12, 8, 0) (if one thread per element)"),
                 qPrintable(line));
        QCoreApplication::processEvents(); // lets the toolbar lay itself out
        QVERIFY(inspector.grab().save("/tmp/inspector.png"));

        // Zoomed in: values inside the pixels.
        view->setView(64, QPointF(view->width() / 2.0 - 300.5 * 64, view->height() / 2.0 - 200.5 * 64));
        sendMouse(view, QEvent::MouseMove, QPointF(view->width() / 2, view->height() / 2), Qt::NoButton, Qt::NoButton);
        QVERIFY(inspector.hoverLine().startsWith("x 300, y 200, index 102700: "));
        QCoreApplication::processEvents();
        QVERIFY(inspector.grab().save("/tmp/inspector_zoomed.png"));

        // The grid and the diff of the same panel, for a look.
        inspector.beforeRun();
        for (int i = 0; i < 512 * 512; i += 977) {
            f[i] += 0.25f;
        }
        ++img->generation;
        inspector.afterRun();
        inspector.setCurrentTab(BufferInspector::Tab::Grid);
        QVERIFY(inspector.goTo("976")); // next to a changed cell
        QCoreApplication::processEvents();
        QVERIFY(inspector.grab().save("/tmp/inspector_grid.png"));
        inspector.setCurrentTab(BufferInspector::Tab::Diff);
        QCOMPARE(inspector.diffView()->result().mismatchCount, qint64((512 * 512 + 976) / 977));
        QCoreApplication::processEvents();
        QVERIFY(inspector.grab().save("/tmp/inspector_diff.png"));
    }
};

QTEST_MAIN(TestInspector)
#include "tst_inspector.moc"
