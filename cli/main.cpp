// kpg: Kernel Playground without a window. Runs the same engine as the GUI,
// for scripts and for grading labs.

#include "client/engineclient.h"
#include "client/remotecompile.h"
#include "client/target.h"
#include "cliutil.h"
#include "compile/compiler.h"
#include "compile/sandbox.h"
#include "core/format.h"
#include "core/printable.h"
#include "core/safefile.h"
#include "core/startuptrace.h"
#include "cuda/deviceinfo.h"
#include "cuda/nvrtcapi.h"
#include "exitcodes.h"
#include "projectcli.h"
#include "run/ceilings.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTextStream>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include <dlfcn.h>
#include <execinfo.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

using namespace Kp;
using namespace Kp::Cli;

namespace {

const char *kUsage = R"(Usage: kpg <command> [options]

Kernel Playground's command-line tool: runs, checks and sweeps kernels of
.kpg projects without a window.

Commands:
  devices [--json]   List the CUDA devices with compute capability, SM count
                     and memory, and the driver and NVRTC versions.
      --ceilings     also each device's copy bandwidth and FP32/FP64 FMA
                     rates, measured once and cached per device, driver and
                     clocks (docs/sweep.md, "Device ceilings")
      --remeasure    measure the ceilings again instead of reading the cache

  compile FILE.cu [options]
                     Compile with NVRTC; print diagnostics, kernels and resources.
      --arch A       auto (the GPU's compute capability, else sm_90), sm_XX, compute_XX
      -D NAME[=VAL]  define a macro (repeatable)
      -I DIR         add an include folder (repeatable; FILE's folder is always added)
      -O N           ptxas optimisation level 0-3 (default 3)
      --fast-math    --use_fast_math
      -G             device debug information
      --no-lineinfo  leave out source line information
      --std S        language standard (default c++17)
      --opt OPTION   pass an option to NVRTC as it is (repeatable)
      --name-expr E  instantiate a kernel template, e.g. 'matmul<16>' (repeatable)
      --no-cache     do not read or write the compile cache
      --timeout S    stop a compile that runs longer than S seconds (default:
                     $KPG_COMPILE_TIMEOUT, else 60)
      --memory-limit MIB
                     stop a compile whose process passes MIB MiB of memory
                     (default: $KPG_COMPILER_MEMORY_LIMIT, else half the RAM
                     over one compile per core, 2048 to 8192)
      --json         print one JSON object (docs/kpg-compile-json.md)
      --ptx OUT      write the PTX to OUT
      --cubin OUT    write the cubin to OUT

  run PROJECT.kpg [options]
                     Compile the project's kernel, fill its buffers, run its
                     launch steps on the GPU and time them (docs/kpg-run-json.md).
      --json OUT|-   write the result as JSON to OUT, or to stdout with -
      --csv OUT      write the timing samples as CSV to OUT
      --save-buffers DIR
                     write every buffer after the run to DIR/NAME.npy
      --device N     run on GPU N (default 0)
      --timeout S    stop a launch that runs longer than S seconds (default:
                     the project's, else 10)
      --source FILE  use FILE.cu instead of the project's source
      --no-timing    run once, without timing samples
      --trace OUT    write the timeline (every step from its events, a lane
                     per stream and copy direction) as Chrome trace-event
                     JSON, for Perfetto or chrome://tracing (docs/streams.md)
      --graph        also capture the steps into a CUDA graph and time its
                     replay against launching them one by one
      --confine      refuse a project that names files outside its folder
                     (source, include folders, .npy and image inits)
      --sanitize memcheck|racecheck|initcheck|synccheck
                     run once, untimed, under compute-sanitizer and report
                     its findings by line, thread and buffer element; any
                     finding makes the exit code 1 (docs/memory-checking.md)
      --hazards      with racecheck: every hazard (threads, shared offsets)
      --all-findings print every finding, not the first 10 of each kind
                     The project's checks are evaluated after the run
                     (docs/checks.md); a failing check, or a write outside a
                     buffer that its guard zones caught, makes the exit code 1.

  check PROJECT.kpg [options]
                     Compile the project (or FILE.cu in place of its source),
                     run it, evaluate its checks and report (docs/checks.md).
                     The reference, inputs and checks stay the project's.
      --source FILE  check FILE.cu instead of the project's source
      --json OUT|-   write the report as JSON to OUT, or to stdout with -
      --device N     run on GPU N (default 0)
      --timeout S    stop a launch that runs longer than S seconds (default:
                     the project's, else 10)
      --timing       also time the run (off by default)
      --sanitize TOOL, --hazards, --all-findings
                     as for run: a finding fails the check (exit code 1)
      --no-sandbox   compile even where the compiler sandbox is not available,
                     and let the project name files outside its folder
                     (docs/security.md)

  sweep PROJECT.kpg [--axis SPEC...] [options]
                     Run the project once per point of the axes, timed and
                     with its checks; list every point, skipped ones with the
                     reason (docs/sweep.md). Without --axis, the project's
                     "sweep" axes. The points spread over every GPU of the
                     same model as GPU 0, one worker each.
      --axis NAME=V1,V2,...|NAME=A:B[:STEP|:pow2]
                     NAME: block.x|y|z, grid.x|y|z, define.NAME, template.I
                     or a scalar's name (repeatable)
      --zip          take the axes' i-th values together, not every combination
      --csv OUT      write one row per point to OUT
      --json OUT|-   write the points as JSON to OUT, or to stdout with -
      --plot OUT     draw the sweep to OUT (.png, .svg, or .csv for its data)
      --plot-y Y     time (median, default) or throughput
      --plot-x AXIS  the axis along x (default: the first)
      --plot-series AXIS|none
                     one line per value of AXIS (default: the second axis)
      --plot-kind K  lines (default) or heatmap (two axes)
      --plot-theme T light (default) or dark
      --plot-size WxH  pixels (default 900x560)
      --roofline OUT draw the points on the device's roofline (measures the
                     ceilings once, as kpg devices --ceilings)
      --device N     run on GPU N only
      --confine      refuse a project that names files outside its folder

  compare A.json B.json [options]
                     Judge two timed runs (kpg run --json) from their sample
                     distributions: B against the baseline A is faster,
                     slower, the same or ambiguous (docs/compare.md).
      --threshold P  the smallest difference of the medians, in percent of
                     A's, called faster or slower (default 1)
      --expect V     exit with 1 unless the verdict is V: same, faster,
                     slower, not-slower or not-faster
      --json OUT|-   write the verdict and its numbers as JSON

  export PROJECT.kpg --to pycuda|cupy|cuda-python|cuda-cpp [-o OUT]
                     Write the project as the host program a user would write
                     (compile, buffers, launches, timing, checks), with its
                     kernel source and inputs beside it (docs/export.md).
      -o OUT         the folder to write (default: PROJECT-TARGET here)

  access PROJECT.kpg [options]
                     The memory-access map of one launch: per source line,
                     32-byte sectors per global request against the ideal and
                     shared-memory wavefronts (bank conflicts), from a real
                     launch of an instrumented copy (docs/memory-access.md).
      --step N       the launch step to record (default 1); the steps
                     before it run too
      --records N    room for N warp requests (default 262144, 288 bytes
                     each); more are counted, not recorded
      --cell B[I]    also list the threads that read or wrote element I of
                     buffer B
      --json OUT|-   write the report as JSON
      --device N     run on GPU N (default 0)
      --source FILE  use FILE.cu instead of the project's source

  grade LAB --submissions DIR [options]
                     Grade every student's EXERCISE.cu (a folder per student)
                     against every exercise .kpg of the LAB folder, one worker
                     per GPU; a table per student and a summary (docs/labs.md).
                     Exit 0 once everything is graded, whatever the grades.
      --csv OUT      write the results as CSV
      --json OUT|-   write the results as JSON (the table then goes to stderr)
      --journal FILE the journal results are appended to as they finish
                     (default: beside --json or --csv, else
                     LAB-grade.journal.jsonl here)
      --resume       keep what the journal already graded; grade the rest
      --jobs N       workers (default: one per GPU)
      --compile-jobs N  compile threads running ahead (default: the cores left)
      --devices LIST GPUs to use, e.g. 0,2 (default: all)
      --only NAMES   only these students: a,b,c or @FILE (a name a line)
      --timeout S    stop a launch that runs longer than S seconds
      --no-timing    do not time (no speed ratios or speed targets)
      --require-gpu  exit 69 when there is no GPU, instead of grading
                     compile errors and reporting the rest as "no GPU"
      --no-sandbox   compile submissions even where the compiler sandbox is
                     unavailable
      --slurm        run the grading as a Slurm job array and merge the parts
        --partition P      the partition to submit to
        --gpus-per-task N  GPUs per array task (default 1; 0: none)
        --tasks N          array tasks (default: one per student, at most 16)
        --slurm-dir DIR    shared folder for the tasks' script, lists,
                           journals and logs (default: beside the journal)
        --sbatch-arg ARG   pass ARG to sbatch (repeatable)
      --seed-salt TEXT|@FILE  mix a secret into every random input's seed
                     (default: LAB/grading-salt when it exists)
      --sanitize memcheck  also run each submission under compute-sanitizer
      --plagiarism FILE    write the alike pairs of submissions as CSV
      --gradebook FILE     a CSV row per student: total and points
      --feedback DIR       STUDENT.md and STUDENT.html per student
      --gradescope OUT     Gradescope results.json (OUT/STUDENT/ for several)
      --autolab            Autolab's {"scores": ...} line last on stdout
      --manifest FILE      student,time of each hand-in, for the late penalty

  lab export-starter LAB OUTDIR
                     Write the students' copy of a lab: the starters, the
                     exercises without hidden checks, the reference or the
                     grading settings (docs/labs.md).

Options:
  --target T         where kpg-worker runs, for every command (docs/remote.md):
                     local (default), ssh://[user@]host[:port][/path/to/kpg-worker],
                     or slurm:[partition=P,gpus=N,time=T,account=A,wait=S,
                     worker=PATH,via=ssh://login]; compiling stays here
  -h, --help         Show this help and exit.
  --version          Show the version and exit.

Environment:
  KPG_WORKER         path of kpg-worker (default: next to kpg)
  KPG_TARGET         the target when --target is not given (default: local)
  KPG_SSH            the ssh program for remote targets (default: ssh)
  KPG_SSH_CONFIG     an ssh_config passed to ssh as -F (default: ssh's own)
  KPG_SRUN           the srun program for local Slurm targets (default: srun)
  KPG_CUDA_DRIVER    driver library to load (default: libcuda.so.1)
  KPG_NVRTC_LIBRARY  NVRTC library to load (default: libnvrtc.so.13, .so.12)
  KPG_CACHE_DIR      compile cache folder (default: ~/.cache/kernel-playground/nvrtc)
  KPG_NO_CACHE=1     disable the compile cache
  KPG_COMPILER       path of kpg-compiler, NVRTC's sandboxed process (default: next to kpg)
  KPG_COMPILE_TIMEOUT  compile time limit in seconds (default: 60)
  KPG_COMPILER_MEMORY_LIMIT  compile memory limit in MiB (default: half the RAM over one compile per core, 2048-8192)
  KPG_WORKER_SANDBOX=1  restrict kpg-worker's file access with Landlock (docs/security.md; kpg grade: on, =0 off)
  KPG_PROFILING=1|0  treat the run as under a CUDA profiler, or not (default: found from ncu's and nsys's variables)
  KPG_WORKER_SPAWN   posix or qprocess: how kpg-worker is started (default: posix_spawn under Nsight, else QProcess)
  KPG_CRASH_TRACE=1  on a crash, print the crashing thread, the return address and the stack
)";

/**
 * --target T (or --target=T) of any command: checked here and handed on as
 * KPG_TARGET, which every EngineClient of this process reads (client/target.h),
 * so devices, run, check, sweep and grade need no option of their own.
 * Returns an exit code when the option is wrong.
 */
std::optional<int> takeTargetOption(QStringList &args)
{
    for (qsizetype i = 0; i < args.size(); ++i) {
        QString value;
        if (args[i] == QLatin1String("--target")) {
            if (i + 1 >= args.size()) {
                return usageError(QStringLiteral("--target needs a value: local, ssh://[user@]host[:port][/path/to/"
                                                 "kpg-worker] or slurm:[partition=P,gpus=N,...]"));
            }
            value = args[i + 1];
            args.remove(i, 2);
        } else if (args[i].startsWith(QLatin1String("--target="))) {
            value = args[i].mid(9);
            args.remove(i);
        } else {
            continue;
        }
        const Result<Target> t = Target::parse(value);
        if (!t) {
            return usageError(QStringLiteral("--target: ") + t.error().message);
        }
        qputenv("KPG_TARGET", t->spec.toUtf8());
        --i;
    }
    if (const Result<Target> t = Target::fromEnvironment(); !t) {
        return usageError(t.error().message);
    }
    return std::nullopt;
}

/** The usage text, then the exit codes from their one list (cli/exitcodes.h). */
void printUsage()
{
    out() << kUsage << "\nExit codes:\n";
    for (const Exit::CodeInfo &c : Exit::kExitCodes) {
        out() << qSetFieldWidth(4) << Qt::right << c.code << qSetFieldWidth(0) << Qt::left << " " << c.meaning << "\n";
    }
    out().flush();
}

QJsonObject nvrtcJson()
{
    const Result<const NvrtcApi *> nvrtc = NvrtcApi::instance();
    if (!nvrtc) {
        return QJsonObject{{QStringLiteral("error"), QJsonObject::fromVariantMap(nvrtc.error().toVariant())}};
    }
    return QJsonObject{{QStringLiteral("version"), (*nvrtc)->versionString()},
                       {QStringLiteral("library"), (*nvrtc)->libraryPath}};
}

/** kpg devices' NVRTC and compiler sandbox lines, with a driver or without. */
void printNvrtcLines(const QJsonObject &nvrtc)
{
    if (nvrtc.contains(QStringLiteral("version"))) {
        out() << "NVRTC:  " << nvrtc.value(QStringLiteral("version")).toString() << " ("
              << nvrtc.value(QStringLiteral("library")).toString() << ")\n";
    } else {
        out() << "NVRTC:  not found; kernels cannot be compiled\n";
    }
    out() << "Compiler sandbox: " << Sandbox::availability().text << "\n";
}

int devices(const QStringList &args)
{
    bool json = false;
    bool ceilings = false;
    bool remeasure = false;
    for (const QString &a : args) {
        if (a == QLatin1String("--json")) {
            json = true;
        } else if (a == QLatin1String("--ceilings")) {
            ceilings = true;
        } else if (a == QLatin1String("--remeasure")) {
            ceilings = true;
            remeasure = true;
        } else {
            return usageError(
                QStringLiteral("devices: unknown option '%1' (allowed: --json, --ceilings, --remeasure)").arg(a));
        }
    }
    EngineClient engine;
    const Result<DeviceList> reply = engine.listDevicesSync(60000);
    const QJsonObject nvrtc = nvrtcJson();

    if (!reply) {
        const Error &e = reply.error();
        if (json) {
            const QJsonObject doc{{QStringLiteral("devices"), QJsonArray{}},
                                  {QStringLiteral("nvrtc"), nvrtc},
                                  {QStringLiteral("error"), QJsonObject::fromVariantMap(e.toVariant())}};
            out() << QJsonDocument(doc).toJson(QJsonDocument::Indented);
            out().flush();
        } else {
            // Compiling needs no GPU: what it needs is still worth showing.
            out() << "Driver: none (compile-only: kpg compile and kpg check still compile)\n";
            printNvrtcLines(nvrtc);
            out().flush();
        }
        err() << "kpg: " << printable(e.message) << "\n";
        err().flush();
        return Exit::forError(e);
    }

    const DeviceList &list = reply.value();
    // With --ceilings every device is measured (or read from the cache);
    // without, the JSON still carries the figures of devices measured before.
    QList<std::optional<DeviceCeilings>> measured;
    QStringList cacheNotes;
    int code = Exit::Ok;
    for (const DeviceInfo &d : list.devices) {
        if (!ceilings) {
            measured << readCachedCeilings(ceilingsCachePath(), d, list.driverVersion);
            cacheNotes << QString();
            continue;
        }
        if (!json) {
            err() << "GPU " << d.ordinal << ": " << (remeasure ? "measuring" : "ceilings") << "...\n";
            err().flush();
        }
        bool fromCache = false;
        const Result<DeviceCeilings> c = deviceCeilings(engine, d, list.driverVersion, remeasure, &fromCache);
        if (!c) {
            err() << "kpg: GPU " << d.ordinal << ": the ceilings could not be measured: " << c.error().message << "\n";
            code = code ? code : Exit::forError(c.error());
            measured << std::nullopt;
            cacheNotes << QString();
            continue;
        }
        measured << *c;
        cacheNotes << (fromCache ? QStringLiteral("cached %1").arg(c->measuredAt) : QStringLiteral("measured now"));
    }
    if (json) {
        QJsonArray arr;
        for (qsizetype i = 0; i < list.devices.size(); ++i) {
            const DeviceInfo &d = list.devices[i];
            QJsonObject o = QJsonObject::fromVariantMap(d.toVariant());
            o.insert(QStringLiteral("computeCapability"), d.computeCapability());
            o.insert(QStringLiteral("arch"), d.arch());
            if (measured[i]) {
                o.insert(QStringLiteral("ceilings"), measured[i]->toJson());
            }
            arr.append(o);
        }
        const Sandbox::Availability sandbox = Sandbox::availability();
        const QJsonObject doc{
            {QStringLiteral("driver"),
             QJsonObject{{QStringLiteral("cudaVersion"), cudaVersionString(list.driverVersion)},
                         {QStringLiteral("version"), list.driverVersion}}},
            {QStringLiteral("nvrtc"), nvrtc},
            {QStringLiteral("compilerSandbox"),
             QJsonObject{{QStringLiteral("sandboxed"), sandbox.sandboxed}, {QStringLiteral("state"), sandbox.text}}},
            {QStringLiteral("devices"), arr}};
        out() << QJsonDocument(doc).toJson(QJsonDocument::Indented);
        out().flush();
        return code;
    }
    out() << "Driver: CUDA " << cudaVersionString(list.driverVersion) << "\n";
    printNvrtcLines(nvrtc);
    for (qsizetype i = 0; i < list.devices.size(); ++i) {
        const DeviceInfo &d = list.devices[i];
        out() << "GPU " << d.ordinal << ": " << printable(d.name) << "  compute " << d.computeCapability() << " ("
              << d.arch() << ")  " << d.smCount << " SMs  " << formatBytes(d.totalMemoryBytes) << "  PCI " << d.pciBusId
              << "\n";
        const std::optional<DeviceCeilings> &c = measured[i];
        if (c) {
            out() << "  ceilings: copy " << QString::number(c->bytesPerSecond / 1e12, 'f', 2) << " TB/s, FP32 "
                  << QString::number(c->fp32FlopsPerSecond / 1e12, 'f', 1) << " TFLOP/s, FP64 "
                  << QString::number(c->fp64FlopsPerSecond / 1e12, 'f', 1) << " TFLOP/s, ridge "
                  << QString::number(c->ridgeFp32(), 'f', 1) << " FLOP/byte (FP32)";
            const QString note = cacheNotes.value(i);
            out() << (note.isEmpty() ? QStringLiteral("  (cached %1)").arg(c->measuredAt)
                                     : QStringLiteral("  (%1)").arg(note))
                  << "\n";
        }
    }
    out().flush();
    return code;
}

/**
 * Reports an error of kpg compile that left no compile result: on stderr, and
 * with --json as the one object on stdout (docs/kpg-compile-json.md).
 */
int compileFailed(bool json, const QString &file, const Error &e, int code)
{
    err() << "kpg: " << printable(e.message) << "\n";
    err().flush();
    if (json) {
        const QJsonObject doc{{QStringLiteral("ok"), false},
                              {QStringLiteral("file"), file},
                              {QStringLiteral("error"), QJsonObject::fromVariantMap(e.toVariant())}};
        out() << QJsonDocument(doc).toJson(QJsonDocument::Indented);
        out().flush();
    }
    return code;
}

int compile(const QStringList &args)
{
    CompileRequest req;
    QString file;
    bool json = false;
    QString ptxOut;
    QString cubinOut;
    Compiler::Config config;
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString &a = args[i];
        auto value = [&](const QString &what) -> std::optional<QString> {
            if (i + 1 >= args.size()) {
                return std::nullopt;
            }
            Q_UNUSED(what);
            return args[++i];
        };
        auto attached = [&](const char *flag) -> std::optional<QString> {
            // -DNAME=V and -IDIR as well as -D NAME=V and -I DIR
            const QLatin1String f(flag);
            if (a == f) {
                return value(f);
            }
            if (a.startsWith(f)) {
                return a.mid(f.size());
            }
            return std::nullopt;
        };
        std::optional<QString> v;
        if (a == QLatin1String("--json")) {
            json = true;
        } else if (a == QLatin1String("--no-cache")) {
            req.options.useCache = false;
        } else if (a == QLatin1String("--fast-math")) {
            req.options.fastMath = true;
        } else if (a == QLatin1String("-G")) {
            req.options.debug = true;
        } else if (a == QLatin1String("--no-lineinfo")) {
            req.options.lineInfo = false;
        } else if (a == QLatin1String("--no-pch")) {
            req.options.pch = false;
        } else if (a == QLatin1String("--arch") || a == QLatin1String("--std") || a == QLatin1String("--opt") ||
                   a == QLatin1String("--name-expr") || a == QLatin1String("--ptx") || a == QLatin1String("--cubin") ||
                   a == QLatin1String("--timeout") || a == QLatin1String("--memory-limit")) {
            v = value(a);
            if (!v) {
                return usageError(QStringLiteral("compile: %1 needs a value").arg(a));
            }
            if (a == QLatin1String("--arch")) {
                req.options.arch = *v;
            } else if (a == QLatin1String("--std")) {
                req.options.std = *v;
            } else if (a == QLatin1String("--opt")) {
                req.options.extra << *v;
            } else if (a == QLatin1String("--name-expr")) {
                req.options.nameExpressions << *v;
            } else if (a == QLatin1String("--timeout")) {
                bool ok = false;
                const double seconds = v->toDouble(&ok);
                if (!ok || seconds <= 0 || seconds > 1e6) {
                    return usageError(QStringLiteral("compile: --timeout takes seconds above 0, not '%1'").arg(*v));
                }
                config.timeoutMs = qMax(1, int(seconds * 1000));
            } else if (a == QLatin1String("--memory-limit")) {
                bool ok = false;
                const qint64 mib = v->toLongLong(&ok);
                if (!ok || mib < CompilerProcess::kMinMemoryLimitMiB || mib > CompilerProcess::kMaxMemoryLimitMiB) {
                    return usageError(QStringLiteral("compile: --memory-limit takes MiB, a whole number from %1 to "
                                                     "%2, not '%3'")
                                          .arg(CompilerProcess::kMinMemoryLimitMiB)
                                          .arg(CompilerProcess::kMaxMemoryLimitMiB)
                                          .arg(*v));
                }
                config.memoryLimitMiB = mib;
            } else if (a == QLatin1String("--ptx") || a == QLatin1String("--cubin")) {
                if (const std::optional<int> bad = checkOutputOption(QStringLiteral("compile"), a, *v)) {
                    return *bad;
                }
                (a == QLatin1String("--ptx") ? ptxOut : cubinOut) = *v;
            }
        } else if ((v = attached("-D"))) {
            req.options.defines << *v;
        } else if ((v = attached("-I"))) {
            req.options.includeDirs << *v;
        } else if ((v = attached("-O"))) {
            bool ok = false;
            req.options.optLevel = v->toInt(&ok);
            if (!ok || req.options.optLevel < 0 || req.options.optLevel > 3) {
                return usageError(QStringLiteral("compile: -O takes 0, 1, 2 or 3, not '%1'").arg(*v));
            }
        } else if (a.startsWith(QLatin1Char('-'))) {
            return usageError(QStringLiteral("compile: unknown option '%1'").arg(a));
        } else if (file.isEmpty()) {
            file = a;
        } else {
            return usageError(QStringLiteral("compile: one source file at a time ('%1' and '%2')").arg(file, a));
        }
    }
    if (file.isEmpty()) {
        return usageError(QStringLiteral("compile: no source file given"));
    }
    // core/safefile: a FIFO, a device or a file over the source limit is refused before it is read.
    const Result<QByteArray> read =
        QFileInfo::exists(file) ? readRegularFile(file, Compiler::kMaxSourceBytes, QStringLiteral("a source file"))
                                : Result<QByteArray>(Error{QStringLiteral("kpg"),
                                                           Error::Code::BadInput,
                                                           {},
                                                           QStringLiteral("cannot read %1: no such file").arg(file)});
    if (!read) {
        return compileFailed(json, file, read.error(), Exit::BadInput);
    }
    const QByteArray &bytes = *read;
    if (bytes.contains('\0')) {
        return compileFailed(json, file,
                             Error{QStringLiteral("kpg"),
                                   Error::Code::BadInput,
                                   {},
                                   QStringLiteral("%1 is not text (it contains NUL bytes)").arg(file)},
                             Exit::BadInput);
    }
    req.source = QString::fromUtf8(bytes);
    req.fileName = QFileInfo(file).fileName();
    req.projectDir = QFileInfo(file).absolutePath();
    req.sourcePath = QFileInfo(file).absoluteFilePath();

    if (req.options.arch == QLatin1String("auto")) {
        // The GPU decides "auto"; without one the compiler's default applies.
        EngineClient engine;
        const Result<DeviceList> r = engine.listDevicesSync(15000);
        if (r) {
            const DeviceList &list = r.value();
            req.deviceCcMajor = list.devices.first().ccMajor;
            req.deviceCcMinor = list.devices.first().ccMinor;
        }
    }

    Compiler compiler(config);
    const Result<CompileResult> compiled = compiler.compile(req);
    if (!compiled) {
        return compileFailed(json, file, compiled.error(), Exit::forError(compiled.error()));
    }
    const CompileResult &r = *compiled;
    // core/safefile: /dev/null or a FIFO is written into, not replaced; /dev/full fails.
    std::optional<Error> writeError;
    if (!ptxOut.isEmpty() && !r.ptx.isEmpty()) {
        if (Status s = writeOutput(ptxOut, r.ptx, QStringLiteral("the PTX")); !s) {
            writeError = s.error();
        }
    }
    if (!writeError && !cubinOut.isEmpty() && !r.cubin.isEmpty()) {
        if (Status s = writeOutput(cubinOut, r.cubin, QStringLiteral("the cubin")); !s) {
            writeError = s.error();
        }
    }
    if (writeError) {
        err() << "kpg: " << printable(writeError->message) << "\n";
        err().flush();
    }

    if (json) {
        QJsonArray diags;
        for (const Diagnostic &d : r.diagnostics) {
            diags.append(QJsonObject::fromVariantMap(d.toVariant()));
        }
        QJsonArray kernels;
        for (const KernelInfo &k : r.kernels) {
            kernels.append(QJsonObject::fromVariantMap(k.toVariant()));
        }
        QJsonObject doc{{QStringLiteral("ok"), r.ok},
                        {QStringLiteral("file"), file},
                        {QStringLiteral("arch"), r.arch},
                        {QStringLiteral("nvrtcVersion"), r.nvrtcVersion},
                        {QStringLiteral("compileMs"), r.compileMs},
                        {QStringLiteral("cached"), r.cached},
                        {QStringLiteral("errors"), r.errorCount()},
                        {QStringLiteral("warnings"), r.warningCount()},
                        {QStringLiteral("diagnostics"), diags},
                        {QStringLiteral("kernels"), kernels},
                        {QStringLiteral("options"), QJsonArray::fromStringList(r.nvrtcOptions)},
                        {QStringLiteral("ptxBytes"), r.ptx.size()},
                        {QStringLiteral("cubinBytes"), r.cubin.size()},
                        {QStringLiteral("log"), r.log}};
        if (!r.note.isEmpty()) {
            doc.insert(QStringLiteral("note"), r.note);
        }
        if (writeError) {
            doc.insert(QStringLiteral("error"), QJsonObject::fromVariantMap(writeError->toVariant()));
        }
        out() << QJsonDocument(doc).toJson(QJsonDocument::Indented);
        out().flush();
        return writeError ? Exit::CannotWrite : r.ok ? Exit::Ok : Exit::CompileError;
    }

    // gcc-style lines, so editors and terminals can jump to them.
    for (const Diagnostic &d : r.diagnostics) {
        err() << d.text() << "\n";
    }
    err().flush();
    if (!r.note.isEmpty()) {
        out() << "note: " << r.note << "\n";
    }
    if (!r.ok && r.arch.isEmpty()) {
        // The options were refused before NVRTC ran (an architecture it does not have): no time, no arch to name.
        out() << "failed to compile " << file << ": NVRTC " << r.nvrtcVersion << " did not run; --arch "
              << printable(req.options.arch) << " was refused (the error above says what is supported)\n";
        return Exit::CompileError;
    }
    out() << (r.ok ? "compiled " : "failed to compile ") << file << " for " << r.arch << " with NVRTC "
          << r.nvrtcVersion << " in " << QString::number(r.compileMs, 'f', 1) << " ms" << (r.cached ? " (cached)" : "")
          << ": " << r.errorCount() << " errors, " << r.warningCount() << " warnings\n";
    for (const KernelInfo &k : r.kernels) {
        QStringList params;
        for (const KernelParam &p : k.params) {
            const QString sep = p.type.endsWith(QLatin1Char('*')) ? QString() : QStringLiteral(" ");
            params << (p.type + (p.name.isEmpty() ? QString() : sep + p.name));
        }
        out() << "  " << printable(k.name) << "(" << printable(params.join(QStringLiteral(", "))) << ")";
        if (!k.loweredName.isEmpty() && k.loweredName != k.name) {
            out() << "  [" << k.loweredName << "]";
        }
        if (k.isTemplate && k.loweredName.isEmpty()) {
            out() << "  (template; instantiate with --name-expr)";
        }
        out() << "\n";
        if (k.resources.known) {
            const KernelResources &x = k.resources;
            out() << "      " << x.registers << " registers, " << x.sharedBytes << " B shared, " << x.constBytes
                  << " B constant, " << x.stackBytes << " B stack, spills " << x.spillStores << " B stores / "
                  << x.spillLoads << " B loads\n";
        }
    }
    out().flush();
    return writeError ? Exit::CannotWrite : r.ok ? Exit::Ok : Exit::CompileError;
}

} // namespace

namespace {
/**
 * KPG_CRASH_TRACE=1: a crash prints the stack (module+offset per frame) to
 * stderr before the default action, for crashes that only happen under
 * other tools (a profiler's injection) where no debugger can be attached.
 */
void crashTrace(int sig, siginfo_t *info, void *context)
{
    // Diagnostics for a process that is going down anyway: snprintf and
    // dladdr are not async-signal-safe, but nothing else will run after this.
    const auto *uc = static_cast<const ucontext_t *>(context);
    const auto rip = quintptr(uc->uc_mcontext.gregs[REG_RIP]);
    const auto rsp = quintptr(uc->uc_mcontext.gregs[REG_RSP]);
    // A call through a null pointer leaves rip at 0 and the caller's return address on top of the stack.
    const quintptr ret = rsp ? *reinterpret_cast<const quintptr *>(rsp) : 0;
    char line[512];
    Dl_info where{};
    const bool named = ret && dladdr(reinterpret_cast<void *>(ret), &where) && where.dli_fname;
    const int len =
        std::snprintf(line, sizeof line,
                      "kpg: signal %d in process %d thread %ld at %p (address %p); return address %p = %s+0x%lx (%s)\n",
                      sig, int(::getpid()), long(::syscall(SYS_gettid)), reinterpret_cast<void *>(rip), info->si_addr,
                      reinterpret_cast<void *>(ret), named ? where.dli_fname : "?",
                      named ? static_cast<unsigned long>(ret - quintptr(where.dli_fbase)) : 0ul,
                      named && where.dli_sname ? where.dli_sname : "?");
    (void)!::write(2, line, size_t(std::max(0, std::min(len, int(sizeof line) - 1))));
    void *frames[64];
    const int frameCount = backtrace(frames, 64);
    backtrace_symbols_fd(frames, frameCount, 2);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}
} // namespace

int main(int argc, char **argv)
{
    Kp::startupMark("kpg", "main");
    if (qEnvironmentVariableIntValue("KPG_CRASH_TRACE") == 1) {
        void *warm[1];
        backtrace(warm, 1); // loads libgcc's unwinder now, not inside the handler
        struct sigaction sa = {};
        sa.sa_sigaction = crashTrace;
        sa.sa_flags = SA_SIGINFO;
        for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE}) {
            sigaction(sig, &sa, nullptr);
        }
    }
    // Plots draw text, which needs Qt Gui's fonts: kpg sweep --plot gets a
    // QGuiApplication on the offscreen platform (no display is needed).
    bool plots = false;
    for (int i = 1; i < argc; ++i) {
        plots = plots || qstrcmp(argv[i], "--plot") == 0 || qstrcmp(argv[i], "--roofline") == 0;
    }
    if (plots && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    // Without a session (a batch job, ssh, a container) Qt Gui warns that
    // XDG_RUNTIME_DIR is not set; a private folder of this run's own (0700, as
    // Qt requires, removed at exit) keeps the plot's output to the plot.
    std::unique_ptr<QTemporaryDir> runtimeDir;
    if (plots && qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR")) {
        runtimeDir = std::make_unique<QTemporaryDir>(QDir::tempPath() + QStringLiteral("/kpg-runtime-XXXXXX"));
        if (runtimeDir->isValid()) {
            QFile::setPermissions(runtimeDir->path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
            qputenv("XDG_RUNTIME_DIR", QFile::encodeName(runtimeDir->path()));
        }
    }
    std::unique_ptr<QCoreApplication> app;
    if (plots) {
        app = std::make_unique<QGuiApplication>(argc, argv);
    } else {
        app = std::make_unique<QCoreApplication>(argc, argv);
    }
    QCoreApplication::setApplicationName(QStringLiteral("kpg"));
    QCoreApplication::setApplicationVersion(QStringLiteral(KPG_VERSION));

    QStringList args = QCoreApplication::arguments().mid(1);
    if (args.isEmpty()) {
        return usageError(QStringLiteral("no command given"));
    }
    const QString first = args.takeFirst();
    if (first == QLatin1String("--help") || first == QLatin1String("-h") || first == QLatin1String("help")) {
        printUsage();
        return Exit::Ok;
    }
    if (first == QLatin1String("--version")) {
        out() << "kpg " << KPG_VERSION << " (Kernel Playground; worker protocol " << EngineClient::protocolVersion()
              << ")\n";
        return Exit::Ok;
    }
    if (args.contains(QLatin1String("--help")) || args.contains(QLatin1String("-h"))) {
        printUsage();
        return Exit::Ok;
    }
    if (const std::optional<int> bad = takeTargetOption(args)) {
        return *bad;
    }
    RemoteCompiler::install(); // without NVRTC here, an ssh target compiles (docs/remote.md)
    // The command table: dispatch and the unknown-command message both come from it.
    struct Command
    {
        const char *name;
        int (*run)(const QStringList &);
    };
    static const Command commands[] = {
        {"devices", devices},        {"compile", compile},      {"run", runCommand},     {"check", checkCommand},
        {"compare", compareCommand}, {"sweep", sweepCommand},   {"grade", gradeCommand}, {"lab", labCommand},
        {"export", exportCommand},   {"access", accessCommand},
    };
    QStringList names;
    for (const Command &c : commands) {
        if (first == QLatin1String(c.name)) {
            return c.run(args);
        }
        names << QString::fromLatin1(c.name);
    }
    if (first.startsWith(QLatin1Char('-'))) {
        return usageError(QStringLiteral("unknown option '%1'").arg(first));
    }
    return usageError(
        QStringLiteral("unknown command '%1' (commands: %2)").arg(printable(first), names.join(QStringLiteral(", "))));
}
