#pragma once

#include "check/checkspec.h"
#include "core/result.h"
#include "project/orderedjson.h"

#include <QJsonValue>
#include <QList>
#include <QString>

namespace Kp {

struct BufferSpec;

// The JSON form of "checks" in .kpg files (docs/checks.md): the project
// reader and writer use it, so a check reads and writes the same everywhere.

/**
 * Reads a "checks" array of a project whose buffers are already read. What
 * the file alone decides is checked here: the keys' types, exactly one of
 * expected/reference/npy, that the buffers exist, no tolerance (nor "nan") on
 * an integer buffer, a region with one item per axis that lies inside a
 * known shape, seeds from 1 to kMaxCheckSeeds. What needs the buffers'
 * resolved shapes, the scalars' variables or a file is validateChecks()'s
 * (check/checkvalidate.h). Errors name the JSON path, in the message and in
 * Error::path: "checks[2].tolerance.ulp: must be at least 0, got -1". Keys a
 * check does not know are kept in CheckSpec::unknown.
 */
Result<QList<CheckSpec>> checksFromJson(const QJsonValue &json, const QList<BufferSpec> &buffers,
                                        const QString &path = QStringLiteral("checks"));

/**
 * Checks that region lies inside shape (resolved; nothing is checked for an
 * empty shape): one coordinate per axis, begin < end <= the extent. path is
 * the region's JSON path ("checks[0].region"); errors name the item.
 */
Status checkRegionInside(const CheckRegion &region, const QList<qint64> &shape, const QString &path);

/**
 * One check in the .kpg key order: name (when written), buffer, the expected
 * value, tolerance (fields that are not 0), region, seeds (when not 1), nan
 * (when true), then unknown keys.
 */
JsonNode checkSpecNode(const CheckSpec &check);

} // namespace Kp
