#include "devicelink.h"

#include "cuda/nvjitlinkapi.h"

#include <QRegularExpression>

#include <cstring>
#include <vector>

namespace Kp::DeviceLink {

bool logNeedsRdc(const QString &log)
{
    if (log.contains(QLatin1String("device-side kernel launch could not be processed"))) {
        return true;
    }
    // The device runtime API is declared only under -rdc=true; NVRTC then
    // reports the first call as an undefined identifier.
    static const QRegularExpression undeclared(
        QStringLiteral(R"re(identifier "(cudaStreamCreateWithFlags|cudaStreamDestroy|cudaDeviceSynchronize|)re"
                       R"re(cudaGetLastError|cudaPeekAtLastError|cudaLaunchDevice|cudaGetParameterBuffer|)re"
                       R"re(cudaEventCreateWithFlags|cudaEventRecord|cudaEventDestroy|cudaStreamWaitEvent|)re"
                       R"re(cudaMalloc|cudaFree|cudaMemcpyAsync|cudaMemsetAsync|cudaGraphLaunch|)re"
                       R"re(cudaStreamTailLaunch|cudaStreamFireAndForget)" is undefined)re"));
    return undeclared.match(log).hasMatch();
}

bool optionsUseRdc(const QStringList &options)
{
    bool rdc = false;
    for (const QString &o : options) {
        // The last of repeated options wins, as on nvcc's command line.
        if (o == QLatin1String("-rdc=true") || o == QLatin1String("--relocatable-device-code=true") ||
            o == QLatin1String("-dc")) {
            rdc = true;
        } else if (o == QLatin1String("-rdc=false") || o == QLatin1String("--relocatable-device-code=false")) {
            rdc = false;
        }
    }
    return rdc;
}

Result<QByteArray> linkWithDeviceRuntime(const QByteArray &cubin, const QString &arch, const QString &programName,
                                         QString *log)
{
    const QString where = QStringLiteral("nvJitLink");
    if (!arch.startsWith(QLatin1String("sm_"))) {
        return Error{where, Error::Code::CompileError, QStringLiteral("-arch"),
                     QStringLiteral("a kernel that launches kernels is linked with the device runtime into a cubin, "
                                    "which needs a real architecture (sm_XX); the arch is '%1'")
                         .arg(arch)};
    }
    if (cubin.isEmpty()) {
        return Error{where, Error::Code::Internal, QStringLiteral("nvJitLinkAddData"),
                     QStringLiteral("NVRTC gave no cubin to link with the device runtime")};
    }
    const Result<const NvJitLinkApi *> loaded = NvJitLinkApi::instance();
    if (!loaded) {
        return loaded.error();
    }
    const Result<QString> devrt = NvJitLinkApi::cudadevrtPath();
    if (!devrt) {
        return devrt.error();
    }
    const NvJitLinkApi &j = **loaded;
    const QByteArray archOption = QStringLiteral("-arch=%1").arg(arch).toLatin1();
    const char *options[] = {archOption.constData()};
    NvJitLinkApi::Handle handle = nullptr;
    if (const int r = j.create(&handle, 1, options); r != 0) {
        return Error{where, Error::Code::Internal, QStringLiteral("nvJitLinkCreate"),
                     QStringLiteral("nvJitLinkCreate(%1) failed: %2")
                         .arg(QString::fromLatin1(archOption), NvJitLinkApi::resultName(r))};
    }
    struct Destroy
    {
        const NvJitLinkApi &j;
        NvJitLinkApi::Handle &h;
        ~Destroy() { j.destroy(&h); }
    } destroy{j, handle};
    auto readLog = [&](bool errors) {
        size_t size = 0;
        if ((errors ? j.getErrorLogSize(handle, &size) : j.getInfoLogSize(handle, &size)) != 0 || size <= 1) {
            return QString();
        }
        std::vector<char> text(size + 1, '\0');
        if ((errors ? j.getErrorLog(handle, text.data()) : j.getInfoLog(handle, text.data())) != 0) {
            return QString();
        }
        return QString::fromUtf8(text.data()).trimmed();
    };
    auto failed = [&](const char *call, int r, const QString &what) {
        const QString errors = readLog(true);
        return Error{where, Error::Code::CompileError, QLatin1String(call),
                     QStringLiteral("linking %1 with the device runtime failed (%2 of %3: %4)%5")
                         .arg(programName, QLatin1String(call), what, NvJitLinkApi::resultName(r),
                              errors.isEmpty() ? QString() : QStringLiteral(": ") + errors)};
    };
    const QByteArray name = programName.toUtf8();
    if (const int r =
            j.addData(handle, NvJitLinkApi::kInputCubin, cubin.constData(), size_t(cubin.size()), name.constData());
        r != 0) {
        return failed("nvJitLinkAddData", r, programName);
    }
    const QByteArray devrtPath = devrt->toLocal8Bit();
    if (const int r = j.addFile(handle, NvJitLinkApi::kInputLibrary, devrtPath.constData()); r != 0) {
        return failed("nvJitLinkAddFile", r, *devrt);
    }
    if (const int r = j.complete(handle); r != 0) {
        return failed("nvJitLinkComplete", r, programName);
    }
    size_t size = 0;
    if (const int r = j.getLinkedCubinSize(handle, &size); r != 0 || size == 0) {
        return failed("nvJitLinkGetLinkedCubinSize", r, programName);
    }
    QByteArray linked(qsizetype(size), Qt::Uninitialized);
    if (const int r = j.getLinkedCubin(handle, linked.data()); r != 0) {
        return failed("nvJitLinkGetLinkedCubin", r, programName);
    }
    if (log) {
        *log = readLog(false);
    }
    return linked;
}

namespace {

template<typename T> bool readAt(const QByteArray &bytes, quint64 offset, T *out)
{
    if (offset > quint64(bytes.size()) || quint64(bytes.size()) - offset < sizeof(T)) {
        return false;
    }
    std::memcpy(out, bytes.constData() + offset, sizeof(T));
    return true;
}

} // namespace

Result<QStringList> elfFunctionSymbols(const QByteArray &elf)
{
    const auto bad = [](const QString &why) {
        return Error{QStringLiteral("ELF"), Error::Code::BadInput, QString(),
                     QStringLiteral("not a readable cubin: %1").arg(why)};
    };
    if (elf.size() < 64 || !elf.startsWith("\x7f"
                                           "ELF")) {
        return bad(QStringLiteral("no ELF header"));
    }
    if (elf.at(4) != 2 || elf.at(5) != 1) {
        return bad(QStringLiteral("not a 64-bit little-endian ELF"));
    }
    quint64 shoff = 0;
    quint16 shentsize = 0;
    quint16 shnum = 0;
    if (!readAt(elf, 0x28, &shoff) || !readAt(elf, 0x3a, &shentsize) || !readAt(elf, 0x3c, &shnum) || shentsize < 64) {
        return bad(QStringLiteral("no section table"));
    }
    QStringList names;
    for (quint16 i = 0; i < shnum; ++i) {
        const quint64 sh = shoff + quint64(i) * shentsize;
        quint32 type = 0;
        quint32 link = 0;
        quint64 offset = 0;
        quint64 size = 0;
        quint64 entsize = 0;
        if (!readAt(elf, sh + 4, &type) || !readAt(elf, sh + 0x18, &offset) || !readAt(elf, sh + 0x20, &size) ||
            !readAt(elf, sh + 0x28, &link) || !readAt(elf, sh + 0x38, &entsize)) {
            return bad(QStringLiteral("section %1 lies outside the image").arg(i));
        }
        if (type != 2 /* SHT_SYMTAB */) {
            continue;
        }
        if (entsize < 24 || offset > quint64(elf.size()) || size > quint64(elf.size()) - offset) {
            return bad(QStringLiteral("symbol table %1 lies outside the image").arg(i));
        }
        const quint64 strHeader = shoff + quint64(link) * shentsize;
        quint64 strOffset = 0;
        quint64 strSize = 0;
        if (link >= shnum || !readAt(elf, strHeader + 0x18, &strOffset) || !readAt(elf, strHeader + 0x20, &strSize) ||
            strOffset > quint64(elf.size()) || strSize > quint64(elf.size()) - strOffset) {
            return bad(QStringLiteral("the string table of symbol table %1 lies outside the image").arg(i));
        }
        for (quint64 s = 0; s + entsize <= size; s += entsize) {
            quint32 nameIndex = 0;
            quint8 info = 0;
            if (!readAt(elf, offset + s, &nameIndex) || !readAt(elf, offset + s + 4, &info)) {
                break;
            }
            if ((info & 0xf) != 2 /* STT_FUNC */ || nameIndex >= strSize) {
                continue;
            }
            const char *begin = elf.constData() + strOffset + nameIndex;
            const qsizetype room = qsizetype(strSize - nameIndex);
            const void *end = std::memchr(begin, '\0', size_t(room));
            const qsizetype len = end ? static_cast<const char *>(end) - begin : room;
            names << QString::fromLatin1(begin, len);
        }
    }
    return names;
}

} // namespace Kp::DeviceLink
