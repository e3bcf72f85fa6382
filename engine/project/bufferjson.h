#pragma once

#include "buffers/bufferspec.h"
#include "core/result.h"
#include "project/orderedjson.h"
#include "project/project.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QString>

namespace Kp {

// The one JSON form of buffers and scalars, as in .kpg files
// (docs/kpg-project.md): the project reader and writer and the Buffers panel
// all use it, so a buffer reads and shows the same everywhere.

/**
 * An init in the .kpg key order: "kind" first, then the kind's own keys.
 * A random init always names its "distribution" and writes "seed" as an
 * integer.
 */
JsonNode bufferInitNode(const BufferInit &init);
/** A buffer in the .kpg key order: name, dtype, shape (left out when from the file), init, then unknown keys. */
JsonNode bufferSpecNode(const BufferSpec &spec);
/** A scalar in the .kpg key order: name, type, value, then unknown keys. */
JsonNode scalarSpecNode(const ScalarSpec &scalar);

/** bufferInitNode() as a QJsonObject (integers stay integers). */
QJsonObject bufferInitToJson(const BufferInit &init);
/** bufferSpecNode() as a QJsonObject. */
QJsonObject bufferSpecToJson(const BufferSpec &spec);
/** scalarSpecNode() as a QJsonObject. */
QJsonObject scalarSpecToJson(const ScalarSpec &scalar);

/**
 * Reads an init object. path is where json sits in the project; errors name
 * it in the message ("buffers[1].init.kind: unknown kind 'ones'; ...") and
 * in Error::path. Keys of another kind are errors.
 */
Result<BufferInit> bufferInitFromJson(const QJsonValue &json, const QString &path = QStringLiteral("init"));
/**
 * Reads a buffer object: name, dtype, shape, init, then checks the size limit
 * and that the image mode fits the dtype. Keys it does not know are kept in
 * BufferSpec::unknown. Names of other buffers and scalars are not checked.
 */
Result<BufferSpec> bufferSpecFromJson(const QJsonValue &json, const QString &path = {});
/**
 * Reads a scalar object: name, type (a scalar dtype; int32 when left out)
 * and a value that the type holds exactly. Keys it does not know are kept.
 */
Result<ScalarSpec> scalarSpecFromJson(const QJsonValue &json, const QString &path = {});

} // namespace Kp
