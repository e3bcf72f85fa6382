#pragma once

// What keeps a grade honest apart from the checks (docs/labs.md, "What a
// submission can and cannot read"): writes outside a buffer named in words,
// files that are links to another student's work, and sources that are the
// same or nearly the same as another student's. Pure functions of their
// arguments (plus the file system for the links); any thread.

#include "run/guardzones.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QSet>
#include <QString>
#include <QStringList>

namespace Kp::Grade {

/**
 * A guard hit in the words of a grade: "wrote outside `out` (element 1000,
 * 4 bytes past the end)", "wrote outside `a` (elements -8..-1, 32 bytes
 * before the start)".
 */
QString guardHitText(const GuardViolation &v);

/** How deep and how wide filesUnder() walks: a hostile folder cannot make a walk endless. */
constexpr int kMaxSubmissionDepth = 8;
constexpr int kMaxSubmissionEntries = 20000;

/**
 * The files below dir (regular files and symbolic links, as paths relative
 * to dir, sorted), walked without ever following a link to a folder, at most
 * kMaxSubmissionDepth folders down and kMaxSubmissionEntries entries in all.
 * Entries whose name starts with '.' are skipped unless dotEntries (a hard
 * link's other name may be hidden), and names in ignore (zip residue such as
 * "__MACOSX") always.
 */
QStringList filesUnder(const QString &dir, const QStringList &ignore = {}, bool dotEntries = false);

/**
 * Every regular file under a submissions folder's student folders, by
 * (device, inode), to name the other side of a hard link. Built once per
 * grading; a file is listed as "STUDENT/NAME" relative to the folder.
 */
class LinkIndex
{
public:
    /** Walks dir: the student folders and every file below them (filesUnder(); links not followed). */
    static LinkIndex build(const QString &submissionsDir);
    /** The other names of the file at path (same device and inode), without path's own. */
    QStringList sameFileAs(const QString &path) const;

private:
    QHash<QByteArray, QStringList> m_byInode; ///< "dev:ino" -> names
    QString m_root;
};

/** The token stream of a CUDA C source with the names renamed away: what plagiarism compares. */
struct NormalizedSource
{
    QStringList tokens; ///< identifiers as "$", strings as "\"\"", keywords, numbers and operators as written
};

/**
 * Splits source into tokens without comments, whitespace or preprocessor
 * line breaks; every identifier that is not a C++ or CUDA keyword or a CUDA
 * built-in (threadIdx, __syncthreads, ...) becomes one placeholder, so that
 * renaming variables, reformatting and rewriting comments leave it the same.
 */
NormalizedSource normalizeSource(const QString &source);

/**
 * Winnowing (Schleimer, Wilkerson and Aiken, SIGMOD 2003): the hashes of the
 * k-token windows of tokens, and of each run of w consecutive ones the
 * smallest (the rightmost on ties), as a set.
 */
QSet<quint64> fingerprints(const NormalizedSource &source, int k = 6, int w = 4);

/** |a ∩ b| / |a ∪ b|; 0 when both are empty. */
double jaccard(const QSet<quint64> &a, const QSet<quint64> &b);

/** One pair of submissions of one exercise whose sources are alike. */
struct SimilarPair
{
    QString exercise;
    QString studentA; ///< alphabetically first
    QString studentB;
    double similarity = 0; ///< Jaccard of the fingerprints, 1 for byte-identical files
    bool identical = false;
};

/** The submitted sources of one exercise, to compare with each other. */
struct ExerciseSources
{
    QString exercise;
    QString starter;                      ///< fingerprints in it are everyone's and are not counted
    QHash<QString, QString> sources;      ///< student -> source
    QHash<QString, QByteArray> sha256Hex; ///< student -> hash of the bytes (identical files)
};

/**
 * Pairs of students whose sources of an exercise are identical or at least
 * threshold alike (token-normalised fingerprints, the starter's taken out),
 * the most alike first. Sources too short to say anything (fewer than
 * minFingerprints left after the starter's) are only reported when
 * byte-identical. O(n²) set comparisons per exercise: fine for classes of
 * hundreds.
 */
QList<SimilarPair> findSimilar(const QList<ExerciseSources> &exercises, double threshold = 0.8,
                               int minFingerprints = 8);

/** The report file: CSV (exercise, student_a, student_b, similarity, identical). */
QByteArray similarityCsv(const QList<SimilarPair> &pairs);

} // namespace Kp::Grade
