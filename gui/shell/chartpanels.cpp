#include "chartpanels.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QLabel>

#include <dlfcn.h>

using MakeChartPanel = QWidget *(int id, Kp::Workbench &wb, QWidget *parent);

// Defined by the module (chartmodule.cpp), or by a program that
// links the panels' objects itself; weak, so this program starts without it.
extern "C" __attribute__((weak)) MakeChartPanel kpgMakeChartPanel;

namespace Kp {

namespace {

struct Module
{
    MakeChartPanel *make = nullptr;
    QString error; ///< why it could not be loaded; empty when make is set
};

QString modulePath()
{
    const QString env = qEnvironmentVariable("KPG_CHARTS_MODULE");
    if (!env.isEmpty()) {
        return env;
    }
    return QFileInfo(QCoreApplication::applicationDirPath() + QStringLiteral("/" KPG_CHARTS_MODULE_RELPATH))
        .absoluteFilePath();
}

const Module &module()
{
    static const Module loaded = [] {
        Module m;
        if (kpgMakeChartPanel) {
            m.make = kpgMakeChartPanel;
            return m;
        }
        const QString path = modulePath();
        // Kept open for the program's life: its panels' code is in it.
        void *handle = ::dlopen(QFile::encodeName(path).constData(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            m.error = QString::fromLocal8Bit(::dlerror());
            return m;
        }
        m.make = reinterpret_cast<MakeChartPanel *>(::dlsym(handle, "kpgMakeChartPanel"));
        if (!m.make) {
            m.error = QStringLiteral("%1 has no kpgMakeChartPanel: %2").arg(path, QString::fromLocal8Bit(::dlerror()));
        }
        return m;
    }();
    return loaded;
}

} // namespace

QWidget *makeChartPanel(PanelId id, Workbench &wb, QWidget *parent)
{
    const Module &m = module();
    if (m.make) {
        if (QWidget *panel = m.make(int(id), wb, parent)) {
            return panel;
        }
    }
    const QString reason = m.make ? QStringLiteral("the module has no such panel") : m.error;
    auto *label = new QLabel(
        QCoreApplication::translate("Docks", "This panel is drawn by the chart module, which could not be loaded: "
                                             "%1.\nReinstall Kernel Playground, or set KPG_CHARTS_MODULE to "
                                             "kpg_charts.so's path.")
            .arg(reason),
        parent);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setAlignment(Qt::AlignCenter);
    static bool logged = false;
    if (!logged) {
        logged = true;
        wb.log(QCoreApplication::translate("Docks", "The chart panels (Results, Compare, Occupancy) could not be "
                                                    "loaded: %1")
                   .arg(reason));
    }
    return label;
}

} // namespace Kp
