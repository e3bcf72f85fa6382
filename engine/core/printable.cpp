#include "core/printable.h"

namespace Kp {

QString printable(const QString &text, bool multiLine)
{
    QString s = text;
    for (QChar &c : s) {
        if (c == QLatin1Char('\t') || (multiLine && c == QLatin1Char('\n'))) {
            continue;
        }
        const QChar::Category cat = c.category();
        if (cat == QChar::Other_Control || cat == QChar::Other_Format || cat == QChar::Separator_Line ||
            cat == QChar::Separator_Paragraph) {
            c = QLatin1Char('?');
        }
    }
    return s;
}

} // namespace Kp
