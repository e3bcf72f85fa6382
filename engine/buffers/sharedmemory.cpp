#include "sharedmemory.h"

#include <QCoreApplication>
#include <QRegularExpression>

#include <atomic>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace Kp {

namespace {
Error shmError(const QString &message)
{
    return Error{QStringLiteral("shared memory"), Error::Code::Internal, {}, message};
}

qint64 pageRound(qint64 bytes)
{
    const qint64 page = ::sysconf(_SC_PAGESIZE);
    return (qMax<qint64>(bytes, 1) + page - 1) / page * page;
}
} // namespace

SharedMemory::~SharedMemory()
{
    release();
}

SharedMemory::SharedMemory(SharedMemory &&other) noexcept
    : m_data(std::exchange(other.m_data, nullptr))
    , m_size(std::exchange(other.m_size, 0))
    , m_mapped(std::exchange(other.m_mapped, 0))
    , m_fd(std::exchange(other.m_fd, -1))
    , m_id(std::exchange(other.m_id, 0))
{
}

SharedMemory &SharedMemory::operator=(SharedMemory &&other) noexcept
{
    if (this != &other) {
        release();
        m_data = std::exchange(other.m_data, nullptr);
        m_size = std::exchange(other.m_size, 0);
        m_mapped = std::exchange(other.m_mapped, 0);
        m_fd = std::exchange(other.m_fd, -1);
        m_id = std::exchange(other.m_id, 0);
    }
    return *this;
}

void SharedMemory::release()
{
    if (m_data) {
        ::munmap(m_data, static_cast<size_t>(m_mapped));
        m_data = nullptr;
    }
    if (m_fd >= 0) {
        ::close(m_fd);
        m_fd = -1;
    }
    m_size = m_mapped = 0;
}

Result<SharedMemory> SharedMemory::create(qint64 bytes, const QString &label)
{
    if (bytes < 0) {
        return shmError(QStringLiteral("cannot create %1 bytes of shared memory").arg(bytes));
    }
    const QByteArray name = (QStringLiteral("kpg-") + label).toUtf8().left(200);
    // Close-on-exec: kpg-worker opens it through /proc/PID/fd/N by path, so
    // no child needs to inherit the descriptor itself.
    const int fd = ::memfd_create(name.constData(), MFD_CLOEXEC);
    if (fd < 0) {
        return shmError(QStringLiteral("memfd_create failed: %1").arg(QString::fromLocal8Bit(std::strerror(errno))));
    }
    const qint64 mapped = pageRound(bytes);
    if (::ftruncate(fd, mapped) != 0) {
        const int e = errno;
        ::close(fd);
        return shmError(QStringLiteral("cannot size shared memory to %1 bytes: %2")
                            .arg(mapped)
                            .arg(QString::fromLocal8Bit(std::strerror(e))));
    }
    void *p = ::mmap(nullptr, static_cast<size_t>(mapped), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        const int e = errno;
        ::close(fd);
        return shmError(QStringLiteral("cannot map %1 bytes of shared memory: %2")
                            .arg(mapped)
                            .arg(QString::fromLocal8Bit(std::strerror(e))));
    }
    SharedMemory m;
    m.m_data = p;
    m.m_size = bytes;
    m.m_mapped = mapped;
    m.m_fd = fd;
    static std::atomic<quint64> nextId{1};
    m.m_id = nextId++;
    return m;
}

Result<SharedMemory> SharedMemory::open(const QString &path, qint64 bytes)
{
    // This process's own memory (a worker's copy of a remote or sandboxed
    // engine's buffer): a duplicate of the descriptor, not a walk through
    // /proc, which a sandboxed process may not take.
    int fd = -1;
    static const QRegularExpression own(QStringLiteral("^/proc/(self|[0-9]+)/fd/([0-9]+)$"));
    if (const QRegularExpressionMatch m = own.match(path);
        m.hasMatch() && (m.captured(1) == QLatin1String("self") || m.captured(1).toLongLong() == ::getpid())) {
        const int mine = m.captured(2).toInt();
        fd = mine > 2 ? ::fcntl(mine, F_DUPFD_CLOEXEC, 3) : -1;
    } else {
        fd = ::open(path.toLocal8Bit().constData(), O_RDWR | O_CLOEXEC);
    }
    if (fd < 0) {
        return shmError(
            QStringLiteral("cannot open shared memory %1: %2").arg(path, QString::fromLocal8Bit(std::strerror(errno))));
    }
    const qint64 mapped = pageRound(bytes);
    const off_t have = ::lseek(fd, 0, SEEK_END);
    if (have < mapped) {
        ::close(fd);
        return shmError(
            QStringLiteral("shared memory %1 holds %2 bytes, %3 were expected").arg(path).arg(have).arg(mapped));
    }
    void *p = ::mmap(nullptr, static_cast<size_t>(mapped), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        const int e = errno;
        ::close(fd);
        return shmError(
            QStringLiteral("cannot map shared memory %1: %2").arg(path, QString::fromLocal8Bit(std::strerror(e))));
    }
    SharedMemory m;
    m.m_data = p;
    m.m_size = bytes;
    m.m_mapped = mapped;
    m.m_fd = fd;
    return m;
}

QString SharedMemory::path() const
{
    if (m_fd < 0) {
        return {};
    }
    return QStringLiteral("/proc/%1/fd/%2").arg(::getpid()).arg(m_fd);
}

} // namespace Kp
