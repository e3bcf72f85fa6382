#pragma once

#include "core/result.h"
#include "project/project.h"

#include <QString>

namespace Kp {

/**
 * How far the file names in a project may reach (docs/security.md). A project
 * someone else wrote can name any file its reader may read: a `source` of
 * "../../.ssh/id_rsa", an `.npy` init of "/etc/shadow", an include folder of
 * "/home". Confined, every name must resolve (symbolic links followed) to a
 * file or folder inside the project's own folder.
 */
enum class PathScope {
    Anywhere,      ///< names are taken as written (the GUI's and `kpg run`'s default)
    ProjectFolder, ///< only inside the project's folder (`kpg check`, `kpg grade`, `kpg run --confine`)
};

/**
 * Empty when `written` (relative to `dir`) resolves inside `dir`; otherwise
 * what is wrong, without the field's name: "'../x.cu' is outside ...".
 */
QString outsideFolder(const QString &written, const QString &dir);

/**
 * Whether `written` (as the field at JSON path `field` gives it, relative to
 * `dir`) resolves inside `dir`. The message names the field, what was
 * written, where it leads and the folder it must stay in.
 */
Status checkInsideFolder(const QString &field, const QString &written, const QString &dir);

/**
 * Every file name in the project against its folder: `source`,
 * `reference.source`, `compile.includeDirs[k]`, `buffers[i].init.file`,
 * `checks[i].npy`. The first one outside is
 * the error (Error::path names it). A project inside the program (":/...")
 * or never saved names nothing of a user's and passes.
 */
Status confineProjectPaths(const Project &project);

} // namespace Kp
