#include "compare/runfile.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace Kp {

namespace {

Error badInput(const QString &message)
{
    return Error{QStringLiteral("kpg compare"), Error::Code::BadInput, {}, message};
}

} // namespace

Result<RunFile> parseRunFile(const QByteArray &json, const QString &path)
{
    QJsonParseError pe{};
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (pe.error != QJsonParseError::NoError) {
        return badInput(QStringLiteral("%1: not JSON (%2 at byte %3); give a file written by 'kpg run --json'")
                            .arg(path, pe.errorString())
                            .arg(pe.offset));
    }
    if (!doc.isObject()) {
        return badInput(QStringLiteral("%1: not a kpg run result (the top level is not an object); give a file "
                                       "written by 'kpg run --json'")
                            .arg(path));
    }
    const QJsonObject o = doc.object();
    RunFile f;
    f.path = path;
    f.title = o.value(QStringLiteral("title")).toString();
    f.device = o.value(QStringLiteral("device")).toString();
    for (const QJsonValue &s : o.value(QStringLiteral("steps")).toArray()) {
        f.kernels << s.toObject().value(QStringLiteral("kernel")).toString();
    }
    if (o.value(QStringLiteral("ok")) == QJsonValue(false)) {
        const QString why = o.value(QStringLiteral("error")).toObject().value(QStringLiteral("message")).toString();
        return badInput(QStringLiteral("%1: the run failed (%2); there is nothing to compare").arg(path, why));
    }
    const QJsonValue timing = o.value(QStringLiteral("timing"));
    if (timing.isNull()) {
        return badInput(
            QStringLiteral("%1: the run was not timed (timing is null); run it without --no-timing").arg(path));
    }
    if (!timing.isObject() || !timing.toObject().value(QStringLiteral("samplesMs")).isArray()) {
        return badInput(QStringLiteral("%1: not a kpg run result (no timing.samplesMs array); give a file written by "
                                       "'kpg run --json'")
                            .arg(path));
    }
    f.mode = timing.toObject().value(QStringLiteral("mode")).toString();
    const QJsonArray samples = timing.toObject().value(QStringLiteral("samplesMs")).toArray();
    for (qsizetype i = 0; i < samples.size(); ++i) {
        const QJsonValue v = samples[i];
        if (!v.isDouble() || !(v.toDouble() >= 0)) {
            return badInput(QStringLiteral("%1: timing.samplesMs[%2] is %3; every sample must be a number >= 0")
                                .arg(path)
                                .arg(i)
                                .arg(QString::fromUtf8(QJsonDocument(QJsonArray{v}).toJson(QJsonDocument::Compact))
                                         .mid(1)
                                         .chopped(1)));
        }
        f.samples << v.toDouble();
    }
    return f;
}

} // namespace Kp
