#pragma once

#include "workbench/workbench.h"

#include <QHash>
#include <QObject>

class QDockWidget;
class QMainWindow;
class QWidget;

namespace Kp {

/**
 * The window's docks, built from one table (docks.cpp: title, object name,
 * area, the dock it shares tabs with, and the panel's factory, each panel
 * made as Panel(Workbench &, QWidget *)), and the one policy for what comes
 * forward: within one run the most important news stays in front (a failed
 * check over a write outside a buffer over the run's result), and what the
 * user asked for always comes forward. GUI thread only.
 */
class Docks : public QObject
{
    Q_OBJECT
public:
    /** Builds every dock of the table on window, its panels on wb. */
    Docks(Workbench &wb, QMainWindow *window);

    QDockWidget *dock(PanelId id) const { return m_docks.value(id); }
    /** The panel in dock id (the dock's widget, or the widget inside its scroll area). */
    QWidget *panel(PanelId id) const { return m_panels.value(id); }
    template<typename T> T *panel(PanelId id) const { return qobject_cast<T *>(panel(id)); }
    /** The table's docks in its order (the View menu lists them so). */
    QList<QDockWidget *> all() const { return m_order; }
    /** The panel's id for a --show name ("inspector", "timeline" is the Results dock); nullopt when none. */
    static std::optional<PanelId> fromName(const QString &name);
    /** Every name fromName() knows, for the message that refuses another. */
    static QStringList names();

    /** The raise policy: wb's attention() comes here. */
    void attend(PanelId id, Attention why);

private:
    QHash<PanelId, QDockWidget *> m_docks;
    QHash<PanelId, QWidget *> m_panels;
    QList<QDockWidget *> m_order;
    int m_rank = 0; ///< the most important news shown since the current run started
};

} // namespace Kp
