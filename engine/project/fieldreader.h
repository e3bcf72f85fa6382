#pragma once

#include "core/result.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>

namespace Kp {

/** A BadInput error from "project"; path is the JSON path of the bad field, empty for the whole file. */
Error projectError(const QString &message, const QString &path = {});

/** The path of a key below path: "timing" + "mode" gives "timing.mode"; an empty path gives the key. */
QString jsonKeyPath(const QString &path, const QString &key);
/** The path of an item below path: "launches[0].grid" + 1 gives "launches[0].grid[1]". */
QString jsonIndexPath(const QString &path, qsizetype index);

/** What v is, for messages: "a number", "an empty string", "null". */
QString jsonTypeName(const QJsonValue &v);
/** v itself as JSON on one line, cut to 60 characters. */
QString shownJson(const QJsonValue &v);
/** For a choice among strings: a wrong string is shown, anything else described. */
QString shownChoice(const QJsonValue &v);
/** "[4, 8]", or "[from the file]" for an empty shape. */
QString shapeText(const QList<qint64> &shape);
/** Letters, digits and _, not starting with a digit. */
bool isIdentifier(const QString &name);

/**
 * Typed reads of JSON values that know the path they read at. Each read
 * returns false after storing the first failure: its message is prefixed with
 * the path ("launches[0].grid[1]: expected ..."), and error() hands it on
 * with Error::path set to that path, so panels mark fields without reading
 * the message. Only the first failure is kept; readers stop at it.
 */
class FieldReader
{
public:
    /** Stores a failure at path; always returns false. */
    bool fail(const QString &path, const QString &message);
    /** "expected <expected>, got <what v is>". */
    bool typeError(const QString &path, const QString &expected, const QJsonValue &v);
    /** "missing; expected <expected>". */
    bool missing(const QString &path, const QString &expected);
    /** Takes over a failure another reader produced (its message is complete already). */
    bool adopt(const Error &error);

    bool object(const QJsonValue &v, const QString &path, QJsonObject *out);
    bool array(const QJsonValue &v, const QString &path, QJsonArray *out);
    bool string(const QJsonValue &v, const QString &path, QString *out);
    /** A string that is not blank; what is the expectation in the message. */
    bool nonEmptyString(const QJsonValue &v, const QString &path, const QString &what, QString *out);
    bool boolean(const QJsonValue &v, const QString &path, bool *out);
    bool number(const QJsonValue &v, const QString &path, double *out);
    /** A number at least min (inclusive) or greater than min. */
    bool numberAtLeast(const QJsonValue &v, const QString &path, double min, bool inclusive, double *out);
    /** A whole number in [min, max], exact beyond 2^53. */
    bool integer(const QJsonValue &v, const QString &path, qint64 min, qint64 max, qint64 *out);
    /** An integer from min to INT_MAX. */
    bool intField(const QJsonValue &v, const QString &path, int min, int *out);
    bool strings(const QJsonValue &v, const QString &path, QStringList *out);
    /** A string, or an array of lines joined with newlines. */
    bool lines(const QJsonValue &v, const QString &path, QString *out);
    /** A C identifier; missing is an error. */
    bool name(const QJsonValue &v, const QString &path, QString *out);
    /** Fails at the first key of o that allowed does not list. */
    bool checkKeys(const QJsonObject &o, const QString &path, const QStringList &allowed);

    bool failed() const { return !m_message.isEmpty(); }
    /** The failure's message, starting with its path. */
    const QString &message() const { return m_message; }
    /** The JSON path of the failure; empty when it is not about one field. */
    const QString &path() const { return m_path; }
    /** The failure as a "project" BadInput error. */
    Error error() const;

private:
    QString m_message;
    QString m_path;
};

} // namespace Kp
