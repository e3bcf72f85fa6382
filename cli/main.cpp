// kpg: Kernel Playground without a window. Runs the same engine as the GUI,
// for scripts and for grading labs.

#include "client/engineclient.h"
#include "cuda/deviceinfo.h"
#include "cuda/driverapi.h"
#include "cuda/nvrtcapi.h"
#include "exitcodes.h"
#include "worker/protocol.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

using namespace Kp;

namespace {

QTextStream &out()
{
    static QTextStream s(stdout);
    return s;
}
QTextStream &err()
{
    static QTextStream s(stderr);
    return s;
}

const char *kUsage = R"(Usage: kpg <command> [options]

Kernel Playground's command-line tool: runs, checks and sweeps kernels of
.kpg projects without a window.

Commands:
  devices [--json]   List the CUDA devices with compute capability, SM count
                     and memory, and the driver and NVRTC versions.

Options:
  -h, --help         Show this help and exit.
  --version          Show the version and exit.

Exit codes:
  0 ok; 1 a check failed; 2 compile error; 3 kernel fault or launch error;
  4 kernel timed out; 64 usage error; 65 bad input file;
  69 no GPU, driver or NVRTC where one is required.

Environment:
  KPG_WORKER         path of kpg-worker (default: next to kpg)
  KPG_CUDA_DRIVER    driver library to load (default: libcuda.so.1)
  KPG_NVRTC_LIBRARY  NVRTC library to load (default: libnvrtc.so.13, .so.12)
)";

int usageError(const QString &message)
{
    err() << "kpg: " << message << "\n"
          << "Run 'kpg --help' for usage.\n";
    err().flush();
    return Exit::Usage;
}

QJsonObject nvrtcJson()
{
    const Result<const NvrtcApi *> nvrtc = NvrtcApi::instance();
    if (!nvrtc) {
        return QJsonObject{{QStringLiteral("error"), QJsonObject::fromVariantMap(nvrtc.error().toVariant())}};
    }
    return QJsonObject{{QStringLiteral("version"), (*nvrtc)->versionString()},
                       {QStringLiteral("library"), (*nvrtc)->libraryPath}};
}

int devices(const QStringList &args)
{
    bool json = false;
    for (const QString &a : args) {
        if (a == QLatin1String("--json")) {
            json = true;
        } else {
            return usageError(QStringLiteral("devices: unknown option '%1' (allowed: --json)").arg(a));
        }
    }
    EngineClient engine;
    const Reply reply = engine.requestSync(Protocol::Type::ListDevices, {}, RequestOptions{60000, {}});
    const QJsonObject nvrtc = nvrtcJson();

    if (!reply) {
        const Error &e = reply.error();
        if (json) {
            const QJsonObject doc{{QStringLiteral("devices"), QJsonArray{}},
                                  {QStringLiteral("nvrtc"), nvrtc},
                                  {QStringLiteral("error"), QJsonObject::fromVariantMap(e.toVariant())}};
            out() << QJsonDocument(doc).toJson(QJsonDocument::Indented);
            out().flush();
        }
        err() << "kpg: " << e.message << "\n";
        err().flush();
        return Exit::forError(e);
    }

    const DeviceList list = DeviceList::fromVariant(reply.value());
    if (json) {
        QJsonArray arr;
        for (const DeviceInfo &d : list.devices) {
            QJsonObject o = QJsonObject::fromVariantMap(d.toVariant());
            o.insert(QStringLiteral("computeCapability"), d.computeCapability());
            o.insert(QStringLiteral("arch"), d.arch());
            arr.append(o);
        }
        const QJsonObject doc{{QStringLiteral("driver"),
                               QJsonObject{{QStringLiteral("cudaVersion"), cudaVersionString(list.driverVersion)},
                                           {QStringLiteral("version"), list.driverVersion}}},
                              {QStringLiteral("nvrtc"), nvrtc},
                              {QStringLiteral("devices"), arr}};
        out() << QJsonDocument(doc).toJson(QJsonDocument::Indented);
        out().flush();
        return Exit::Ok;
    }
    out() << "Driver: CUDA " << cudaVersionString(list.driverVersion) << "\n";
    if (nvrtc.contains(QStringLiteral("version"))) {
        out() << "NVRTC:  " << nvrtc.value(QStringLiteral("version")).toString() << " ("
              << nvrtc.value(QStringLiteral("library")).toString() << ")\n";
    } else {
        out() << "NVRTC:  not found; kernels cannot be compiled\n";
    }
    for (const DeviceInfo &d : list.devices) {
        out() << "GPU " << d.ordinal << ": " << d.name << "  compute " << d.computeCapability() << " (" << d.arch()
              << ")  " << d.smCount << " SMs  " << formatBytes(d.totalMemoryBytes) << "  PCI " << d.pciBusId << "\n";
    }
    out().flush();
    return Exit::Ok;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("kpg"));
    QCoreApplication::setApplicationVersion(QStringLiteral(KPG_VERSION));

    QStringList args = QCoreApplication::arguments().mid(1);
    if (args.isEmpty()) {
        return usageError(QStringLiteral("no command given"));
    }
    const QString first = args.takeFirst();
    if (first == QLatin1String("--help") || first == QLatin1String("-h") || first == QLatin1String("help")) {
        out() << kUsage;
        return Exit::Ok;
    }
    if (first == QLatin1String("--version")) {
        out() << "kpg " << KPG_VERSION << " (Kernel Playground; worker protocol " << Protocol::kVersion << ")\n";
        return Exit::Ok;
    }
    if (args.contains(QLatin1String("--help")) || args.contains(QLatin1String("-h"))) {
        out() << kUsage;
        return Exit::Ok;
    }
    if (first == QLatin1String("devices")) {
        return devices(args);
    }
    if (first.startsWith(QLatin1Char('-'))) {
        return usageError(QStringLiteral("unknown option '%1'").arg(first));
    }
    return usageError(QStringLiteral("unknown command '%1' (commands: devices)").arg(first));
}
