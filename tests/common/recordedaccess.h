#pragma once

// Access reports built from synthetic warp records, as the instrumented
// module writes them (access/ptxinstrument.h), for the panels that show a
// report: the Memory Access panel, the editor's heat margin, the Inspector's
// "Who touched this cell?". The numbers come from the real summarizeAccess.

#include "access/accessrun.h"

#include <QByteArray>
#include <QList>

#include <array>
#include <cstring>
#include <memory>

namespace KpTest {

/** One warp record of site: 32 lanes at base + lane * stride (tag marks shared addresses). */
inline QByteArray accessRecord(quint32 site, std::array<quint32, 3> block, quint32 warp, quint64 base, qint64 stride,
                               quint64 tag = 0)
{
    QByteArray r(Kp::AccessTraceLayout::kRecordBytes, '\0');
    const quint32 header[] = {site, 0xffffffffu, block[0], block[1], block[2], warp};
    std::memcpy(r.data(), header, sizeof header);
    for (int lane = 0; lane < 32; ++lane) {
        const quint64 a = (base + quint64(qint64(lane) * stride)) | tag;
        std::memcpy(r.data() + Kp::AccessTraceLayout::kLaneOffset + 8 * lane, &a, sizeof a);
    }
    return r;
}

/** A float access of the project's source (or of path) on line. */
inline Kp::AccessSite accessSite(int id, Kp::AccessSpace space, Kp::AccessKind kind, int line,
                                 const QString &path = QStringLiteral("/x/k.cu"))
{
    Kp::AccessSite s;
    s.id = id;
    s.space = space;
    s.kind = kind;
    s.width = 4;
    s.typeName = QStringLiteral("float");
    s.sourceLine = line;
    s.sourcePath = path;
    return s;
}

constexpr quint64 kInAddress = 0x7f0000000000ull;
constexpr quint64 kOutAddress = 0x7f0000100000ull;

/**
 * A transpose-like launch of two blocks of 32 threads: a coalesced load on
 * line 3, a column store on line 4 (32 sectors a request, ideal 4), a shared
 * read with a 32-way bank conflict on line 5. Buffers in and out, 2^18
 * floats each; thread t of block b reads in[32 b + t] and writes
 * out[1024 t + b].
 */
inline std::shared_ptr<const Kp::AccessReport> recordedReport()
{
    using namespace Kp;
    auto r = std::make_shared<AccessReport>();
    r->kernel = QStringLiteral("k");
    r->device = QStringLiteral("a GPU");
    r->grid = {2, 1, 1};
    r->block = {32, 1, 1};
    r->sourceName = QStringLiteral("k.cu");
    r->sourceText = QStringLiteral("// k\n\nfloat v = in[i];\nout[i * 1024] = v;\nfloat t = tile[i * 32];\n");
    r->sites = {accessSite(0, AccessSpace::Global, AccessKind::Load, 3),
                accessSite(1, AccessSpace::Global, AccessKind::Store, 4),
                accessSite(2, AccessSpace::Shared, AccessKind::Load, 5)};
    for (quint32 b = 0; b < 2; ++b) {
        r->trace += accessRecord(0, {b, 0, 0}, 0, kInAddress + b * 128, 4);
        r->trace += accessRecord(1, {b, 0, 0}, 0, kOutAddress + b * 4, 4096);
        r->trace += accessRecord(2, {b, 0, 0}, 0, 0, 128, AccessTraceLayout::kSharedTag);
    }
    const QList<TraceBuffer> buffers{{QStringLiteral("in"), kInAddress, 1 << 20, 4},
                                     {QStringLiteral("out"), kOutAddress, 1 << 20, 4}};
    r->summary = *summarizeAccess(r->sites, r->trace, 6, buffers);
    return r;
}

/** One line of a heat report: where, and the stride of its one warp's lanes (shared when shared). */
struct HeatLine
{
    int line = 0;
    qint64 offset = 0; ///< bytes past the buffer's start (a misaligned request starts off a sector)
    qint64 stride = 4;
    bool shared = false;
    QString path; ///< empty: the project's source
};

/** A report over sourceText with one float load per HeatLine, in one warp of one block. */
inline std::shared_ptr<const Kp::AccessReport> heatReport(const QString &sourceText, const QList<HeatLine> &lines)
{
    using namespace Kp;
    auto r = std::make_shared<AccessReport>();
    r->kernel = QStringLiteral("k");
    r->device = QStringLiteral("a GPU");
    r->block = {32, 1, 1};
    r->sourceName = QStringLiteral("k.cu");
    r->sourceText = sourceText;
    for (int i = 0; i < lines.size(); ++i) {
        const HeatLine &l = lines[i];
        r->sites << accessSite(i, l.shared ? AccessSpace::Shared : AccessSpace::Global, AccessKind::Load, l.line,
                               l.path.isEmpty() ? QStringLiteral("/x/k.cu") : l.path);
        r->trace += accessRecord(quint32(i), {0, 0, 0}, 0, (l.shared ? 0 : kInAddress) + quint64(l.offset), l.stride,
                                 l.shared ? AccessTraceLayout::kSharedTag : 0);
    }
    const QList<TraceBuffer> buffers{{QStringLiteral("in"), kInAddress, 1 << 20, 4}};
    r->summary = *summarizeAccess(r->sites, r->trace, lines.size(), buffers);
    return r;
}

} // namespace KpTest
