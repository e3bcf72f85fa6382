#pragma once

#include "check/checkedrun.h"
#include "run/sanitizer.h"

#include <optional>

namespace Kp {

/** How runProjectSanitized() runs a project under compute-sanitizer. */
struct SanitizeOptions
{
    Sanitizer::Tool tool = Sanitizer::Tool::Memcheck;
    bool hazards = false;    ///< racecheck: every hazard (thread pairs, shared offsets) rather than the analysis
    int printLimit = 1000;   ///< findings the sanitizer records at most
    int exitWaitMs = 300000; ///< how long the sanitizer may take to finish its report after the worker ends
    QString program;         ///< compute-sanitizer; empty: Sanitizer::findProgram()
};

/** A run under compute-sanitizer: the run itself (untimed, no guards) and the sanitizer's findings. */
struct SanitizedRun
{
    CheckedRun checked;
    QString program;                         ///< the compute-sanitizer that ran
    std::optional<Sanitizer::Report> report; ///< parsed and mapped to buffers
    std::optional<Error> reportError;        ///< no report, or one that could not be read

    bool clean() const { return report && report->findings.isEmpty(); }
};

/**
 * Runs a project once, untimed, without guard zones, in a kpg-worker started
 * under compute-sanitizer (WorkerLaunch: one worker, left to finish, so its
 * XML report is written also after a kernel fault), with the project's checks,
 * then reads the report and maps addresses to buffers and elements.
 * Blocks; not on the engine's thread.
 */
SanitizedRun runProjectSanitized(Project project, CheckedRunOptions options, const SanitizeOptions &sanitize);

} // namespace Kp
