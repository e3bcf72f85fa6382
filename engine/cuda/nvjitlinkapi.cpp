#include "nvjitlinkapi.h"

#include "nvrtcapi.h"

#include <QFileInfo>
#include <QStringList>

#include <dlfcn.h>

namespace Kp {

namespace {

QStringList toolkitLibFolders()
{
    QStringList roots{QStringLiteral("/usr/local/cuda")};
#ifdef KPG_CUDA_ROOT
    roots.prepend(QStringLiteral(KPG_CUDA_ROOT));
#endif
    roots.removeDuplicates();
    QStringList folders;
    for (const QString &r : roots) {
        folders << r + QStringLiteral("/lib64");
    }
    return folders;
}

// Where NVRTC was found is where the toolkit's other libraries are: a
// bundle or KPG_NVRTC_LIBRARY pointing into a toolkit carries them all.
QString nvrtcFolder()
{
    const Result<const NvrtcApi *> nv = NvrtcApi::instance();
    if (!nv) {
        return {};
    }
    return NvJitLinkApi::libraryFolderOf(reinterpret_cast<const void *>((*nv)->nvrtcVersion));
}

} // namespace

QString NvJitLinkApi::libraryFolderOf(const void *symbol)
{
    Dl_info info{};
    if (!symbol || dladdr(symbol, &info) == 0 || !info.dli_fname) {
        return {};
    }
    return QFileInfo(QString::fromLocal8Bit(info.dli_fname)).canonicalPath();
}

Result<const NvJitLinkApi *> NvJitLinkApi::instance()
{
    static const Result<const NvJitLinkApi *> loaded = load();
    return loaded;
}

Result<const NvJitLinkApi *> NvJitLinkApi::load()
{
    static const char *const names[] = {"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so"};
    QStringList candidates;
    const QString env = qEnvironmentVariable("KPG_NVJITLINK_LIBRARY");
    if (!env.isEmpty()) {
        candidates << env; // an explicit choice is not second-guessed
    } else {
        QStringList folders;
        const QString beside = nvrtcFolder();
        if (!beside.isEmpty()) {
            folders << beside;
        }
        for (const char *n : names) {
            for (const QString &f : folders) {
                candidates << f + QLatin1Char('/') + QLatin1String(n);
            }
        }
        for (const char *n : names) {
            candidates << QLatin1String(n);
        }
        for (const QString &f : toolkitLibFolders()) {
            for (const char *n : names) {
                candidates << f + QLatin1Char('/') + QLatin1String(n);
            }
        }
        candidates.removeDuplicates();
    }
    void *handle = nullptr;
    QString path;
    QString lastError;
    for (const QString &c : candidates) {
        handle = dlopen(c.toLocal8Bit().constData(), RTLD_NOW | RTLD_LOCAL);
        if (handle) {
            path = c;
            break;
        }
        lastError = QString::fromLocal8Bit(dlerror());
    }
    if (!handle) {
        return Error{QStringLiteral("nvJitLink"), Error::Code::NoCompiler, QStringLiteral("dlopen"),
                     QStringLiteral("nvJitLink not found (tried %1): kernels that launch kernels (dynamic "
                                    "parallelism) cannot be linked; install the CUDA Toolkit's nvJitLink or set "
                                    "KPG_NVJITLINK_LIBRARY. Last error: %2")
                         .arg(candidates.join(QStringLiteral(", ")), lastError)};
    }
    auto *api = new NvJitLinkApi;
    api->libraryPath = path;
    QString missing;
    auto load = [&](auto &member, const char *name) {
        member = reinterpret_cast<std::remove_reference_t<decltype(member)>>(dlsym(handle, name));
        if (!member && missing.isEmpty()) {
            missing = QLatin1String(name);
        }
    };
    load(api->create, "nvJitLinkCreate");
    load(api->destroy, "nvJitLinkDestroy");
    load(api->addData, "nvJitLinkAddData");
    load(api->addFile, "nvJitLinkAddFile");
    load(api->complete, "nvJitLinkComplete");
    load(api->getLinkedCubinSize, "nvJitLinkGetLinkedCubinSize");
    load(api->getLinkedCubin, "nvJitLinkGetLinkedCubin");
    load(api->getErrorLogSize, "nvJitLinkGetErrorLogSize");
    load(api->getErrorLog, "nvJitLinkGetErrorLog");
    load(api->getInfoLogSize, "nvJitLinkGetInfoLogSize");
    load(api->getInfoLog, "nvJitLinkGetInfoLog");
    if (!missing.isEmpty()) {
        delete api;
        return Error{QStringLiteral("nvJitLink"), Error::Code::NoCompiler, QStringLiteral("dlsym"),
                     QStringLiteral("%1 lacks %2; nvJitLink 12.4 or newer is required").arg(path, missing)};
    }
    return static_cast<const NvJitLinkApi *>(api);
}

Result<QString> NvJitLinkApi::cudadevrtPath()
{
    const QString env = qEnvironmentVariable("KPG_CUDADEVRT");
    if (!env.isEmpty()) {
        if (QFileInfo(env).isFile()) {
            return env;
        }
        return Error{QStringLiteral("nvJitLink"), Error::Code::NoCompiler, QStringLiteral("KPG_CUDADEVRT"),
                     QStringLiteral("KPG_CUDADEVRT is '%1', which is not a file: it must name the CUDA Toolkit's "
                                    "libcudadevrt.a")
                         .arg(env)};
    }
    QStringList folders;
    folders << nvrtcFolder();
    if (const Result<const NvJitLinkApi *> j = instance()) {
        folders << libraryFolderOf(reinterpret_cast<const void *>((*j)->create));
    }
    folders << toolkitLibFolders();
    folders.removeAll(QString());
    folders.removeDuplicates();
    QStringList tried;
    for (const QString &f : folders) {
        const QString p = f + QStringLiteral("/libcudadevrt.a");
        if (QFileInfo(p).isFile()) {
            return p;
        }
        tried << p;
    }
    return Error{QStringLiteral("nvJitLink"), Error::Code::NoCompiler, QStringLiteral("libcudadevrt.a"),
                 QStringLiteral("the CUDA device runtime library libcudadevrt.a was not found (tried %1): kernels "
                                "that launch kernels (dynamic parallelism) need it; install the CUDA Toolkit or set "
                                "KPG_CUDADEVRT")
                     .arg(tried.join(QStringLiteral(", ")))};
}

QString NvJitLinkApi::resultName(int result)
{
    static const char *const names[] = {"NVJITLINK_SUCCESS",
                                        "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
                                        "NVJITLINK_ERROR_MISSING_ARCH",
                                        "NVJITLINK_ERROR_INVALID_INPUT",
                                        "NVJITLINK_ERROR_PTX_COMPILE",
                                        "NVJITLINK_ERROR_NVVM_COMPILE",
                                        "NVJITLINK_ERROR_INTERNAL",
                                        "NVJITLINK_ERROR_THREADPOOL",
                                        "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
                                        "NVJITLINK_ERROR_FINALIZE",
                                        "NVJITLINK_ERROR_NULL_INPUT",
                                        "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
                                        "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
                                        "NVJITLINK_ERROR_ARCH_MISMATCH",
                                        "NVJITLINK_ERROR_OUTDATED_LIBRARY",
                                        "NVJITLINK_ERROR_MISSING_FATBIN",
                                        "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
                                        "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
                                        "NVJITLINK_ERROR_LTO_NOT_ENABLED"};
    if (result >= 0 && result < int(sizeof(names) / sizeof(names[0]))) {
        return QLatin1String(names[result]);
    }
    return QStringLiteral("nvJitLink error %1").arg(result);
}

} // namespace Kp
