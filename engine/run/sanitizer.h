#pragma once

#include "core/result.h"
#include "run/guardzones.h"
#include "run/runtypes.h"

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace Kp {

/**
 * compute-sanitizer support (docs/memory-checking.md): finding the tool, the
 * options a checked worker is started with, and its XML report read into
 * findings that name source lines, threads and buffer elements. Needs no GPU;
 * the parser is tested on recorded reports (tests/data/sanitizer).
 */
namespace Sanitizer {

enum class Tool { Memcheck, Racecheck, Initcheck, Synccheck };

QString toolName(Tool tool);
/** "memcheck", "racecheck", "initcheck" or "synccheck"; an error names the choices. */
Result<Tool> parseTool(const QString &name);

/**
 * The compute-sanitizer program: $KPG_COMPUTE_SANITIZER, else in the toolkit
 * (/usr/local/cuda/bin, $CUDA_HOME/bin, $CUDA_PATH/bin, the toolkit kpg was
 * built with, next to nvcc on PATH), else on PATH. A missing one is an error
 * that says where it was looked for.
 */
Result<QString> findProgram();

/** Everything before kpg-worker's path: the program, the tool and an XML report saved to xmlPath. */
QStringList launchPrefix(const QString &program, Tool tool, const QString &xmlPath, int printLimit = 1000,
                         bool hazards = false);

/** A thread and block, as the report gives them. */
struct Coord
{
    qint64 x = 0, y = 0, z = 0;
    QString text() const; ///< "(232,0,0)"
    bool operator==(const Coord &) const = default;
};

/** A source place of a finding. */
struct Place
{
    QString function;
    QString path; ///< as compiled: the project folder and the source's name
    int line = 0; ///< 0 when compiled without -lineinfo
    quint64 pc = 0;
    bool operator==(const Place &) const = default;
};

/** One finding of the report, with the buffer and element it falls in when the address maps to one. */
struct Finding
{
    enum class Kind {
        InvalidAccess, ///< memcheck: out of bounds or misaligned access
        Race,          ///< racecheck analysis: two lines that race, with a count
        Hazard,        ///< racecheck hazard: one pair of threads and a shared-memory offset
        Uninitialized, ///< initcheck: a read of memory never written
        Sync,          ///< synccheck: a barrier misused
        Api,           ///< a failed CUDA call (the worker's own probing is filtered out)
        Other
    };
    Kind kind = Kind::Other;
    QString text;  ///< the tool's own sentence
    QString level; ///< "Error", "Warning" when given
    Place where;
    bool hasThread = false;
    Coord thread, block;
    // Memory accesses (memcheck, initcheck):
    QString space;     ///< "__global__", "__shared__", "__local__"
    QString direction; ///< "read" or "write"
    int size = 0;      ///< bytes accessed
    quint64 address = 0;
    QString error; ///< "out of bounds", "misaligned"
    // Races (analysis): the other side; hazards: the other thread.
    Place other;
    QString otherDirection;
    QString ownDirection;
    qint64 count = 0;   ///< race analysis: how many hazards the pair stands for
    QString hazardType; ///< "RAW", "WAR", "WAW"
    Coord otherThread;
    // Filled by mapAddresses():
    QString buffer; ///< the buffer the address falls in or just past
    qint64 element = -1;
    qint64 bytesPast = -1; ///< >= 0: this many bytes past the buffer's last byte
    /** Hazards: the byte offset into the block's own shared memory (static, then dynamic). */
    qint64 sharedOffset = -1;
    /** Hazards: sharedOffset once mapAddresses() has set it, else the address racecheck gave. */
    qint64 sharedByte() const { return sharedOffset >= 0 ? sharedOffset : qint64(address); }
    QString api; ///< Api records: the call

    /** "invalid write of 4 bytes by thread (232,0,0) block (3,0,0), just past the end of `c` (element 1000)". */
    QString summary() const;
    QJsonObject toJson() const;
};

QString kindName(Finding::Kind kind);

struct Report
{
    QList<Finding> findings;
    int apiFiltered = 0; ///< Api records of the worker's own probing, left out
    /** Findings per kindName(). */
    QHash<QString, int> counts() const;
    QJsonObject toJson(Tool tool, int firstN = -1) const;
};

/**
 * Reads compute-sanitizer's --xml report. Malformed or truncated XML is an
 * error naming the line and column ("the compute-sanitizer report ends in
 * the middle (line 40): ..."). cuFuncGetParamInfo's CUDA_ERROR_INVALID_VALUE,
 * which the worker's parameter probing causes, is left out.
 */
Result<Report> parseXml(const QByteArray &xml);

/**
 * Names the buffer and element of every access whose address falls in an
 * allocation, or in the kGuardBytes after one; elementBytes by buffer name
 * (1 when missing). Hazards get their sharedOffset: racecheck gives the
 * address in the block's shared window, which on sm_80 and newer starts
 * with reservedShared bytes the driver keeps for itself
 * (CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, 1 KiB on the H200),
 * so `sdata[0]` is at 0x400 there.
 */
void mapAddresses(Report &report, const QList<DeviceAllocation> &allocations, const QHash<QString, int> &elementBytes,
                  int reservedShared = 0);

} // namespace Sanitizer

} // namespace Kp
