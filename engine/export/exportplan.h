#pragma once

// The project resolved for export (engine/export/exporter.cpp builds it):
// every expression a number, every step in issue order, the bytes of every
// by-value argument decoded to its C type. The emitters (pythonexport.cpp,
// cppexport.cpp) only print it; they never look at the project's JSON.

#include "buffers/dtype.h"
#include "check/checkspec.h"
#include "export/exporter.h"
#include "kernel/structlayout.h"
#include "run/runrequest.h"
#include "run/texturedesc.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace Kp::ExportDetail {

struct PlanBuffer
{
    QString name;
    DType dtype = DType::Float32;
    QList<qint64> shape;
    qint64 bytes = 0;
    bool zeros = false;         ///< initial contents all zero: written as zeros, no file
    bool uninitialized = false; ///< allocated, never uploaded
    QString inputFile;          ///< "inputs/NAME.npy" (empty when zeros or uninitialized)
    QString initText;           ///< how the project fills it, for a comment
    QString symbol;             ///< a __constant__ or __device__ variable of the source: its memory, not an allocation
    QString ptxSymbol;          ///< symbol's name in the module (mangled inside a namespace; set with symbol)
};

struct PlanScalar
{
    QString name;       ///< as in the project
    QString identifier; ///< the program's variable (the name unless it is a reserved word there)
    DType type = DType::Int32;
    QByteArray bytes; ///< the value stored as the type
};

/** A by-value argument or a pointer into a buffer. */
struct PlanArg
{
    bool isBuffer = false;
    QString buffer;                 ///< isBuffer
    qint64 byteOffset = 0;          ///< isBuffer
    QString pointeeType;            ///< isBuffer: the parameter's base type ("float", "unsigned int", "void")
    DType valueType = DType::Int32; ///< !isBuffer: the parameter's type
    QString cType;                  ///< !isBuffer: the parameter's type as written ("int", "size_t")
    QByteArray bytes;               ///< !isBuffer: exactly the parameter's size
    int scalar = -1;                ///< !isBuffer: index of the scalar holding exactly this value and type, or -1
    int structValue = -1;           ///< !isBuffer: a struct passed by value, index into Plan::structValues
    int texture = -1;               ///< a texture or surface object: index into Plan::textures
    QString paramName;
};

/** A texture or surface object over a buffer, one per distinct binding (run and reference share them). */
struct PlanTexture
{
    TextureSpec spec;
    QString buffer;
    DType dtype = DType::Float32;
    QList<qint64> shape;
    QString where; ///< "launches (step 1, kernel 'k'): parameter 5 ('image', cudaTextureObject_t)"
};

/** A struct passed by value: its bytes in the layout NVRTC gave it, and its members, to write it readably. */
struct PlanStructValue
{
    QString type;       ///< as the parameter names it ("Transform", "ns::Params")
    QString identifier; ///< the program's variable holding the value
    QString where;      ///< "launches[0] parameter 't'", for comments
    QString written;    ///< the value as the project writes it, for comments
    QByteArray bytes;   ///< exactly sizeof(type) bytes, padding zero
    qint64 align = 1;
    QList<StructLeaf> leaves; ///< every scalar member, nested structs and arrays expanded, in declaration order
};

struct PlanStep
{
    RunStep::Kind kind = RunStep::Kind::Kernel;
    int stream = 0;
    QList<int> waits;
    int event = -1;
    QString buffer;
    qint64 offset = 0;
    qint64 bytes = 0;
    int memsetValue = 0;
    QString label;
    QString kernel; ///< as the project names it ("k<16>")
    Dim3 grid{1, 1, 1};
    Dim3 block{1, 1, 1};
    qint64 sharedBytes = 0;
    bool cooperative = false; ///< launched cooperatively (grid.sync() works)
    QList<PlanArg> args;

    bool sameAs(const PlanStep &o) const;
};

struct PlanStream
{
    QString name;
    int priority = 0;
    bool legacy = false;
};

struct PlanKernel
{
    QString name;   ///< as the project names it: "vectorAdd", "matmul<16>"
    QString symbol; ///< what PyCUDA's get_function needs (lowered name); empty when unknown
    bool externC = false;
    bool nameExpression = false; ///< not extern "C": found through NVRTC's name expressions
};

struct PlanModule
{
    QString file;      ///< the source's name in the export ("vector_add.cu")
    QString shownName; ///< the project's name for it, for comments
    QByteArray text;
    QList<PlanKernel> kernels; ///< the kernels its steps launch, in first-use order
};

struct PlanRun
{
    int module = 0; ///< index into Plan::modules
    QList<PlanStep> steps;
    QList<PlanStream> streams; ///< index 0: the project's "default" stream
    QStringList events;
    int repeat = 1;
    QList<QPair<QString, QString>> swaps;

    bool usesStreams() const;
};

struct PlanCheck
{
    QString name;
    QString buffer;
    CheckSpec::Kind kind = CheckSpec::Kind::Expected;
    QString target;                      ///< the expression, reference buffer or npy file as written
    QString expectedFile;                ///< Expected, Npy: "expected/N_NAME.npy"
    DType expectedType = DType::Float64; ///< of expectedFile: float64, or int64/uint64 from a 64-bit integer file
    QString reference;                   ///< Reference: the reference run's buffer
    bool exact = false;                  ///< integer buffer
    CheckTolerance tolerance;
    std::optional<CheckRegion> region;
    bool regionInFile = false; ///< Npy with a region: the file holds the region only
    bool nan = false;
    int seeds = 1;
};

struct Plan
{
    QString title;
    QString projectFile; ///< the .kpg's file name, for comments
    QString programFile;
    QList<PlanModule> modules;
    QList<PlanBuffer> buffers;
    QList<PlanScalar> scalars;
    QList<PlanStructValue> structValues; ///< struct arguments, one per distinct type and value
    QList<PlanTexture> textures;         ///< texture and surface objects the arguments name
    PlanRun run;
    std::optional<PlanRun> reference; ///< when a check needs the reference run
    QList<PlanCheck> checks;
    bool graph = false;
    // Compile options
    QString arch; ///< "auto", "sm_90", "compute_90"
    int optLevel = 3;
    bool fastMath = false;
    bool lineInfo = true;
    bool debug = false;
    QString std;
    QStringList defines;     ///< "NAME" or "NAME=VALUE"
    QStringList includeDirs; ///< absolute: the project's folder first, then its include folders
    /// The export's folder of the C headers NVRTC lacks (the playground's own
    /// stand-ins, written beside the program), or empty when no source needs one.
    QString nvrtcHeaderDir;
    QStringList extra;
    // Timing
    bool timingEnabled = true;
    bool cold = true;
    int warmup = 1;
    int minSamples = 10;
    int maxSamples = 10000;
    double minSeconds = 0.5;
    double maxNoise = 0.005;
    double timeoutSeconds = 15;
    int batch = 0;
    QStringList notes; ///< approximations, also said in comments
};

/** The program text for a Python target (pythonexport.cpp). */
Result<QByteArray> emitPython(Plan &plan, ExportTarget target);
/** main.cu and build.sh for cuda-cpp (cppexport.cpp). */
Result<QList<ExportFile>> emitCpp(Plan &plan);

/** A number's shortest text that reads back as the same value of type t (float: as float). */
QString shortestText(DType t, const QByteArray &bytes);
/** True for [A-Za-z_][A-Za-z0-9_]*. */
bool isIdentifier(const QString &s);
/** "float32 [480, 640]" */
QString shapeText(const QList<qint64> &shape);
/** NumPy's name of a dtype's component ("float32"; bfloat16: "uint16", its raw bits). */
QString numpyComponentName(DType t);
/** A struct member's value in its bytes, as shortestText() writes it ("true"/"false" for a bool). */
QString leafText(const StructLeaf &leaf, const QByteArray &structBytes);
/**
 * The textures a kernel step copies: before its launch, every texture and
 * surface it binds (its buffer into the array); after it, its surfaces (the
 * array back into the buffer). Each once, in argument order.
 */
QList<int> textureCopiesOf(const Plan &plan, const PlanStep &step, bool before);

} // namespace Kp::ExportDetail
