#pragma once

#include "buffers/dtype.h"
#include "core/result.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>

#include <cuda.h>

#include <array>

namespace Kp {

/**
 * A texture or surface object over a buffer, as a launch argument binds it
 * (docs/buffers.md, "Textures and surfaces"): which buffer, how it is laid
 * out on the device, and how it is sampled. Plain value.
 */
struct TextureSpec
{
    enum class Kind { Texture, Surface };
    /** Linear: tex1Dfetch over the buffer itself; Pitched: a 2-D view of it; Array: a CUDA array copied from it. */
    enum class Layout { Linear, Pitched, Array };
    enum class Address { Clamp, Wrap, Mirror, Border };
    enum class Filter { Point, Linear };
    /** Element: the stored type; NormalizedFloat: 8/16-bit integers read as floats in [0, 1] or [-1, 1]. */
    enum class Read { Element, NormalizedFloat };

    Kind kind = Kind::Texture;
    QString buffer;
    Layout layout = Layout::Array;
    std::array<Address, 3> address{Address::Clamp, Address::Clamp, Address::Clamp}; ///< x, y, z
    Filter filter = Filter::Point;
    Read read = Read::Element;
    bool normalizedCoords = false;
    std::array<float, 4> border{0, 0, 0, 0};

    /**
     * Reads a binding such as {"texture": "img", "layout": "array", "address":
     * ["wrap", "clamp"], "filter": "linear", "normalized": true, "read":
     * "normalizedFloat", "border": [0, 0, 0, 1]} or {"surface": "img"}.
     * Errors name the field under path ("launches[0].args[1].address[1]")
     * and list what is allowed.
     */
    static Result<TextureSpec> fromJson(const QJsonValue &value, const QString &path);
    /** The binding as fromJson reads it; keys with their default value are left out. */
    QJsonObject toJson() const;
    /** "texture over img (array, linear filter, wrap, normalized)": the binding in words, for panels and kpg. */
    QString describe() const;

    bool isSurface() const { return kind == Kind::Surface; }
    bool operator==(const TextureSpec &) const = default;
};

/** The parameter types a texture or surface binding can stand in for. */
bool isTextureObjectType(const QString &type);
bool isSurfaceObjectType(const QString &type);
/** An address mode as the project writes it: "clamp", "wrap", "mirror" or "border". */
QString addressName(TextureSpec::Address a);

/** A CUDA array / texture element format: the dtype's component type and count. */
struct TextureFormat
{
    CUarray_format format = CU_AD_FORMAT_FLOAT;
    unsigned channels = 1;
};

/**
 * The format for a dtype: int8..uint32, float16 and float32 scalars and
 * their 2- and 4-component vectors. 64-bit types, bfloat16 and 3-component
 * vectors have no CUDA texture format; the error says so and what to use.
 */
Result<TextureFormat> textureFormatFor(DType dtype, const QString &field);

/**
 * Everything the driver needs for one object, built without a GPU.
 * resource.res.linear.devPtr / res.pitch2D.devPtr / res.array.hArray are
 * left 0 for the worker to fill; array is meaningful when usesArray.
 */
struct TextureDescriptors
{
    CUDA_RESOURCE_DESC resource{};
    CUDA_TEXTURE_DESC texture{}; ///< unused for surfaces
    CUDA_ARRAY3D_DESCRIPTOR array{};
    bool usesArray = false;
    int dims = 1;        ///< 1 to 3, from the buffer's shape
    qint64 rowBytes = 0; ///< bytes of one row (width x element)
    qint64 rows = 1;     ///< height x depth
    qint64 width = 1;    ///< elements along x, y, z (1 for a missing axis)
    qint64 height = 1;
    qint64 depth = 1;
};

/** The pitch of a 2-D pitched texture must be a multiple of this (CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: 32). */
constexpr qint64 kTexturePitchAlignment = 32;

/**
 * Checks spec against the buffer (dtype, shape outermost first: [w],
 * [h, w] or [d, h, w]) and builds the descriptors. Every refusal is one
 * sentence naming field and value: a surface needs an array, wrap and
 * mirror need normalized coordinates, linear filtering needs float reads,
 * normalizedFloat needs 8/16-bit integers, a pitched texture is 2-D with
 * rows a multiple of 32 bytes, a linear one is 1-D with point sampling.
 */
Result<TextureDescriptors> buildTextureDescriptors(const TextureSpec &spec, DType dtype, const QList<qint64> &shape,
                                                   const QString &field);

/** The device's texture and surface limits (CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE*, *_SURFACE*, alignments). */
struct TextureLimits
{
    qint64 array1d = 131072;                               ///< MAXIMUM_TEXTURE1D_WIDTH
    std::array<qint64, 2> array2d{131072, 65536};          ///< MAXIMUM_TEXTURE2D_WIDTH, _HEIGHT
    std::array<qint64, 3> array3d{16384, 16384, 16384};    ///< MAXIMUM_TEXTURE3D_WIDTH, _HEIGHT, _DEPTH
    qint64 linear1d = qint64(1) << 27;                     ///< MAXIMUM_TEXTURE1D_LINEAR_WIDTH (elements)
    std::array<qint64, 3> pitch2d{131072, 65000, 2097120}; ///< MAXIMUM_TEXTURE2D_LINEAR_WIDTH, _HEIGHT, _PITCH
    qint64 surface1d = 32768;                              ///< MAXIMUM_SURFACE1D_WIDTH
    std::array<qint64, 2> surface2d{131072, 65536};        ///< MAXIMUM_SURFACE2D_WIDTH, _HEIGHT
    std::array<qint64, 3> surface3d{16384, 16384, 16384};  ///< MAXIMUM_SURFACE3D_WIDTH, _HEIGHT, _DEPTH
    qint64 textureAlignment = 512;                         ///< TEXTURE_ALIGNMENT: base address of a linear texture
    qint64 pitchAlignment = 32;                            ///< TEXTURE_PITCH_ALIGNMENT
};

/**
 * Checks built descriptors against a device's limits; address is the
 * buffer's device address for "linear" and "pitched" layouts (0: not known
 * yet, not checked). One sentence naming field, the extent and the limit.
 */
Status checkTextureLimits(const TextureDescriptors &d, const TextureSpec &spec, const TextureLimits &limits,
                          quint64 address, const QString &field);

} // namespace Kp
