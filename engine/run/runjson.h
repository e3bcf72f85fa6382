#pragma once

#include "compile/compiletypes.h"
#include "run/runtypes.h"

#include <QJsonObject>

namespace Kp {

/**
 * A run's result as the JSON of docs/kpg-run-json.md: steps, timing (null
 * when not timed), throughput, warnings and error (null, or the Error with
 * step and buffersRestored). The keys about the project and the compile
 * ("project", "title", "compile") are the caller's to add. Used by
 * `kpg run --json` and available to the GUI's Results export, so both write
 * one format. Pure; any thread.
 */
QJsonObject runResultToJson(const RunResult &result);

/** A grid or block as kpg's JSON writes one: {"x": 4096, "y": 1, "z": 1}. */
QJsonObject dim3Json(const Dim3 &d);

/** The run's "guards" object: on or off, what checking cost, and every write outside a buffer. */
QJsonObject guardsToJson(const RunResult &result);
/** A compile's summary as `kpg run --json` and `kpg sweep --json` write it: ok, arch, versions, diagnostics. */
QJsonObject compileResultToJson(const CompileResult &compiled);

} // namespace Kp
