#pragma once

// A real OpenSSH server for the remote-target tests and bench_remote: sshd
// from Debian's openssh-server, run as the current user on 127.0.0.1 on a
// free high port, with a throwaway host key, a user key, its own sshd_config
// (no PAM, StrictModes off, its own authorized_keys) and, for the client, its
// own ssh_config and known_hosts that kpg is pointed at through
// KPG_SSH_CONFIG. Nothing of the user's ~/.ssh is read or written. Stopped
// (SIGTERM, then waited for) by the destructor.

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QString>
#include <QTcpServer>
#include <QTemporaryDir>

#include <optional>

#include <unistd.h>

namespace KpTest {

class SshServer
{
public:
    /** Why no server could be started (a missing sshd is a skip, not a failure), or empty once it runs. */
    QString start()
    {
        m_sshd = QStandardPaths::findExecutable(
            QStringLiteral("sshd"),
            {QStringLiteral("/usr/sbin"), QStringLiteral("/usr/local/sbin"), QStringLiteral("/sbin")});
        if (m_sshd.isEmpty()) {
            m_sshd = QStandardPaths::findExecutable(QStringLiteral("sshd"));
        }
        const QString keygen = QStandardPaths::findExecutable(QStringLiteral("ssh-keygen"));
        if (m_sshd.isEmpty() || keygen.isEmpty() || QStandardPaths::findExecutable(QStringLiteral("ssh")).isEmpty()) {
            return QStringLiteral("sshd, ssh or ssh-keygen not found: install Debian's openssh-server and "
                                  "openssh-client (packaging/install-deps.sh)");
        }
        if (!m_dir.isValid()) {
            return QStringLiteral("no temporary folder");
        }
        for (const char *key : {"host_key", "user_key", "wrong_key"}) {
            QProcess k;
            k.start(keygen, {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"),
                             QStringLiteral("-N"), QString(), QStringLiteral("-f"), path(QString::fromLatin1(key))});
            if (!k.waitForFinished(30000) || k.exitCode() != 0) {
                return QStringLiteral("ssh-keygen failed: ") + QString::fromLocal8Bit(k.readAllStandardError());
            }
        }
        QFile::copy(path(QStringLiteral("user_key.pub")), path(QStringLiteral("authorized_keys")));
        // sshd run by root wants its privilege separation folder; as another user it runs without.
        if (::geteuid() == 0 && !QDir(QStringLiteral("/run/sshd")).exists() &&
            !QDir().mkpath(QStringLiteral("/run/sshd"))) {
            return QStringLiteral("sshd as root needs /run/sshd, which cannot be made");
        }
        {
            QTcpServer probe; // a free port: bind 0, read it, close
            if (!probe.listen(QHostAddress::LocalHost, 0)) {
                return QStringLiteral("no free TCP port on 127.0.0.1");
            }
            m_port = probe.serverPort();
        }
        write(QStringLiteral("sshd_config"),
              QStringLiteral("Port %1\nListenAddress 127.0.0.1\nHostKey %2\nPidFile %3\nAuthorizedKeysFile %4\n"
                             "StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                             "PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nUseDNS no\n"
                             "LogLevel VERBOSE\nSubsystem sftp internal-sftp\n%5")
                  .arg(m_port)
                  .arg(path(QStringLiteral("host_key")), path(QStringLiteral("sshd.pid")),
                       path(QStringLiteral("authorized_keys")), sessionEnvironment()));
        QFile hostPub(path(QStringLiteral("host_key.pub")));
        hostPub.open(QIODevice::ReadOnly);
        write(QStringLiteral("known_hosts"),
              QStringLiteral("[127.0.0.1]:%1 %2").arg(m_port).arg(QString::fromLatin1(hostPub.readAll())));
        write(QStringLiteral("known_hosts_empty"), QString());
        writeClientConfig(QStringLiteral("ssh_config"), QStringLiteral("user_key"), QStringLiteral("known_hosts"));
        writeClientConfig(QStringLiteral("ssh_config_wrong_key"), QStringLiteral("wrong_key"),
                          QStringLiteral("known_hosts"));
        writeClientConfig(QStringLiteral("ssh_config_unknown_host"), QStringLiteral("user_key"),
                          QStringLiteral("known_hosts_empty"));

        QProcess check;
        check.start(m_sshd, {QStringLiteral("-t"), QStringLiteral("-f"), path(QStringLiteral("sshd_config"))});
        if (!check.waitForFinished(30000) || check.exitCode() != 0) {
            return QStringLiteral("sshd -t refused the test's config: ") +
                   QString::fromLocal8Bit(check.readAllStandardError());
        }
        m_process.setProcessChannelMode(QProcess::SeparateChannels);
        m_process.start(m_sshd, {QStringLiteral("-D"), QStringLiteral("-e"), QStringLiteral("-f"),
                                 path(QStringLiteral("sshd_config"))});
        if (!m_process.waitForStarted(30000)) {
            return QStringLiteral("sshd did not start: ") + m_process.errorString();
        }
        // Ready once it says it listens (-e: its log on stderr); no fixed wait.
        QElapsedTimer clock;
        clock.start();
        while (!m_log.contains("Server listening on")) {
            if (m_process.state() != QProcess::Running || clock.elapsed() > 30000) {
                m_log += m_process.readAllStandardError();
                return QStringLiteral("sshd did not come up: ") + QString::fromLocal8Bit(m_log);
            }
            m_process.waitForReadyRead(1000);
            m_log += m_process.readAllStandardError();
        }
        return {};
    }

    ~SshServer() { stop(); }

    /**
     * sshd starts every session with a clean environment, so a kpg-worker that
     * finds its libraries through this process's LD_LIBRARY_PATH (a relocated
     * build; an installed one does not need it) gets the same path in its
     * session, as a server's administrator would set it.
     */
    static QString sessionEnvironment()
    {
        const QByteArray libraries = qgetenv("LD_LIBRARY_PATH");
        return libraries.isEmpty()
                   ? QString()
                   : QStringLiteral("SetEnv LD_LIBRARY_PATH=%1\n").arg(QString::fromLocal8Bit(libraries));
    }

    /** Stops sshd and waits for it (also before a program exits without unwinding). */
    void stop()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.terminate();
            if (!m_process.waitForFinished(10000)) {
                m_process.kill();
                m_process.waitForFinished(10000);
            }
        }
    }

    int port() const { return m_port; }
    qint64 pid() const { return m_process.processId(); }
    QString path(const QString &name) const { return m_dir.filePath(name); }
    /** ssh://127.0.0.1:PORT/WORKER */
    QString target(const QString &worker) const
    {
        return QStringLiteral("ssh://127.0.0.1:%1%2").arg(m_port).arg(worker);
    }
    /** sshd's log so far (for failure messages). */
    QString log()
    {
        m_log += m_process.readAllStandardError();
        return QString::fromLocal8Bit(m_log.right(3000));
    }

private:
    void write(const QString &name, const QString &text)
    {
        QFile f(path(name));
        f.open(QIODevice::WriteOnly | QIODevice::Truncate);
        f.write(text.toUtf8());
    }

    void writeClientConfig(const QString &name, const QString &key, const QString &knownHosts)
    {
        write(name, QStringLiteral("Host *\n  IdentityFile %1\n  IdentitiesOnly yes\n  IdentityAgent none\n"
                                   "  UserKnownHostsFile %2\n  GlobalKnownHostsFile /dev/null\n"
                                   "  StrictHostKeyChecking yes\n  UpdateHostKeys no\n")
                        .arg(path(key), path(knownHosts)));
    }

    QTemporaryDir m_dir;
    QString m_sshd;
    QProcess m_process;
    QByteArray m_log;
    int m_port = 0;
};

} // namespace KpTest
