// The entry point of kpg_charts.so (gui/shell/chartpanels.h): the panels
// drawn with Qt Charts, made for the window that loaded the module.

#include "panels/compare/comparepanel.h"
#include "panels/occupancy/occupancyview.h"
#include "panels/results/resultspanel.h"
#include "workbench/workbench.h"

extern "C" Q_DECL_EXPORT QWidget *kpgMakeChartPanel(int id, Kp::Workbench &wb, QWidget *parent)
{
    switch (Kp::PanelId(id)) {
    case Kp::PanelId::Results: return new Kp::ResultsPanel(wb, parent);
    case Kp::PanelId::Compare: return new Kp::ComparePanel(wb, parent);
    case Kp::PanelId::Occupancy: return new Kp::OccupancyView(wb, parent);
    default: return nullptr;
    }
}
