#include "accessheat.h"

#include "access/accessrun.h"
#include "codeeditor.h"
#include "workbench/accessmap.h"
#include "workbench/workbench.h"

#include <QFileInfo>
#include <QHelpEvent>
#include <QToolTip>

#include <algorithm>

namespace Kp {

namespace {

constexpr int kWidth = 10;
constexpr unsigned kHeatMask = 0x1fu << AccessHeatMargin::kFirstMarker;

/** The marker colours, Ideal to Severe, then stale; readable on the light and the dark theme alike. */
const QColor &markerColour(int index)
{
    static const QColor colours[] = {QColor(0x2da44e), QColor(0xa8c23a), QColor(0xe3a008), QColor(0xd73a49),
                                     QColor(0x9aa0a6)};
    return colours[index];
}

/** Whether a site's or line's path is the project's own source (the editor's text), not a header. */
bool ownFile(const AccessReport &r, const QString &path)
{
    return path.isEmpty() || QFileInfo(path).fileName() == r.sourceName;
}

QString lineTip(const AccessReport &r, const LineAccess &l, AccessHeat heat)
{
    QStringList parts{AccessHeatMargin::tr("Line %1, memory access: %2").arg(l.line).arg(accessHeatName(heat))};
    for (const int id : l.sites) {
        const auto s = std::find_if(r.summary.sites.cbegin(), r.summary.sites.cend(),
                                    [id](const SiteAccess &a) { return a.site.id == id; });
        if (s == r.summary.sites.cend()) {
            continue;
        }
        const QString requests =
            s->requests == 1 ? AccessHeatMargin::tr("1 request") : AccessHeatMargin::tr("%1 requests").arg(s->requests);
        parts << QStringLiteral("%1 %2 (%3, %4): %5")
                     .arg(accessSpaceName(s->site.space), accessKindName(s->site.kind), s->site.typeName, requests,
                          s->reading);
    }
    return parts.join(QLatin1Char('\n'));
}

} // namespace

QColor AccessHeatMargin::colour(AccessHeat heat)
{
    return markerColour(int(heat));
}

AccessHeatMargin::AccessHeatMargin(CodeEditor *editor)
    : QObject(editor)
    , m_editor(editor)
{
    if (m_editor->margins() <= kMargin) {
        m_editor->setMargins(kMargin + 1);
    }
    m_editor->setMarginType(kMargin, QsciScintilla::SymbolMargin);
    m_editor->setMarginWidth(kMargin, 0);
    m_editor->setMarginSensitivity(kMargin, false);
    m_editor->setMarginMarkerMask(kMargin, int(kHeatMask));
    // The diagnostics' symbol margin shows every marker by default; not these.
    m_editor->setMarginMarkerMask(1, m_editor->marginMarkerMask(1) & ~int(kHeatMask));
    for (int i = 0; i <= kStaleMarker - kFirstMarker; ++i) {
        m_editor->markerDefine(QsciScintilla::FullRectangle, kFirstMarker + i);
        m_editor->setMarkerBackgroundColor(markerColour(i), kFirstMarker + i);
        m_editor->setMarkerForegroundColor(markerColour(i), kFirstMarker + i);
    }
    m_editor->viewport()->installEventFilter(this);
    connect(m_editor, &QsciScintilla::textChanged, this, &AccessHeatMargin::textChanged);
}

AccessHeatMargin::AccessHeatMargin(CodeEditor *editor, Workbench &wb)
    : AccessHeatMargin(editor)
{
    AccessMap &access = wb.access();
    m_shown = access.showInEditor();
    // A click on a marker shows the line's instructions in the panel.
    m_editor->setMarginSensitivity(kMargin, true);
    m_clickable = true;
    connect(m_editor, &QsciScintilla::marginClicked, this,
            [this, &access](int margin, int line, Qt::KeyboardModifiers) {
                if (margin == kMargin && markOn(line + 1)) {
                    access.requestLine(line + 1);
                }
            });
    connect(&access, &AccessMap::reportChanged, this, &AccessHeatMargin::setReport);
    connect(&access, &AccessMap::showInEditorChanged, this, &AccessHeatMargin::setShown);
    setReport(access.last());
}

void AccessHeatMargin::setReport(std::shared_ptr<const AccessReport> report)
{
    m_report = std::move(report);
    m_sourceBytes = m_report ? int(m_report->sourceText.toUtf8().size()) : -1;
    redraw();
}

void AccessHeatMargin::setShown(bool on)
{
    if (on != m_shown) {
        m_shown = on;
        redraw();
    }
}

void AccessHeatMargin::redraw()
{
    for (int marker = kFirstMarker; marker <= kStaleMarker; ++marker) {
        m_editor->markerDeleteAll(marker);
    }
    m_marks.clear();
    m_stale = false;
    if (!m_report || !m_shown) {
        m_editor->setMarginWidth(kMargin, 0);
        return;
    }
    m_editor->setMarginWidth(kMargin, kWidth);
    const AccessReport &r = *m_report;
    m_stale = m_editor->text() != r.sourceText;
    for (const LineAccess &l : r.summary.lines) {
        if (!ownFile(r, l.path) || l.line <= 0 || l.line > m_editor->lines()) {
            continue;
        }
        Mark m;
        m.heat = accessHeat(l);
        m.tip = lineTip(r, l, m.heat);
        m.handle = m_editor->markerAdd(l.line - 1, m_stale ? kStaleMarker : kFirstMarker + int(m.heat));
        m_marks << m;
    }
}

void AccessHeatMargin::textChanged()
{
    if (!m_report || !m_shown) {
        return; // redraw() judges the text when the markers come back
    }
    // Most edits change the length: only an equal length needs the whole text compared.
    const bool stale = m_editor->length() != m_sourceBytes || m_editor->text() != m_report->sourceText;
    if (stale == m_stale) {
        return;
    }
    if (!stale) {
        // Back to the recorded text (an undo): the report's lines are right again.
        redraw();
        return;
    }
    m_stale = true;
    for (Mark &m : m_marks) {
        const int line = m_editor->markerLine(m.handle);
        m_editor->markerDeleteHandle(m.handle);
        m.handle = line >= 0 ? m_editor->markerAdd(line, kStaleMarker) : -1;
    }
}

const AccessHeatMargin::Mark *AccessHeatMargin::markOn(int line) const
{
    for (const Mark &m : m_marks) {
        if (m.handle >= 0 && m_editor->markerLine(m.handle) == line - 1) {
            return &m;
        }
    }
    return nullptr;
}

std::optional<AccessHeat> AccessHeatMargin::heatAt(int line) const
{
    const Mark *m = markOn(line);
    if (!m || m_stale) {
        return std::nullopt;
    }
    return m->heat;
}

QList<int> AccessHeatMargin::linesOfMarker(int marker) const
{
    QList<int> out;
    for (int l = m_editor->markerFindNext(0, 1u << marker); l >= 0; l = m_editor->markerFindNext(l + 1, 1u << marker)) {
        out << l + 1;
    }
    return out;
}

QList<int> AccessHeatMargin::linesWith(AccessHeat heat) const
{
    return linesOfMarker(kFirstMarker + int(heat));
}

QList<int> AccessHeatMargin::staleLines() const
{
    return linesOfMarker(kStaleMarker);
}

QString AccessHeatMargin::toolTipAt(int line) const
{
    const Mark *m = markOn(line);
    if (!m) {
        return {};
    }
    if (m_stale) {
        return tr("Stale: the source changed after this analysis, so its lines may no longer be these; Analyze "
                  "again.\n%1")
            .arg(m->tip);
    }
    return m_clickable ? m->tip + tr("\nClick to see its instructions in the Memory Access panel.") : m->tip;
}

bool AccessHeatMargin::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() != QEvent::ToolTip || watched != m_editor->viewport() || m_marks.isEmpty()) {
        return QObject::eventFilter(watched, event);
    }
    auto *help = static_cast<QHelpEvent *>(event);
    int left = 0;
    for (int margin = 0; margin < kMargin; ++margin) {
        left += m_editor->marginWidth(margin);
    }
    const int right = left + m_editor->marginWidth(kMargin);
    if (help->pos().x() < left || help->pos().x() >= right) {
        return QObject::eventFilter(watched, event);
    }
    // The line under the pointer, measured at the text's left edge (the margin has no characters).
    const long position = m_editor->SendScintilla(QsciScintilla::SCI_POSITIONFROMPOINT, right, help->pos().y());
    const int line = int(m_editor->SendScintilla(QsciScintilla::SCI_LINEFROMPOSITION, position)) + 1;
    const QString tip = toolTipAt(line);
    if (tip.isEmpty()) {
        QToolTip::hideText();
    } else {
        QToolTip::showText(help->globalPos(), tip, m_editor->viewport());
    }
    return true;
}

} // namespace Kp
