#include "selection.h"

namespace Kp {

void Selection::setStep(int step)
{
    if (step != m_step) {
        m_step = step;
        Q_EMIT stepChanged(step);
    }
}

void Selection::setSourceLines(int first, int last)
{
    if (first != m_firstLine || last != m_lastLine) {
        m_firstLine = first;
        m_lastLine = last;
        Q_EMIT sourceLinesChanged(first, last);
    }
}

} // namespace Kp
