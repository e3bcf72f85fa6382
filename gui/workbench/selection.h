#pragma once

#include <QObject>
#include <QString>

namespace Kp {

/**
 * What the user has selected, shared by the panels that follow it: the
 * launch step the Launch panel edits (Occupancy estimates it), and the
 * source lines selected in the editor (PTX and SASS mark theirs). No
 * widgets; GUI thread only.
 */
class Selection : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;

    /** The launch step selected in the Launch panel (0-based; -1 when there is none). */
    int step() const { return m_step; }
    void setStep(int step);

    /** The editor's selected lines, 1-based, first <= last. */
    int firstSourceLine() const { return m_firstLine; }
    int lastSourceLine() const { return m_lastLine; }
    void setSourceLines(int first, int last);

Q_SIGNALS:
    void stepChanged(int step);
    void sourceLinesChanged(int first, int last);

private:
    int m_step = 0;
    int m_firstLine = 1;
    int m_lastLine = 1;
};

} // namespace Kp
