#pragma once

#include "buffers/dtype.h"
#include "check/checkspec.h"
#include "core/result.h"

#include <QByteArray>
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <array>
#include <optional>

namespace Kp {

struct Project;

/** One element that failed a check. */
struct CheckMismatch
{
    qint64 index = 0;               ///< flat element index in the buffer
    int component = 0;              ///< for vector dtypes (float4: 0..3); 0 for scalars
    std::array<qint64, 3> coords{}; ///< x, y, z (x the last axis of the shape; 0 for missing axes)
    double got = 0;
    double expected = 0;
};

/** The outcome of one check over its seed runs (docs/checks.md, "The report"). */
struct CheckResult
{
    QString name; ///< CheckSpec::displayName()
    QString buffer;
    CheckSpec::Kind kind = CheckSpec::Kind::Expected;
    QString target; ///< the expression, reference buffer or npy file
    bool passed = false;
    bool exact = false;       ///< an integer buffer without a tolerance: compared exactly
    CheckTolerance tolerance; ///< what was applied (the defaults when the check names none)
    int seedRuns = 1;         ///< runs the check asked for
    int seedRun = 0;          ///< the run reported: the first that failed, else 0
    int axes = 1;             ///< of the buffer's shape: coordinates shown
    int components = 1;
    // The reported run's numbers:
    qint64 compared = 0;    ///< values compared (elements x components in the region)
    qint64 mismatches = 0;  ///< values that failed
    double maxAbsError = 0; ///< over values where both sides are finite
    double meanAbsError = 0;
    double maxRelError = 0;             ///< |got - expected| / |expected| where expected is finite and not 0
    std::optional<CheckMismatch> worst; ///< the failing value with the largest error (a non-finite one first)
    QList<CheckMismatch> first;         ///< the first kMaxReportedMismatches, in index order
    /** A "printed" check that failed: the start of the output it saw. */
    QString detail;
    /** Set when the check could not be evaluated (an unreadable file...); passed is then false. */
    std::optional<Error> error;

    double mismatchFraction() const { return compared ? double(mismatches) / double(compared) : 0; }
};

/** How many mismatches a report lists. */
constexpr int kMaxReportedMismatches = 10;

/** The tolerance a floating-point check gets without one (docs/checks.md). */
CheckTolerance defaultTolerance(DType dtype);

/** Host contents of one buffer: dtype, resolved shape and bytes (C order). Not owning. */
struct BufferView
{
    DType dtype = DType::Float32;
    QList<qint64> shape;
    const void *data = nullptr;
    qint64 bytes = 0;

    qint64 elementCount() const;
};

/**
 * What checks read, for one seed run: every buffer before the run (initial,
 * only the ones an expression names need to be there), after the run, and
 * after the reference run; the variables of the project (scalars, a.n ...;
 * expressionVariables()), and the folder npy files are relative to.
 */
struct CheckData
{
    QHash<QString, BufferView> initial;
    QHash<QString, BufferView> after;
    QHash<QString, BufferView> reference;
    QMap<QString, double> variables;
    QString projectDir;
    /** The run's device printf output, every step's in order, for "printed" checks. */
    QString printed;
    bool printedTruncated = false; ///< the worker kept only the start of a longer output
    /**
     * Optional, for viewers (the GUI's heatmap of failing cells): when set,
     * evaluateCheck() resizes it to the checked buffer's element count, zero,
     * and sets byte e to 1 where a value of element e failed. One byte per
     * element; nothing else reads it.
     */
    QByteArray *failedMask = nullptr;
};

/**
 * The variables an expected expression may use for checked buffer `checked`
 * of shape `shape`, in order of precedence (later ones hide earlier ones):
 * i, x, y, z, c; the project's variables (scalars, a.n, a.nx, ...); and the
 * name of every buffer with as many elements as the checked one (its initial
 * contents at the same index).
 */
QStringList checkVariableNames(const QMap<QString, double> &variables, const QHash<QString, BufferView> &buffers,
                               const BufferView &checked);

/**
 * A result that names its check (name, buffer, kind, target, seed runs) and
 * nothing else yet: what evaluateCheck() starts from, and what a check that
 * could not be evaluated reports with its error.
 */
CheckResult checkResultHead(const CheckSpec &check, int seedRun = 0);

/**
 * Evaluates one check on one seed run. path is the check's JSON path
 * ("checks[2]") for messages. Mismatches go into the result; an Error comes
 * back only when the check cannot be evaluated at all (a buffer missing from
 * data, an expression that does not parse, an unreadable or wrong-sized npy
 * file). Pure apart from reading the npy file; any thread.
 *
 * Speed: the expression is parsed once (muparser byte code) and evaluated
 * per value; about 30 ns per value for "a + b" (docs/checks.md).
 */
Result<CheckResult> evaluateCheck(const CheckSpec &check, const CheckData &data, int seedRun,
                                  const QString &path = QStringLiteral("check"));

/**
 * Checks a project's checks against its buffers with resolved shapes
 * (contents not needed) before anything runs: regions inside the shapes,
 * reference buffers as large as the checked ones, expected expressions that
 * parse with checkVariableNames() (variables: expressionVariables()), npy
 * files readable with as many values as the check compares. Errors name the
 * JSON path ("checks[1].expected: unknown variable 'q' in 'q + 1'; ...").
 * Returns warnings: keys a check does not know, seeds without random buffers.
 */
Result<QStringList> validateChecks(const Project &project, const QHash<QString, BufferView> &buffers,
                                   const QMap<QString, double> &variables);

/**
 * Folds the result of seed run k into the check's result so far (start
 * with the run 0 result): a later failing run is reported when the earlier
 * ones passed.
 */
void mergeSeedRun(CheckResult &sofar, const CheckResult &next);

/** A check's result as JSON (docs/kpg-run-json.md, "checks"). Non-finite numbers are "nan", "inf", "-inf". */
QJsonObject checkResultToJson(const CheckResult &result);
/** Every result, in order. */
QJsonArray checkResultsToJson(const QList<CheckResult> &results);

/**
 * A few lines for a terminal: "PASS c = a + b (1048576 values)", or
 * "FAIL c = a + b: 3 of 1048576 values differ (0.0003 %), max abs err 1.5
 * at [17] (x=17): got 2.5, expected 1.0" followed by the first mismatches,
 * indented.
 */
QString checkResultText(const CheckResult &result);

/** A number for reports: shortest round-trip text, "nan", "inf", "-inf". */
QString checkNumberText(double v);

} // namespace Kp
