#pragma once

#include "core/result.h"

#include <QStringList>

namespace Kp::Sandbox {

/**
 * The Landlock ABI version the running kernel supports, or 0 when it has none
 * (kernel older than 5.13, Landlock disabled, or not Linux). Thread-safe.
 */
int landlockAbi();

/** Whether kpg-compiler will sandbox NVRTC here, and in words why not. */
struct Availability
{
    bool sandboxed = false;
    QString text; ///< "sandboxed with Landlock (ABI 7)", "off (KPG_COMPILER_SANDBOX=0)", ...
};

/**
 * What the next compile process will be, judged in this process (the same
 * kernel and environment it inherits): for `kpg devices`, the status bar and
 * the programs that refuse to compile others' sources unsandboxed.
 */
Availability availability();

/** What a sandboxed process may touch on the file system. */
struct FsPolicy
{
    QStringList readDirs;  ///< read files and list folders beneath
    QStringList execDirs;  ///< read and execute (map libraries) beneath
    QStringList readFiles; ///< single files, read only
    QStringList writeDirs; ///< read, write, create and remove beneath (a private temporary folder)
    /** Existing files (device nodes) opened for reading and writing; nothing created, removed or executed. */
    QStringList readWriteFiles;
};

/**
 * Restricts the calling process (all its threads, and every child it starts)
 * to the policy with Landlock, after PR_SET_NO_NEW_PRIVS. Cannot be undone.
 * Paths that do not exist are skipped. An Error when Landlock is unavailable
 * or a call failed; the process is then unchanged.
 */
Status restrictFileSystem(const FsPolicy &policy);

/**
 * Whether kpg-worker is to be started sandboxed (`kpg-worker --sandbox`):
 * KPG_WORKER_SANDBOX=1, or setWorkerSandboxed(true) in this process (a
 * program that grades turns it on). Off by default until the policy is shown
 * to keep the driver working on a GPU host (docs/security.md). Thread-safe.
 */
bool workerSandboxRequested();
/** Turns the worker sandbox on (or off) for workers started from now on by this process. Thread-safe. */
void setWorkerSandboxed(bool on);

/**
 * What kpg-worker may reach once it has connected to its socket: the driver's
 * device nodes (read and write: the driver talks to the GPU through them), the
 * library folders (read and map), the /proc and /sys entries the driver reads
 * (docs/security.md lists them); nothing else is read, nothing is written.
 * extraLibraryDirs: folders of a driver named by KPG_CUDA_DRIVER and of
 * LD_LIBRARY_PATH.
 */
FsPolicy workerPolicy(const QStringList &extraLibraryDirs);

} // namespace Kp::Sandbox
