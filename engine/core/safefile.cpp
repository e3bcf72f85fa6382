#include "safefile.h"

#include "core/format.h"

#include <QSaveFile>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <linux/magic.h>
#include <unistd.h>
#include <utility>

namespace Kp {

namespace {

Error fileError(const QString &message)
{
    return Error{QStringLiteral("file"), Error::Code::BadInput, {}, message};
}

QString errnoText(int err)
{
    return QString::fromLocal8Bit(std::strerror(err));
}

/** strerror's text starting in lower case, as the rest of a write error reads: "no space left on device". */
QString errnoTextLower(int err)
{
    QString s = errnoText(err);
    if (!s.isEmpty()) {
        s[0] = s[0].toLower();
    }
    return s;
}

QString kindOf(mode_t mode)
{
    if (S_ISDIR(mode)) {
        return QStringLiteral("a folder");
    }
    if (S_ISCHR(mode)) {
        return QStringLiteral("a character device");
    }
    if (S_ISBLK(mode)) {
        return QStringLiteral("a block device");
    }
    if (S_ISFIFO(mode)) {
        return QStringLiteral("a FIFO (named pipe)");
    }
    if (S_ISSOCK(mode)) {
        return QStringLiteral("a socket");
    }
    return QStringLiteral("a special file");
}

QString notRegular(mode_t mode)
{
    return QStringLiteral("it is %1, not a regular file").arg(kindOf(mode));
}

QString tooLarge(qint64 size, qint64 maxBytes, const QString &what)
{
    return QStringLiteral("it is %1 (%2 bytes); %3 may be at most %4 (%5 bytes)")
        .arg(formatBytes(size))
        .arg(size)
        .arg(what, formatBytes(maxBytes))
        .arg(maxBytes);
}

/** Qt resources (":/presets/...") live in the program's memory: no FIFO or device can hide there. */
bool isResource(const QString &path)
{
    return path.startsWith(QLatin1Char(':')) || path.startsWith(QLatin1String("qrc:"));
}

/** Writes all of data to fd, retrying short writes and EINTR; false with errno set on failure. */
bool writeAllFd(int fd, const char *data, qint64 size)
{
    // Chunks well under SSIZE_MAX and the kernel's 2 GiB per-call limit.
    constexpr qint64 kChunk = 1ll << 30;
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size_t(std::min(size, kChunk)));
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return false;
        }
        if (n == 0) {
            errno = EIO;
            return false;
        }
        data += n;
        size -= n;
    }
    return true;
}

} // namespace

Result<std::unique_ptr<QFile>> openRegularFile(const QString &path, qint64 maxBytes, const QString &what)
{
    if (isResource(path)) {
        auto f = std::make_unique<QFile>(path);
        if (!f->open(QIODevice::ReadOnly)) {
            return fileError(f->errorString());
        }
        if (f->size() > maxBytes) {
            return fileError(tooLarge(f->size(), maxBytes, what));
        }
        return f;
    }
    const QByteArray native = QFile::encodeName(path);
    // stat() before open(): opening a device can have effects of its own
    // (a tape rewinds), and opening a FIFO for reading blocks for a writer.
    struct stat st;
    if (native.isEmpty() || ::stat(native.constData(), &st) != 0) {
        return fileError(errnoText(native.isEmpty() ? ENOENT : errno));
    }
    if (!S_ISREG(st.st_mode)) {
        return fileError(notRegular(st.st_mode));
    }
    if (st.st_size > maxBytes) {
        return fileError(tooLarge(st.st_size, maxBytes, what));
    }
    // O_NONBLOCK: should a FIFO be swapped in after the stat(), open() still
    // returns at once and fstat() below refuses it.
    const int fd = ::open(native.constData(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        return fileError(errnoText(errno));
    }
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        return fileError(errnoText(err));
    }
    if (!S_ISREG(st.st_mode) || st.st_size > maxBytes) {
        const QString reason = !S_ISREG(st.st_mode) ? notRegular(st.st_mode) : tooLarge(st.st_size, maxBytes, what);
        ::close(fd);
        return fileError(reason);
    }
    // /proc and /sys files look regular (size 0) but are the kernel's view of
    // this process and machine: /proc/self/environ is the user's environment.
    // A project, source or input naming one (or a link to one) is refused.
    struct statfs fs;
    if (::fstatfs(fd, &fs) == 0 && (fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC)) {
        ::close(fd);
        return fileError(QStringLiteral("it is a file of the kernel's /proc or /sys, not a file of yours"));
    }
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags != -1) {
        ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    }
    auto f = std::make_unique<QFile>();
    if (!f->open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle)) {
        ::close(fd);
        return fileError(f->errorString());
    }
    return f;
}

Result<QByteArray> readRegularFile(const QString &path, qint64 maxBytes, const QString &what)
{
    Result<std::unique_ptr<QFile>> f = openRegularFile(path, maxBytes, what);
    if (!f) {
        Error e = f.error();
        e.message = QStringLiteral("cannot read %1: %2").arg(path, e.message);
        return e;
    }
    QFile &file = **f;
    // One byte more than allowed tells a file that grew after the check.
    QByteArray bytes = file.read(maxBytes + 1);
    if (file.error() != QFileDevice::NoError) {
        return fileError(QStringLiteral("cannot read %1: %2").arg(path, file.errorString()));
    }
    if (bytes.size() > maxBytes) {
        return fileError(QStringLiteral("cannot read %1: %2").arg(path, tooLarge(file.size(), maxBytes, what)));
    }
    return bytes;
}

OutputFile::OutputFile(const QString &path)
    : m_path(path)
{
}

OutputFile::~OutputFile()
{
    if (m_save) {
        m_save->cancelWriting();
    }
    if (m_fd >= 0) {
        ::close(m_fd);
    }
}

Error OutputFile::fail(const QString &reason) const
{
    return fileError(QStringLiteral("cannot write %1: %2").arg(m_path, reason));
}

Status OutputFile::open()
{
    if (m_path.isEmpty()) {
        return fail(QStringLiteral("no file name given"));
    }
    const QByteArray native = QFile::encodeName(m_path);
    struct stat st;
    if (::stat(native.constData(), &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            return fail(QStringLiteral("it is a folder"));
        }
        // /dev/null, /dev/stdout, a FIFO, a terminal: write into it as it is.
        // QSaveFile would write a temporary file and rename it over the node.
        m_fd = ::open(native.constData(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (m_fd < 0) {
            return fail(errnoTextLower(errno));
        }
        return Unit{};
    }
    m_save = std::make_unique<QSaveFile>(m_path);
    if (!m_save->open(QIODevice::WriteOnly)) {
        const Error e = fail(m_save->errorString());
        m_save.reset();
        return e;
    }
    return Unit{};
}

Status OutputFile::write(QByteArrayView bytes)
{
    if (m_fd >= 0) {
        if (!writeAllFd(m_fd, bytes.data(), bytes.size())) {
            return fail(errnoTextLower(errno));
        }
        return Unit{};
    }
    if (!m_save) {
        return fail(QStringLiteral("the file is not open"));
    }
    if (m_save->write(bytes.data(), bytes.size()) != bytes.size()) {
        return fail(m_save->errorString());
    }
    return Unit{};
}

Status OutputFile::commit()
{
    if (m_fd >= 0) {
        const int fd = std::exchange(m_fd, -1);
        // EINTR from close() on Linux still closes the descriptor.
        if (::close(fd) != 0 && errno != EINTR) {
            return fail(errnoTextLower(errno));
        }
        return Unit{};
    }
    if (!m_save) {
        return fail(QStringLiteral("the file is not open"));
    }
    const std::unique_ptr<QSaveFile> f = std::move(m_save);
    if (!f->commit()) {
        return fail(f->errorString());
    }
    return Unit{};
}

Status writeOutput(const QString &path, const QList<QByteArrayView> &parts, const QString &what)
{
    if (path.isEmpty()) {
        return fileError(QStringLiteral("no file name given for %1").arg(what));
    }
    OutputFile f(path);
    if (Status s = f.open(); !s) {
        return s;
    }
    for (const QByteArrayView &p : parts) {
        if (Status s = f.write(p); !s) {
            return s;
        }
    }
    return f.commit();
}

Status writeOutput(const QString &path, const QByteArray &bytes, const QString &what)
{
    return writeOutput(path, QList<QByteArrayView>{QByteArrayView(bytes)}, what);
}

Status writeStandardOutput(const QByteArray &bytes)
{
    if (!writeAllFd(STDOUT_FILENO, bytes.constData(), bytes.size())) {
        return fileError(QStringLiteral("cannot write to standard output: %1").arg(errnoTextLower(errno)));
    }
    return Unit{};
}

} // namespace Kp
