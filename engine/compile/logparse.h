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

/** ptxas -v statistics per function (lowered name). */
QHash<QString, KernelResources> parsePtxasInfo(const QString &log);

} // namespace Kp
