#include "policy.h"

#include "core/safefile.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimeZone>

#include <cmath>

namespace Kp::Grade {

namespace {

Error policyError(const QString &file, const QString &path, const QString &message)
{
    Error e{QStringLiteral("grade"), Error::Code::BadInput, {}, QStringLiteral("%1: %2: %3").arg(file, path, message)};
    e.path = path;
    return e;
}

QString valueText(const QJsonValue &v)
{
    if (v.isString()) {
        return QLatin1Char('"') + v.toString() + QLatin1Char('"');
    }
    if (v.isDouble()) {
        return QString::number(v.toDouble());
    }
    if (v.isBool()) {
        return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    }
    return v.isArray()    ? QStringLiteral("an array")
           : v.isObject() ? QStringLiteral("an object")
                          : QStringLiteral("null");
}

/** Reads the keys of one object, refusing any it does not know. */
class Fields
{
public:
    Fields(const QJsonObject &o, QString path, const QString &file)
        : m_o(o)
        , m_path(std::move(path))
        , m_file(file)
    {
    }

    std::optional<Error> unknown(const QStringList &known) const
    {
        for (auto it = m_o.begin(); it != m_o.end(); ++it) {
            if (!known.contains(it.key())) {
                return policyError(
                    m_file, at(it.key()),
                    QStringLiteral("unknown key; allowed here: %1").arg(known.join(QStringLiteral(", "))));
            }
        }
        return std::nullopt;
    }

    std::optional<Error> number(const QString &key, double min, double max, double *out) const
    {
        if (!m_o.contains(key)) {
            return std::nullopt;
        }
        const QJsonValue v = m_o.value(key);
        if (!v.isDouble() || !std::isfinite(v.toDouble()) || v.toDouble() < min || v.toDouble() > max) {
            return policyError(m_file, at(key),
                               QStringLiteral("must be a number from %1 to %2, got %3")
                                   .arg(QString::number(min, 'g', 12), QString::number(max, 'g', 12), valueText(v)));
        }
        *out = v.toDouble();
        return std::nullopt;
    }

    std::optional<Error> boolean(const QString &key, bool *out) const
    {
        if (!m_o.contains(key)) {
            return std::nullopt;
        }
        const QJsonValue v = m_o.value(key);
        if (!v.isBool()) {
            return policyError(m_file, at(key), QStringLiteral("must be true or false, got %1").arg(valueText(v)));
        }
        *out = v.toBool();
        return std::nullopt;
    }

    QString at(const QString &key) const { return m_path.isEmpty() ? key : m_path + QLatin1Char('.') + key; }

private:
    QJsonObject m_o;
    QString m_path;
    const QString &m_file;
};

std::optional<QDateTime> parseTime(const QString &text)
{
    QDateTime t = QDateTime::fromString(text.trimmed(), Qt::ISODateWithMs);
    if (!t.isValid()) {
        return std::nullopt;
    }
    // Without a zone Qt takes local time; a manifest from another machine
    // must mean the same instant everywhere, so it is UTC.
    if (t.timeSpec() == Qt::LocalTime) {
        t.setTimeZone(QTimeZone::utc());
    }
    return t;
}

std::optional<Error> parseExercise(const QJsonValue &v, const QString &path, const QString &file, ExercisePolicy *e)
{
    if (!v.isObject()) {
        return policyError(file, path, QStringLiteral("must be an object, got %1").arg(valueText(v)));
    }
    const QJsonObject o = v.toObject();
    const Fields f(o, path, file);
    if (auto err = f.unknown(
            {QStringLiteral("points"), QStringLiteral("weight"), QStringLiteral("partial"), QStringLiteral("speed")})) {
        return err;
    }
    if (auto err = f.number(QStringLiteral("points"), 0, 1e6, &e->points)) {
        return err;
    }
    if (auto err = f.number(QStringLiteral("weight"), 0, 1e6, &e->weight)) {
        return err;
    }
    if (o.contains(QStringLiteral("partial"))) {
        const QJsonValue p = o.value(QStringLiteral("partial"));
        if (p != QJsonValue(QStringLiteral("checks")) && p != QJsonValue(QStringLiteral("none"))) {
            return policyError(file, f.at(QStringLiteral("partial")),
                               QStringLiteral("must be \"checks\" (each check earns its share) or \"none\" (all or "
                                              "nothing), got %1")
                                   .arg(valueText(p)));
        }
        e->partialByCheck = p.toString() == QLatin1String("checks");
    }
    if (o.contains(QStringLiteral("speed"))) {
        const QJsonValue s = o.value(QStringLiteral("speed"));
        const QString sp = f.at(QStringLiteral("speed"));
        if (!s.isObject()) {
            return policyError(file, sp, QStringLiteral("must be an object, got %1").arg(valueText(s)));
        }
        const Fields g(s.toObject(), sp, file);
        if (auto err = g.unknown({QStringLiteral("share"), QStringLiteral("target"), QStringLiteral("floor")})) {
            return err;
        }
        if (auto err = g.number(QStringLiteral("share"), 0, 1, &e->speedShare)) {
            return err;
        }
        if (auto err = g.number(QStringLiteral("target"), 1e-6, 1e6, &e->speedTarget)) {
            return err;
        }
        if (auto err = g.number(QStringLiteral("floor"), 0, 1, &e->speedFloor)) {
            return err;
        }
    }
    return std::nullopt;
}

} // namespace

const ExercisePolicy &LabPolicy::exercise(const QString &name) const
{
    const auto it = exercises.constFind(name);
    return it != exercises.cend() ? *it : defaults;
}

Result<LabPolicy> parsePolicy(const QByteArray &json, const QString &file, const QStringList &exerciseNames)
{
    QJsonParseError pe{};
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (pe.error != QJsonParseError::NoError) {
        return Error{QStringLiteral("grade"),
                     Error::Code::BadInput,
                     {},
                     QStringLiteral("%1: not JSON at byte %2: %3").arg(file).arg(pe.offset).arg(pe.errorString())};
    }
    if (!doc.isObject()) {
        return Error{QStringLiteral("grade"), Error::Code::BadInput, {}, file + QStringLiteral(": must be an object")};
    }
    LabPolicy p;
    p.file = file;
    const QJsonObject top = doc.object();
    const Fields f(top, QString(), file);
    if (auto err = f.unknown({QStringLiteral("default"), QStringLiteral("exercises"), QStringLiteral("late"),
                              QStringLiteral("timeLimit"), QStringLiteral("flagSpeedRatio"), QStringLiteral("ignore"),
                              QStringLiteral("antiGaming")})) {
        return *err;
    }
    if (top.contains(QStringLiteral("default"))) {
        if (auto err =
                parseExercise(top.value(QStringLiteral("default")), QStringLiteral("default"), file, &p.defaults)) {
            return *err;
        }
    }
    if (top.contains(QStringLiteral("exercises"))) {
        const QJsonValue ev = top.value(QStringLiteral("exercises"));
        if (!ev.isObject()) {
            return policyError(file, QStringLiteral("exercises"),
                               QStringLiteral("must be an object of exercise names, got %1").arg(valueText(ev)));
        }
        const QJsonObject eo = ev.toObject();
        for (auto it = eo.begin(); it != eo.end(); ++it) {
            const QString path = QStringLiteral("exercises.") + it.key();
            if (!exerciseNames.contains(it.key())) {
                return policyError(file, path,
                                   QStringLiteral("no such exercise in the lab; exercises: %1")
                                       .arg(exerciseNames.join(QStringLiteral(", "))));
            }
            ExercisePolicy e = p.defaults;
            if (auto err = parseExercise(it.value(), path, file, &e)) {
                return *err;
            }
            p.exercises.insert(it.key(), e);
        }
    }
    if (top.contains(QStringLiteral("late"))) {
        const QJsonValue lv = top.value(QStringLiteral("late"));
        if (!lv.isObject()) {
            return policyError(file, QStringLiteral("late"),
                               QStringLiteral("must be an object, got %1").arg(valueText(lv)));
        }
        const Fields l(lv.toObject(), QStringLiteral("late"), file);
        if (auto err = l.unknown({QStringLiteral("deadline"), QStringLiteral("graceMinutes"),
                                  QStringLiteral("perDayPercent"), QStringLiteral("capPercent")})) {
            return *err;
        }
        const QJsonValue d = lv.toObject().value(QStringLiteral("deadline"));
        const std::optional<QDateTime> deadline = d.isString() ? parseTime(d.toString()) : std::nullopt;
        if (!deadline) {
            return policyError(
                file, QStringLiteral("late.deadline"),
                QStringLiteral("must be an ISO 8601 time such as \"2026-03-01T23:59:00Z\", got %1").arg(valueText(d)));
        }
        p.late.deadline = *deadline;
        if (auto err = l.number(QStringLiteral("graceMinutes"), 0, 1e6, &p.late.graceMinutes)) {
            return *err;
        }
        if (auto err = l.number(QStringLiteral("perDayPercent"), 0, 100, &p.late.perDayPercent)) {
            return *err;
        }
        if (auto err = l.number(QStringLiteral("capPercent"), 0, 100, &p.late.capPercent)) {
            return *err;
        }
    }
    if (top.contains(QStringLiteral("timeLimit"))) {
        const QJsonValue tv = top.value(QStringLiteral("timeLimit"));
        if (!tv.isObject()) {
            return policyError(file, QStringLiteral("timeLimit"),
                               QStringLiteral("must be an object, got %1").arg(valueText(tv)));
        }
        const Fields t(tv.toObject(), QStringLiteral("timeLimit"), file);
        if (auto err =
                t.unknown({QStringLiteral("factor"), QStringLiteral("minSeconds"), QStringLiteral("capSeconds")})) {
            return *err;
        }
        if (auto err = t.number(QStringLiteral("factor"), 1, 1e6, &p.timeLimit.factor)) {
            return *err;
        }
        if (auto err = t.number(QStringLiteral("minSeconds"), 0.01, 3600, &p.timeLimit.minSeconds)) {
            return *err;
        }
        if (auto err = t.number(QStringLiteral("capSeconds"), 0, 3600, &p.timeLimit.capSeconds)) {
            return *err;
        }
    }
    if (auto err = f.number(QStringLiteral("flagSpeedRatio"), 0, 1e9, &p.flagSpeedRatio)) {
        return *err;
    }
    if (auto err = f.boolean(QStringLiteral("antiGaming"), &p.antiGaming)) {
        return *err;
    }
    if (top.contains(QStringLiteral("ignore"))) {
        const QJsonValue iv = top.value(QStringLiteral("ignore"));
        if (!iv.isArray()) {
            return policyError(file, QStringLiteral("ignore"),
                               QStringLiteral("must be an array of file or folder names, got %1").arg(valueText(iv)));
        }
        p.ignore.clear();
        for (const QJsonValue &v : iv.toArray()) {
            if (!v.isString() || v.toString().isEmpty() || v.toString().contains(QLatin1Char('/'))) {
                return policyError(file, QStringLiteral("ignore"),
                                   QStringLiteral("names only (no '/'), got %1").arg(valueText(v)));
            }
            p.ignore << v.toString();
        }
    }
    return p;
}

Result<LabPolicy> loadPolicy(const QString &labDir, const QStringList &exercises)
{
    const QString file = QDir(labDir).filePath(policyFileName());
    if (!QFileInfo::exists(file) && !QFileInfo(file).isSymLink()) {
        return LabPolicy{};
    }
    const Result<QByteArray> bytes = readRegularFile(file, 1024 * 1024, QStringLiteral("the grading policy"));
    if (!bytes) {
        Error e = bytes.error();
        e.code = Error::Code::BadInput;
        return e;
    }
    return parsePolicy(*bytes, file, exercises);
}

double itemPoints(const GradeItem &item, const ExercisePolicy &policy)
{
    double correct = 0;
    switch (item.outcome) {
    case Outcome::Pass: correct = 1; break;
    case Outcome::Slow:
        // The exercise's speed target is a bar to pass; with a speed share the
        // policy grades speed itself, so the correct answer keeps its points.
        correct = policy.speedShare > 0 ? 1 : 0;
        break;
    case Outcome::Fail:
        // A write outside a buffer is not a partly right answer.
        if (policy.partialByCheck && item.wroteOutside.isEmpty() && item.checksTotal > 0) {
            correct = double(item.checksPassed) / item.checksTotal;
        }
        break;
    default: correct = 0; break;
    }
    if (correct <= 0) {
        return 0;
    }
    double speed = 1;
    if (policy.speedShare > 0 && correct >= 1 && std::isfinite(item.speedRatio)) {
        speed = std::max(policy.speedFloor, std::min(1.0, item.speedRatio / policy.speedTarget));
    } else if (policy.speedShare > 0 && correct < 1) {
        speed = 0;
    }
    return policy.points * ((1 - policy.speedShare) * correct + policy.speedShare * speed);
}

double latePenaltyPercent(const QDateTime &submitted, const LatePolicy &late)
{
    if (!late.deadline.isValid() || !submitted.isValid()) {
        return 0;
    }
    const double lateSeconds = double(late.deadline.secsTo(submitted)) - late.graceMinutes * 60;
    if (lateSeconds <= 0) {
        return 0;
    }
    const double days = std::ceil(lateSeconds / 86400.0);
    return std::min(late.capPercent, days * late.perDayPercent);
}

Result<QHash<QString, QDateTime>> parseManifest(const QByteArray &csv, const QString &file)
{
    auto bad = [&](int line, const QString &what) {
        return Error{QStringLiteral("grade"),
                     Error::Code::BadInput,
                     {},
                     QStringLiteral("%1:%2: %3").arg(file).arg(line).arg(what)};
    };
    QHash<QString, QDateTime> out;
    const QList<QByteArray> lines = csv.split('\n');
    int studentCol = -1;
    int timeCol = -1;
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QString line = QString::fromUtf8(lines[i]).trimmed();
        if (line.isEmpty()) {
            continue;
        }
        QStringList cells = line.split(QLatin1Char(','));
        for (QString &c : cells) {
            c = c.trimmed();
            if (c.size() >= 2 && c.startsWith(QLatin1Char('"')) && c.endsWith(QLatin1Char('"'))) {
                c = c.mid(1, c.size() - 2);
            }
        }
        if (studentCol < 0) {
            studentCol = int(cells.indexOf(QStringLiteral("student")));
            timeCol = int(cells.indexOf(QStringLiteral("time")));
            if (studentCol < 0 || timeCol < 0) {
                return bad(int(i + 1),
                           QStringLiteral("the first line must name the columns 'student' and 'time', got '%1'")
                               .arg(line.left(200)));
            }
            continue;
        }
        if (cells.size() <= std::max(studentCol, timeCol)) {
            return bad(
                int(i + 1),
                QStringLiteral("expected %1 columns, got %2").arg(std::max(studentCol, timeCol) + 1).arg(cells.size()));
        }
        const std::optional<QDateTime> t = parseTime(cells[timeCol]);
        if (!t) {
            return bad(
                int(i + 1),
                QStringLiteral("time '%1' is not ISO 8601 (2026-03-01T23:59:00Z)").arg(cells[timeCol].left(100)));
        }
        out.insert(cells[studentCol], *t);
    }
    if (studentCol < 0) {
        return bad(1, QStringLiteral("empty; expected a header 'student,time' and a line per student"));
    }
    return out;
}

double timeLimitSeconds(const TimeLimitPolicy &policy, double referenceLaunchMs, double exerciseTimeoutSeconds)
{
    const double cap =
        policy.capSeconds > 0 ? std::min(policy.capSeconds, exerciseTimeoutSeconds) : exerciseTimeoutSeconds;
    if (!std::isfinite(referenceLaunchMs) || referenceLaunchMs <= 0) {
        return cap;
    }
    return std::min(cap, std::max(policy.minSeconds, policy.factor * referenceLaunchMs / 1000.0));
}

QList<StudentGrade> gradebook(const QStringList &students, const QStringList &exercises, const QList<GradeItem> &items,
                              const LabPolicy &policy, const QHash<QString, QDateTime> &submitted)
{
    QHash<QString, const GradeItem *> byKey;
    for (const GradeItem &i : items) {
        byKey.insert(i.key(), &i);
    }
    QList<StudentGrade> out;
    for (const QString &s : students) {
        StudentGrade g;
        g.student = s;
        g.submitted = submitted.value(s);
        for (const QString &e : exercises) {
            const ExercisePolicy &ep = policy.exercise(e);
            const GradeItem *item = byKey.value(s + QLatin1Char('/') + e);
            const double pts = item ? ep.weight * itemPoints(*item, ep) : 0;
            g.points.insert(e, pts);
            g.raw += pts;
            g.max += ep.weight * ep.points;
        }
        g.latePercent = latePenaltyPercent(g.submitted, policy.late);
        g.total = g.raw * (1 - g.latePercent / 100);
        out << g;
    }
    return out;
}

} // namespace Kp::Grade
