#include "check/sanitizedrun.h"

#include "buffers/dtype.h"
#include "client/engineclient.h"
#include "core/safefile.h"

#include <QTemporaryDir>

namespace Kp {

namespace {
/** A report of 100,000 findings is about 200 MiB; more is refused rather than read. */
constexpr qint64 kMaxReportBytes = qint64(512) << 20;
/** Launches run 10 to 100 times slower under the sanitizer. */
constexpr double kMinLaunchTimeoutSeconds = 300;
} // namespace

SanitizedRun runProjectSanitized(Project project, CheckedRunOptions options, const SanitizeOptions &sanitize)
{
    SanitizedRun out;
    if (!sanitize.program.isEmpty()) {
        out.program = sanitize.program;
    } else {
        const Result<QString> found = Sanitizer::findProgram();
        if (!found) {
            out.checked.error = found.error();
            return out;
        }
        out.program = *found;
    }
    QTemporaryDir dir;
    if (!dir.isValid()) {
        out.checked.error = Error{QStringLiteral("compute-sanitizer"),
                                  Error::Code::Internal,
                                  {},
                                  QStringLiteral("cannot create a folder for the report: %1").arg(dir.errorString())};
        return out;
    }
    const QString xml = dir.filePath(QStringLiteral("report.xml"));
    options.timing = false;
    options.guards = false; // the sanitizer must see the buffers' exact sizes
    project.killTimeoutSeconds = qMax(project.killTimeoutSeconds, kMinLaunchTimeoutSeconds);
    {
        WorkerLaunch launch;
        launch.prefix = Sanitizer::launchPrefix(out.program, sanitize.tool, xml, sanitize.printLimit, sanitize.hazards);
        launch.startTimeoutMs = 120000;
        launch.exitWaitMs = sanitize.exitWaitMs;
        launch.single = true;
        EngineClient engine(launch);
        out.checked = runProjectWithChecks(project, &engine, options);
        // ~EngineClient sends shutdown and waits for the sanitizer to write its report.
    }
    if (!out.checked.ran && out.checked.error) {
        return out; // never reached the GPU: compile error, bad project, no device
    }
    const Result<QByteArray> bytes = readRegularFile(xml, kMaxReportBytes, QStringLiteral("the sanitizer report"));
    if (!bytes) {
        Error e = bytes.error();
        e.message = QStringLiteral("compute-sanitizer wrote no report (%1)").arg(e.message);
        out.reportError = e;
        return out;
    }
    Result<Sanitizer::Report> report = Sanitizer::parseXml(*bytes);
    if (!report) {
        out.reportError = report.error();
        return out;
    }
    QHash<QString, int> elementBytes;
    for (const BufferSpec &b : project.buffers) {
        elementBytes.insert(b.name, int(dtypeInfo(b.dtype).elementBytes()));
    }
    int reservedShared = 0;
    for (const StepResult &st : out.checked.run.steps) {
        if (st.kind == QLatin1String("kernel")) {
            reservedShared = st.limits.reservedSharedPerBlock;
            break;
        }
    }
    Sanitizer::mapAddresses(report.value(), out.checked.run.deviceBuffers, elementBytes, reservedShared);
    out.report = std::move(report).value();
    return out;
}

} // namespace Kp
