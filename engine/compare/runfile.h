#pragma once

#include "core/result.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

namespace Kp {

/** What `kpg compare` reads of a timed run (`kpg run --json`): who ran what, and the samples. Plain value. */
struct RunFile
{
    QString path;
    QString title;
    QString device;
    QString mode;
    QStringList kernels;
    QList<double> samples;
};

/** The largest run result `kpg compare` reads. */
constexpr qint64 kMaxRunFileBytes = 512ll * 1024 * 1024;

/**
 * Parses the JSON of a run result. path names it in messages ("a.json: not
 * JSON (...)"); a BadInput Error for anything that is not a timed, successful
 * run with samples that are numbers >= 0. Any thread.
 */
Result<RunFile> parseRunFile(const QByteArray &json, const QString &path);

} // namespace Kp
