#include "integrity.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <algorithm>

#include <sys/stat.h>

namespace Kp::Grade {

namespace {

QString bytesText(qint64 n)
{
    return QStringLiteral("%1 byte%2").arg(n).arg(n == 1 ? "" : "s");
}

QByteArray inodeKey(const QString &path)
{
    struct stat st
    {
    };
    if (::lstat(QFile::encodeName(path).constData(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return {};
    }
    return QByteArray::number(quint64(st.st_dev)) + ':' + QByteArray::number(quint64(st.st_ino));
}

bool isIdentStart(QChar c)
{
    return c.isLetter() || c == QLatin1Char('_');
}

bool isIdentPart(QChar c)
{
    return c.isLetterOrNumber() || c == QLatin1Char('_');
}

/** Words kept as written: the language, CUDA's qualifiers, built-ins and common intrinsics. */
const QSet<QString> &keptWords()
{
    static const QSet<QString> words = [] {
        QSet<QString> s;
        for (const char *w : {"alignas",
                              "alignof",
                              "auto",
                              "bool",
                              "break",
                              "case",
                              "char",
                              "const",
                              "constexpr",
                              "continue",
                              "default",
                              "delete",
                              "do",
                              "double",
                              "else",
                              "enum",
                              "extern",
                              "false",
                              "float",
                              "for",
                              "goto",
                              "if",
                              "inline",
                              "int",
                              "long",
                              "namespace",
                              "new",
                              "nullptr",
                              "operator",
                              "private",
                              "public",
                              "register",
                              "restrict",
                              "return",
                              "short",
                              "signed",
                              "sizeof",
                              "static",
                              "static_cast",
                              "reinterpret_cast",
                              "struct",
                              "switch",
                              "template",
                              "this",
                              "true",
                              "typedef",
                              "typename",
                              "union",
                              "unsigned",
                              "using",
                              "void",
                              "volatile",
                              "while",
                              "size_t",
                              "uint32_t",
                              "int32_t",
                              "uint64_t",
                              "int64_t",
                              "uint8_t",
                              "int8_t",
                              "unsigned",
                              "include",
                              "define",
                              "pragma",
                              "unroll",
                              "ifdef",
                              "ifndef",
                              "endif",
                              "__global__",
                              "__device__",
                              "__host__",
                              "__shared__",
                              "__constant__",
                              "__restrict__",
                              "__forceinline__",
                              "__launch_bounds__",
                              "threadIdx",
                              "blockIdx",
                              "blockDim",
                              "gridDim",
                              "warpSize",
                              "__syncthreads",
                              "__syncwarp",
                              "__shfl_down_sync",
                              "__shfl_xor_sync",
                              "__shfl_sync",
                              "__shfl_up_sync",
                              "__ldg",
                              "atomicAdd",
                              "atomicMax",
                              "atomicMin",
                              "atomicCAS",
                              "atomicExch",
                              "printf",
                              "min",
                              "max",
                              "fminf",
                              "fmaxf",
                              "sqrtf",
                              "expf",
                              "logf",
                              "fabsf",
                              "float2",
                              "float4",
                              "int2",
                              "int4",
                              "half",
                              "__half"}) {
            s.insert(QLatin1String(w));
        }
        return s;
    }();
    return words;
}

quint64 fnv1a(const QStringList &tokens, qsizetype from, int k)
{
    quint64 h = 1469598103934665603ull;
    for (qsizetype i = from; i < from + k; ++i) {
        for (const QChar c : tokens[i]) {
            h ^= c.unicode();
            h *= 1099511628211ull;
        }
        h ^= 0x1f; // token separator: "ab","c" differs from "a","bc"
        h *= 1099511628211ull;
    }
    return h;
}

} // namespace

QString guardHitText(const GuardViolation &v)
{
    const qint64 first = v.firstElement();
    const qint64 last = v.lastElement();
    const QString elements = first == last ? QStringLiteral("element %1").arg(first)
                                           : QStringLiteral("elements %1..%2").arg(first).arg(last);
    // The bytes beyond the edge, counted from the buffer's end (or start),
    // which is how far out of bounds the write went.
    const QString how = v.side == GuardViolation::Side::After
                            ? QStringLiteral("%1 past the end").arg(bytesText(v.lastByte + 1 - v.bufferBytes))
                            : QStringLiteral("%1 before the start").arg(bytesText(-v.firstByte));
    return QStringLiteral("wrote outside `%1` (%2, %3)").arg(v.buffer, elements, how);
}

QStringList filesUnder(const QString &dir, const QStringList &ignore, bool dotEntries)
{
    QStringList files;
    QList<std::pair<QString, int>> pending{{QString(), 0}}; // relative folder, depth
    int seen = 0;
    const QDir top(dir);
    while (!pending.isEmpty() && seen < kMaxSubmissionEntries) {
        const auto [rel, depth] = pending.takeFirst();
        const QDir d(rel.isEmpty() ? dir : top.filePath(rel));
        const QFileInfoList entries =
            d.entryInfoList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System, QDir::Name);
        for (const QFileInfo &e : entries) {
            if (++seen > kMaxSubmissionEntries) {
                break;
            }
            const QString name = e.fileName();
            if ((!dotEntries && name.startsWith(QLatin1Char('.'))) || ignore.contains(name)) {
                continue;
            }
            const QString path = rel.isEmpty() ? name : rel + QLatin1Char('/') + name;
            // A link is listed (the reader judges where it leads), never walked into.
            if (e.isSymLink() || e.isFile()) {
                files << path;
            } else if (e.isDir() && depth + 1 < kMaxSubmissionDepth) {
                pending.append({path, depth + 1});
            }
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

LinkIndex LinkIndex::build(const QString &submissionsDir)
{
    LinkIndex index;
    index.m_root = QDir(submissionsDir).absolutePath();
    const QDir root(index.m_root);
    for (const QString &student : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot | QDir::NoSymLinks)) {
        const QDir sub(root.filePath(student));
        for (const QString &f : filesUnder(sub.path(), {}, true)) {
            const QByteArray key = inodeKey(sub.filePath(f));
            if (!key.isEmpty()) {
                index.m_byInode[key] << student + QLatin1Char('/') + f;
            }
        }
    }
    return index;
}

QStringList LinkIndex::sameFileAs(const QString &path) const
{
    const QByteArray key = inodeKey(path);
    QStringList names = m_byInode.value(key);
    const QString own = QDir(m_root).relativeFilePath(QDir(path).absolutePath());
    names.removeAll(own);
    std::sort(names.begin(), names.end());
    return names;
}

NormalizedSource normalizeSource(const QString &s)
{
    NormalizedSource out;
    const qsizetype n = s.size();
    qsizetype i = 0;
    while (i < n) {
        const QChar c = s[i];
        if (c.isSpace()) {
            ++i;
        } else if (c == QLatin1Char('/') && i + 1 < n && s[i + 1] == QLatin1Char('/')) {
            while (i < n && s[i] != QLatin1Char('\n')) {
                ++i;
            }
        } else if (c == QLatin1Char('/') && i + 1 < n && s[i + 1] == QLatin1Char('*')) {
            const qsizetype end = s.indexOf(QStringLiteral("*/"), i + 2);
            i = end < 0 ? n : end + 2;
        } else if (c == QLatin1Char('"') || c == QLatin1Char('\'')) {
            // A string's or character's contents say little and are easy to change.
            qsizetype j = i + 1;
            while (j < n && s[j] != c && s[j] != QLatin1Char('\n')) {
                j += s[j] == QLatin1Char('\\') ? 2 : 1;
            }
            i = std::min(n, j + 1);
            out.tokens << QStringLiteral("\"\"");
        } else if (isIdentStart(c)) {
            qsizetype j = i + 1;
            while (j < n && isIdentPart(s[j])) {
                ++j;
            }
            const QString word = s.mid(i, j - i);
            // A member's name (threadIdx.x, p->next) is part of the structure, not a chosen name.
            const bool member = !out.tokens.isEmpty() &&
                                (out.tokens.last() == QLatin1String(".") || out.tokens.last() == QLatin1String("->"));
            out.tokens << (member || keptWords().contains(word) ? word : QStringLiteral("$"));
            i = j;
        } else if (c.isDigit() || (c == QLatin1Char('.') && i + 1 < n && s[i + 1].isDigit())) {
            qsizetype j = i + 1;
            while (j < n && (isIdentPart(s[j]) || s[j] == QLatin1Char('.'))) {
                ++j;
            }
            // Numbers stay as written: a changed constant is a changed answer.
            out.tokens << s.mid(i, j - i);
            i = j;
        } else {
            // Operators of two characters count as one token, so "a+=b" and "a += b" agree.
            static const QStringList twoChar{"<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--",
                                             "+=", "-=", "*=", "/=", "->", "::", "%=", "&=", "|=", "^="};
            const QString two = s.mid(i, 2);
            if (twoChar.contains(two)) {
                out.tokens << two;
                i += 2;
            } else {
                out.tokens << QString(c);
                ++i;
            }
        }
    }
    return out;
}

QSet<quint64> fingerprints(const NormalizedSource &source, int k, int w)
{
    QSet<quint64> out;
    const QStringList &t = source.tokens;
    if (k < 1 || w < 1 || t.size() < k) {
        return out;
    }
    QList<quint64> hashes;
    for (qsizetype i = 0; i + k <= t.size(); ++i) {
        hashes << fnv1a(t, i, k);
    }
    if (hashes.size() <= w) {
        out.insert(*std::min_element(hashes.cbegin(), hashes.cend()));
        return out;
    }
    for (qsizetype i = 0; i + w <= hashes.size(); ++i) {
        qsizetype best = i;
        for (qsizetype j = i + 1; j < i + w; ++j) {
            if (hashes[j] <= hashes[best]) {
                best = j;
            }
        }
        out.insert(hashes[best]);
    }
    return out;
}

double jaccard(const QSet<quint64> &a, const QSet<quint64> &b)
{
    if (a.isEmpty() && b.isEmpty()) {
        return 0;
    }
    qsizetype common = 0;
    const QSet<quint64> &small = a.size() <= b.size() ? a : b;
    const QSet<quint64> &large = a.size() <= b.size() ? b : a;
    for (quint64 h : small) {
        common += large.contains(h) ? 1 : 0;
    }
    return double(common) / double(a.size() + b.size() - common);
}

QList<SimilarPair> findSimilar(const QList<ExerciseSources> &exercises, double threshold, int minFingerprints)
{
    QList<SimilarPair> pairs;
    for (const ExerciseSources &e : exercises) {
        const QSet<quint64> starter = fingerprints(normalizeSource(e.starter));
        const QByteArray starterSha = QCryptographicHash::hash(e.starter.toUtf8(), QCryptographicHash::Sha256).toHex();
        QStringList students = e.sources.keys();
        std::sort(students.begin(), students.end());
        QHash<QString, QSet<quint64>> prints;
        for (const QString &s : students) {
            QSet<quint64> p = fingerprints(normalizeSource(e.sources.value(s)));
            p.subtract(starter);
            prints.insert(s, p);
        }
        for (qsizetype a = 0; a < students.size(); ++a) {
            for (qsizetype b = a + 1; b < students.size(); ++b) {
                const QString &sa = students[a];
                const QString &sb = students[b];
                const QByteArray ha = e.sha256Hex.value(sa);
                // Two students handing in the untouched starter copied nothing from each other.
                const bool identical = !ha.isEmpty() && ha == e.sha256Hex.value(sb) && ha != starterSha;
                const QSet<quint64> &pa = prints[sa];
                const QSet<quint64> &pb = prints[sb];
                double sim = identical ? 1.0 : 0.0;
                if (!identical && pa.size() >= minFingerprints && pb.size() >= minFingerprints) {
                    sim = jaccard(pa, pb);
                }
                if (identical || (sim >= threshold && sim > 0)) {
                    pairs << SimilarPair{e.exercise, sa, sb, sim, identical};
                }
            }
        }
    }
    std::stable_sort(pairs.begin(), pairs.end(), [](const SimilarPair &x, const SimilarPair &y) {
        return x.similarity != y.similarity ? x.similarity > y.similarity : x.exercise < y.exercise;
    });
    return pairs;
}

QByteArray similarityCsv(const QList<SimilarPair> &pairs)
{
    QByteArray out = "exercise,student_a,student_b,similarity,identical\r\n";
    auto field = [](const QString &s) {
        QString t = s;
        if (!t.isEmpty() && QStringLiteral("=+-@\t\r").contains(t.front())) {
            t.prepend(QLatin1Char('\''));
        }
        if (t.contains(QLatin1Char(',')) || t.contains(QLatin1Char('"')) || t.contains(QLatin1Char('\n')) ||
            t.contains(QLatin1Char('\r')) || t.contains(QLatin1Char('\''))) {
            t = QLatin1Char('"') + t.replace(QLatin1Char('"'), QStringLiteral("\"\"")) + QLatin1Char('"');
        }
        return t.toUtf8();
    };
    for (const SimilarPair &p : pairs) {
        out += field(p.exercise) + ',' + field(p.studentA) + ',' + field(p.studentB) + ',' +
               QByteArray::number(p.similarity, 'f', 3) + ',' + (p.identical ? "yes" : "no") + "\r\n";
    }
    return out;
}

} // namespace Kp::Grade
