#pragma once

#include "core/result.h"

#include <nvrtc.h>

namespace Kp {

#define KP_NVRTC_FUNCTIONS(X)                                                                                          \
    X(nvrtcVersion)                                                                                                    \
    X(nvrtcGetErrorString)                                                                                             \
    X(nvrtcGetNumSupportedArchs)                                                                                       \
    X(nvrtcGetSupportedArchs)                                                                                          \
    X(nvrtcCreateProgram)                                                                                              \
    X(nvrtcDestroyProgram)                                                                                             \
    X(nvrtcCompileProgram)                                                                                             \
    X(nvrtcGetProgramLogSize)                                                                                          \
    X(nvrtcGetProgramLog)                                                                                              \
    X(nvrtcGetPTXSize)                                                                                                 \
    X(nvrtcGetPTX)                                                                                                     \
    X(nvrtcGetCUBINSize)                                                                                               \
    X(nvrtcGetCUBIN)                                                                                                   \
    X(nvrtcAddNameExpression)                                                                                          \
    X(nvrtcGetLoweredName)

/**
 * NVRTC, opened at run time. Compiling needs no GPU, so this never lives in
 * kpg-worker. kpg-compiler compiles with it; the GUI and kpg open it for its
 * version and architectures (the cache key) and compile in-process only when
 * Compiler::Config::isolated is off.
 *
 * Looks for KPG_NVRTC_LIBRARY if set, else libnvrtc.so.13 / .so.12 / .so on
 * the loader path, else the toolkit the project was built against.
 */
class NvrtcApi
{
public:
    /** Opens NVRTC once per process; thread-safe; the object lives until exit. */
    static Result<const NvrtcApi *> instance();

    Error error(nvrtcResult result, const char *apiCall) const;

    QString libraryPath;
    int major = 0;
    int minor = 0;
    QString versionString() const { return QStringLiteral("%1.%2").arg(major).arg(minor); }

#define KP_DECLARE_MEMBER(name) decltype(&::name) name = nullptr;
    KP_NVRTC_FUNCTIONS(KP_DECLARE_MEMBER)
#undef KP_DECLARE_MEMBER
    /** Whether the last compile made a precompiled header; null where this NVRTC lacks it. */
    decltype(&::nvrtcGetPCHCreateStatus) nvrtcGetPCHCreateStatus = nullptr;

private:
    NvrtcApi() = default;
    static Result<const NvrtcApi *> load();
};

} // namespace Kp
