// libFuzzer target: the .npy reader (engine/buffers/npy.h). The input is a
// whole .npy file. It is read three ways, because each takes its own path
// through the reader: from memory (a QBuffer, which has a size, so the
// truncation check runs before any data is read), from a sequential device
// (no size: the data read itself finds the truncation) and from a file
// through npyShapeFor() and loadNpyInto(), the functions the buffers use.

#include "buffers/npy.h"

#include <QBuffer>
#include <QCoreApplication>
#include <QDir>
#include <QFile>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

// Inputs are at most -max_len bytes, so no header that passes the size
// check can ask for more than that; the cap only guards the sequential
// read, which has no size to check against.
constexpr qint64 kMaxDataBytes = 1 << 20;

// A QBuffer that says it is sequential, like a pipe or a socket.
class SequentialBuffer : public QBuffer
{
public:
    using QBuffer::QBuffer;
    bool isSequential() const override { return true; }
};

void check(bool ok, const char *what)
{
    if (!ok) {
        std::fprintf(stderr, "fuzz_npy: invariant broken: %s\n", what);
        std::abort();
    }
}

// True when the header read from memory was good.
bool readFromMemory(const QByteArray &bytes)
{
    QBuffer dev;
    dev.setData(bytes);
    dev.open(QIODevice::ReadOnly);
    const Kp::Result<Kp::NpyHeader> h = Kp::readNpyHeader(dev, QStringLiteral("fuzz.npy"));
    if (!h) {
        return false;
    }
    check(h->dataOffset >= 0 && h->dataOffset <= bytes.size(), "dataOffset inside the file");
    check(h->dataBytes >= 0 && h->dataBytes <= bytes.size() - h->dataOffset, "the data fits the file");
    check(!h->shape.isEmpty(), "a shape");
    std::vector<char> data(static_cast<std::size_t>(h->dataBytes));
    // The header promised that the device holds all the data.
    check(bool(Kp::readNpyData(dev, *h, data.data(), h->dataBytes)), "data read after a good header");
    return true;
}

void readSequential(const QByteArray &bytes)
{
    SequentialBuffer dev;
    dev.setData(bytes);
    dev.open(QIODevice::ReadOnly);
    const Kp::Result<Kp::NpyHeader> h = Kp::readNpyHeader(dev, QStringLiteral("fuzz.npy"));
    if (!h || h->dataBytes > kMaxDataBytes) {
        return;
    }
    std::vector<char> data(static_cast<std::size_t>(h->dataBytes));
    (void)Kp::readNpyData(dev, *h, data.data(), h->dataBytes);
}

void readFromFile(const QByteArray &bytes)
{
    // One file per process, rewritten for each input.
    static const QString path =
        QDir::temp().filePath(QStringLiteral("kpg-fuzz-npy-%1.npy").arg(QCoreApplication::applicationPid()));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(bytes) != bytes.size()) {
        return;
    }
    f.close();
    // Every dtype a buffer can have, so the vector-dtype shape rules run too.
    for (const Kp::DType dtype : {Kp::DType::Float32, Kp::DType::UInt8, Kp::DType::Float4, Kp::DType::BFloat16}) {
        const Kp::Result<QList<qint64>> shape = Kp::npyShapeFor(path, dtype);
        if (!shape) {
            continue;
        }
        qint64 elements = 1;
        for (const qint64 e : *shape) {
            elements *= e;
        }
        const qint64 bytesNeeded = elements * Kp::dtypeInfo(dtype).elementBytes();
        check(bytesNeeded > 0 && bytesNeeded <= bytes.size(), "npyShapeFor's shape fits the file");
        std::vector<char> data(static_cast<std::size_t>(bytesNeeded));
        check(bool(Kp::loadNpyInto(path, dtype, *shape, data.data(), bytesNeeded)),
              "loadNpyInto with the shape npyShapeFor gave");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const bool goodHeader = readFromMemory(bytes);
    readSequential(bytes);
    // The file functions read the header with the same code; a file costs a
    // write and an open per dtype, so only inputs with a good header get one.
    if (goodHeader) {
        readFromFile(bytes);
    }
    return 0;
}
