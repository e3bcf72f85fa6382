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
 * policy need them), but its panel is built later: when its dock is first
 * shown after the window's first paint, when panel() asks for it or a request names it
 * (a comparison, who touched a cell), when work starts (all of them: a run,
 * a check evaluation, a memory check, an access analysis), or, for all that
 * are left, after the window's first paint (windowPainted(): those in
 * sight first). So the first paint waits for no panel. A panel therefore
 * starts from the workbench's current state, never from the signals it
 * missed.
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
    /** True once every panel is built. */
    bool allBuiltNow() const { return m_panels.size() == m_docks.size(); }
    /**
     * Until windowPainted(), no panel is built unless asked for (panel(),
     * buildAll()): the window's first paint shows the docks' frames and
     * titles, and the editor, without waiting for their panels.
     */
    void waitForFirstPaint();
    /** The window's first paint is on the screen: the panels in sight now, the rest one a turn of the event loop. */
    void windowPainted();
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
    /** buildAll(), or the panels built one a turn after the first paint, built the last that were left. */
    void allBuilt();

private:
    void build(PanelId id);
    /** Builds the first panel not built yet in the next turn of the event loop, and so on; allBuilt() at the end. */
    void buildNextLater();

    Workbench &m_wb;
    QHash<PanelId, QDockWidget *> m_docks;
    QHash<PanelId, QWidget *> m_panels;
    QList<QDockWidget *> m_order;
    bool m_awaitingPaint = false; ///< waitForFirstPaint(): panels coming into sight wait too
    int m_rank = 0;               ///< the most important news shown since the current run started
};

} // namespace Kp
