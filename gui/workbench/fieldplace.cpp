#include "fieldplace.h"

#include <QCoreApplication>
#include <QRegularExpression>

namespace Kp {

namespace {
QString tr(const char *text)
{
    return QCoreApplication::translate("FieldPlace", text);
}

QString axisName(int axis)
{
    return axis >= 0 && axis < 3 ? QString(QLatin1Char("xyz"[axis])) : QString::number(axis);
}
} // namespace

QString fieldPlace(const QString &path, const Project &project)
{
    static const QRegularExpression launchRe(QStringLiteral(R"(^launches\[(\d+)\](?:\.(\w+)(?:\[(\d+)\])?)?(.*)$)"));
    static const QRegularExpression listRe(QStringLiteral(R"(^(buffers|scalars)\[(\d+)\](?:\.(.+))?$)"));
    static const QRegularExpression sectionRe(QStringLiteral(R"(^(timing|compile|repeat|throughput)\.(.+)$)"));
    if (const auto m = launchRe.match(path); m.hasMatch()) {
        QString place = tr("step %1").arg(m.captured(1).toInt() + 1);
        const QString field = m.captured(2);
        const bool indexed = !m.captured(3).isEmpty();
        const int index = m.captured(3).toInt();
        if (field == QLatin1String("grid") || field == QLatin1String("block")) {
            place += QStringLiteral(", ") + field + (indexed ? QLatin1Char(' ') + axisName(index) : QString());
        } else if (field == QLatin1String("args")) {
            place += indexed ? tr(", argument %1").arg(index + 1) : tr(", arguments");
        } else if (field == QLatin1String("sharedBytes")) {
            place += tr(", dynamic shared memory");
        } else if (!field.isEmpty()) {
            place += QStringLiteral(", ") + field + (indexed ? QStringLiteral("[%1]").arg(index) : QString());
        }
        return place + m.captured(4);
    }
    if (const auto m = listRe.match(path); m.hasMatch()) {
        const int index = m.captured(2).toInt();
        const bool buffers = m.captured(1) == QLatin1String("buffers");
        const QString name = buffers ? project.buffers.value(index).name : project.scalars.value(index).name;
        QString place = buffers ? tr("buffer %1") : tr("scalar %1");
        place = place.arg(name.isEmpty() ? QString::number(index + 1) : name);
        return m.captured(3).isEmpty() ? place : place + QStringLiteral(", ") + m.captured(3);
    }
    if (const auto m = sectionRe.match(path); m.hasMatch()) {
        return m.captured(1) + QStringLiteral(", ") + m.captured(2);
    }
    return path;
}

QString panelMessage(const Error &error, const Project &project)
{
    if (error.path.isEmpty() || !error.message.startsWith(error.path)) {
        return error.message;
    }
    return fieldPlace(error.path, project) + error.message.mid(error.path.size());
}

} // namespace Kp
