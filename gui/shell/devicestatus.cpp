#include "devicestatus.h"

#include "targetdialog.h"
#include "workbench/devices.h"

#include <QActionGroup>
#include <QComboBox>
#include <QLabel>
#include <QMenu>
#include <QStatusBar>
#include <QToolButton>

namespace Kp {

DeviceStatus::DeviceStatus(Devices &devices, QStatusBar *bar, QObject *parent)
    : QObject(parent)
    , m_devices(devices)
    , m_window(bar->window())
{
    m_target = new QToolButton(bar);
    m_target->setObjectName(QStringLiteral("targetChooser"));
    m_target->setPopupMode(QToolButton::InstantPopup);
    m_target->setAutoRaise(true);
    auto *menu = new QMenu(m_target);
    menu->setObjectName(QStringLiteral("targetMenu"));
    m_target->setMenu(menu);
    connect(menu, &QMenu::aboutToShow, this, &DeviceStatus::fillTargetMenu);
    fillTargetMenu(); // so the actions exist before the first click (keyboard, tests)
    m_label = new QLabel(m_devices.summary(), bar);
    m_label->setObjectName(QStringLiteral("deviceStatus"));
    m_chooser = new QComboBox(bar);
    m_chooser->setObjectName(QStringLiteral("deviceChooser"));
    m_chooser->setToolTip(tr("The GPU runs go to; each GPU has its own worker process"));
    m_chooser->hide(); // shown when there is more than one GPU
    connect(m_chooser, &QComboBox::activated, &m_devices, &Devices::setOrdinal);
    bar->addWidget(m_target);
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
    update();
}

QString DeviceStatus::text() const
{
    return m_label->text();
}

void DeviceStatus::showTargetDialog(bool adding)
{
    TargetDialog dialog(m_devices, m_window, adding);
    dialog.exec();
}

void DeviceStatus::fillTargetMenu()
{
    QMenu *menu = m_target->menu();
    menu->clear();
    auto *group = new QActionGroup(menu);
    const auto add = [&](const QString &text, const QString &spec) {
        QAction *a = menu->addAction(text);
        a->setCheckable(true);
        a->setChecked(spec == m_devices.target() || (spec == QLatin1String("local") && m_devices.target().isEmpty()));
        a->setData(spec);
        group->addAction(a);
        connect(a, &QAction::triggered, this, [this, spec] {
            if (const Status s = m_devices.setTarget(spec); !s) {
                m_label->setText(s.error().message);
            }
        });
    };
    add(tr("local (this machine)"), QStringLiteral("local"));
    for (const QString &spec : Devices::recentTargets()) {
        add(spec, spec);
    }
    menu->addSeparator();
    QAction *addTarget = menu->addAction(tr("Add Target…"));
    addTarget->setObjectName(QStringLiteral("addTargetAction"));
    connect(addTarget, &QAction::triggered, this, [this] { showTargetDialog(true); });
}

void DeviceStatus::update()
{
    const QString host = m_devices.hostLabel();
    m_target->setText(host.isEmpty() ? tr("local") : host);
    m_target->setToolTip(tr("Target: %1. Where kernels run; click to choose another or add one")
                             .arg(m_devices.target().isEmpty() ? QStringLiteral("local") : m_devices.target()));
    m_label->setText(m_devices.summary());
    m_label->setToolTip(m_devices.detail());
    m_chooser->clear();
    for (const DeviceInfo &dev : m_devices.list().devices) {
        m_chooser->addItem(m_devices.deviceLabel(dev));
    }
    m_chooser->setCurrentIndex(m_devices.ordinal());
    m_chooser->setVisible(m_devices.list().devices.size() > 1);
}

} // namespace Kp
