#pragma once

#include "check/checkeval.h"
#include "compile/compiletypes.h"
#include "core/result.h"
#include "cuda/deviceinfo.h"
#include "project/project.h"
#include "run/runner.h"
#include "run/runtypes.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace Kp {

class EngineClient;

/** How runProjectWithChecks() runs a project. */
struct CheckedRunOptions
{
    int device = 0;
    /** Time seed run 0 with the project's timing settings; off: every run runs once, untimed. */
    bool timing = true;
    /** Evaluate the project's checks (with the reference and seed runs they need); off: a plain run. */
    bool checks = true;
    /**
     * Compile this source in place of the project's (`kpg check --source`,
     * `kpg run --source`). The reference, inputs and checks stay the
     * project's: a reference without a source of its own runs the project's
     * source as written in the .kpg, not this one.
     */
    std::optional<QString> replacementSource;
    /** The name diagnostics give the replacement ("student.cu"). */
    QString replacementFileName;
    /**
     * Compile the source with no folder of the project's on the include path
     * and in the compiler sandbox (kpg grade: a submission must not include
     * the exercise's reference or data): it reads itself and the toolkit
     * only. The project's includeDirs are dropped.
     */
    bool isolatedCompile = false;
    int listDevicesTimeoutMs = 60000;
    /** Guard zones around the buffers (off for compute-sanitizer, which needs the exact sizes). */
    bool guards = true;
    /**
     * kpg grade's anti-gaming: the checked output buffers (those that start
     * as zeros or uninitialized) are a sentinel before every launch of the
     * step that writes them, in every seed run, and before every timing
     * sample, where the checks judge what the timed launches left; seed run
     * 1, on fresh inputs, is timed too when timing is on (its time is not
     * reported). run/sentinel.h.
     */
    bool sentinelOutputs = false;
};

/** What runProjectWithChecks() did, up to where it stopped. A plain value apart from the buffers. */
struct CheckedRun
{
    std::optional<DeviceInfo> device;
    CompileRequest request;                ///< the project's compile (its fileName names diagnostics)
    std::optional<CompileResult> compiled; ///< set once the compile ran (ok or not)
    std::optional<CompileResult> referenceCompiled;
    bool ran = false;          ///< run holds the project's seed run 0
    RunResult run;             ///< the project's run with the seeds as written (timed when asked)
    QStringList warnings;      ///< binding warnings (prepareRun) and check warnings (validateChecks)
    QList<CheckResult> checks; ///< one per project check, once all seed runs are done
    int seedRuns = 0;          ///< seed runs done (each a project run and, when needed, a reference run)
    HostBuffers buffers;       ///< seed run 0's buffers after the run (for --save-buffers)
    /**
     * What stopped it, if anything: no GPU (NoDriver/NoDevice), the project
     * not compiling (CompileError), a bad project or check (BadInput; also a
     * reference that does not compile or faults: the project's fault, not the
     * submission's), a fault or time-out of a run (also in run.error when it
     * was seed run 0). Checks that merely fail are not errors.
     */
    std::optional<Error> error;

    /** True when every check ran and passed (also when there are none). */
    bool checksPassed() const;
};

/**
 * Compiles a project (with options.replacementSource in place of its own),
 * fills its buffers, runs it on the GPU through engine, and evaluates its
 * checks (docs/checks.md): for each seed run k < the largest "seeds" of a
 * check, the project runs on inputs re-seeded for run k (projectForSeedRun),
 * the reference (referenceProjectFor, never timed) runs on the same inputs
 * when a check compares with it, and the checks that need run k are
 * evaluated on the host copies, with the initial contents kept for the
 * buffers expressions name. Seed runs stop early once every check that needs
 * them has failed.
 *
 * As `kpg run` always did, compile errors, binding errors and bad checks are
 * found before a missing GPU is reported. The one place `kpg run`, `kpg check`
 * (and later the GUI and grading) run a project with checks. Blocks; not on
 * the engine's thread.
 */
CheckedRun runProjectWithChecks(const Project &project, EngineClient *engine, const CheckedRunOptions &options);

/**
 * The GPU a run goes to: device `ordinal` of devices, none when listing them
 * failed (no driver: the compile and the bindings are still checked), or the
 * usage error "--device 3: this machine has 1 GPU (0 to 0)". Any thread.
 */
Result<std::optional<DeviceInfo>> deviceForRun(const Result<DeviceList> &devices, int ordinal);

/** The error of a compile that failed: "k.cu does not compile (2 errors)". */
Error compileFailed(const QString &fileName, const CompileResult &compiled);

/**
 * The project of seed run k: every random buffer's seed replaced by
 * seedForRun(seed, k); run 0 is the project as it is.
 */
Project projectForSeedRun(const Project &project, int run);

/**
 * The reference run of a project (as written, before any source
 * replacement): its "reference" source and launches where given, else its
 * own; never timed; no checks.
 */
Project referenceProjectFor(const Project &project);

/** Seed runs a project's checks need: the largest "seeds" (1 without checks). */
int seedRunsNeeded(const Project &project);

} // namespace Kp
