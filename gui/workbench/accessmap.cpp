#include "accessmap.h"

#include "client/engineclient.h"

#include <QPointer>
#include <QThread>

namespace Kp {

AccessMap::AccessMap(QObject *parent)
    : QObject(parent)
{
}

AccessMap::~AccessMap()
{
    if (m_thread) {
        // The run ends by itself (the launch time-out bounds it); its result goes nowhere.
        m_thread->wait();
    }
}

bool AccessMap::start(const Project &project, const AccessRunOptions &options)
{
    if (m_running.exchange(true)) {
        return false;
    }
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
        m_thread = nullptr;
    }
    setReport(nullptr);
    QPointer<AccessMap> self(this);
    m_thread = QThread::create([self, project, options, that = this] {
        auto outcome = std::make_shared<AccessOutcome>();
        outcome->step = options.step;
        {
            EngineClient engine; // its own worker, on this thread, gone before the answer is sent
            Result<AccessReport> r = runAccessMap(project, &engine, options);
            if (r) {
                outcome->report = std::make_shared<const AccessReport>(std::move(r).value());
            } else {
                outcome->error = r.error();
            }
        }
        QMetaObject::invokeMethod(
            that,
            [self, outcome] {
                if (self) {
                    self->m_running = false;
                    if (outcome->report) {
                        self->setReport(outcome->report);
                    }
                    Q_EMIT self->finished(*outcome);
                }
            },
            Qt::QueuedConnection);
    });
    m_thread->start();
    return true;
}

void AccessMap::setReport(std::shared_ptr<const AccessReport> report)
{
    if (report == m_last) {
        return;
    }
    m_last = std::move(report);
    Q_EMIT reportChanged(m_last);
}

void AccessMap::setShowInEditor(bool on)
{
    if (on == m_showInEditor) {
        return;
    }
    m_showInEditor = on;
    Q_EMIT showInEditorChanged(on);
}

} // namespace Kp
