#include "sandbox.h"

#include <QDir>
#include <QFile>

#include <atomic>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace Kp::Sandbox {

namespace {

// Rights of the first ABI; later ABIs add REFER (2) and TRUNCATE (3), which
// are handled when the kernel knows them so that they are denied too.
constexpr quint64 kAbi1All = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
                             LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                             LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                             LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
                             LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
constexpr quint64 kRefer = 1ull << 13;    // LANDLOCK_ACCESS_FS_REFER (ABI 2)
constexpr quint64 kTruncate = 1ull << 14; // LANDLOCK_ACCESS_FS_TRUNCATE (ABI 3)

// Rights that only make sense on a folder; Landlock refuses them on a file (EINVAL).
constexpr quint64 kDirOnly = LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                             LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                             LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
                             LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                             LANDLOCK_ACCESS_FS_MAKE_SYM | kRefer;

Error sandboxError(const char *call, int err)
{
    return Error{QStringLiteral("sandbox"), Error::Code::Internal, QString::fromLatin1(call),
                 QStringLiteral("Landlock: %1 failed: %2")
                     .arg(QString::fromLatin1(call), QString::fromLocal8Bit(std::strerror(err)))};
}

} // namespace

int landlockAbi()
{
    static const int abi = [] {
        const long v = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
        return v < 0 ? 0 : int(v);
    }();
    return abi;
}

Availability availability()
{
    if (qEnvironmentVariable("KPG_COMPILER_SANDBOX") == QLatin1String("0")) {
        return {false, QStringLiteral("off (KPG_COMPILER_SANDBOX=0)")};
    }
    if (const int abi = landlockAbi(); abi > 0) {
        return {true, QStringLiteral("sandboxed with Landlock (ABI %1)").arg(abi)};
    }
    return {false, QStringLiteral("not available: this kernel has no Landlock (Linux 5.13 or later, with Landlock "
                                  "among the enabled security modules)")};
}

Status restrictFileSystem(const FsPolicy &policy)
{
    const int abi = landlockAbi();
    if (abi <= 0) {
        return Error{QStringLiteral("sandbox"),
                     Error::Code::Internal,
                     {},
                     QStringLiteral("Landlock is not available on this kernel")};
    }
    quint64 handled = kAbi1All;
    if (abi >= 2) {
        handled |= kRefer;
    }
    if (abi >= 3) {
        handled |= kTruncate;
    }
    landlock_ruleset_attr attr{};
    attr.handled_access_fs = handled;
    const int ruleset = int(syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0));
    if (ruleset < 0) {
        return sandboxError("landlock_create_ruleset", errno);
    }
    struct Closer
    {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{ruleset};

    const quint64 read = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
    auto add = [&](const QString &path, quint64 rights) -> Status {
        const int fd = ::open(QFile::encodeName(path).constData(), O_PATH | O_CLOEXEC);
        if (fd < 0) {
            return Unit{}; // a folder this machine lacks
        }
        struct stat st
        {
        };
        if (::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) {
            rights &= ~kDirOnly;
        }
        landlock_path_beneath_attr rule{};
        rule.allowed_access = rights & handled;
        rule.parent_fd = fd;
        const long r = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
        const int err = errno;
        ::close(fd);
        if (r < 0) {
            return sandboxError("landlock_add_rule", err);
        }
        return Unit{};
    };
    const auto rules = {std::make_pair(&policy.readDirs, read),
                        std::make_pair(&policy.execDirs, read | LANDLOCK_ACCESS_FS_EXECUTE),
                        std::make_pair(&policy.readFiles, quint64(LANDLOCK_ACCESS_FS_READ_FILE)),
                        std::make_pair(&policy.writeDirs, handled & ~LANDLOCK_ACCESS_FS_EXECUTE),
                        std::make_pair(&policy.readWriteFiles, quint64(LANDLOCK_ACCESS_FS_READ_FILE |
                                                                       LANDLOCK_ACCESS_FS_WRITE_FILE | kTruncate))};
    for (const auto &[paths, rights] : rules) {
        for (const QString &p : *paths) {
            if (const Status s = add(p, rights); !s) {
                return s;
            }
        }
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        return sandboxError("prctl(PR_SET_NO_NEW_PRIVS)", errno);
    }
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
        return sandboxError("landlock_restrict_self", errno);
    }
    return Unit{};
}

namespace {
std::atomic<bool> g_workerSandboxed{false};
} // namespace

bool workerSandboxRequested()
{
    return g_workerSandboxed.load() || qEnvironmentVariable("KPG_WORKER_SANDBOX") == QLatin1String("1");
}

void setWorkerSandboxed(bool on)
{
    g_workerSandboxed = on;
}

FsPolicy workerPolicy(const QStringList &extraLibraryDirs)
{
    FsPolicy p;
    // Libraries: the system's, the toolkit's and container runtimes' driver
    // folders; the loader's cache. Read and map, never write.
    p.execDirs << QStringLiteral("/lib") << QStringLiteral("/lib64") << QStringLiteral("/usr/lib")
               << QStringLiteral("/usr/lib64") << QStringLiteral("/usr/local/lib") << QStringLiteral("/usr/local/cuda")
               << QStringLiteral("/usr/local/nvidia") << extraLibraryDirs;
    p.readFiles << QStringLiteral("/etc/ld.so.cache");
    // The driver's device nodes: opened read-write, as the driver does; none created.
    const QDir dev(QStringLiteral("/dev"));
    for (const QString &name : dev.entryList({QStringLiteral("nvidia*")}, QDir::System | QDir::Files)) {
        p.readWriteFiles << dev.filePath(name);
    }
    p.readDirs << QStringLiteral("/dev/nvidia-caps");
    // What libcuda reads about the machine and its own process: the driver's
    // parameters and version, the device numbers, the memory and CPU layout,
    // the PCI devices' sysfs entries (their links lead under /sys/devices).
    p.readDirs << QStringLiteral("/proc/driver/nvidia") << QStringLiteral("/proc/self")
               << QStringLiteral("/sys/devices") << QStringLiteral("/sys/bus/pci") << QStringLiteral("/sys/module");
    p.readFiles << QStringLiteral("/proc/devices") << QStringLiteral("/proc/cpuinfo") << QStringLiteral("/proc/meminfo")
                << QStringLiteral("/proc/sys/vm/mmap_min_addr") << QStringLiteral("/proc/sys/vm/overcommit_memory");
    return p;
}

} // namespace Kp::Sandbox
