// Sweep axes (engine/sweep/sweep.h): parsing, expansion (cartesian and
// zipped), applying a point to a project, the compile key, what counts as a
// skip; and `kpg sweep`'s usage errors and its behaviour without a GPU.

#include "project/projectio.h"
#include "sweep/sweep.h"
#include "sweep/sweeprunner.h"
#include "testutil.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace Kp;

namespace {

Project templatedProject()
{
    Project p;
    p.scalars << ScalarSpec{QStringLiteral("n"), DType::Int32, 1024, {}};
    LaunchStep a;
    a.kernel = QStringLiteral("matmul<16, float>");
    a.grid = {QStringLiteral("ceil_div(n, block.x)")};
    a.block = {QStringLiteral("256")};
    LaunchStep b;
    b.kernel = QStringLiteral("finish");
    b.grid = {QStringLiteral("1")};
    b.block = {QStringLiteral("32"), QStringLiteral("4")};
    p.launches << a << b;
    p.compile.defines = {QStringLiteral("TILE=8"), QStringLiteral("USE_X"), QStringLiteral("TILEX=3")};
    p.compile.nameExpressions = {QStringLiteral("matmul<16, float>")};
    return p;
}

SweepAxis axis(const QString &spec)
{
    const Result<SweepAxis> a = parseSweepAxis(spec);
    if (!a) {
        qFatal("%s", qPrintable(a.error().message));
    }
    return *a;
}

} // namespace

class TestSweep : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void parse_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("key");
        QTest::addColumn<int>("component");
        QTest::addColumn<QStringList>("values");
        QTest::newRow("block list") << "block.x=128,256, 512" << int(SweepAxis::Kind::Block) << "" << 0
                                    << QStringList{"128", "256", "512"};
        QTest::newRow("block.y range") << "block.y=1:4" << int(SweepAxis::Kind::Block) << "" << 1
                                       << QStringList{"1", "2", "3", "4"};
        QTest::newRow("stepped range") << "block.z=2:11:3" << int(SweepAxis::Kind::Block) << "" << 2
                                       << QStringList{"2", "5", "8", "11"};
        QTest::newRow("pow2") << "block.x=32:1024:pow2" << int(SweepAxis::Kind::Block) << "" << 0
                              << QStringList{"32", "64", "128", "256", "512", "1024"};
        QTest::newRow("pow2 from a non-power")
            << "n=100:1000:pow2" << int(SweepAxis::Kind::Scalar) << "n" << 0 << QStringList{"128", "256", "512"};
        QTest::newRow("grid expressions keep their commas")
            << "grid.x=ceil_div(n, block.x),1024, min(64, n)" << int(SweepAxis::Kind::Grid) << "" << 0
            << QStringList{"ceil_div(n, block.x)", "1024", "min(64, n)"};
        QTest::newRow("define") << "define.TILE=8,16,32" << int(SweepAxis::Kind::Define) << "TILE" << 0
                                << QStringList{"8", "16", "32"};
        QTest::newRow("template") << "template.1=float,double" << int(SweepAxis::Kind::Template) << "" << 1
                                  << QStringList{"float", "double"};
        QTest::newRow("scalar. prefix") << "scalar.alpha=0.5,2.5e3" << int(SweepAxis::Kind::Scalar) << "alpha" << 0
                                        << QStringList{"0.5", "2.5e3"};
        QTest::newRow("negative range") << "offset=-2:1" << int(SweepAxis::Kind::Scalar) << "offset" << 0
                                        << QStringList{"-2", "-1", "0", "1"};
        // Issue 28: ranges at the ends of the 64-bit range end, with their own values.
        QTest::newRow("range ending at INT64_MAX")
            << "n=9223372036854775806:9223372036854775807" << int(SweepAxis::Kind::Scalar) << "n" << 0
            << QStringList{"9223372036854775806", "9223372036854775807"};
        QTest::newRow("range starting at INT64_MIN")
            << "n=-9223372036854775808:-9223372036854775807" << int(SweepAxis::Kind::Scalar) << "n" << 0
            << QStringList{"-9223372036854775808", "-9223372036854775807"};
        QTest::newRow("step past INT64_MAX")
            << "n=9223372036854775800:9223372036854775807:5" << int(SweepAxis::Kind::Scalar) << "n" << 0
            << QStringList{"9223372036854775800", "9223372036854775805"};
        QTest::newRow("pow2 up to INT64_MAX")
            << "n=4611686018427387903:9223372036854775807:pow2" << int(SweepAxis::Kind::Scalar) << "n" << 0
            << QStringList{"4611686018427387904"};
    }
    void parse()
    {
        QFETCH(QString, spec);
        QFETCH(int, kind);
        QFETCH(QString, key);
        QFETCH(int, component);
        QFETCH(QStringList, values);
        const Result<SweepAxis> a = parseSweepAxis(spec);
        QVERIFY2(a, qPrintable(a ? QString() : a.error().message));
        QCOMPARE(int(a->kind), kind);
        QCOMPARE(a->key, key);
        QCOMPARE(a->component, component);
        QCOMPARE(a->values, values);
        QCOMPARE(a->recompiles(), kind == int(SweepAxis::Kind::Define) || kind == int(SweepAxis::Kind::Template));
    }

    void parseErrors_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("message");
        QTest::newRow("no =") << "block.x"
                              << "--axis 'block.x': write NAME=V1,V2,... or NAME=A:B[:STEP|:pow2]";
        QTest::newRow("no values") << "block.x="
                                   << "--axis block.x: no values after '='";
        QTest::newRow("bad component") << "block.w=1,2"
                                       << "--axis block.w: the block has x, y and z, not 'w'";
        QTest::newRow("block zero") << "block.x=0,32"
                                    << "'0' is not a block extent (a whole number from 1 to";
        QTest::newRow("block word") << "block.x=big"
                                    << "'big' is not a block extent";
        QTest::newRow("backwards") << "block.x=64:32"
                                   << "the range 64:32 runs backwards (64 > 32)";
        QTest::newRow("step 0") << "block.x=1:8:0"
                                << "the step of 1:8:0 must be at least 1";
        QTest::newRow("no power of two") << "n=-8:0:pow2"
                                         << "-8:0:pow2 holds no power of two";
        QTest::newRow("duplicate value") << "block.x=32,64,32"
                                         << "the value '32' is given twice";
        QTest::newRow("empty value") << "block.x=32,,64"
                                     << "an empty value in '32,,64'";
        QTest::newRow("scalar not a number") << "n=12x"
                                             << "--axis n: '12x' is not a number";
        QTest::newRow("bad macro") << "define.2X=1"
                                   << "'2X' is not a macro name";
        QTest::newRow("bad template index") << "template.a=1"
                                            << "template.I takes the argument's index from 0";
        QTest::newRow("not an axis") << "block-x=1"
                                     << "not an axis; use block.x|y|z";
        QTest::newRow("white space in a define") << "define.T=a b"
                                                 << "'a b' contains white space";
        QTest::newRow("too many values") << "n=1:200000"
                                         << "has more than 100000 values";
        // Issue 28: numbers past the 64-bit range are refused, never read as 0.
        QTest::newRow("start past INT64_MAX")
            << "n=99999999999999999999:1"
            << "--axis n: the start of the range 99999999999999999999:1, 99999999999999999999, is outside the "
               "64-bit range (-9223372036854775808 to 9223372036854775807)";
        QTest::newRow("end past INT64_MAX") << "n=1:99999999999999999999"
                                            << "--axis n: the end of the range 1:99999999999999999999, "
                                               "99999999999999999999, is outside the 64-bit range";
        QTest::newRow("step past INT64_MAX") << "n=1:10:99999999999999999999"
                                             << "the step of the range 1:10:99999999999999999999";
        QTest::newRow("start below INT64_MIN") << "n=-9223372036854775809:0"
                                               << "the start of the range -9223372036854775809:0";
        QTest::newRow("whole 64-bit range") << "n=-9223372036854775808:9223372036854775807"
                                            << "has more than 100000 values (the most an axis may have)";
        QTest::newRow("range to INT64_MAX") << "n=0:9223372036854775807"
                                            << "has more than 100000 values";
        QTest::newRow("block pow2 to INT64_MAX") << "block.x=1:9223372036854775807:pow2"
                                                 << "--axis block.x: '2147483648' is not a block extent";
        QTest::newRow("too many listed values") << "define.X=" + [] {
            QStringList v;
            for (int i = 0; i <= 100000; ++i) {
                v << QString::number(i);
            }
            return v.join(QLatin1Char(','));
        }() << "--axis define.X: 100001 values; an axis has at most 100000";
    }
    void parseErrors()
    {
        QFETCH(QString, spec);
        QFETCH(QString, message);
        const Result<SweepAxis> a = parseSweepAxis(spec);
        QVERIFY(!a);
        QVERIFY2(a.error().message.contains(message), qPrintable(a.error().message));
    }

    void cartesianOrder()
    {
        const QList<SweepAxis> axes{axis("block.x=64,128"), axis("define.TILE=8,16,32")};
        const auto pts = expandSweep(axes, false);
        QVERIFY(pts);
        QCOMPARE(pts->size(), 6);
        // The last axis varies fastest.
        QCOMPARE(pts->at(0).values, (QStringList{"64", "8"}));
        QCOMPARE(pts->at(1).values, (QStringList{"64", "16"}));
        QCOMPARE(pts->at(3).values, (QStringList{"128", "8"}));
        QCOMPARE(pts->at(5).values, (QStringList{"128", "32"}));
        QCOMPARE(sweepPointLabel(axes, pts->at(4)), QStringLiteral("block.x=128 define.TILE=16"));
        QCOMPARE(sweepCompileKey(axes, pts->at(4)), QStringLiteral("define.TILE=16"));
        // Points with the same define share the compile key whatever the block.
        QCOMPARE(sweepCompileKey(axes, pts->at(1)), sweepCompileKey(axes, pts->at(4)));
        QVERIFY(sweepCompileKey(axes, pts->at(0)) != sweepCompileKey(axes, pts->at(1)));
    }

    void zipped()
    {
        const QList<SweepAxis> axes{axis("block.x=64:256:pow2"), axis("n=1000,2000,3000")};
        const auto pts = expandSweep(axes, true);
        QVERIFY(pts);
        QCOMPARE(pts->size(), 3);
        QCOMPARE(pts->at(2).values, (QStringList{"256", "3000"}));
        const auto bad = expandSweep({axis("block.x=64,128"), axis("n=1,2,3")}, true);
        QVERIFY(!bad);
        QVERIFY2(bad.error().message.contains("--zip needs axes of equal length: block.x has 2 values, n has 3"),
                 qPrintable(bad.error().message));
    }

    void expansionLimits()
    {
        const auto big = expandSweep({axis("n=1:1000"), axis("block.x=1:1000")}, false, 100000);
        QVERIFY(!big);
        QVERIFY2(big.error().message.contains("the sweep has 1000000 points"), qPrintable(big.error().message));
        const auto twice = expandSweep({axis("block.x=1,2"), axis("block.x=4")}, false);
        QVERIFY(!twice);
        QVERIFY2(twice.error().message.contains("--axis block.x is given twice"), qPrintable(twice.error().message));
        QCOMPARE(expandSweep({}, false)->size(), 1);
    }

    void applyPoint()
    {
        const Project p = templatedProject();
        const QList<SweepAxis> axes{axis("block.y=2"), axis("grid.x=128"), axis("define.TILE=32"),
                                    axis("template.0=64"), axis("n=4096")};
        const auto applied = applySweepPoint(p, axes, SweepPoint{{"2", "128", "32", "64", "4096"}});
        QVERIFY(applied);
        // block.y: padded where the step gave only x, replaced where it gave y.
        QCOMPARE(applied->launches[0].block, (QStringList{"256", "2"}));
        QCOMPARE(applied->launches[1].block, (QStringList{"32", "2"}));
        QCOMPARE(applied->launches[0].grid, (QStringList{"128"}));
        // TILE replaced; TILEX and USE_X kept.
        QCOMPARE(applied->compile.defines, (QStringList{"USE_X", "TILEX=3", "TILE=32"}));
        QCOMPARE(applied->launches[0].kernel, QStringLiteral("matmul<64, float>"));
        QCOMPARE(applied->launches[1].kernel, QStringLiteral("finish"));
        QCOMPARE(applied->compile.nameExpressions, (QStringList{"matmul<64, float>"}));
        QCOMPARE(applied->scalar("n")->value, 4096.0);
        // The original is untouched.
        QCOMPARE(p.launches[0].kernel, QStringLiteral("matmul<16, float>"));
    }

    void checkAgainstProject()
    {
        const Project p = templatedProject();
        QVERIFY(checkSweepAxis(axis("n=1,2"), p));
        QVERIFY(checkSweepAxis(axis("template.1=double"), p));
        const Status noScalar = checkSweepAxis(axis("m=1,2"), p);
        QVERIFY(!noScalar);
        QCOMPARE(noScalar.error().message, QStringLiteral("--axis m: the project has no scalar 'm' (its scalars: n)"));
        const Status noArg = checkSweepAxis(axis("template.2=1"), p);
        QVERIFY(!noArg);
        QVERIFY2(noArg.error().message.contains("kernel 'matmul<16, float>' has 2 template arguments (template.0 to "
                                                "template.1)"),
                 qPrintable(noArg.error().message));
        Project plain = p;
        plain.launches.removeFirst();
        const Status noTemplate = checkSweepAxis(axis("template.0=1"), plain);
        QVERIFY(!noTemplate);
        QVERIFY(noTemplate.error().message.contains("no launch step runs a template instance"));
    }

    void skipOrFail()
    {
        // Launch validation reports BadInput before the GPU sees anything: a skip.
        QVERIFY(sweepErrorIsSkip(Error{"kpg-worker",
                                       Error::Code::BadInput,
                                       {},
                                       "step 1 of 1 ('k'): block (2048, 1, 1) has 2048 threads; this device allows at "
                                       "most 1024 per block"}));
        QVERIFY(!sweepErrorIsSkip(Error{"kpg-worker", Error::Code::Fault, {}, "an illegal memory access"}));
        QVERIFY(!sweepErrorIsSkip(Error{"kpg-worker", Error::Code::Timeout, {}, "ran past the time-out"}));
        QVERIFY(!sweepErrorIsSkip(Error{"nvrtc", Error::Code::CompileError, {}, "error: TILE undefined"}));
    }

    void projectSweepRoundTrip()
    {
        const QString preset = QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg");
        const Result<Project> loaded = loadProject(preset);
        QVERIFY(loaded);
        Project project = *loaded;
        Project *p = &project;
        QVERIFY(!p->sweep);
        QVERIFY(!serializeProject(*p).contains("\"sweep\""));
        p->sweep = SweepSpec{{QStringLiteral("block.x=32:1024:pow2"), QStringLiteral("n=1024,4096")}, true};
        const QByteArray json = serializeProject(*p);
        // Written last of the known keys, after "checks".
        QVERIFY2(json.indexOf("\"sweep\"") > json.indexOf("\"checks\""), json.constData());
        const QJsonObject written = QJsonDocument::fromJson(json).object().value("sweep").toObject();
        QCOMPARE(written.value("axes").toArray(), (QJsonArray{"block.x=32:1024:pow2", "n=1024,4096"}));
        QCOMPARE(written.value("zip").toBool(), true);
        const Result<Project> back = parseProject(json, p->dir());
        QVERIFY2(back, back ? "" : qPrintable(back.error().message));
        QVERIFY(back->sweep);
        QCOMPARE(back->sweep->axes, p->sweep->axes);
        QCOMPARE(back->sweep->zip, true);
        QCOMPARE(serializeProject(*back), json);
        // zip is optional and false by default.
        QJsonObject o = QJsonDocument::fromJson(json).object();
        o.insert("sweep", QJsonObject{{"axes", QJsonArray{"define.TILE=8,16"}}});
        const Result<Project> noZip = parseProject(QJsonDocument(o).toJson(), p->dir());
        QVERIFY(noZip);
        QCOMPARE(noZip->sweep->zip, false);
    }

    void projectSweepErrors_data()
    {
        QTest::addColumn<QString>("sweep");
        QTest::addColumn<QString>("message");
        QTest::newRow("not an object") << R"([1])"
                                       << "sweep";
        QTest::newRow("no axes") << R"({"zip": true})"
                                 << "sweep.axes: missing";
        QTest::newRow("axis not a string") << R"({"axes": [3]})"
                                           << "sweep.axes[0]";
        QTest::newRow("bad axis") << R"({"axes": ["block.x=64", "block.q=1"]})"
                                  << "sweep.axes[1]: block.q: the block has x, y and z, not 'q'";
        QTest::newRow("zip not a bool") << R"({"axes": ["block.x=64"], "zip": "yes"})"
                                        << "sweep.zip";
        QTest::newRow("unknown key") << R"({"axes": ["block.x=64"], "points": 3})"
                                     << "points";
        // Issue 28: a shared project whose axis passed INT64_MAX once crashed every program that opened it.
        QTest::newRow("range to INT64_MAX") << R"({"axes": ["n=9223372036854775806:9223372036854775808"]})"
                                            << "sweep.axes[0]: n: the end of the range";
        QTest::newRow("pow2 to INT64_MAX") << R"({"axes": ["block.x=1:9223372036854775807:pow2"]})"
                                           << "sweep.axes[0]: block.x: '2147483648' is not a block extent";
        QTest::newRow("wrapped start") << R"({"axes": ["n=99999999999999999999:1"]})"
                                       << "sweep.axes[0]: n: the start of the range";
        QTest::newRow("huge range") << R"({"axes": ["n=0:9223372036854775807"]})"
                                    << "sweep.axes[0]: n: 0:9223372036854775807 has more than 100000 values";
        QTest::newRow("too many axes") << R"({"axes": ["a=1","b=1","c=1","d=1","e=1","f=1","g=1","h=1","i=1",
                                          "j=1","k=1","l=1","m=1","n=1","o=1","p=1","q=1"]})"
                                       << "sweep.axes: 17 axes; a sweep has at most 16";
    }
    void projectSweepErrors()
    {
        QFETCH(QString, sweep);
        QFETCH(QString, message);
        const QString preset = QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg");
        const Result<Project> p = loadProject(preset);
        QVERIFY(p);
        QJsonObject o = QJsonDocument::fromJson(serializeProject(*p)).object();
        o.insert("sweep", QJsonDocument::fromJson(QByteArray("{\"v\": ") + sweep.toUtf8() + "}").object().value("v"));
        const Result<Project> r = parseProject(QJsonDocument(o).toJson(), p->dir());
        QVERIFY(!r);
        const QString text = r.error().message;
        QVERIFY2(text.contains(message), qPrintable(text));
    }

    void devicesForASweep()
    {
        DeviceList list;
        for (const char *name : {"NVIDIA H200", "NVIDIA H200", "NVIDIA A100", "NVIDIA H200"}) {
            DeviceInfo d;
            d.ordinal = int(list.devices.size());
            d.name = QLatin1String(name);
            list.devices << d;
        }
        // Every GPU of GPU 0's model, so the points' times compare.
        QCOMPARE(*sweepDevices(list, std::nullopt), (QList<int>{0, 1, 3}));
        QCOMPARE(*sweepDevices(list, 2), QList<int>{2});
        const Result<QList<int>> missing = sweepDevices(list, 4);
        QVERIFY(!missing);
        QCOMPARE(missing.error().message, QStringLiteral("--device 4: this machine has 4 GPUs (0 to 3)"));
        list.devices.resize(1);
        QCOMPARE(sweepDevices(list, 1).error().message, QStringLiteral("--device 1: this machine has 1 GPU (0 to 0)"));
        QVERIFY(!sweepDevices(DeviceList{}, std::nullopt));
    }

    void tableOfRecordedResults()
    {
        const QList<SweepAxis> axes{axis("block.x=64,128"), axis("define.TILE=8")};
        QList<SweepPointResult> points;
        SweepPointResult ok;
        ok.index = 0;
        ok.point.values = {"64", "8"};
        ok.status = "ok";
        ok.device = 1;
        ok.run.ran = true;
        ok.run.run.timed = true;
        ok.run.run.stats.medianMs = 0.0123;
        ok.run.run.stats.minMs = 0.012;
        ok.run.run.stats.maxMs = 0.015;
        ok.run.run.stats.count = 321;
        ok.run.run.bytes = 12e6;
        ok.run.run.bytesPerSecond = 12e6 / 0.0123e-3;
        ok.run.run.stopCriterion = "noise";
        StepResult step;
        step.limits.numRegs = 16;
        step.occupancy.ratio = 0.75;
        ok.run.run.steps << step;
        SweepPointResult skipped;
        skipped.index = 1;
        skipped.point.values = {"128", "8"};
        skipped.status = "skipped";
        skipped.reason = "too many threads, \"per\" block";
        points << ok << skipped;
        QVERIFY(ok.timed());
        QVERIFY(!skipped.timed());
        QCOMPARE(ok.medianUs(), 12.3);
        const QByteArray csv = sweepCsv(axes, points);
        const QList<QByteArray> rows = csv.trimmed().split('\n');
        QCOMPARE(rows.size(), 3);
        QCOMPARE(rows[0], QByteArray("block.x,define.TILE,status,median_us,min_us,max_us,noise,stopped_by,samples,"
                                     "median_less_overhead_us,registers,occupancy,bytes_per_second,flops_per_second,"
                                     "checks_passed,device,reason"));
        QVERIFY2(rows[1].startsWith("64,8,ok,12.3,12,15,"), rows[1].constData());
        QVERIFY2(rows[1].contains(",noise,321,"), rows[1].constData());
        QVERIFY2(rows[1].contains(",16,0.75,9.7561e+11,,"), rows[1].constData());
        QVERIFY2(rows[1].endsWith(",true,1,"), rows[1].constData());
        QCOMPARE(rows[2], QByteArray("128,8,skipped,,,,,,,,,,,,,,\"too many threads, \"\"per\"\" block\""));

        Project project;
        project.title = "t";
        const QJsonObject j = sweepJson(project, axes, false, 4, points, 1.5, true);
        QCOMPARE(j.value("pointsPlanned").toInt(), 4);
        QCOMPARE(j.value("complete").toBool(), false);
        QCOMPARE(j.value("aborted").toBool(), true);
        const QJsonArray pts = j.value("points").toArray();
        QCOMPARE(pts.size(), 2);
        QCOMPARE(pts[0].toObject().value("values").toObject().value("define.TILE").toString(), QStringLiteral("8"));
        QCOMPARE(pts[0].toObject().value("deviceIndex").toInt(), 1);
        QCOMPARE(pts[1].toObject().value("reason").toString(), skipped.reason);
    }

    void runnerRefusesBadSweeps()
    {
        const QString preset = QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg");
        const Result<Project> p = loadProject(preset);
        QVERIFY(p);
        SweepRunner runner;
        SweepRunner::Options o;
        const Status unknown = runner.start(*p, {axis("size=1,2")}, false, o);
        QVERIFY(!unknown);
        QVERIFY(unknown.error().message.contains("no scalar 'size'"));
        o.devices.clear();
        QVERIFY(!runner.start(*p, {axis("block.x=64")}, false, o));
        QVERIFY(!runner.isRunning());
    }

    void runnerWithoutGpu()
    {
        // The real runner, the real compile, and a driver that cannot be
        // opened: the first point reports it and the sweep stops, nothing kept.
        qputenv("KPG_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
        const Result<Project> p = loadProject(QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg"));
        QVERIFY(p);
        SweepRunner runner;
        int landed = 0, progress = 0;
        bool finished = false;
        connect(&runner, &SweepRunner::pointFinished, this, [&] { ++landed; });
        connect(&runner, &SweepRunner::progress, this, [&] { ++progress; });
        connect(&runner, &SweepRunner::finished, this, [&](bool aborted) {
            finished = true;
            QVERIFY(!aborted);
        });
        QVERIFY(runner.start(*p, {axis("block.x=64:256:pow2")}, false, SweepRunner::Options{}));
        QVERIFY(runner.isRunning());
        QCOMPARE(runner.planned(), 3);
        runner.waitFinished();
        qunsetenv("KPG_CUDA_DRIVER");
        QVERIFY(finished);
        QVERIFY(!runner.isRunning());
        QVERIFY(runner.fatalError());
        QVERIFY2(runner.fatalError()->message.contains("/nonexistent/libcuda.so.1"),
                 qPrintable(runner.fatalError()->message));
        QCOMPARE(landed, 0);
        QCOMPARE(progress, 0);
        QVERIFY(runner.results().isEmpty());
    }

    void cliUsage_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        const QString preset = QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg");
        QTest::newRow("no project") << QStringList{"sweep"} << 64 << "sweep: no project given";
        QTest::newRow("no axis") << QStringList{"sweep", preset} << 64
                                 << "sweep: no --axis given and the project has no \"sweep\" axes";
        QTest::newRow("plot axis") << QStringList{"sweep",  preset,  "--axis",   "block.x=64",
                                                  "--plot", "x.png", "--plot-x", "n"}
                                   << 64 << "--plot-x n: not an axis of this sweep (its axes: block.x)";
        QTest::newRow("plot kind") << QStringList{"sweep", preset, "--axis", "block.x=64", "--plot-kind", "pie"} << 64
                                   << "--plot-kind is lines or heatmap, not 'pie'";
        QTest::newRow("heatmap of one axis")
            << QStringList{"sweep", preset, "--axis", "block.x=64", "--plot-kind", "heatmap"} << 64
            << "heatmap needs two axes";
        QTest::newRow("bad axis") << QStringList{"sweep", preset, "--axis", "block.q=1"} << 64
                                  << "the block has x, y and z, not 'q'";
        QTest::newRow("unknown scalar") << QStringList{"sweep", preset, "--axis", "size=1,2"} << 64
                                        << "the project has no scalar 'size' (its scalars: n)";
        QTest::newRow("zip lengths") << QStringList{"sweep",  preset, "--axis", "block.x=64,128",
                                                    "--axis", "n=1",  "--zip"}
                                     << 64 << "--zip needs axes of equal length";
        QTest::newRow("missing project") << QStringList{"sweep", "/nonexistent/p.kpg", "--axis", "block.x=64"} << 65
                                         << "/nonexistent/p.kpg";
        QTest::newRow("start past INT64_MAX") << QStringList{"sweep", preset, "--axis", "n=99999999999999999999:1"}
                                              << 64 << "the start of the range 99999999999999999999:1";
        QTest::newRow("end past INT64_MAX") << QStringList{"sweep", preset, "--axis", "n=1:99999999999999999999"} << 64
                                            << "the end of the range 1:99999999999999999999";
        QTest::newRow("range ending at INT64_MAX") << QStringList{"sweep",  preset,
                                                                  "--axis", "n=9223372036854775806:9223372036854775807",
                                                                  "--axis", "block.x=1:9223372036854775807:pow2"}
                                                   << 64 << "--axis block.x: '2147483648' is not a block extent";
        // Issue 28: outputs are checked before the sweep runs (a bad --plot was reported after it, exit 74).
        QTest::newRow("plot extension") << QStringList{"sweep", preset, "--axis", "block.x=64", "--plot", "x.pdf"} << 64
                                        << "sweep: --plot x.pdf: a plot is written as .png, .svg or .csv, not "
                                           "'.pdf'";
        QTest::newRow("roofline extension")
            << QStringList{"sweep", preset, "--axis", "block.x=64", "--roofline", "roof"} << 64
            << "sweep: --roofline roof: a plot is written as .png, .svg or .csv, not '(no extension)'";
        QTest::newRow("empty --csv") << QStringList{"sweep", preset, "--axis", "block.x=64", "--csv", ""} << 64
                                     << "sweep: --csv needs a file name; '' is empty";
        QTest::newRow("empty --json") << QStringList{"sweep", preset, "--axis", "block.x=64", "--json", ""} << 64
                                      << "sweep: --json needs a file name; '' is empty";
        QTest::newRow("empty --plot") << QStringList{"sweep", preset, "--axis", "block.x=64", "--plot", ""} << 64
                                      << "sweep: --plot needs a file name; '' is empty";
        QTest::newRow("plot to standard output")
            << QStringList{"sweep", preset, "--axis", "block.x=64", "--plot", "-"} << 64
            << "sweep: --plot writes a file; '-' (standard output) is not one here";
        QTest::newRow("--csv in a missing folder")
            << QStringList{"sweep", preset, "--axis", "block.x=64", "--csv", "/nonexistent/dir/s.csv"} << 74
            << "sweep: --csv /nonexistent/dir/s.csv: its folder /nonexistent/dir does not exist";
        QTest::newRow("--json names a folder")
            << QStringList{"sweep", preset, "--axis", "block.x=64", "--json", QDir::tempPath()} << 74
            << QStringLiteral("sweep: --json %1: is a folder").arg(QDir::tempPath());
        QTest::newRow("too many axes") << [&] {
            QStringList a{"sweep", preset};
            for (int i = 0; i < 17; ++i) {
                a << "--axis" << QStringLiteral("define.D%1=1").arg(i);
            }
            return a;
        }() << 64 << "the sweep has 17 axes; at most 16";
    }
    void cliUsage()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        const KpTest::Run r = KpTest::run("kpg", args);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    }

    void cliWithoutGpu()
    {
        // The real preset, compiled by the real NVRTC, stopped at the first
        // point by the missing driver: exit 69, the partial CSV written.
        QTemporaryDir dir;
        const QString csv = dir.filePath("sweep.csv");
        const KpTest::Run r = KpTest::run("kpg",
                                          {"sweep", QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg"),
                                           "--axis", "block.x=64:256:pow2", "--csv", csv},
                                          {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"});
        QCOMPARE(r.exitCode, 69);
        QVERIFY2(r.out.contains("3 points"), qPrintable(r.out));
        QVERIFY2(r.err.contains("/nonexistent/libcuda.so.1"), qPrintable(r.err));
        QFile f(csv);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        QVERIFY2(text.startsWith("block.x,status,median_us,"), text.constData());
        QCOMPARE(text.count('\n'), 1); // the header; no point ran
    }

    void cliEveryPointSkipped()
    {
        // Issue 28: a sweep that ran nothing exited 0. A grid of 0 is skipped by
        // the host's launch validation, before the GPU is needed.
        const KpTest::Run r = KpTest::run(
            "kpg", {"sweep", QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg"), "--axis", "grid.x=0"},
            {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"});
        QCOMPARE(r.exitCode, 65);
        QVERIFY2(r.err.contains("kpg: sweep: every point was skipped, none ran; the first: grid.x=0: "
                                "launches[0].grid[0]: '0' gives 0"),
                 qPrintable(r.err));
    }

    void cliPlotWithoutSession()
    {
        // Issue 28: --plot printed "QStandardPaths: XDG_RUNTIME_DIR not set" where no session is.
        QTemporaryDir dir;
        const KpTest::Run r = KpTest::run("kpg",
                                          {"sweep", QStringLiteral(KPG_SOURCE_DIR "/presets/vector_add/vector_add.kpg"),
                                           "--axis", "block.x=64", "--plot", dir.filePath("p.png")},
                                          {"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1", "XDG_RUNTIME_DIR="});
        QCOMPARE(r.exitCode, 69);
        QVERIFY2(!r.err.contains("QStandardPaths"), qPrintable(r.err));
        QVERIFY2(r.err.startsWith("kpg: No NVIDIA driver found"), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestSweep)
#include "tst_sweep.moc"
