#pragma once

#include "buffers/bufferspec.h"
#include "check/checkspec.h"
#include "compile/compiletypes.h"
#include "core/result.h"
#include "run/texturedesc.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace Kp {

/** A named scalar: a kernel argument or a variable for expressions. */
struct ScalarSpec
{
    QString name;
    DType type = DType::Int32; ///< scalar dtypes only (vector scalars are not supported yet)
    double value = 0;
    QJsonObject unknown;
};

/** What one kernel parameter is bound to. */
struct ArgBinding
{
    enum class Kind {
        Buffer,  ///< a device pointer to buffer `name`, `offset` elements in
        Scalar,  ///< the value of scalar `name`, converted to the parameter's type
        Literal, ///< a number written in the project (or null, or a vector or struct value: see below)
        Texture, ///< a texture or surface object over buffer `name`, made by the worker (`texture`)
    };
    Kind kind = Kind::Literal;
    QString name;
    qint64 offset = 0; ///< Buffer: elements
    double value = 0;  ///< Literal
    /** Literal written as null (or "NULL", "nullptr"): a null pointer, for pointer parameters only. */
    bool null = false;
    /**
     * Literal written as a vector or struct value ("float2 {1, 2}" or [1, 2],
     * nested braces flattened): every scalar member in declaration order. A
     * Literal is an aggregate when this is not empty.
     */
    QList<double> values;
    QString text; ///< the aggregate as written when it was a string ("float2 {1, 2}"); empty for an array

    bool isAggregate() const { return kind == Kind::Literal && !values.isEmpty(); }
    /** Literal given as an expression string ({"value": "chunk.offset"}), evaluated when the project runs. */
    QString expression;
    /** Bound by parameter name (args given as an object) instead of by position. */
    QString param;
    /** Texture: how the object is made ({"texture": "img", ...} or {"surface": "img"}); texture.buffer == name. */
    TextureSpec texture;
};

/** Largest grid or block extent, and largest dynamic shared memory, that a project may give as a number. */
constexpr qint64 kMaxLaunchDim = 2147483647; // INT32_MAX

/**
 * One launch step (docs/streams.md): a kernel launch (the default kind), a
 * copy, a memset, an event record or wait, or a group of steps repeated per
 * chunk of a range. Grid and block items are numbers or expressions.
 */
struct LaunchStep
{
    enum class Kind {
        Kernel, ///< "kernel": kernel, grid, block, sharedBytes, args
        Copy,   ///< "copy": buffer, to, offset, count
        Memset, ///< "memset": buffer, value (a byte), offset, count
        Record, ///< "record": event
        Wait,   ///< "wait": waitFor
        Chunks, ///< "chunks": count, streams, elements, name, steps (run once per chunk)
    };
    Kind kind = Kind::Kernel;
    QString kernel;                            ///< name as in the source, or a name expression "matmul<16>"
    QStringList grid;                          ///< 1 to 3 items; missing ones are 1
    QStringList block;                         ///< 1 to 3 items
    QString sharedBytes = QStringLiteral("0"); ///< dynamic shared memory, number or expression
    /** Kernel: launched with cuLaunchCooperativeKernel, so grid.sync() works; the grid must fit on the GPU at once. */
    bool cooperative = false;
    QList<ArgBinding> args;
    /** The named stream it runs on; empty: "default", the stream every step ran on before streams existed. */
    QString stream;
    QStringList waitFor;  ///< events that must have happened before the step starts
    QString event;        ///< Record: the event recorded after the stream's work so far
    QString buffer;       ///< Copy, Memset
    bool toDevice = true; ///< Copy: "to": "device" (host to device) or "host"
    QString offset;       ///< Copy, Memset: first element, number or expression; empty: 0 (in a chunk: chunk.offset)
    QString count;        ///< Copy, Memset: elements, number or expression; empty: to the end (in a chunk: chunk.n)
    int memsetValue = 0;  ///< Memset: the byte written
    // Chunks
    QString chunkCount;      ///< "count": how many chunks
    QString chunkStreams;    ///< "streams": chunk i runs on stream NAME.(i % streams); empty: 1
    QString elements;        ///< "elements": the range split into chunks
    QString groupName;       ///< "name": the generated streams' name; empty: "chunk"
    QList<LaunchStep> steps; ///< Chunks: the steps run for every chunk
    QJsonObject unknown;

    bool isKernel() const { return kind == Kind::Kernel; }
};

/** A named stream of the project ("streams"); "default" and "legacy" need no entry. */
struct StreamSpec
{
    QString name;
    int priority = 0; ///< lower is more urgent, as in CUDA (clamped to the device's range)
    QJsonObject unknown;
};

/** A repeat count for time-stepping kernels; the swaps happen after each repetition. */
struct RepeatSpec
{
    int count = 1;
    QList<QPair<QString, QString>> swaps; ///< buffer names exchanged after each repetition
};

struct TimingSpec
{
    enum class Mode {
        Cold, ///< L2 flushed before each sample (the default, like nvbench)
        Hot,  ///< batches of back-to-back launches, L2 warm
    };
    Mode mode = Mode::Cold;
    bool enabled = true;
    int warmup = 1;
    int minSamples = 10;
    int maxSamples = 10000;
    double minSeconds = 0.5;    ///< of accumulated GPU time
    double maxNoise = 0.005;    ///< relative standard deviation (0.5 %)
    double timeoutSeconds = 15; ///< wall clock for the whole sampling
    int batch = 0;              ///< Hot: launches per sample; 0 = automatic
    /**
     * Buffers restored from their contents before the first run, on the
     * device and outside the timed region, before every warm-up and timing
     * sample; the others carry over from sample to sample (docs/kpg-project.md).
     */
    QStringList resetBeforeEachSample;
    QJsonObject unknown;
};

struct Throughput
{
    QString bytes; ///< expression over the scalars, e.g. "12*n"; empty = not reported
    QString flops;
};

/**
 * The trusted run that "reference" checks compare with (docs/checks.md): the
 * project with another source and/or other launches, run on the same inputs
 * and never timed.
 */
struct ReferenceSpec
{
    QString sourceFile; ///< relative to the project's folder; empty: the project's own source as written
    QString sourceText; ///< the file's contents once loaded (empty when sourceFile is)
    std::optional<QList<LaunchStep>> launches; ///< none: the project's launches
    QJsonObject unknown;
};

/**
 * How `kpg grade` judges a submission beyond its checks (docs/labs.md). The
 * speed ratio of a submission is the reference's median time divided by the
 * submission's, both timed with the project's "timing" on the same GPU in the
 * same grading: 2 means twice as fast as the reference, 0.5 half as fast.
 */
struct GradingSpec
{
    /** "speedup": the least speed ratio that passes; 0: no speed target. */
    double minSpeedup = 0;
};

/** "sweep": the axes `kpg sweep` and the Sweep panel use when none are given (docs/sweep.md). */
struct SweepSpec
{
    QStringList axes; ///< as for --axis: "block.x=32:1024:pow2", "define.TILE=8,16,32"
    bool zip = false;
};

/**
 * A .kpg project (docs/kpg-project.md): everything needed to compile and run
 * kernels with no host code. A plain value; load() and save() are in
 * projectio.h.
 */
struct Project
{
    static constexpr int kVersion = 1;

    QString title;
    QString description; ///< Markdown
    QString sourceFile;  ///< relative to the project's folder; empty when inline
    QString sourceText;  ///< the inline source, or the file's contents once loaded
    CompileOptions compile;
    QList<ScalarSpec> scalars;
    QList<BufferSpec> buffers;
    QList<LaunchStep> launches;
    QList<StreamSpec> streams; ///< "streams" (docs/streams.md)
    /** "graph": the steps captured once into a CUDA graph and replayed, timed against launching them one by one. */
    bool graph = false;
    RepeatSpec repeat;
    TimingSpec timing;
    Throughput throughput;
    std::optional<ReferenceSpec> reference; ///< "reference"; none when the project has no such key
    QList<CheckSpec> checks;                ///< "checks" (docs/checks.md)
    std::optional<GradingSpec> grading;     ///< "grading"; none when the project has no such key
    std::optional<SweepSpec> sweep;         ///< "sweep"; none when the project has no such key
    QJsonObject unknown;                    ///< top-level keys this version does not know
    QString path;                           ///< the file it was loaded from (not saved)
    double killTimeoutSeconds = 10;         ///< "timeout": a launch running longer is stopped

    QString dir() const; ///< folder of path ("." when unsaved)
    const BufferSpec *buffer(const QString &name) const;
    const ScalarSpec *scalar(const QString &name) const;
};

} // namespace Kp
