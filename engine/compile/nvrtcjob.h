#pragma once

#include "core/result.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>
#include <QVariantMap>

namespace Kp {

class NvrtcApi;

/**
 * The part of a compile that runs inside NVRTC, and nothing else: the one
 * step that can crash, hang or read files. Compiler prepares it (checks,
 * options, cache key) and interprets its output (diagnostics, kernels), so the
 * same job runs in-process or in kpg-compiler. Plain value.
 */
struct NvrtcJob
{
    QByteArray source;
    QByteArray programName;
    QStringList options;
    QStringList nameExpressions;
    QList<QPair<QByteArray, QByteArray>> headers; ///< in-memory headers: (name, contents)

    QVariantMap toVariant() const;
    static NvrtcJob fromVariant(const QVariantMap &map);

    /**
     * The job that compiles only the source's leading preprocessing
     * directives (comments between them included), with the same options,
     * headers and program name: what NVRTC's automatic precompiled header
     * covers, so compiling it with -pch makes the header the full source then
     * uses. Empty (no source) when those directives include nothing, or the
     * source is nothing but directives.
     */
    NvrtcJob headerPrefix() const;
};

/** What NVRTC said about an NvrtcJob. Plain value. */
struct NvrtcOutput
{
    int status = 0; ///< the nvrtcResult of nvrtcCompileProgram
    QString statusText;
    QString log;
    QByteArray ptx;
    QByteArray cubin;
    double compileMs = 0;
    /** nvrtcGetPCHCreateStatus after a compile with -pch (0: made one); -1 without -pch or where NVRTC cannot tell. */
    int pchStatus = -1;
    QHash<QString, QString> loweredNames; ///< name expression -> lowered name (successful compiles)

    QVariantMap toVariant() const;
    static NvrtcOutput fromVariant(const QVariantMap &map);
};

/**
 * Runs the job through NVRTC in this process. Blocking; thread-safe as NVRTC
 * is. Errors only when a program cannot be created; a failed compile is an
 * ordinary output with its status and log.
 */
Result<NvrtcOutput> runNvrtcJob(const NvrtcApi &nv, const NvrtcJob &job);

} // namespace Kp
