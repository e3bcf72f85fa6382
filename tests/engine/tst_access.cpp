// The memory-access map's engine half: the PTX instrumentation (every preset's
// real NVRTC output, rewritten and assembled by the toolkit's ptxas) and the
// reading of trace records (sectors per request, bank-conflict wavefronts,
// who touched which cell) on records whose answer is known.

#include "access/accessrun.h"
#include "access/accessstats.h"
#include "access/ptxinstrument.h"
#include "compile/compiler.h"
#include "compile/devicelink.h"
#include "project/projectio.h"
#include "recordedaccess.h"
#include "run/projectcompile.h"
#include "run/runrequest.h"
#include "run/runtypes.h"
#include "testutil.h"

#include <QDir>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>

using namespace Kp;

namespace {

/** ptxas's verdict on ptx: empty when it assembled, else its output. */
QString assemble(const QByteArray &ptx, bool relocatable = false)
{
    QTemporaryDir dir;
    QFile f(dir.filePath(QStringLiteral("m.ptx")));
    if (!f.open(QIODevice::WriteOnly) || f.write(ptx) != ptx.size()) {
        return QStringLiteral("cannot write the PTX");
    }
    f.close();
    static const QRegularExpression target(QStringLiteral("\\.target\\s+(sm_\\d+a?)"));
    const QString arch = target.match(QString::fromUtf8(ptx)).captured(1);
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    QStringList args{QStringLiteral("-arch=") + (arch.isEmpty() ? QStringLiteral("sm_90") : arch), f.fileName(),
                     QStringLiteral("-o"), dir.filePath(QStringLiteral("m.cubin"))};
    if (relocatable) {
        args << QStringLiteral("-c"); // relocatable device code: calls into the device runtime stay unresolved
    }
    p.start(KpTest::ptxasPath(), args);
    if (!p.waitForFinished(120000)) {
        return QStringLiteral("ptxas did not finish");
    }
    return p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0 ? QString() : QString::fromUtf8(p.readAll());
}

/** A PTX module around body, as NVRTC writes one. */
QByteArray module(const QString &body, const QString &regs = {})
{
    return QStringLiteral(".version 9.0\n.target sm_90\n.address_size 64\n\n"
                          ".shared .align 4 .b8 tile[4096];\n\n"
                          ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n"
                          "\t.reg .pred \t%p<4>;\n\t.reg .b16 \t%rs<4>;\n\t.reg .f32 \t%f<8>;\n"
                          "\t.reg .b32 \t%r<16>;\n\t.reg .b64 \t%rd<16>;\n%2"
                          "\t.loc\t1 7 3\n"
                          "\tld.param.u64 \t%rd1, [k_param_0];\n"
                          "\tmov.u32 \t%r1, %tid.x;\n"
                          "\tmul.wide.u32 \t%rd2, %r1, 4;\n"
                          "\tadd.s64 \t%rd3, %rd1, %rd2;\n"
                          "\tmov.u32 \t%r2, tile;\n"
                          "\tsetp.lt.u32 \t%p1, %r1, 16;\n"
                          "\t.loc\t1 9 5\n%1\n"
                          "\tret;\n}\n\t.file\t1 \"/tmp/k.cu\"\n")
        .arg(body, regs)
        .toUtf8();
}

/** One record of the trace as the instrumented module writes it. */
QByteArray record(quint32 site, quint32 mask, std::array<quint32, 3> block, quint32 warp,
                  const std::array<quint64, 32> &lanes)
{
    QByteArray r(AccessTraceLayout::kRecordBytes, '\0');
    const quint32 header[] = {site, mask, block[0], block[1], block[2], warp};
    std::memcpy(r.data(), header, sizeof header);
    std::memcpy(r.data() + AccessTraceLayout::kLaneOffset, lanes.data(), sizeof(quint64) * 32);
    return r;
}

std::array<quint64, 32> strided(quint64 base, qint64 strideBytes, quint64 tag = 0)
{
    std::array<quint64, 32> a{};
    for (int i = 0; i < 32; ++i) {
        a[size_t(i)] = (base + quint64(qint64(i) * strideBytes)) | tag;
    }
    return a;
}

AccessSite site(int id, AccessSpace space, AccessKind kind, int width, int line)
{
    AccessSite s;
    s.id = id;
    s.space = space;
    s.kind = kind;
    s.width = width;
    s.typeName = width == 4   ? QStringLiteral("float")
                 : width == 8 ? QStringLiteral("double")
                              : QStringLiteral("float4");
    s.sourceLine = line;
    s.sourceFile = 1;
    return s;
}

} // namespace

class TestAccess : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        if (KpTest::ptxasPath().isEmpty()) {
            QSKIP("ptxas (the CUDA Toolkit's) is not installed: the instrumented PTX cannot be assembled here");
        }
    }

    // Each kind of access the instrumentation reads: where it goes, what it
    // does, how wide, and on which source line; the result assembles.
    void readsEveryAccessForm_data()
    {
        QTest::addColumn<QString>("instruction");
        QTest::addColumn<int>("space");
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("width");
        QTest::addColumn<QString>("guard");
        QTest::newRow("global load") << "\tld.global.f32 \t%f1, [%rd3];" << int(AccessSpace::Global)
                                     << int(AccessKind::Load) << 4 << "";
        QTest::newRow("read-only vector load with offset")
            << "\tld.global.nc.v4.f32 \t{%f1, %f2, %f3, %f4}, [%rd3+16];" << int(AccessSpace::Global)
            << int(AccessKind::Load) << 16 << "";
        QTest::newRow("guarded store, negative offset")
            << "\t@%p1 st.global.u32 \t[%rd3+-4], %r1;" << int(AccessSpace::Global) << int(AccessKind::Store) << 4
            << "%p1";
        QTest::newRow("negated guard") << "\t@!%p1 st.global.u8 \t[%rd3], %rs1;" << int(AccessSpace::Global)
                                       << int(AccessKind::Store) << 1 << "!%p1";
        QTest::newRow("shared through a 32-bit register")
            << "\tst.shared.f32 \t[%r2+8], %f1;" << int(AccessSpace::Shared) << int(AccessKind::Store) << 4 << "";
        QTest::newRow("shared by symbol") << "\tld.shared.v2.f32 \t{%f1, %f2}, [tile+128];" << int(AccessSpace::Shared)
                                          << int(AccessKind::Load) << 8 << "";
        QTest::newRow("generic load") << "\tld.u64 \t%rd4, [%rd3];" << int(AccessSpace::Generic)
                                      << int(AccessKind::Load) << 8 << "";
        QTest::newRow("global atomic") << "\tatom.global.add.f32 \t%f1, [%rd3], %f2;" << int(AccessSpace::Global)
                                       << int(AccessKind::Atomic) << 4 << "";
        QTest::newRow("shared reduction")
            << "\tred.shared.add.u32 \t[%r2], %r1;" << int(AccessSpace::Shared) << int(AccessKind::Atomic) << 4 << "";
        QTest::newRow("relaxed scoped load") << "\tld.relaxed.gpu.global.u32 \t%r3, [%rd3];" << int(AccessSpace::Global)
                                             << int(AccessKind::Load) << 4 << "";
        QTest::newRow("sm_90 shared::cta")
            << "\tld.shared::cta.u32 \t%r3, [%r2];" << int(AccessSpace::Shared) << int(AccessKind::Load) << 4 << "";
    }
    void readsEveryAccessForm()
    {
        QFETCH(QString, instruction);
        QFETCH(int, space);
        QFETCH(int, kind);
        QFETCH(int, width);
        QFETCH(QString, guard);
        const auto r = instrumentPtx(module(instruction));
        QVERIFY2(r, r ? "" : qPrintable(r.error().message));
        QCOMPARE(r->sites.size(), 1);
        const AccessSite &s = r->sites.first();
        QCOMPARE(int(s.space), space);
        QCOMPARE(int(s.kind), kind);
        QCOMPARE(s.width, width);
        QCOMPARE(s.sourceLine, 9);
        QCOMPARE(s.sourcePath, QStringLiteral("/tmp/k.cu"));
        QCOMPARE(s.function, QStringLiteral("k"));
        QCOMPARE(s.instruction, instruction.trimmed());
        // The original instruction is still there, once, after its record.
        const QString out = QString::fromUtf8(r->ptx);
        QCOMPARE(out.count(instruction.trimmed()), 1);
        QVERIFY(out.indexOf(QLatin1String("site 0")) < out.indexOf(instruction.trimmed()));
        if (!guard.isEmpty()) {
            QVERIFY2(out.contains(QStringLiteral("vote.sync.ballot.b32 %kpa1, ") + guard), qPrintable(out));
        }
        const QString asm_ = assemble(r->ptx);
        QVERIFY2(asm_.isEmpty(), qPrintable(asm_ + QStringLiteral("\n") + out));
    }

    // What the map leaves out, and counts: parameters (not user memory),
    // the stack, constants and async copies.
    void leavesOutWhatIsNotMapped()
    {
        const auto r = instrumentPtx(module(QStringLiteral("\tld.local.u32 \t%r3, [%rd3];\n"
                                                           "\tld.const.f32 \t%f1, [%rd3];\n"
                                                           "\tst.global.f32 \t[%rd3], %f1;")));
        QVERIFY2(r, r ? "" : qPrintable(r.error().message));
        QCOMPARE(r->sites.size(), 1); // the store
        QCOMPARE(r->skipped, 2);      // the ld.param of the module is not counted
        QVERIFY(assemble(r->ptx).isEmpty());
    }

    void refusesWhatItCannotRead_data()
    {
        QTest::addColumn<QByteArray>("ptx");
        QTest::addColumn<QString>("message");
        QTest::newRow("32-bit module") << QByteArray(".version 9.0\n.target sm_90\n.address_size 32\n")
                                       << "needs 64-bit PTX";
        QTest::newRow("old PTX") << QByteArray(".version 5.0\n.target sm_60\n.address_size 64\n")
                                 << "needs PTX 6.2 or newer";
        QTest::newRow("register of unknown width")
            << module(QStringLiteral("\tld.global.f32 \t%f1, [%q9];")) << "cannot tell the width of register %q9";
        QTest::newRow("address it cannot read")
            << module(QStringLiteral("\tld.global.f32 \t%f1, [%rd3+%rd2];")) << "cannot read PTX line";
    }
    void refusesWhatItCannotRead()
    {
        QFETCH(QByteArray, ptx);
        QFETCH(QString, message);
        const auto r = instrumentPtx(ptx);
        QVERIFY(!r);
        QVERIFY2(r.error().message.contains(message), qPrintable(r.error().message));
    }

    // Every preset's real NVRTC PTX: instrumented, each access a site on a
    // line of the preset's own source, and the result assembles with ptxas.
    void instrumentsEveryPreset_data()
    {
        QTest::addColumn<QString>("path");
        const QString dir = QStringLiteral(KPG_SOURCE_DIR "/presets");
        for (const QString &name : QDir(dir).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
            const QString kpg = dir + QLatin1Char('/') + name + QLatin1Char('/') + name + QStringLiteral(".kpg");
            if (QFileInfo::exists(kpg)) {
                QTest::newRow(qPrintable(name)) << kpg;
            }
        }
    }
    void instrumentsEveryPreset()
    {
        QFETCH(QString, path);
        const auto p = loadProject(path);
        QVERIFY2(p, p ? "" : qPrintable(p.error().message));
        CompileRequest req = compileRequestFor(*p);
        req.options.useCache = false;
        const auto c = Compiler(Compiler::Config{QStringLiteral("-"), 0}).compile(req);
        QVERIFY2(c && c->ok, c ? qPrintable(c->log) : qPrintable(c.error().message));
        const auto r = instrumentPtx(c->ptx);
        QVERIFY2(r, r ? "" : qPrintable(r.error().message));
        QVERIFY2(!r->sites.isEmpty(), "every preset reads or writes memory");
        const QString source = QFileInfo(p->sourceFile).fileName();
        int onSource = 0;
        for (const AccessSite &s : r->sites) {
            onSource += s.sourcePath.endsWith(source) && s.sourceLine > 0 ? 1 : 0;
        }
        QVERIFY2(onSource > 0, qPrintable(QStringLiteral("no site on a line of %1").arg(source)));
        const QString asm_ = assemble(r->ptx, DeviceLink::optionsUseRdc(c->nvrtcOptions));
        QVERIFY2(asm_.isEmpty(), qPrintable(asm_));
    }

    // Global requests: sectors touched against the ideal for the bytes asked.
    // The terminal's report: an unrolled loop's copies of one access on a
    // line are one row that counts them; a copy that reads differently keeps
    // its own row; every row is a line of its own.
    void reportTextJoinsUnrolledCopies()
    {
        const QList<AccessSite> sites{site(0, AccessSpace::Global, AccessKind::Load, 4, 12),
                                      site(1, AccessSpace::Global, AccessKind::Load, 4, 12),
                                      site(2, AccessSpace::Global, AccessKind::Load, 4, 12)};
        QByteArray trace;
        for (quint32 w = 0; w < 4; ++w) {
            trace += record(0, 0xffffffffu, {w, 0, 0}, 0, strided(0x7f0000000000ull + w * 4096, 4));
            trace += record(1, 0xffffffffu, {w, 0, 0}, 0, strided(0x7f0000100000ull + w * 4096, 4));
        }
        trace += record(2, 0xffffffffu, {0, 0, 0}, 0, strided(0x7f0000200000ull, 128));
        const auto stats = summarizeAccess(sites, trace, 4, {});
        QVERIFY2(stats, stats ? "" : qPrintable(stats.error().message));
        AccessReport r;
        r.sites = sites;
        r.summary = *stats;
        r.kernel = QStringLiteral("k");
        r.sourceText = QStringLiteral("\n").repeated(11) + QStringLiteral("    x = a[i] + a[i + n] + a[32 * i];\n");
        r.sourceName = QStringLiteral("kernel.cu");
        const QStringList text = accessReportText(r).split(QLatin1Char('\n'));
        const QStringList rows = text.filter(QStringLiteral("global load"));
        QCOMPARE(rows.size(), 2);
        QVERIFY2(rows[0].startsWith(QStringLiteral("    global load (float, 2 instructions, 8 requests): coalesced")),
                 qPrintable(rows[0]));
        QVERIFY2(rows[1].startsWith(QStringLiteral("    global load (float, 1 request): stride of 32 float")),
                 qPrintable(rows[1]));
    }

    // Who owns each cell, for colouring the Inspector: the recorded
    // transpose (thread t of block b reads in[32 b + t], writes
    // out[1024 t + b]); a cell read by one thread and written later by
    // another belongs to the writer but was first touched by the read; a
    // float4 access owns the four floats it covers.
    void cellOwnersOfARecordedLaunch()
    {
        const std::shared_ptr<const AccessReport> r = KpTest::recordedReport();
        const std::array<quint32, 3> grid{2, 1, 1};
        const auto out = cellOwners(r->summary, r->sites, r->trace, QStringLiteral("out"), grid, r->blockDim());
        QVERIFY2(out, out ? "" : qPrintable(out.error().message));
        QCOMPARE(out->elements(), qint64(1 << 18));
        for (qint64 b = 0; b < 2; ++b) {
            for (qint64 t = 0; t < 32; ++t) {
                const qint64 e = 1024 * t + b;
                QCOMPARE(out->owner[std::size_t(e)], 32 * b + t);
                QCOMPARE(out->first[std::size_t(e)], 3 * b + 1); // each block's second record
                QCOMPARE(out->shade(e, OwnerColour::Thread), std::fmod(double(32 * b + t) * 0.6180339887498949, 1.0));
                QCOMPARE(out->shade(e, OwnerColour::Warp), std::fmod(double(b) * 0.6180339887498949, 1.0));
                QCOMPARE(out->shade(e, OwnerColour::FirstAccess), double(3 * b + 1) / 5.0);
            }
        }
        QCOMPARE(out->describe(1024 * 3 + 1),
                 QString("written first by block (1, 0, 0) thread (3, 0, 0), warp 0 of its block; first touched by "
                         "access 5 of 6"));
        QVERIFY(std::isnan(out->shade(2, OwnerColour::Thread)));
        QCOMPARE(out->describe(2), QString("not touched by the recorded launch"));
        const auto in = cellOwners(r->summary, r->sites, r->trace, QStringLiteral("in"), grid, r->blockDim());
        QVERIFY(in);
        QVERIFY2(in->describe(33).startsWith("read first by block (1, 0, 0) thread (1, 0, 0)"),
                 qPrintable(in->describe(33)));
        QVERIFY(!cellOwners(r->summary, r->sites, r->trace, QStringLiteral("nope"), grid, r->blockDim()));
        // A buffer past the bound is refused before anything is allocated for it.
        AccessSummary huge = r->summary;
        huge.bufferList << TraceBuffer{QStringLiteral("huge"), 0x7f1000000000ull, (kMaxOwnerCells + 1) * 4, 4};
        const auto refused = cellOwners(huge, r->sites, r->trace, QStringLiteral("huge"), grid, r->blockDim());
        QVERIFY(!refused);
        QCOMPARE(refused.error().message,
                 QStringLiteral("huge has %1 elements; colouring by who touched them covers buffers of up to %2 "
                                "elements")
                     .arg(kMaxOwnerCells + 1)
                     .arg(kMaxOwnerCells));

        // Read by warp 0 (record 0), written by warp 1 (record 1): the writer owns it.
        QList<AccessSite> sites{KpTest::accessSite(0, AccessSpace::Global, AccessKind::Load, 1),
                                KpTest::accessSite(1, AccessSpace::Global, AccessKind::Store, 2),
                                KpTest::accessSite(2, AccessSpace::Global, AccessKind::Load, 3)};
        sites[2].width = 16; // float4
        QByteArray trace = KpTest::accessRecord(0, {0, 0, 0}, 0, KpTest::kInAddress, 4);
        trace += KpTest::accessRecord(1, {0, 0, 0}, 1, KpTest::kInAddress, 4);
        trace += KpTest::accessRecord(2, {0, 0, 0}, 0, KpTest::kInAddress + 1024, 16);
        const QList<TraceBuffer> buffers{{QStringLiteral("in"), KpTest::kInAddress, 4096, 4}};
        const auto summary = summarizeAccess(sites, trace, 3, buffers);
        QVERIFY(summary);
        const auto mixed = cellOwners(*summary, sites, trace, QStringLiteral("in"), {1, 1, 1}, {64, 1, 1});
        QVERIFY(mixed);
        QCOMPARE(mixed->owner[5], qint64(32 + 5)); // lane 5 of warp 1 wrote it
        QCOMPARE(mixed->first[5], qint64(0));      // lane 5 of warp 0 read it first
        QCOMPARE(mixed->written[5], quint8(1));
        for (qint64 e = 256; e < 256 + 4 * 32; ++e) { // lane k's float4 covers in[256 + 4k ... 256 + 4k + 3]
            QCOMPARE(mixed->owner[std::size_t(e)], (e - 256) / 4);
            QCOMPARE(mixed->written[std::size_t(e)], quint8(0));
        }
        QCOMPARE(mixed->owner[256 + 128], qint64(-1));
    }

    void globalSectors_data()
    {
        QTest::addColumn<int>("width");
        QTest::addColumn<qint64>("stride");
        QTest::addColumn<quint32>("mask");
        QTest::addColumn<double>("sectors");
        QTest::addColumn<double>("ideal");
        QTest::addColumn<QString>("reading");
        QTest::newRow("float, unit stride") << 4 << qint64(4) << 0xffffffffu << 4.0 << 4.0 << "coalesced";
        QTest::newRow("float, stride of 2") << 4 << qint64(8) << 0xffffffffu << 8.0 << 4.0 << "stride of 2 float";
        QTest::newRow("float, stride of 32") << 4 << qint64(128) << 0xffffffffu << 32.0 << 4.0 << "stride of 32 float";
        QTest::newRow("float4, unit stride") << 16 << qint64(16) << 0xffffffffu << 16.0 << 16.0 << "coalesced";
        QTest::newRow("broadcast") << 4 << qint64(0) << 0xffffffffu << 1.0 << 1.0 << "same address";
        QTest::newRow("half the warp") << 4 << qint64(4) << 0x0000ffffu << 2.0 << 2.0 << "coalesced";
        QTest::newRow("double, unit stride") << 8 << qint64(8) << 0xffffffffu << 8.0 << 8.0 << "coalesced";
    }
    void globalSectors()
    {
        QFETCH(int, width);
        QFETCH(qint64, stride);
        QFETCH(quint32, mask);
        QFETCH(double, sectors);
        QFETCH(double, ideal);
        QFETCH(QString, reading);
        const QList<AccessSite> sites{site(0, AccessSpace::Global, AccessKind::Load, width, 12)};
        QByteArray trace;
        for (quint32 w = 0; w < 4; ++w) { // four warps, each 4 KiB apart, aligned
            trace += record(0, mask, {w, 0, 0}, 0, strided(0x7f0000000000ull + w * 4096, stride));
        }
        const auto stats = summarizeAccess(sites, trace, 4, {});
        QVERIFY2(stats, stats ? "" : qPrintable(stats.error().message));
        QCOMPARE(stats->sites.size(), 1);
        const SiteAccess &s = stats->sites.first();
        QCOMPARE(s.requests, qint64(4));
        QCOMPARE(s.sectorsPerRequest(), sectors);
        QCOMPARE(s.idealSectorsPerRequest(), ideal);
        QVERIFY2(s.reading.contains(reading), qPrintable(s.reading));
        QCOMPARE(stats->lines.size(), 1);
        QCOMPARE(stats->lines.first().line, 12);
    }

    // Shared requests: wavefronts (the bank-conflict degree) against the ideal.
    void sharedWavefronts_data()
    {
        QTest::addColumn<int>("width");
        QTest::addColumn<qint64>("stride");
        QTest::addColumn<double>("wavefronts");
        QTest::addColumn<double>("ideal");
        QTest::addColumn<QString>("reading");
        QTest::newRow("float, unit stride") << 4 << qint64(4) << 1.0 << 1.0 << "no bank conflict";
        QTest::newRow("float, stride of 2 (2-way)") << 4 << qint64(8) << 2.0 << 1.0 << "2-way bank conflict";
        QTest::newRow("float, column of a 32x32 tile") << 4 << qint64(128) << 32.0 << 1.0 << "32-way bank conflict";
        QTest::newRow("float, column of a padded 33-wide tile") << 4 << qint64(132) << 1.0 << 1.0 << "no bank conflict";
        QTest::newRow("broadcast") << 4 << qint64(0) << 1.0 << 1.0 << "no bank conflict";
        QTest::newRow("double, unit stride") << 8 << qint64(8) << 2.0 << 2.0 << "no bank conflict";
        QTest::newRow("float4, unit stride") << 16 << qint64(16) << 4.0 << 4.0 << "no bank conflict";
    }
    void sharedWavefronts()
    {
        QFETCH(int, width);
        QFETCH(qint64, stride);
        QFETCH(double, wavefronts);
        QFETCH(double, ideal);
        QFETCH(QString, reading);
        const QList<AccessSite> sites{site(0, AccessSpace::Shared, AccessKind::Load, width, 20)};
        const QByteArray trace =
            record(0, 0xffffffffu, {0, 0, 0}, 0, strided(0, stride, AccessTraceLayout::kSharedTag));
        const auto stats = summarizeAccess(sites, trace, 1, {});
        QVERIFY2(stats, stats ? "" : qPrintable(stats.error().message));
        const SiteAccess &s = stats->sites.first();
        QCOMPARE(s.wavefrontsPerRequest(), wavefronts);
        QCOMPARE(s.idealWavefrontsPerRequest(), ideal);
        QVERIFY2(s.reading.contains(reading), qPrintable(s.reading));
        QCOMPARE(stats->lines.first().maxConflict, s.maxConflict);
    }

    // The editor's heat margin: a line's class from its cost against the ideal.
    void heatOfALine_data()
    {
        QTest::addColumn<qint64>("sectors");
        QTest::addColumn<qint64>("idealSectors");
        QTest::addColumn<qint64>("wavefronts");
        QTest::addColumn<qint64>("idealWavefronts");
        QTest::addColumn<int>("conflict");
        QTest::addColumn<int>("heat");
        const int ideal = int(AccessHeat::Ideal), mild = int(AccessHeat::Mild), costly = int(AccessHeat::Costly),
                  severe = int(AccessHeat::Severe);
        QTest::newRow("coalesced load") << qint64(64) << qint64(64) << qint64(0) << qint64(0) << 1 << ideal;
        QTest::newRow("misaligned load, 5 of 4") << qint64(5) << qint64(4) << qint64(0) << qint64(0) << 1 << mild;
        QTest::newRow("stride 2 floats, exactly 2x") << qint64(8) << qint64(4) << qint64(0) << qint64(0) << 1 << costly;
        QTest::newRow("exactly 4x is still costly") << qint64(16) << qint64(4) << qint64(0) << qint64(0) << 1 << costly;
        QTest::newRow("column store, 32 of 4") << qint64(32) << qint64(4) << qint64(0) << qint64(0) << 1 << severe;
        QTest::newRow("no conflict") << qint64(0) << qint64(0) << qint64(10) << qint64(10) << 1 << ideal;
        QTest::newRow("2-way conflict") << qint64(0) << qint64(0) << qint64(20) << qint64(10) << 2 << costly;
        QTest::newRow("4-way conflict in one phase of many")
            << qint64(0) << qint64(0) << qint64(13) << qint64(10) << 4 << severe;
        QTest::newRow("32-way tile column") << qint64(0) << qint64(0) << qint64(320) << qint64(10) << 32 << severe;
        QTest::newRow("ideal global, conflicted shared")
            << qint64(4) << qint64(4) << qint64(30) << qint64(10) << 3 << costly;
    }
    void heatOfALine()
    {
        QFETCH(qint64, sectors);
        QFETCH(qint64, idealSectors);
        QFETCH(qint64, wavefronts);
        QFETCH(qint64, idealWavefronts);
        QFETCH(int, conflict);
        QFETCH(int, heat);
        LineAccess l;
        l.sectors = sectors;
        l.idealSectors = idealSectors;
        l.wavefronts = wavefronts;
        l.idealWavefronts = idealWavefronts;
        l.maxConflict = conflict;
        QCOMPARE(int(accessHeat(l)), heat);
    }

    // Who touched a cell: the (block, thread) and the line, from the records.
    void whoTouchedACell()
    {
        const QList<AccessSite> sites{site(0, AccessSpace::Global, AccessKind::Load, 4, 5),
                                      site(1, AccessSpace::Global, AccessKind::Store, 4, 6)};
        const quint64 in = 0x7f0000000000ull;
        const quint64 out = 0x7f0000100000ull;
        QByteArray trace;
        // Block (1,0,0), warp 1: lanes read in[32+lane] and write out[lane*2].
        trace += record(0, 0xffffffffu, {1, 0, 0}, 1, strided(in + 32 * 4, 4));
        trace += record(1, 0xffffffffu, {1, 0, 0}, 1, strided(out, 8));
        const QList<TraceBuffer> buffers{{QStringLiteral("in"), in, 4096, 4}, {QStringLiteral("out"), out, 4096, 4}};
        const auto stats = summarizeAccess(sites, trace, 2, buffers);
        QVERIFY(stats);
        const QList<CellTouch> read = touchesOf(*stats, sites, trace, QStringLiteral("in"), 40, {64, 1, 1});
        QCOMPARE(read.size(), 1);
        QCOMPARE(read.first().block, (std::array<quint32, 3>{1, 0, 0}));
        // warp 1, lane 8: thread 40 of a 64-wide block.
        QCOMPARE(read.first().thread, (std::array<quint32, 3>{40, 0, 0}));
        QCOMPARE(read.first().line, 5);
        QCOMPARE(int(read.first().kind), int(AccessKind::Load));
        const QList<CellTouch> written = touchesOf(*stats, sites, trace, QStringLiteral("out"), 6, {64, 1, 1});
        QCOMPARE(written.size(), 1);
        QCOMPARE(written.first().thread, (std::array<quint32, 3>{35, 0, 0}));
        QCOMPARE(int(written.first().kind), int(AccessKind::Store));
        QVERIFY(touchesOf(*stats, sites, trace, QStringLiteral("out"), 7, {64, 1, 1}).isEmpty());
        // Per buffer: which elements were read or written at all.
        QCOMPARE(stats->buffers.value(QStringLiteral("out")).written, qint64(32));
        QCOMPARE(stats->buffers.value(QStringLiteral("in")).read, qint64(32));
    }

    // The request and the result carry the map through the worker's frames;
    // an ordinary run's body stays what it was.
    void travelsThroughTheProtocol()
    {
        RunRequest q;
        QVERIFY(!q.toVariant().contains(QStringLiteral("accessRecords")));
        q.accessRecords = 4096;
        q.accessStep = 2;
        const RunRequest back = RunRequest::fromVariant(q.toVariant());
        QCOMPARE(back.accessRecords, qint64(4096));
        QCOMPARE(back.accessStep, 2);
        RunResult r;
        QVERIFY(!r.toVariant().contains(QStringLiteral("accessTrace")));
        r.accessTrace = record(0, 1, {0, 0, 0}, 0, strided(0x1000, 4));
        r.accessRequested = 9;
        r.accessStepEnds = {0, 0, 9};
        const RunResult rb = RunResult::fromVariant(r.toVariant());
        QCOMPARE(rb.accessTrace, r.accessTrace);
        QCOMPARE(rb.accessRequested, qint64(9));
        QCOMPARE(rb.accessStepEnds, (QList<qint64>{0, 0, 9}));
    }

    // A trace cut at the capacity says so, and a record naming a site the
    // module does not have is refused rather than read.
    void truncatedAndCorruptTraces()
    {
        const QList<AccessSite> sites{site(0, AccessSpace::Global, AccessKind::Load, 4, 5)};
        const QByteArray one = record(0, 0xffffffffu, {0, 0, 0}, 0, strided(0x1000, 4));
        const auto cut = summarizeAccess(sites, one, 10, {});
        QVERIFY(cut);
        QCOMPARE(cut->recorded, qint64(1));
        QCOMPARE(cut->requested, qint64(10));
        QVERIFY(cut->truncated());
        const auto bad = summarizeAccess(sites, record(7, 1, {0, 0, 0}, 0, strided(0, 4)), 1, {});
        QVERIFY(!bad);
        QVERIFY2(bad.error().message.contains(QLatin1String("site 7")), qPrintable(bad.error().message));
        QVERIFY(!summarizeAccess(sites, one.left(100), 1, {}));
    }
};

QTEST_GUILESS_MAIN(TestAccess)
#include "tst_access.moc"
