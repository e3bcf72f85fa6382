#include "checkspanel.h"

#include "workbench/projectdocument.h"
#include "workbench/runcontroller.h"
#include "workbench/workbench.h"

#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <cmath>
#include <limits>

namespace Kp {

namespace {

enum Column { NameColumn, ResultColumn, GotColumn, ExpectedColumn, DetailsColumn };
constexpr int kCheckRole = Qt::UserRole + 1;    ///< int: the check's position
constexpr int kMismatchRole = Qt::UserRole + 2; ///< int: the mismatch's row in first, -1 for the check's own row

const QColor kPass(0x2da44e);
const QColor kFail(0xd73a49);
const QColor kPending(0x8c959f);

/** A round badge with a tick or a cross, drawn: no image files. */
QIcon badge(const QColor &color, bool pass, bool pending)
{
    QPixmap pm(32, 32);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(Qt::NoPen);
    p.setBrush(color);
    p.drawEllipse(QRectF(2, 2, 28, 28));
    QPen pen(Qt::white, 4, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin);
    p.setPen(pen);
    if (pending) {
        for (int k = 0; k < 3; ++k) {
            p.drawPoint(QPointF(9 + 7 * k, 16));
        }
    } else if (pass) {
        p.drawPolyline(QPolygonF({QPointF(9, 16.5), QPointF(14, 21.5), QPointF(23, 11)}));
    } else {
        p.drawLine(QPointF(10, 10), QPointF(22, 22));
        p.drawLine(QPointF(22, 10), QPointF(10, 22));
    }
    return QIcon(pm);
}

/** A number for the panel: digits enough to tell values apart (9, float's round trip), errors shorter. */
QString num(double v, int digits = 4)
{
    return std::isfinite(v) ? QString::number(v, 'g', digits) : checkNumberText(v);
}

QString details(const CheckResult &r)
{
    if (r.error) {
        return QObject::tr("not evaluated: %1").arg(r.error->message);
    }
    const QString unit = r.components > 1 ? QObject::tr("values") : QObject::tr("elements");
    QStringList parts;
    if (r.passed) {
        parts << QObject::tr("%1 %2 compared").arg(r.compared).arg(unit);
    } else {
        parts << QObject::tr("%1 of %2 %3 differ (%4 %)")
                     .arg(r.mismatches)
                     .arg(r.compared)
                     .arg(unit, QString::number(r.mismatchFraction() * 100, 'g', 3));
    }
    parts << QObject::tr("max abs err %1").arg(num(r.maxAbsError))
          << QObject::tr("mean abs err %1").arg(num(r.meanAbsError))
          << QObject::tr("max rel err %1").arg(num(r.maxRelError));
    parts << (r.exact ? QObject::tr("exact")
                      : QObject::tr("tolerance abs %1, rel %2, ulp %3")
                            .arg(num(r.tolerance.abs), num(r.tolerance.rel))
                            .arg(r.tolerance.ulp));
    if (r.seedRuns > 1) {
        parts << (r.passed ? QObject::tr("%1 seed runs").arg(r.seedRuns)
                           : QObject::tr("seed run %1 of %2").arg(r.seedRun).arg(r.seedRuns));
    }
    return parts.join(QStringLiteral(" · "));
}

} // namespace

QString ChecksPanel::placeText(const CheckMismatch &m, int axes, int components)
{
    static const char *names[] = {"x", "y", "z"};
    QStringList parts;
    for (int a = 0; a < std::clamp(axes, 1, 3); ++a) {
        parts << QStringLiteral("%1=%2").arg(QLatin1String(names[a])).arg(m.coords[a]);
    }
    if (components > 1) {
        parts << QStringLiteral("c=%1").arg(m.component);
    }
    return QStringLiteral("[%1] (%2)").arg(m.index).arg(parts.join(QStringLiteral(", ")));
}

ChecksPanel::ChecksPanel(QWidget *parent)
    : QWidget(parent)
{
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("checksSummary"));
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_tree = new QTreeWidget(this);
    m_tree->setObjectName(QStringLiteral("checksTree"));
    m_tree->setHeaderLabels({tr("Check / mismatch"), tr("Result"), tr("Got"), tr("Expected"), tr("Details")});
    m_tree->setUniformRowHeights(true);
    m_tree->setAllColumnsShowFocus(true);
    m_tree->header()->setStretchLastSection(true);
    m_tree->setColumnWidth(NameColumn, 240);
    m_tree->setColumnWidth(ResultColumn, 70);
    m_tree->setColumnWidth(GotColumn, 110);
    m_tree->setColumnWidth(ExpectedColumn, 110);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(m_tree, 1);
    connect(m_tree, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem *item) { activate(item); });
    connect(m_tree, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem *item) { activate(item); });
    setNote(tr("Run the project to evaluate its checks."));
}

void ChecksPanel::setNote(const QString &text)
{
    m_outcomes.clear();
    m_tree->clear();
    m_summary->setText(text);
}

void ChecksPanel::setOutcomes(const QList<CheckOutcome> &outcomes)
{
    if (outcomes.isEmpty() && m_outcomes.isEmpty()) {
        return; // cleared while a note says why there is nothing
    }
    m_outcomes = outcomes;
    m_tree->clear();
    int failed = 0;
    int pending = 0;
    for (qsizetype i = 0; i < outcomes.size(); ++i) {
        const CheckOutcome &o = outcomes[i];
        const CheckResult &r = o.result;
        const bool decided = !o.pending;
        const bool pass = decided && r.passed && !r.error;
        failed += decided && !pass;
        pending += !decided;
        auto *item = new QTreeWidgetItem(m_tree);
        item->setData(NameColumn, kCheckRole, int(i));
        item->setData(NameColumn, kMismatchRole, -1);
        item->setText(NameColumn, r.name);
        item->setToolTip(NameColumn, tr("%1 %2 %3").arg(r.buffer, CheckSpec::kindName(r.kind), r.target));
        const QColor color = !decided ? kPending : pass ? kPass : kFail;
        item->setIcon(NameColumn, badge(color, pass, !decided));
        item->setText(ResultColumn, !decided ? tr("checking…") : pass ? tr("PASS") : tr("FAIL"));
        item->setForeground(ResultColumn, color);
        QFont bold = item->font(ResultColumn);
        bold.setBold(true);
        item->setFont(ResultColumn, bold);
        const QString text = (r.compared > 0 || r.error) ? details(r) : QString();
        item->setText(DetailsColumn, !decided && r.compared > 0 ? tr("seed run 0: %1").arg(text) : text);
        item->setToolTip(DetailsColumn, checkResultText(r).trimmed());
        if (r.error || !decided) {
            continue;
        }
        for (qsizetype m = 0; m < r.first.size(); ++m) {
            const CheckMismatch &mm = r.first[m];
            auto *child = new QTreeWidgetItem(item);
            child->setData(NameColumn, kCheckRole, int(i));
            child->setData(NameColumn, kMismatchRole, int(m));
            child->setText(NameColumn, placeText(mm, r.axes, r.components));
            child->setText(GotColumn, num(mm.got, 9));
            child->setText(ExpectedColumn, num(mm.expected, 9));
            const double err = std::isfinite(mm.got) && std::isfinite(mm.expected)
                                   ? std::fabs(mm.got - mm.expected)
                                   : std::numeric_limits<double>::infinity();
            child->setText(DetailsColumn, tr("|got - expected| %1").arg(num(err)));
            child->setToolTip(NameColumn, tr("Show this cell of %1 in the inspector").arg(r.buffer));
            for (int c : {GotColumn, ExpectedColumn}) {
                child->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
            }
        }
        if (r.mismatches > r.first.size()) {
            auto *more = new QTreeWidgetItem(item);
            more->setData(NameColumn, kCheckRole, int(i));
            more->setData(NameColumn, kMismatchRole, -1);
            more->setText(NameColumn, tr("… %1 more").arg(r.mismatches - r.first.size()));
            more->setForeground(NameColumn, kPending);
        }
        item->setExpanded(!pass);
    }
    const int n = int(outcomes.size());
    if (n == 0) {
        m_summary->setText(tr("No results: run the project to evaluate its checks."));
    } else if (pending > 0) {
        m_summary->setText(tr("Checking… %1 of %2 decided").arg(n - pending).arg(n) +
                           (failed ? tr(", %n failed", nullptr, failed) : QString()));
    } else if (failed > 0) {
        m_summary->setText(tr("<b style='color:%1'>%2 of %3 checks failed</b>").arg(kFail.name()).arg(failed).arg(n));
    } else {
        // No translation is loaded, so "%n check(s)" would show as written: spell both numbers.
        m_summary->setText(n == 1 ? tr("<b style='color:%1'>The check passed</b>").arg(kPass.name())
                                  : tr("<b style='color:%1'>All %2 checks passed</b>").arg(kPass.name()).arg(n));
    }
}

QString ChecksPanel::summaryText() const
{
    return m_summary->text();
}

QTreeWidgetItem *ChecksPanel::checkItem(int check) const
{
    return m_tree->topLevelItem(check);
}

QTreeWidgetItem *ChecksPanel::mismatchItem(int check, int mismatch) const
{
    QTreeWidgetItem *item = checkItem(check);
    return item && mismatch >= 0 && mismatch < item->childCount() ? item->child(mismatch) : nullptr;
}

void ChecksPanel::activate(QTreeWidgetItem *item)
{
    if (!item) {
        return;
    }
    const int check = item->data(NameColumn, kCheckRole).toInt();
    const int m = item->data(NameColumn, kMismatchRole).toInt();
    if (check < 0 || check >= m_outcomes.size()) {
        return;
    }
    const CheckResult &r = m_outcomes[check].result;
    if (m >= 0 && m < r.first.size()) {
        const auto &c = r.first[m].coords;
        Q_EMIT mismatchActivated(check, r.buffer, r.first[m].index, {c[0], c[1], c[2]});
    } else {
        Q_EMIT checkActivated(check);
    }
}

ChecksPanel::ChecksPanel(Workbench &wb, QWidget *parent)
    : ChecksPanel(parent)
{
    const auto noteFor = [this](const Project &p) {
        // Before a run the note names the checks, so a student knows what will be judged.
        QStringList names;
        for (const CheckSpec &c : p.checks) {
            names << c.displayName();
        }
        setNote(p.checks.isEmpty()     ? tr("This project has no checks (\"checks\" in the .kpg).")
                : p.checks.size() == 1 ? tr("1 check: %1. Run the project to evaluate it.").arg(names.first())
                                       : tr("%1 checks: %2. Run the project to evaluate them.")
                                             .arg(p.checks.size())
                                             .arg(names.join(QStringLiteral("; "))));
    };
    ProjectDocument &doc = wb.document();
    connect(&doc, &ProjectDocument::loaded, this, [noteFor, &doc] { noteFor(doc.project()); });
    if (doc.isOpen()) {
        noteFor(doc.project()); // built after the project opened (shell/docks.h)
    }
    connect(&wb.runs(), &RunController::started, this, [this, &doc](bool play) {
        if (!doc.project().checks.isEmpty()) {
            setNote(play ? tr("Playing: checks are evaluated after a Run, not for Play or Step frames.")
                         : tr("Running… the checks follow the run."));
        }
    });
    connect(&wb, &Workbench::runFailed, this,
            [this] { setNote(tr("The run failed before the GPU: checks were not evaluated.")); });
    connect(&wb, &Workbench::runFinished, this, [this, noteFor, &wb](const RunResult &r, RunKind kind) {
        if (kind == RunKind::Frame) {
            return; // frames continue from the last state: checks describe a Run
        }
        if (r.error) {
            setNote(tr("The run failed (%1): checks were not evaluated.").arg(Error::codeName(r.error->code)));
        } else if (wb.runs().lastRunProject().checks.isEmpty()) {
            noteFor(wb.runs().lastRunProject());
        }
    });
    connect(&wb.checks(), &CheckRunner::evaluated, this, [this, &wb](const QList<CheckOutcome> &list) {
        setOutcomes(list);
        for (const CheckOutcome &o : list) {
            if (!o.pending && (!o.result.passed || o.result.error)) {
                wb.requestAttention(PanelId::Checks, Attention::CheckFailed); // the news of this run
                break;
            }
        }
    });
    if (!wb.checks().outcomes().isEmpty()) {
        setOutcomes(wb.checks().outcomes()); // built after they were evaluated (shell/docks.h)
    }
    connect(this, &ChecksPanel::mismatchActivated, &wb,
            [&wb](int, const QString &buffer, qint64 index) { wb.requestBuffer(buffer, InspectorView::Grid, index); });
    connect(this, &ChecksPanel::checkActivated, &wb, [this, &wb](int check) {
        const CheckOutcome &o = outcomes().value(check);
        wb.requestFailedCells(o.result.name, o.result.buffer);
    });
}

} // namespace Kp
