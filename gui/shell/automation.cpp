// What tests and the command line's screenshot mode (main.cpp) reach of the
// window: its panels, and inspecting and hovering as a user would.

#include "mainwindow.h"

#include "docks.h"
#include "editor/ptxview.h"
#include "panels/buffers/bufferspanel.h"
#include "panels/checks/checkspanel.h"
#include "panels/description/descriptionview.h"
#include "panels/inspector/bufferinspector.h"
#include "panels/inspector/imageview.h"
#include "panels/kernels/kernelstable.h"
#include "panels/launch/launchpanel.h"
#include "panels/log/logpanel.h"
#include "panels/memory/memorypanel.h"
#include "panels/problems/problemspanel.h"
#include "panels/sweep/sweeppanel.h"

#include <QCoreApplication>
#include <QMouseEvent>

namespace Kp {

SweepPanel *MainWindow::sweepPanel() const
{
    return m_docks->panel<SweepPanel>(PanelId::Sweep);
}

MemoryPanel *MainWindow::memoryPanel() const
{
    return m_docks->panel<MemoryPanel>(PanelId::Memory);
}

LaunchPanel *MainWindow::launchPanel() const
{
    return m_docks->panel<LaunchPanel>(PanelId::Launch);
}

ChecksPanel *MainWindow::checksPanel() const
{
    return m_docks->panel<ChecksPanel>(PanelId::Checks);
}

DescriptionView *MainWindow::descriptionView() const
{
    return m_docks->panel<DescriptionView>(PanelId::Description);
}

BufferInspector *MainWindow::inspector() const
{
    return m_docks->panel<BufferInspector>(PanelId::Inspector);
}

BuffersPanel *MainWindow::buffersPanel() const
{
    return m_docks->panel<BuffersPanel>(PanelId::Buffers);
}

QPlainTextEdit *MainWindow::logView() const
{
    return m_docks->panel<LogPanel>(PanelId::Log);
}

PtxView *MainWindow::ptxView() const
{
    return m_docks->panel<PtxView>(PanelId::Ptx);
}

PtxView *MainWindow::sassView() const
{
    return m_docks->panel<PtxView>(PanelId::Sass);
}

QTreeWidget *MainWindow::problems() const
{
    return m_docks->panel<ProblemsPanel>(PanelId::Problems);
}

QTableWidget *MainWindow::kernelsTable() const
{
    return m_docks->panel<KernelsTable>(PanelId::Kernels);
}

void MainWindow::inspectBuffer(const QString &name, const QString &view)
{
    m_wb->requestBuffer(name, view == QLatin1String("image")  ? InspectorView::Image
                              : view == QLatin1String("diff") ? InspectorView::Diff
                                                              : InspectorView::Grid);
}

void MainWindow::hoverPixel(int x, int y)
{
    ImageView *view = inspector()->imageView();
    const QPointF pos = view->origin() + QPointF((x + 0.5) * view->zoom(), (y + 0.5) * view->zoom());
    QMouseEvent move(QEvent::MouseMove, pos, view->mapToGlobal(pos), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QCoreApplication::sendEvent(view, &move);
}

} // namespace Kp
