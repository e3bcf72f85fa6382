#pragma once

#include "core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>
#include <QVariantMap>

#include <optional>

namespace Kp::Protocol {

/**
 * The engine <-> kpg-worker wire format.
 *
 * A frame is a 4-byte big-endian payload length followed by the payload, a
 * CBOR map {"v": version, "type": string, "id": uint, "body": map}. Messages
 * are small (requests, results, statistics); bulk data travels only on a
 * remote target (kpg-worker --stdio), as bufferData frames.
 * Requests carry a type such as "hello"; the worker answers each with one
 * message of type "reply" (body: the result) or "error" (body: an Error), with
 * the request's id.
 */
constexpr int kVersion = 1;
/** Frames larger than this are refused: a corrupt length must not allocate GiBs. */
constexpr quint32 kMaxFrameBytes = 16u * 1024u * 1024u;
/**
 * The limit for a worker's answers, which the engine reads: a run's answer
 * carries the memory-access trace (up to RunRequest::accessRecords records of
 * 288 bytes), which outgrows kMaxFrameBytes for a kernel of a million threads.
 */
constexpr quint32 kMaxWorkerReplyBytes = 256u * 1024u * 1024u;

namespace Type {
inline const QString Hello = QStringLiteral("hello");
inline const QString ListDevices = QStringLiteral("listDevices");
inline const QString Ping = QStringLiteral("ping");
inline const QString Shutdown = QStringLiteral("shutdown");
/** Uploads, launches, times and downloads (engine/run/gpusession.h); the reply is a RunResult. */
inline const QString Run = QStringLiteral("run");
/** Creates the context and restores buffers on the device, so the next run starts at once. */
inline const QString Prepare = QStringLiteral("prepare");
/** Measures the device ceilings with the kernels of engine/run/ceilings.h; the reply holds the rates. */
inline const QString Ceilings = QStringLiteral("ceilings");
/** Diagnostic: the worker sleeps body.ms milliseconds, then replies (tests). */
inline const QString Sleep = QStringLiteral("sleep");
/** Diagnostic: the worker aborts at once, as if a kernel had killed it (tests). */
inline const QString Crash = QStringLiteral("crash");
/**
 * One-way, no reply: a piece of a buffer's host copy, on a remote target only
 * (kpg-worker --stdio), where the worker cannot map the engine's memory.
 * body: key (the engine's SharedMemory id), bytes (the buffer's size), offset,
 * data (at most kBufferChunkBytes), or zero: true for a buffer that is all
 * zeros (no data). The engine sends those whose contents the worker lacks
 * before a run or prepare request, with that request's id; the worker sends
 * those a run changed before its reply (docs/remote.md, "What travels").
 */
inline const QString BufferData = QStringLiteral("bufferData");
inline const QString Reply = QStringLiteral("reply");
inline const QString ErrorReply = QStringLiteral("error");
} // namespace Type

/**
 * A reply body with this key set to true says the worker ends itself right
 * after it (its CUDA context is poisoned by a fault); the supervisor then
 * waits for a fresh worker before it sends anything else.
 */
inline const QString kWorkerExiting = QStringLiteral("workerExiting");

/** The most bytes of a buffer one bufferData frame carries: well under kMaxFrameBytes with the CBOR around it. */
constexpr qint64 kBufferChunkBytes = 1024 * 1024;

/**
 * A fingerprint of a buffer's bytes, to tell whether a remote copy is still
 * the same. Each side compares only its own fingerprints (engine: what it
 * last sent or received; worker: what it last received or sent), so the two
 * machines never need to compute the same value.
 */
quint64 contentHash(const void *data, qint64 bytes);

/** True when all bytes are zero: such a buffer travels as a marker, not as data. */
bool isAllZero(const void *data, qint64 bytes);

struct Message
{
    int version = kVersion;
    QString type;
    quint64 id = 0;
    QVariantMap body;
};

/** Encodes one message as a complete frame (length prefix included). */
QByteArray encode(const Message &message);

/** Decodes one frame's payload (without the length prefix). */
Result<Message> decodePayload(const QByteArray &payload);

/**
 * Splits a byte stream into messages. Feed it whatever the socket gave; take
 * messages out with next(). After a framing error the stream cannot be
 * resynchronised, so the decoder stays failed and keeps returning the error.
 * Not thread-safe; one per connection.
 */
class FrameDecoder
{
public:
    explicit FrameDecoder(quint32 maxFrameBytes = kMaxFrameBytes)
        : m_maxFrameBytes(maxFrameBytes)
    {
    }

    /** Appends what arrived (copied once, into the frame being assembled). */
    void feed(QByteArrayView bytes);

    /** The next complete message, an Error if the stream is broken, or nullopt if more bytes are needed. */
    std::optional<Result<Message>> next();

    /** Bytes received but not yet part of a complete frame. */
    qsizetype pendingBytes() const { return m_buffer.size() - m_start; }

private:
    QByteArray m_buffer;
    qsizetype m_start = 0; ///< where the next frame begins in m_buffer: decoded frames are skipped, not moved
    quint32 m_maxFrameBytes;
    std::optional<Error> m_failed;
};

/** A reply message to a request. */
Message reply(const Message &request, const QVariantMap &body);
/** An error message in answer to a request. */
Message errorReply(const Message &request, const Error &error);

} // namespace Kp::Protocol
