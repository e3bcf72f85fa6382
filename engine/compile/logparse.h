#pragma once

#include "compiletypes.h"

#include <QHash>

namespace Kp {

/**
 * Turns NVRTC's log into diagnostics: "file(line): error #N-D: message", the
 * echoed source line and the caret under it (the column), continuation lines
 * ("detected during instantiation ...") folded into the message. Lines about
 * precompiled headers and ptxas statistics are not diagnostics.
 */
QList<Diagnostic> parseDiagnostics(const QString &log);

/**
 * NVRTC's log as users read it: without the automatic precompiled header's
 * lines ("creating precompiled header file /tmp/...", which name a temporary
 * folder and say nothing about the kernel) and the log's terminating NUL.
 */
QString userLog(const QString &log);

/** ptxas -v statistics per function (lowered name). */
QHash<QString, KernelResources> parsePtxasInfo(const QString &log);

} // namespace Kp
