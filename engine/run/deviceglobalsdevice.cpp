#include "deviceglobalsdevice.h"

#include "cuda/driverapi.h"

namespace Kp {

Result<CUdeviceptr> moduleGlobal(const DriverApi &api, CUmodule module, const QString &symbol, qint64 bytes,
                                 const QString &buffer)
{
    CUdeviceptr ptr = 0;
    size_t size = 0;
    const QByteArray name = symbol.toUtf8();
    const CUresult r = api.cuModuleGetGlobal(&ptr, &size, module, name.constData());
    if (r == CUDA_ERROR_NOT_FOUND) {
        return Error{QStringLiteral("kpg-worker"), Error::Code::BadInput, QStringLiteral("cuModuleGetGlobal"),
                     QStringLiteral("buffer '%1' names the variable '%2', which the loaded module does not have")
                         .arg(buffer, symbol)};
    }
    if (r != CUDA_SUCCESS) {
        Error e = api.error(r, "cuModuleGetGlobal");
        e.message = QStringLiteral("buffer '%1' (variable '%2'): %3").arg(buffer, symbol, e.message);
        return e;
    }
    if (qint64(size) != bytes) {
        return Error{QStringLiteral("kpg-worker"), Error::Code::BadInput, QStringLiteral("cuModuleGetGlobal"),
                     QStringLiteral("buffer '%1' holds %2 bytes but the variable '%3' has %4 bytes in the loaded "
                                    "module; give the buffer a shape of exactly its size")
                         .arg(buffer)
                         .arg(bytes)
                         .arg(symbol)
                         .arg(qint64(size))};
    }
    return ptr;
}

} // namespace Kp
