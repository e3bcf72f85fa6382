#pragma once

#include "core/result.h"

namespace Kp::Exit {

// kpg's exit codes; every subcommand uses them. kExitCodes below is the one
// list: `kpg --help` prints it, and tst_cli checks that README's table says
// the same. 64, 65, 69, 70 and 74 are sysexits.h's EX_USAGE, EX_DATAERR,
// EX_UNAVAILABLE, EX_SOFTWARE and EX_IOERR; 75 is EX_TEMPFAIL.
constexpr int Ok = 0;
constexpr int CheckFailed = 1;
constexpr int CompileError = 2;
constexpr int Fault = 3;
constexpr int Timeout = 4;
constexpr int Usage = 64;
constexpr int BadInput = 65;
constexpr int Unavailable = 69;
constexpr int Internal = 70;
constexpr int CannotWrite = 74;
/** kpg grade: some submissions could not be graded (an internal error, a failed Slurm task); rerun with --resume.
 *  kpg sweep: interrupted (Ctrl-C); the points that finished are written. */
constexpr int Incomplete = 75;

struct CodeInfo
{
    int code;
    const char *meaning;
};

constexpr CodeInfo kExitCodes[] = {
    {Ok, "ok"},
    {CheckFailed, "a check failed"},
    {CompileError, "compile error"},
    {Fault, "kernel fault or launch error"},
    {Timeout, "kernel timed out"},
    {Usage, "usage error"},
    {BadInput, "bad input file"},
    {Unavailable, "no GPU, driver or NVRTC where one is required"},
    {Internal, "internal error (e.g. a buffer that cannot be mapped)"},
    {CannotWrite, "an output file cannot be written (e.g. no space left on device)"},
    {Incomplete, "kpg grade: some submissions could not be graded (rerun with --resume); kpg sweep: interrupted"},
};

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
