// libFuzzer target: a project's "checks" (engine/check/checkjson.h), read
// against two buffers (float32 "out" of 64 elements and int32 "idx" of 16).
// The input is the JSON of the checks array. What reads must write back
// (checkSpecNode) to JSON that reads again.

#include "buffers/bufferspec.h"
#include "check/checkjson.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray json(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    QJsonParseError pe{};
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (pe.error != QJsonParseError::NoError) {
        return 0;
    }
    Kp::BufferSpec out;
    out.name = QStringLiteral("out");
    out.dtype = Kp::DType::Float32;
    out.shape = {64};
    Kp::BufferSpec idx;
    idx.name = QStringLiteral("idx");
    idx.dtype = Kp::DType::Int32;
    idx.shape = {16};
    const QList<Kp::BufferSpec> buffers{out, idx};
    const QJsonValue checks = doc.isArray() ? QJsonValue(doc.array()) : QJsonValue(doc.object());
    const Kp::Result<QList<Kp::CheckSpec>> read = Kp::checksFromJson(checks, buffers);
    if (!read) {
        return 0;
    }
    QJsonArray written;
    for (const Kp::CheckSpec &c : *read) {
        written.append(Kp::toJsonValue(Kp::checkSpecNode(c)));
    }
    const Kp::Result<QList<Kp::CheckSpec>> again = Kp::checksFromJson(written, buffers);
    if (!again) {
        std::fprintf(stderr, "fuzz_checks: checkSpecNode() wrote what checksFromJson() refuses: %s\n%s\n",
                     qPrintable(again.error().message),
                     QJsonDocument(written).toJson(QJsonDocument::Compact).constData());
        std::abort();
    }
    return 0;
}
