#pragma once

#include <QPlainTextEdit>
#include <QTime>

namespace Kp {

class Workbench;

/** The Log: what runs did, device printf output, warnings; each line stamped with the time. GUI thread only. */
class LogPanel : public QPlainTextEdit
{
    Q_OBJECT
public:
    explicit LogPanel(QWidget *parent = nullptr);
    /** The dock's log: every line wb's controllers and panels have for it. */
    LogPanel(Workbench &wb, QWidget *parent = nullptr);
    /** Appends "[HH:mm:ss] text", now. */
    void log(const QString &text);
    /** Appends "[HH:mm:ss] text" with the time at. */
    void logAt(QTime at, const QString &text);
};

} // namespace Kp
