#include "compileservice.h"

#include <QMetaObject>

namespace Kp {

CompileService::CompileService(Compiler::Config config, QObject *parent)
    : QObject(parent)
    , m_compiler(config)
{
    m_pool.setMaxThreadCount(1);
    m_pool.setObjectName(QStringLiteral("kpg-compile"));
    // The pool thread starts kpg-compiler, whose PR_SET_PDEATHSIG fires when
    // that thread ends: keep it for the service's life.
    m_pool.setExpiryTimeout(-1);
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
        if (!tag.isEmpty() && tag == m_runningTag) {
            m_compiler.cancelRunning(); // superseded while NVRTC works on it: no point finishing
        }
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
            m_runningTag = key.startsWith(QChar(1)) ? QString() : key;
        }
        const Result<CompileResult> r = m_compiler.compile(p.request);
        {
            QMutexLocker lock(&m_mutex);
            m_runningTag.clear();
        }
        if (!p.context || (!r && r.error().code == Error::Code::Cancelled)) {
            return;
        }
        if (r && r.value().ok && m_afterCompile) {
            m_afterCompile(r.value());
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
