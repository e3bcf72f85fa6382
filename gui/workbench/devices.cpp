#include "devices.h"

#include "client/engineclient.h"
#include "client/target.h"
#include "core/format.h"

#include <QElapsedTimer>
#include <QPointer>
#include <QSettings>

namespace Kp {

namespace {
const QString kRecentKey = QStringLiteral("targets/recent");
const QString kCurrentKey = QStringLiteral("targets/current");

QString hostLabelOf(const Target &t)
{
    switch (t.kind) {
    case Target::Kind::Local: return {};
    case Target::Kind::Ssh: return t.host;
    case Target::Kind::Slurm:
        return t.partition.isEmpty() ? QStringLiteral("slurm") : QStringLiteral("slurm ") + t.partition;
    }
    return {};
}

double msSince(const QElapsedTimer &clock)
{
    return double(clock.nsecsElapsed()) / 1e6;
}
} // namespace

Devices::Devices(EngineClient *primary, QObject *parent)
    : QObject(parent)
    , m_primary(primary)
    , m_summary(tr("Looking for a GPU…"))
{
    watch(m_primary);
    // KPG_TARGET decides at start, as for kpg; without it, the target chosen last time.
    const QString fromEnv = qEnvironmentVariable("KPG_TARGET");
    const QString last = QSettings().value(kCurrentKey).toString();
    const Result<Target> t = Target::parse(fromEnv.isEmpty() ? last : fromEnv);
    if (t) {
        m_target = t->spec;
        m_hostLabel = hostLabelOf(*t);
        if (fromEnv.isEmpty() && t->isRemote()) {
            qputenv("KPG_TARGET", m_target.toUtf8());
            m_primary->setTarget(m_target);
        }
    } else {
        m_target = fromEnv; // the worker's request reports what is wrong with it
    }
}

Devices::~Devices() = default;

void Devices::watch(EngineClient *client)
{
    connect(client, &EngineClient::workerExited, this, [this](const QString &reason) {
        if (!m_switching) {
            Q_EMIT workerExited(reason); // a worker stopped for a new target is no news
        }
    });
    connect(client, &EngineClient::transferProgress, this, &Devices::transferProgress);
}

void Devices::setOrdinal(int ordinal)
{
    const int clamped =
        m_list.devices.isEmpty() ? qMax(0, ordinal) : qBound(0, ordinal, int(m_list.devices.size()) - 1);
    if (clamped == m_ordinal) {
        return;
    }
    m_ordinal = clamped;
    Q_EMIT ordinalChanged(m_ordinal);
}

EngineClient &Devices::engine(int ordinal)
{
    if (ordinal <= 0) {
        return *m_primary;
    }
    auto it = m_others.find(ordinal);
    if (it == m_others.end()) {
        // One worker per GPU: a CUDA context belongs to its process.
        WorkerLaunch launch;
        launch.target = m_target;
        it = m_others.emplace(ordinal, std::make_unique<EngineClient>(launch)).first;
        watch(it->second.get());
    }
    return *it->second;
}

Result<DeviceList> Devices::answer() const
{
    if (m_canRun) {
        return m_list;
    }
    return m_error;
}

QString Devices::deviceLabel(const QString &host, const DeviceInfo &device)
{
    if (host.isEmpty()) {
        return tr("GPU %1: %2").arg(device.ordinal).arg(device.name);
    }
    return tr("%1: GPU %2, %3").arg(host).arg(device.ordinal).arg(device.name);
}

QString Devices::hostOf(const QString &spec)
{
    const Result<Target> t = Target::parse(spec);
    return t ? hostLabelOf(*t) : QString();
}

Status Devices::setTarget(const QString &spec)
{
    const Result<Target> t = Target::parse(spec);
    if (!t) {
        return t.error();
    }
    rememberTarget(t->spec);
    QSettings().setValue(kCurrentKey, t->spec);
    if (t->spec == m_target) {
        return Unit{};
    }
    m_target = t->spec;
    m_hostLabel = hostLabelOf(*t);
    // Every worker of the process follows: the ones made here, and those an
    // engine function makes with a default EngineClient (sweeps, reference runs).
    qputenv("KPG_TARGET", m_target.toUtf8());
    m_primary->setTarget(m_target);
    for (auto &[ordinal, client] : m_others) {
        client->setTarget(m_target);
    }
    m_switching = true;
    m_known = false;
    m_canRun = false;
    m_list = {};
    m_queryMs = -1;
    m_roundTripMs = -1;
    m_summary = t->isRemote() ? tr("Connecting to %1…").arg(m_target) : tr("Looking for a GPU…");
    m_detail = m_target;
    m_whyNoRun = tr("Connecting to %1…").arg(m_target);
    Q_EMIT targetChanged(m_target);
    Q_EMIT changed();
    refresh();
    return Unit{};
}

void Devices::probe(const QString &spec, QObject *context, ProbeCallback callback)
{
    const Result<Target> t = Target::parse(spec);
    if (!t) {
        callback(t.error(), 0);
        return;
    }
    WorkerLaunch launch;
    launch.target = t->spec;
    // A worker of its own: the window's workers keep their state while a target is tried.
    auto *client = new EngineClient(launch, this);
    QElapsedTimer clock;
    clock.start();
    QPointer<QObject> guard(context);
    client->listDevices(
        this,
        [client, clock, guard, callback](const Result<DeviceList> &reply) {
            const double ms = msSince(clock);
            client->deleteLater();
            if (guard && callback) {
                callback(reply, ms);
            }
        },
        60000); // as kpg devices waits
}

QStringList Devices::recentTargets()
{
    QStringList out;
    for (const QString &s : QSettings().value(kRecentKey).toStringList()) {
        // The settings file is the user's: keep only what still parses, once each.
        const Result<Target> t = Target::parse(s);
        if (t && t->isRemote() && !out.contains(t->spec)) {
            out << t->spec;
        }
    }
    return out.mid(0, kMaxRecent);
}

void Devices::rememberTarget(const QString &spec)
{
    const Result<Target> t = Target::parse(spec);
    if (!t || !t->isRemote()) {
        return;
    }
    QStringList list = recentTargets();
    list.removeAll(t->spec);
    list.prepend(t->spec);
    QSettings().setValue(kRecentKey, list.mid(0, kMaxRecent));
}

void Devices::measureRoundTrip(quint64 ticket)
{
    m_primary->roundTrip(this, [this, ticket](const Result<double> &ms) {
        if (ticket != m_ticket || !ms) {
            return;
        }
        m_roundTripMs = *ms;
        m_detail += tr("\nRound trip to %1: %2 ms").arg(m_hostLabel).arg(m_roundTripMs, 0, 'f', 1);
        Q_EMIT changed();
    });
}

void Devices::refresh()
{
    const quint64 ticket = ++m_ticket;
    QElapsedTimer clock;
    clock.start();
    m_primary->listDevices(this, [this, ticket, clock](const Result<DeviceList> &reply) {
        if (ticket != m_ticket) {
            return; // asked of a target that is no longer the one
        }
        m_queryMs = msSince(clock);
        m_switching = false;
        const QString host = m_hostLabel.isEmpty() ? QString() : m_hostLabel + QStringLiteral(": ");
        const QString timing = tr("Devices query: %1 ms%2")
                                   .arg(m_queryMs, 0, 'f', 0)
                                   .arg(m_hostLabel.isEmpty() ? QString() : tr(" (connecting included)"));
        if (reply) {
            m_list = reply.value();
            const DeviceInfo &d = m_list.devices.first();
            m_summary = host + tr("%1 · compute %2 · %3 SMs · %4 · CUDA %5 driver")
                                   .arg(d.name, d.computeCapability())
                                   .arg(d.smCount)
                                   .arg(formatBytes(d.totalMemoryBytes), cudaVersionString(m_list.driverVersion));
            if (m_list.devices.size() > 1) {
                m_summary += tr(" (+%1 more)").arg(m_list.devices.size() - 1);
            }
            m_detail = d.pciBusId + QLatin1Char(' ') + d.uuid;
            m_canRun = true;
            m_whyNoRun.clear();
            m_driverVersion = cudaVersionString(m_list.driverVersion);
            m_ordinal = qBound(0, m_ordinal, int(m_list.devices.size()) - 1);
            Q_EMIT deviceFound(d.ccMajor, d.ccMinor);
        } else {
            const Error &e = reply.error();
            m_error = e;
            m_list = {};
            switch (e.code) {
            case Error::Code::NoDriver: m_summary = host + tr("No NVIDIA driver found: compile-only mode"); break;
            case Error::Code::NoDevice: m_summary = host + tr("No CUDA device found: compile-only mode"); break;
            default:
                m_summary = m_hostLabel.isEmpty() ? tr("GPU worker unavailable: compile-only mode")
                                                  : tr("%1 unavailable: compile-only mode").arg(m_target);
                break;
            }
            m_detail = e.toString();
            m_canRun = false;
            m_whyNoRun = e.code == Error::Code::NoDriver
                             ? tr("Running needs an NVIDIA driver, and none was found: this is compile-only mode. "
                                  "Compiling, Problems, PTX and SASS work without one.")
                         : e.code == Error::Code::NoDevice
                             ? tr("Running needs a CUDA GPU, and the driver found none: this is compile-only mode. "
                                  "Compiling, Problems, PTX and SASS work without one.")
                             : tr("Running needs the GPU worker, which is unavailable (%1): this is compile-only "
                                  "mode.")
                                   .arg(e.message);
            m_driverVersion = e.code == Error::Code::NoDriver ? tr("none found") : tr("unknown");
        }
        if (!m_hostLabel.isEmpty()) {
            m_detail = tr("Target %1\n%2").arg(m_target, m_detail);
        }
        m_detail += QLatin1Char('\n') + timing;
        m_known = true;
        Q_EMIT changed();
        // A worker answered (GPUs, or why none): time one more request, the connection being up.
        if (!m_hostLabel.isEmpty() &&
            (reply || reply.error().code == Error::Code::NoDriver || reply.error().code == Error::Code::NoDevice)) {
            measureRoundTrip(ticket);
        }
    });
}

} // namespace Kp
