#pragma once

#include <QPlainTextEdit>

namespace Kp {

/** The Log: what runs did, device printf output, warnings; each line stamped with the time. GUI thread only. */
class LogPanel : public QPlainTextEdit
{
    Q_OBJECT
public:
    explicit LogPanel(QWidget *parent = nullptr);
    /** Appends "[HH:mm:ss] text". */
    void log(const QString &text);
};

} // namespace Kp
