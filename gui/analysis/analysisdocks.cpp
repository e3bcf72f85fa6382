// MainWindow's analysis docks (Occupancy, and Compare): built here rather
// than in mainwindow.cpp so the window's own file stays as it is.

#include "mainwindow.h"

#include "analysis/occupancyview.h"
#include "devicestatus.h"

#include <QDockWidget>

namespace Kp {

void MainWindow::buildAnalysis()
{
    auto *occupancy = new OccupancyView(this);
    occupancy->setObjectName(QStringLiteral("occupancy"));
    QDockWidget *occupancyDock =
        addDock(tr("Occupancy"), QStringLiteral("occupancyDock"), occupancy, Qt::RightDockWidgetArea);
    if (auto *inspector = findChild<QDockWidget *>(QStringLiteral("inspectorDock"))) {
        tabifyDockWidget(inspector, occupancyDock);
        inspector->raise();
    }
    occupancy->follow(m_doc, m_run, m_launch);
    connect(m_device, &DeviceStatus::deviceFound, occupancy, &OccupancyView::setDevice);
}

} // namespace Kp
