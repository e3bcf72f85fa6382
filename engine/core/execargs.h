#pragma once

#include <QFile>
#include <QList>
#include <QProcessEnvironment>
#include <QStringList>

#include <vector>

namespace Kp {

/**
 * argv and envp for posix_spawn/execve, built before the spawn (nothing may
 * be allocated in a child between fork and exec) and kept alive with it.
 * Used where kpg starts kpg-compiler and kpg-worker itself.
 */
class ExecArgs
{
public:
    ExecArgs(const QString &program, const QStringList &args, const QProcessEnvironment &env)
    {
        m_args << QFile::encodeName(program);
        for (const QString &a : args) {
            m_args << QFile::encodeName(a);
        }
        for (const QString &e : env.toStringList()) {
            m_env << e.toLocal8Bit();
        }
        for (QByteArray &a : m_args) {
            m_argv.push_back(a.data());
        }
        m_argv.push_back(nullptr);
        for (QByteArray &e : m_env) {
            m_envp.push_back(e.data());
        }
        m_envp.push_back(nullptr);
    }
    ExecArgs(const ExecArgs &) = delete;
    ExecArgs &operator=(const ExecArgs &) = delete;

    char *const *argv() const { return m_argv.data(); }
    char *const *envp() const { return m_envp.data(); }

private:
    QList<QByteArray> m_args;
    QList<QByteArray> m_env;
    std::vector<char *> m_argv;
    std::vector<char *> m_envp;
};

} // namespace Kp
