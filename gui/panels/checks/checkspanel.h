#pragma once

#include "workbench/checkrunner.h"

#include <QWidget>

class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace Kp {

class Workbench;

/**
 * The Checks panel: one row per check of the project with its verdict
 * (PASS, FAIL, checking…), and the report's numbers (mismatch count and
 * fraction, max and mean absolute error, max relative error, tolerance,
 * the seed run reported); a failing check unfolds into its first
 * mismatches with index, coordinates (x, y, z), got and expected. Clicking
 * a mismatch (or Enter on it) asks for that cell in the inspector; clicking
 * a check asks for its failing cells. GUI thread only.
 */
class ChecksPanel : public QWidget
{
    Q_OBJECT
public:
    explicit ChecksPanel(QWidget *parent = nullptr);
    /** The dock's panel: the checks of wb's runs, with a note saying what happened when none were judged. */
    ChecksPanel(Workbench &wb, QWidget *parent = nullptr);

    /** Shows outcomes (CheckRunner::evaluated), replacing what was shown. */
    void setOutcomes(const QList<CheckOutcome> &outcomes);
    const QList<CheckOutcome> &outcomes() const { return m_outcomes; }
    /** Says why there is nothing to show ("This project has no checks", "Run to check"). */
    void setNote(const QString &text);

    /** The line above the list: "1 of 2 checks failed", "Checking…". */
    QString summaryText() const;
    QTreeWidget *tree() const { return m_tree; }
    /** The row of check i, and of its mismatch m (nullptr when there is none). */
    QTreeWidgetItem *checkItem(int check) const;
    QTreeWidgetItem *mismatchItem(int check, int mismatch) const;

    /** "[17] (x=17)", "[1034] (x=10, y=4)", "(x=3, c=2)": a mismatch's place as the report writes it. */
    static QString placeText(const CheckMismatch &m, int axes, int components);

Q_SIGNALS:
    /** A mismatch was chosen: the buffer, the element's flat index and its coordinates (x, y, z). */
    void mismatchActivated(int check, const QString &buffer, qint64 index, const QList<qint64> &coords);
    /** A check was chosen: show its failing cells. */
    void checkActivated(int check);

private:
    void activate(QTreeWidgetItem *item);

    QList<CheckOutcome> m_outcomes;
    QLabel *m_summary;
    QTreeWidget *m_tree;
};

} // namespace Kp
