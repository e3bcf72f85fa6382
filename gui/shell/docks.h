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
 *
 * Every dock exists from the start (layouts, the View menu and the raise
 * policy need them), but a panel behind another tab is built later: when
 * its dock is first shown, when panel() asks for it or a request names it
 * (a comparison, who touched a cell), when work starts (all of them: a run,
 * a check evaluation, a memory check, an access analysis), or, for all that
 * are left, in the first turn of the event loop after the window's first
 * paint (buildAfterFirstPaint()). So the first paint waits only for the
 * panels in sight. A panel therefore starts from the workbench's current
 * state, never from the signals it missed.
 */
class Docks : public QObject
{
    Q_OBJECT
public:
    /** Builds every dock of the table on window, its panels on wb. */
    Docks(Workbench &wb, QMainWindow *window);

    QDockWidget *dock(PanelId id) const { return m_docks.value(id); }
    /** The panel in dock id (the dock's widget, or the widget inside its scroll area). */
    /** Builds the panel first if it is not yet. */
    QWidget *panel(PanelId id);
    template<typename T> T *panel(PanelId id) { return qobject_cast<T *>(panel(id)); }
    /** True once the panel of dock id is built (tests). */
    bool isBuilt(PanelId id) const { return m_panels.contains(id); }
    /** Builds every panel not built yet. */
    void buildAll();
    /**
     * The panels not built yet are built in the first turn of the event loop
     * after painted's first paint (the editor: what a user waits to see);
     * a window that is not shown by the event loop's first turn (tests, a
     * screenshot without a screen) builds them then.
     */
    void buildAfterFirstPaint(QWidget *painted);
    /** The table's docks in its order (the View menu lists them so). */
    QList<QDockWidget *> all() const { return m_order; }
    /** The panel's id for a --show name ("inspector", "timeline" is the Results dock); nullopt when none. */
    static std::optional<PanelId> fromName(const QString &name);
    /** Every name fromName() knows, for the message that refuses another. */
    static QStringList names();

    /** The raise policy: wb's attention() comes here. */
    void attend(PanelId id, Attention why);

Q_SIGNALS:
    /** The panel of dock id was built (panel is what panel(id) returns). */
    void panelBuilt(Kp::PanelId id, QWidget *panel);
    /** buildAll() built the last panels that were left. */
    void allBuilt();

private:
    bool eventFilter(QObject *watched, QEvent *event) override;
    void build(PanelId id);

    Workbench &m_wb;
    QHash<PanelId, QDockWidget *> m_docks;
    QHash<PanelId, QWidget *> m_panels;
    QList<QDockWidget *> m_order;
    int m_rank = 0; ///< the most important news shown since the current run started
};

} // namespace Kp
