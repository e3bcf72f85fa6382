#pragma once

#include "protocol.h"

namespace Kp {

/**
 * Answers requests inside kpg-worker. One request at a time, on the worker's
 * only thread; this is the one place that touches the CUDA driver.
 */
class WorkerService
{
public:
    /** Handles one request and returns the message to send back. */
    Protocol::Message handle(const Protocol::Message &request);

    /** True once a "shutdown" request was answered; the worker then exits. */
    bool shutdownRequested() const { return m_shutdown; }

private:
    bool m_shutdown = false;
};

} // namespace Kp
