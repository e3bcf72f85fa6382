#pragma once

#include "access/ptxinstrument.h"
#include "core/result.h"

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QString>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace Kp {

/**
 * Reading a memory-access trace (records written by the instrumented module
 * of ptxinstrument.h): per site and per source line, how many 32-byte sectors
 * each warp's global request touched against the ideal for the bytes it asked
 * for, and how many shared-memory wavefronts (bank-conflict passes) each
 * shared request took against the ideal; per buffer, which elements were read
 * and written; for one cell, which threads touched it. Pure computation on
 * bytes; any thread.
 *
 * The model (docs/memory-access.md): a global request costs one 32-byte
 * sector per distinct sector its lanes' bytes fall in (what the L1/L2 fetch);
 * the ideal is the bytes the lanes asked for, without duplicates, rounded up
 * to sectors. A shared request is served in phases (all 32 lanes for accesses
 * of up to 4 bytes, half warps for 8, quarter warps for 16); in each phase
 * the banks (4-byte words modulo 32) serve one distinct word per pass, so the
 * phase takes as many wavefronts as the busiest bank has distinct words. The
 * ideal is one wavefront per phase.
 */

/** A buffer of the launch, as the worker allocated it (for naming addresses). */
struct TraceBuffer
{
    QString name;
    quint64 address = 0; ///< device address of element 0
    qint64 bytes = 0;
    int elementBytes = 1;
};

struct SiteAccess
{
    AccessSite site;
    qint64 requests = 0;       ///< warp records of the site
    qint64 globalRequests = 0; ///< of those, with global lanes
    qint64 sharedRequests = 0; ///< with shared lanes (a generic access can have both)
    qint64 laneAccesses = 0;   ///< lanes that made the access, over every record
    qint64 sectors = 0;        ///< 32-byte sectors touched, summed over global requests
    qint64 idealSectors = 0;
    qint64 bytesAsked = 0; ///< distinct bytes the lanes asked for, summed over global requests
    qint64 wavefronts = 0; ///< shared wavefronts, summed over shared requests
    qint64 idealWavefronts = 0;
    int maxConflict = 1;        ///< the worst bank conflict of one phase (1: none)
    qint64 strideBytes = 0;     ///< the most common distance between neighbouring lanes' addresses
    bool strideRegular = false; ///< that distance is what most neighbours have
    QString reading;            ///< one line for a person: "stride of 32 floats between neighbouring threads: ..."

    double sectorsPerRequest() const { return globalRequests ? double(sectors) / double(globalRequests) : 0; }
    double idealSectorsPerRequest() const { return globalRequests ? double(idealSectors) / double(globalRequests) : 0; }
    double wavefrontsPerRequest() const { return sharedRequests ? double(wavefronts) / double(sharedRequests) : 0; }
    double idealWavefrontsPerRequest() const
    {
        return sharedRequests ? double(idealWavefronts) / double(sharedRequests) : 0;
    }
    /** Fetched bytes that were asked for (1 = every byte of every sector used). */
    double efficiency() const { return sectors ? double(bytesAsked) / double(sectors * 32) : 1; }
};

/** The sites of one source line, added up. */
struct LineAccess
{
    QString path;
    int line = 0;
    QList<int> sites;
    qint64 globalLoads = 0; ///< requests
    qint64 globalStores = 0;
    qint64 globalAtomics = 0;
    qint64 sharedRequests = 0;
    qint64 sectors = 0;
    qint64 idealSectors = 0;
    qint64 wavefronts = 0;
    qint64 idealWavefronts = 0;
    int maxConflict = 1; ///< the worst bank conflict of its sites (1: none)
    QString reading;     ///< the reading of the line's costliest site

    qint64 globalRequests() const { return globalLoads + globalStores + globalAtomics; }
    /** Sectors beyond the ideal plus wavefronts beyond the ideal: what the line wastes, for sorting and colour. */
    qint64 excess() const { return (sectors - idealSectors) + (wavefronts - idealWavefronts); }
};

/**
 * A line's cost class, for the editor's heat margin: the worse of sectors
 * over the ideal and wavefronts over the ideal. Ideal: both at the ideal;
 * Mild: under twice it; Costly: 2 to 4 times; Severe: over 4 times, or a
 * bank conflict of 4 ways or more in some phase.
 */
enum class AccessHeat {
    Ideal,
    Mild,
    Costly,
    Severe,
};

AccessHeat accessHeat(const LineAccess &line);
/** "ideal", "under 2x the ideal", "2 to 4x the ideal", "over 4x the ideal": the margin's tooltip words. */
QString accessHeatName(AccessHeat heat);

/** What a launch did to one buffer: distinct elements read, written, touched by atomics. */
struct BufferAccess
{
    qint64 read = 0;
    qint64 written = 0;
    qint64 atomics = 0;
};

struct AccessSummary
{
    QList<SiteAccess> sites; ///< those with at least one record, by site id
    QList<LineAccess> lines; ///< by path, then line
    QMap<QString, BufferAccess> buffers;
    QList<TraceBuffer> bufferList;
    qint64 recorded = 0;  ///< records read
    qint64 requested = 0; ///< records the launch asked for (past the capacity they are only counted)
    qint64 outside = 0;   ///< global lane accesses inside no buffer (device globals, or past an end)

    bool truncated() const { return requested > recorded; }
};

/**
 * Reads trace (whole records only) of a module whose sites are sites;
 * requested is the module's record counter (>= the records in trace when
 * the capacity was reached). Fails on a trace that is not whole records or
 * names a site the module does not have.
 */
Result<AccessSummary> summarizeAccess(const QList<AccessSite> &sites, const QByteArray &trace, qint64 requested,
                                      const QList<TraceBuffer> &buffers);

/** "global", "shared", "generic": the words kpg access, its JSON and the panel use. */
QString accessSpaceName(AccessSpace space);
/** "load", "store", "atomic". */
QString accessKindName(AccessKind kind);
/** What an access did to a cell: "read", "written", "atomic". */
QString touchVerb(AccessKind kind);

/** One access of one cell. */
struct CellTouch
{
    std::array<quint32, 3> block{};
    std::array<quint32, 3> thread{};
    int site = 0;
    int line = 0;
    AccessKind kind = AccessKind::Load;
    qint64 record = 0; ///< the record's index: the order in which warps reached the site
};

/**
 * Every access of element `element` of buffer `buffer` in the trace, in
 * record order; blockDim turns a warp and lane into a thread index.
 * At most limit touches (a cell read by every thread of a big launch).
 */
QList<CellTouch> touchesOf(const AccessSummary &summary, const QList<AccessSite> &sites, const QByteArray &trace,
                           const QString &buffer, qint64 element, std::array<quint32, 3> blockDim, int limit = 1000);

/** What the Inspector colours a buffer's cells by, from one recorded launch. */
enum class OwnerColour { Thread, Warp, FirstAccess };

/**
 * For every element of one buffer: the thread that wrote it first (or, if
 * nothing wrote it, that read it first) and when the cell was first touched,
 * in record order. Whole-buffer counterpart of touchesOf, for colouring.
 */
struct CellOwners
{
    QString buffer;
    std::array<quint32, 3> grid{1, 1, 1};
    std::array<quint32, 3> block{1, 1, 1};
    qint64 records = 0;          ///< records of the trace (the first-access scale)
    bool truncated = false;      ///< the trace holds only the first accesses of the launch
    std::vector<qint64> owner;   ///< global linear thread index (block-major), -1: untouched
    std::vector<qint64> first;   ///< record index of the first touch, -1: untouched
    std::vector<quint8> written; ///< 1 where the owner wrote the cell

    qint64 elements() const { return qint64(owner.size()); }
    qint64 threadsPerBlock() const
    {
        return qint64(std::max(1u, block[0])) * std::max(1u, block[1]) * std::max(1u, block[2]);
    }
    /** The warp within its block of a global linear thread index. */
    qint64 warpInBlock(qint64 linear) const { return linear % threadsPerBlock() / 32; }
    /** Block and thread of a global linear thread index. */
    std::pair<std::array<quint32, 3>, std::array<quint32, 3>> threadOf(qint64 linear) const;
    /**
     * The cell's colour key in [0, 1): for Thread and Warp the golden-ratio
     * spread of the index (neighbours differ), for FirstAccess the position in
     * the trace; NaN for an untouched cell or one past the buffer.
     */
    double shade(qint64 element, OwnerColour colour) const;
    /** "written first by block (0, 1, 0) thread (3, 2, 0), warp 2 of its block, access 17 of 38400". */
    QString describe(qint64 element) const;
};

/** The largest buffer cellOwners colours: 17 bytes a cell, so at most about 285 MB of owners. */
constexpr qint64 kMaxOwnerCells = qint64(1) << 24;

/** The owners of every cell of buffer; an error when the launch had no such buffer or it is past kMaxOwnerCells. */
Result<CellOwners> cellOwners(const AccessSummary &summary, const QList<AccessSite> &sites, const QByteArray &trace,
                              const QString &buffer, std::array<quint32, 3> gridDim, std::array<quint32, 3> blockDim);

} // namespace Kp
