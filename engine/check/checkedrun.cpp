#include "checkedrun.h"

#include "client/engineclient.h"
#include "compile/compiler.h"
#include "core/safefile.h"
#include "core/startuptrace.h"
#include "cuda/nvrtcapi.h"
#include "project/fieldreader.h"
#include "run/projectcompile.h"
#include "run/sentinel.h"

#include <QByteArray>
#include <QDir>
#include <QFileInfo>
#include <QHash>
#include <QRegularExpression>
#include <QSaveFile>

#include <cstring>
#include <future>
#include <memory>
#include <optional>

namespace Kp {

namespace {

Error runError(Error::Code code, const QString &message)
{
    return Error{QStringLiteral("check"), code, {}, message};
}

QHash<QString, BufferView> viewsOf(const HostBuffers &buffers)
{
    QHash<QString, BufferView> views;
    for (const auto &b : buffers.all()) {
        views.insert(b->spec.name, BufferView{b->spec.dtype, b->shape, b->memory.data(), b->byteSize()});
    }
    return views;
}

/** Buffers an expected expression may name (an identifier in its text): their initial contents are kept. */
QStringList buffersNamedByExpressions(const Project &project)
{
    QStringList names;
    static const QRegularExpression ident(QStringLiteral("[A-Za-z_][A-Za-z0-9_.]*"));
    for (const CheckSpec &c : project.checks) {
        // A permutation or set of a buffer's initial contents needs them kept too.
        if (c.isCollection() && !c.otherFromReference && !names.contains(c.other)) {
            names << c.other;
        }
        if (c.kind != CheckSpec::Kind::Expected) {
            continue;
        }
        for (auto it = ident.globalMatch(c.expected); it.hasNext();) {
            const QString n = it.next().captured();
            if (project.buffer(n) && !names.contains(n)) {
                names << n;
            }
        }
    }
    return names;
}

QString firstDiagnostic(const CompileResult &c)
{
    for (const Diagnostic &d : c.diagnostics) {
        if (d.severity == Diagnostic::Severity::Error) {
            // "k.cu: error: ... (it contains NUL bytes)", not "k.cu:0:0": line and column only where known.
            return d.text();
        }
    }
    return c.log.section(QLatin1Char('\n'), 0, 0);
}

Error prefixed(Error e, const QString &prefix)
{
    e.message = prefix + e.message;
    return e;
}

/**
 * What the worker said about the GPUs when kpg last asked: a small file
 * beside the compile cache ("last-gpus": one line per ordinal, "0 9 0");
 * empty when there is none, or one that is not a small regular file (never
 * a FIFO that would block).
 */
QByteArray readLastGpus()
{
    const Result<QByteArray> text = readRegularFile(
        QDir(Compiler::defaultCacheDir()).filePath(QStringLiteral("last-gpus")), 4096, QStringLiteral("the GPU hint"));
    return text ? *text : QByteArray();
}

/** GPU ordinal's compute capability in lastGpus; nullopt when it is not there or the line is not ours to trust. */
std::optional<std::pair<int, int>> lastSeenCc(const QByteArray &lastGpus, int ordinal)
{
    for (const QByteArray &line : lastGpus.split('\n')) {
        const QList<QByteArray> w = line.simplified().split(' ');
        bool ok[3] = {false, false, false};
        if (w.size() == 3 && w[0].toInt(&ok[0]) == ordinal) {
            const int major = w[1].toInt(&ok[1]);
            const int minor = w[2].toInt(&ok[2]);
            if (ok[0] && ok[1] && ok[2] && major > 0 && major < 100 && minor >= 0 && minor < 100) {
                return std::make_pair(major, minor);
            }
        }
    }
    return std::nullopt;
}

/** Records what the worker said about every GPU for the next kpg, unless lastGpus (the file as read) says it already.
 */
void rememberCc(const DeviceList &list, const QByteArray &lastGpus)
{
    QByteArray text;
    for (const DeviceInfo &d : list.devices) {
        text += QByteArray::number(d.ordinal) + ' ' + QByteArray::number(d.ccMajor) + ' ' +
                QByteArray::number(d.ccMinor) + '\n';
    }
    const QString dir = Compiler::defaultCacheDir();
    if (text == lastGpus || !QDir().mkpath(dir)) {
        return;
    }
    QSaveFile f(QDir(dir).filePath(QStringLiteral("last-gpus")));
    if (f.open(QIODevice::WriteOnly) && f.write(text) == text.size()) {
        f.commit(); // a hint only: a failure costs the next run its head start, nothing else
    }
}

} // namespace

bool CheckedRun::checksPassed() const
{
    if (error) {
        return false;
    }
    for (const CheckResult &c : checks) {
        if (!c.passed) {
            return false;
        }
    }
    return true;
}

Project projectForSeedRun(const Project &project, int run)
{
    Project p = project;
    if (run == 0) {
        return p;
    }
    for (BufferSpec &b : p.buffers) {
        if (b.init.kind == BufferInit::Kind::Random) {
            b.init.seed = seedForRun(b.init.seed, run);
        }
    }
    return p;
}

Project referenceProjectFor(const Project &project)
{
    Project p = project;
    if (project.reference) {
        if (!project.reference->sourceFile.isEmpty()) {
            p.sourceFile = project.reference->sourceFile;
            p.sourceText = project.reference->sourceText;
        }
        if (project.reference->launches) {
            p.launches = *project.reference->launches;
        }
    }
    p.timing.enabled = false;
    p.checks.clear();
    return p;
}

int seedRunsNeeded(const Project &project)
{
    int n = 1;
    for (const CheckSpec &c : project.checks) {
        n = std::max(n, c.seeds);
    }
    return n;
}

Result<std::optional<DeviceInfo>> deviceForRun(const Result<DeviceList> &devices, int ordinal)
{
    if (!devices) {
        return std::optional<DeviceInfo>();
    }
    const DeviceList &list = devices.value();
    if (ordinal >= list.devices.size()) {
        return Error{QStringLiteral("kpg"),
                     Error::Code::Usage,
                     {},
                     QStringLiteral("--device %1: this machine has %2 GPU%3 (0 to %4)")
                         .arg(ordinal)
                         .arg(list.devices.size())
                         .arg(list.devices.size() == 1 ? "" : "s")
                         .arg(list.devices.size() - 1)};
    }
    return std::optional<DeviceInfo>(list.devices[ordinal]);
}

Error compileFailed(const QString &fileName, const CompileResult &compiled)
{
    return Error{QStringLiteral("compile"),
                 Error::Code::CompileError,
                 {},
                 QStringLiteral("%1 does not compile (%2 error%3)")
                     .arg(fileName)
                     .arg(compiled.errorCount())
                     .arg(compiled.errorCount() == 1 ? "" : "s")};
}

CheckedRun runProjectWithChecks(const Project &original, EngineClient *engine, const CheckedRunOptions &options)
{
    CheckedRun out;
    Project project = original;
    if (options.replacementSource) {
        project.sourceText = *options.replacementSource;
        project.sourceFile =
            options.replacementFileName.isEmpty() ? QStringLiteral("kernel.cu") : options.replacementFileName;
    }
    if (!options.checks) {
        project.checks.clear();
    }
    project.timing.enabled = project.timing.enabled && options.timing;
    bool needReference = false;
    for (const CheckSpec &c : project.checks) {
        needReference = needReference || c.needsReference();
    }
    const Project reference = referenceProjectFor(original);

    const auto requestFor = [&options](const Project &p, int ccMajor, int ccMinor) {
        CompileRequest req = compileRequestFor(p, ccMajor, ccMinor);
        if (options.isolatedCompile) {
            req.projectDir.clear();
            req.options.includeDirs.clear();
        }
        return req;
    };
    Compiler compiler;
    // The device decides "auto" for the compile; without one, compile errors,
    // binding errors and bad checks are still reported before saying there is no GPU.
    // The compile's folders do not depend on the GPU: kpg-compiler starts
    // (NVRTC loaded, sandbox applied) while the worker finds it, on this
    // thread (the child dies with the thread that spawned it).
    compiler.warmUp(requestFor(project, 0, 0));
    // And the GPU that answered last time most likely answers now: while
    // the worker starts and finds the GPUs (on the engine's thread), this
    // thread compiles for that one; again only if the answer differs (a hint
    // in the cache folder, never trusted further). No thread of its own: the
    // compile runs where kpg-compiler was spawned, and the wait for the
    // devices ends it.
    auto devicesAnswer = std::make_shared<std::promise<Result<DeviceList>>>();
    std::future<Result<DeviceList>> devicesAsked = devicesAnswer->get_future();
    startupMark("kpg", "warming");
    engine->listDevices(
        nullptr, [devicesAnswer](const Result<DeviceList> &d) { devicesAnswer->set_value(d); },
        options.listDevicesTimeoutMs);
    std::optional<Result<CompileResult>> early;
    std::optional<CompileRequest> earlyRequest;
    const QByteArray lastGpus = readLastGpus();
    if (const auto cc = lastSeenCc(lastGpus, options.device); cc && NvrtcApi::instance()) {
        earlyRequest = requestFor(project, cc->first, cc->second);
        early = compiler.compile(*earlyRequest);
        startupMark("kpg", "compiled ahead");
    }
    const Result<DeviceList> devices = devicesAsked.get();
    startupMark("kpg", "devices");
    if (devices) {
        rememberCc(*devices, lastGpus);
    }
    const Result<std::optional<DeviceInfo>> device = deviceForRun(devices, options.device);
    if (!device) {
        out.error = device.error();
        return out;
    }
    out.device = *device;
    const int ccMajor = out.device ? out.device->ccMajor : 0;
    const int ccMinor = out.device ? out.device->ccMinor : 0;

    out.request = requestFor(project, ccMajor, ccMinor);
    // Used when it answered (a failure to borrow the process is no answer) for this GPU.
    const bool guessed =
        early && *early && earlyRequest->deviceCcMajor == ccMajor && earlyRequest->deviceCcMinor == ccMinor;
    const Result<CompileResult> compiled = guessed ? std::move(*early) : compiler.compile(out.request);
    if (!compiled) {
        out.error = compiled.error();
        return out;
    }
    out.compiled = *compiled;
    startupMark("kpg", "compiled");
    if (!compiled->ok) {
        out.error = compileFailed(out.request.fileName, *compiled);
        return out;
    }
    if (needReference) {
        const CompileRequest refReq = compileRequestFor(reference, ccMajor, ccMinor);
        const Result<CompileResult> refCompiled = compiler.compile(refReq);
        if (!refCompiled) {
            out.error = refCompiled.error();
            return out;
        }
        out.referenceCompiled = *refCompiled;
        if (!refCompiled->ok) {
            // The project's own fault, not the submission's: a broken exercise is bad input.
            Error e = runError(Error::Code::BadInput, QStringLiteral("the reference (%1) does not compile: %2")
                                                          .arg(refReq.fileName, firstDiagnostic(*refCompiled)));
            e.path = reference.sourceFile == original.sourceFile ? QStringLiteral("source")
                                                                 : QStringLiteral("reference.source");
            out.error = e;
            return out;
        }
    }

    // Bindings and checks first, against buffers with shapes but no contents
    // (fresh shared memory costs nothing): a typo in a 4 GiB project is
    // reported before its buffers are filled.
    {
        HostBuffers shapes;
        if (Status s = shapes.materialize(project, true, HostBuffers::Fill::ShapesOnly); !s) {
            out.error = s.error();
            return out;
        }
        const Result<PreparedRun> bound = prepareRun(project, *compiled, shapes, options.device);
        if (!bound) {
            out.error = bound.error();
            return out;
        }
        // Kept from here, not from the run below: a machine without a GPU gets them too.
        out.warnings << bound->warnings;
        if (needReference) {
            if (const Result<PreparedRun> check = prepareRun(reference, *out.referenceCompiled, shapes, options.device);
                !check) {
                Error e = check.error();
                e.message = QStringLiteral("reference: ") + e.message;
                if (!e.path.isEmpty() && reference.reference && reference.reference->launches) {
                    e.path = QStringLiteral("reference.") + e.path;
                }
                out.error = e;
                return out;
            }
        }
        const Result<QStringList> valid =
            validateChecks(project, viewsOf(shapes), expressionVariables(project, shapes));
        if (!valid) {
            out.error = valid.error();
            return out;
        }
        out.warnings << *valid;
    }
    // Seed run 0's contents before the device: a bad npy or image init is
    // reported on a machine without a GPU too.
    HostBuffers firstBuffers;
    if (Status s = firstBuffers.materialize(project); !s) {
        out.error = s.error();
        return out;
    }
    if (!out.device) {
        out.error = devices.error();
        return out;
    }

    Runner runner(engine);
    const int runs = seedRunsNeeded(project);
    const QStringList keepInitial = buffersNamedByExpressions(project);
    QList<std::optional<CheckResult>> results(project.checks.size());
    for (int k = 0; k < runs; ++k) {
        // Only the checks that ask for this run and have not failed yet.
        QList<int> due;
        for (qsizetype i = 0; i < project.checks.size(); ++i) {
            if (project.checks[i].seeds > k && (!results[i] || results[i]->passed)) {
                due << int(i);
            }
        }
        if (k > 0 && due.isEmpty()) {
            break;
        }
        const QString runPrefix = k == 0 ? QString() : QStringLiteral("seed run %1: ").arg(k);
        Project pk = projectForSeedRun(project, k);
        if (k > 1 || (k == 1 && !options.sentinelOutputs)) {
            pk.timing.enabled = false;
        }
        HostBuffers buffers;
        if (k == 0) {
            buffers = std::move(firstBuffers);
        } else if (Status s = buffers.materialize(pk); !s) {
            out.error = prefixed(s.error(), runPrefix);
            return out;
        }
        Result<PreparedRun> prepared = prepareRun(pk, *compiled, buffers, options.device);
        if (prepared) {
            prepared.value().request.guards = options.guards;
            if (options.sentinelOutputs) {
                prepared.value().request.sentinelBuffers = sentinelBuffersFor(pk, prepared->request);
            }
        }
        if (!prepared) {
            out.error = prefixed(prepared.error(), runPrefix);
            return out;
        }

        // The inputs as they were: for expressions, and for the reference run.
        QHash<QString, QByteArray> initial;
        for (const QString &n : keepInitial) {
            const HostBuffer *b = buffers.find(n);
            initial.insert(n, QByteArray(static_cast<const char *>(b->memory.data()), b->byteSize()));
        }
        bool referenceDue = false;
        for (int i : due) {
            referenceDue = referenceDue || project.checks[i].needsReference();
        }
        HostBuffers refBuffers;
        if (referenceDue) {
            const Project rk = projectForSeedRun(reference, k);
            if (Status s = refBuffers.materialize(rk, true, HostBuffers::Fill::ShapesOnly); !s) {
                out.error = prefixed(s.error(), runPrefix + QStringLiteral("reference: "));
                return out;
            }
            for (const auto &b : buffers.all()) {
                HostBuffer *r = refBuffers.find(b->spec.name);
                std::memcpy(r->memory.data(), b->memory.data(), size_t(b->byteSize()));
            }
        }

        startupMark("kpg", qPrintable(QStringLiteral("prepared seed run %1").arg(k)));
        const RunResult r = runner.runSync(*prepared, &buffers);
        startupMark("kpg", qPrintable(QStringLiteral("ran seed run %1").arg(k)));
        if (k == 0) {
            out.run = r;
            out.ran = true;
        }
        if (r.error) {
            out.error = prefixed(*r.error, runPrefix);
            if (k == 0) {
                out.buffers = std::move(buffers);
            }
            return out;
        }
        out.seedRuns = k + 1;

        if (referenceDue) {
            const Project rk = projectForSeedRun(reference, k);
            Result<PreparedRun> refPrepared = prepareRun(rk, *out.referenceCompiled, refBuffers, options.device);
            if (refPrepared) {
                refPrepared.value().request.guards = options.guards;
            }
            if (!refPrepared) {
                out.error = prefixed(refPrepared.error(), runPrefix + QStringLiteral("reference: "));
                return out;
            }
            const RunResult rr = runner.runSync(*refPrepared, &refBuffers);
            if (rr.error) {
                Error e = prefixed(*rr.error, runPrefix + QStringLiteral("the reference run failed: "));
                // A reference that faults or hangs is the project's fault; it says nothing about the submission.
                e.code = Error::Code::BadInput;
                out.error = e;
                return out;
            }
        }

        CheckData data;
        data.after = viewsOf(buffers);
        data.reference = viewsOf(refBuffers);
        data.variables = expressionVariables(pk, buffers);
        data.projectDir = project.dir();
        for (const StepResult &step : r.steps) {
            data.printed += step.printfOutput;
            data.printedTruncated = data.printedTruncated || step.printfTruncated;
        }
        for (auto it = initial.cbegin(); it != initial.cend(); ++it) {
            const HostBuffer *b = buffers.find(it.key());
            data.initial.insert(it.key(), BufferView{b->spec.dtype, b->shape, it.value().constData(), b->byteSize()});
        }
        for (int i : due) {
            const CheckSpec &c = project.checks[i];
            Result<CheckResult> res = evaluateCheck(c, data, k, jsonIndexPath(QStringLiteral("checks"), i));
            CheckResult cr;
            if (res) {
                cr = *res;
            } else {
                cr = checkResultHead(c, k);
                cr.error = res.error();
            }
            if (!results[i]) {
                results[i] = cr;
            } else {
                mergeSeedRun(*results[i], cr);
            }
        }
        if (k == 0) {
            out.buffers = std::move(buffers);
        }
    }
    for (const auto &r : results) {
        if (r) {
            out.checks << *r;
        }
    }
    return out;
}

} // namespace Kp
