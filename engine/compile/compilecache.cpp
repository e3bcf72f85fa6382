#include "compilecache.h"

#include <QCborMap>
#include <QCborValue>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include <algorithm>

namespace Kp {

namespace {
constexpr qsizetype kMemoryEntries = 64;
constexpr int kFormat = 1; // bump when CompileResult's shape changes
} // namespace

CompileCache::CompileCache(QString dir, qint64 limitBytes)
    : m_dir(std::move(dir))
    , m_limit(limitBytes)
{
    if (!m_dir.isEmpty()) {
        QDir().mkpath(m_dir);
    }
}

QString CompileCache::path(const QByteArray &key) const
{
    return QDir(m_dir).filePath(QString::fromLatin1(key.toHex()) + QStringLiteral(".cbor"));
}

std::optional<CompileResult> CompileCache::find(const QByteArray &key)
{
    QMutexLocker lock(&m_mutex);
    if (auto it = m_memory.constFind(key); it != m_memory.constEnd()) {
        m_order.removeOne(key);
        m_order.append(key);
        return *it;
    }
    if (m_dir.isEmpty()) {
        return std::nullopt;
    }
    QFile f(path(key));
    if (!f.open(QIODevice::ReadOnly)) {
        return std::nullopt;
    }
    const QCborValue v = QCborValue::fromCbor(f.readAll());
    const QVariantMap m = v.toMap().toVariantMap();
    if (m.value(QStringLiteral("format")).toInt() != kFormat) {
        return std::nullopt; // written by another version: a miss, replaced on store
    }
    CompileResult r = CompileResult::fromVariant(m.value(QStringLiteral("result")).toMap());
    f.close();
    // Recently used files survive eviction.
    f.open(QIODevice::ReadWrite);
    f.setFileTime(QDateTime::currentDateTimeUtc(), QFileDevice::FileModificationTime);
    m_memory.insert(key, r);
    m_order.append(key);
    return r;
}

void CompileCache::store(const QByteArray &key, const CompileResult &result)
{
    QMutexLocker lock(&m_mutex);
    m_memory.insert(key, result);
    m_order.removeOne(key);
    m_order.append(key);
    while (m_order.size() > kMemoryEntries) {
        m_memory.remove(m_order.takeFirst());
    }
    if (m_dir.isEmpty()) {
        return;
    }
    QDir().mkpath(m_dir);
    QSaveFile f(path(key)); // written to a temporary file and renamed: readers never see half a file
    if (!f.open(QIODevice::WriteOnly)) {
        return; // a cache that cannot be written is only slower
    }
    const QVariantMap doc{{QStringLiteral("format"), kFormat}, {QStringLiteral("result"), result.toVariant()}};
    f.write(QCborValue::fromVariant(doc).toCbor());
    if (f.commit()) {
        evict();
    }
}

qint64 CompileCache::diskBytes() const
{
    QMutexLocker lock(&m_mutex);
    qint64 total = 0;
    if (!m_dir.isEmpty()) {
        for (const QFileInfo &fi : QDir(m_dir).entryInfoList({QStringLiteral("*.cbor")}, QDir::Files)) {
            total += fi.size();
        }
    }
    return total;
}

void CompileCache::evict()
{
    QFileInfoList files = QDir(m_dir).entryInfoList({QStringLiteral("*.cbor")}, QDir::Files);
    qint64 total = 0;
    for (const QFileInfo &fi : files) {
        total += fi.size();
    }
    if (total <= m_limit) {
        return;
    }
    std::sort(files.begin(), files.end(),
              [](const QFileInfo &a, const QFileInfo &b) { return a.lastModified() < b.lastModified(); });
    for (const QFileInfo &fi : files) {
        if (total <= m_limit) {
            break;
        }
        total -= fi.size();
        QFile::remove(fi.filePath());
    }
}

void CompileCache::clear()
{
    QMutexLocker lock(&m_mutex);
    m_memory.clear();
    m_order.clear();
    if (!m_dir.isEmpty()) {
        for (const QFileInfo &fi : QDir(m_dir).entryInfoList({QStringLiteral("*.cbor")}, QDir::Files)) {
            QFile::remove(fi.filePath());
        }
    }
}

} // namespace Kp
