#pragma once

#include "buffers/sharedmemory.h"
#include "core/result.h"

#include <QByteArray>
#include <QList>
#include <QVariantMap>

#include <map>

namespace Kp {

/**
 * The engine's half of a remote target's buffers (docs/remote.md, "What
 * travels"): which of its shared-memory buffers the remote worker holds, with
 * a fingerprint of the bytes it holds. Before a run or prepare request,
 * begin() lists the pieces to send (a buffer the worker lacks, or whose bytes
 * changed since; an all-zero new buffer as a marker); nextFrame() hands them
 * out one frame at a time, so a large upload never sits in memory twice.
 * receive() writes the buffers a run changed back into the engine's memory.
 *
 * One per connection (reset() when a worker starts); the engine thread only.
 */
class RemoteBuffers
{
public:
    /** Forgets what the remote holds: a fresh worker holds nothing. */
    void reset();

    /**
     * Prepares the pieces of the buffers in a run or prepare body (its
     * "buffers" list: path, id, bytes) that the worker lacks, for the
     * request with this id. Buffers not named any more are forgotten, as the
     * worker forgets them.
     */
    Status begin(const QVariantMap &body, quint64 id);

    /** The next bufferData frame to send, or an empty array when all are out. */
    QByteArray nextFrame();

    /** Bytes of buffer data the last begin() will have sent once nextFrame() is empty. */
    qint64 uploadBytes() const { return m_uploadBytes; }

    /** Bytes of buffer data nextFrame() has handed out since the last begin(). */
    qint64 handedBytes() const { return m_handedBytes; }

    /** Writes one bufferData frame from the worker into the engine's buffer. */
    Status receive(const QVariantMap &body);

    /** Bytes of buffer data received since the last begin(). */
    qint64 downloadBytes() const { return m_downloadBytes; }

private:
    struct Held
    {
        SharedMemory map;  ///< the engine's buffer, mapped once more here by its path
        quint64 hash = 0;  ///< of the bytes the worker holds
        bool sent = false; ///< the worker holds this buffer at all
    };
    struct Piece
    {
        quint64 key = 0;
        qint64 offset = 0;
        bool zero = false;
    };

    std::map<quint64, Held> m_held; ///< by SharedMemory id
    QList<Piece> m_pieces;
    qsizetype m_nextPiece = 0;
    quint64 m_requestId = 0;
    qint64 m_uploadBytes = 0;
    qint64 m_handedBytes = 0;
    qint64 m_downloadBytes = 0;
};

} // namespace Kp
