#include "devices.h"

#include "client/engineclient.h"
#include "core/format.h"

namespace Kp {

Devices::Devices(EngineClient *primary, QObject *parent)
    : QObject(parent)
    , m_primary(primary)
    , m_summary(tr("Looking for a GPU…"))
{
    connect(m_primary, &EngineClient::workerExited, this, &Devices::workerExited);
}

Devices::~Devices() = default;

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
        it = m_others.emplace(ordinal, std::make_unique<EngineClient>()).first;
        connect(it->second.get(), &EngineClient::workerExited, this, &Devices::workerExited);
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

void Devices::refresh()
{
    m_primary->listDevices(this, [this](const Result<DeviceList> &reply) {
        if (reply) {
            m_list = reply.value();
            const DeviceInfo &d = m_list.devices.first();
            m_summary = tr("%1 · compute %2 · %3 SMs · %4 · CUDA %5 driver")
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
            case Error::Code::NoDriver: m_summary = tr("No NVIDIA driver found: compile-only mode"); break;
            case Error::Code::NoDevice: m_summary = tr("No CUDA device found: compile-only mode"); break;
            default: m_summary = tr("GPU worker unavailable: compile-only mode"); break;
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
        m_known = true;
        Q_EMIT changed();
    });
}

} // namespace Kp
