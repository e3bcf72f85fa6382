#include "core/profilerenv.h"

#include <QFileInfo>
#include <QRegularExpression>

#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

namespace Kp {

namespace {
const char *const kMoved = "KPG_PROFILER_MOVED";
const char *const kInjectionVars[] = {"CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"};

std::string saved(const char *name)
{
    return std::string("KPG_PROFILER_") + name;
}
} // namespace

bool isProfilerPreload(const QString &lib)
{
    const QString name = QFileInfo(lib).fileName();
    return lib.contains(QLatin1String("nsight"), Qt::CaseInsensitive) ||
           name.contains(QLatin1String("Injection"), Qt::CaseInsensitive) ||
           name.contains(QLatin1String("TreeLauncher"), Qt::CaseInsensitive);
}

void leaveProfilerInjection(char **argv)
{
    const char *stay = std::getenv("KPG_PROFILER_STAY");
    if ((stay && std::strcmp(stay, "1") == 0) || std::getenv(kMoved)) {
        return;
    }
    const char *preload = std::getenv("LD_PRELOAD");
    QStringList kept;
    QStringList profiler;
    if (preload) {
        for (const QString &lib :
             QString::fromLocal8Bit(preload).split(QRegularExpression(QStringLiteral("[ :]")), Qt::SkipEmptyParts)) {
            (isProfilerPreload(lib) ? profiler : kept) << lib;
        }
    }
    bool injected = !profiler.isEmpty();
    for (const char *v : kInjectionVars) {
        injected = injected || std::getenv(v);
    }
    if (!injected) {
        return;
    }
    ::setenv(kMoved, "1", 1);
    if (preload) {
        ::setenv(saved("LD_PRELOAD").c_str(), profiler.join(QLatin1Char(':')).toLocal8Bit().constData(), 1);
        if (kept.isEmpty()) {
            ::unsetenv("LD_PRELOAD");
        } else {
            ::setenv("LD_PRELOAD", kept.join(QLatin1Char(':')).toLocal8Bit().constData(), 1);
        }
    }
    for (const char *v : kInjectionVars) {
        if (const char *value = std::getenv(v)) {
            ::setenv(saved(v).c_str(), value, 1);
            ::unsetenv(v);
        }
    }
    ::execv("/proc/self/exe", argv);
    // The exec failed: go on as we were, injection and all.
    if (preload) {
        ::setenv("LD_PRELOAD", preload, 1);
    }
    for (const char *v : kInjectionVars) {
        if (const char *value = std::getenv(saved(v).c_str())) {
            ::setenv(v, value, 1);
        }
    }
}

void restoreProfilerInjection(QProcessEnvironment &env)
{
    if (!env.contains(QString::fromLatin1(kMoved))) {
        return;
    }
    env.remove(QString::fromLatin1(kMoved));
    const QString savedPreload = QString::fromStdString(saved("LD_PRELOAD"));
    if (env.contains(savedPreload)) {
        const QString other = env.value(QStringLiteral("LD_PRELOAD"));
        env.insert(QStringLiteral("LD_PRELOAD"),
                   other.isEmpty() ? env.value(savedPreload) : env.value(savedPreload) + QLatin1Char(':') + other);
        env.remove(savedPreload);
    }
    for (const char *v : kInjectionVars) {
        const QString key = QString::fromStdString(saved(v));
        if (env.contains(key)) {
            env.insert(QString::fromLatin1(v), env.value(key));
            env.remove(key);
        }
    }
}

} // namespace Kp
