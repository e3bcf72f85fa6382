#include "worker/stdiobridge.h"

#include <cstring>

namespace Kp {

namespace {
Error bridgeError(const QString &message)
{
    return Error{QStringLiteral("kpg-worker"), Error::Code::Protocol, {}, message};
}

// A copy of bytes that is zeroed: fresh memfd pages read as zeros.
Result<SharedMemory> freshCopy(quint64 key, qint64 bytes)
{
    return SharedMemory::create(bytes, QStringLiteral("remote-%1").arg(key));
}
} // namespace

void StdioBridge::receive(const QVariantMap &body)
{
    if (m_error) {
        return; // the first error is the one the engine hears about
    }
    const quint64 key = body.value(QStringLiteral("key")).toULongLong();
    const qint64 bytes = body.value(QStringLiteral("bytes")).toLongLong();
    const qint64 offset = body.value(QStringLiteral("offset")).toLongLong();
    const QByteArray data = body.value(QStringLiteral("data")).toByteArray();
    const bool zero = body.value(QStringLiteral("zero")).toBool();
    if (key == 0 || bytes < 0 || offset < 0 || offset > bytes || data.size() > bytes - offset) {
        m_error = bridgeError(QStringLiteral("a bufferData frame is out of range (key %1, %2 bytes at offset %3 of %4)")
                                  .arg(key)
                                  .arg(data.size())
                                  .arg(offset)
                                  .arg(bytes));
        return;
    }
    auto it = m_copies.find(key);
    if (it == m_copies.end() || it->second.memory.size() != bytes || (zero && offset == 0)) {
        Result<SharedMemory> shm = freshCopy(key, bytes);
        if (!shm) {
            m_error = shm.error();
            return;
        }
        it = m_copies.insert_or_assign(key, Copy{std::move(shm).value(), 0}).first;
    }
    Copy &c = it->second;
    if (!data.isEmpty()) {
        std::memcpy(static_cast<char *>(c.memory.data()) + offset, data.constData(), size_t(data.size()));
    }
    if (zero || offset + data.size() == bytes) {
        // The last piece (pieces come in order): the copy now equals the engine's.
        c.hash = Protocol::contentHash(c.memory.data(), bytes);
    }
}

Result<QVariantMap> StdioBridge::localize(const QVariantMap &body)
{
    if (m_error) {
        const Error e = *m_error;
        m_error.reset();
        return e;
    }
    QVariantList buffers = body.value(QStringLiteral("buffers")).toList();
    std::map<quint64, Copy> kept;
    m_lastKeys.clear();
    for (QVariant &v : buffers) {
        QVariantMap b = v.toMap();
        const quint64 key = b.value(QStringLiteral("id")).toULongLong();
        const qint64 bytes = b.value(QStringLiteral("bytes")).toLongLong();
        if (key == 0 || bytes < 0) {
            return bridgeError(QStringLiteral("buffer '%1' has no id or a negative size")
                                   .arg(b.value(QStringLiteral("name")).toString()));
        }
        auto it = m_copies.find(key);
        if (it == m_copies.end() || it->second.memory.size() != bytes) {
            Result<SharedMemory> shm = freshCopy(key, bytes);
            if (!shm) {
                return shm.error();
            }
            const quint64 hash = Protocol::contentHash(shm->data(), bytes);
            it = m_copies.insert_or_assign(key, Copy{std::move(shm).value(), hash}).first;
        }
        b.insert(QStringLiteral("path"), it->second.memory.path());
        b.insert(QStringLiteral("id"), it->second.memory.id());
        v = b;
        m_lastKeys.append(key);
        kept.insert_or_assign(key, std::move(it->second));
        m_copies.erase(it);
    }
    m_copies = std::move(kept);
    QVariantMap out = body;
    out.insert(QStringLiteral("buffers"), buffers);
    return out;
}

qint64 StdioBridge::sendChanged(quint64 id, const std::function<bool(const QByteArray &)> &write)
{
    // Hash first, so every frame can carry the total of this answer: the
    // engine shows the download's progress against it.
    struct Changed
    {
        Copy *copy;
        quint64 key;
        quint64 hash;
    };
    QList<Changed> changed;
    qint64 total = 0;
    for (const quint64 key : std::as_const(m_lastKeys)) {
        auto it = m_copies.find(key);
        if (it == m_copies.end()) {
            continue;
        }
        Copy &c = it->second;
        const quint64 hash = Protocol::contentHash(c.memory.data(), c.memory.size());
        if (hash != c.hash) {
            changed.append(Changed{&c, key, hash});
            total += c.memory.size();
        }
    }
    qint64 sent = 0;
    for (const Changed &ch : std::as_const(changed)) {
        Copy &c = *ch.copy;
        const qint64 bytes = c.memory.size();
        const auto *data = static_cast<const char *>(c.memory.data());
        qint64 offset = 0;
        do {
            const qint64 n = qMin(Protocol::kBufferChunkBytes, bytes - offset);
            const QVariantMap body{{QStringLiteral("key"), ch.key},
                                   {QStringLiteral("bytes"), bytes},
                                   {QStringLiteral("offset"), offset},
                                   {QStringLiteral("total"), total},
                                   {QStringLiteral("data"), QByteArray::fromRawData(data + offset, qsizetype(n))}};
            if (!write(Protocol::encode(Protocol::Message{Protocol::kVersion, Protocol::Type::BufferData, id, body}))) {
                return sent;
            }
            offset += n;
            sent += n;
        } while (offset < bytes);
        c.hash = ch.hash;
    }
    return sent;
}

} // namespace Kp
