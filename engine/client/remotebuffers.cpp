#include "client/remotebuffers.h"

#include "worker/protocol.h"

#include <cstring>

namespace Kp {

namespace {
Error remoteError(const QString &message)
{
    return Error{QStringLiteral("engine"), Error::Code::Protocol, {}, message};
}
} // namespace

void RemoteBuffers::reset()
{
    m_held.clear();
    m_pieces.clear();
    m_nextPiece = 0;
}

Status RemoteBuffers::begin(const QVariantMap &body, quint64 id)
{
    m_pieces.clear();
    m_nextPiece = 0;
    m_requestId = id;
    m_uploadBytes = 0;
    m_handedBytes = 0;
    m_downloadBytes = 0;
    std::map<quint64, Held> kept;
    for (const QVariant &v : body.value(QStringLiteral("buffers")).toList()) {
        const QVariantMap b = v.toMap();
        const quint64 key = b.value(QStringLiteral("id")).toULongLong();
        const qint64 bytes = b.value(QStringLiteral("bytes")).toLongLong();
        const QString path = b.value(QStringLiteral("path")).toString();
        if (kept.count(key)) {
            continue; // the same buffer twice (never from prepareRun, but cheap to allow)
        }
        auto it = m_held.find(key);
        if (it == m_held.end() || it->second.map.size() != bytes) {
            Result<SharedMemory> map = SharedMemory::open(path, bytes);
            if (!map) {
                m_held.clear(); // the worker keeps only the buffers of this request; start over next time
                return map.error();
            }
            it = m_held.insert_or_assign(key, Held{std::move(map).value(), 0, false}).first;
        }
        Held &h = it->second;
        const quint64 hash = Protocol::contentHash(h.map.data(), bytes);
        if (!h.sent || hash != h.hash) {
            if (!h.sent && Protocol::isAllZero(h.map.data(), bytes)) {
                m_pieces.append(Piece{key, 0, true});
            } else {
                for (qint64 offset = 0; offset < bytes || offset == 0; offset += Protocol::kBufferChunkBytes) {
                    m_pieces.append(Piece{key, offset, false});
                }
                m_uploadBytes += bytes;
            }
            h.hash = hash;
            h.sent = true;
        }
        kept.insert_or_assign(key, std::move(h));
        m_held.erase(it);
    }
    m_held = std::move(kept);
    return Unit{};
}

QByteArray RemoteBuffers::nextFrame()
{
    while (m_nextPiece < m_pieces.size()) {
        const Piece p = m_pieces.at(m_nextPiece++);
        const auto it = m_held.find(p.key);
        if (it == m_held.end()) {
            continue;
        }
        const SharedMemory &map = it->second.map;
        QVariantMap body{{QStringLiteral("key"), p.key},
                         {QStringLiteral("bytes"), map.size()},
                         {QStringLiteral("offset"), p.offset}};
        if (p.zero) {
            body.insert(QStringLiteral("zero"), true);
        } else {
            const qint64 n = qMin(Protocol::kBufferChunkBytes, map.size() - p.offset);
            m_handedBytes += n;
            body.insert(QStringLiteral("data"),
                        QByteArray::fromRawData(static_cast<const char *>(map.data()) + p.offset, qsizetype(n)));
        }
        return Protocol::encode(Protocol::Message{Protocol::kVersion, Protocol::Type::BufferData, m_requestId, body});
    }
    return {};
}

Status RemoteBuffers::receive(const QVariantMap &body)
{
    const quint64 key = body.value(QStringLiteral("key")).toULongLong();
    const qint64 bytes = body.value(QStringLiteral("bytes")).toLongLong();
    const qint64 offset = body.value(QStringLiteral("offset")).toLongLong();
    const QByteArray data = body.value(QStringLiteral("data")).toByteArray();
    const auto it = m_held.find(key);
    if (it == m_held.end()) {
        return remoteError(QStringLiteral("kpg-worker sent bytes of a buffer (id %1) this run does not have").arg(key));
    }
    Held &h = it->second;
    if (bytes != h.map.size() || offset < 0 || offset > bytes || data.size() > bytes - offset) {
        return remoteError(QStringLiteral("kpg-worker sent %1 bytes at offset %2 for a buffer of %3 bytes "
                                          "(it says %4)")
                               .arg(data.size())
                               .arg(offset)
                               .arg(h.map.size())
                               .arg(bytes));
    }
    std::memcpy(static_cast<char *>(h.map.data()) + offset, data.constData(), size_t(data.size()));
    m_downloadBytes += data.size();
    if (offset + data.size() == bytes) {
        h.hash = Protocol::contentHash(h.map.data(), bytes);
    }
    return Unit{};
}

} // namespace Kp
