#pragma once

#include "compilecache.h"
#include "compiletypes.h"

#include <QList>
#include <QPair>

#include <memory>

namespace Kp {

/**
 * NVRTC behind one call. compile() is thread-safe and blocking: the
 * CompileService runs it on a pool thread, kpg on its main thread. The
 * in-memory virtual headers (cstdint, cassert, ...) fill gaps in what NVRTC
 * ships, and the CUDA include folders are added to every compile.
 */
class Compiler
{
public:
    struct Config
    {
        QString cacheDir; ///< empty: defaultCacheDir(); "-" : memory only
        qint64 cacheLimitBytes = 256ll * 1024 * 1024;
    };

    Compiler();
    explicit Compiler(Config config);

    /** Errors only when NVRTC itself is missing; a failed compile is an ok Result. */
    Result<CompileResult> compile(const CompileRequest &request);

    CompileCache &cache() { return *m_cache; }

    /** $KPG_CACHE_DIR, else the user cache folder + "/kernel-playground/nvrtc". */
    static QString defaultCacheDir();
    /** The CUDA toolkit include folders added to every compile (may be empty). */
    static QStringList toolkitIncludeDirs();
    /** The headers NVRTC lacks that we provide in memory: (name, contents). */
    static const QList<QPair<QByteArray, QByteArray>> &virtualHeaders();
    /** "sm_90" for arch "auto" and a device, capped by what NVRTC supports; note says why if not exact. */
    static QString resolveArch(const QString &arch, int ccMajor, int ccMinor, const QList<int> &supported,
                               QString *note, QString *error);

    /** Source files larger than this are refused with a message. */
    static constexpr qsizetype kMaxSourceBytes = 4 * 1024 * 1024;

private:
    std::unique_ptr<CompileCache> m_cache;
};

} // namespace Kp
