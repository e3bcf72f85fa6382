#include "panels/memory/memorypanel.h"

#include "workbench/projectdocument.h"
#include "workbench/workbench.h"

#include "workbench/memorycheck.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QHelpEvent>
#include <QLabel>
#include <QMap>
#include <QMouseEvent>
#include <QPainter>
#include <QSplitter>
#include <QToolTip>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace Kp {

namespace {

using Finding = Sanitizer::Finding;

// Item data: what activating an item does.
constexpr int kRoleFinding = Qt::UserRole + 1; ///< index into the report's findings
constexpr int kRoleGuard = Qt::UserRole + 2;   ///< index into the guard violations
constexpr int kRoleShowAll = Qt::UserRole + 3; ///< the kind whose "Show all" this is

constexpr int kMargin = 4;
constexpr int kLabelWidth = 44; ///< the row's first offset

QString location(const Finding &f)
{
    if (f.where.line <= 0) {
        return f.where.function;
    }
    return QStringLiteral("%1:%2").arg(QFileInfo(f.where.path).fileName()).arg(f.where.line);
}

} // namespace

// ---------------------------------------------------------------------------

SharedMemoryGrid::SharedMemoryGrid(QWidget *parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

void SharedMemoryGrid::setHazards(const QList<Sanitizer::Finding> &hazards, qint64 sharedBytes)
{
    m_counts.clear();
    m_max = 0;
    m_words = (std::max<qint64>(0, sharedBytes) + kWordBytes - 1) / kWordBytes;
    for (const Finding &f : hazards) {
        if (f.kind != Finding::Kind::Hazard) {
            continue;
        }
        const qint64 word = f.sharedByte() / kWordBytes;
        m_max = std::max(m_max, ++m_counts[word]);
        m_words = std::max(m_words, word + 1);
    }
    // Whole rows: a bank is a column.
    m_words = (m_words + kBanks - 1) / kBanks * kBanks;
    if (m_selected >= m_words) {
        m_selected = -1;
    }
    updateGeometry();
    update();
}

int SharedMemoryGrid::cellSize() const
{
    const int w = width() - 2 * kMargin - kLabelWidth;
    return std::clamp(w / kBanks, 4, 18);
}

QRect SharedMemoryGrid::cellRect(qint64 word) const
{
    const int c = cellSize();
    const int row = int(word / kBanks);
    const int col = int(word % kBanks);
    return QRect(kMargin + kLabelWidth + col * c, kMargin + row * c, c - 1, c - 1);
}

qint64 SharedMemoryGrid::wordAt(const QPoint &pos) const
{
    const int c = cellSize();
    const int x = pos.x() - kMargin - kLabelWidth;
    const int y = pos.y() - kMargin;
    if (x < 0 || y < 0 || x >= c * kBanks) {
        return -1;
    }
    const qint64 word = qint64(y / c) * kBanks + x / c;
    return word < m_words ? word : -1;
}

QSize SharedMemoryGrid::sizeHint() const
{
    const qint64 rows = std::max<qint64>(1, m_words / kBanks);
    return QSize(kLabelWidth + 2 * kMargin + kBanks * 12, int(std::min<qint64>(rows, 64)) * 12 + 2 * kMargin);
}

QSize SharedMemoryGrid::minimumSizeHint() const
{
    // Up to 8 rows (1 KiB) whole at the current cell size, so a short dock still shows a float array's block.
    const qint64 rows = std::clamp<qint64>(m_words / kBanks, 1, 8);
    return QSize(kLabelWidth + 2 * kMargin + kBanks * 4, int(rows) * cellSize() + 2 * kMargin);
}

void SharedMemoryGrid::selectWord(qint64 word)
{
    m_selected = word >= 0 && word < m_words ? word : -1;
    update();
}

void SharedMemoryGrid::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    const QPalette &pal = palette();
    p.fillRect(rect(), pal.color(QPalette::Base));
    if (m_words == 0) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, tr("No hazards in shared memory"));
        return;
    }
    const int c = cellSize();
    const QColor hot(220, 60, 40); // the red of errors, readable on light and dark bases
    const QColor empty = pal.color(QPalette::AlternateBase);
    const qint64 rows = m_words / kBanks;
    for (qint64 row = 0; row < rows; ++row) {
        const int y = kMargin + int(row) * c;
        if (y > height()) {
            break;
        }
        // Every fourth row says its byte offset, so a student can find sdata[i] (offset 4 i).
        if (row % 4 == 0 && c >= 6) {
            p.setPen(pal.color(QPalette::PlaceholderText));
            QFont f = p.font();
            f.setPointSizeF(std::max(6.0, f.pointSizeF() * 0.8));
            p.setFont(f);
            p.drawText(QRect(kMargin, y - 2, kLabelWidth - 4, c * 2), Qt::AlignRight | Qt::AlignTop,
                       QString::number(row * kBanks * kWordBytes));
        }
        for (int col = 0; col < kBanks; ++col) {
            const qint64 word = row * kBanks + col;
            const QRect r = cellRect(word);
            const int n = m_counts.value(word, 0);
            if (n == 0) {
                p.fillRect(r, empty);
                continue;
            }
            // Lighter for few hazards, full for the word with the most.
            const double t = m_max > 1 ? 0.35 + 0.65 * double(n - 1) / double(m_max - 1) : 1.0;
            QColor fill = hot;
            fill.setAlphaF(float(t));
            p.fillRect(r, pal.color(QPalette::Base));
            p.fillRect(r, fill);
        }
    }
    if (m_selected >= 0) {
        p.setPen(QPen(pal.color(QPalette::WindowText), 2));
        p.drawRect(cellRect(m_selected).adjusted(-1, -1, 1, 1));
    }
}

void SharedMemoryGrid::mousePressEvent(QMouseEvent *event)
{
    const qint64 word = wordAt(event->position().toPoint());
    if (word >= 0) {
        selectWord(word);
        Q_EMIT wordSelected(word);
    }
}

bool SharedMemoryGrid::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const qint64 word = wordAt(help->pos());
        if (word < 0) {
            QToolTip::hideText();
            event->ignore();
            return true;
        }
        QToolTip::showText(help->globalPos(),
                           tr("bytes %1..%2 (float index %3), bank %4: %5 hazards")
                               .arg(word * kWordBytes)
                               .arg(word * kWordBytes + kWordBytes - 1)
                               .arg(word)
                               .arg(word % kBanks)
                               .arg(m_counts.value(word, 0)),
                           this, cellRect(word));
        return true;
    }
    return QWidget::event(event);
}

// ---------------------------------------------------------------------------

MemoryPanel::MemoryPanel(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("memorySummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);

    m_split = new QSplitter(Qt::Horizontal, this);
    layout->addWidget(m_split, 1);
    m_tree = new QTreeWidget(m_split);
    m_tree->setObjectName(QStringLiteral("memoryFindings"));
    m_tree->setColumnCount(2);
    m_tree->setHeaderLabels({tr("Finding"), tr("Where")});
    m_tree->header()->setStretchLastSection(false);
    m_tree->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_tree->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_tree->setUniformRowHeights(true);
    m_tree->setToolTip(tr("Double-click or Enter: go to the source line and the buffer element"));
    connect(m_tree, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem *item) { activate(item); });
    connect(m_tree, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem *item) {
        // A hazard chosen in the list shows its word in the grid.
        if (!item || !m_run || !m_run->report) {
            return;
        }
        const QVariant v = item->data(0, kRoleFinding);
        if (!v.isValid()) {
            return;
        }
        const Finding &f = m_run->report->findings.at(v.toInt());
        if (f.kind == Finding::Kind::Hazard) {
            const qint64 word = f.sharedByte() / SharedMemoryGrid::kWordBytes;
            m_grid->selectWord(word);
            showPairs(word);
        }
    });

    m_sharedBox = new QWidget(m_split);
    auto *shared = new QVBoxLayout(m_sharedBox);
    shared->setContentsMargins(0, 0, 0, 0);
    m_sharedLabel = new QLabel(m_sharedBox);
    m_sharedLabel->setWordWrap(true);
    shared->addWidget(m_sharedLabel);
    // The grid over the pairs of the chosen word; beside the findings, so a short dock shows both.
    auto *gridAndPairs = new QSplitter(Qt::Vertical, m_sharedBox);
    m_grid = new SharedMemoryGrid(gridAndPairs);
    m_grid->setObjectName(QStringLiteral("sharedMemoryGrid"));
    m_pairs = new QTreeWidget(gridAndPairs);
    m_pairs->setObjectName(QStringLiteral("hazardPairs"));
    m_pairs->setColumnCount(5);
    m_pairs->setHeaderLabels({tr("Type"), tr("Thread"), tr("Other thread"), tr("Block"), tr("Bytes")});
    m_pairs->setRootIsDecorated(false);
    m_pairs->setUniformRowHeights(true);
    gridAndPairs->setStretchFactor(0, 1);
    gridAndPairs->setStretchFactor(1, 1);
    shared->addWidget(gridAndPairs, 1);
    m_split->setStretchFactor(0, 3);
    m_split->setStretchFactor(1, 2);
    connect(m_grid, &SharedMemoryGrid::wordSelected, this, &MemoryPanel::showPairs);
    m_sharedBox->hide();
    rebuild();
}

void MemoryPanel::setGuardViolations(const QList<GuardViolation> &violations)
{
    m_guards = violations;
    m_ranSince = true;
    rebuild();
}

void MemoryPanel::setChecking(Sanitizer::Tool tool)
{
    m_checking = Sanitizer::toolName(tool);
    rebuild();
}

void MemoryPanel::setCheck(const SanitizedRun &run, Sanitizer::Tool tool)
{
    m_checking.clear();
    m_run = run;
    m_tool = tool;
    m_expanded.clear();
    QList<Finding> hazards;
    if (run.report) {
        for (const Finding &f : run.report->findings) {
            if (f.kind == Finding::Kind::Hazard) {
                hazards << f;
            }
        }
    }
    // The block's whole shared memory, so untouched words show too: the largest kernel step's.
    qint64 sharedBytes = 0;
    for (const StepResult &st : run.checked.run.steps) {
        if (st.kind == QLatin1String("kernel")) {
            sharedBytes = std::max(sharedBytes, st.sharedBytes + st.limits.staticSharedBytes);
        }
    }
    m_grid->setHazards(hazards, sharedBytes);
    m_pairs->clear();
    m_sharedBox->setVisible(!hazards.isEmpty());
    if (!hazards.isEmpty()) {
        m_sharedLabel->setText(tr("Shared memory of one block (%1 bytes), 4 bytes a cell, 32 banks a row: %2 "
                                  "hazards on %3 words. Click a cell for its thread pairs.")
                                   .arg(m_grid->words() * SharedMemoryGrid::kWordBytes)
                                   .arg(hazards.size())
                                   .arg(m_grid->counts().size()));
        // The busiest word first, so the pairs list is never empty when the grid shows.
        auto busiest = std::max_element(m_grid->counts().cbegin(), m_grid->counts().cend());
        if (busiest != m_grid->counts().cend()) {
            m_grid->selectWord(busiest.key());
            showPairs(busiest.key());
        }
    }
    rebuild();
}

void MemoryPanel::clear()
{
    m_guards.clear();
    m_ranSince = false;
    m_run.reset();
    m_checking.clear();
    m_expanded.clear();
    m_grid->setHazards({});
    m_pairs->clear();
    m_sharedBox->hide();
    rebuild();
}

void MemoryPanel::showAll(Sanitizer::Finding::Kind kind)
{
    if (!m_expanded.contains(kind)) {
        m_expanded << kind;
    }
    rebuild();
}

void MemoryPanel::rebuild()
{
    m_tree->clear();
    QStringList summary;
    if (!m_checking.isEmpty()) {
        summary << tr("Checking memory with %1 (one run under compute-sanitizer)…").arg(m_checking);
    }
    // The guard zones of the last run: cheap, always on.
    if (!m_guards.isEmpty()) {
        auto *top = new QTreeWidgetItem(m_tree, {tr("Guard zones: %1 writes outside a buffer").arg(m_guards.size())});
        top->setExpanded(true);
        for (qsizetype i = 0; i < m_guards.size(); ++i) {
            auto *item = new QTreeWidgetItem(top, {m_guards[i].message(), m_guards[i].buffer});
            item->setData(0, kRoleGuard, int(i));
            item->setToolTip(0, m_guards[i].message());
        }
        QStringList buffers;
        for (const GuardViolation &v : m_guards) {
            if (!buffers.contains(v.buffer)) {
                buffers << v.buffer;
            }
        }
        summary << (m_guards.size() == 1
                        ? tr("The last run wrote outside `%1` once (its guard zone caught it).").arg(buffers.first())
                        : tr("The last run wrote outside its buffers %1 times (%2); the guard "
                             "zones caught it.")
                              .arg(m_guards.size())
                              .arg(buffers.join(QStringLiteral(", "))));
    }
    if (m_run) {
        const QString tool = Sanitizer::toolName(m_tool);
        if (m_run->reportError || !m_run->report) {
            const std::optional<Error> &e = m_run->reportError ? m_run->reportError : m_run->checked.error;
            summary << tr("Check memory (%1) failed: %2").arg(tool, e ? e->message : tr("no report"));
        } else if (m_run->report->findings.isEmpty()) {
            summary << tr("Check memory (%1): no findings.").arg(tool);
        } else {
            QMap<int, int> counts;
            for (const Finding &f : m_run->report->findings) {
                ++counts[int(f.kind)];
            }
            QStringList parts;
            for (auto it = counts.cbegin(); it != counts.cend(); ++it) {
                const auto kind = Finding::Kind(it.key());
                parts << sanitizerKindCount(kind, it.value());
                auto *top = new QTreeWidgetItem(
                    m_tree, {QStringLiteral("%1: %2").arg(sanitizerKindWords(kind)).arg(it.value())});
                top->setExpanded(true);
                fillKind(top, kind, m_expanded.contains(kind));
            }
            summary << tr("Check memory (%1): %2.").arg(tool, parts.join(QStringLiteral(", ")));
            if (m_run->report->findings.size() >= SanitizeOptions{}.printLimit) {
                summary << tr("compute-sanitizer records at most %1 findings: there may be more.")
                               .arg(SanitizeOptions{}.printLimit);
            }
        }
    }
    if (summary.isEmpty()) {
        // "Nothing found" only once something looked: before a run nothing has.
        summary << (m_ranSince ? tr("Nothing found.") : tr("Nothing checked yet."))
                << tr("Every run checks the guard zones around the buffers; Build > Check Memory "
                      "runs the project once under compute-sanitizer (memcheck, racecheck, initcheck, synccheck).");
    }
    m_summary->setText(summary.join(QLatin1Char(' ')));
}

void MemoryPanel::fillKind(QTreeWidgetItem *parent, Sanitizer::Finding::Kind kind, bool all)
{
    const QList<Finding> &findings = m_run->report->findings;
    int shown = 0;
    int total = 0;
    for (qsizetype i = 0; i < findings.size(); ++i) {
        const Finding &f = findings[i];
        if (f.kind != kind) {
            continue;
        }
        ++total;
        if (!all && shown >= kFirstN) {
            continue;
        }
        ++shown;
        auto *item = new QTreeWidgetItem(parent, {f.summary(), location(f)});
        item->setData(0, kRoleFinding, int(i));
        item->setToolTip(0, f.text.isEmpty() ? f.summary() : f.text + QLatin1Char('\n') + f.summary());
    }
    if (shown < total) {
        auto *more = new QTreeWidgetItem(parent, {tr("Show all %1 (%2 more)").arg(total).arg(total - shown)});
        more->setData(0, kRoleShowAll, int(kind));
        more->setToolTip(0, tr("Lists every %1").arg(sanitizerKindWords(kind)));
        QFont f = more->font(0);
        f.setItalic(true);
        more->setFont(0, f);
    }
}

void MemoryPanel::showPairs(qint64 word)
{
    m_pairs->clear();
    if (!m_run || !m_run->report) {
        return;
    }
    // racecheck reports a hazard per byte: a float's four bytes are one pair of accesses.
    struct Pair
    {
        const Finding *first = nullptr;
        int bytes = 0;
    };
    QMap<QString, Pair> pairs;
    for (const Finding &f : m_run->report->findings) {
        if (f.kind != Finding::Kind::Hazard || f.sharedByte() / SharedMemoryGrid::kWordBytes != word) {
            continue;
        }
        const QString key = QStringLiteral("%1 %2 %3 %4 %5 %6")
                                .arg(f.hazardType, f.thread.text(), f.otherThread.text(), f.block.text())
                                .arg(f.where.line)
                                .arg(f.other.line);
        Pair &p = pairs[key];
        if (!p.first) {
            p.first = &f;
        }
        ++p.bytes;
    }
    for (const Pair &p : pairs) {
        const Finding &f = *p.first;
        auto *item = new QTreeWidgetItem(
            m_pairs,
            {f.hazardType, QStringLiteral("%1 %2 (line %3)").arg(f.thread.text(), f.ownDirection).arg(f.where.line),
             QStringLiteral("%1 %2 (line %3)").arg(f.otherThread.text(), f.otherDirection).arg(f.other.line),
             f.block.text(), QString::number(p.bytes)});
        item->setToolTip(0, f.summary());
    }
    for (int c = 0; c < m_pairs->columnCount(); ++c) {
        m_pairs->resizeColumnToContents(c);
    }
}

void MemoryPanel::activate(QTreeWidgetItem *item)
{
    if (!item) {
        return;
    }
    if (const QVariant kind = item->data(0, kRoleShowAll); kind.isValid()) {
        showAll(Finding::Kind(kind.toInt()));
        return;
    }
    if (const QVariant g = item->data(0, kRoleGuard); g.isValid()) {
        const GuardViolation &v = m_guards.at(g.toInt());
        Q_EMIT elementActivated(v.buffer, v.edgeElement());
        return;
    }
    const QVariant fi = item->data(0, kRoleFinding);
    if (!fi.isValid() || !m_run || !m_run->report) {
        return;
    }
    const Finding &f = m_run->report->findings.at(fi.toInt());
    if (f.where.line > 0) {
        Q_EMIT sourceLineActivated(f.where.line, f.other.line);
    }
    if (!f.buffer.isEmpty() && f.element >= 0) {
        Q_EMIT elementActivated(f.buffer, f.element);
    }
}

MemoryPanel::MemoryPanel(Workbench &wb, QWidget *parent)
    : MemoryPanel(parent)
{
    ProjectDocument &doc = wb.document();
    connect(&doc, &ProjectDocument::loaded, this, &MemoryPanel::clear);
    connect(&wb, &Workbench::runFinished, this, [this, &wb, &doc](const RunResult &r, RunKind kind) {
        setGuardViolations(r.guardViolations);
        if (r.guardViolations.isEmpty() || kind == RunKind::Frame) {
            return;
        }
        wb.requestAttention(PanelId::Memory, Attention::GuardHit);
        // The first buffer written past, at the edge element the write went beyond.
        const GuardViolation &v = r.guardViolations.first();
        if (const HostBuffer *b = doc.bufferShapes().find(v.buffer); b && b->elementCount() > 0) {
            wb.requestBuffer(v.buffer, InspectorView::Grid, v.edgeElement());
        }
    });
    connect(&wb, &Workbench::memoryCheckStarted, this, &MemoryPanel::setChecking);
    connect(&wb, &Workbench::memoryCheckFinished, this, [this, &wb](const SanitizedRun &run, Sanitizer::Tool tool) {
        setCheck(run, tool);
        wb.requestAttention(PanelId::Memory, Attention::Findings);
    });
    connect(this, &MemoryPanel::sourceLineActivated, &wb, [&wb](int line, int otherLine) {
        // A race's two lines, marked together.
        wb.requestSourceLine(line, 1, otherLine > 0 ? qMin(line, otherLine) : line,
                             otherLine > 0 ? qMax(line, otherLine) : line);
    });
    connect(this, &MemoryPanel::elementActivated, &wb, [&wb, &doc](const QString &buffer, qint64 element) {
        if (doc.bufferShapes().find(buffer)) {
            wb.requestBuffer(buffer, InspectorView::Grid, element);
        }
    });
}

} // namespace Kp
