#include "core/profilerenv.h"

#include <QFileInfo>

namespace Kp {

bool isProfilerPreload(const QString &lib)
{
    const QString name = QFileInfo(lib).fileName();
    return lib.contains(QLatin1String("nsight"), Qt::CaseInsensitive) ||
           name.contains(QLatin1String("Injection"), Qt::CaseInsensitive) ||
           name.contains(QLatin1String("TreeLauncher"), Qt::CaseInsensitive);
}

} // namespace Kp
