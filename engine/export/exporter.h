#pragma once

#include "compile/compiletypes.h"
#include "core/result.h"
#include "project/project.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace Kp {

/** The host programs a project can be exported as (docs/export.md). */
enum class ExportTarget {
    PyCuda,     ///< "pycuda": SourceModule, pycuda.driver
    CuPy,       ///< "cupy": RawModule with name_expressions
    CudaPython, ///< "cuda-python": cuda.core Program/launch, cuda.bindings.driver for memory and events
    CudaCpp,    ///< "cuda-cpp": one .cu built by nvcc, the runtime API and <<<>>> launches
};

/** "pycuda", "cupy", "cuda-python", "cuda-cpp". */
QString exportTargetName(ExportTarget target);
/** The target of a name as exportTargetName() writes it; none for anything else. */
std::optional<ExportTarget> exportTargetFromName(const QString &name);
/** Every target name, for messages and --help. */
QStringList exportTargetNames();

/** One file of an export, relative to the output folder ("/"-separated, never absolute, never ".."). */
struct ExportFile
{
    QString path;
    QByteArray contents;
};

/** What exportProject() made: the files to write, and what was only approximated. */
struct ExportResult
{
    QList<ExportFile> files;
    QString program; ///< the path (in files) of the program to run
    /** Project features the target expressed only as the nearest equivalent (also said in the program's comments). */
    QStringList notes;
};

struct ExportOptions
{
    ExportTarget target = ExportTarget::CuPy;
    /**
     * The symbols NVRTC lowered each kernel name (and name expression) to,
     * for PyCUDA, which has no name expressions: get_function() takes the
     * mangled name of a C++ kernel. Keys are KernelInfo::name. Only needed
     * for the pycuda target and kernels that are not extern "C"; one of those
     * without an entry is refused with the reason.
     */
    QHash<QString, QString> loweredNames;
    /** The same for the reference source, when it has its own ("reference": {"source": ...}). */
    QHash<QString, QString> referenceLoweredNames;
    /**
     * The layouts NVRTC gave the structs the kernels take by value
     * (CompileResult::layouts of a compile of the project's source): a
     * struct argument is exported as its bytes in that layout. Without one
     * (layoutError says why, when a compile was tried) such a project is
     * refused with the reason.
     */
    QHash<QString, StructLayout> layouts;
    QString layoutError;
    /** The same for the reference source, when it has its own. */
    QHash<QString, StructLayout> referenceLayouts;
    QString referenceLayoutError;
    /**
     * The PTX of a compile of the project's source (CompileResult::ptx): the
     * __constant__ and __device__ variables that buffers with "symbol" fill,
     * checked by name and size as a run checks them. Empty: such a project is
     * refused with the reason.
     */
    QByteArray ptx;
    /** The same for the reference source, when it has its own: its kernels read their own variables. */
    QByteArray referencePtx;
};

/** True when a kernel of source takes a struct by value: the export then needs ExportOptions::layouts. */
bool takesStructByValue(const QString &source);

/** True when a buffer of the project fills a device variable ("symbol"): the export then needs ExportOptions::ptx. */
bool fillsDeviceVariables(const Project &project);

/** What ExportOptions::loweredNames wants, from a compile of the project's source (KernelInfo::loweredName). */
QHash<QString, QString> loweredNamesOf(const CompileResult &compiled);

/**
 * Writes a loaded project (loadProject(), source read) as the host program a
 * user would write for options.target (docs/export.md): the kernel source
 * copied beside it, the buffers' exact initial contents as inputs/NAME.npy,
 * each expression or npy check's expected values under expected/, and the
 * program, which compiles the source with the project's options, fills the
 * buffers, binds the scalars with their exact C types, runs every step on
 * its stream with its events, repeats and swaps, runs the reference when a
 * check needs it, times the steps with events, evaluates the checks with
 * the project's tolerances and prints the verdicts and the median.
 *
 * Everything a launch needs is resolved here, with no GPU: the expressions
 * of grid, block, shared bytes, chunk groups and argument values become
 * numbers, as prepareRun() makes them. What the target cannot express is
 * written as the nearest equivalent with a comment (and listed in notes) or
 * refused with an Error that names the project field and the reason. Every
 * string from the project is escaped where it is written, and every name
 * used as an identifier is checked, so a project cannot put code into the
 * program. Pure apart from reading the project's npy/image init files; any
 * thread.
 */
Result<ExportResult> exportProject(const Project &project, const ExportOptions &options);

/**
 * Writes the files of result under dir (created when missing), each
 * atomically. Refuses a path that is absolute or climbs out of dir.
 */
Status writeExport(const ExportResult &result, const QString &dir);

/** Text as a Python string literal: "..." with every quote, backslash, control and non-ASCII character escaped. */
QString pythonStringLiteral(const QString &text);
/** Text as a C++ string literal: "..." with quotes, backslashes, '?', control bytes and UTF-8 bytes as escapes. */
QString cppStringLiteral(const QString &text);
/** Text made safe for a one-line comment: control and line-separator characters become spaces, no trailing backslash.
 */
QString commentText(const QString &text);

} // namespace Kp
