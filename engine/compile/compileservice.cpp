#include "compileservice.h"

#include <QMetaObject>

namespace Kp {

CompileService::CompileService(Compiler::Config config, QObject *parent)
    : QObject(parent)
    , m_compiler(config)
{
    m_pool.setMaxThreadCount(1);
    m_pool.setObjectName(QStringLiteral("kpg-compile"));
}

CompileService::~CompileService()
{
    {
        QMutexLocker lock(&m_mutex);
        m_pending.clear();
    }
    m_pool.waitForDone();
}

void CompileService::compile(const CompileRequest &request, QObject *context, Callback callback, const QString &tag)
{
    QString key = tag;
    bool schedule = false;
    {
        QMutexLocker lock(&m_mutex);
        if (key.isEmpty()) {
            key = QStringLiteral("\x01untagged-%1").arg(++m_untagged);
        }
        schedule = !m_pending.contains(key); // else the queued task will pick up this newer request
        m_pending.insert(key, Pending{request, context, std::move(callback)});
    }
    if (!schedule) {
        return;
    }
    m_pool.start([this, key] {
        Pending p;
        {
            QMutexLocker lock(&m_mutex);
            if (!m_pending.contains(key)) {
                return;
            }
            p = m_pending.take(key);
        }
        const Result<CompileResult> r = m_compiler.compile(p.request);
        if (!p.context) {
            return;
        }
        QMetaObject::invokeMethod(
            p.context.data(),
            [ctx = p.context, cb = p.callback, r] {
                if (ctx && cb) {
                    cb(r);
                }
            },
            Qt::QueuedConnection);
    });
}

} // namespace Kp
