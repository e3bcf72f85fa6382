#pragma once

#include "core/result.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace Kp {

/**
 * The memory-access map (docs/memory-access.md): the kernel's own PTX, with a
 * few instructions before every global and shared load, store and atomic that
 * write, for each warp that executes it, one record: which instruction (a
 * site), which lanes, which block and warp, and each lane's address. The
 * driver compiles the instrumented PTX like any other; nothing needs profiler
 * rights or a tool library, and the addresses are the launch's real ones.
 *
 * Why PTX and not SASS: NVRTC's PTX keeps each source access as one
 * instruction with its width (a float4 load stays one ld.v4.f32), ptxas
 * rarely merges or splits them, and PTX can be rewritten as text with the
 * toolkit's own grammar. What the instrumentation cannot see: accesses that
 * ptxas creates (register spills to local memory, which are left out anyway),
 * cp.async copies, texture and surface fetches, and constant-memory loads.
 */

/** Where a site's access goes, as PTX names it. */
enum class AccessSpace { Global, Shared, Generic };
/** What a site does. */
enum class AccessKind { Load, Store, Atomic };

/** One instrumented instruction of the module. */
struct AccessSite
{
    int id = 0;         ///< the record's site word; the index in PtxInstrumented::sites
    QString function;   ///< the PTX entry or function it is in (mangled)
    int sourceFile = 0; ///< the .loc file index (0: none seen yet)
    QString sourcePath; ///< that file's name from the .file directive
    int sourceLine = 0; ///< the .loc line in force (0: none)
    int ptxLine = 0;    ///< 1-based line of the instruction in the original PTX
    AccessSpace space = AccessSpace::Global;
    AccessKind kind = AccessKind::Load;
    int width = 4;       ///< bytes a lane accesses (a .v4.f32 is 16)
    QString typeName;    ///< what one lane accesses, in C words: "float", "float4", "4-byte word"
    QString instruction; ///< the PTX instruction as written, trimmed
};

/** The layout of the trace the instrumented module writes (little-endian, 8-byte aligned). */
namespace AccessTraceLayout {
constexpr int kRecordBytes = 288; ///< 32 bytes of header, then 32 lane addresses of 8 bytes
constexpr int kLaneOffset = 32;
/// Lane addresses: global addresses as they are; shared ones are the offset into the
/// block's shared window with this bit set; local (a generic pointer to the stack) with kLocalTag.
constexpr quint64 kSharedTag = 0x8000000000000000ull;
constexpr quint64 kLocalTag = 0x4000000000000000ull;
/// The module globals the worker sets before the launch.
inline constexpr char kBufferSymbol[] = "__kpg_access_buf";   ///< .u64: the device address of the records
inline constexpr char kCapacitySymbol[] = "__kpg_access_cap"; ///< .u64: how many records fit
inline constexpr char kCountSymbol[] = "__kpg_access_count";  ///< .u64: records asked for (may pass the capacity)
} // namespace AccessTraceLayout

struct PtxInstrumented
{
    QByteArray ptx;          ///< the module to load instead of the compiled one
    QList<AccessSite> sites; ///< indexed by AccessSite::id
    int skipped = 0;         ///< memory instructions left out (local, param, const, cp.async, ...)
};

/**
 * Rewrites ptx (NVRTC's output for one module) with a record before every
 * global, shared and generic ld/ldu/st/atom/red. Fails with a message when
 * the PTX is not something this reader knows (no .address_size 64, an
 * address operand it cannot read), rather than instrumenting half a module.
 * Pure text work; any thread.
 */
Result<PtxInstrumented> instrumentPtx(const QByteArray &ptx);

} // namespace Kp
