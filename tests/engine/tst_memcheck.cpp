// Memory checking without a GPU: guard zones compared on host memory, the
// violation's words, compute-sanitizer's XML (recorded on an H200 with
// compute-sanitizer 2025.3.1, trimmed) read into findings, and addresses
// mapped to buffer elements.

#include "client/engineclient.h"
#include "core/safefile.h"
#include "run/guardzones.h"
#include "run/runjson.h"
#include "run/runrequest.h"
#include "run/sanitizer.h"
#include "testutil.h"
#include "worker/protocol.h"

#include <QFile>
#include <QJsonArray>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>

using namespace Kp;
using namespace Kp::Sanitizer;

class TstMemcheck : public QObject
{
    Q_OBJECT

    static QByteArray fixture(const QString &name)
    {
        const auto bytes = readRegularFile(QStringLiteral(KPG_SOURCE_DIR "/tests/data/sanitizer/") + name, 1 << 20,
                                           QStringLiteral("fixture"));
        if (!bytes) {
            qFatal("%s", qPrintable(bytes.error().message));
        }
        return *bytes;
    }

private Q_SLOTS:
    void untouchedGuardIsClean()
    {
        QByteArray g = Guard::expectedGuard();
        QCOMPARE(g.size(), Guard::kGuardBytes);
        QVERIFY(!Guard::scanGuard(reinterpret_cast<const uchar *>(g.constData()), g.size()));
        // The pattern repeats the 32-bit word little-endian from the start.
        quint32 w = 0;
        std::memcpy(&w, g.constData() + 64, 4);
        QCOMPARE(w, Guard::kPattern);
    }

    void guardFindsOverrunsOnHostMemory_data()
    {
        QTest::addColumn<qint64>("offset");
        QTest::addColumn<qint64>("length");
        QTest::newRow("4 bytes at the start") << qint64(0) << qint64(4);
        QTest::newRow("96 bytes at the start") << qint64(0) << qint64(96);
        QTest::newRow("one byte in the middle") << qint64(1234) << qint64(1);
        QTest::newRow("the last 8 bytes") << Guard::kGuardBytes - 8 << qint64(8);
    }

    void guardFindsOverrunsOnHostMemory()
    {
        QFETCH(qint64, offset);
        QFETCH(qint64, length);
        // A host copy of an allocation: guard, 1000 floats of random data, guard.
        const qint64 bytes = 4000;
        QByteArray mem(2 * Guard::kGuardBytes + bytes, Qt::Uninitialized);
        std::memcpy(mem.data(), Guard::expectedGuard().constData(), size_t(Guard::kGuardBytes));
        std::memcpy(mem.data() + Guard::kGuardBytes + bytes, Guard::expectedGuard().constData(),
                    size_t(Guard::kGuardBytes));
        auto *rng = QRandomGenerator::global();
        for (qint64 i = 0; i < bytes; ++i) {
            mem[Guard::kGuardBytes + i] = char(rng->bounded(256));
        }
        // The kernel writes random floats past the end (never the pattern's own bytes).
        auto *after = reinterpret_cast<uchar *>(mem.data() + Guard::kGuardBytes + bytes);
        for (qint64 i = 0; i < length; ++i) {
            after[offset + i] = uchar(after[offset + i] ^ (1 + rng->bounded(255)));
        }
        QVERIFY(!Guard::scanGuard(reinterpret_cast<const uchar *>(mem.constData()), Guard::kGuardBytes));
        const auto change = Guard::scanGuard(after, Guard::kGuardBytes);
        QVERIFY(change);
        QCOMPARE(change->first, offset);
        QCOMPARE(change->last, offset + length - 1);
        QCOMPARE(change->changedBytes, length);

        GuardViolation v = guardViolation(GuardViolation::Side::After, *change, bytes, 4);
        QCOMPARE(v.firstByte, bytes + offset);
        QCOMPARE(v.spanBytes(), length);
        QCOMPARE(v.firstElement(), (bytes + offset) / 4);
        QCOMPARE(v.lastElement(), (bytes + offset + length - 1) / 4);
    }

    void violationMessage()
    {
        Guard::Change c{0, 95, 96};
        GuardViolation v = guardViolation(GuardViolation::Side::After, c, 4000, 4);
        v.step = 1;
        v.kernel = QStringLiteral("transpose");
        v.buffer = QStringLiteral("out");
        QCOMPARE(v.message(),
                 QStringLiteral("step 2 (transpose) wrote past the end of `out`: 96 bytes, elements 1000..1023 of the "
                                "guard"));
        // Before the start: elements count down from -1.
        Guard::Change b{Guard::kGuardBytes - 8, Guard::kGuardBytes - 1, 8};
        GuardViolation w = guardViolation(GuardViolation::Side::Before, b, 4000, 4);
        w.step = 0;
        w.kernel = QStringLiteral("k");
        w.buffer = QStringLiteral("a");
        QCOMPARE(w.firstByte, qint64(-8));
        QCOMPARE(w.message(), QStringLiteral("step 1 (k) wrote before the start of `a`: 8 bytes, elements -2..-1 of "
                                             "the guard"));
        // Through the wire and into JSON.
        RunResult r;
        r.guards = true;
        r.guardViolations << v << w;
        const RunResult back = RunResult::fromVariant(r.toVariant());
        QCOMPARE(back.guardViolations, r.guardViolations);
        const QJsonObject j = guardsToJson(back);
        QCOMPARE(j.value(QStringLiteral("violations")).toArray().size(), 2);
        const QJsonObject first = j.value(QStringLiteral("violations")).toArray().first().toObject();
        QCOMPARE(first.value(QStringLiteral("step")).toInt(), 2);
        QCOMPARE(first.value(QStringLiteral("firstElement")).toInteger(), 1000);
        QCOMPARE(first.value(QStringLiteral("lastElement")).toInteger(), 1023);
        QCOMPARE(first.value(QStringLiteral("bytes")).toInteger(), 96);
    }

    void requestCarriesGuardsAndElementSize()
    {
        RunRequest q;
        q.buffers << RunBuffer{QStringLiteral("c"), QStringLiteral("/proc/1/fd/3"), 7, 4000, 4};
        QCOMPARE(RunRequest::fromVariant(q.toVariant()), q);
        QVERIFY(!q.toVariant().contains(QStringLiteral("guards"))); // the default stays off the wire
        q.guards = false;
        QCOMPARE(RunRequest::fromVariant(q.toVariant()), q);
        QCOMPARE(RunRequest::fromVariant(q.toVariant()).buffers.first().elementBytes, 4);
    }

    void memcheckReport()
    {
        const Result<Report> r = parseXml(fixture(QStringLiteral("memcheck_oob.xml")));
        QVERIFY2(r, qPrintable(r ? QString() : r.error().message));
        // Two cuFuncGetParamInfo probes are the worker's own; left out.
        QCOMPARE(r->apiFiltered, 2);
        QCOMPARE(r->counts().value(QStringLiteral("invalid-access")), 4);
        QCOMPARE(r->counts().value(QStringLiteral("api")), 1); // the launch failure memcheck caused
        const Finding &f = r->findings.first();
        QCOMPARE(f.kind, Finding::Kind::InvalidAccess);
        QCOMPARE(f.direction, QStringLiteral("write"));
        QCOMPARE(f.space, QStringLiteral("__global__"));
        QCOMPARE(f.size, 4);
        QCOMPARE(f.thread, (Coord{224, 0, 0}));
        QCOMPARE(f.block, (Coord{3, 0, 0}));
        QCOMPARE(f.where.function, QStringLiteral("shifted_copy"));
        QCOMPARE(f.where.path, QStringLiteral("/home/student/lab/oob.cu"));
        QCOMPARE(f.where.line, 13);
        QCOMPARE(f.address, quint64(0x7f0acb802fe0ull));
        QCOMPARE(r->findings.last().api, QStringLiteral("cuEventQuery"));

        // c was at 0x7f0acb802000 (1000 floats): thread 224 of block 3 is i = 992, writing c[1016].
        Report mapped = *r;
        mapAddresses(mapped,
                     {DeviceAllocation{QStringLiteral("b"), 0x7f0acb801000ull, 4000, 0},
                      DeviceAllocation{QStringLiteral("c"), 0x7f0acb802000ull, 4000, 0}},
                     {{QStringLiteral("b"), 4}, {QStringLiteral("c"), 4}});
        const Finding &m = mapped.findings.first();
        QCOMPARE(m.buffer, QStringLiteral("c"));
        QCOMPARE(m.element, qint64(1016));
        QCOMPARE(m.bytesPast, qint64(64));
        QCOMPARE(m.summary(),
                 QStringLiteral("invalid write of 4 bytes by thread (224,0,0) block (3,0,0), 64 bytes past "
                                "the end of `c` (element 1016)"));
        const QJsonObject j = mapped.toJson(Tool::Memcheck);
        QCOMPARE(j.value(QStringLiteral("clean")).toBool(), false);
        QCOMPARE(j.value(QStringLiteral("counts")).toObject().value(QStringLiteral("invalid-access")).toInt(), 4);
        const QJsonObject jf = j.value(QStringLiteral("findings")).toArray().first().toObject();
        QCOMPARE(jf.value(QStringLiteral("buffer")).toString(), QStringLiteral("c"));
        QCOMPARE(jf.value(QStringLiteral("where")).toObject().value(QStringLiteral("line")).toInt(), 13);
        QCOMPARE(jf.value(QStringLiteral("thread")).toArray(), (QJsonArray{224, 0, 0}));
        // first N per kind
        QCOMPARE(mapped.toJson(Tool::Memcheck, 2).value(QStringLiteral("findings")).toArray().size(), 3);
    }

    void addressInsideAndBefore()
    {
        Report r;
        Finding inside;
        inside.kind = Finding::Kind::Uninitialized;
        inside.address = 0x1000 + 40;
        inside.space = QStringLiteral("__global__");
        Finding elsewhere = inside;
        elsewhere.address = 0x100;
        r.findings << inside << elsewhere;
        mapAddresses(r, {DeviceAllocation{QStringLiteral("a"), 0x1000, 4000, 0}}, {{QStringLiteral("a"), 8}});
        QCOMPARE(r.findings[0].buffer, QStringLiteral("a"));
        QCOMPARE(r.findings[0].element, qint64(5));
        QCOMPARE(r.findings[0].bytesPast, qint64(-1));
        QVERIFY(r.findings[1].buffer.isEmpty());

        // Back to back, as the sanitizer's runs allocate them (no guard zones):
        // an address inside the second buffer is in it, not "past the end" of the first.
        Report b2b;
        Finding inSecond = inside;
        inSecond.address = 0x2000 + 4 * 600;
        Finding gap = inside;
        gap.address = 0x1000 + 4000 + 8;
        b2b.findings << inSecond << gap;
        mapAddresses(b2b,
                     {DeviceAllocation{QStringLiteral("a"), 0x1000, 4000, 0},
                      DeviceAllocation{QStringLiteral("scratch"), 0x2000, 4000, 0}},
                     {{QStringLiteral("a"), 4}, {QStringLiteral("scratch"), 4}});
        QCOMPARE(b2b.findings[0].buffer, QStringLiteral("scratch"));
        QCOMPARE(b2b.findings[0].element, qint64(600));
        QCOMPARE(b2b.findings[0].bytesPast, qint64(-1));
        QCOMPARE(b2b.findings[1].buffer, QStringLiteral("a"));
        QCOMPARE(b2b.findings[1].bytesPast, qint64(8));
    }

    void racecheckAnalysis()
    {
        const Result<Report> r = parseXml(fixture(QStringLiteral("racecheck_default_race.xml")));
        QVERIFY(r);
        QCOMPARE(r->findings.size(), 1);
        const Finding &f = r->findings.first();
        QCOMPARE(f.kind, Finding::Kind::Race);
        QCOMPARE(f.where.line, 11);
        QCOMPARE(f.other.line, 11);
        QCOMPARE(f.ownDirection, QStringLiteral("read"));
        QCOMPARE(f.otherDirection, QStringLiteral("write"));
        QCOMPARE(f.count, qint64(8128));
        QCOMPARE(f.where.function, QStringLiteral("reduce_racy"));
    }

    void racecheckHazards()
    {
        const Result<Report> r = parseXml(fixture(QStringLiteral("racecheck_hazard_race.xml")));
        QVERIFY(r);
        QCOMPARE(r->findings.size(), 3);
        const Finding &f = r->findings.first();
        QCOMPARE(f.kind, Finding::Kind::Hazard);
        QCOMPARE(f.hazardType, QStringLiteral("RAW"));
        QCOMPARE(f.address, quint64(0x500)); // shared-memory offset
        QCOMPARE(f.block, (Coord{10, 0, 0}));
        QCOMPARE(f.thread, (Coord{64, 0, 0}));
        QCOMPARE(f.ownDirection, QStringLiteral("write"));
        QCOMPARE(f.otherThread, (Coord{0, 0, 0}));
        QCOMPARE(f.otherDirection, QStringLiteral("read"));
        QCOMPARE(f.where.line, 11);
        // Shared addresses are not mapped to global buffers.
        Report m = *r;
        mapAddresses(m, {DeviceAllocation{QStringLiteral("in"), 0, 1 << 20, 0}}, {});
        QVERIFY(m.findings.first().buffer.isEmpty());
        const QJsonObject j = m.findings.first().toJson();
        QCOMPARE(j.value(QStringLiteral("sharedOffset")).toInteger(), 0x500);
        // With the driver's reserved kilobyte at the start of the window, the offset is into the block's own memory.
        Report reserved = *r;
        mapAddresses(reserved, {}, {}, 1024);
        QCOMPARE(reserved.findings.first().sharedOffset, qint64(0x100));
        QCOMPARE(reserved.findings.first().toJson().value(QStringLiteral("sharedOffset")).toInteger(), 0x100);
        QCOMPARE(reserved.findings.first().toJson().value(QStringLiteral("sharedAddress")).toString(),
                 QStringLiteral("0x500"));
        QVERIFY(reserved.findings.first().summary().contains(QStringLiteral("shared memory offset 256")));
    }

    void initcheck()
    {
        const Result<Report> r = parseXml(fixture(QStringLiteral("initcheck_cupy.xml")));
        QVERIFY(r);
        QCOMPARE(r->findings.size(), 3);
        const Finding &f = r->findings.first();
        QCOMPARE(f.kind, Finding::Kind::Uninitialized);
        QCOMPARE(f.size, 4);
        QCOMPARE(f.thread, (Coord{96, 0, 0}));
        QCOMPARE(f.where.line, 6);
        QCOMPARE(f.where.function, QStringLiteral("sum_uninit"));
        QCOMPARE(f.address, quint64(0x7f02bc800180ull));
    }

    void apiOnlyAndEmptyReportsAreClean()
    {
        for (const char *name : {"memcheck_race.xml", "empty_report.xml"}) {
            const Result<Report> r = parseXml(fixture(QString::fromLatin1(name)));
            QVERIFY2(r, name);
            QVERIFY2(r->findings.isEmpty(), name);
        }
    }

    void malformedAndTruncated()
    {
        const QByteArray full = fixture(QStringLiteral("memcheck_oob.xml"));
        const Result<Report> cut = parseXml(full.left(full.size() / 2));
        QVERIFY(!cut);
        QVERIFY2(cut.error().message.contains(QStringLiteral("ends in the middle")), qPrintable(cut.error().message));
        QVERIFY(cut.error().message.contains(QStringLiteral("line ")));

        const Result<Report> bad =
            parseXml("<?xml version=\"1.0\"?>\n<ComputeSanitizerOutput><record><kind>Api</what>");
        QVERIFY(!bad);
        QVERIFY2(bad.error().message.contains(QStringLiteral("not well-formed")), qPrintable(bad.error().message));

        const Result<Report> other = parseXml("<html><body>nope</body></html>");
        QVERIFY(!other);
        QVERIFY2(other.error().message.contains(QStringLiteral("<ComputeSanitizerOutput>")),
                 qPrintable(other.error().message));

        const Result<Report> empty = parseXml("");
        QVERIFY(!empty);
        QVERIFY(empty.error().message.contains(QStringLiteral("empty")));
    }

    void toolsAndLaunchPrefix()
    {
        QCOMPARE(*parseTool(QStringLiteral("racecheck")), Tool::Racecheck);
        const auto bad = parseTool(QStringLiteral("leakcheck"));
        QVERIFY(!bad);
        QVERIFY(bad.error().message.contains(QStringLiteral("memcheck, racecheck, initcheck or synccheck")));
        const QStringList p = launchPrefix(QStringLiteral("/cuda/bin/compute-sanitizer"), Tool::Racecheck,
                                           QStringLiteral("/tmp/r.xml"), 50, true);
        QCOMPARE(p.first(), QStringLiteral("/cuda/bin/compute-sanitizer"));
        QVERIFY(p.join(QLatin1Char(' ')).contains(QStringLiteral("--tool racecheck --xml --save /tmp/r.xml")));
        QVERIFY(p.join(QLatin1Char(' ')).contains(QStringLiteral("--racecheck-report hazard")));
    }

    // compute-sanitizer writes its report after the worker ends; a stand-in
    // that does the same (runs the worker, then writes a file late) shows
    // that the engine starts the worker under a prefix, waits for it to
    // finish, and starts no second one.
    void workerRunsUnderAPrefixThatIsLeftToFinish()
    {
        QTemporaryDir dir;
        const QString script = dir.filePath(QStringLiteral("wrap.sh"));
        {
            QFile f(script);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("#!/bin/sh\necho $$ > \"$KPG_TEST_REPORT.pid\"\n\"$@\"\nrc=$?\nsleep 3\necho written > "
                    "\"$KPG_TEST_REPORT\"\nexit $rc\n");
            f.close();
            QVERIFY(f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        }
        const QString polite = dir.filePath(QStringLiteral("polite"));
        qputenv("KPG_TEST_REPORT", polite.toUtf8());
        {
            WorkerLaunch launch;
            launch.prefix = {script};
            launch.exitWaitMs = 20000;
            launch.single = true;
            EngineClient engine(launch);
            const Reply pong = engine.requestSync(Protocol::Type::Ping);
            QVERIFY2(pong, qPrintable(pong ? QString() : pong.error().message));
        } // shutdown, then the wait for the wrapper's late write
        QVERIFY(QFile::exists(polite));

        // A worker that dies: the wrapper still finishes, and no second worker starts.
        const QString crashed = dir.filePath(QStringLiteral("crashed"));
        qputenv("KPG_TEST_REPORT", crashed.toUtf8());
        {
            WorkerLaunch launch;
            launch.prefix = {script};
            launch.exitWaitMs = 20000;
            launch.single = true;
            EngineClient engine(launch);
            const Reply died = engine.requestSync(Protocol::Type::Crash);
            QVERIFY(!died);
            QVERIFY(QFile::exists(crashed));
            const Reply again = engine.requestSync(Protocol::Type::Ping);
            QVERIFY(!again);
            QVERIFY2(again.error().message.contains(QStringLiteral("one worker")), qPrintable(again.error().message));
        }

        // Without the wait (the default), the wrapper is killed before it writes.
        const QString killed = dir.filePath(QStringLiteral("killed"));
        qputenv("KPG_TEST_REPORT", killed.toUtf8());
        {
            WorkerLaunch launch;
            launch.prefix = {script};
            EngineClient engine(launch);
            QVERIFY(engine.requestSync(Protocol::Type::Ping));
        }
        // Once the wrapper is gone it can write nothing more.
        QFile pidFile(killed + QStringLiteral(".pid"));
        QVERIFY(pidFile.open(QIODevice::ReadOnly));
        const qint64 wrapper = pidFile.readAll().trimmed().toLongLong();
        QTRY_VERIFY_WITH_TIMEOUT(!KpTest::processAlive(wrapper), 10000);
        QVERIFY(!QFile::exists(killed));
        qunsetenv("KPG_TEST_REPORT");
    }

    void missingSanitizerIsNamed()
    {
        QTemporaryDir dir;
        qputenv("KPG_COMPUTE_SANITIZER", dir.filePath(QStringLiteral("nope")).toUtf8());
        const Result<QString> p = findProgram();
        qunsetenv("KPG_COMPUTE_SANITIZER");
        QVERIFY(!p);
        QVERIFY2(p.error().message.contains(QStringLiteral("not an executable file")), qPrintable(p.error().message));
    }
};

QTEST_GUILESS_MAIN(TstMemcheck)
#include "tst_memcheck.moc"
