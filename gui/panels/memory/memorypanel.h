#pragma once

#include "check/sanitizedrun.h"
#include "run/guardzones.h"

#include <QHash>
#include <QList>
#include <QWidget>

class QLabel;
class QSplitter;
class QTreeWidget;
class QTreeWidgetItem;

namespace Kp {

class Workbench;

/**
 * A block's shared memory as a grid of 4-byte words, 32 to a row so a column
 * is a bank: each word that racecheck's hazards touched is coloured by how
 * many hazards fell on it. Hovering names the offset, the bank and the count;
 * a click selects the word (wordSelected()), whose hazards the Memory panel
 * lists. GUI thread only.
 */
class SharedMemoryGrid : public QWidget
{
    Q_OBJECT
public:
    static constexpr int kWordBytes = 4;
    static constexpr int kBanks = 32;

    explicit SharedMemoryGrid(QWidget *parent = nullptr);
    /**
     * The hazards to draw (other findings are ignored); the grid spans the
     * block's shared memory (sharedBytes, static and dynamic) or the highest
     * offset seen, whichever is more.
     */
    void setHazards(const QList<Sanitizer::Finding> &hazards, qint64 sharedBytes = 0);
    /** Hazards per word index (offset / 4). */
    const QHash<qint64, int> &counts() const { return m_counts; }
    qint64 words() const { return m_words; }
    qint64 selectedWord() const { return m_selected; }
    void selectWord(qint64 word);
    /** The word under a point of the widget, or -1. */
    qint64 wordAt(const QPoint &pos) const;
    /** The rectangle of a word's cell. */
    QRect cellRect(qint64 word) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    void wordSelected(qint64 word);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    bool event(QEvent *event) override;

private:
    int cellSize() const;

    QHash<qint64, int> m_counts;
    int m_max = 0;
    qint64 m_words = 0;
    qint64 m_selected = -1;
};

/**
 * The Memory panel: what the last run's guard zones caught, and the findings
 * of the last Check Memory: a summary with counts per kind, the first few of
 * each kind with "Show all N" to list the rest, and for racecheck's hazard
 * mode the block's shared memory as a grid with the thread pairs of the
 * chosen word. Activating a finding goes to its source line and to the
 * buffer element it touched (sourceLineActivated(), elementActivated()).
 * GUI thread only.
 */
class MemoryPanel : public QWidget
{
    Q_OBJECT
public:
    /** How many findings of each kind are listed before "Show all". */
    static constexpr int kFirstN = 10;

    explicit MemoryPanel(QWidget *parent = nullptr);
    /** The dock's panel: every run's guard-zone hits and wb's Check Memory findings. */
    MemoryPanel(Workbench &wb, QWidget *parent = nullptr);

    /** The guard zones' findings of the last run (empty: nothing written outside a buffer). */
    void setGuardViolations(const QList<GuardViolation> &violations);
    /** The outcome of a Check Memory. */
    void setCheck(const SanitizedRun &run, Sanitizer::Tool tool);
    /** A check is running: says so until setCheck(). */
    void setChecking(Sanitizer::Tool tool);

    /** Forgets everything shown (another project was opened). */
    void clear();
    /** Lists every finding of kind (what "Show all" does). */
    void showAll(Sanitizer::Finding::Kind kind);

    // For tests and screenshots.
    QTreeWidget *tree() const { return m_tree; }
    SharedMemoryGrid *sharedGrid() const { return m_grid; }
    QTreeWidget *pairs() const { return m_pairs; }
    QLabel *summary() const { return m_summary; }

Q_SIGNALS:
    /** A finding was activated: its 1-based source line (and the other line of a race, 0 when none). */
    void sourceLineActivated(int line, int otherLine);
    /** A finding or guard hit fell in buffer at element (past the end: the last element). */
    void elementActivated(const QString &buffer, qint64 element);

private:
    void rebuild();
    void fillKind(QTreeWidgetItem *parent, Sanitizer::Finding::Kind kind, bool all);
    void showPairs(qint64 word);
    void activate(QTreeWidgetItem *item);

    QLabel *m_summary = nullptr;
    QTreeWidget *m_tree = nullptr;
    QSplitter *m_split = nullptr;
    QWidget *m_sharedBox = nullptr;
    QLabel *m_sharedLabel = nullptr;
    SharedMemoryGrid *m_grid = nullptr;
    QTreeWidget *m_pairs = nullptr;

    QList<GuardViolation> m_guards;
    bool m_ranSince = false; ///< a run's guard zones were looked at since the project opened
    std::optional<SanitizedRun> m_run;
    Sanitizer::Tool m_tool = Sanitizer::Tool::Memcheck;
    QString m_checking;
    QList<Sanitizer::Finding::Kind> m_expanded; ///< kinds whose "Show all" was used
};

} // namespace Kp
