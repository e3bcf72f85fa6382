#pragma once

#include "core/result.h"

#include <QString>

#include <cstddef>
#include <cstdint>

namespace Kp {

/**
 * nvJitLink, the toolkit's device linker, opened at run time like NVRTC
 * (cuda/nvrtcapi). Relocatable device code (dynamic parallelism) is linked
 * with it against the toolkit's libcudadevrt.a; linking needs no GPU.
 *
 * Looks for KPG_NVJITLINK_LIBRARY if set, else libnvJitLink.so.13 / .so.12
 * in the folder NVRTC was loaded from, on the loader path, then in the
 * toolkit the project was built against and /usr/local/cuda/lib64.
 *
 * The entry points are declared here by hand: nvJitLink.h defines its API
 * names as inline wrappers of versioned symbols, so decltype of them cannot
 * be taken; the library exports the plain names too.
 */
class NvJitLinkApi
{
public:
    using Handle = void *;
    // nvJitLinkInputType values used here (nvJitLink.h).
    static constexpr int kInputCubin = 1;
    static constexpr int kInputLibrary = 6;

    /** Opens nvJitLink once per process; thread-safe; the object lives until exit. */
    static Result<const NvJitLinkApi *> instance();

    /**
     * The toolkit's device runtime library: KPG_CUDADEVRT if set, else
     * libcudadevrt.a beside the NVRTC or nvJitLink library in use, else in the
     * build's toolkit or /usr/local/cuda/lib64. Errors name every place tried.
     */
    static Result<QString> cudadevrtPath();

    /** The folder of the library that holds \a symbol (dladdr), empty if unknown. */
    static QString libraryFolderOf(const void *symbol);

    QString libraryPath;

    int (*create)(Handle *handle, uint32_t numOptions, const char **options) = nullptr;
    int (*destroy)(Handle *handle) = nullptr;
    int (*addData)(Handle handle, int inputType, const void *data, size_t size, const char *name) = nullptr;
    int (*addFile)(Handle handle, int inputType, const char *fileName) = nullptr;
    int (*complete)(Handle handle) = nullptr;
    int (*getLinkedCubinSize)(Handle handle, size_t *size) = nullptr;
    int (*getLinkedCubin)(Handle handle, void *cubin) = nullptr;
    int (*getErrorLogSize)(Handle handle, size_t *size) = nullptr;
    int (*getErrorLog)(Handle handle, char *log) = nullptr;
    int (*getInfoLogSize)(Handle handle, size_t *size) = nullptr;
    int (*getInfoLog)(Handle handle, char *log) = nullptr;

    /** "NVJITLINK_ERROR_PTX_COMPILE" for a result code. */
    static QString resultName(int result);

private:
    NvJitLinkApi() = default;
    static Result<const NvJitLinkApi *> load();
};

} // namespace Kp
