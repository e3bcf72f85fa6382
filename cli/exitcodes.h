#pragma once

#include "core/result.h"

namespace Kp::Exit {

// kpg's exit codes; every subcommand uses them (README lists them too).
// 64, 65 and 69 are sysexits.h's EX_USAGE, EX_DATAERR and EX_UNAVAILABLE.
constexpr int Ok = 0;
constexpr int CheckFailed = 1;
constexpr int CompileError = 2;
constexpr int Fault = 3;
constexpr int Timeout = 4;
constexpr int Usage = 64;
constexpr int BadInput = 65;
constexpr int Unavailable = 69;
constexpr int Internal = 70;

inline int forError(const Error &e)
{
    switch (e.code) {
    case Error::Code::Usage: return Usage;
    case Error::Code::BadInput: return BadInput;
    case Error::Code::NoDriver:
    case Error::Code::NoDevice:
    case Error::Code::NoCompiler:
    case Error::Code::WorkerStart: return Unavailable;
    case Error::Code::CompileError: return CompileError;
    case Error::Code::Fault:
    case Error::Code::WorkerDied: return Fault;
    case Error::Code::Timeout: return Timeout;
    case Error::Code::Internal:
    case Error::Code::Protocol:
    case Error::Code::Cancelled: return Internal;
    }
    return Internal;
}

} // namespace Kp::Exit
