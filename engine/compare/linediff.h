#pragma once

#include <QList>
#include <QString>
#include <QStringList>

namespace Kp {

/** One line of a line diff: kept, removed (only in A) or added (only in B). */
struct DiffLine
{
    enum class Kind { Same, Removed, Added };
    Kind kind = Kind::Same;
    QString text;
    int lineA = 0; ///< 1-based line in A; 0 for an added line
    int lineB = 0; ///< 1-based line in B; 0 for a removed line
};

/**
 * The lines of a and b as a shortest edit script (longest common
 * subsequence after the common head and tail are set aside). When the
 * changed middle is too large to compare line by line (more than maxCells
 * line pairs), it is given as all of A's middle removed and all of B's
 * added. Pure; any thread.
 */
QList<DiffLine> diffLines(const QStringList &a, const QStringList &b, qint64 maxCells = 4'000'000);

/**
 * The diff as unified-diff text: "--- a", "+++ b", then "@@ -l,n +l,n @@"
 * hunks with `context` lines around each change; empty when a equals b.
 */
QString unifiedDiff(const QList<DiffLine> &diff, const QString &nameA, const QString &nameB, int context = 3);

} // namespace Kp
