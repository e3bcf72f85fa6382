#include "workerservice.h"

#include "cuda/devicequery.h"
#include "run/gpusession.h"

#include <QCoreApplication>
#include <QFile>
#include <QThread>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace Kp {

using namespace Protocol;

namespace {
Error workerError(Error::Code code, const QString &message)
{
    return Error{QStringLiteral("kpg-worker"), code, {}, message};
}
} // namespace

WorkerService::WorkerService() = default;
WorkerService::~WorkerService() = default;

GpuSession &WorkerService::session()
{
    if (!m_session) {
        m_session = std::make_unique<GpuSession>();
    }
    return *m_session;
}

bool WorkerService::mustExit() const
{
    return m_session && m_session->mustExit();
}

Message WorkerService::handle(const Message &request)
{
    if (request.version != m_version && request.type != Type::Hello) {
        return errorReply(request, workerError(Error::Code::Protocol,
                                               QStringLiteral("kpg-worker speaks protocol version %1; the request "
                                                              "uses version %2")
                                                   .arg(m_version)
                                                   .arg(request.version)));
    }
    const qint64 pid = QCoreApplication::applicationPid();
    if (request.type == Type::Hello) {
        const int clientVersion = request.body.value(QStringLiteral("protocol"), -1).toInt();
        if (clientVersion != m_version || request.version != m_version) {
            return errorReply(
                request, workerError(Error::Code::Protocol, QStringLiteral("kpg-worker speaks protocol version %1; the "
                                                                           "engine speaks version %2")
                                                                .arg(m_version)
                                                                .arg(clientVersion)));
        }
        return reply(request, {{QStringLiteral("protocol"), m_version},
                               {QStringLiteral("pid"), pid},
                               {QStringLiteral("version"), QCoreApplication::applicationVersion()},
                               {QStringLiteral("sandbox"), m_sandbox}});
    }
    if (request.type == Type::Ping) {
        QVariantMap body{{QStringLiteral("pid"), pid}};
        const QString probe = request.body.value(QStringLiteral("testRead")).toString();
        if (qEnvironmentVariableIsSet("KPG_WORKER_TEST_HOOKS") && !probe.isEmpty()) {
            // Tests of the sandbox: can this process read the file? The error
            // is the C library's ("Permission denied" under the sandbox).
            const int fd = ::open(QFile::encodeName(probe).constData(), O_RDONLY | O_CLOEXEC);
            body.insert(QStringLiteral("testRead"),
                        fd >= 0 ? QStringLiteral("read") : QString::fromLocal8Bit(std::strerror(errno)));
            if (fd >= 0) {
                ::close(fd);
            }
        }
        return reply(request, body);
    }
    if (request.type == Type::ListDevices) {
        const Result<DeviceList> devices = queryDevices();
        if (!devices) {
            return errorReply(request, devices.error());
        }
        return reply(request, devices->toVariant());
    }
    if (request.type == Type::Run) {
        // Tests of the fault path need a worker that is busy with a run when
        // it is killed, on machines without a GPU; only they set this.
        const RunRequest run = RunRequest::fromVariant(request.body);
        if (qEnvironmentVariableIsSet("KPG_WORKER_TEST_HOOKS") && run.testSleepMs > 0) {
            QThread::msleep(static_cast<unsigned long>(run.testSleepMs));
        }
        QVariantMap body = session().run(run).toVariant();
        if (mustExit()) {
            body.insert(kWorkerExiting, true);
        }
        return reply(request, body);
    }
    if (request.type == Type::Prepare) {
        const Result<QVariantMap> r = session().prepare(RunRequest::fromVariant(request.body));
        if (!r) {
            return errorReply(request, r.error());
        }
        return reply(request, *r);
    }
    if (request.type == Type::Ceilings) {
        const Result<QVariantMap> r = session().ceilings(CeilingsRequest::fromVariant(request.body));
        if (!r) {
            return errorReply(request, r.error());
        }
        QVariantMap body = *r;
        if (mustExit()) {
            body.insert(kWorkerExiting, true);
        }
        return reply(request, body);
    }
    if (request.type == Type::Shutdown) {
        m_shutdown = true;
        return reply(request, {});
    }
    if (request.type == Type::Sleep) {
        const int ms = request.body.value(QStringLiteral("ms")).toInt();
        QThread::msleep(static_cast<unsigned long>(qBound(0, ms, 600000)));
        return reply(request, {{QStringLiteral("pid"), pid}});
    }
    if (request.type == Type::Crash) {
        std::abort();
    }
    return errorReply(
        request, workerError(Error::Code::Protocol, QStringLiteral("unknown request type '%1'").arg(request.type)));
}

} // namespace Kp
