#pragma once

#include "core/result.h"
#include "kernel/signature.h"
#include "kernel/structlayout.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>
#include <QVariantMap>

namespace Kp {

/** How to compile. Plain value; the defaults are what the editor uses. */
struct CompileOptions
{
    /** "auto" (the device's compute capability, capped by NVRTC), "sm_XX" or "compute_XX". */
    QString arch = QStringLiteral("auto");
    int optLevel = 3;      ///< ptxas -O0..-O3
    bool fastMath = false; ///< --use_fast_math
    bool lineInfo = true;  ///< -lineinfo: PTX/SASS map back to source lines
    bool debug = false;    ///< -G (device debug; implies -O0)
    QStringList defines;   ///< "N=16" or "USE_X"
    QStringList includeDirs;
    QString std = QStringLiteral("c++17");
    QStringList extra;           ///< passed to NVRTC as they are
    QStringList nameExpressions; ///< template instances to lower, e.g. "matmul<16>"
    bool useCache = true;
    bool pch = true; ///< NVRTC automatic precompiled headers (fast heavy headers)

    QVariantMap toVariant() const;
    static CompileOptions fromVariant(const QVariantMap &map);
};

struct CompileRequest
{
    QString source;
    QString fileName = QStringLiteral("kernel.cu"); ///< names the program, so diagnostics say this file
    QString projectDir;                             ///< added to the include path when set
    /**
     * The kernel file's absolute path when it is a file on disk. NVRTC gets it
     * as the program name, so the line info in the PTX and cubin names a file
     * that tools can open (Nsight Compute's source page, cuda-gdb);
     * diagnostics and the log still say fileName. Ignored when it is not a
     * plain absolute path (see Compiler::programName).
     */
    QString sourcePath;
    CompileOptions options;
    int deviceCcMajor = 0; ///< for arch "auto"; 0 = no device known
    int deviceCcMinor = 0;
};

struct Diagnostic
{
    enum class Severity { Error, Warning, Note, Remark };
    QString file;   ///< as NVRTC printed it; the program name for the user's source
    int line = 0;   ///< 1-based; 0 when the message is not about a line (bad option)
    int column = 0; ///< 1-based; 0 when unknown
    Severity severity = Severity::Error;
    QString message;
    int number = -1; ///< NVRTC's diagnostic number ("#177-D" -> 177), -1 if none

    QVariantMap toVariant() const;
    static Diagnostic fromVariant(const QVariantMap &map);
    static QString severityName(Severity s);
    /**
     * "k.cu:12:5: error: message" as gcc prints it, the line and column left
     * out when they are 0 (a message not about a line: "k.cu: error: ..."), the
     * file as "kpg" when empty; control characters replaced (core/printable.h).
     */
    QString text() const;
};

/** What ptxas reported for one kernel (-v). */
struct KernelResources
{
    bool known = false;
    int registers = 0;
    int spillStores = 0; ///< bytes
    int spillLoads = 0;  ///< bytes
    int stackBytes = 0;
    int sharedBytes = 0; ///< static shared memory
    int constBytes = 0;  ///< constant bank 0 (kernel parameters and user __constant__)
    int barriers = 0;

    QVariantMap toVariant() const;
    static KernelResources fromVariant(const QVariantMap &map);
};

struct KernelInfo
{
    QString name;        ///< as written, or the name expression for a template instance
    QString loweredName; ///< the symbol in the cubin/PTX; empty if not lowered
    int line = 0;
    bool externC = false;
    bool isTemplate = false;
    QList<TemplateParam> templateParams;
    QList<KernelParam> params;
    KernelResources resources;

    QVariantMap toVariant() const;
    static KernelInfo fromVariant(const QVariantMap &map);
};

/** A compile's whole story: a failed compile is an ordinary result. */
struct CompileResult
{
    bool ok = false;
    QString log; ///< NVRTC's full log, also on success
    QList<Diagnostic> diagnostics;
    QByteArray ptx;
    QByteArray cubin; ///< empty for a virtual (compute_XX) arch
    QList<KernelInfo> kernels;
    QString arch; ///< the arch actually used: "sm_90"
    QString nvrtcVersion;
    QStringList nvrtcOptions; ///< exactly what NVRTC was given
    double compileMs = 0;     ///< NVRTC time (of the original compile when cached)
    bool cached = false;
    QString note; ///< e.g. why "auto" did not pick the device's exact arch
    /**
     * Layouts of the structs kernels take by value, keyed by the parameter's
     * base type, as the compiler laid them out (kernel/structlayout: a probe
     * unit compiled with the same options). Filled on a successful compile.
     */
    QHash<QString, StructLayout> layouts;
    /** Why the layout probe failed, when it did (struct arguments then cannot be written). */
    QString layoutError;

    int errorCount() const;
    int warningCount() const;

    QVariantMap toVariant() const;
    static CompileResult fromVariant(const QVariantMap &map);
};

} // namespace Kp
