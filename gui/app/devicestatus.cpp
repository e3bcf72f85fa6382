#include "devicestatus.h"

#include "client/engineclient.h"
#include "core/format.h"
#include "cuda/deviceinfo.h"

#include <QComboBox>
#include <QLabel>
#include <QStatusBar>

namespace Kp {

DeviceStatus::DeviceStatus(EngineClient *engine, QStatusBar *bar, QObject *parent)
    : QObject(parent)
    , m_engine(engine)
{
    m_label = new QLabel(tr("Looking for a GPU…"), bar);
    m_label->setObjectName(QStringLiteral("deviceStatus"));
    m_chooser = new QComboBox(bar);
    m_chooser->setObjectName(QStringLiteral("deviceChooser"));
    m_chooser->setToolTip(tr("The GPU runs go to; each GPU has its own worker process"));
    m_chooser->hide(); // shown when there is more than one GPU
    connect(m_chooser, &QComboBox::activated, this, [this](int i) {
        m_ordinal = i;
        Q_EMIT ordinalChosen(i);
    });
    bar->addWidget(m_chooser);
    bar->addWidget(m_label, 1);
    connect(m_engine, &EngineClient::workerExited, bar,
            [bar](const QString &reason) { bar->showMessage(tr("GPU worker stopped: %1").arg(reason), 10000); });
}

QString DeviceStatus::text() const
{
    return m_label->text();
}

void DeviceStatus::setOrdinal(int ordinal)
{
    m_ordinal = ordinal;
    if (ordinal < m_chooser->count()) {
        m_chooser->setCurrentIndex(ordinal);
    }
}

void DeviceStatus::refresh()
{
    m_engine->listDevices(this, [this](const Result<DeviceList> &reply) {
        if (reply) {
            const DeviceList &list = reply.value();
            const DeviceInfo &d = list.devices.first();
            QString text = tr("%1 · compute %2 · %3 SMs · %4 · CUDA %5 driver")
                               .arg(d.name, d.computeCapability())
                               .arg(d.smCount)
                               .arg(formatBytes(d.totalMemoryBytes), cudaVersionString(list.driverVersion));
            m_chooser->clear();
            for (const DeviceInfo &dev : list.devices) {
                m_chooser->addItem(tr("GPU %1: %2").arg(dev.ordinal).arg(dev.name));
            }
            m_chooser->setCurrentIndex(qBound(0, m_ordinal, int(list.devices.size()) - 1));
            m_chooser->setVisible(list.devices.size() > 1);
            if (list.devices.size() > 1) {
                text += tr(" (+%1 more)").arg(list.devices.size() - 1);
            }
            m_label->setText(text);
            m_label->setToolTip(d.pciBusId + QLatin1Char(' ') + d.uuid);
            m_canRun = true;
            m_whyNoRun.clear();
            m_driverVersion = cudaVersionString(list.driverVersion);
            Q_EMIT deviceFound(d.ccMajor, d.ccMinor);
        } else {
            const Error &e = reply.error();
            switch (e.code) {
            case Error::Code::NoDriver: m_label->setText(tr("No NVIDIA driver found: compile-only mode")); break;
            case Error::Code::NoDevice: m_label->setText(tr("No CUDA device found: compile-only mode")); break;
            default: m_label->setText(tr("GPU worker unavailable: compile-only mode")); break;
            }
            m_label->setToolTip(e.toString());
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
