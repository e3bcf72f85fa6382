#include "access/accessstats.h"

#include <QHash>
#include <QSet>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

namespace Kp {

namespace {

using namespace AccessTraceLayout;

struct Record
{
    quint32 site = 0;
    quint32 mask = 0;
    std::array<quint32, 3> block{};
    quint32 warp = 0;
    const char *lanes = nullptr;

    quint64 lane(int i) const
    {
        quint64 a = 0;
        std::memcpy(&a, lanes + 8 * i, sizeof a);
        return a;
    }
};

Record recordAt(const QByteArray &trace, qint64 i)
{
    const char *p = trace.constData() + i * kRecordBytes;
    quint32 h[6];
    std::memcpy(h, p, sizeof h);
    return Record{h[0], h[1], {h[2], h[3], h[4]}, h[5], p + kLaneOffset};
}

Error traceError(const QString &message)
{
    return Error{QStringLiteral("memory-access map"), Error::Code::BadInput, QString(), message};
}

QString plural(const QString &word, qint64 n)
{
    return n == 1 ? word : word + QLatin1Char('s');
}

/** Sectors touched and the ideal for one request's lanes (global addresses, width bytes each). */
std::pair<qint64, qint64> sectorsOf(std::vector<quint64> starts, int width, qint64 *bytesAsked)
{
    QSet<quint64> sectors;
    for (quint64 a : starts) {
        for (quint64 s = a >> 5; s <= (a + quint64(width) - 1) >> 5; ++s) {
            sectors.insert(s);
        }
    }
    // The distinct bytes asked for: the union of [a, a + width).
    std::sort(starts.begin(), starts.end());
    qint64 bytes = 0;
    quint64 end = 0;
    bool first = true;
    for (quint64 a : starts) {
        const quint64 e = a + quint64(width);
        if (first || a >= end) {
            bytes += qint64(width);
        } else if (e > end) {
            bytes += qint64(e - end);
        }
        end = first ? e : std::max(end, e);
        first = false;
    }
    *bytesAsked = bytes;
    return {qint64(sectors.size()), std::max<qint64>(1, (bytes + 31) / 32)};
}

/** Wavefronts and the ideal for one shared request (lane -> shared offset; -1 = lane not in it). */
std::pair<qint64, qint64> wavefrontsOf(const std::array<qint64, 32> &offsets, int width, int *worst)
{
    const int perPhase = width <= 4 ? 32 : width <= 8 ? 16 : 8;
    qint64 total = 0;
    qint64 ideal = 0;
    for (int phase = 0; phase < 32; phase += perPhase) {
        std::array<QSet<qint64>, 32> words;
        bool any = false;
        for (int lane = phase; lane < phase + perPhase; ++lane) {
            const qint64 a = offsets[size_t(lane)];
            if (a < 0) {
                continue;
            }
            any = true;
            for (qint64 w = a / 4; w <= (a + width - 1) / 4; ++w) {
                words[size_t(w % 32)].insert(w);
            }
        }
        if (!any) {
            continue;
        }
        int busiest = 1;
        for (const QSet<qint64> &bank : words) {
            busiest = std::max(busiest, int(bank.size()));
        }
        *worst = std::max(*worst, busiest);
        total += busiest;
        ++ideal;
    }
    return {total, ideal};
}

QString strideText(const AccessSite &site, qint64 stride)
{
    if (stride == 0) {
        return QStringLiteral("every thread reads the same address");
    }
    if (site.width > 0 && stride % site.width == 0) {
        const qint64 n = stride / site.width;
        return QStringLiteral("stride of %1 %2 between neighbouring threads").arg(n).arg(plural(site.typeName, n));
    }
    return QStringLiteral("stride of %1 bytes between neighbouring threads").arg(stride);
}

QString readingOf(const SiteAccess &s)
{
    QStringList parts;
    if (s.globalRequests > 0) {
        const QString counts = QStringLiteral("%1 sectors per request, ideal %2")
                                   .arg(s.sectorsPerRequest(), 0, 'g', 3)
                                   .arg(s.idealSectorsPerRequest(), 0, 'g', 3);
        if (s.sectors <= s.idealSectors) {
            parts << (s.strideRegular && s.strideBytes == 0
                          ? QStringLiteral("same address in every lane: %1").arg(counts)
                          : QStringLiteral("coalesced: %1").arg(counts));
        } else if (s.strideRegular && s.strideBytes == s.site.width) {
            parts << QStringLiteral("neighbouring threads are adjacent but the request is not aligned to 32 "
                                    "bytes: %1")
                         .arg(counts);
        } else if (s.strideRegular) {
            parts << QStringLiteral("%1: %2").arg(strideText(s.site, s.strideBytes), counts);
        } else {
            parts << QStringLiteral("scattered addresses: %1").arg(counts);
        }
    }
    if (s.sharedRequests > 0) {
        const QString counts = QStringLiteral("%1 wavefronts per request, ideal %2")
                                   .arg(s.wavefrontsPerRequest(), 0, 'g', 3)
                                   .arg(s.idealWavefrontsPerRequest(), 0, 'g', 3);
        if (s.wavefronts <= s.idealWavefronts) {
            parts << QStringLiteral("no bank conflict: %1").arg(counts);
        } else {
            QString why;
            if (s.strideRegular && s.strideBytes > 0 && s.strideBytes % 4 == 0) {
                const qint64 words = s.strideBytes / 4;
                why = QStringLiteral("; neighbouring threads are %1 %2 apart")
                          .arg(words)
                          .arg(plural(QStringLiteral("word"), words));
                if (words % 2 == 0) {
                    why += QStringLiteral(" (an odd distance, such as a row padded by one element, spreads them over "
                                          "the banks)");
                }
            }
            parts << QStringLiteral("%1-way bank conflict: %2%3").arg(s.maxConflict).arg(counts, why);
        }
    }
    return parts.join(QStringLiteral("; "));
}

/** The buffer holding address, or -1 (sorted by address). */
int bufferAt(const QList<TraceBuffer> &sorted, quint64 address)
{
    auto it = std::upper_bound(sorted.cbegin(), sorted.cend(), address,
                               [](quint64 a, const TraceBuffer &b) { return a < b.address; });
    if (it == sorted.cbegin()) {
        return -1;
    }
    --it;
    return address < it->address + quint64(it->bytes) ? int(it - sorted.cbegin()) : -1;
}

} // namespace

Result<AccessSummary> summarizeAccess(const QList<AccessSite> &sites, const QByteArray &trace, qint64 requested,
                                      const QList<TraceBuffer> &buffers)
{
    if (trace.size() % kRecordBytes != 0) {
        return traceError(QStringLiteral("the trace is %1 bytes, not a whole number of %2-byte records")
                              .arg(trace.size())
                              .arg(kRecordBytes));
    }
    AccessSummary out;
    out.recorded = trace.size() / kRecordBytes;
    out.requested = std::max(requested, out.recorded);
    out.bufferList = buffers;
    std::sort(out.bufferList.begin(), out.bufferList.end(),
              [](const TraceBuffer &a, const TraceBuffer &b) { return a.address < b.address; });
    std::vector<SiteAccess> per(size_t(sites.size()));
    for (qsizetype i = 0; i < sites.size(); ++i) {
        per[size_t(i)].site = sites[i];
    }
    std::vector<std::map<qint64, int>> strides(per.size());
    std::vector<std::array<QSet<qint64>, 3>> touched(size_t(out.bufferList.size()));
    for (qint64 r = 0; r < out.recorded; ++r) {
        const Record rec = recordAt(trace, r);
        if (rec.site >= quint32(sites.size())) {
            return traceError(QStringLiteral("record %1 names site %2, but the module has %3")
                                  .arg(r)
                                  .arg(rec.site)
                                  .arg(sites.size()));
        }
        SiteAccess &s = per[rec.site];
        const int width = std::max(1, s.site.width);
        ++s.requests;
        std::vector<quint64> global;
        std::array<qint64, 32> shared;
        shared.fill(-1);
        bool anyShared = false;
        for (int lane = 0; lane < 32; ++lane) {
            if (!(rec.mask & (1u << lane))) {
                continue;
            }
            ++s.laneAccesses;
            const quint64 a = rec.lane(lane);
            if (a & kSharedTag) {
                shared[size_t(lane)] = qint64(a & ~kSharedTag);
                anyShared = true;
            } else if (!(a & kLocalTag)) {
                global.push_back(a);
                const int b = bufferAt(out.bufferList, a);
                if (b < 0) {
                    ++out.outside;
                } else {
                    const TraceBuffer &tb = out.bufferList[b];
                    const int kind = s.site.kind == AccessKind::Load ? 0 : s.site.kind == AccessKind::Store ? 1 : 2;
                    touched[size_t(b)][size_t(kind)].insert(qint64(a - tb.address) / std::max(1, tb.elementBytes));
                }
            }
        }
        if (!global.empty()) {
            ++s.globalRequests;
            qint64 asked = 0;
            const auto [sectors, ideal] = sectorsOf(global, width, &asked);
            s.sectors += sectors;
            s.idealSectors += ideal;
            s.bytesAsked += asked;
            for (size_t i = 1; i < global.size(); ++i) {
                ++strides[rec.site][qint64(global[i] - global[i - 1])];
            }
        }
        if (anyShared) {
            ++s.sharedRequests;
            int worst = 1;
            const auto [w, ideal] = wavefrontsOf(shared, width, &worst);
            s.wavefronts += w;
            s.idealWavefronts += ideal;
            s.maxConflict = std::max(s.maxConflict, worst);
            std::vector<quint64> lanes;
            for (qint64 o : shared) {
                if (o >= 0) {
                    lanes.push_back(quint64(o));
                }
            }
            for (size_t i = 1; i < lanes.size(); ++i) {
                ++strides[rec.site][qint64(lanes[i] - lanes[i - 1])];
            }
        }
    }
    std::map<std::pair<QString, int>, LineAccess> lines;
    std::map<std::pair<QString, int>, qint64> lineWorst;
    for (size_t i = 0; i < per.size(); ++i) {
        SiteAccess &s = per[i];
        if (s.requests == 0) {
            continue;
        }
        if (!strides[i].empty()) {
            const auto best = std::max_element(strides[i].cbegin(), strides[i].cend(),
                                               [](const auto &a, const auto &b) { return a.second < b.second; });
            qint64 all = 0;
            for (const auto &[d, n] : strides[i]) {
                all += n;
            }
            s.strideBytes = best->first;
            s.strideRegular = best->second * 2 > all;
        }
        s.reading = readingOf(s);
        LineAccess &l = lines[{s.site.sourcePath, s.site.sourceLine}];
        l.path = s.site.sourcePath;
        l.line = s.site.sourceLine;
        l.sites << s.site.id;
        (s.site.kind == AccessKind::Load    ? l.globalLoads
         : s.site.kind == AccessKind::Store ? l.globalStores
                                            : l.globalAtomics) += s.globalRequests;
        l.sharedRequests += s.sharedRequests;
        l.sectors += s.sectors;
        l.idealSectors += s.idealSectors;
        l.wavefronts += s.wavefronts;
        l.idealWavefronts += s.idealWavefronts;
        l.maxConflict = std::max(l.maxConflict, s.maxConflict);
        // The line reads as its costliest site.
        const qint64 excess = (s.sectors - s.idealSectors) + (s.wavefronts - s.idealWavefronts);
        auto [worst, fresh] = lineWorst.try_emplace({l.path, l.line}, excess);
        if (fresh || excess > worst->second) {
            worst->second = excess;
            l.reading = s.reading;
        }
        out.sites << s;
    }
    for (auto &[key, l] : lines) {
        out.lines << l;
    }
    for (qsizetype b = 0; b < out.bufferList.size(); ++b) {
        BufferAccess &a = out.buffers[out.bufferList[b].name];
        a.read = touched[size_t(b)][0].size();
        a.written = touched[size_t(b)][1].size();
        a.atomics = touched[size_t(b)][2].size();
    }
    return out;
}

QString accessSpaceName(AccessSpace space)
{
    return space == AccessSpace::Global   ? QStringLiteral("global")
           : space == AccessSpace::Shared ? QStringLiteral("shared")
                                          : QStringLiteral("generic");
}

QString accessKindName(AccessKind kind)
{
    return kind == AccessKind::Load    ? QStringLiteral("load")
           : kind == AccessKind::Store ? QStringLiteral("store")
                                       : QStringLiteral("atomic");
}

QString touchVerb(AccessKind kind)
{
    return kind == AccessKind::Load    ? QStringLiteral("read")
           : kind == AccessKind::Store ? QStringLiteral("written")
                                       : QStringLiteral("atomic");
}

AccessHeat accessHeat(const LineAccess &line)
{
    // Integer comparisons of cost against a multiple of the ideal: a ratio
    // of exactly 4 is still "2 to 4x", whatever a double makes of it.
    const auto atLeast = [&](qint64 factor, bool strictly) {
        const auto past = [&](qint64 cost, qint64 ideal) {
            return ideal > 0 && (strictly ? cost > factor * ideal : cost >= factor * ideal);
        };
        return past(line.sectors, line.idealSectors) || past(line.wavefronts, line.idealWavefronts);
    };
    if (line.maxConflict >= 4 || atLeast(4, true)) {
        return AccessHeat::Severe;
    }
    if (atLeast(2, false)) {
        return AccessHeat::Costly;
    }
    if (atLeast(1, true)) {
        return AccessHeat::Mild;
    }
    return AccessHeat::Ideal;
}

QString accessHeatName(AccessHeat heat)
{
    switch (heat) {
    case AccessHeat::Ideal: return QStringLiteral("ideal");
    case AccessHeat::Mild: return QStringLiteral("under 2x the ideal");
    case AccessHeat::Costly: return QStringLiteral("2 to 4x the ideal");
    case AccessHeat::Severe: break;
    }
    return QStringLiteral("over 4x the ideal");
}

QList<CellTouch> touchesOf(const AccessSummary &summary, const QList<AccessSite> &sites, const QByteArray &trace,
                           const QString &buffer, qint64 element, std::array<quint32, 3> blockDim, int limit)
{
    QList<CellTouch> out;
    const auto it = std::find_if(summary.bufferList.cbegin(), summary.bufferList.cend(),
                                 [&](const TraceBuffer &b) { return b.name == buffer; });
    if (it == summary.bufferList.cend() || element < 0) {
        return out;
    }
    const quint64 lo = it->address + quint64(element) * quint64(std::max(1, it->elementBytes));
    const quint64 hi = lo + quint64(std::max(1, it->elementBytes));
    if (hi > it->address + quint64(it->bytes)) {
        return out;
    }
    const qint64 records = trace.size() / kRecordBytes;
    const quint64 bx = std::max(1u, blockDim[0]);
    const quint64 by = std::max(1u, blockDim[1]);
    for (qint64 r = 0; r < records && out.size() < limit; ++r) {
        const Record rec = recordAt(trace, r);
        if (rec.site >= quint32(sites.size())) {
            continue;
        }
        const AccessSite &site = sites[rec.site];
        for (int lane = 0; lane < 32 && out.size() < limit; ++lane) {
            if (!(rec.mask & (1u << lane))) {
                continue;
            }
            const quint64 a = rec.lane(lane);
            if ((a & (kSharedTag | kLocalTag)) || a >= hi || a + quint64(std::max(1, site.width)) <= lo) {
                continue;
            }
            const quint64 linear = quint64(rec.warp) * 32 + quint64(lane);
            CellTouch t;
            t.block = rec.block;
            t.thread = {quint32(linear % bx), quint32((linear / bx) % by), quint32(linear / (bx * by))};
            t.site = site.id;
            t.line = site.sourceLine;
            t.kind = site.kind;
            t.record = r;
            out << t;
        }
    }
    return out;
}

std::pair<std::array<quint32, 3>, std::array<quint32, 3>> CellOwners::threadOf(qint64 linear) const
{
    const quint64 perBlock = quint64(threadsPerBlock());
    const quint64 b = quint64(linear) / perBlock;
    const quint64 t = quint64(linear) % perBlock;
    const quint64 gx = std::max(1u, grid[0]), gy = std::max(1u, grid[1]);
    const quint64 bx = std::max(1u, block[0]), by = std::max(1u, block[1]);
    return {{quint32(b % gx), quint32(b / gx % gy), quint32(b / (gx * gy))},
            {quint32(t % bx), quint32(t / bx % by), quint32(t / (bx * by))}};
}

double CellOwners::shade(qint64 element, OwnerColour colour) const
{
    if (element < 0 || element >= elements() || owner[std::size_t(element)] < 0) {
        return std::numeric_limits<double>::quiet_NaN();
    }
    constexpr double kGolden = 0.6180339887498949;
    const qint64 o = owner[std::size_t(element)];
    switch (colour) {
    case OwnerColour::Thread: return std::fmod(double(o) * kGolden, 1.0);
    case OwnerColour::Warp: {
        const qint64 warpsPerBlock = (threadsPerBlock() + 31) / 32;
        return std::fmod(double(o / threadsPerBlock() * warpsPerBlock + warpInBlock(o)) * kGolden, 1.0);
    }
    case OwnerColour::FirstAccess: return records > 1 ? double(first[std::size_t(element)]) / double(records - 1) : 0.0;
    }
    return 0.0;
}

QString CellOwners::describe(qint64 element) const
{
    if (element < 0 || element >= elements()) {
        return {};
    }
    const qint64 o = owner[std::size_t(element)];
    if (o < 0) {
        return truncated ? QStringLiteral("not touched by the traced accesses (the trace was cut)")
                         : QStringLiteral("not touched by the recorded launch");
    }
    const auto [b, t] = threadOf(o);
    return QStringLiteral("%1 first by block (%2, %3, %4) thread (%5, %6, %7), warp %8 of its block; first touched "
                          "by access %9 of %10")
        .arg(written[std::size_t(element)] ? QStringLiteral("written") : QStringLiteral("read"))
        .arg(b[0])
        .arg(b[1])
        .arg(b[2])
        .arg(t[0])
        .arg(t[1])
        .arg(t[2])
        .arg(warpInBlock(o))
        .arg(first[std::size_t(element)] + 1)
        .arg(records);
}

Result<CellOwners> cellOwners(const AccessSummary &summary, const QList<AccessSite> &sites, const QByteArray &trace,
                              const QString &buffer, std::array<quint32, 3> gridDim, std::array<quint32, 3> blockDim)
{
    const auto it = std::find_if(summary.bufferList.cbegin(), summary.bufferList.cend(),
                                 [&](const TraceBuffer &b) { return b.name == buffer; });
    if (it == summary.bufferList.cend()) {
        return traceError(QStringLiteral("%1 was not a buffer of the recorded launch").arg(buffer));
    }
    CellOwners out;
    out.buffer = buffer;
    out.grid = gridDim;
    out.block = blockDim;
    out.records = trace.size() / kRecordBytes;
    out.truncated = summary.truncated();
    const int eb = std::max(1, it->elementBytes);
    const qint64 n = it->bytes / eb;
    if (n > kMaxOwnerCells) {
        return traceError(QStringLiteral("%1 has %2 elements; colouring by who touched them covers buffers of up to "
                                         "%3 elements")
                              .arg(buffer)
                              .arg(n)
                              .arg(kMaxOwnerCells));
    }
    out.owner.assign(std::size_t(n), -1);
    out.first.assign(std::size_t(n), -1);
    out.written.assign(std::size_t(n), 0);
    const quint64 base = it->address;
    const quint64 end = base + quint64(n) * quint64(eb);
    const quint64 perBlock = quint64(out.threadsPerBlock()); // as threadOf decodes it
    const quint64 gx = std::max(1u, gridDim[0]), gy = std::max(1u, gridDim[1]);
    for (qint64 r = 0; r < out.records; ++r) {
        const Record rec = recordAt(trace, r);
        if (rec.site >= quint32(sites.size())) {
            continue;
        }
        const AccessSite &site = sites[rec.site];
        const bool writes = site.kind != AccessKind::Load;
        const quint64 blockLinear = rec.block[0] + gx * (rec.block[1] + gy * quint64(rec.block[2]));
        for (int lane = 0; lane < 32; ++lane) {
            if (!(rec.mask & (1u << lane))) {
                continue;
            }
            const quint64 a = rec.lane(lane);
            const quint64 width = quint64(std::max(1, site.width));
            if ((a & (kSharedTag | kLocalTag)) || a >= end || a + width <= base) {
                continue;
            }
            const qint64 thread = qint64(blockLinear * perBlock + quint64(rec.warp) * 32 + quint64(lane));
            // A wide access (a float4 over a float buffer) touches every element it covers.
            const qint64 lo = qint64((std::max(a, base) - base) / quint64(eb));
            const qint64 hi = std::min(n - 1, qint64((a + width - 1 - base) / quint64(eb)));
            for (qint64 e = lo; e <= hi; ++e) {
                const auto i = std::size_t(e);
                if (out.first[i] < 0) {
                    out.first[i] = r;
                    out.owner[i] = thread;
                }
                if (writes && !out.written[i]) {
                    out.written[i] = 1;
                    out.owner[i] = thread;
                }
            }
        }
    }
    return out;
}

} // namespace Kp
