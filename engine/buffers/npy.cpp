#include "npy.h"

#include "buffers/bufferspec.h"
#include "core/safefile.h"

#include <QFile>
#include <QFileInfo>
#include <QIODevice>
#include <QSaveFile>
#include <QStringList>
#include <QtEndian>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

namespace Kp {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr int kMagicLen = 6;
constexpr int kArrayAlign = 64;       // numpy's ARRAY_ALIGN
constexpr int kGrowthAxisDigits = 21; // numpy's GROWTH_AXIS_MAX_DIGITS (spare room after the dict)
constexpr int kMaxDims = 32;          // numpy's NPY_MAXDIMS
// numpy itself refuses headers over 10000 bytes by default; 1 MiB leaves
// room for anything legitimate while a damaged length cannot make us
// allocate gigabytes for the header.
constexpr qint64 kMaxHeaderBytes = 1024 * 1024;
constexpr qint64 kChunkBytes = 1024 * 1024;
static_assert(kMaxNpyFileBytes >= kMaxBufferBytes + 1024 * 1024 + 16, "an .npy file holds a whole buffer");
constexpr qint64 kMaxReadBytes = 64ll * 1024 * 1024; // per QIODevice::read call
constexpr bool kHostBigEndian = Q_BYTE_ORDER == Q_BIG_ENDIAN;

Error npyError(const QString &message)
{
    return Error{QStringLiteral("buffers"), Error::Code::BadInput, {}, message};
}

// --- A small parser for the Python literal the header holds -----------------
// The header is repr() of a dict of str -> str | bool | tuple of int (or, for
// structured dtypes, a list of tuples). Python's own ast.literal_eval is what
// numpy uses; this accepts the same subset: strings, integers (with the 'L' of
// Python 2 files), True/False/None, tuples, lists and dicts.

// A dict entry is a struct of its own, declared before PyValue: a
// std::pair<QString, PyValue> inside PyValue names the pair while PyValue is
// incomplete, which clang with libstdc++'s C++20 vector rejects.
struct PyDictItem;

struct PyValue
{
    enum class Type { Str, Int, Bool, None, Tuple, List, Dict };
    Type type = Type::None;
    QString str;
    qint64 integer = 0;
    bool boolean = false;
    std::vector<PyValue> items;        // Tuple, List
    std::vector<PyDictItem> dictItems; // Dict (string keys only)

    const PyValue *find(const QString &key) const;
};

struct PyDictItem
{
    QString key;
    PyValue value;
};

const PyValue *PyValue::find(const QString &key) const
{
    for (const auto &[k, v] : dictItems) {
        if (k == key) {
            return &v;
        }
    }
    return nullptr;
}

class PyLiteralParser
{
public:
    explicit PyLiteralParser(const QString &text)
        : m_text(text)
    {
    }

    bool parse(PyValue &out)
    {
        if (!parseValue(out, 0)) {
            return false;
        }
        skipSpace();
        if (m_pos != m_text.size()) {
            return fail(QStringLiteral("unexpected '%1' after the dict").arg(m_text.mid(m_pos, 10)));
        }
        return true;
    }
    QString errorMessage() const { return m_error; }

private:
    static constexpr int kMaxDepth = 16;

    bool fail(const QString &message)
    {
        if (m_error.isEmpty()) {
            m_error = QStringLiteral("%1 at offset %2").arg(message).arg(m_pos);
        }
        return false;
    }
    void skipSpace()
    {
        while (m_pos < m_text.size() && m_text[m_pos].isSpace()) {
            ++m_pos;
        }
    }
    bool atEnd() const { return m_pos >= m_text.size(); }
    QChar peek() const { return atEnd() ? QChar() : m_text[m_pos]; }

    bool parseValue(PyValue &out, int depth)
    {
        if (depth > kMaxDepth) {
            return fail(QStringLiteral("nested too deeply"));
        }
        skipSpace();
        if (atEnd()) {
            return fail(QStringLiteral("unexpected end"));
        }
        const QChar c = peek();
        if (c == QLatin1Char('\'') || c == QLatin1Char('"')) {
            out.type = PyValue::Type::Str;
            return parseString(out.str);
        }
        if (c == QLatin1Char('{')) {
            return parseDict(out, depth);
        }
        if (c == QLatin1Char('(') || c == QLatin1Char('[')) {
            return parseSequence(out, depth);
        }
        if (c == QLatin1Char('-') || c == QLatin1Char('+') || c.isDigit()) {
            out.type = PyValue::Type::Int;
            return parseInt(out.integer);
        }
        if (c.isLetter() || c == QLatin1Char('_')) {
            const qsizetype start = m_pos;
            while (!atEnd() && (peek().isLetterOrNumber() || peek() == QLatin1Char('_'))) {
                ++m_pos;
            }
            const QString word = m_text.mid(start, m_pos - start);
            if (word == QLatin1String("True") || word == QLatin1String("False")) {
                out.type = PyValue::Type::Bool;
                out.boolean = word == QLatin1String("True");
                return true;
            }
            if (word == QLatin1String("None")) {
                out.type = PyValue::Type::None;
                return true;
            }
            m_pos = start;
            return fail(QStringLiteral("unexpected name '%1'").arg(word));
        }
        return fail(QStringLiteral("unexpected '%1'").arg(c));
    }

    bool parseString(QString &out)
    {
        const QChar quote = m_text[m_pos++];
        out.clear();
        while (!atEnd()) {
            QChar c = m_text[m_pos++];
            if (c == quote) {
                return true;
            }
            if (c == QLatin1Char('\\')) {
                if (atEnd()) {
                    break;
                }
                c = m_text[m_pos++];
            }
            out += c;
        }
        return fail(QStringLiteral("unterminated string"));
    }

    bool parseInt(qint64 &out)
    {
        const qsizetype start = m_pos;
        bool negative = false;
        if (peek() == QLatin1Char('-') || peek() == QLatin1Char('+')) {
            negative = peek() == QLatin1Char('-');
            ++m_pos;
        }
        if (!peek().isDigit()) {
            return fail(QStringLiteral("expected a digit"));
        }
        // Accumulate negatively so that the most negative value fits too.
        qint64 v = 0;
        bool overflow = false;
        while (!atEnd() && peek().isDigit()) {
            const int d = peek().digitValue();
            if (v < (std::numeric_limits<qint64>::min() + d) / 10) {
                overflow = true;
            } else {
                v = v * 10 - d;
            }
            ++m_pos;
        }
        if (peek() == QLatin1Char('L') || peek() == QLatin1Char('l')) {
            ++m_pos; // Python 2 long literal
        }
        if (!negative && v == std::numeric_limits<qint64>::min()) {
            overflow = true;
        }
        if (overflow) {
            const QString digits = m_text.mid(start, m_pos - start);
            m_pos = start;
            return fail(QStringLiteral("integer %1 does not fit in 64 bits").arg(digits));
        }
        out = negative ? v : -v;
        return true;
    }

    bool parseSequence(PyValue &out, int depth)
    {
        const QChar open = m_text[m_pos++];
        const QChar close = open == QLatin1Char('(') ? QLatin1Char(')') : QLatin1Char(']');
        out.type = open == QLatin1Char('(') ? PyValue::Type::Tuple : PyValue::Type::List;
        bool sawComma = false;
        for (;;) {
            skipSpace();
            if (atEnd()) {
                return fail(QStringLiteral("unterminated %1").arg(open == QLatin1Char('(') ? "tuple" : "list"));
            }
            if (peek() == close) {
                ++m_pos;
                break;
            }
            PyValue item;
            if (!parseValue(item, depth + 1)) {
                return false;
            }
            out.items.push_back(std::move(item));
            skipSpace();
            if (peek() == QLatin1Char(',')) {
                sawComma = true;
                ++m_pos;
            } else if (peek() != close) {
                return fail(QStringLiteral("expected ',' or '%1'").arg(close));
            }
        }
        // "(3)" is just 3 in Python, not a tuple; numpy never writes it, but
        // a hand-written header might, so treat it as the value it is.
        if (out.type == PyValue::Type::Tuple && out.items.size() == 1 && !sawComma) {
            PyValue inner = std::move(out.items.front());
            out = std::move(inner);
        }
        return true;
    }

    bool parseDict(PyValue &out, int depth)
    {
        ++m_pos; // '{'
        out.type = PyValue::Type::Dict;
        for (;;) {
            skipSpace();
            if (atEnd()) {
                return fail(QStringLiteral("unterminated dict"));
            }
            if (peek() == QLatin1Char('}')) {
                ++m_pos;
                return true;
            }
            if (peek() != QLatin1Char('\'') && peek() != QLatin1Char('"')) {
                return fail(QStringLiteral("expected a string key"));
            }
            QString key;
            if (!parseString(key)) {
                return false;
            }
            skipSpace();
            if (peek() != QLatin1Char(':')) {
                return fail(QStringLiteral("expected ':' after '%1'").arg(key));
            }
            ++m_pos;
            PyValue value;
            if (!parseValue(value, depth + 1)) {
                return false;
            }
            out.dictItems.push_back({key, std::move(value)});
            skipSpace();
            if (peek() == QLatin1Char(',')) {
                ++m_pos;
            } else if (peek() != QLatin1Char('}')) {
                return fail(QStringLiteral("expected ',' or '}'"));
            }
        }
    }

    const QString &m_text;
    qsizetype m_pos = 0;
    QString m_error;
};

// --- dtypes ----------------------------------------------------------------

struct DescrInfo
{
    DType dtype;
    bool bigEndian;
};

QString allowedDescrs()
{
    return QStringLiteral("i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 b1, with byte order '<', '>', '|' or '='");
}

Result<DescrInfo> parseDescr(const QString &descr, const QString &file)
{
    QString code = descr;
    bool big = kHostBigEndian;
    if (!code.isEmpty()) {
        const QChar order = code[0];
        if (order == QLatin1Char('<')) {
            big = false;
            code = code.mid(1);
        } else if (order == QLatin1Char('>')) {
            big = true;
            code = code.mid(1);
        } else if (order == QLatin1Char('|') || order == QLatin1Char('=')) {
            code = code.mid(1);
        }
    }
    if (code == QLatin1String("O")) {
        return npyError(QStringLiteral("%1: object arrays (|O) cannot be loaded: save with a numeric dtype").arg(file));
    }
    static const struct
    {
        const char *code;
        DType dtype;
    } kCodes[] = {
        {"i1", DType::Int8},   {"u1", DType::UInt8},   {"b1", DType::UInt8},   {"i2", DType::Int16},
        {"u2", DType::UInt16}, {"i4", DType::Int32},   {"u4", DType::UInt32},  {"i8", DType::Int64},
        {"u8", DType::UInt64}, {"f2", DType::Float16}, {"f4", DType::Float32}, {"f8", DType::Float64},
    };
    for (const auto &c : kCodes) {
        if (code == QLatin1String(c.code)) {
            // Byte order means nothing for single bytes ('|u1').
            const bool swap = dtypeInfo(c.dtype).componentBytes > 1 && big;
            return DescrInfo{c.dtype, swap};
        }
    }
    return npyError(QStringLiteral("%1: unsupported dtype '%2'; allowed: %3").arg(file, descr, allowedDescrs()));
}

// A structured dtype as numpy writes a CUDA vector: a list of 1 to 4 (name,
// format) tuples, every format the same scalar. Anything else (nested
// records, sub-arrays, mixed types, padding) has no buffer dtype.
Result<DescrInfo> parseStructuredDescr(const PyValue &list, const QString &file, QString *text, int *fields)
{
    const auto refuse = [&](const QString &why) {
        return npyError(QStringLiteral("%1: structured dtype %2; a buffer can hold a structured dtype only as a CUDA "
                                       "vector: 1 to 4 fields of one numeric type, e.g. [('x', '<f4'), ('y', '<f4')] "
                                       "for float2")
                            .arg(file, why));
    };
    if (list.items.empty() || list.items.size() > 4) {
        return refuse(QStringLiteral("with %1 fields").arg(list.items.size()));
    }
    std::optional<DescrInfo> first;
    QStringList parts;
    for (const PyValue &field : list.items) {
        if (field.type != PyValue::Type::Tuple || field.items.size() < 2 || field.items[0].type != PyValue::Type::Str) {
            return refuse(QStringLiteral("with a field that is not a (name, format) tuple"));
        }
        if (field.items.size() > 2) {
            return refuse(QStringLiteral("with field '%1' that is a sub-array").arg(field.items[0].str));
        }
        if (field.items[1].type != PyValue::Type::Str) {
            return refuse(QStringLiteral("with field '%1' that is itself a record or padding").arg(field.items[0].str));
        }
        Result<DescrInfo> di = parseDescr(field.items[1].str, file);
        if (!di) {
            return di.error();
        }
        if (first && (first->dtype != di->dtype || first->bigEndian != di->bigEndian)) {
            return refuse(QStringLiteral("mixing '%1' and '%2'")
                              .arg(parts.front().section(QLatin1Char('\''), 3, 3), field.items[1].str));
        }
        first = *di;
        parts << QStringLiteral("('%1', '%2')").arg(field.items[0].str, field.items[1].str);
    }
    *text = QStringLiteral("[%1]").arg(parts.join(QStringLiteral(", ")));
    *fields = int(list.items.size());
    return *first;
}

QString numpyName(DType scalar)
{
    return QStringLiteral("np.") + dtypeName(scalar);
}

// Python's repr of a shape tuple, for messages about the file: "(3,)", "(3, 4)".
QString pyShape(const QList<qint64> &shape)
{
    QStringList parts;
    for (const qint64 e : shape) {
        parts << QString::number(e);
    }
    if (shape.size() == 1) {
        return QStringLiteral("(%1,)").arg(parts.front());
    }
    return QStringLiteral("(%1)").arg(parts.join(QStringLiteral(", ")));
}

QString fileShapeText(const NpyHeader &h)
{
    return h.zeroDim ? QStringLiteral("() (a 0-d array, read as shape [1])") : pyShape(h.shape);
}

// Product of extents times itemBytes; false on overflow.
bool byteProduct(const QList<qint64> &shape, qint64 itemBytes, qint64 *out)
{
    qint64 n = itemBytes;
    for (const qint64 e : shape) {
        if (e < 0) {
            return false;
        }
        if (e != 0 && n > std::numeric_limits<qint64>::max() / e) {
            return false;
        }
        n *= e;
    }
    *out = n;
    return true;
}

QString bytesText(qint64 bytes)
{
    return QStringLiteral("%1 bytes").arg(bytes);
}

// Reads exactly n bytes (QIODevice::read may return less on pipes and sockets).
qint64 readFully(QIODevice &dev, char *dst, qint64 n)
{
    qint64 done = 0;
    while (done < n) {
        const qint64 got = dev.read(dst + done, std::min(n - done, kMaxReadBytes));
        if (got < 0) {
            return done > 0 ? done : -1;
        }
        if (got == 0) {
            if (dev.isSequential() && dev.waitForReadyRead(30000)) {
                continue;
            }
            break;
        }
        done += got;
    }
    return done;
}

void swapInPlace(char *p, qint64 count, int itemBytes)
{
    switch (itemBytes) {
    case 2:
        for (qint64 i = 0; i < count; ++i) {
            qToUnaligned(qbswap(qFromUnaligned<quint16>(p + 2 * i)), p + 2 * i);
        }
        break;
    case 4:
        for (qint64 i = 0; i < count; ++i) {
            qToUnaligned(qbswap(qFromUnaligned<quint32>(p + 4 * i)), p + 4 * i);
        }
        break;
    case 8:
        for (qint64 i = 0; i < count; ++i) {
            qToUnaligned(qbswap(qFromUnaligned<quint64>(p + 8 * i)), p + 8 * i);
        }
        break;
    default: break;
    }
}

// The dtype of a file fits a buffer component: exactly, or '<u2' bits for bfloat16.
bool dtypeFits(DType fileType, DType component)
{
    return fileType == component || (fileType == DType::UInt16 && component == DType::BFloat16);
}

QString bufferWord(const QString &bufferName)
{
    return bufferName.isEmpty() ? QStringLiteral("the buffer") : QStringLiteral("buffer '%1'").arg(bufferName);
}

QString dtypeWithComponents(DType dtype)
{
    const DTypeInfo &info = dtypeInfo(dtype);
    if (info.components == 1) {
        return dtypeName(dtype);
    }
    return QStringLiteral("%1 (%2 x %3)").arg(dtypeName(dtype)).arg(info.components).arg(dtypeName(info.component));
}

Status checkDtype(const NpyHeader &h, DType dtype, const QString &file, const QString &bufferName)
{
    const DType component = dtypeInfo(dtype).component;
    if (dtypeFits(h.dtype, component)) {
        return Unit{};
    }
    QString hint;
    if (component == DType::BFloat16) {
        hint = QStringLiteral("numpy has no bfloat16: save the raw bits as uint16 ('<u2')");
    } else {
        hint = QStringLiteral("convert with a.astype(%1)").arg(numpyName(component));
    }
    const QString held = h.descr.endsWith(QLatin1String("b1")) ? QStringLiteral("bool") : dtypeName(h.dtype);
    return npyError(QStringLiteral("%1 holds %2 ('%3'); %4 is %5: %6")
                        .arg(file, held, h.descr, bufferWord(bufferName), dtypeWithComponents(dtype), hint));
}

/** Opens path as a regular file (never a FIFO or a device: core/safefile) and reads its header. */
Result<NpyHeader> openHeader(std::unique_ptr<QFile> *f, const QString &path)
{
    Result<std::unique_ptr<QFile>> opened = openRegularFile(path, kMaxNpyFileBytes, QStringLiteral("an .npy file"));
    if (!opened) {
        return npyError(QStringLiteral("cannot open %1: %2").arg(path, opened.error().message));
    }
    *f = std::move(opened).value();
    return readNpyHeader(**f, QFileInfo(path).fileName());
}

} // namespace

qint64 NpyHeader::elementCount() const
{
    qint64 n = 0;
    return byteProduct(shape, 1, &n) ? n : -1;
}

QList<qint64> NpyHeader::componentShape() const
{
    QList<qint64> s = shape;
    if (fields > 1) {
        s << fields;
    }
    return s;
}

QString shapeToString(const QList<qint64> &shape)
{
    QStringList parts;
    for (const qint64 e : shape) {
        parts << QString::number(e);
    }
    return QStringLiteral("[%1]").arg(parts.join(QStringLiteral(", ")));
}

QString npyDescr(DType scalar)
{
    const char order = kHostBigEndian ? '>' : '<';
    switch (dtypeInfo(scalar).component) {
    case DType::Int8: return QStringLiteral("|i1");
    case DType::UInt8: return QStringLiteral("|u1");
    case DType::Int16: return QStringLiteral("%1i2").arg(order);
    case DType::UInt16: return QStringLiteral("%1u2").arg(order);
    case DType::Int32: return QStringLiteral("%1i4").arg(order);
    case DType::UInt32: return QStringLiteral("%1u4").arg(order);
    case DType::Int64: return QStringLiteral("%1i8").arg(order);
    case DType::UInt64: return QStringLiteral("%1u8").arg(order);
    case DType::Float16: return QStringLiteral("%1f2").arg(order);
    case DType::BFloat16: return QStringLiteral("%1u2").arg(order); // raw bits: numpy has no bfloat16
    case DType::Float32: return QStringLiteral("%1f4").arg(order);
    case DType::Float64: return QStringLiteral("%1f8").arg(order);
    default: return QString(); // components are always scalars
    }
}

Result<NpyHeader> readNpyHeader(QIODevice &dev, const QString &file)
{
    const qint64 start = dev.isSequential() ? 0 : dev.pos();
    char pre[8];
    const qint64 got = readFully(dev, pre, 8);
    if (got < 8 || std::memcmp(pre, kMagic, kMagicLen) != 0) {
        if (got >= kMagicLen && std::memcmp(pre, kMagic, kMagicLen) != 0) {
            return npyError(QStringLiteral("%1: not a .npy file (it does not start with \\x93NUMPY)").arg(file));
        }
        return npyError(QStringLiteral("%1: not a .npy file (only %2 bytes; a .npy file starts with \\x93NUMPY, "
                                       "two version bytes and the header length)")
                            .arg(file)
                            .arg(std::max<qint64>(got, 0)));
    }
    NpyHeader h;
    h.majorVersion = static_cast<unsigned char>(pre[6]);
    const int minor = static_cast<unsigned char>(pre[7]);
    // NumPy writes and reads only these three; a minor version other than 0
    // is a file it refuses, so accepting it would hide a damaged header.
    if (h.majorVersion < 1 || h.majorVersion > 3 || minor != 0) {
        return npyError(QStringLiteral("%1: .npy format version %2.%3 is not supported (only 1.0, 2.0 and 3.0)")
                            .arg(file)
                            .arg(h.majorVersion)
                            .arg(minor));
    }
    const int lenBytes = h.majorVersion == 1 ? 2 : 4;
    char lenField[4];
    if (readFully(dev, lenField, lenBytes) != lenBytes) {
        return npyError(QStringLiteral("%1: truncated: the file ends inside the %2-byte header length field")
                            .arg(file)
                            .arg(lenBytes));
    }
    const qint64 headerLen = lenBytes == 2 ? qFromLittleEndian<quint16>(lenField)
                                           : static_cast<qint64>(qFromLittleEndian<quint32>(lenField));
    if (headerLen > kMaxHeaderBytes) {
        return npyError(QStringLiteral("%1: the header length field says %2 bytes, more than the %3 any array needs: "
                                       "the file is damaged or not a .npy file")
                            .arg(file)
                            .arg(headerLen)
                            .arg(bytesText(kMaxHeaderBytes)));
    }
    if (!dev.isSequential()) {
        const qint64 left = dev.size() - dev.pos();
        if (left < headerLen) {
            return npyError(QStringLiteral("%1: the header length field says %2 bytes but only %3 follow "
                                           "(the file is truncated or not a .npy file)")
                                .arg(file)
                                .arg(headerLen)
                                .arg(left));
        }
    }
    QByteArray raw(headerLen, Qt::Uninitialized);
    const qint64 gotHeader = readFully(dev, raw.data(), headerLen);
    if (gotHeader != headerLen) {
        return npyError(QStringLiteral("%1: truncated header: %2 of its %3 bytes are there")
                            .arg(file)
                            .arg(std::max<qint64>(gotHeader, 0))
                            .arg(headerLen));
    }
    h.dataOffset = start + 8 + lenBytes + headerLen;
    // Versions 1.0 and 2.0 are latin1; 3.0 is utf8 (for field names in structured dtypes).
    const QString text = h.majorVersion == 3 ? QString::fromUtf8(raw) : QString::fromLatin1(raw);

    PyValue dict;
    PyLiteralParser parser(text);
    if (!parser.parse(dict)) {
        return npyError(QStringLiteral("%1: the header is not a valid Python literal (%2): %3")
                            .arg(file, parser.errorMessage(), text.trimmed().left(200)));
    }
    if (dict.type != PyValue::Type::Dict) {
        return npyError(QStringLiteral("%1: the header is not a Python dict: %2").arg(file, text.trimmed().left(200)));
    }
    QStringList missing;
    for (const char *key : {"descr", "fortran_order", "shape"}) {
        if (!dict.find(QLatin1String(key))) {
            missing << QStringLiteral("'%1'").arg(QLatin1String(key));
        }
    }
    if (!missing.isEmpty()) {
        QStringList present;
        for (const auto &[k, _] : dict.dictItems) {
            present << QStringLiteral("'%1'").arg(k);
        }
        return npyError(QStringLiteral("%1: the header lacks %2 (it has %3; a .npy header needs 'descr', "
                                       "'fortran_order' and 'shape')")
                            .arg(file, missing.join(QStringLiteral(", ")),
                                 present.isEmpty() ? QStringLiteral("no keys") : present.join(QStringLiteral(", "))));
    }

    const PyValue &descr = *dict.find(QStringLiteral("descr"));
    if (descr.type == PyValue::Type::List) {
        Result<DescrInfo> di = parseStructuredDescr(descr, file, &h.descr, &h.fields);
        if (!di) {
            return di.error();
        }
        h.dtype = di->dtype;
        h.bigEndian = di->bigEndian;
    } else if (descr.type != PyValue::Type::Str) {
        return npyError(QStringLiteral("%1: header 'descr' is not a string").arg(file));
    } else {
        h.descr = descr.str;
        Result<DescrInfo> di = parseDescr(h.descr, file);
        if (!di) {
            return di.error();
        }
        h.dtype = di->dtype;
        h.bigEndian = di->bigEndian;
    }

    const PyValue &fortran = *dict.find(QStringLiteral("fortran_order"));
    if (fortran.type != PyValue::Type::Bool) {
        return npyError(QStringLiteral("%1: header 'fortran_order' is not True or False").arg(file));
    }
    h.fortranOrder = fortran.boolean;

    const PyValue &shape = *dict.find(QStringLiteral("shape"));
    // NumPy's reader insists on a tuple ("[4]" or "(3)", which is 3, are refused there), so
    // a file accepted here also loads in NumPy.
    if (shape.type == PyValue::Type::Tuple) {
        for (const PyValue &e : shape.items) {
            if (e.type != PyValue::Type::Int) {
                return npyError(QStringLiteral("%1: header 'shape' must be a tuple of integers").arg(file));
            }
            h.shape << e.integer;
        }
    } else {
        return npyError(QStringLiteral("%1: header 'shape' must be a tuple of integers such as (4,), got %2")
                            .arg(file, shape.type == PyValue::Type::List  ? QStringLiteral("a list")
                                       : shape.type == PyValue::Type::Int ? QStringLiteral("an integer")
                                                                          : QStringLiteral("another value")));
    }
    if (h.shape.size() > kMaxDims) {
        return npyError(QStringLiteral("%1: the shape has %2 dimensions; numpy allows at most %3")
                            .arg(file)
                            .arg(h.shape.size())
                            .arg(kMaxDims));
    }
    for (const qint64 e : h.shape) {
        if (e < 0) {
            return npyError(QStringLiteral("%1: shape %2 has a negative extent").arg(file, pyShape(h.shape)));
        }
    }
    if (h.shape.isEmpty()) {
        // A 0-d array is a single value; a buffer of one element holds it.
        h.zeroDim = true;
        h.shape = {1};
    }
    const int item = dtypeInfo(h.dtype).componentBytes * std::max(1, h.fields);
    if (!byteProduct(h.shape, item, &h.dataBytes)) {
        return npyError(QStringLiteral("%1: shape %2 of '%3' is too large: its byte size overflows 64 bits")
                            .arg(file, pyShape(h.shape), h.descr));
    }
    if (h.dataBytes > kMaxBufferBytes) {
        return npyError(QStringLiteral("%1: shape %2 of '%3' is %4, more than the %5 a buffer may hold")
                            .arg(file, pyShape(h.shape), h.descr, bytesText(h.dataBytes), bytesText(kMaxBufferBytes)));
    }
    if (!dev.isSequential()) {
        const qint64 have = std::max<qint64>(0, dev.size() - h.dataOffset);
        if (have < h.dataBytes) {
            return npyError(QStringLiteral("%1 is truncated: the data needs %2 after the header, the file has %3 "
                                           "(%4 missing)")
                                .arg(file, bytesText(h.dataBytes), bytesText(have), bytesText(h.dataBytes - have)));
        }
    }
    return h;
}

Status readNpyData(QIODevice &dev, const NpyHeader &h, void *dst, qint64 dstBytes, const QString &fileName)
{
    const QString file = fileName.isEmpty() ? QStringLiteral("the .npy file") : fileName;
    if (dstBytes != h.dataBytes) {
        return npyError(QStringLiteral("%1: the data is %2 but the destination holds %3")
                            .arg(file, bytesText(h.dataBytes), bytesText(dstBytes)));
    }
    if (!dev.isSequential() && dev.pos() != h.dataOffset && !dev.seek(h.dataOffset)) {
        return npyError(QStringLiteral("%1: cannot seek to the data: %2").arg(file, dev.errorString()));
    }
    // A record of a structured dtype moves as one item; its fields swap one by one.
    const int scalarBytes = dtypeInfo(h.dtype).componentBytes;
    const int perItem = std::max(1, h.fields);
    const int item = scalarBytes * perItem;
    const bool swap = scalarBytes > 1 && h.bigEndian != kHostBigEndian;
    char *out = static_cast<char *>(dst);
    const auto truncated = [&](qint64 done) {
        return npyError(QStringLiteral("%1 is truncated: the data needs %2, only %3 could be read (%4 missing)")
                            .arg(file, bytesText(h.dataBytes), bytesText(done), bytesText(h.dataBytes - done)));
    };

    qsizetype rank = 0; // dimensions that are not 1 decide whether Fortran order differs from C order
    for (const qint64 e : h.shape) {
        rank += e != 1 ? 1 : 0;
    }
    if (!h.fortranOrder || rank <= 1) {
        const qint64 got = readFully(dev, out, h.dataBytes);
        if (got != h.dataBytes) {
            return truncated(std::max<qint64>(got, 0));
        }
        if (swap) {
            swapInPlace(out, h.dataBytes / scalarBytes, scalarBytes);
        }
        return Unit{};
    }

    // Fortran order: the first index varies fastest in the file. Each element
    // read is scattered straight to its C-order place in dst, through one
    // small chunk buffer, so no second full-size copy is needed (dst is
    // usually shared memory the caller owns) and any rank works.
    const qsizetype nd = h.shape.size();
    std::vector<qint64> cStride(static_cast<std::size_t>(nd));
    cStride[nd - 1] = 1;
    for (qsizetype d = nd - 2; d >= 0; --d) {
        cStride[d] = cStride[d + 1] * h.shape[d + 1];
    }
    std::vector<qint64> index(static_cast<std::size_t>(nd), 0);
    qint64 offset = 0; // C-order element index of index[]
    const qint64 chunkItems = kChunkBytes / item;
    std::vector<char> chunk(static_cast<std::size_t>(chunkItems * item));
    const qint64 total = h.dataBytes / item;
    qint64 done = 0;
    while (done < total) {
        const qint64 n = std::min(chunkItems, total - done);
        const qint64 got = readFully(dev, chunk.data(), n * item);
        if (got != n * item) {
            return truncated(done * item + std::max<qint64>(got, 0));
        }
        if (swap) {
            swapInPlace(chunk.data(), n * perItem, scalarBytes);
        }
        for (qint64 i = 0; i < n; ++i) {
            std::memcpy(out + offset * item, chunk.data() + i * item, static_cast<std::size_t>(item));
            for (qsizetype d = 0; d < nd; ++d) {
                offset += cStride[d];
                if (++index[d] < h.shape[d]) {
                    break;
                }
                offset -= cStride[d] * h.shape[d];
                index[d] = 0;
            }
        }
        done += n;
    }
    return Unit{};
}

QByteArray npyHeaderBytes(DType dtype, const QList<qint64> &shape, NpyVectorLayout layout)
{
    const DTypeInfo &info = dtypeInfo(dtype);
    QList<qint64> fileShape = shape;
    QByteArray descr = "'" + npyDescr(info.component).toLatin1() + "'";
    if (info.components > 1 && layout == NpyVectorLayout::Structured) {
        // repr() of the dtype's descr, as numpy.save writes a record array:
        // CUDA vectors have no padding (sizeof == components x component).
        QList<QByteArray> fields;
        for (int c = 0; c < info.components; ++c) {
            fields << "('" + QByteArray(1, "xyzw"[c]) + "', " + descr + ")";
        }
        descr = "[" + fields.join(", ") + "]";
    } else if (info.components > 1) {
        fileShape << info.components;
    }
    // Exactly numpy's _write_array_header: sorted keys, repr() values, a
    // trailing ", " and spare spaces after the dict for growing axis 0.
    QByteArray dict =
        "{'descr': " + descr + ", 'fortran_order': False, 'shape': " + pyShape(fileShape).toLatin1() + ", }";
    if (!fileShape.isEmpty()) {
        const int digits = static_cast<int>(QByteArray::number(fileShape.front()).size());
        dict += QByteArray(std::max(0, kGrowthAxisDigits - digits), ' ');
    }
    const qint64 hlen = dict.size() + 1; // + '\n'
    int lenBytes = 2;
    qint64 padlen = kArrayAlign - ((kMagicLen + 2 + lenBytes + hlen) % kArrayAlign);
    if (hlen + padlen > 0xffff) {
        lenBytes = 4; // version 2.0: a 4-byte header length
        padlen = kArrayAlign - ((kMagicLen + 2 + lenBytes + hlen) % kArrayAlign);
    }
    QByteArray out(kMagic, kMagicLen);
    out += static_cast<char>(lenBytes == 2 ? 1 : 2);
    out += '\0';
    char lenField[4];
    if (lenBytes == 2) {
        qToLittleEndian<quint16>(static_cast<quint16>(hlen + padlen), lenField);
    } else {
        qToLittleEndian<quint32>(static_cast<quint32>(hlen + padlen), lenField);
    }
    out.append(lenField, lenBytes);
    out += dict;
    out += QByteArray(padlen, ' ');
    out += '\n';
    return out;
}

Status writeNpy(const QString &path, DType dtype, const QList<qint64> &shape, const void *data, NpyVectorLayout layout)
{
    qint64 bytes = 0;
    if (!byteProduct(shape, dtypeInfo(dtype).elementBytes(), &bytes) || bytes > kMaxBufferBytes) {
        return npyError(QStringLiteral("cannot write %1: shape %2 of %3 is negative or too large")
                            .arg(path, shapeToString(shape), dtypeName(dtype)));
    }
    if (bytes > 0 && !data) {
        return npyError(QStringLiteral("cannot write %1: no data").arg(path));
    }
    const QByteArray header = npyHeaderBytes(dtype, shape, layout);
    // Through core/safefile: atomic for a regular file, direct into /dev/null or a FIFO.
    if (Status s = writeOutput(path, {QByteArrayView(header), QByteArrayView(static_cast<const char *>(data), bytes)},
                               QStringLiteral("the .npy file"));
        !s) {
        return npyError(s.error().message);
    }
    return Unit{};
}

Result<QList<qint64>> npyShapeFor(const QString &path, DType dtype, const QString &bufferName)
{
    std::unique_ptr<QFile> f;
    Result<NpyHeader> h = openHeader(&f, path);
    if (!h) {
        return h.error();
    }
    const QString file = QFileInfo(path).fileName();
    if (Status s = checkDtype(*h, dtype, file, bufferName); !s) {
        return s.error();
    }
    QList<qint64> shape = h->componentShape();
    const int components = dtypeInfo(dtype).components;
    if (components > 1) {
        if ((h->zeroDim && h->fields == 0) || shape.size() < 2 || shape.back() != components) {
            return npyError(QStringLiteral("%1 has shape %2; %3 is %4 and needs a last dimension of %5 components, "
                                           "e.g. (n, %5)")
                                .arg(file, fileShapeText(*h), bufferWord(bufferName), dtypeName(dtype))
                                .arg(components));
        }
        shape.removeLast();
    }
    if (shape.size() > 3) {
        return npyError(
            QStringLiteral("%1 has shape %2: a %3 buffer has 1 to 3 dimensions%4")
                .arg(file, pyShape(h->shape), dtypeName(dtype),
                     components > 1 ? QStringLiteral(" plus the trailing %1 components").arg(components) : QString()));
    }
    if (std::find(shape.cbegin(), shape.cend(), 0) != shape.cend()) {
        return npyError(QStringLiteral("%1 holds an empty array (shape %2); a buffer needs at least one element")
                            .arg(file, pyShape(h->shape)));
    }
    return shape;
}

Status loadNpyInto(const QString &path, DType dtype, const QList<qint64> &shape, void *dst, qint64 dstBytes,
                   const QString &bufferName)
{
    std::unique_ptr<QFile> f;
    Result<NpyHeader> h = openHeader(&f, path);
    if (!h) {
        return h.error();
    }
    const QString file = QFileInfo(path).fileName();
    if (Status s = checkDtype(*h, dtype, file, bufferName); !s) {
        return s;
    }
    const int components = dtypeInfo(dtype).components;
    QList<qint64> wanted = shape;
    if (components > 1) {
        wanted << components;
    }
    const bool sameShape = h->componentShape() == wanted ||
                           (h->zeroDim && shape == QList<qint64>{1} && (components == 1 || h->fields == components));
    if (!sameShape) {
        if (components > 1) {
            return npyError(QStringLiteral("%1 has shape %2; %3 is %4 of shape %5 and needs %6 "
                                           "(a trailing dimension of %7 components)")
                                .arg(file, fileShapeText(*h), bufferWord(bufferName), dtypeName(dtype),
                                     shapeToString(shape), pyShape(wanted))
                                .arg(components));
        }
        return npyError(QStringLiteral("%1 has shape %2; %3 has shape %4: reshape the array, or set the buffer's "
                                       "shape to the file's (an empty shape takes it from the file)")
                            .arg(file, fileShapeText(*h), bufferWord(bufferName), shapeToString(shape)));
    }
    return readNpyData(*f, *h, dst, dstBytes, file);
}

} // namespace Kp
