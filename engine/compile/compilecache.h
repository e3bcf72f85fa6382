#pragma once

#include "compiletypes.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QMutex>
#include <QString>

namespace Kp {

/**
 * Compile results by key, in memory (most recent 64) and on disk (one CBOR
 * file per key, written atomically, oldest evicted past the size limit).
 * Thread-safe. The key is made by Compiler::cacheKey.
 */
class CompileCache
{
public:
    /** dir empty: memory only. */
    explicit CompileCache(QString dir = {}, qint64 limitBytes = 256ll * 1024 * 1024);

    std::optional<CompileResult> find(const QByteArray &key);
    void store(const QByteArray &key, const CompileResult &result);
    void clear();

    QString dir() const { return m_dir; }
    qint64 limitBytes() const { return m_limit; }
    /** Bytes the disk cache holds now. */
    qint64 diskBytes() const;

private:
    QString path(const QByteArray &key) const;
    void evict();

    mutable QMutex m_mutex;
    QString m_dir;
    qint64 m_limit;
    QHash<QByteArray, CompileResult> m_memory;
    QList<QByteArray> m_order; // least recently used first
};

} // namespace Kp
