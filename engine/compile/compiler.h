#pragma once

#include "compilecache.h"
#include "compilerprocess.h"
#include "compiletypes.h"

#include <QList>
#include <QPair>

#include <functional>
#include <memory>

namespace Kp {

/**
 * NVRTC on another machine (a remote target's kpg-compiler,
 * client/remotecompile.h), for a machine that cannot load NVRTC itself:
 * what the options and the cache key need to know of it, and how to run a
 * job there. Plain value; run is thread-safe.
 */
struct NvrtcElsewhere
{
    QString where;           ///< "ssh://lab-gpu-01", for the cache key and messages
    QString version;         ///< "13.0"
    QString libraryPath;     ///< on that machine
    QList<int> archs;        ///< what that NVRTC supports (nvrtcGetSupportedArchs)
    QStringList includeDirs; ///< the toolkit's include folders there
    QString sandbox;         ///< how kpg-compiler is sandboxed there, in words
    std::function<Result<NvrtcOutput>(const NvrtcJob &job, int timeoutMs)> run;
};

/**
 * NVRTC behind one call. compile() is thread-safe and blocking: the
 * CompileService runs it on a pool thread, kpg on its main thread. The
 * in-memory virtual headers (cstdint, cassert, ...) fill gaps in what NVRTC
 * ships, and the CUDA include folders are added to every compile.
 *
 * Isolated (the default), NVRTC itself runs in the sandboxed kpg-compiler
 * child (CompilerProcess): a crash or a compile past the time limit becomes a
 * failed CompileResult with one message, and the next compile gets a fresh
 * process. Checks, options, the cache and reading the result stay here, so a
 * cache hit never leaves this process.
 */
class Compiler
{
public:
    struct Config
    {
        QString cacheDir; ///< empty: defaultCacheDir(); "-" : memory only
        qint64 cacheLimitBytes = 256ll * 1024 * 1024;
        /** NVRTC in kpg-compiler (true) or in this process (tests and benchmarks compare both). */
        bool isolated = true;
        /** Isolated compiles past this are stopped; 0: $KPG_COMPILE_TIMEOUT seconds, else 60 s. */
        int timeoutMs = 0;
        /**
         * Isolated compiles whose process passes this many MiB of address space
         * are stopped; 0: $KPG_COMPILER_MEMORY_LIMIT, else
         * CompilerProcess::defaultMemoryLimitMiB() (docs/security.md).
         */
        qint64 memoryLimitMiB = 0;
    };

    Compiler();
    explicit Compiler(Config config);

    /** Errors only when NVRTC itself is missing; a failed compile is an ok Result. */
    Result<CompileResult> compile(const CompileRequest &request);

    CompileCache &cache() { return *m_cache; }

    /**
     * Starts kpg-compiler for request's folders now, without waiting for
     * it, so that its start overlaps other work (kpg run starts it while
     * the worker finds the GPU); a later compile() of a request with the
     * same folders uses it. Nothing to do in-process or without NVRTC here.
     * On the thread that compiles (CompilerProcess::warmUp).
     */
    void warmUp(const CompileRequest &request);

    /** Stops the compile now running in kpg-compiler, if any; it returns Error::Code::Cancelled. Any thread. */
    void cancelRunning();
    /** The compile time limit in milliseconds. */
    int timeoutMs() const { return m_timeoutMs; }
    bool isolated() const { return m_isolated; }
    /** How kpg-compiler is sandboxed ("sandboxed (Landlock ABI 7)" or why not); empty before the first compile. */
    QString sandboxState() const;

    /** The message of a compile stopped after timeoutMs: "compile took longer than 60 s and was stopped". */
    static QString timeoutMessage(int timeoutMs);
    /** The message of a compile whose kpg-compiler died. */
    static QString crashMessage();
    /**
     * The name NVRTC compiles the request under: its sourcePath when that is
     * an absolute path of printable ASCII without quotes or backslashes (it is
     * written into the PTX's .file directive as it is), else its fileName.
     */
    static QString programName(const CompileRequest &request);

    /** $KPG_CACHE_DIR, else the user cache folder + "/kernel-playground/nvrtc". */
    static QString defaultCacheDir();
    /** The CUDA toolkit include folders added to every compile (may be empty). */
    static QStringList toolkitIncludeDirs();
    /** The headers NVRTC lacks that we provide in memory: (name, contents). */
    static const QList<QPair<QByteArray, QByteArray>> &virtualHeaders();
    /** "sm_90" for arch "auto" and a device, capped by what NVRTC supports; note says why if not exact. */
    static QString resolveArch(const QString &arch, int ccMajor, int ccMinor, const QList<int> &supported,
                               QString *note, QString *error);

    /**
     * Where compile() turns when NVRTC cannot be loaded here
     * (remote compiling, docs/remote.md): given why not, NVRTC elsewhere, or
     * an Error that compile() then returns. The program installs it once
     * (client/remotecompile.h); without one, the local error is returned.
     * Thread-safe.
     */
    using NvrtcFallback = std::function<Result<NvrtcElsewhere>(const Error &localError)>;
    static void setNvrtcFallback(NvrtcFallback fallback);

    /** Source files larger than this are refused with a message. */
    static constexpr qsizetype kMaxSourceBytes = 4 * 1024 * 1024;

private:
    std::unique_ptr<CompileCache> m_cache;
    std::unique_ptr<CompilerProcess> m_process; // null in-process
    bool m_isolated = true;
    int m_timeoutMs = 60000;
    qint64 m_memoryLimitMiB = 0; // 0: CompilerProcess decides per job
};

} // namespace Kp
