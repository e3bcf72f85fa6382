#include "nvrtcapi.h"

#include <QStringList>

#include <dlfcn.h>

namespace Kp {

#define KP_STRINGIFY2(x) #x
#define KP_STRINGIFY(x) KP_STRINGIFY2(x)

Result<const NvrtcApi *> NvrtcApi::instance()
{
    static const Result<const NvrtcApi *> loaded = load();
    return loaded;
}

Result<const NvrtcApi *> NvrtcApi::load()
{
    QStringList candidates;
    const QString env = qEnvironmentVariable("KPG_NVRTC_LIBRARY");
    if (!env.isEmpty()) {
        candidates << env; // an explicit choice is not second-guessed
    } else {
        candidates << QStringLiteral("libnvrtc.so.13") << QStringLiteral("libnvrtc.so.12")
                   << QStringLiteral("libnvrtc.so");
        // A toolkit whose lib64 is not in the loader's paths (NVIDIA's .run
        // installer leaves it out): the one this build used, then the usual
        // place, which is where a prebuilt package or bundle finds it.
        QStringList roots{QStringLiteral("/usr/local/cuda")};
#ifdef KPG_CUDA_ROOT
        roots.prepend(QStringLiteral(KPG_CUDA_ROOT));
#endif
        roots.removeDuplicates();
        for (const QString &root : roots) {
            for (const char *name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) {
                candidates << root + QStringLiteral("/lib64/") + QLatin1String(name);
            }
        }
    }
    void *handle = nullptr;
    QString path;
    QStringList failures;
    for (const QString &c : candidates) {
        handle = dlopen(c.toLocal8Bit().constData(), RTLD_NOW | RTLD_LOCAL);
        if (handle) {
            path = c;
            break;
        }
        failures << QString::fromLocal8Bit(dlerror());
    }
    if (!handle) {
        return Error{QStringLiteral("NVRTC"), Error::Code::NoCompiler, QStringLiteral("dlopen"),
                     QStringLiteral("NVRTC not found (tried %1): kernels cannot be compiled; install the CUDA "
                                    "Toolkit or set KPG_NVRTC_LIBRARY. Last error: %2")
                         .arg(candidates.join(QStringLiteral(", ")), failures.value(failures.size() - 1))};
    }
    auto *api = new NvrtcApi;
    api->libraryPath = path;
#define KP_LOAD_MEMBER(name)                                                                                           \
    api->name = reinterpret_cast<decltype(&::name)>(dlsym(handle, KP_STRINGIFY(name)));                                \
    if (!api->name) {                                                                                                  \
        delete api;                                                                                                    \
        return Error{QStringLiteral("NVRTC"), Error::Code::NoCompiler, QStringLiteral("dlsym"),                        \
                     QStringLiteral("%1 lacks %2; NVRTC 12.4 or newer is required")                                    \
                         .arg(path, QStringLiteral(KP_STRINGIFY(name)))};                                              \
    }
    KP_NVRTC_FUNCTIONS(KP_LOAD_MEMBER)
#undef KP_LOAD_MEMBER
    api->nvrtcGetPCHCreateStatus =
        reinterpret_cast<decltype(&::nvrtcGetPCHCreateStatus)>(dlsym(handle, "nvrtcGetPCHCreateStatus"));
    api->nvrtcVersion(&api->major, &api->minor);
    return static_cast<const NvrtcApi *>(api);
}

Error NvrtcApi::error(nvrtcResult result, const char *apiCall) const
{
    const QString call = QString::fromLatin1(apiCall);
    return Error{QStringLiteral("NVRTC"), Error::Code::Internal, call,
                 QStringLiteral("%1 failed: %2").arg(call, QString::fromLatin1(nvrtcGetErrorString(result)))};
}

} // namespace Kp
