#pragma once

#include "access/accessstats.h"
#include "access/ptxinstrument.h"
#include "compile/compiletypes.h"
#include "core/result.h"
#include "project/project.h"
#include "run/runtypes.h"

#include <QJsonObject>
#include <QStringList>

#include <array>
#include <optional>

namespace Kp {

class EngineClient;

/** What to record (docs/memory-access.md). */
struct AccessRunOptions
{
    int step = 0;             ///< the launch step (0-based) whose launch is recorded; the steps before it run too
    qint64 records = 1 << 18; ///< room for this many warp records (288 bytes each)
    int device = 0;
    std::optional<QString> replacementSource;
    QString replacementFileName;
};

/** One recorded launch: the module's sites, the records and what they say. */
struct AccessReport
{
    CompileResult compiled;
    QList<AccessSite> sites;
    int skipped = 0; ///< memory instructions the map leaves out (local, constant, async copies)
    int step = 0;
    QString kernel;
    Dim3 grid{1, 1, 1};
    Dim3 block{1, 1, 1};
    QString device;
    QByteArray trace;
    AccessSummary summary;
    QStringList warnings;
    QString sourceText; ///< the source the lines refer to
    QString sourceName;
    /**
     * What recording costs (docs/memory-access.md, "Cost"): the recorded
     * launch's event time, and the same launch's without recording, run just
     * before it on the same inputs; 0 when not measured.
     */
    double launchMs = 0;
    double plainLaunchMs = 0;
    /** launchMs / plainLaunchMs: how many times slower recording made the launch; 0 when not measured. */
    double recordingSlowdown() const { return launchMs > 0 && plainLaunchMs > 0 ? launchMs / plainLaunchMs : 0; }

    std::array<quint32, 3> blockDim() const { return {quint32(block[0]), quint32(block[1]), quint32(block[2])}; }
};

/**
 * Compiles the project, instruments its PTX, runs its steps up to
 * options.step once (untimed, default stream) with that step's launch
 * recorded, and reads the records. Errors name the field or the step
 * ("launches[2] is a copy; the memory-access map records kernel steps").
 * The thread that owns engine; blocks until the run is done (kpg).
 */
Result<AccessReport> runAccessMap(const Project &project, EngineClient *engine, const AccessRunOptions &options);

/** "the recorded launch took 2.413 ms, 181.2x the same launch unrecorded (0.013 ms)", or empty when not measured. */
QString accessCostText(const AccessReport &report);

/** The report as JSON (docs/memory-access.md): per line, per site, per buffer. */
QJsonObject accessReportJson(const AccessReport &report);

/** The report as text for a terminal: the lines with a cost, each with its source line and reading. */
QString accessReportText(const AccessReport &report);

} // namespace Kp
