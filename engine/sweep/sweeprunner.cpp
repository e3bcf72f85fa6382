#include "sweeprunner.h"

#include "client/engineclient.h"
#include "run/runjson.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QJsonArray>
#include <QMutexLocker>

#include <algorithm>

namespace Kp {

bool SweepPointResult::timed() const
{
    return run.ran && run.run.timed && !run.run.error &&
           (status == QLatin1String("ok") || status == QLatin1String("check-failed"));
}

double SweepPointResult::medianUs() const
{
    return timed() ? run.run.stats.medianMs * 1000 : 0;
}

double SweepPointResult::bytesPerSecond() const
{
    return timed() && run.run.bytes > 0 ? run.run.bytesPerSecond : 0;
}

double SweepPointResult::flopsPerSecond() const
{
    return timed() && run.run.flops > 0 ? run.run.flopsPerSecond : 0;
}

namespace {

QString csvCell(QString s)
{
    if (s.contains(QLatin1Char(',')) || s.contains(QLatin1Char('"')) || s.contains(QLatin1Char('\n'))) {
        s.replace(QLatin1String("\""), QLatin1String("\"\""));
        return QLatin1Char('"') + s + QLatin1Char('"');
    }
    return s;
}

QString num(double v, int prec = 4)
{
    return QString::number(v, 'g', prec + 2);
}

bool isFatal(const Error &e)
{
    return e.code == Error::Code::NoDriver || e.code == Error::Code::NoDevice || e.code == Error::Code::NoCompiler ||
           e.code == Error::Code::WorkerStart;
}

} // namespace

QByteArray sweepCsv(const QList<SweepAxis> &axes, const QList<SweepPointResult> &points)
{
    QStringList header;
    for (const SweepAxis &a : axes) {
        header << csvCell(a.name);
    }
    header << "status"
           << "median_us"
           << "min_us"
           << "max_us"
           << "noise"
           << "stopped_by"
           << "samples"
           << "median_less_overhead_us"
           << "registers"
           << "occupancy"
           << "bytes_per_second"
           << "flops_per_second"
           << "checks_passed"
           << "device"
           << "reason";
    QByteArray csv = header.join(QLatin1Char(',')).toUtf8() + '\n';
    for (const SweepPointResult &p : points) {
        QStringList row;
        for (const QString &v : p.point.values) {
            row << csvCell(v);
        }
        const RunResult &r = p.run.run;
        const bool timed = p.timed();
        const StepResult *s = r.steps.isEmpty() ? nullptr : &r.steps.first();
        row << p.status << (timed ? num(r.stats.medianMs * 1000) : QString())
            << (timed ? num(r.stats.minMs * 1000) : QString()) << (timed ? num(r.stats.maxMs * 1000) : QString())
            << (timed ? num(r.stats.noise) : QString()) << (timed ? r.stopCriterion : QString())
            << (timed ? QString::number(r.stats.count) : QString())
            << (timed ? num(r.medianLessOverheadMs * 1000) : QString())
            << (s ? QString::number(s->limits.numRegs) : QString()) << (s ? num(s->occupancy.ratio) : QString())
            << (p.bytesPerSecond() > 0 ? num(r.bytesPerSecond) : QString())
            << (p.flopsPerSecond() > 0 ? num(r.flopsPerSecond) : QString())
            << (p.run.ran && !r.error ? (p.run.checksPassed() ? "true" : "false") : QString())
            << (p.run.ran ? QString::number(p.device) : QString()) << csvCell(p.reason);
        csv += row.join(QLatin1Char(',')).toUtf8() + '\n';
    }
    return csv;
}

QJsonObject sweepJson(const Project &project, const QList<SweepAxis> &axes, bool zip, int planned,
                      const QList<SweepPointResult> &points, double wallSeconds, bool aborted)
{
    QJsonArray axesJson;
    for (const SweepAxis &a : axes) {
        axesJson.append(QJsonObject{{QStringLiteral("name"), a.name},
                                    {QStringLiteral("values"), QJsonArray::fromStringList(a.values)}});
    }
    QJsonArray pointsJson;
    QString device;
    for (const SweepPointResult &p : points) {
        QJsonObject values;
        for (qsizetype i = 0; i < axes.size(); ++i) {
            values.insert(axes[i].name, p.point.values.value(i));
        }
        QJsonObject o{{QStringLiteral("values"), values},
                      {QStringLiteral("status"), p.status},
                      {QStringLiteral("reason"), p.reason},
                      {QStringLiteral("compileCached"), p.compiledFromCache}};
        if (p.run.compiled) {
            o.insert(QStringLiteral("compile"), compileResultToJson(*p.run.compiled));
        }
        if (p.run.ran) {
            const QJsonObject run = runResultToJson(p.run.run);
            for (const char *key : {"device", "steps", "timing", "throughput", "warnings", "error"}) {
                o.insert(QLatin1String(key), run.value(QLatin1String(key)));
            }
            o.insert(QStringLiteral("deviceIndex"), p.device);
            o.insert(QStringLiteral("checksPassed"), p.run.checksPassed());
            if (device.isEmpty()) {
                device = p.run.run.device;
            }
        }
        pointsJson.append(o);
    }
    return QJsonObject{{QStringLiteral("project"), project.path},
                       {QStringLiteral("title"), project.title},
                       {QStringLiteral("device"), device},
                       {QStringLiteral("axes"), axesJson},
                       {QStringLiteral("zip"), zip},
                       {QStringLiteral("points"), pointsJson},
                       {QStringLiteral("pointsPlanned"), planned},
                       {QStringLiteral("wallSeconds"), wallSeconds},
                       {QStringLiteral("aborted"), aborted},
                       {QStringLiteral("complete"), points.size() == planned}};
}

Result<QList<int>> sweepDevices(const DeviceList &list, std::optional<int> pinned)
{
    if (list.devices.isEmpty()) {
        return Error{QStringLiteral("sweep"), Error::Code::NoDevice, {}, QStringLiteral("no GPU found")};
    }
    if (pinned) {
        if (*pinned < 0 || *pinned >= list.devices.size()) {
            return Error{QStringLiteral("sweep"),
                         Error::Code::Usage,
                         {},
                         QStringLiteral("--device %1: this machine has %2 GPU%3 (0 to %4)")
                             .arg(*pinned)
                             .arg(list.devices.size())
                             .arg(list.devices.size() == 1 ? "" : "s")
                             .arg(list.devices.size() - 1)};
        }
        return QList<int>{*pinned};
    }
    QList<int> same;
    for (const DeviceInfo &d : list.devices) {
        if (d.name == list.devices.first().name) {
            same << d.ordinal;
        }
    }
    return same;
}

SweepRunner::SweepRunner(QObject *parent)
    : QObject(parent)
{
    qRegisterMetaType<Kp::SweepPointResult>();
}

SweepRunner::~SweepRunner()
{
    abort();
    for (std::thread &t : m_threads) {
        t.join();
    }
}

Status SweepRunner::start(const Project &project, const QList<SweepAxis> &axes, bool zip, const Options &options)
{
    if (m_running) {
        return Error{QStringLiteral("sweep"), Error::Code::Usage, {}, QStringLiteral("a sweep is running already")};
    }
    if (options.devices.isEmpty()) {
        return Error{QStringLiteral("sweep"), Error::Code::Usage, {}, QStringLiteral("no GPU to run the sweep on")};
    }
    Result<QList<SweepPoint>> points = expandSweep(axes, zip);
    if (!points) {
        return points.error();
    }
    for (const SweepAxis &a : axes) {
        if (Status s = checkSweepAxis(a, project); !s) {
            return s;
        }
    }
    for (std::thread &t : m_threads) {
        t.join();
    }
    m_threads.clear();
    m_project = project;
    m_axes = axes;
    m_zip = zip;
    m_options = options;
    m_points = *points;
    m_results.clear();
    m_compiledKeys.clear();
    m_fatal.reset();
    m_aborted = false;
    m_stop = false;
    m_next = 0;
    m_running = true;
    m_wall.start();
    m_wallSeconds = 0;
    const int threads = int(std::min<qsizetype>(options.devices.size(), m_points.size()));
    m_threadsLeft = std::max(threads, 0);
    if (m_threadsLeft == 0) {
        QMetaObject::invokeMethod(
            this, [this] { threadDone(); }, Qt::QueuedConnection);
        m_threadsLeft = 1;
        return Unit{};
    }
    for (int i = 0; i < threads; ++i) {
        const int device = options.devices[i];
        m_threads.emplace_back([this, device] { worker(device); });
    }
    return Unit{};
}

void SweepRunner::worker(int device)
{
    {
        // Its own client, so its own kpg-worker on this GPU; destroyed on this thread.
        EngineClient engine;
        {
            QMutexLocker lock(&m_mutex);
            m_engines << &engine;
        }
        CheckedRunOptions options;
        options.device = device;
        options.timing = m_options.timing;
        options.checks = m_options.checks;
        while (!m_stop) {
            const int i = m_next++;
            if (i >= m_points.size()) {
                break;
            }
            SweepPointResult pr;
            pr.index = i;
            pr.point = m_points[i];
            pr.label = sweepPointLabel(m_axes, pr.point);
            pr.device = device;
            const QString key = sweepCompileKey(m_axes, pr.point);
            Result<Project> p = applySweepPoint(m_project, m_axes, pr.point);
            if (!p) {
                pr.status = QStringLiteral("skipped");
                pr.reason = p.error().message;
            } else {
                {
                    // Points that share the define and template values share a
                    // compile: the compile cache answers for every one after the first.
                    QMutexLocker lock(&m_mutex);
                    pr.compiledFromCache = m_compiledKeys.contains(key);
                }
                pr.run = runProjectWithChecks(*p, &engine, options);
                pr.run.buffers = HostBuffers{};
                {
                    QMutexLocker lock(&m_mutex);
                    m_compiledKeys.insert(key);
                }
                if (m_stop) {
                    break; // killed by abort(): this point did not finish
                }
                if (pr.run.device) {
                    pr.deviceName = pr.run.device->name;
                }
                const std::optional<Error> e = pr.run.run.error ? pr.run.run.error : pr.run.error;
                if (e && isFatal(*e)) {
                    m_stop = true;
                    const Error fatal = *e;
                    QMetaObject::invokeMethod(
                        this, [this, fatal] { m_fatal = fatal; }, Qt::QueuedConnection);
                    break;
                }
                if (e && sweepErrorIsSkip(*e)) {
                    pr.status = QStringLiteral("skipped");
                    pr.reason = e->message;
                } else if (e) {
                    pr.status = QStringLiteral("failed");
                    pr.reason = e->message;
                } else if (!pr.run.checksPassed()) {
                    pr.status = QStringLiteral("check-failed");
                } else {
                    pr.status = QStringLiteral("ok");
                }
            }
            QMetaObject::invokeMethod(
                this, [this, pr] { landed(pr); }, Qt::QueuedConnection);
        }
        QMutexLocker lock(&m_mutex);
        m_engines.removeOne(&engine);
    }
    QMetaObject::invokeMethod(
        this, [this] { threadDone(); }, Qt::QueuedConnection);
}

void SweepRunner::landed(SweepPointResult result)
{
    m_results << result;
    Q_EMIT pointFinished(m_results.last());
    Q_EMIT progress(int(m_results.size()), planned(), secondsLeft());
}

void SweepRunner::threadDone()
{
    if (--m_threadsLeft > 0) {
        return;
    }
    m_wallSeconds = double(m_wall.elapsed()) / 1000.0;
    m_running = false;
    Q_EMIT finished(m_aborted);
}

void SweepRunner::abort()
{
    if (!m_running) {
        return;
    }
    m_aborted = true;
    m_stop = true;
    QMutexLocker lock(&m_mutex);
    for (EngineClient *e : std::as_const(m_engines)) {
        e->abortCurrent();
    }
}

void SweepRunner::waitFinished()
{
    if (!m_running) {
        return;
    }
    QEventLoop loop;
    connect(this, &SweepRunner::finished, &loop, &QEventLoop::quit);
    loop.exec();
}

QList<SweepPointResult> SweepRunner::resultsInOrder() const
{
    QList<SweepPointResult> sorted = m_results;
    std::sort(sorted.begin(), sorted.end(),
              [](const SweepPointResult &a, const SweepPointResult &b) { return a.index < b.index; });
    return sorted;
}

double SweepRunner::wallSeconds() const
{
    return m_running ? double(m_wall.elapsed()) / 1000.0 : m_wallSeconds;
}

double SweepRunner::secondsLeft() const
{
    if (m_results.isEmpty()) {
        return -1;
    }
    return wallSeconds() / double(m_results.size()) * double(planned() - m_results.size());
}

} // namespace Kp
