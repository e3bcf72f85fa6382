#include "engineclient.h"

#include "supervisor.h"

#include "client/target.h"

#include <QCoreApplication>
#include <QDir>
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

int EngineClient::protocolVersion()
{
    return Protocol::kVersion;
}

QString EngineClient::targetName() const
{
    const Result<Target> t = m_target.isEmpty() ? Target::fromEnvironment() : Target::parse(m_target);
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
