#include "compare/linediff.h"

#include <algorithm>
#include <vector>

namespace Kp {

QList<DiffLine> diffLines(const QStringList &a, const QStringList &b, qint64 maxCells)
{
    const qsizetype na = a.size();
    const qsizetype nb = b.size();
    qsizetype head = 0;
    while (head < na && head < nb && a[head] == b[head]) {
        ++head;
    }
    qsizetype tail = 0;
    while (tail < na - head && tail < nb - head && a[na - 1 - tail] == b[nb - 1 - tail]) {
        ++tail;
    }
    QList<DiffLine> out;
    for (qsizetype i = 0; i < head; ++i) {
        out << DiffLine{DiffLine::Kind::Same, a[i], int(i + 1), int(i + 1)};
    }
    const qsizetype ma = na - head - tail;
    const qsizetype mb = nb - head - tail;
    if (ma > 0 && mb > 0 && ma * mb <= maxCells) {
        // lcs[i][j]: longest common subsequence of A's middle from i and B's from j.
        std::vector<int> lcs(size_t((ma + 1) * (mb + 1)), 0);
        const auto at = [mb](qsizetype i, qsizetype j) { return size_t(i * (mb + 1) + j); };
        for (qsizetype i = ma - 1; i >= 0; --i) {
            for (qsizetype j = mb - 1; j >= 0; --j) {
                lcs[at(i, j)] = a[head + i] == b[head + j] ? lcs[at(i + 1, j + 1)] + 1
                                                           : std::max(lcs[at(i + 1, j)], lcs[at(i, j + 1)]);
            }
        }
        qsizetype i = 0;
        qsizetype j = 0;
        while (i < ma || j < mb) {
            if (i < ma && j < mb && a[head + i] == b[head + j]) {
                out << DiffLine{DiffLine::Kind::Same, a[head + i], int(head + i + 1), int(head + j + 1)};
                ++i;
                ++j;
            } else if (i < ma && (j == mb || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)])) {
                // On a tie the removal first, as diff -u writes a changed line.
                out << DiffLine{DiffLine::Kind::Removed, a[head + i], int(head + i + 1), 0};
                ++i;
            } else {
                out << DiffLine{DiffLine::Kind::Added, b[head + j], 0, int(head + j + 1)};
                ++j;
            }
        }
    } else {
        for (qsizetype i = 0; i < ma; ++i) {
            out << DiffLine{DiffLine::Kind::Removed, a[head + i], int(head + i + 1), 0};
        }
        for (qsizetype j = 0; j < mb; ++j) {
            out << DiffLine{DiffLine::Kind::Added, b[head + j], 0, int(head + j + 1)};
        }
    }
    for (qsizetype k = 0; k < tail; ++k) {
        out << DiffLine{DiffLine::Kind::Same, a[na - tail + k], int(na - tail + k + 1), int(nb - tail + k + 1)};
    }
    return out;
}

QString unifiedDiff(const QList<DiffLine> &diff, const QString &nameA, const QString &nameB, int context)
{
    QStringList lines;
    const qsizetype n = diff.size();
    qsizetype i = 0;
    while (i < n) {
        // The next change, and the hunk around it and every change within 2 x context of it.
        while (i < n && diff[i].kind == DiffLine::Kind::Same) {
            ++i;
        }
        if (i == n) {
            break;
        }
        const qsizetype from = std::max<qsizetype>(0, i - context);
        qsizetype to = i;
        qsizetype sameRun = 0;
        while (to < n && sameRun <= 2 * context) {
            sameRun = diff[to].kind == DiffLine::Kind::Same ? sameRun + 1 : 0;
            ++to;
        }
        to = std::min(n, to - std::max<qsizetype>(0, sameRun - context));
        int startA = 0;
        int startB = 0;
        int countA = 0;
        int countB = 0;
        QStringList body;
        for (qsizetype k = from; k < to; ++k) {
            const DiffLine &d = diff[k];
            if (d.kind != DiffLine::Kind::Added) {
                startA = startA ? startA : d.lineA;
                ++countA;
            }
            if (d.kind != DiffLine::Kind::Removed) {
                startB = startB ? startB : d.lineB;
                ++countB;
            }
            const QChar mark = d.kind == DiffLine::Kind::Same    ? QLatin1Char(' ')
                               : d.kind == DiffLine::Kind::Added ? QLatin1Char('+')
                                                                 : QLatin1Char('-');
            body << mark + d.text;
        }
        if (lines.isEmpty()) {
            lines << QStringLiteral("--- %1").arg(nameA) << QStringLiteral("+++ %1").arg(nameB);
        }
        lines << QStringLiteral("@@ -%1,%2 +%3,%4 @@").arg(startA).arg(countA).arg(startB).arg(countB);
        lines << body;
        i = to;
    }
    return lines.isEmpty() ? QString() : lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

} // namespace Kp
