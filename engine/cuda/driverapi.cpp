#include "driverapi.h"

#include <dlfcn.h>

namespace Kp {

#define KP_STRINGIFY2(x) #x
#define KP_STRINGIFY(x) KP_STRINGIFY2(x)

namespace {
Error noDriver(const QString &message, const QString &apiCall = {})
{
    return Error{QStringLiteral("CUDA driver"), Error::Code::NoDriver, apiCall, message};
}
} // namespace

Result<const DriverApi *> DriverApi::instance()
{
    // Function-local static: initialised once, thread-safe (C++11 magic statics).
    static const Result<const DriverApi *> loaded = load();
    return loaded;
}

Result<const DriverApi *> DriverApi::load()
{
    const QByteArray env = qgetenv("KPG_CUDA_DRIVER");
    const QByteArray path = env.isEmpty() ? QByteArrayLiteral("libcuda.so.1") : env;
    // RTLD_LOCAL: the driver's symbols must not interpose on anything else.
    void *handle = dlopen(path.constData(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        return noDriver(QStringLiteral("No NVIDIA driver found: %1 could not be loaded (%2)")
                            .arg(QString::fromLocal8Bit(path), QString::fromLocal8Bit(dlerror())),
                        QStringLiteral("dlopen"));
    }
    auto *api = new DriverApi; // lives for the whole process, as the driver does
    api->libraryPath = QString::fromLocal8Bit(path);

#define KP_LOAD_MEMBER(name)                                                                                           \
    api->name = reinterpret_cast<decltype(&::name)>(dlsym(handle, KP_STRINGIFY(name)));                                \
    if (!api->name) {                                                                                                  \
        delete api;                                                                                                    \
        return noDriver(QStringLiteral("The NVIDIA driver in %1 is too old: it lacks %2; "                             \
                                       "install a driver for CUDA 12.8 or newer (570+)")                               \
                            .arg(QString::fromLocal8Bit(path), QStringLiteral(KP_STRINGIFY(name))),                    \
                        QStringLiteral("dlsym"));                                                                      \
    }
    KP_CUDA_DRIVER_FUNCTIONS(KP_LOAD_MEMBER)
#undef KP_LOAD_MEMBER
    api->cuFuncGetParamInfo = reinterpret_cast<decltype(&::cuFuncGetParamInfo)>(dlsym(handle, "cuFuncGetParamInfo"));

    if (const CUresult r = api->cuInit(0); r != CUDA_SUCCESS) {
        Error e = api->error(r, "cuInit");
        e.code = r == CUDA_ERROR_NO_DEVICE ? Error::Code::NoDevice : Error::Code::NoDriver;
        e.message = (r == CUDA_ERROR_NO_DEVICE ? QStringLiteral("No CUDA device found: ")
                                               : QStringLiteral("The NVIDIA driver failed to start: ")) +
                    e.message;
        delete api;
        return e;
    }
    api->cuDriverGetVersion(&api->driverVersion);
    return static_cast<const DriverApi *>(api);
}

Error DriverApi::error(CUresult result, const char *apiCall) const
{
    // Built only on failure (the success path stays free of string work).
    const char *name = nullptr;
    const char *text = nullptr;
    if (cuGetErrorName) {
        cuGetErrorName(result, &name);
    }
    if (cuGetErrorString) {
        cuGetErrorString(result, &text);
    }
    const QString call = QString::fromLatin1(apiCall);
    QString message = QStringLiteral("%1 failed with %2")
                          .arg(call, name ? QString::fromLatin1(name) : QStringLiteral("error %1").arg(int(result)));
    if (text) {
        message += QStringLiteral(": ") + QString::fromLocal8Bit(text);
    }
    return Error{QStringLiteral("CUDA driver"), Error::Code::Fault, call, message};
}

} // namespace Kp
