#pragma once

#include "access/accessstats.h"

#include <QColor>
#include <QList>
#include <QObject>
#include <QString>

#include <memory>
#include <optional>

namespace Kp {

class CodeEditor;
class Workbench;
struct AccessReport;

/**
 * The editor's memory-access heat (docs/memory-access.md): after an
 * analysis, every line of the project's source with recorded memory
 * instructions gets a marker in a margin of its own, coloured by its cost
 * against the ideal (accessHeat: green at the ideal, yellow-green under
 * twice it, amber at 2 to 4 times, red beyond or at a 4-way bank conflict);
 * hovering it gives the line's readings, and clicking it (in the window)
 * selects the line's rows in the Memory Access panel. Once the text differs from the
 * source the analysis recorded, the markers turn grey ("stale": they still
 * follow the lines they were put on, but the line mapping is no longer the
 * analysis'); undoing back to that text brings the colours back.
 *
 * A decorator parented to the editor: it owns margin kMargin (right of the
 * folding margin, next to the text) and markers kFirstMarker to
 * kFirstMarker + 4, and takes them out of the diagnostics' margin.
 * GUI thread only.
 */
class AccessHeatMargin : public QObject
{
    Q_OBJECT
public:
    static constexpr int kMargin = 3;
    static constexpr int kFirstMarker = 8; ///< Ideal, Mild, Costly, Severe, then the stale marker
    static constexpr int kStaleMarker = kFirstMarker + 4;

    /** The marker colour of heat (the Memory Access panel's table uses it too). */
    static QColor colour(AccessHeat heat);

    /** A margin that shows what setReport() gives it. */
    explicit AccessHeatMargin(CodeEditor *editor);
    /** The window's margin: follows wb's access map (its current report and "Show in editor"). */
    AccessHeatMargin(CodeEditor *editor, Workbench &wb);

    /** Marks the report's lines (null clears them). */
    void setReport(std::shared_ptr<const AccessReport> report);
    /** Shows or hides the margin and its markers (the report is kept). */
    void setShown(bool on);
    bool isShown() const { return m_shown; }
    /** The editor's text is not the source the report recorded. */
    bool isStale() const { return m_stale; }

    /** The class of line (1-based) as marked now; none for a line without a (fresh) marker. */
    std::optional<AccessHeat> heatAt(int line) const;
    /** Lines (1-based, ascending) that carry a marker of heat now. */
    QList<int> linesWith(AccessHeat heat) const;
    /** Lines (1-based, ascending) that carry a stale marker now. */
    QList<int> staleLines() const;
    /** The margin's tooltip for line (1-based): the line's readings; empty without a marker. */
    QString toolTipAt(int line) const;

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    struct Mark
    {
        int handle = -1; ///< Scintilla's marker handle: it moves with its line as text is edited
        AccessHeat heat = AccessHeat::Ideal;
        QString tip;
    };

    void redraw();
    void textChanged();
    QList<int> linesOfMarker(int marker) const;
    const Mark *markOn(int line) const;

    CodeEditor *m_editor;
    std::shared_ptr<const AccessReport> m_report;
    int m_sourceBytes = -1; ///< the report's source in UTF-8 bytes, as the editor's length() counts
    QList<Mark> m_marks;
    bool m_shown = true;
    bool m_stale = false;
    bool m_clickable = false; ///< a click on a marker goes to the panel (the window's margin)
};

} // namespace Kp
