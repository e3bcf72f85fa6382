#pragma once

#include "check/sanitizedrun.h"
#include "run/runtypes.h"

#include <QJsonObject>
#include <QStringList>
#include <QTextStream>

#include <optional>

namespace Kp::Cli {

/** `--sanitize TOOL [--hazards] [--all-findings]` of kpg run and kpg check. */
struct SanitizeArgs
{
    std::optional<SanitizeOptions> options; ///< set when --sanitize was given
    bool allFindings = false;               ///< print every finding, not the first few of each kind

    /**
     * Takes args[i] (and its value) if it is one of these options; returns
     * false when it is not. A bad value sets *usage to the message.
     */
    bool take(const QStringList &args, qsizetype &i, const QString &command, QString *usage);
};

/** The guard zones' outcome: every write outside a buffer, or nothing when clean. */
void printGuards(QTextStream &o, const RunResult &r);

/** The sanitizer's summary and findings (the first few per kind unless all). */
void printSanitizer(QTextStream &o, const SanitizedRun &s, bool all);

/** The JSON "sanitizer" object (docs/memory-checking.md). */
QJsonObject sanitizerJson(const SanitizedRun &s, Sanitizer::Tool tool);

/**
 * The exit code of a sanitized run: 1 (a check failed) when the sanitizer
 * found anything, even when the run faulted because of it; a missing or
 * unreadable report is an error of its own; else the run's code.
 */
int sanitizedExitCode(const SanitizedRun &s, int runCode);

} // namespace Kp::Cli
