#include "logpanel.h"

#include "workbench/workbench.h"

#include "editor/codeeditor.h"

#include <QTime>

namespace Kp {

LogPanel::LogPanel(QWidget *parent)
    : QPlainTextEdit(parent)
{
    setObjectName(QStringLiteral("log"));
    setReadOnly(true);
    setFont(monospaceFont());
    setMaximumBlockCount(20000); // a printf loop must not grow it without end
}

void LogPanel::log(const QString &text)
{
    logAt(QTime::currentTime(), text);
}

void LogPanel::logAt(QTime at, const QString &text)
{
    appendPlainText(QStringLiteral("[%1] %2").arg(at.toString(QStringLiteral("HH:mm:ss")), text));
}

LogPanel::LogPanel(Workbench &wb, QWidget *parent)
    : LogPanel(parent)
{
    // Made after the window's first paint: what was logged before, first.
    for (const Workbench::LogLine &line : wb.logBacklog()) {
        logAt(line.at, line.text);
    }
    connect(&wb, &Workbench::message, this, &LogPanel::log);
}

} // namespace Kp
