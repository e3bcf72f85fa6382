#include "devicestatus.h"

#include "workbench/devices.h"

#include <QComboBox>
#include <QLabel>
#include <QStatusBar>

namespace Kp {

DeviceStatus::DeviceStatus(Devices &devices, QStatusBar *bar, QObject *parent)
    : QObject(parent)
    , m_devices(devices)
{
    m_label = new QLabel(m_devices.summary(), bar);
    m_label->setObjectName(QStringLiteral("deviceStatus"));
    m_chooser = new QComboBox(bar);
    m_chooser->setObjectName(QStringLiteral("deviceChooser"));
    m_chooser->setToolTip(tr("The GPU runs go to; each GPU has its own worker process"));
    m_chooser->hide(); // shown when there is more than one GPU
    connect(m_chooser, &QComboBox::activated, &m_devices, &Devices::setOrdinal);
    bar->addWidget(m_chooser);
    bar->addWidget(m_label, 1);
    connect(&m_devices, &Devices::changed, this, &DeviceStatus::update);
    connect(&m_devices, &Devices::ordinalChanged, m_chooser, [this](int ordinal) {
        if (ordinal < m_chooser->count()) {
            m_chooser->setCurrentIndex(ordinal);
        }
    });
    connect(&m_devices, &Devices::workerExited, bar,
            [bar](const QString &reason) { bar->showMessage(tr("GPU worker stopped: %1").arg(reason), 10000); });
}

QString DeviceStatus::text() const
{
    return m_label->text();
}

void DeviceStatus::update()
{
    m_label->setText(m_devices.summary());
    m_label->setToolTip(m_devices.detail());
    m_chooser->clear();
    for (const DeviceInfo &dev : m_devices.list().devices) {
        m_chooser->addItem(tr("GPU %1: %2").arg(dev.ordinal).arg(dev.name));
    }
    m_chooser->setCurrentIndex(m_devices.ordinal());
    m_chooser->setVisible(m_devices.list().devices.size() > 1);
}

} // namespace Kp
