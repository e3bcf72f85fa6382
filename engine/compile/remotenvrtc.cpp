#include "compile/remotenvrtc.h"

#include "compile/compiler.h"
#include "cuda/nvrtcapi.h"

#include <QFileInfo>
#include <QVariantList>

#include <dlfcn.h>
#include <vector>

namespace Kp::RemoteNvrtc {

namespace {
// The file NVRTC was loaded from: libraryPath may be a bare soname the loader resolved.
QString libraryFile(const NvrtcApi &nv)
{
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(nv.nvrtcVersion), &info) != 0 && info.dli_fname) {
        return QFile::decodeName(info.dli_fname);
    }
    return nv.libraryPath;
}
} // namespace

Sandbox::FsPolicy ownPolicy(const NvrtcApi &nv, const QString &tempDir)
{
    Sandbox::FsPolicy policy;
    const auto add = [](QStringList &list, const QString &path) {
        if (!path.isEmpty() && QFileInfo::exists(path) && !list.contains(path)) {
            list << path;
        }
    };
    for (const QString &d : Compiler::toolkitIncludeDirs()) {
        add(policy.readDirs, d);
    }
    // NVRTC opens libnvrtc-builtins.so while compiling: its folder needs execute.
    const QFileInfo lib(libraryFile(nv));
    add(policy.execDirs, lib.absolutePath());
    add(policy.execDirs, QFileInfo(lib.canonicalFilePath()).absolutePath());
    for (const char *d : {"/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib"}) {
        add(policy.execDirs, QString::fromLatin1(d));
    }
    add(policy.readFiles, QStringLiteral("/etc/ld.so.cache"));
    add(policy.writeDirs, tempDir);
    return policy;
}

QVariantMap describe(const NvrtcApi &nv)
{
    int count = 0;
    nv.nvrtcGetNumSupportedArchs(&count);
    std::vector<int> archs(size_t(qMax(0, count)));
    if (count > 0) {
        nv.nvrtcGetSupportedArchs(archs.data());
    }
    QVariantList archList;
    for (const int a : archs) {
        archList << a;
    }
    return QVariantMap{{QStringLiteral("nvrtcVersion"), nv.versionString()},
                       {QStringLiteral("nvrtcLibrary"), libraryFile(nv)},
                       {QStringLiteral("archs"), archList},
                       {QStringLiteral("includeDirs"), Compiler::toolkitIncludeDirs()}};
}

} // namespace Kp::RemoteNvrtc
