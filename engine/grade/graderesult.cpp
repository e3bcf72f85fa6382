#include "graderesult.h"

#include "core/safefile.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMutex>
#include <QMutexLocker>
#include <QRegularExpression>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace Kp::Grade {

namespace {

struct OutcomeName
{
    Outcome outcome;
    const char *key;
    const char *text;
};

constexpr OutcomeName kOutcomes[] = {
    {Outcome::Pass, "pass", "pass"},
    {Outcome::Fail, "fail", "FAIL"},
    {Outcome::Slow, "slow", "too slow"},
    {Outcome::CompileError, "compile-error", "compile error"},
    {Outcome::Fault, "fault", "fault"},
    {Outcome::Timeout, "timeout", "timeout"},
    {Outcome::NotSubmitted, "not-submitted", "not submitted"},
    {Outcome::NoGpu, "no-gpu", "no GPU"},
    {Outcome::Refused, "refused", "refused"},
    {Outcome::Error, "error", "error"},
    {Outcome::NotGraded, "not-graded", "not graded"},
    {Outcome::PrintfFlood, "printf-flood", "printf flood"},
};

QJsonValue numberOrNull(double v)
{
    return std::isfinite(v) ? QJsonValue(v) : QJsonValue();
}

double numberOf(const QJsonValue &v)
{
    return v.isDouble() ? v.toDouble() : std::numeric_limits<double>::quiet_NaN();
}

QString ms(double v)
{
    if (!std::isfinite(v)) {
        return QString();
    }
    return QString::number(v, v < 1 ? 'g' : 'f', v < 1 ? 3 : 3);
}

QString ratio(double v)
{
    return std::isfinite(v) ? QString::number(v, 'f', 2) + QLatin1Char('x') : QString();
}

QString printable(const QString &s)
{
    return printableText(s);
}

QByteArray csvField(const QString &text, bool maybeFormula)
{
    QString s = printable(text); // a terminal showing the CSV runs no escapes either
    // =, +, -, @ at the start make a spreadsheet evaluate the cell; a student's
    // folder named "=HYPERLINK(...)" must stay text.
    if (maybeFormula && !s.isEmpty() && QStringLiteral("=+-@\t\r").contains(s.front())) {
        s.prepend(QLatin1Char('\''));
    }
    if (s.contains(QLatin1Char(',')) || s.contains(QLatin1Char('"')) || s.contains(QLatin1Char('\n')) ||
        s.contains(QLatin1Char('\r')) || s.contains(QLatin1Char('\''))) {
        s.replace(QLatin1Char('"'), QStringLiteral("\"\""));
        s = QLatin1Char('"') + s + QLatin1Char('"');
    }
    return s.toUtf8();
}

double median(QList<double> v)
{
    if (v.isEmpty()) {
        return std::numeric_limits<double>::quiet_NaN();
    }
    std::sort(v.begin(), v.end());
    const qsizetype n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace

QString printableText(QString s)
{
    for (QChar &c : s) {
        if (c.category() == QChar::Other_Control || c.category() == QChar::Other_Format) {
            c = QLatin1Char('?');
        }
    }
    return s;
}

QString outcomeKey(Outcome o)
{
    for (const OutcomeName &n : kOutcomes) {
        if (n.outcome == o) {
            return QLatin1String(n.key);
        }
    }
    return QStringLiteral("error");
}

QString outcomeText(Outcome o)
{
    for (const OutcomeName &n : kOutcomes) {
        if (n.outcome == o) {
            return QLatin1String(n.text);
        }
    }
    return QStringLiteral("error");
}

std::optional<Outcome> outcomeFromKey(const QString &key)
{
    for (const OutcomeName &n : kOutcomes) {
        if (key == QLatin1String(n.key)) {
            return n.outcome;
        }
    }
    return std::nullopt;
}

const QList<Outcome> &allOutcomes()
{
    static const QList<Outcome> all = [] {
        QList<Outcome> l;
        for (const OutcomeName &n : kOutcomes) {
            l << n.outcome;
        }
        return l;
    }();
    return all;
}

QJsonObject GradeItem::toJson() const
{
    QJsonObject o{{QStringLiteral("student"), student},
                  {QStringLiteral("exercise"), exercise},
                  {QStringLiteral("outcome"), outcomeKey(outcome)},
                  {QStringLiteral("detail"), detail},
                  {QStringLiteral("failedCheck"), failedCheck},
                  {QStringLiteral("firstMismatch"), firstMismatch},
                  {QStringLiteral("compileErrors"), QJsonArray::fromStringList(compileErrors)},
                  {QStringLiteral("sha256"), QString::fromLatin1(sha256)},
                  {QStringLiteral("device"), device >= 0 ? QJsonValue(device) : QJsonValue()},
                  {QStringLiteral("medianMs"), numberOrNull(medianMs)},
                  {QStringLiteral("referenceMs"), numberOrNull(referenceMs)},
                  {QStringLiteral("speedRatio"), numberOrNull(speedRatio)},
                  {QStringLiteral("minSpeedup"), minSpeedup > 0 ? QJsonValue(minSpeedup) : QJsonValue()},
                  {QStringLiteral("compileMs"), compileMs},
                  {QStringLiteral("runMs"), runMs},
                  {QStringLiteral("restartMs"), restartMs},
                  {QStringLiteral("workerRestarted"), workerRestarted},
                  {QStringLiteral("checksPassed"), checksPassed},
                  {QStringLiteral("checksTotal"), checksTotal},
                  {QStringLiteral("failedCheckHidden"), failedCheckHidden},
                  {QStringLiteral("wroteOutside"), wroteOutside},
                  {QStringLiteral("flags"), QJsonArray::fromStringList(flags)},
                  {QStringLiteral("memoryFindings"), QJsonArray::fromStringList(memoryFindings)},
                  {QStringLiteral("timeLimitSeconds"), timeLimitSeconds},
                  {QStringLiteral("foundIn"), foundIn}};
    return o;
}

std::optional<GradeItem> GradeItem::fromJson(const QJsonObject &o)
{
    const std::optional<Outcome> outcome = outcomeFromKey(o.value(QStringLiteral("outcome")).toString());
    GradeItem i;
    i.student = o.value(QStringLiteral("student")).toString();
    i.exercise = o.value(QStringLiteral("exercise")).toString();
    if (!outcome || i.student.isEmpty() || i.exercise.isEmpty()) {
        return std::nullopt;
    }
    i.outcome = *outcome;
    i.detail = o.value(QStringLiteral("detail")).toString();
    i.failedCheck = o.value(QStringLiteral("failedCheck")).toString();
    i.firstMismatch = o.value(QStringLiteral("firstMismatch")).toString();
    for (const QJsonValue &v : o.value(QStringLiteral("compileErrors")).toArray()) {
        i.compileErrors << v.toString();
    }
    i.sha256 = o.value(QStringLiteral("sha256")).toString().toLatin1();
    i.device = o.value(QStringLiteral("device")).toInt(-1);
    i.medianMs = numberOf(o.value(QStringLiteral("medianMs")));
    i.referenceMs = numberOf(o.value(QStringLiteral("referenceMs")));
    i.speedRatio = numberOf(o.value(QStringLiteral("speedRatio")));
    i.minSpeedup = o.value(QStringLiteral("minSpeedup")).toDouble(0);
    i.compileMs = o.value(QStringLiteral("compileMs")).toDouble(0);
    i.runMs = o.value(QStringLiteral("runMs")).toDouble(0);
    i.restartMs = o.value(QStringLiteral("restartMs")).toDouble(0);
    i.workerRestarted = o.value(QStringLiteral("workerRestarted")).toBool(false);
    i.checksPassed = o.value(QStringLiteral("checksPassed")).toInt(0);
    i.checksTotal = o.value(QStringLiteral("checksTotal")).toInt(0);
    i.failedCheckHidden = o.value(QStringLiteral("failedCheckHidden")).toBool(false);
    i.wroteOutside = o.value(QStringLiteral("wroteOutside")).toString();
    for (const QJsonValue &v : o.value(QStringLiteral("flags")).toArray()) {
        i.flags << v.toString();
    }
    for (const QJsonValue &v : o.value(QStringLiteral("memoryFindings")).toArray()) {
        i.memoryFindings << v.toString();
    }
    i.timeLimitSeconds = o.value(QStringLiteral("timeLimitSeconds")).toDouble(0);
    i.foundIn = o.value(QStringLiteral("foundIn")).toString();
    return i;
}

QList<ExerciseSummary> summarize(const QStringList &exercises, const QList<GradeItem> &items)
{
    QList<ExerciseSummary> out;
    for (const QString &e : exercises) {
        ExerciseSummary s;
        s.exercise = e;
        QList<double> ratios;
        for (const GradeItem &i : items) {
            if (i.exercise != e) {
                continue;
            }
            s.counts[i.outcome] += 1;
            if (i.outcome != Outcome::NotSubmitted) {
                ++s.submissions;
            }
            if (i.outcome == Outcome::Pass) {
                ++s.passed;
            }
            if ((i.outcome == Outcome::Pass || i.outcome == Outcome::Slow) && std::isfinite(i.speedRatio)) {
                ratios << i.speedRatio;
            }
        }
        s.medianSpeedRatio = median(ratios);
        out << s;
    }
    return out;
}

void sortItems(QList<GradeItem> *items)
{
    std::stable_sort(items->begin(), items->end(), [](const GradeItem &a, const GradeItem &b) {
        return a.student != b.student ? a.student < b.student : a.exercise < b.exercise;
    });
}

QString tableText(const QStringList &exercises, const QList<GradeItem> &items)
{
    QString t;
    int exWidth = 8;
    for (const QString &e : exercises) {
        exWidth = std::max<int>(exWidth, int(e.size()));
    }
    QString student;
    bool first = true;
    for (const GradeItem &i : items) {
        if (first || i.student != student) {
            student = i.student;
            t += (first ? QString() : QStringLiteral("\n")) + printable(student) + QLatin1Char('\n');
            first = false;
        }
        QString line = QStringLiteral("  %1  %2").arg(printable(i.exercise), -exWidth).arg(outcomeText(i.outcome), -13);
        if (std::isfinite(i.medianMs)) {
            line += QStringLiteral("  %1 ms").arg(ms(i.medianMs));
            if (std::isfinite(i.speedRatio)) {
                line += QStringLiteral(" (%1 the reference)").arg(ratio(i.speedRatio));
            }
        }
        if (!i.detail.isEmpty() && i.outcome != Outcome::Pass) {
            line += QStringLiteral("  ") + printable(i.detail);
        }
        t += line.trimmed().isEmpty() ? QString() : line + QLatin1Char('\n');
        if (i.outcome == Outcome::CompileError) {
            for (qsizetype k = 1; k < std::min<qsizetype>(i.compileErrors.size(), 5); ++k) {
                t += QStringLiteral("      ") + printable(i.compileErrors[k]) + QLatin1Char('\n');
            }
        }
        if (!i.firstMismatch.isEmpty() && i.outcome == Outcome::Fail) {
            t += QStringLiteral("      first mismatch: ") + printable(i.firstMismatch) + QLatin1Char('\n');
        }
        for (const QString &m : i.memoryFindings) {
            t += QStringLiteral("      memory: ") + printable(m) + QLatin1Char('\n');
        }
        for (const QString &f : i.flags) {
            t += QStringLiteral("      flagged: ") + printable(f) + QLatin1Char('\n');
        }
        if (!i.foundIn.isEmpty()) {
            t += QStringLiteral("      found in ") + printable(i.foundIn) + QLatin1Char('\n');
        }
    }
    t += QStringLiteral("\nSummary\n");
    for (const ExerciseSummary &s : summarize(exercises, items)) {
        QStringList parts;
        for (Outcome o : allOutcomes()) {
            if (o != Outcome::Pass && s.counts.value(o)) {
                parts << QStringLiteral("%1 %2").arg(s.counts.value(o)).arg(outcomeText(o));
            }
        }
        QString line = QStringLiteral("  %1  %2 of %3 passed")
                           .arg(printable(s.exercise), -exWidth)
                           .arg(s.passed)
                           .arg(s.submissions);
        if (std::isfinite(s.medianSpeedRatio)) {
            line += QStringLiteral(", median speed %1 the reference").arg(ratio(s.medianSpeedRatio));
        }
        if (!parts.isEmpty()) {
            line += QStringLiteral(" (") + parts.join(QStringLiteral(", ")) + QLatin1Char(')');
        }
        t += line + QLatin1Char('\n');
    }
    return t;
}

QByteArray csvText(const QList<GradeItem> &items)
{
    QByteArray out = "student,exercise,outcome,failed_check,first_mismatch,first_compile_error,median_ms,"
                     "reference_ms,speed_ratio,min_speedup,device,detail,found_in\r\n";
    for (const GradeItem &i : items) {
        const QList<QByteArray> fields{csvField(i.student, true),
                                       csvField(i.exercise, true),
                                       outcomeKey(i.outcome).toUtf8(),
                                       csvField(i.failedCheck, true),
                                       csvField(i.firstMismatch, true),
                                       csvField(i.compileErrors.value(0), true),
                                       std::isfinite(i.medianMs) ? QByteArray::number(i.medianMs, 'g', 6) : "",
                                       std::isfinite(i.referenceMs) ? QByteArray::number(i.referenceMs, 'g', 6) : "",
                                       std::isfinite(i.speedRatio) ? QByteArray::number(i.speedRatio, 'g', 4) : "",
                                       i.minSpeedup > 0 ? QByteArray::number(i.minSpeedup, 'g', 6) : "",
                                       i.device >= 0 ? QByteArray::number(i.device) : "",
                                       csvField(i.detail, true),
                                       csvField(i.foundIn, true)};
        out += fields.join(',') + "\r\n";
    }
    return out;
}

QJsonObject gradingJson(const QString &lab, const QString &submissions, const QStringList &exercises,
                        const QStringList &students, const QList<GradeItem> &items, bool timing)
{
    QJsonArray results;
    for (const GradeItem &i : items) {
        results.append(i.toJson());
    }
    QJsonArray summary;
    for (const ExerciseSummary &s : summarize(exercises, items)) {
        QJsonObject counts;
        for (Outcome o : allOutcomes()) {
            counts.insert(outcomeKey(o), s.counts.value(o));
        }
        summary.append(QJsonObject{{QStringLiteral("exercise"), s.exercise},
                                   {QStringLiteral("submissions"), s.submissions},
                                   {QStringLiteral("passed"), s.passed},
                                   {QStringLiteral("outcomes"), counts},
                                   {QStringLiteral("medianSpeedRatio"), numberOrNull(s.medianSpeedRatio)}});
    }
    return QJsonObject{{QStringLiteral("lab"), lab},
                       {QStringLiteral("submissions"), submissions},
                       {QStringLiteral("timing"), timing},
                       {QStringLiteral("exercises"), QJsonArray::fromStringList(exercises)},
                       {QStringLiteral("students"), QJsonArray::fromStringList(students)},
                       {QStringLiteral("results"), results},
                       {QStringLiteral("summary"), summary}};
}

// ---- Journal ----

namespace {
QMutex g_journalMutex;

Status writeAll(int fd, const QByteArray &bytes, const QString &path)
{
    const char *p = bytes.constData();
    qsizetype left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, size_t(left));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return Error{QStringLiteral("grade"),
                         Error::Code::BadInput,
                         {},
                         QStringLiteral("cannot write %1: %2").arg(path, QString::fromLocal8Bit(std::strerror(errno)))};
        }
        p += n;
        left -= n;
    }
    return Unit{};
}
} // namespace

Journal::~Journal()
{
    if (m_fd >= 0) {
        ::close(m_fd);
    }
}

Status Journal::open(const QString &path, const QString &lab, bool resume)
{
    m_path = path;
    const bool exists = QFile::exists(path);
    const int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | (resume ? 0 : O_TRUNC);
    m_fd = ::open(QFile::encodeName(path).constData(), flags, 0644);
    if (m_fd < 0) {
        return Error{
            QStringLiteral("grade"),
            Error::Code::BadInput,
            {},
            QStringLiteral("cannot write the journal %1: %2").arg(path, QString::fromLocal8Bit(std::strerror(errno)))};
    }
    if (!resume || !exists || QFileInfo(path).size() == 0) {
        const QJsonObject header{{QStringLiteral("kpgGradeJournal"), 1}, {QStringLiteral("lab"), lab}};
        return writeAll(m_fd, QJsonDocument(header).toJson(QJsonDocument::Compact) + '\n', path);
    }
    // A line cut short by a kill has no newline; start on a fresh line.
    QFile f(path);
    if (f.open(QIODevice::ReadOnly) && f.size() > 0 && f.seek(f.size() - 1) && f.read(1) != "\n") {
        return writeAll(m_fd, "\n", path);
    }
    return Unit{};
}

Status Journal::append(const GradeItem &item)
{
    QMutexLocker lock(&g_journalMutex);
    // One write() per line: a kill leaves whole lines and at most one partial last line.
    Status s = writeAll(m_fd, QJsonDocument(item.toJson()).toJson(QJsonDocument::Compact) + '\n', m_path);
    if (s) {
        ::fdatasync(m_fd);
    }
    return s;
}

namespace {

/** The student/exercise key a damaged line still shows ("student": "...", "exercise": "..."), or empty. */
QString keyOfDamagedLine(const QByteArray &line)
{
    static const QRegularExpression student(QStringLiteral(R"re("student"\s*:\s*("(?:[^"\\\x00-\x1f]|\\.)*"))re"));
    static const QRegularExpression exercise(QStringLiteral(R"re("exercise"\s*:\s*("(?:[^"\\\x00-\x1f]|\\.)*"))re"));
    const QString text = QString::fromUtf8(line);
    const QRegularExpressionMatch s = student.match(text);
    const QRegularExpressionMatch e = exercise.match(text);
    if (!s.hasMatch() || !e.hasMatch()) {
        return {};
    }
    // The captured strings are JSON strings: decode their escapes as JSON does.
    const QJsonDocument d = QJsonDocument::fromJson("[" + s.captured(1).toUtf8() + "," + e.captured(1).toUtf8() + "]");
    if (!d.isArray() || d.array().size() != 2) {
        return {};
    }
    return d.array()[0].toString() + QLatin1Char('/') + d.array()[1].toString();
}

} // namespace

Result<QList<GradeItem>> Journal::read(const QString &path, QString *labOut, QStringList *warnings,
                                       QHash<QString, int> *lineOf)
{
    if (!QFile::exists(path)) {
        return QList<GradeItem>{};
    }
    const Result<QByteArray> bytes = readRegularFile(path, 1024ll * 1024 * 1024, QStringLiteral("the journal"));
    if (!bytes) {
        return bytes.error();
    }
    QList<std::optional<GradeItem>> items; // nullopt: dropped by a damaged line after it
    QList<int> lines;
    QHash<QString, qsizetype> at;
    const QList<QByteArray> split = bytes->split('\n');
    const auto warn = [&](int n, const QString &problem) {
        if (warnings) {
            *warnings << QStringLiteral("the journal %1, line %2: %3").arg(path).arg(n).arg(problem);
        }
    };
    for (qsizetype k = 0; k < split.size(); ++k) {
        const QByteArray &line = split[k];
        const int n = int(k + 1);
        if (line.trimmed().isEmpty()) {
            continue;
        }
        QString problem;
        // JSON writes control characters as escapes; a raw one is damage
        // (a torn write, an editor), never a result to trust.
        const bool control = std::any_of(line.cbegin(), line.cend(), [](char c) {
            return (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\r') || c == 0x7f;
        });
        QJsonParseError error{};
        const QJsonDocument doc = control ? QJsonDocument() : QJsonDocument::fromJson(line, &error);
        std::optional<GradeItem> item;
        if (control) {
            problem = QStringLiteral("holds control characters, not a result the grading wrote");
        } else if (error.error != QJsonParseError::NoError) {
            // The end reached inside an object or string: a write that was
            // interrupted (the last line, or one a resumed grading wrote after).
            const bool cut = error.offset >= line.trimmed().size();
            problem = cut ? QStringLiteral("cut short (an interrupted write)")
                          : QStringLiteral("not JSON (%1 at byte %2)").arg(error.errorString()).arg(error.offset);
        } else if (!doc.isObject()) {
            problem = QStringLiteral("not a JSON object");
        } else if (doc.object().contains(QStringLiteral("kpgGradeJournal"))) {
            if (labOut) {
                *labOut = doc.object().value(QStringLiteral("lab")).toString();
            }
            continue;
        } else if (item = GradeItem::fromJson(doc.object()); !item) {
            const QString outcome = doc.object().value(QStringLiteral("outcome")).toString();
            problem = outcomeFromKey(outcome) ? QStringLiteral("not a result (no student or exercise)")
                                              : QStringLiteral("not a result (outcome '%1' is not one kpg grade "
                                                               "writes)")
                                                    .arg(printableText(outcome.left(40)));
        }
        if (!problem.isEmpty()) {
            const QString key = keyOfDamagedLine(line);
            warn(n, problem + (key.isEmpty()
                                   ? QStringLiteral("; ignored")
                                   : QStringLiteral("; ignored, and %1 is graded again").arg(printableText(key))));
            if (const auto it = at.constFind(key); !key.isEmpty() && it != at.cend()) {
                items[*it].reset();
            }
            continue;
        }
        if (const auto it = at.constFind(item->key()); it != at.cend()) {
            items[*it] = *item;
            lines[*it] = n;
        } else {
            at.insert(item->key(), items.size());
            items << *item;
            lines << n;
        }
    }
    QList<GradeItem> out;
    for (qsizetype k = 0; k < items.size(); ++k) {
        if (items[k]) {
            out << *items[k];
            if (lineOf) {
                lineOf->insert(items[k]->key(), lines[k]);
            }
        }
    }
    return out;
}

} // namespace Kp::Grade
