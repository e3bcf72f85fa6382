#pragma once

#include "buffers/dtype.h"
#include "core/result.h"

#include <QByteArray>
#include <QList>
#include <QString>

class QIODevice;

namespace Kp {

/**
 * The largest .npy file opened: a buffer's limit (kMaxBufferBytes, 64 GiB)
 * plus room for the header (at most 1 MiB) and its length fields.
 */
constexpr qint64 kMaxNpyFileBytes = 64ll * 1024 * 1024 * 1024 + 2 * 1024 * 1024;

/**
 * The header of a NumPy .npy file (format versions 1.0, 2.0 and 3.0).
 *
 * Only numeric arrays are accepted: descr '<', '>', '|' or '=' followed by
 * i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8, and b1 (bool, read as uint8); or a
 * structured dtype of 1 to 4 fields of one such type and no padding, which
 * is how numpy spells a CUDA vector ([('x', '<f4'), ('y', '<f4')] is a
 * float2). A 0-d array (shape ()) is read as shape [1], with zeroDim set.
 */
struct NpyHeader
{
    DType dtype = DType::UInt8; ///< always a scalar dtype; vector dtypes come from a trailing dimension
    QList<qint64> shape;        ///< as in the file, outermost first; [1] for a 0-d array
    bool fortranOrder = false;
    bool bigEndian = false; ///< the data is big endian (descr '>' on a multi-byte type)
    int majorVersion = 1;
    qint64 dataOffset = 0; ///< where the data starts in the file
    qint64 dataBytes = 0;  ///< product(shape) * item size
    QString descr;         ///< as written: "<f4"
    bool zeroDim = false;  ///< the file holds a 0-d array (shape ()), read as shape [1]
    int fields = 0;        ///< a structured dtype of this many fields of dtype; 0 for a plain array

    qint64 elementCount() const;
    /** The shape with the fields as a trailing axis (fields > 1), as a vector dtype's buffer sees it. */
    QList<qint64> componentShape() const;
};

/**
 * Reads and checks the header at the device's current position (the start of
 * the file) and leaves the device at dataOffset. Checks that the data size
 * neither overflows nor exceeds kMaxBufferBytes and, for devices with a size,
 * that the file holds all of it. fileNameForMessages names the file in errors.
 */
Result<NpyHeader> readNpyHeader(QIODevice &dev, const QString &fileNameForMessages);

/**
 * Reads the data described by h into dst (dstBytes must equal h.dataBytes),
 * in C order and host byte order: big-endian data is swapped, Fortran-order
 * data of any rank is transposed while it is read (through a small chunk
 * buffer; dst is the only full-size copy).
 */
Status readNpyData(QIODevice &dev, const NpyHeader &h, void *dst, qint64 dstBytes,
                   const QString &fileNameForMessages = QString());

/** How a vector dtype is written to a .npy file. */
enum class NpyVectorLayout {
    TrailingAxis, ///< float4 shape [n] -> '<f4' shape (n, 4): what most numpy code expects
    Structured,   ///< float4 shape [n] -> [('x', '<f4'), ..., ('w', '<f4')] shape (n,): one record per element
};

/**
 * Writes data (elements of dtype in C order, shape outermost first) as a
 * .npy file exactly as numpy.save writes it: version 1.0 (2.0 when the header
 * needs it), host byte order ('<' on every CUDA host), C order, the header
 * padded with spaces and a final '\n' so that the data starts at a multiple
 * of 64 bytes. Vector dtypes are written as their component with an extra
 * trailing dimension (float4 shape [n] -> '<f4' shape (n, 4)). float16 is
 * '<f2'; bfloat16, which numpy lacks, is written as '<u2' holding the raw
 * bits (as float32 in numpy: (np.load(f).astype(np.uint32) << 16).view(np.float32)).
 * Atomic: the file is replaced only when everything was written.
 */
Status writeNpy(const QString &path, DType dtype, const QList<qint64> &shape, const void *data,
                NpyVectorLayout layout = NpyVectorLayout::TrailingAxis);

/** The header bytes writeNpy() writes (magic, version, length, dict, padding). */
QByteArray npyHeaderBytes(DType dtype, const QList<qint64> &shape,
                          NpyVectorLayout layout = NpyVectorLayout::TrailingAxis);

/** The numpy descr of a scalar dtype in host byte order: "<f4", "|u1". bfloat16 -> "<u2". */
QString npyDescr(DType scalar);

/**
 * Loads a whole .npy file into a buffer of dtype and shape. The file's dtype
 * must be the buffer's component type exactly (bool files load into uint8,
 * '<u2' files into bfloat16 as raw bits), and its shape must be the buffer's
 * shape, plus a trailing dimension of `components` for vector dtypes (float4
 * shape [n] <- '<f4' (n, 4)), or a structured dtype of `components` fields
 * of the component type and the buffer's shape. bufferName, when given, names the buffer in
 * messages.
 */
Status loadNpyInto(const QString &path, DType dtype, const QList<qint64> &shape, void *dst, qint64 dstBytes,
                   const QString &bufferName = QString());

/**
 * The buffer shape a .npy file implies for a buffer of dtype (for specs whose
 * shape is empty, "from the file"): the file's shape, less the trailing
 * `components` dimension for vector dtypes. Fails when the dtype does not
 * match or the shape cannot be a buffer's (1 to 3 positive extents).
 */
Result<QList<qint64>> npyShapeFor(const QString &path, DType dtype, const QString &bufferName = QString());

/** "[3, 4]", for messages. */
QString shapeToString(const QList<qint64> &shape);

} // namespace Kp
