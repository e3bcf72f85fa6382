#include "access/accessrun.h"

#include "check/checkedrun.h"
#include "client/engineclient.h"
#include "compile/compiler.h"
#include "compile/devicelink.h"
#include "run/projectcompile.h"
#include "run/runjson.h"
#include "run/runner.h"
#include "worker/protocol.h"

#include <QFileInfo>
#include <QJsonArray>

namespace Kp {

namespace {

/**
 * 3 x 2^18 records of 288 bytes (216 MiB): the trace travels back in the
 * run's answer, which the engine takes up to Protocol::kMaxWorkerReplyBytes.
 */
constexpr qint64 kMaxRecords = 3 * (qint64(1) << 18);
static_assert(kMaxRecords * AccessTraceLayout::kRecordBytes + (8 << 20) <= qint64(Protocol::kMaxWorkerReplyBytes),
              "the most records must fit in one answer of the worker");

Error mapError(Error::Code code, const QString &message, const QString &path = {})
{
    Error e{QStringLiteral("memory-access map"), code, QString(), message};
    e.path = path;
    return e;
}

/** The line's text in the report's source, trimmed; empty for another file. */
QString sourceLineText(const AccessReport &r, const QString &path, int line)
{
    if (line <= 0 || (!path.isEmpty() && QFileInfo(path).fileName() != r.sourceName)) {
        return {};
    }
    return r.sourceText.section(QLatin1Char('\n'), line - 1, line - 1).trimmed();
}

} // namespace

Result<AccessReport> runAccessMap(const Project &original, EngineClient *engine, const AccessRunOptions &options)
{
    if (options.records < 1 || options.records > kMaxRecords) {
        return mapError(
            Error::Code::Usage,
            QStringLiteral("room for %1 records asked; the map takes 1 to %2 (they travel back in one answer)")
                .arg(options.records)
                .arg(kMaxRecords));
    }
    Project project = original;
    if (options.replacementSource) {
        project.sourceText = *options.replacementSource;
        project.sourceFile =
            options.replacementFileName.isEmpty() ? QStringLiteral("kernel.cu") : options.replacementFileName;
    }
    project.timing.enabled = false;
    AccessReport report;
    report.step = options.step;
    report.sourceText = project.sourceText;
    report.sourceName =
        QFileInfo(project.sourceFile.isEmpty() ? QStringLiteral("kernel.cu") : project.sourceFile).fileName();

    // The device decides "auto"; without one, everything up to the launch is still checked.
    const Result<DeviceList> devices = engine->listDevicesSync();
    const Result<std::optional<DeviceInfo>> device = deviceForRun(devices, options.device);
    if (!device) {
        return device.error();
    }
    Compiler compiler;
    const CompileRequest request =
        compileRequestFor(project, *device ? (*device)->ccMajor : 0, *device ? (*device)->ccMinor : 0);
    const Result<CompileResult> compiled = compiler.compile(request);
    if (!compiled) {
        return compiled.error();
    }
    report.compiled = *compiled;
    if (!compiled->ok) {
        return compileFailed(request.fileName, *compiled);
    }
    if (DeviceLink::optionsUseRdc(compiled->nvrtcOptions)) {
        // The instrumented PTX would need the device runtime linked in again.
        return mapError(Error::Code::Usage,
                        QStringLiteral("the memory-access map does not record relocatable device code yet (a kernel "
                                       "that launches kernels, or -rdc=true in the options)"));
    }
    const Result<PtxInstrumented> instrumented = instrumentPtx(compiled->ptx);
    if (!instrumented) {
        return instrumented.error();
    }
    report.sites = instrumented->sites;
    report.skipped = instrumented->skipped;

    // The project's buffers, filled as it says, and its run prepared over them.
    const auto prepareOn = [&](HostBuffers &into) -> Result<PreparedRun> {
        if (Status s = into.materialize(project); !s) {
            return s.error();
        }
        return prepareRun(project, *compiled, into, options.device);
    };
    // Once, untimed, up to the chosen step: what comes after it need not run.
    const auto untilTheStep = [&](RunRequest &r) {
        r.timing.enabled = false;
        r.steps = r.steps.mid(0, options.step + 1);
        r.repeat = 1;
        r.swaps.clear();
        r.timeline = false;
        r.graph = false;
    };
    HostBuffers buffers;
    Result<PreparedRun> prepared = prepareOn(buffers);
    if (!prepared) {
        return prepared.error();
    }
    RunRequest &run = prepared.value().request;
    const QString field = QStringLiteral("launches[%1]").arg(options.step);
    if (options.step < 0 || options.step >= run.steps.size()) {
        return mapError(Error::Code::Usage, QStringLiteral("step %1 asked; the project has %2 launch step%3 (1 to %2)")
                                                .arg(options.step + 1)
                                                .arg(run.steps.size())
                                                .arg(run.steps.size() == 1 ? "" : "s"));
    }
    if (run.usesStreams()) {
        return mapError(Error::Code::Usage,
                        QStringLiteral("the memory-access map runs the steps in order on the default stream; this "
                                       "project uses streams, copies or events"));
    }
    const RunStep &step = run.steps[options.step];
    if (step.kind != RunStep::Kind::Kernel) {
        return mapError(
            Error::Code::Usage,
            QStringLiteral("%1 is not a kernel step; the memory-access map records a kernel's launch").arg(field),
            field);
    }
    report.kernel = step.kernel;
    report.grid = step.grid;
    report.block = step.block;
    report.warnings = prepared->warnings;
    // The same steps unrecorded, for the cost of recording: on buffers of
    // their own, filled as the project says, so both launches see the same inputs.
    HostBuffers plainBuffers;
    Result<PreparedRun> plainPrepared = prepareOn(plainBuffers);
    if (!plainPrepared) {
        return plainPrepared.error();
    }
    PreparedRun &plain = plainPrepared.value();
    untilTheStep(plain.request);
    run.image = instrumented->ptx;
    run.accessRecords = options.records;
    run.accessStep = options.step;
    untilTheStep(run);
    run.sentinelBuffers.clear();
    if (!devices) {
        return devices.error();
    }
    Runner runner(engine);
    const RunResult unrecorded = runner.runSync(plain, &plainBuffers);
    if (unrecorded.error) {
        return *unrecorded.error;
    }
    const RunResult result = runner.runSync(*prepared, &buffers);
    if (result.error) {
        return *result.error;
    }
    if (options.step < unrecorded.steps.size() && options.step < result.steps.size()) {
        report.plainLaunchMs = unrecorded.steps[options.step].firstRunMs;
        report.launchMs = result.steps[options.step].firstRunMs;
    }
    report.device = result.device;
    report.trace = result.accessTrace;
    report.warnings << result.warnings;
    QList<TraceBuffer> traced;
    for (qsizetype i = 0; i < result.deviceBuffers.size() && i < run.buffers.size(); ++i) {
        const DeviceAllocation &a = result.deviceBuffers[i];
        traced << TraceBuffer{a.buffer, a.address, a.bytes, run.buffers[i].elementBytes};
    }
    const Result<AccessSummary> summary = summarizeAccess(report.sites, report.trace, result.accessRequested, traced);
    if (!summary) {
        return summary.error();
    }
    report.summary = *summary;
    return report;
}

QJsonObject accessReportJson(const AccessReport &r)
{
    QJsonObject doc;
    doc.insert(QStringLiteral("step"), r.step);
    doc.insert(QStringLiteral("kernel"), r.kernel);
    doc.insert(QStringLiteral("grid"), dim3Json(r.grid));
    doc.insert(QStringLiteral("block"), dim3Json(r.block));
    doc.insert(QStringLiteral("device"), r.device);
    doc.insert(QStringLiteral("recorded"), r.summary.recorded);
    doc.insert(QStringLiteral("requested"), r.summary.requested);
    doc.insert(QStringLiteral("truncated"), r.summary.truncated());
    doc.insert(QStringLiteral("leftOut"), r.skipped);
    doc.insert(QStringLiteral("outside"), r.summary.outside);
    doc.insert(QStringLiteral("launchMs"), r.launchMs);
    doc.insert(QStringLiteral("plainLaunchMs"), r.plainLaunchMs);
    QJsonArray lines;
    for (const LineAccess &l : r.summary.lines) {
        QJsonObject o;
        o.insert(QStringLiteral("file"), l.path);
        o.insert(QStringLiteral("line"), l.line);
        o.insert(QStringLiteral("source"), sourceLineText(r, l.path, l.line));
        o.insert(QStringLiteral("globalLoads"), l.globalLoads);
        o.insert(QStringLiteral("globalStores"), l.globalStores);
        o.insert(QStringLiteral("globalAtomics"), l.globalAtomics);
        o.insert(QStringLiteral("sectors"), l.sectors);
        o.insert(QStringLiteral("idealSectors"), l.idealSectors);
        o.insert(QStringLiteral("sharedRequests"), l.sharedRequests);
        o.insert(QStringLiteral("wavefronts"), l.wavefronts);
        o.insert(QStringLiteral("idealWavefronts"), l.idealWavefronts);
        o.insert(QStringLiteral("reading"), l.reading);
        lines << o;
    }
    doc.insert(QStringLiteral("lines"), lines);
    QJsonArray sites;
    for (const SiteAccess &s : r.summary.sites) {
        QJsonObject o;
        o.insert(QStringLiteral("site"), s.site.id);
        o.insert(QStringLiteral("file"), s.site.sourcePath);
        o.insert(QStringLiteral("line"), s.site.sourceLine);
        o.insert(QStringLiteral("ptxLine"), s.site.ptxLine);
        o.insert(QStringLiteral("instruction"), s.site.instruction);
        o.insert(QStringLiteral("space"), accessSpaceName(s.site.space));
        o.insert(QStringLiteral("kind"), accessKindName(s.site.kind));
        o.insert(QStringLiteral("width"), s.site.width);
        o.insert(QStringLiteral("requests"), s.requests);
        o.insert(QStringLiteral("lanes"), s.laneAccesses);
        o.insert(QStringLiteral("sectorsPerRequest"), s.sectorsPerRequest());
        o.insert(QStringLiteral("idealSectorsPerRequest"), s.idealSectorsPerRequest());
        o.insert(QStringLiteral("efficiency"), s.efficiency());
        o.insert(QStringLiteral("wavefrontsPerRequest"), s.wavefrontsPerRequest());
        o.insert(QStringLiteral("idealWavefrontsPerRequest"), s.idealWavefrontsPerRequest());
        o.insert(QStringLiteral("bankConflict"), s.maxConflict);
        o.insert(QStringLiteral("strideBytes"), s.strideBytes);
        o.insert(QStringLiteral("reading"), s.reading);
        sites << o;
    }
    doc.insert(QStringLiteral("sites"), sites);
    QJsonObject buffers;
    for (auto it = r.summary.buffers.cbegin(); it != r.summary.buffers.cend(); ++it) {
        buffers.insert(it.key(), QJsonObject{{QStringLiteral("elementsRead"), it->read},
                                             {QStringLiteral("elementsWritten"), it->written},
                                             {QStringLiteral("elementsAtomic"), it->atomics}});
    }
    doc.insert(QStringLiteral("buffers"), buffers);
    doc.insert(QStringLiteral("warnings"), QJsonArray::fromStringList(r.warnings));
    return doc;
}

QString accessCostText(const AccessReport &r)
{
    if (r.recordingSlowdown() <= 0) {
        return {};
    }
    return QStringLiteral("the recorded launch took %1 ms, %2x the same launch unrecorded (%3 ms)")
        .arg(r.launchMs, 0, 'f', 3)
        .arg(r.recordingSlowdown(), 0, 'f', 1)
        .arg(r.plainLaunchMs, 0, 'f', 3);
}

QString accessReportText(const AccessReport &r)
{
    QString o;
    o += QStringLiteral("memory access of step %1: %2 grid %3 block %4 on %5\n")
             .arg(r.step + 1)
             .arg(r.kernel, dim3Text(r.grid), dim3Text(r.block), r.device);
    o += QStringLiteral("  %1 warp request%2 recorded").arg(r.summary.recorded).arg(r.summary.recorded == 1 ? "" : "s");
    if (r.summary.truncated()) {
        o += QStringLiteral(" (traced the first %1 of %2; give --records more room for all)")
                 .arg(r.summary.recorded)
                 .arg(r.summary.requested);
    }
    o += QLatin1Char('\n');
    if (const QString cost = accessCostText(r); !cost.isEmpty()) {
        o += QStringLiteral("  %1\n").arg(cost);
    }
    for (const LineAccess &l : r.summary.lines) {
        const QString where = l.path.isEmpty() || QFileInfo(l.path).fileName() == r.sourceName
                                  ? QStringLiteral("line %1").arg(l.line)
                                  : QStringLiteral("%1:%2").arg(QFileInfo(l.path).fileName()).arg(l.line);
        o += QStringLiteral("  %1: %2\n").arg(where, sourceLineText(r, l.path, l.line));
        // An unrolled loop gives a line several instructions of the same
        // access; those that read the same are one row, counted together.
        struct Row
        {
            const SiteAccess *site;
            int instructions;
            qint64 requests;
        };
        QList<Row> rows;
        for (int id : l.sites) {
            const auto it = std::find_if(r.summary.sites.cbegin(), r.summary.sites.cend(),
                                         [id](const SiteAccess &s) { return s.site.id == id; });
            if (it == r.summary.sites.cend()) {
                continue;
            }
            const auto same = std::find_if(rows.begin(), rows.end(), [&it](const Row &row) {
                return row.site->site.space == it->site.space && row.site->site.kind == it->site.kind &&
                       row.site->site.typeName == it->site.typeName && row.site->reading == it->reading;
            });
            if (same != rows.end()) {
                ++same->instructions;
                same->requests += it->requests;
            } else {
                rows << Row{&*it, 1, it->requests};
            }
        }
        for (const Row &row : std::as_const(rows)) {
            const SiteAccess &a = *row.site;
            o += QStringLiteral("    %1 %2 (%3, %4%5 request%6): %7\n")
                     .arg(accessSpaceName(a.site.space), accessKindName(a.site.kind), a.site.typeName)
                     .arg(row.instructions > 1 ? QStringLiteral("%1 instructions, ").arg(row.instructions) : QString())
                     .arg(row.requests)
                     .arg(row.requests == 1 ? "" : "s")
                     .arg(a.reading);
        }
    }
    for (auto it = r.summary.buffers.cbegin(); it != r.summary.buffers.cend(); ++it) {
        o += QStringLiteral("  buffer %1: %2 elements read, %3 written%4\n")
                 .arg(it.key())
                 .arg(it->read)
                 .arg(it->written)
                 .arg(it->atomics ? QStringLiteral(", %1 by atomics").arg(it->atomics) : QString());
    }
    if (r.summary.outside > 0) {
        o += QStringLiteral("  %1 lane access%2 fell inside no buffer (device globals, or past a buffer's end)\n")
                 .arg(r.summary.outside)
                 .arg(r.summary.outside == 1 ? "" : "es");
    }
    if (r.skipped > 0) {
        o += QStringLiteral("  %1 memory instruction%2 left out (local, constant, asynchronous copies)\n")
                 .arg(r.skipped)
                 .arg(r.skipped == 1 ? "" : "s");
    }
    return o;
}

} // namespace Kp
