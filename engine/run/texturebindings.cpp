#include "run/texturebindings.h"

#include "cuda/driverapi.h"

namespace Kp {

namespace {

Error bindingError(const QString &message)
{
    return Error{QStringLiteral("kpg-worker"), Error::Code::BadInput, QString(), message};
}

} // namespace

TextureBindings::TextureBindings(const DriverApi *api)
    : m_api(api)
{
}

// The owners destroy the objects before the arrays they view (members of
// Entry go in reverse order of declaration: inPlace, surface, arrayTexture, array).
TextureBindings::~TextureBindings() = default;

TextureLimits TextureBindings::deviceLimits(const DriverApi &api, CUdevice device)
{
    TextureLimits l;
    const auto get = [&](CUdevice_attribute a, qint64 *out) {
        int v = 0;
        if (api.cuDeviceGetAttribute(&v, a, device) == CUDA_SUCCESS && v > 0) {
            *out = v;
        }
    };
    get(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH, &l.array1d);
    get(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH, &l.array2d[0]);
    get(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT, &l.array2d[1]);
    get(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH, &l.array3d[0]);
    get(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT, &l.array3d[1]);
    get(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH, &l.array3d[2]);
    get(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH, &l.linear1d);
    get(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH, &l.pitch2d[0]);
    get(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT, &l.pitch2d[1]);
    get(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH, &l.pitch2d[2]);
    get(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH, &l.surface1d);
    get(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH, &l.surface2d[0]);
    get(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT, &l.surface2d[1]);
    get(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH, &l.surface3d[0]);
    get(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT, &l.surface3d[1]);
    get(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH, &l.surface3d[2]);
    get(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, &l.textureAlignment);
    get(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, &l.pitchAlignment);
    return l;
}

Error TextureBindings::driverError(CUresult r, const char *call, const Entry &e) const
{
    Error err = m_api->error(r, call);
    err.where = QStringLiteral("kpg-worker");
    err.message = QStringLiteral("%1 (%2): %3").arg(e.texture.field, e.texture.spec.describe(), err.message);
    return err;
}

Status TextureBindings::setup(const QList<RunTexture> &textures, const QList<qint64> &bufferBytes,
                              const TextureLimits &limits)
{
    m_limits = limits;
    m_entries.clear();
    m_entries.reserve(size_t(textures.size()));
    for (const RunTexture &t : textures) {
        if (t.buffer < 0 || t.buffer >= bufferBytes.size() || t.spec.buffer.isEmpty()) {
            return Error{QStringLiteral("kpg-worker"), Error::Code::Protocol, QString(),
                         QStringLiteral("%1: the texture binding names buffer %2 of %3")
                             .arg(t.field)
                             .arg(t.buffer)
                             .arg(bufferBytes.size())};
        }
        Result<TextureDescriptors> d = buildTextureDescriptors(t.spec, t.dtype, t.shape, t.field);
        if (!d) {
            return d.error();
        }
        const qint64 bytes = d->rowBytes * d->rows;
        if (bytes != bufferBytes[t.buffer]) {
            return bindingError(QStringLiteral("%1: buffer '%2' holds %3 bytes; its dtype and shape give %4")
                                    .arg(t.field, t.spec.buffer)
                                    .arg(bufferBytes[t.buffer])
                                    .arg(bytes));
        }
        if (Status s = checkTextureLimits(*d, t.spec, limits, 0, t.field); !s) {
            return s;
        }
        Entry e;
        e.texture = t;
        e.desc = *d;
        e.array = Cuda::Array(nullptr, Cuda::ArrayDestroy{m_api});
        e.arrayTexture = Cuda::TexObject(nullptr, Cuda::TexObjectDestroy{m_api});
        e.surface = Cuda::SurfObject(nullptr, Cuda::SurfObjectDestroy{m_api});
        if (e.desc.usesArray) {
            CUarray array = nullptr;
            if (const CUresult r = m_api->cuArray3DCreate(&array, &e.desc.array); r != CUDA_SUCCESS) {
                return driverError(r, "cuArray3DCreate", e);
            }
            e.array.reset(array);
            CUDA_RESOURCE_DESC res = e.desc.resource;
            res.res.array.hArray = array;
            if (t.spec.isSurface()) {
                CUsurfObject s = 0;
                if (const CUresult r = m_api->cuSurfObjectCreate(&s, &res); r != CUDA_SUCCESS) {
                    return driverError(r, "cuSurfObjectCreate", e);
                }
                e.surface.reset(Cuda::ObjectHandle(s));
            } else {
                CUtexObject o = 0;
                if (const CUresult r = m_api->cuTexObjectCreate(&o, &res, &e.desc.texture, nullptr);
                    r != CUDA_SUCCESS) {
                    return driverError(r, "cuTexObjectCreate", e);
                }
                e.arrayTexture.reset(Cuda::ObjectHandle(o));
            }
        }
        m_entries.push_back(std::move(e));
    }
    return Unit{};
}

CUDA_MEMCPY3D TextureBindings::copyDesc(const Entry &e, CUdeviceptr address, bool toArray) const
{
    CUDA_MEMCPY3D c{};
    const size_t rowBytes = size_t(e.desc.rowBytes);
    if (toArray) {
        c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
        c.srcDevice = address;
        c.srcPitch = rowBytes;
        c.srcHeight = size_t(e.desc.height);
        c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
        c.dstArray = e.array.get();
    } else {
        c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
        c.srcArray = e.array.get();
        c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        c.dstDevice = address;
        c.dstPitch = rowBytes;
        c.dstHeight = size_t(e.desc.height);
    }
    c.WidthInBytes = rowBytes;
    c.Height = size_t(e.desc.height);
    c.Depth = size_t(e.desc.depth);
    return c;
}

Result<unsigned long long> TextureBindings::prepare(int t, CUdeviceptr address, CUstream stream)
{
    Entry &e = m_entries[size_t(t)];
    if (e.desc.usesArray) {
        if (m_alwaysCopy || !e.fresh || e.copiedFrom != address) {
            const CUDA_MEMCPY3D c = copyDesc(e, address, true);
            if (const CUresult r = m_api->cuMemcpy3DAsync(&c, stream); r != CUDA_SUCCESS) {
                return driverError(r, "cuMemcpy3DAsync", e);
            }
            e.copiedFrom = address;
            e.fresh = true;
        }
        return e.texture.spec.isSurface() ? e.surface.get().value : e.arrayTexture.get().value;
    }
    for (const auto &[at, object] : e.inPlace) {
        if (at == address) {
            return object.get().value;
        }
    }
    // The address is known only now: a linear or pitched texture reads the buffer in place.
    if (Status s = checkTextureLimits(e.desc, e.texture.spec, m_limits, quint64(address), e.texture.field); !s) {
        return s.error();
    }
    CUDA_RESOURCE_DESC res = e.desc.resource;
    if (res.resType == CU_RESOURCE_TYPE_LINEAR) {
        res.res.linear.devPtr = address;
    } else {
        res.res.pitch2D.devPtr = address;
    }
    CUtexObject o = 0;
    if (const CUresult r = m_api->cuTexObjectCreate(&o, &res, &e.desc.texture, nullptr); r != CUDA_SUCCESS) {
        return driverError(r, "cuTexObjectCreate", e);
    }
    e.inPlace.emplace_back(address, Cuda::TexObject(Cuda::ObjectHandle(o), Cuda::TexObjectDestroy{m_api}));
    return o;
}

Status TextureBindings::writeBack(int t, CUdeviceptr address, CUstream stream)
{
    Entry &e = m_entries[size_t(t)];
    if (!e.texture.spec.isSurface()) {
        return Unit{};
    }
    const CUDA_MEMCPY3D c = copyDesc(e, address, false);
    if (const CUresult r = m_api->cuMemcpy3DAsync(&c, stream); r != CUDA_SUCCESS) {
        return driverError(r, "cuMemcpy3DAsync", e);
    }
    written(address);
    // The buffer now equals this array, so it needs no copy before its next launch.
    e.copiedFrom = address;
    e.fresh = true;
    return Unit{};
}

void TextureBindings::written(CUdeviceptr address)
{
    for (Entry &e : m_entries) {
        if (e.copiedFrom == address) {
            e.fresh = false;
        }
    }
}

void TextureBindings::invalidate()
{
    for (Entry &e : m_entries) {
        e.fresh = false;
    }
}

void TextureBindings::abandon() noexcept
{
    for (Entry &e : m_entries) {
        for (auto &[at, object] : e.inPlace) {
            (void)object.release();
        }
        (void)e.surface.release();
        (void)e.arrayTexture.release();
        (void)e.array.release();
    }
    m_entries.clear();
}

} // namespace Kp
