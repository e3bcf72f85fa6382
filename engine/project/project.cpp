#include "project.h"

#include <QFileInfo>

namespace Kp {

QString Project::dir() const
{
    return path.isEmpty() ? QStringLiteral(".") : QFileInfo(path).absolutePath();
}

const BufferSpec *Project::buffer(const QString &name) const
{
    for (const BufferSpec &b : buffers) {
        if (b.name == name) {
            return &b;
        }
    }
    return nullptr;
}

const ScalarSpec *Project::scalar(const QString &name) const
{
    for (const ScalarSpec &s : scalars) {
        if (s.name == name) {
            return &s;
        }
    }
    return nullptr;
}

} // namespace Kp
