#pragma once

#include "protocol.h"

#include <memory>

namespace Kp {

/**
 * Answers requests inside kpg-worker. One request at a time, on the worker's
 * only thread; this is the one place that touches the CUDA driver.
 */
class GpuSession;

class WorkerService
{
public:
    WorkerService();
    ~WorkerService();

    /** Handles one request and returns the message to send back. */
    Protocol::Message handle(const Protocol::Message &request);

    /** Tests only: the protocol version this worker claims to speak (a mismatch without two builds). */
    void setProtocolVersion(int version) { m_version = version; }

    /** True once a "shutdown" request was answered; the worker then exits. */
    bool shutdownRequested() const { return m_shutdown; }
    /** True after a fault poisoned the CUDA context: the worker must exit once the reply is sent. */
    bool mustExit() const;

    /**
     * How this process is sandboxed ({"sandboxed": bool, "landlockAbi" or
     * "reason"}), told in the hello reply so the engine and tests can see it.
     */
    void setSandboxState(const QVariantMap &state) { m_sandbox = state; }

private:
    GpuSession &session();

    bool m_shutdown = false;
    QVariantMap m_sandbox{{QStringLiteral("sandboxed"), false}, {QStringLiteral("reason"), QStringLiteral("off")}};
    int m_version = Protocol::kVersion;
    std::unique_ptr<GpuSession> m_session;
};

} // namespace Kp
