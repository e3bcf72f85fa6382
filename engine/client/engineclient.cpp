#include "engineclient.h"

#include "supervisor.h"

#include "client/target.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>

#include <future>
#include <memory>

namespace Kp {

EngineClient::EngineClient(QObject *parent)
    : EngineClient(WorkerLaunch{}, parent)
{
}

EngineClient::EngineClient(const WorkerLaunch &launch, QObject *parent)
    : QObject(parent)
    , m_target(launch.target)
{
    m_thread.setObjectName(QStringLiteral("kpg-engine"));
    m_supervisor = new Supervisor(launch);
    m_supervisor->moveToThread(&m_thread);
    // The pid is kept in an atomic from the engine thread itself, so that it
    // is already true when a reply's callback runs.
    connect(
        m_supervisor, &Supervisor::workerStarted, m_supervisor, [this](qint64 pid) { m_workerPid = pid; },
        Qt::DirectConnection);
    connect(
        m_supervisor, &Supervisor::workerExited, m_supervisor, [this] { m_workerPid = 0; }, Qt::DirectConnection);
    connect(
        m_supervisor, &Supervisor::transferred, m_supervisor,
        [this](qint64 up, qint64 down) {
            m_uploaded = up;
            m_downloaded = down;
        },
        Qt::DirectConnection);
    connect(m_supervisor, &Supervisor::workerStarted, this, &EngineClient::workerStarted);
    connect(m_supervisor, &Supervisor::workerExited, this, &EngineClient::workerExited);
    connect(m_supervisor, &Supervisor::transferProgress, this, &EngineClient::transferProgress);
    m_thread.start();
}

EngineClient::~EngineClient()
{
    QMetaObject::invokeMethod(m_supervisor, &Supervisor::shutdown, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
    delete m_supervisor; // its thread has finished; nothing else refers to it
}

void EngineClient::request(const QString &type, const QVariantMap &body, QObject *context, ReplyCallback callback,
                           RequestOptions options)
{
    Supervisor::Job job;
    job.type = type;
    job.body = body;
    job.options = std::move(options);
    if (context) {
        job.done = [guard = QPointer<QObject>(context), callback = std::move(callback)](const Reply &reply) {
            if (!guard) {
                return;
            }
            QMetaObject::invokeMethod(
                guard.data(),
                [guard, callback, reply] {
                    if (guard && callback) {
                        callback(reply);
                    }
                },
                Qt::QueuedConnection);
        };
    } else {
        job.done = std::move(callback);
    }
    QMetaObject::invokeMethod(
        m_supervisor, [s = m_supervisor, job]() mutable { s->submit(std::move(job)); }, Qt::QueuedConnection);
}

void EngineClient::abortCurrent()
{
    QMetaObject::invokeMethod(m_supervisor, &Supervisor::abortCurrent, Qt::QueuedConnection);
}

Reply EngineClient::requestSync(const QString &type, const QVariantMap &body, RequestOptions options)
{
    if (QThread::currentThread() == &m_thread) {
        return Error{QStringLiteral("engine"),
                     Error::Code::Internal,
                     {},
                     QStringLiteral("requestSync called on the engine thread would deadlock")};
    }
    auto promise = std::make_shared<std::promise<Reply>>();
    std::future<Reply> future = promise->get_future();
    request(
        type, body, nullptr, [promise](const Reply &reply) { promise->set_value(reply); }, std::move(options));
    return future.get();
}

namespace {
Result<DeviceList> toDeviceList(const Reply &reply)
{
    if (!reply) {
        return reply.error();
    }
    return DeviceList::fromVariant(*reply);
}
} // namespace

void EngineClient::listDevices(QObject *context, DeviceListCallback callback, int timeoutMs)
{
    request(
        Protocol::Type::ListDevices, {}, context,
        [callback = std::move(callback)](const Reply &reply) {
            if (callback) {
                callback(toDeviceList(reply));
            }
        },
        RequestOptions{timeoutMs, {}});
}

Result<DeviceList> EngineClient::listDevicesSync(int timeoutMs)
{
    return toDeviceList(requestSync(Protocol::Type::ListDevices, {}, RequestOptions{timeoutMs, {}}));
}

void EngineClient::roundTrip(QObject *context, std::function<void(const Result<double> &)> callback, int timeoutMs)
{
    QElapsedTimer clock;
    clock.start();
    QPointer<QObject> guard(context);
    // No context for the request: its answer is timed on the engine thread, then handed on.
    request(
        Protocol::Type::Ping, {}, nullptr,
        [clock, guard, callback = std::move(callback)](const Reply &reply) {
            const Result<double> ms =
                reply ? Result<double>(double(clock.nsecsElapsed()) / 1e6) : Result<double>(reply.error());
            if (!guard) {
                return;
            }
            QMetaObject::invokeMethod(
                guard.data(),
                [guard, callback, ms] {
                    if (guard && callback) {
                        callback(ms);
                    }
                },
                Qt::QueuedConnection);
        },
        RequestOptions{timeoutMs, {}});
}

int EngineClient::protocolVersion()
{
    return Protocol::kVersion;
}

void EngineClient::setTarget(const QString &target)
{
    {
        QMutexLocker lock(&m_targetMutex);
        m_target = target;
    }
    QMetaObject::invokeMethod(
        m_supervisor, [s = m_supervisor, target] { s->setTarget(target); }, Qt::QueuedConnection);
}

QString EngineClient::targetName() const
{
    QString spec;
    {
        QMutexLocker lock(&m_targetMutex);
        spec = m_target;
    }
    const Result<Target> t = spec.isEmpty() ? Target::fromEnvironment() : Target::parse(spec);
    return t ? t->displayName() : t.error().message;
}

QString EngineClient::workerPath()
{
    const QString env = qEnvironmentVariable("KPG_WORKER");
    if (!env.isEmpty()) {
        return env;
    }
    return QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("kpg-worker"));
}

} // namespace Kp
