#pragma once

#include "compiler.h"

#include <QHash>
#include <QMutex>
#include <QObject>
#include <QPointer>
#include <QThreadPool>

#include <functional>

namespace Kp {

/**
 * Runs the Compiler off the calling thread (one pool thread: NVRTC's PCH is
 * per process, and compiles of one editor are sequential anyway).
 *
 * Requests with the same tag supersede each other: while one is waiting, a
 * newer one replaces it and the older callback is dropped, which is exactly
 * what compile-as-you-type wants; one already running in kpg-compiler is
 * killed (Compiler::cancelRunning) and its callback dropped too. Thread-safe; callbacks run on context's
 * thread, and not at all if context is gone.
 */
class CompileService : public QObject
{
    Q_OBJECT
public:
    using Callback = std::function<void(const Result<CompileResult> &)>;

    explicit CompileService(Compiler::Config config = {}, QObject *parent = nullptr);
    ~CompileService() override;

    void compile(const CompileRequest &request, QObject *context, Callback callback, const QString &tag = {});

    Compiler &compiler() { return m_compiler; }

    /**
     * Work on each successful result before its callback, on the pool
     * thread: whatever reads the result next on the caller's thread (the
     * PTX scans of prepareRun) finds it done instead of stalling there.
     * Set before the first compile.
     */
    void setAfterCompile(std::function<void(const CompileResult &)> work) { m_afterCompile = std::move(work); }

private:
    struct Pending
    {
        CompileRequest request;
        QPointer<QObject> context;
        Callback callback;
    };

    Compiler m_compiler;
    QThreadPool m_pool;
    QMutex m_mutex;
    QHash<QString, Pending> m_pending;
    quint64 m_untagged = 0;
    std::function<void(const CompileResult &)> m_afterCompile;
    QString m_runningTag; // tag of the compile on the pool thread; empty when none or untagged
};

} // namespace Kp
