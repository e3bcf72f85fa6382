#include "pathpolicy.h"

#include <QDir>
#include <QFileInfo>

namespace Kp {

namespace {

/**
 * The path with symbolic links resolved as far as it exists: the canonical
 * form of its longest existing ancestor, then the rest as written. A name
 * that does not exist yet still cannot reach outside through a linked folder.
 */
QString resolved(const QString &absolute)
{
    QString existing = absolute;
    QString rest;
    while (!existing.isEmpty()) {
        const QString canonical = QFileInfo(existing).canonicalFilePath();
        if (!canonical.isEmpty()) {
            return rest.isEmpty() ? canonical : QDir::cleanPath(canonical + QLatin1Char('/') + rest);
        }
        const qsizetype slash = existing.lastIndexOf(QLatin1Char('/'));
        if (slash <= 0) {
            break;
        }
        const QString tail = existing.mid(slash + 1);
        rest = rest.isEmpty() ? tail : tail + QLatin1Char('/') + rest;
        existing = existing.left(slash);
    }
    return absolute;
}

bool inside(const QString &path, const QString &folder)
{
    return path == folder || path.startsWith(folder.endsWith(QLatin1Char('/')) ? folder : folder + QLatin1Char('/'));
}

} // namespace

QString outsideFolder(const QString &written, const QString &dir)
{
    const QString base = resolved(QDir::cleanPath(QDir(dir).absolutePath()));
    const QString lexical = QDir::cleanPath(QDir(dir).absoluteFilePath(written));
    const QString target = resolved(lexical);
    if (inside(target, base)) {
        return {};
    }
    const QString leads = target == lexical ? QString() : QStringLiteral(" (it leads to %1)").arg(target);
    return QStringLiteral("'%1'%2 is outside the project's folder %3; with paths confined to the project, a "
                          "project may name only files inside its own folder")
        .arg(written, leads, base);
}

Status checkInsideFolder(const QString &field, const QString &written, const QString &dir)
{
    const QString why = outsideFolder(written, dir);
    if (why.isEmpty()) {
        return Unit{};
    }
    return Error{QStringLiteral("project"), Error::Code::BadInput, {}, field + QStringLiteral(": ") + why, field};
}

Status confineProjectPaths(const Project &project)
{
    if (project.path.isEmpty() || project.path.startsWith(QLatin1Char(':'))) {
        return Unit{};
    }
    const QString dir = project.dir();
    if (!project.sourceFile.isEmpty()) {
        if (Status s = checkInsideFolder(QStringLiteral("source"), project.sourceFile, dir); !s) {
            return s;
        }
    }
    if (project.reference && !project.reference->sourceFile.isEmpty()) {
        if (Status s = checkInsideFolder(QStringLiteral("reference.source"), project.reference->sourceFile, dir); !s) {
            return s;
        }
    }
    for (qsizetype k = 0; k < project.compile.includeDirs.size(); ++k) {
        if (Status s = checkInsideFolder(QStringLiteral("compile.includeDirs[%1]").arg(k),
                                         project.compile.includeDirs.at(k), dir);
            !s) {
            return s;
        }
    }
    for (qsizetype i = 0; i < project.buffers.size(); ++i) {
        const BufferInit &init = project.buffers.at(i).init;
        if (!init.file.isEmpty()) {
            if (Status s = checkInsideFolder(QStringLiteral("buffers[%1].init.file").arg(i), init.file, dir); !s) {
                return s;
            }
        }
    }
    for (qsizetype i = 0; i < project.checks.size(); ++i) {
        const CheckSpec &c = project.checks.at(i);
        if (c.kind == CheckSpec::Kind::Npy && !c.npy.isEmpty()) {
            if (Status s = checkInsideFolder(QStringLiteral("checks[%1].npy").arg(i), c.npy, dir); !s) {
                return s;
            }
        }
    }
    return Unit{};
}

} // namespace Kp
