#include "supervisor.h"

#include "client/localsocket.h"
#include "client/workerprocess.h"
#include "compile/sandbox.h"
#include "core/format.h"

#include <QCoreApplication>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTimer>

namespace Kp {

using namespace Protocol;

namespace {
constexpr qsizetype kStderrKeep = 4096;

Error engineError(Error::Code code, const QString &message)
{
    return Error{QStringLiteral("engine"), code, {}, message};
}
} // namespace

Supervisor::Supervisor(const WorkerLaunch &launch, QObject *parent)
    : QObject(parent)
    , m_launch(launch)
{
    m_startTimer = new QTimer(this);
    m_startTimer->setSingleShot(true);
    connect(m_startTimer, &QTimer::timeout, this, &Supervisor::onStartTimeout);
    m_requestTimer = new QTimer(this);
    m_requestTimer->setSingleShot(true);
    connect(m_requestTimer, &QTimer::timeout, this, &Supervisor::onRequestTimeout);
}

Supervisor::~Supervisor()
{
    if (!m_shuttingDown) {
        shutdown();
    }
}

void Supervisor::submit(Job job)
{
    if (m_shuttingDown) {
        job.done(engineError(Error::Code::Cancelled, QStringLiteral("the engine is shutting down")));
        return;
    }
    if (!job.options.tag.isEmpty()) {
        for (qsizetype i = 0; i < m_queue.size();) {
            if (m_queue[i].options.tag == job.options.tag) {
                Job old = m_queue.takeAt(i);
                finish(old, engineError(Error::Code::Cancelled,
                                        QStringLiteral("superseded by a newer '%1' request").arg(old.type)));
            } else {
                ++i;
            }
        }
    }
    m_queue.append(std::move(job));
    pump();
}

void Supervisor::pump()
{
    if (m_current || m_queue.isEmpty() || m_shuttingDown) {
        return;
    }
    if (m_state == State::Idle) {
        if (m_launch.single && m_started) {
            failQueue(engineError(Error::Code::WorkerDied,
                                  QStringLiteral("the checked worker has ended; a memory check runs one worker")));
            return;
        }
        startWorker();
        return;
    }
    if (m_state != State::Ready) {
        return; // the handshake's reply calls pump() again
    }
    m_current = m_queue.takeFirst();
    m_current->id = m_nextId++;
    if (m_copyBuffers && (m_current->type == Type::Run || m_current->type == Type::Prepare)) {
        // The worker cannot map this process's memory (remote, or sandboxed):
        // the buffers it lacks go first, in frames.
        const Status s = m_buffers.begin(m_current->body, m_current->id);
        if (!s) {
            Job job = std::move(*m_current);
            m_current.reset();
            finish(job, s.error());
            pump();
            return;
        }
        m_current->uploaded = m_buffers.uploadBytes();
        m_downloadTotal = 0;
        m_uploading = true;
        if (m_current->uploaded > 0) {
            reportProgress(0, m_current->uploaded, true, true);
        }
        pumpUpload();
        return;
    }
    send(Message{kVersion, m_current->type, m_current->id, m_current->body});
    m_requestTimer->start(qMax(1, m_current->options.timeoutMs));
}

void Supervisor::pumpUpload()
{
    // Keep a few frames queued, not the whole upload: a GiB buffer must not be copied into the write buffer.
    constexpr qint64 kQueued = 8 * kBufferChunkBytes;
    while (m_uploading && m_current && m_channel && m_channel->bytesToWrite() < kQueued) {
        const QByteArray frame = m_buffers.nextFrame();
        if (frame.isEmpty()) {
            m_uploading = false;
            send(Message{kVersion, m_current->type, m_current->id, m_current->body});
            // The time-out counts the worker's time, not the transfer's.
            m_requestTimer->start(qMax(1, m_current->options.timeoutMs));
            break;
        }
        m_channel->write(frame);
    }
    // Progress is what the channel has passed on to ssh, not what was queued
    // in it; this runs again on every bytesWritten until all of it has gone.
    if (m_current && m_channel && m_current->uploaded > 0 && m_uploadReported < m_current->uploaded) {
        const qint64 total = m_current->uploaded;
        const qint64 done = !m_uploading && m_channel->bytesToWrite() == 0
                                ? total
                                : qBound(qint64(0), m_buffers.handedBytes() - m_channel->bytesToWrite(), total - 1);
        reportProgress(done, total, true);
    }
}

void Supervisor::reportProgress(qint64 done, qint64 total, bool upload, bool force)
{
    if (upload) {
        m_uploadReported = done;
    }
    if (!force && done < total && m_progressClock.isValid() && m_progressClock.elapsed() < 100) {
        return;
    }
    m_progressClock.start();
    Q_EMIT transferProgress(done, total, upload);
}

void Supervisor::startWorker()
{
    Result<Target> target = m_launch.target.isEmpty() ? Target::fromEnvironment() : Target::parse(m_launch.target);
    if (!target) {
        failQueue(target.error());
        return;
    }
    m_target = *target;
    if (m_target.isRemote() && !m_launch.prefix.isEmpty()) {
        failQueue(engineError(Error::Code::Usage,
                              QStringLiteral("%1: a memory check (compute-sanitizer) runs on this machine only; use "
                                             "the target 'local'")
                                  .arg(m_target.displayName())));
        return;
    }
    if (m_target.isRemote()) {
        startRemote();
        return;
    }
    const QString program = EngineClient::workerPath();
    m_state = State::Starting;
    m_stderr.clear();
    m_decoder = FrameDecoder(Protocol::kMaxWorkerReplyBytes);

    m_server = new LocalListener(this);
    // Only this user may connect to the socket the worker calls back on.
    if (const Status listening =
            m_server->listen(QStringLiteral("kpg-%1-%2").arg(QCoreApplication::applicationPid()).arg(m_nextId));
        !listening) {
        teardown();
        failQueue(listening.error());
        return;
    }
    connect(m_server, &LocalListener::connected, this, &Supervisor::onConnection);

    m_process = new WorkerProcess(this);
    m_started = true;
    QStringList workerArgs{QStringLiteral("--connect"), m_server->path()};
    m_copyBuffers = false;
    if (Sandbox::workerSandboxRequested()) {
        workerArgs << QStringLiteral("--sandbox"); // opt-in (docs/security.md)
        // Landlock keeps the worker out of this process's /proc entries, so
        // it cannot map the buffers' memory: they travel in frames.
        m_copyBuffers = true;
    }
    if (m_launch.prefix.isEmpty()) {
        m_process->setProgram(program);
        m_process->setArguments(workerArgs);
    } else {
        // compute-sanitizer [options] kpg-worker --connect NAME: the sanitizer
        // is the process; it starts the worker as its own child.
        m_process->setProgram(m_launch.prefix.first());
        m_process->setArguments(m_launch.prefix.mid(1) + QStringList{program} + workerArgs);
    }
    connect(m_process, &WorkerProcess::readyReadStandardError, this, [this] {
        m_stderr.append(m_process->readAllStandardError());
        if (m_stderr.size() > kStderrKeep) {
            m_stderr.remove(0, m_stderr.size() - kStderrKeep);
        }
    });
    connect(m_process, &WorkerProcess::errorOccurred, this, [this, program](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) {
            const Error e = engineError(Error::Code::WorkerStart,
                                        QStringLiteral("cannot start kpg-worker (%1): %2; set KPG_WORKER to its path")
                                            .arg(program, m_process->errorString()));
            teardown();
            failQueue(e);
        }
    });
    connect(m_process, &WorkerProcess::finished, this, &Supervisor::onWorkerGone);
    m_startTimer->start(m_launch.startTimeoutMs);
    m_process->start();
}

void Supervisor::startRemote()
{
    m_state = State::Starting;
    m_copyBuffers = true;
    m_stderr.clear();
    m_decoder = FrameDecoder(Protocol::kMaxWorkerReplyBytes);
    m_buffers.reset();
    m_uploading = false;
    const QStringList command = m_target.command();
    m_process = new WorkerProcess(this);
    m_started = true;
    m_process->setStdio(true);
    m_process->setProgram(command.first());
    m_process->setArguments(command.mid(1));
    connect(m_process, &WorkerProcess::readyReadStandardError, this, [this] {
        m_stderr.append(m_process->readAllStandardError());
        if (m_stderr.size() > kStderrKeep) {
            m_stderr.remove(0, m_stderr.size() - kStderrKeep);
        }
    });
    const QString program = command.first();
    connect(m_process, &WorkerProcess::errorOccurred, this, [this, program](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) {
            const Error e = engineError(Error::Code::WorkerStart,
                                        QStringLiteral("%1: cannot start %2: %3")
                                            .arg(m_target.displayName(), program, m_process->errorString()));
            teardown();
            failQueue(e);
        }
    });
    connect(m_process, &WorkerProcess::finished, this, &Supervisor::onWorkerGone);
    // ssh's own ConnectTimeout is 15 s; srun waits up to the target's allocation time.
    int startMs = qMax(m_launch.startTimeoutMs, 40000);
    if (m_target.kind == Target::Kind::Slurm) {
        startMs = qMax(startMs, (m_target.allocationWaitSeconds + 60) * 1000);
    }
    m_startTimer->start(startMs);
    m_process->start();
    if (!m_process || !m_process->channel()) {
        return; // failed to start (errorOccurred may already have torn it down)
    }
    m_channel = m_process->channel();
    connect(m_channel, &QIODevice::readyRead, this, &Supervisor::onReadyRead);
    connect(m_channel, &QIODevice::bytesWritten, this, &Supervisor::pumpUpload);
    // Written now, read by the worker once ssh has connected and started it.
    m_helloId = m_nextId++;
    send(Message{kVersion, Type::Hello, m_helloId, {{QStringLiteral("protocol"), kVersion}}});
}

Error Supervisor::fromTarget(Error e) const
{
    if (m_target.isRemote() && !e.message.startsWith(m_target.displayName())) {
        e.message = m_target.displayName() + QStringLiteral(": ") + e.message;
    }
    return e;
}

Error Supervisor::goneError(const QString &reason, const QString &tail, bool wasStarting, const QString &type) const
{
    const Error::Code code = wasStarting ? Error::Code::WorkerStart : Error::Code::WorkerDied;
    if (m_target.isRemote()) {
        const QString explained =
            m_target.explainFailure(QString::fromLocal8Bit(m_stderr), m_process->exitCode(), !wasStarting);
        if (!explained.isEmpty()) {
            return engineError(code, type.isEmpty() ? explained
                                                    : QStringLiteral("%1 while running '%2'; the next request "
                                                                     "reconnects")
                                                          .arg(explained, type));
        }
    }
    const QString where = m_target.isRemote() ? m_target.displayName() + QStringLiteral(": ") : QString();
    if (type.isEmpty()) {
        return engineError(code, QStringLiteral("%1%2 before it answered%3").arg(where, reason, tail));
    }
    return engineError(code, QStringLiteral("%1%2 while running '%3'; a fresh worker will serve the next request%4")
                                 .arg(where, reason, type, tail));
}

void Supervisor::onConnection(LocalChannel *channel)
{
    if (m_socket || !m_server) {
        delete channel;
        return;
    }
    channel->setParent(this);
    m_socket = channel;
    m_channel = m_socket;
    m_server->close(); // one worker, one connection
    connect(m_socket, &LocalChannel::readyRead, this, &Supervisor::onReadyRead);
    // A sandboxed worker's buffers go in frames (m_copyBuffers): the upload
    // goes on as the socket takes them, as a remote worker's does.
    connect(m_socket, &LocalChannel::bytesWritten, this, &Supervisor::pumpUpload);
    // A dead worker shows first as a closed socket; act on it at once, so no
    // request is sent to a process that is already gone.
    connect(m_socket, &LocalChannel::disconnected, this, &Supervisor::onWorkerGone);
    m_helloId = m_nextId++;
    send(Message{kVersion, Type::Hello, m_helloId, {{QStringLiteral("protocol"), kVersion}}});
}

void Supervisor::send(const Message &message)
{
    if (m_channel) {
        m_channel->write(encode(message));
    }
    if (m_socket) {
        m_socket->flush();
    }
}

void Supervisor::onReadyRead()
{
    if (!m_channel) {
        return;
    }
    m_decoder.feed(m_channel->readAll());
    while (auto next = m_decoder.next()) {
        if (!next->ok()) {
            Error e = next->error();
            e.message = QStringLiteral("kpg-worker sent a malformed message (%1); it was stopped").arg(e.message);
            if (m_current) {
                Job job = std::move(*m_current);
                m_current.reset();
                finish(job, e);
            }
            if (m_state == State::Starting) {
                failQueue(e);
            }
            stopWorker(QStringLiteral("kpg-worker was stopped after a malformed message"));
            return;
        }
        const Message &m = next->value();
        if (m.type == Type::BufferData) {
            // A piece of a buffer the run changed (remote targets); the reply follows.
            if (m_current && m.id == m_current->id) {
                const Status s = m_buffers.receive(m.body);
                m_current->downloaded += m.body.value(QStringLiteral("data")).toByteArray().size();
                // The worker announces the bytes of all changed buffers ("total"); without it, this buffer's.
                m_downloadTotal = qMax(m_downloadTotal, m.body.value(QStringLiteral("total")).toLongLong());
                m_downloadTotal = qMax(m_downloadTotal, m_current->downloaded);
                reportProgress(m_current->downloaded, m_downloadTotal, false);
                if (!s) {
                    Job job = std::move(*m_current);
                    m_current.reset();
                    finish(job, fromTarget(s.error()));
                    stopWorker(QStringLiteral("kpg-worker was stopped after a wrong buffer frame"));
                    pump();
                    return;
                }
            }
            continue;
        }
        if (m.id == m_helloId && m_state == State::Starting) {
            m_startTimer->stop();
            if (m.type != Type::Reply || m.body.value(QStringLiteral("protocol")).toInt() != kVersion) {
                Error e = m.type == Type::ErrorReply
                              ? Error::fromVariant(m.body)
                              : engineError(Error::Code::Protocol,
                                            QStringLiteral("kpg-worker speaks protocol %1; this engine speaks %2")
                                                .arg(m.body.value(QStringLiteral("protocol")).toString())
                                                .arg(kVersion));
                failQueue(fromTarget(e));
                stopWorker(QStringLiteral("kpg-worker was stopped: its handshake failed"));
                return;
            }
            m_pid = m.body.value(QStringLiteral("pid")).toLongLong();
            m_state = State::Ready;
            Q_EMIT workerStarted(m_pid);
            pump();
            continue;
        }
        if (!m_current || m.id != m_current->id) {
            continue; // an answer to a request that already timed out
        }
        m_requestTimer->stop();
        Job job = std::move(*m_current);
        m_current.reset();
        const bool exiting = m.body.value(kWorkerExiting).toBool();
        if (exiting) {
            // Reap it before anything else is sent: a request written to a
            // worker on its way out would fail for no fault of its own.
            stopWorker(QStringLiteral("kpg-worker ended itself after a kernel fault"), true);
        }
        if (m.type == Type::Reply) {
            finish(job, m.body);
        } else {
            finish(job, fromTarget(Error::fromVariant(m.body)));
        }
        pump();
        if (exiting) {
            return; // the socket is gone
        }
    }
}

void Supervisor::onRequestTimeout()
{
    if (!m_current) {
        return;
    }
    Job job = std::move(*m_current);
    m_current.reset();
    finish(job,
           fromTarget(Error{QStringLiteral("engine"),
                            Error::Code::Timeout,
                            {},
                            QStringLiteral("'%1' did not finish within %2 ms; kpg-worker was stopped and a fresh one "
                                           "will serve the next request")
                                .arg(job.type)
                                .arg(job.options.timeoutMs)}));
    stopWorker(QStringLiteral("kpg-worker was stopped after a time-out"));
    pump(); // a fresh worker for what is queued
}

void Supervisor::abortCurrent()
{
    if (!m_current) {
        return;
    }
    // A remote transfer in progress is named with how far it got: the bytes
    // that went are lost with the connection, and the next request starts over.
    QString during;
    if (m_current->uploaded > 0 && m_uploadReported < m_current->uploaded) {
        const qint64 sent =
            m_channel ? qBound(qint64(0), m_buffers.handedBytes() - m_channel->bytesToWrite(), m_current->uploaded)
                      : m_uploadReported;
        during = QStringLiteral(" while sending its buffers (%1 of %2 sent)")
                     .arg(formatBytes(sent), formatBytes(m_current->uploaded));
    } else if (m_current->downloaded > 0) {
        during = QStringLiteral(" while receiving its results (%1 of %2 received)")
                     .arg(formatBytes(m_current->downloaded), formatBytes(m_downloadTotal));
    }
    Job job = std::move(*m_current);
    m_current.reset();
    stopWorker(QStringLiteral("kpg-worker was stopped: '%1' was aborted").arg(job.type));
    const QString message =
        m_target.isRemote()
            ? fromTarget(engineError(Error::Code::Cancelled,
                                     QStringLiteral("'%1' was aborted%2; the connection was closed and the next "
                                                    "request reconnects")
                                         .arg(job.type, during)))
                  .message
            : QStringLiteral("'%1' was aborted; kpg-worker was stopped and a fresh one will serve the next request")
                  .arg(job.type);
    finish(job, engineError(Error::Code::Cancelled, message));
    pump();
}

void Supervisor::setTarget(const QString &target)
{
    if (target == m_launch.target) {
        return;
    }
    m_launch.target = target;
    m_started = false; // a single-worker launch may start one on the new target
    const QString reason = QStringLiteral("kpg-worker was stopped: the target changed to %1").arg(target);
    if (m_current) {
        Job job = std::move(*m_current);
        m_current.reset();
        stopWorker(reason);
        finish(job, engineError(Error::Code::Cancelled,
                                QStringLiteral("'%1' was stopped: the target changed to %2").arg(job.type, target)));
    } else {
        stopWorker(reason);
    }
    pump(); // what is queued goes to the new target
}

void Supervisor::onStartTimeout()
{
    if (m_state != State::Starting) {
        return;
    }
    const Error e = fromTarget(
        engineError(Error::Code::WorkerStart, QStringLiteral("kpg-worker did not answer within %1 s of starting%2")
                                                  .arg(m_startTimer->interval() / 1000)
                                                  .arg(stderrTail())));
    failQueue(e);
    stopWorker(QStringLiteral("kpg-worker was stopped: it did not answer after starting"));
}

void Supervisor::onWorkerGone()
{
    if (!m_process) {
        return; // already handled (socket and process both report a death)
    }
    if (m_channel && m_channel != m_socket && m_channel->bytesAvailable() > 0) {
        // A remote worker's last frames (a reply, then its exit) are read before its end is acted on.
        onReadyRead();
        if (!m_process) {
            return;
        }
    }
    // Handle the death once: waiting below would otherwise re-enter through
    // finished() or the socket's disconnected().
    m_process->disconnect(this);
    if (m_socket) {
        m_socket->disconnect(this);
    }
    if (m_channel) {
        m_channel->disconnect(this);
    }
    // Make sure the process has really ended, so its exit status is known.
    if (m_process->state() != QProcess::NotRunning &&
        !m_process->waitForFinished(m_launch.exitWaitMs > 2000 ? m_launch.exitWaitMs : 1000)) {
        m_process->kill();
        m_process->waitForFinished(2000);
    }
    m_stderr.append(m_process->readAllStandardError());
    const QString tail = stderrTail();
    const QString reason = m_process->exitStatus() == QProcess::CrashExit
                               ? QStringLiteral("kpg-worker crashed (killed by a signal)")
                               : QStringLiteral("kpg-worker exited with code %1").arg(m_process->exitCode());
    const bool wasStarting = m_state == State::Starting;
    if (m_current) {
        Job job = std::move(*m_current);
        m_current.reset();
        finish(job, goneError(reason, tail, wasStarting, job.type));
    }
    const Error startError = goneError(reason, tail, true, {});
    teardown();
    Q_EMIT workerExited(reason + tail);
    if (wasStarting) {
        // A worker that dies before its handshake would die again: do not loop.
        failQueue(startError);
        return;
    }
    pump();
}

void Supervisor::stopWorker(const QString &reason, bool graceful)
{
    if (!m_process) {
        return;
    }
    teardown(graceful); // kills and reaps synchronously, so nothing is sent to it any more
    Q_EMIT workerExited(reason);
}

void Supervisor::teardown(bool graceful)
{
    m_startTimer->stop();
    m_requestTimer->stop();
    m_uploading = false;
    if (m_channel && m_channel != m_socket) {
        m_channel->disconnect(this);
    }
    m_channel = nullptr;
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->deleteLater();
        m_socket = nullptr;
    }
    if (m_process) {
        m_process->disconnect(this);
        // A worker ending by itself (after a fault) is given its time: under
        // compute-sanitizer, killing it loses the report.
        if (graceful && m_process->state() != QProcess::NotRunning) {
            m_process->waitForFinished(m_launch.exitWaitMs);
        }
        if (m_process->state() != QProcess::NotRunning) {
            m_process->kill();
            m_process->waitForFinished(2000);
        }
        m_process->deleteLater();
        m_process = nullptr;
    }
    if (m_server) {
        m_server->close();
        m_server->deleteLater();
        m_server = nullptr;
    }
    m_state = State::Idle;
    m_pid = 0;
}

void Supervisor::finish(Job &job, const Reply &reply)
{
    if (m_target.isRemote()) {
        Q_EMIT transferred(job.uploaded, job.downloaded);
    }
    if (job.done) {
        auto done = std::move(job.done);
        job.done = nullptr;
        done(reply);
    }
}

void Supervisor::failQueue(const Error &error)
{
    QList<Job> queue;
    queue.swap(m_queue);
    for (Job &job : queue) {
        finish(job, error);
    }
}

void Supervisor::shutdown()
{
    m_shuttingDown = true;
    const Error e = engineError(Error::Code::Cancelled, QStringLiteral("the engine is shutting down"));
    failQueue(e);
    const bool busy = m_current.has_value();
    if (m_current) {
        Job job = std::move(*m_current);
        m_current.reset();
        finish(job, e);
    }
    // A worker busy with a request cannot read "shutdown" until it is done,
    // which may be never (a spinning kernel): then teardown() kills it.
    if (!busy && m_process && m_channel && m_state == State::Ready) {
        m_process->disconnect(this);
        m_channel->disconnect(this);
        send(Message{kVersion, Type::Shutdown, m_nextId++, {}});
        m_channel->waitForBytesWritten(1000);
        if (!m_process->waitForFinished(m_launch.exitWaitMs)) {
            m_process->kill();
        }
    }
    teardown();
}

QString Supervisor::stderrTail() const
{
    const QString text = QString::fromLocal8Bit(m_stderr).trimmed();
    if (text.isEmpty()) {
        return {};
    }
    return QStringLiteral("; its last words: ") + text.right(600);
}

} // namespace Kp
