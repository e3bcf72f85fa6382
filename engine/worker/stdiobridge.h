#pragma once

#include "buffers/sharedmemory.h"
#include "core/result.h"
#include "worker/protocol.h"

#include <QVariantMap>

#include <functional>
#include <map>
#include <optional>

namespace Kp {

/**
 * The worker's half of a remote target's buffers (kpg-worker --stdio,
 * docs/remote.md). The engine's shared memory is on another machine, so this
 * keeps a local copy of each buffer in its own memfd, filled from bufferData
 * frames, and rewrites run and prepare requests to point at those copies:
 * GpuSession then runs exactly as it does locally. After a run, the copies
 * whose bytes changed travel back before the reply.
 *
 * One per connection; the worker's only thread.
 */
class StdioBridge
{
public:
    /** Takes one bufferData frame from the engine. An error is kept and answers the next request. */
    void receive(const QVariantMap &body);

    /**
     * A run or prepare body with each buffer's path and id replaced by the
     * local copy's (a buffer never sent is created zeroed). Copies no longer
     * named are dropped, as the engine drops its record of them. Fails with
     * the error of a bufferData frame since the last request.
     */
    Result<QVariantMap> localize(const QVariantMap &body);

    /**
     * After a run: sends (through write, one frame at a time, with the run's
     * id) every buffer of the last localized request whose bytes changed.
     * write returns false when the connection is gone. Returns the bytes of
     * buffer data sent.
     */
    qint64 sendChanged(quint64 id, const std::function<bool(const QByteArray &)> &write);

private:
    struct Copy
    {
        SharedMemory memory;
        quint64 hash = 0; ///< of the bytes the engine holds too (last received or sent)
    };

    std::map<quint64, Copy> m_copies; ///< by the engine's SharedMemory id
    QList<quint64> m_lastKeys;        ///< the buffers of the last localized request, in order
    std::optional<Error> m_error;
};

} // namespace Kp
