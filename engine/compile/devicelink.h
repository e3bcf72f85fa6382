#pragma once

#include "core/result.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace Kp {

/**
 * Relocatable device code (dynamic parallelism: a kernel that launches
 * kernels) and its link with the toolkit's device runtime. Pure functions;
 * any thread. The link runs on the CPU through nvJitLink
 * (cuda/nvjitlinkapi), in the calling process: its inputs are the cubin
 * NVRTC produced and the toolkit's own libcudadevrt.a, never a file the
 * project names.
 */
namespace DeviceLink {

/**
 * Whether NVRTC's log says the source needs relocatable device code: a
 * device-side launch ("could not be processed as the required runtime APIs
 * are not declared"), or a device runtime call (cudaStreamCreateWithFlags,
 * cudaDeviceSynchronize, ...) that is undeclared without -rdc=true.
 */
bool logNeedsRdc(const QString &log);

/** Whether the options ask for relocatable device code (-rdc=true, --relocatable-device-code=true, -dc). */
bool optionsUseRdc(const QStringList &options);

/**
 * Links a relocatable cubin for \a arch ("sm_90") with libcudadevrt.a into
 * a loadable cubin. \a log gets nvJitLink's info log. Errors say what is
 * missing (nvJitLink, libcudadevrt.a) or what the linker refused.
 */
Result<QByteArray> linkWithDeviceRuntime(const QByteArray &cubin, const QString &arch, const QString &programName,
                                         QString *log = nullptr);

/**
 * The names of the functions (STT_FUNC symbols) in a 64-bit little-endian
 * ELF image such as a cubin; bounds-checked, so any bytes are safe. An error
 * when the image is not such an ELF or its tables lie outside it.
 */
Result<QStringList> elfFunctionSymbols(const QByteArray &elf);

} // namespace DeviceLink

} // namespace Kp
