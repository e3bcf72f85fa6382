#include "protocol.h"

#include <QBuffer>
#include <QCborMap>
#include <QCborStreamWriter>
#include <QCborValue>
#include <QHash>
#include <QtEndian>

#include <cstring>

namespace Kp::Protocol {

namespace {
Error protocolError(const QString &message)
{
    return Error{QStringLiteral("protocol"), Error::Code::Protocol, {}, message};
}
} // namespace

QByteArray encode(const Message &message)
{
    QCborMap map;
    map.insert(QStringLiteral("v"), message.version);
    map.insert(QStringLiteral("type"), message.type);
    map.insert(QStringLiteral("id"), static_cast<qint64>(message.id));
    map.insert(QStringLiteral("body"), QCborMap::fromVariantMap(message.body));

    // The CBOR is written straight after a length placeholder, so a frame of
    // buffer data is not copied once more to put the length in front.
    QByteArray frame(4, Qt::Uninitialized);
    {
        QBuffer out(&frame);
        out.open(QIODevice::WriteOnly | QIODevice::Append); // QCborStreamWriter(QByteArray *) would truncate
        QCborStreamWriter writer(&out);
        map.toCborValue().toCbor(writer);
    }
    qToBigEndian<quint32>(static_cast<quint32>(frame.size() - 4), frame.data());
    return frame;
}

Result<Message> decodePayload(const QByteArray &payload)
{
    QCborParserError parseError;
    const QCborValue value = QCborValue::fromCbor(payload, &parseError);
    if (parseError.error != QCborError::NoError) {
        return protocolError(
            QStringLiteral("malformed CBOR at byte %1: %2").arg(parseError.offset).arg(parseError.errorString()));
    }
    if (!value.isMap()) {
        return protocolError(QStringLiteral("message is not a CBOR map"));
    }
    const QCborMap map = value.toMap();
    const QCborValue v = map.value(QStringLiteral("v"));
    const QCborValue type = map.value(QStringLiteral("type"));
    const QCborValue id = map.value(QStringLiteral("id"));
    const QCborValue body = map.value(QStringLiteral("body"));
    if (!v.isInteger()) {
        return protocolError(QStringLiteral("message has no integer field 'v' (protocol version)"));
    }
    if (!type.isString() || type.toString().isEmpty()) {
        return protocolError(QStringLiteral("message has no string field 'type'"));
    }
    if (!id.isInteger() || id.toInteger() < 0) {
        return protocolError(QStringLiteral("message has no non-negative integer field 'id'"));
    }
    if (!body.isUndefined() && !body.isMap()) {
        return protocolError(QStringLiteral("message field 'body' is not a map"));
    }
    Message m;
    m.version = static_cast<int>(v.toInteger());
    m.type = type.toString();
    m.id = static_cast<quint64>(id.toInteger());
    m.body = body.toMap().toVariantMap();
    return m;
}

void FrameDecoder::feed(QByteArrayView bytes)
{
    // The decoded frames in front go before the buffer grows: moving the few
    // bytes of a next frame is cheap, moving a whole read after every frame
    // (a pipe read holds several frames of buffer data) was a copy of the
    // stream.
    if (m_start > 0 && (m_start == m_buffer.size() || m_buffer.size() + bytes.size() > m_buffer.capacity())) {
        m_buffer.remove(0, m_start);
        m_start = 0;
    }
    m_buffer.append(bytes);
}

std::optional<Result<Message>> FrameDecoder::next()
{
    if (m_failed) {
        return Result<Message>(*m_failed);
    }
    const qsizetype available = m_buffer.size() - m_start;
    if (available < 4) {
        return std::nullopt;
    }
    const quint32 length = qFromBigEndian<quint32>(m_buffer.constData() + m_start);
    if (length > m_maxFrameBytes) {
        m_failed = protocolError(
            QStringLiteral("frame of %1 bytes exceeds the limit of %2 bytes").arg(length).arg(m_maxFrameBytes));
        return Result<Message>(*m_failed);
    }
    if (available < 4 + static_cast<qsizetype>(length)) {
        // Room for the whole frame at once: a buffer frame of megabytes
        // arrives in pipe-sized pieces, and growing (and moving) the buffer
        // for each piece cost more than the transfer itself.
        if (m_start > 0) {
            m_buffer.remove(0, m_start);
            m_start = 0;
        }
        if (m_buffer.capacity() < 4 + static_cast<qsizetype>(length)) {
            m_buffer.reserve(4 + static_cast<qsizetype>(length));
        }
        return std::nullopt;
    }
    // Decoded in place (the decoder copies what it keeps), then skipped.
    Result<Message> r =
        decodePayload(QByteArray::fromRawData(m_buffer.constData() + m_start + 4, static_cast<qsizetype>(length)));
    m_start += 4 + static_cast<qsizetype>(length);
    if (m_start == m_buffer.size()) {
        // Empty: a buffer chunk's room is kept for the next one, a huge
        // frame's (hundreds of MiB of PTX) is given back.
        if (m_buffer.capacity() > 4 * kBufferChunkBytes) {
            m_buffer.clear();
        } else {
            m_buffer.resize(0);
        }
        m_start = 0;
    }
    if (!r.ok()) {
        m_failed = r.error();
    }
    return r;
}

quint64 contentHash(const void *data, qint64 bytes)
{
    // qHashBits with a fixed seed: the same within one build on one machine,
    // which is all a side comparing its own fingerprints needs. Hashed in
    // pieces folded together, so buffers above what size_t arithmetic in the
    // hash is tuned for still hash in one pass.
    constexpr qint64 kPiece = qint64(1) << 30;
    const auto *p = static_cast<const char *>(data);
    quint64 h = 0x6b70672d72656d6full ^ quint64(bytes);
    for (qint64 at = 0; at < bytes; at += kPiece) {
        const size_t n = size_t(qMin(kPiece, bytes - at));
        h = (h * 0x9e3779b97f4a7c15ull) ^ quint64(qHashBits(p + at, n, size_t(0x4b70672d48617368ull)));
    }
    return h;
}

bool isAllZero(const void *data, qint64 bytes)
{
    static const char zeros[4096] = {};
    const auto *p = static_cast<const char *>(data);
    for (qint64 at = 0; at < bytes; at += qint64(sizeof zeros)) {
        const size_t n = size_t(qMin<qint64>(qint64(sizeof zeros), bytes - at));
        if (std::memcmp(p + at, zeros, n) != 0) {
            return false;
        }
    }
    return true;
}

Message reply(const Message &request, const QVariantMap &body)
{
    return Message{kVersion, Type::Reply, request.id, body};
}

Message errorReply(const Message &request, const Error &error)
{
    return Message{kVersion, Type::ErrorReply, request.id, error.toVariant()};
}

} // namespace Kp::Protocol
