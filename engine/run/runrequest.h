#pragma once

#include "buffers/dtype.h"
#include "run/runtypes.h"
#include "run/texturedesc.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QVariantMap>

#include <utility>

namespace Kp {

/** A buffer of a run: the engine's shared memory, which the worker maps by path. */
struct RunBuffer
{
    QString name;   ///< as the project names it (messages only)
    QString path;   ///< /proc/PID/fd/N of the engine's memfd
    quint64 id = 0; ///< SharedMemory::id(): descriptor numbers get reused, ids do not
    qint64 bytes = 0;
    int elementBytes = 1; ///< the dtype's size, for guard messages in elements
    bool upload = true;   ///< false: an "uninitialized" buffer, allocated on the device but never written to it
    /**
     * Not empty: the module's global of this PTX name is the buffer's device
     * copy (cuModuleGetGlobal), not an allocation of its own; its size must
     * equal bytes.
     */
    QString symbol{};

    bool operator==(const RunBuffer &) const = default;
};

/**
 * A texture or surface object the worker makes over a buffer for a run
 * (docs/buffers.md, "Textures and surfaces"): the binding, and the buffer's
 * dtype and shape that buildTextureDescriptors() needs. Steps that bind the
 * same object share one entry, so they share one CUDA array.
 */
struct RunTexture
{
    TextureSpec spec;
    int buffer = -1; ///< index into RunRequest::buffers
    DType dtype = DType::Float32;
    QList<qint64> shape;
    QString field; ///< "launches[0].args[1]", for messages

    bool operator==(const RunTexture &) const = default;
};

/** One kernel argument: a pointer into a buffer, a texture or surface object, or a by-value parameter's bytes. */
struct RunArg
{
    int buffer = -1;   ///< >= 0: a pointer to RunRequest::buffers[buffer] (+ offset); -1: by value
    qint64 offset = 0; ///< bytes from the start of the buffer
    QByteArray value;  ///< a by-value argument's bytes, exactly the parameter's size
    int texture = -1;  ///< >= 0: the 8-byte handle of RunRequest::textures[texture]

    bool isBuffer() const { return buffer >= 0; }
    bool isTexture() const { return texture >= 0; }
    bool operator==(const RunArg &) const = default;
};

/** One launch step with everything resolved: no expressions, no names to look up. */
struct RunStep
{
    /** What the step does (docs/streams.md); a request from before streams has kernels only. */
    enum class Kind { Kernel, CopyToDevice, CopyToHost, Memset, Record, Wait };
    Kind kind = Kind::Kernel;
    int stream = 0;    ///< index into RunRequest::streams; 0: the default stream
    QList<int> waits;  ///< indices into RunRequest::events that must have happened first
    int event = -1;    ///< Record: the event recorded
    int buffer = -1;   ///< CopyToDevice, CopyToHost, Memset: index into RunRequest::buffers
    qint64 offset = 0; ///< bytes from the buffer's start
    qint64 bytes = 0;
    int memsetValue = 0;
    QString label;       ///< for the timeline and messages: "copy a[0:4096] to the device"
    QString kernel;      ///< as the project names it ("k<16>")
    QString loweredName; ///< the symbol in the module image
    Dim3 grid{1, 1, 1};
    Dim3 block{1, 1, 1};
    qint64 sharedBytes = 0; ///< dynamic shared memory per block
    QList<RunArg> args;
    bool cooperative = false; ///< cuLaunchCooperativeKernel, after the residency check (cooperativeGridError())

    bool operator==(const RunStep &) const = default;
};

/** A stream of a run; index 0 of RunRequest::streams is always the default stream. */
struct RunStream
{
    QString name;
    int priority = 0;
    bool legacy = false; ///< CUDA's legacy NULL stream

    bool operator==(const RunStream &) const = default;
};

/** How the worker samples run times (docs/ARCHITECTURE.md, "Timing, nvbench-style"). */
struct RunTiming
{
    enum class Mode { Cold, Hot };
    bool enabled = true;
    Mode mode = Mode::Cold;
    int warmup = 1;
    int minSamples = 10;
    int maxSamples = 10000;
    double minSeconds = 0.5;
    double maxNoise = 0.005; ///< stdev / mean
    double timeoutSeconds = 15.0;
    int batch = 0; ///< hot: launches per sample; 0 = about 1 ms of work
    /** Buffer indices restored on the device from their uploaded contents before every warm-up and sample. */
    QList<int> resetBuffers;

    bool operator==(const RunTiming &) const = default;
};

/**
 * The "run" request to kpg-worker as a value: what prepareRun resolved and
 * the worker executes. Its wire form (a QVariantMap that travels as CBOR) is
 * written and read only here, so the engine and the worker cannot disagree
 * on a key. A plain value; safe to copy across threads.
 */
struct RunRequest
{
    int device = 0;
    QByteArray image; ///< cubin, or PTX (the worker adds the terminating NUL)
    QList<RunBuffer> buffers;
    QList<RunTexture> textures; ///< texture and surface objects the steps' arguments name
    QList<RunStep> steps;
    int repeat = 1;                   ///< the steps run this many times...
    QList<std::pair<int, int>> swaps; ///< ...swapping these buffer indices between repetitions
    int killTimeoutMs = 10000;        ///< per launch, enforced by the worker
    /** Named streams; empty: every step on the default stream, as before streams existed. */
    QList<RunStream> streams;
    QStringList events; ///< event names, for messages
    /** After timing: one more pass with events around every step, for the timeline. */
    bool timeline = false;
    /** Also capture the steps into a CUDA graph and time its replay against launching them. */
    bool graph = false;
    RunTiming timing;
    bool download = true; ///< copy the buffers back to the host copies after the run
    bool guards = true;   ///< guard zones around every buffer (off under compute-sanitizer, which needs exact sizes)
    int testSleepMs = 0;  ///< tests only: the worker sleeps first (needs KPG_WORKER_TEST_HOOKS)
    /**
     * kpg grade's anti-gaming (docs/labs.md): these buffers are filled with
     * 0xFF bytes (NaN for floats) before every launch of the step that writes
     * them (sentinelBeforeSteps(), run/sentinel.h) and before every timing
     * sample, and downloaded again after timing, so the checks judge what the
     * last launches wrote. Empty: none of it (and with swaps or streams, ignored).
     */
    QList<int> sentinelBuffers;
    /**
     * The memory-access map (access/ptxinstrument.h): image is an instrumented
     * module, and the worker gives it room for this many warp records, counts
     * them after every step and sends them back (RunResult::accessTrace).
     * 0: an ordinary run.
     */
    qint64 accessRecords = 0;
    /** With accessRecords: the step whose launch is recorded (the others only run); -1: every step. */
    int accessStep = -1;

    bool operator==(const RunRequest &) const = default;

    /** True when any step is more than a kernel on the default stream: the steps then run asynchronously. */
    bool usesStreams() const;

    /** The "run" body. */
    QVariantMap toVariant() const;
    /**
     * Reads a "run" (or "prepare") body. Missing keys take the defaults above,
     * as the worker always did, so that an older engine's request still runs.
     */
    static RunRequest fromVariant(const QVariantMap &map);

    /** The "prepare" body: the device and buffers only, to restore them on a fresh worker. */
    QVariantMap toPrepareVariant() const;
};

} // namespace Kp
