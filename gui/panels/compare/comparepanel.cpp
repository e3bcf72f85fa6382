#include "panels/compare/comparepanel.h"

#include "workbench/workbench.h"

#include "compare/linediff.h"
#include "core/format.h"
#include "plots/comparechart.h"

#include <QComboBox>
#include <QEvent>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextBlock>
#include <QVBoxLayout>

namespace Kp {

namespace {

QString runTitle(const RunRecord &r)
{
    const TimingStats st = r.stats();
    QString t = QStringLiteral("#%1 %2 (%3)").arg(r.number).arg(r.kernel, r.displayLabel());
    if (st.count > 0) {
        t += QStringLiteral(", median %1").arg(formatDuration(st.medianMs));
    } else if (r.failed()) {
        t += QStringLiteral(", failed");
    }
    return t;
}

const char *const kRule =
    "The verdict on B (candidate) against A (baseline), after nvbench's robust comparison "
    "(docs/compare.md):\n"
    "d = (median B - median A) / median A; each run's interval is [min, q3], its fastest sample up to the "
    "third quartile.\n"
    "1. fewer than 5 samples on a side: ambiguous;\n"
    "2. |d| under 1 %: same;\n"
    "3. the intervals apart: faster when B's lies below A's, slower when above;\n"
    "4. otherwise (they overlap): ambiguous, the difference cannot be confirmed.";

} // namespace

ComparePanel::ComparePanel(RunHistoryModel *model, QWidget *parent)
    : QWidget(parent)
    , m_model(model)
{
    m_a = new QComboBox;
    m_a->setObjectName(QStringLiteral("compareA"));
    m_a->setToolTip(tr("A: the baseline run"));
    m_b = new QComboBox;
    m_b->setObjectName(QStringLiteral("compareB"));
    m_b->setToolTip(tr("B: the candidate run, judged against A"));
    m_verdict = new QLabel;
    m_verdict->setObjectName(QStringLiteral("compareVerdict"));
    QFont big = m_verdict->font();
    big.setBold(true);
    m_verdict->setFont(big);
    m_verdict->setToolTip(QString::fromLatin1(kRule));
    m_reason = new QLabel;
    m_reason->setObjectName(QStringLiteral("compareReason"));
    m_reason->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_reason->setToolTip(QString::fromLatin1(kRule));

    m_chart = new DistributionChart;
    m_chart->setObjectName(QStringLiteral("compareDistributions"));
    m_diff = new QPlainTextEdit;
    m_diff->setObjectName(QStringLiteral("compareDiff"));
    m_diff->setReadOnly(true);
    m_diff->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_diff->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_resources = new QTableWidget(0, 7);
    m_resources->setObjectName(QStringLiteral("compareResources"));
    m_resources->setHorizontalHeaderLabels({tr("Kernel"), tr("Registers A"), tr("Registers B"), tr("Spills A (B)"),
                                            tr("Spills B (B)"), tr("Shared A (B)"), tr("Shared B (B)")});
    m_resources->verticalHeader()->hide();
    m_resources->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_resources->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_tabs = new QTabWidget;
    m_tabs->setObjectName(QStringLiteral("compareTabs"));
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(m_chart, tr("Distributions"));
    m_tabs->addTab(m_diff, tr("Source diff"));
    m_tabs->addTab(m_resources, tr("Resources"));

    auto *pick = new QHBoxLayout;
    pick->addWidget(new QLabel(tr("A")));
    pick->addWidget(m_a, 1);
    pick->addWidget(new QLabel(tr("B")));
    pick->addWidget(m_b, 1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(3);
    // The bottom dock is short at 1280x800: verdict and its numbers share a line, the tabs may shrink.
    auto *verdictRow = new QHBoxLayout;
    verdictRow->addWidget(m_verdict);
    verdictRow->addWidget(m_reason, 1);
    // One line, cut to the dock's width: wrapped, it took the distributions'
    // height; whole, it asked for 830 pixels and widened the window past a
    // 1280 screen at the second timed run.
    m_reason->setWordWrap(false);
    m_reason->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_reason->installEventFilter(this);
    layout->addLayout(pick);
    layout->addLayout(verdictRow);
    layout->addWidget(m_tabs, 1);
    // Below about 140 pixels Qt Charts cuts every tick label of the
    // distributions to "...": the dock grows to this rather than show that.
    m_tabs->setMinimumHeight(140);

    connect(m_a, &QComboBox::activated, this, [this] { m_chosen = true; });
    connect(m_b, &QComboBox::activated, this, [this] { m_chosen = true; });
    connect(m_a, &QComboBox::currentIndexChanged, this, [this] { update(); });
    connect(m_b, &QComboBox::currentIndexChanged, this, [this] { update(); });
    connect(m_model, &QAbstractItemModel::rowsInserted, this, &ComparePanel::refillChoosers);
    connect(m_model, &QAbstractItemModel::modelReset, this, &ComparePanel::refillChoosers);
    refillChoosers();
}

void ComparePanel::setReason(const QString &text)
{
    m_reasonText = text;
    fitReason();
}

void ComparePanel::fitReason()
{
    const QString shown = m_reason->fontMetrics().elidedText(m_reasonText, Qt::ElideRight, m_reason->width());
    m_reason->setText(shown);
    m_reason->setToolTip(shown == m_reasonText ? QString::fromLatin1(kRule)
                                               : m_reasonText + QStringLiteral("\n\n") + QString::fromLatin1(kRule));
}

bool ComparePanel::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_reason && event->type() == QEvent::Resize) {
        fitReason();
    }
    return QWidget::eventFilter(watched, event);
}

void ComparePanel::refillChoosers()
{
    const int a = m_a->currentData().toInt();
    const int b = m_b->currentData().toInt();
    m_filling = true;
    m_a->clear();
    m_b->clear();
    for (int row = 0; row < m_model->rowCount(); ++row) {
        const RunRecord &r = m_model->record(row);
        m_a->addItem(runTitle(r), r.number);
        m_b->addItem(runTitle(r), r.number);
    }
    if (!m_chosen && m_a->count() >= 2) {
        // Until a choice is made: the last run against the one before it, the comparison wanted most.
        m_a->setCurrentIndex(m_a->count() - 2);
        m_b->setCurrentIndex(m_b->count() - 1);
    } else {
        m_a->setCurrentIndex(std::max(0, m_a->findData(a)));
        m_b->setCurrentIndex(std::max(0, m_b->findData(b)));
    }
    m_filling = false;
    update();
}

void ComparePanel::compareRows(int a, int b)
{
    m_chosen = true;
    m_filling = true;
    m_a->setCurrentIndex(a);
    m_b->setCurrentIndex(b);
    m_filling = false;
    update();
}

QString ComparePanel::verdictText() const
{
    if (!m_compared) {
        return {};
    }
    const Comparison &c = m_comparison;
    switch (c.verdict) {
    case Verdict::Faster: return tr("FASTER: B is %1x as fast as A").arg(c.ratio, 0, 'f', 3);
    case Verdict::Slower: return tr("SLOWER: B takes %1x A's time").arg(1.0 / c.ratio, 0, 'f', 3);
    case Verdict::Same: return tr("SAME: the medians differ by %1 %").arg(c.relativeDifference * 100, 0, 'f', 2);
    case Verdict::Ambiguous: return tr("AMBIGUOUS: the difference cannot be confirmed");
    }
    return {};
}

void ComparePanel::update()
{
    if (m_filling) {
        return;
    }
    const int ia = m_a->currentIndex();
    const int ib = m_b->currentIndex();
    m_compared = false;
    m_sourceDiff.clear();
    m_optionDiff.clear();
    m_resourceLines.clear();
    m_resources->setRowCount(0);
    if (ia < 0 || ib < 0 || ia >= m_model->rowCount() || ib >= m_model->rowCount()) {
        m_verdict->setText(tr("Choose two runs (Results: select two rows, or a row's \"Compare with...\")"));
        setReason({});
        m_diff->clear();
        m_chart->clear(tr("Choose two runs to compare"));
        return;
    }
    if (m_model->rowCount() < 2 || ia == ib) {
        // A run against itself says nothing: ask for what makes a comparison.
        m_verdict->setText(m_model->rowCount() < 2
                               ? tr("Compare needs two runs; there is one so far. Change something and run again.")
                               : tr("A and B are the same run (#%1): choose another run for one of them.")
                                     .arg(m_model->record(ia).number));
        setReason({});
        m_diff->clear();
        m_chart->clear(tr("Two runs are compared here"));
        return;
    }
    const RunRecord &a = m_model->record(ia);
    const RunRecord &b = m_model->record(ib);

    // The verdict, from every sample of both runs.
    if (a.result.samplesMs.isEmpty() || b.result.samplesMs.isEmpty()) {
        m_verdict->setText(tr("No verdict: %1 has no timing samples")
                               .arg(a.result.samplesMs.isEmpty() ? QStringLiteral("A") : QStringLiteral("B")));
        setReason(a.failed() || b.failed() ? tr("A failed run has no samples; compare two timed runs.")
                                           : tr("Run timed (not Play or Step) to take samples."));
    } else {
        m_comparison = compareSamples(a.result.samplesMs, b.result.samplesMs);
        m_compared = true;
        m_verdict->setText(verdictText());
        setReason(m_comparison.reason);
    }
    m_chart->showPair(a, b);

    // Source and compile options.
    QStringList diffText;
    const QList<DiffLine> options = diffLines(a.compileOptions, b.compileOptions);
    for (const DiffLine &d : options) {
        if (d.kind != DiffLine::Kind::Same) {
            m_optionDiff << (d.kind == DiffLine::Kind::Added ? QStringLiteral("+ ") : QStringLiteral("- ")) + d.text;
        }
    }
    if (a.source.isEmpty() || b.source.isEmpty()) {
        diffText << tr("(the source of %1 was not kept)").arg(a.source.isEmpty() ? tr("A") : tr("B"));
    } else {
        // Lines as diff counts them: a final newline ends the last line, it does not start another.
        const auto lines = [](const QString &text) {
            QStringList l = text.split(QLatin1Char('\n'));
            if (!l.isEmpty() && l.last().isEmpty()) {
                l.removeLast();
            }
            return l;
        };
        m_sourceDiff = unifiedDiff(diffLines(lines(a.source), lines(b.source)), QStringLiteral("A (#%1)").arg(a.number),
                                   QStringLiteral("B (#%1)").arg(b.number));
        diffText << (m_sourceDiff.isEmpty() ? tr("The sources are the same.") : m_sourceDiff.trimmed());
    }
    diffText << QString()
             << (m_optionDiff.isEmpty() ? tr("The compile options are the same.")
                                        : tr("Compile options:\n%1").arg(m_optionDiff.join('\n')));
    m_diff->setPlainText(diffText.join(QLatin1Char('\n')));
    // Colour the diff's lines as every diff viewer does.
    QList<QTextEdit::ExtraSelection> marks;
    const QColor base = palette().color(QPalette::Base);
    const bool dark = base.lightness() < 128;
    for (QTextBlock block = m_diff->document()->begin(); block.isValid(); block = block.next()) {
        const QString t = block.text();
        QColor colour;
        if (t.startsWith(QLatin1Char('+')) && !t.startsWith(QLatin1String("+++"))) {
            colour = dark ? QColor(0x1e, 0x4d, 0x2b) : QColor(0xdc, 0xf5, 0xe0);
        } else if (t.startsWith(QLatin1Char('-')) && !t.startsWith(QLatin1String("---"))) {
            colour = dark ? QColor(0x5c, 0x22, 0x25) : QColor(0xfb, 0xe0, 0xe0);
        } else if (t.startsWith(QLatin1String("@@"))) {
            colour = dark ? QColor(0x24, 0x3b, 0x5a) : QColor(0xe4, 0xee, 0xfb);
        } else {
            continue;
        }
        QTextEdit::ExtraSelection sel;
        sel.cursor = QTextCursor(block);
        sel.format.setBackground(colour);
        sel.format.setProperty(QTextFormat::FullWidthSelection, true);
        marks << sel;
    }
    m_diff->setExtraSelections(marks);

    // Resources, per kernel of either run.
    QStringList kernels = a.resources.keys();
    for (const QString &k : b.resources.keys()) {
        if (!kernels.contains(k)) {
            kernels << k;
        }
    }
    const auto cell = [](bool known, int v) { return known ? QString::number(v) : QStringLiteral("-"); };
    for (const QString &k : kernels) {
        const KernelResources ra = a.resources.value(k);
        const KernelResources rb = b.resources.value(k);
        const int row = m_resources->rowCount();
        m_resources->insertRow(row);
        const QStringList cells{k,
                                cell(ra.known, ra.registers),
                                cell(rb.known, rb.registers),
                                cell(ra.known, ra.spillStores + ra.spillLoads),
                                cell(rb.known, rb.spillStores + rb.spillLoads),
                                cell(ra.known, ra.sharedBytes),
                                cell(rb.known, rb.sharedBytes)};
        for (int c = 0; c < cells.size(); ++c) {
            auto *item = new QTableWidgetItem(cells[c]);
            if (c > 0 && c % 2 == 0 && cells[c] != cells[c - 1]) {
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
            }
            m_resources->setItem(row, c, item);
        }
        m_resourceLines << QStringLiteral("%1: registers %2 -> %3, spills %4 -> %5 B, shared %6 -> %7 B")
                               .arg(k, cells[1], cells[2], cells[3], cells[4], cells[5], cells[6]);
    }
}

ComparePanel::ComparePanel(Workbench &wb, QWidget *parent)
    : ComparePanel(&wb.history(), parent)
{
    connect(&wb, &Workbench::compareRequested, this, &ComparePanel::compareRows);
}

} // namespace Kp
