#pragma once

// Grades submissions against a lab's exercises on the GPUs of this host
// (docs/labs.md): a compile stage runs ahead on CPU threads, and one runner
// per job (each with its own EngineClient, so its own worker process) runs
// the compiled submissions through runProjectWithChecks() on its GPU. A fault
// or hang kills that runner's worker; the EngineClient starts a fresh one for
// the next submission, so only the submission that caused it is lost.

#include "check/checkedrun.h"
#include "grade/graderesult.h"
#include "grade/lab.h"
#include "grade/policy.h"

#include <QHash>
#include <QList>
#include <QString>

#include <atomic>
#include <functional>
#include <mutex>

namespace Kp {
class EngineClient;
}

namespace Kp::Grade {

struct GraderOptions
{
    /** The GPUs to run on (their numbers in the worker's list); empty: none (compile and bind only). */
    QList<int> devices;
    /** Runner threads, spread over devices round-robin; at least 1. */
    int jobs = 1;
    /** Compile-ahead threads; at least 1. */
    int compileJobs = 1;
    /** Time submissions and references with each exercise's "timing"; off: run once, no speed ratio. */
    bool timing = true;
    /** Evaluate checks (off only to measure what checks cost). */
    bool checks = true;
    /** Seconds a launch may run; 0: each exercise's own "timeout". */
    double timeoutSeconds = 0;
    /** The compute capability the compile stage compiles for ("auto" arch); 0.0 without a GPU. */
    int ccMajor = 0;
    int ccMinor = 0;
    /**
     * Grading only: mixed into every random buffer's seed (saltedProject()),
     * so the seeds in the students' copy of an exercise do not predict the
     * inputs they are graded on. Empty: the seeds as written.
     */
    QString seedSalt;
    /** Time limits, the suspicious-speed flag. */
    LabPolicy policy;
    /** Compile each submission with no folder of the lab's readable: it reads itself and the toolkit only. */
    bool isolatedCompile = true;
    /** Run each submission once more under compute-sanitizer memcheck and report its findings. */
    bool sanitize = false;
    /** Grade each exercise's starter too (prepare()): one that passes cannot tell students apart. */
    bool preflightStarter = true;
};

/** One submission of one exercise to grade. */
struct GradeTask
{
    QString student;
    const Exercise *exercise = nullptr;
    Submission submission;
};

/** What a grading did, for the progress line and bench_grade. */
struct GraderStats
{
    std::atomic<int> workerStarts{0};
    std::atomic<int> compiled{0};
};

class Grader
{
public:
    Grader(const Lab &lab, GraderOptions options);

    /**
     * Runs each exercise's reference as a submission (its checks must pass)
     * on every device, and keeps its median time per device as the speed
     * ratios' base. Without a GPU only what can be checked without one is
     * (compile, bindings, checks). An exercise without "reference.source" is
     * not self-tested. Errors: BadInput naming the exercise when a reference
     * does not compile, faults or fails a check; NoCompiler when NVRTC is
     * missing.
     */
    Status prepare();

    /**
     * Grades every task and calls onDone (serialized, from any thread) as each
     * finishes. Blocks until all are done.
     */
    void run(const QList<GradeTask> &tasks, const std::function<void(const GradeItem &)> &onDone);

    /** The reference's median time of an exercise on a device, NaN when not timed. */
    double referenceMs(const QString &exercise, int device) const;

    const GraderStats &stats() const { return m_stats; }
    double prepareMs() const { return m_prepareMs; }
    /** The reference's slowest launch (ms) of an exercise on a device, NaN when unknown: the time limit's base. */
    double referenceLaunchMs(const QString &exercise, int device) const;

private:
    GradeItem gradeOne(const GradeTask &task, int device, EngineClient *engine);

    const Lab &m_lab;
    GraderOptions m_options;
    QHash<QString, double> m_referenceMs;       ///< "exercise#device"
    QHash<QString, double> m_referenceLaunchMs; ///< "exercise#device"
    mutable std::mutex m_mutex;
    GraderStats m_stats;
    double m_prepareMs = 0;
};

/**
 * Turns a checked run into an item's outcome and detail (also for tests): a
 * write outside a buffer fails it ("wrote outside `out` ..."), also next to
 * a failed check; printf cut short is its own outcome. exercise, when
 * given, says which checks are hidden.
 */
void classifyRun(const CheckedRun &run, GradeItem *item, const Project *exercise = nullptr);

/** Adds a flag for the instructor when the speed ratio is above bound (0: never); the outcome stays. */
void flagSuspiciousSpeed(GradeItem *item, double bound);

/** Whether a check is marked `"hidden": true` (it runs in grading, and is left out of the starter copy). */
bool isHiddenCheck(const CheckSpec &check);

/**
 * The project with every random buffer's seed mixed with salt (SHA-256 of
 * the salt and the seed); the project itself when salt is empty. Seed runs
 * then derive their seeds from the salted ones.
 */
Project saltedProject(const Project &project, const QString &salt);

} // namespace Kp::Grade
