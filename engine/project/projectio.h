#pragma once

#include "core/result.h"
#include "project/pathpolicy.h"
#include "project/project.h"

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonValue>
#include <QString>

namespace Kp {

/** The value of "format" in every .kpg file. */
QString projectFormatName();

/**
 * Reads, parses and validates the .kpg file at path (docs/kpg-project.md),
 * then reads the kernel source when "source" names a file (relative to the
 * project's folder). Sets Project::path to the file's absolute path. Every
 * error message starts with path and names the JSON path of the bad value:
 * "p.kpg: buffers[2].shape: expected 1 to 3 positive integers, got [0, 4]".
 * Error::path holds that JSON path ("buffers[2].shape"); it is empty when the
 * file itself cannot be read or is not JSON.
 */
Result<Project> loadProject(const QString &path);
/**
 * The same, with the project's file names held to `scope`: confined to the
 * project's folder, a `source` outside it is refused before it is read, and
 * include folders and init files are checked once the file has parsed
 * (confineProjectPaths()).
 */
Result<Project> loadProject(const QString &path, PathScope scope);

/**
 * Parses and validates a project held in memory. Relative file names are
 * resolved against dir; the source file named by "source" is read from dir
 * after everything else validated, and not at all when dir is empty
 * (sourceText then stays empty). Project::path is left empty. Messages have
 * no file name in front: "timing.mode: expected "cold" or "hot", got "warm"".
 */
Result<Project> parseProject(const QByteArray &json, const QString &dir = {});
/** The same for a document already parsed. */
Result<Project> parseProject(const QJsonDocument &json, const QString &dir = {});

/**
 * The project as .kpg text: keys in the documented order, unknown keys after
 * the known ones, 2-space indentation, short containers on one line, a final
 * newline. Deterministic: serializing what parseProject() made of this output
 * gives the same bytes again. Project::path is not written; the source file
 * is named, not embedded (an inline project embeds its sourceText).
 */
QByteArray serializeProject(const Project &project);

/**
 * Writes serializeProject() to path atomically (QSaveFile: the old file stays
 * intact when writing fails). Writes the .kpg only, never the kernel source;
 * see saveProjectSource().
 */
Status saveProject(const Project &project, const QString &path);

/**
 * A launch argument as the project file writes it: a name ("a", "a+16"), a
 * number, null, a vector or struct value ("float2 {1, 2}" or [1, 2]) or an
 * expression ({"value": "chunk.offset"}). Parsing it back gives the same binding.
 */
QJsonValue argBindingJson(const ArgBinding &binding);

/**
 * Writes project.sourceText to project.sourceFile, resolved against the
 * folder of projectPath (the .kpg the project is saved as), atomically and
 * only when the file's contents differ (so an unchanged source keeps its
 * time stamp and file watchers stay quiet). Does nothing for an inline
 * source (sourceFile empty), whose text saveProject() already wrote.
 */
Status saveProjectSource(const Project &project, const QString &projectPath);

} // namespace Kp
