#include "client/target.h"

#include <QRegularExpression>

namespace Kp {

namespace {

Error targetError(const QString &spec, const QString &message)
{
    return Error{
        QStringLiteral("target"), Error::Code::Usage, {}, QStringLiteral("target '%1': %2").arg(spec, message)};
}

// Names that reach ssh's and srun's command lines: no option-looking values,
// no shell metacharacters, no control characters.
const QRegularExpression &nameRe()
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z0-9_][A-Za-z0-9._-]*$"));
    return re;
}

bool hasControl(const QString &s)
{
    for (const QChar c : s) {
        if (c.unicode() < 0x20 || c.unicode() == 0x7f) {
            return true;
        }
    }
    return false;
}

// One word for a POSIX shell on the remote side: single quotes, a quote
// inside as '\''. A leading "~/" stays outside the quotes ("$HOME"), so
// ssh://host/~/kpg/bin/kpg-worker finds the worker under the remote home.
QString shellWord(const QString &s)
{
    QString rest = s;
    QString prefix;
    if (rest.startsWith(QLatin1String("~/"))) {
        prefix = QStringLiteral("\"$HOME\"/");
        rest = rest.mid(2);
    }
    QString quoted = rest;
    quoted.replace(QLatin1Char('\''), QLatin1String("'\\''"));
    return prefix + QLatin1Char('\'') + quoted + QLatin1Char('\'');
}

// user@host:port after "ssh://", up to the first '/'.
Result<Target> parseSshAuthority(const QString &spec, const QString &authority, Target t)
{
    QString rest = authority;
    const qsizetype at = rest.lastIndexOf(QLatin1Char('@'));
    if (at >= 0) {
        t.user = rest.left(at);
        rest = rest.mid(at + 1);
        if (!nameRe().match(t.user).hasMatch()) {
            return targetError(spec, QStringLiteral("the user name '%1' may hold letters, digits, '.', '_' and '-' "
                                                    "only, and may not start with '-' or '.'")
                                         .arg(t.user));
        }
    }
    QString portText;
    if (rest.startsWith(QLatin1Char('['))) {
        // [IPv6]:port
        const qsizetype close = rest.indexOf(QLatin1Char(']'));
        if (close < 0) {
            return targetError(spec, QStringLiteral("the IPv6 address lacks its closing ']'"));
        }
        t.host = rest.mid(1, close - 1);
        const QString after = rest.mid(close + 1);
        if (after.startsWith(QLatin1Char(':'))) {
            portText = after.mid(1);
        } else if (!after.isEmpty()) {
            return targetError(spec, QStringLiteral("only ':port' may follow the IPv6 address"));
        }
        static const QRegularExpression v6(QStringLiteral("^[0-9A-Fa-f:.]+$"));
        if (!v6.match(t.host).hasMatch()) {
            return targetError(spec, QStringLiteral("'%1' is not an IPv6 address").arg(t.host));
        }
    } else {
        const qsizetype colon = rest.indexOf(QLatin1Char(':'));
        t.host = colon < 0 ? rest : rest.left(colon);
        if (colon >= 0) {
            portText = rest.mid(colon + 1);
        }
        if (t.host.isEmpty()) {
            return targetError(spec,
                               QStringLiteral("no host name (expected ssh://[user@]host[:port][/path/to/kpg-worker])"));
        }
        if (!nameRe().match(t.host).hasMatch()) {
            return targetError(spec, QStringLiteral("the host name '%1' may hold letters, digits, '.', '_' and '-' "
                                                    "only, and may not start with '-' or '.'")
                                         .arg(t.host));
        }
    }
    if (!portText.isNull()) {
        bool ok = false;
        const int port = portText.toInt(&ok);
        if (!ok || port < 1 || port > 65535) {
            return targetError(spec, QStringLiteral("the port '%1' must be a number from 1 to 65535").arg(portText));
        }
        t.port = port;
    }
    return t;
}

Result<QString> checkWorkerPath(const QString &spec, const QString &path)
{
    if (path.isEmpty()) {
        return targetError(spec, QStringLiteral("the path to kpg-worker is empty"));
    }
    if (hasControl(path)) {
        return targetError(spec, QStringLiteral("the path to kpg-worker contains a control character"));
    }
    if (path.startsWith(QLatin1Char('-'))) {
        return targetError(spec, QStringLiteral("the path to kpg-worker may not start with '-'"));
    }
    return path;
}

Result<Target> parseSsh(const QString &spec)
{
    const QString body = spec.mid(int(qstrlen("ssh://")));
    const qsizetype slash = body.indexOf(QLatin1Char('/'));
    Target t;
    t.kind = Target::Kind::Ssh;
    t.spec = spec;
    Result<Target> r = parseSshAuthority(spec, slash < 0 ? body : body.left(slash), t);
    if (!r) {
        return r;
    }
    t = *r;
    t.workerPath = QStringLiteral("kpg-worker");
    if (slash >= 0 && slash + 1 < body.size()) {
        // ssh://host/opt/kpg/bin/kpg-worker is the absolute path; ssh://host/~/x is under the remote home.
        QString path = body.mid(slash);
        if (path.startsWith(QLatin1String("/~/"))) {
            path = path.mid(1);
        }
        const Result<QString> p = checkWorkerPath(spec, path);
        if (!p) {
            return p.error();
        }
        t.workerPath = *p;
    }
    return t;
}

Result<Target> parseSlurm(const QString &spec)
{
    Target t;
    t.kind = Target::Kind::Slurm;
    t.spec = spec;
    t.workerPath = QStringLiteral("kpg-worker");
    static const QStringList keys{QStringLiteral("partition"), QStringLiteral("gpus"), QStringLiteral("time"),
                                  QStringLiteral("account"),   QStringLiteral("wait"), QStringLiteral("worker"),
                                  QStringLiteral("via")};
    const QString body = spec.mid(int(qstrlen("slurm:")));
    for (const QString &part : body.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const qsizetype eq = part.indexOf(QLatin1Char('='));
        const QString key = eq < 0 ? part : part.left(eq);
        const QString value = eq < 0 ? QString() : part.mid(eq + 1);
        if (!keys.contains(key)) {
            return targetError(
                spec,
                QStringLiteral("unknown Slurm setting '%1' (allowed: %2)").arg(key, keys.join(QStringLiteral(", "))));
        }
        if (value.isEmpty()) {
            return targetError(spec, QStringLiteral("the Slurm setting '%1' has no value (write %1=VALUE)").arg(key));
        }
        if (key == QLatin1String("partition") || key == QLatin1String("account")) {
            if (!nameRe().match(value).hasMatch()) {
                return targetError(
                    spec,
                    QStringLiteral("the %1 '%2' may hold letters, digits, '.', '_' and '-' only").arg(key, value));
            }
            (key == QLatin1String("partition") ? t.partition : t.account) = value;
        } else if (key == QLatin1String("gpus") || key == QLatin1String("wait")) {
            bool ok = false;
            const int n = value.toInt(&ok);
            const int most = key == QLatin1String("gpus") ? 64 : 86400;
            if (!ok || n < 0 || n > most) {
                return targetError(spec,
                                   QStringLiteral("%1=%2: expected a whole number from 0 to %3%4")
                                       .arg(key, value)
                                       .arg(most)
                                       .arg(key == QLatin1String("wait") ? QStringLiteral(" (seconds)") : QString()));
            }
            (key == QLatin1String("gpus") ? t.gpus : t.allocationWaitSeconds) = n;
        } else if (key == QLatin1String("time")) {
            // Slurm's forms: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS.
            static const QRegularExpression re(QStringLiteral("^(\\d+-\\d+(:\\d+){0,2}|\\d+(:\\d+){0,2})$"));
            if (!re.match(value).hasMatch()) {
                return targetError(spec, QStringLiteral("time=%1: expected Slurm's form: minutes, MM:SS, HH:MM:SS "
                                                        "or D-HH:MM:SS")
                                             .arg(value));
            }
            t.timeLimit = value;
        } else if (key == QLatin1String("worker")) {
            const Result<QString> p = checkWorkerPath(spec, value);
            if (!p) {
                return p.error();
            }
            t.workerPath = *p;
        } else { // via
            if (!value.startsWith(QLatin1String("ssh://")) || value.indexOf(QLatin1Char('/'), 6) >= 0) {
                return targetError(
                    spec, QStringLiteral("via=%1: expected the login node as ssh://[user@]host[:port]").arg(value));
            }
            Result<Target> r = parseSshAuthority(spec, value.mid(6), t);
            if (!r) {
                return r;
            }
            t = *r;
            t.viaSsh = true;
        }
    }
    return t;
}

QStringList sshCommand(const Target &t, const QString &remoteCommand)
{
    const QString ssh = qEnvironmentVariable("KPG_SSH", QStringLiteral("ssh"));
    // BatchMode: never a password prompt (nobody could answer it); -e none:
    // frames are binary, and "~." in them must not end the session;
    // ServerAlive: a dead link is noticed within a minute, not at TCP's pace.
    QStringList c{ssh,
                  QStringLiteral("-T"),
                  QStringLiteral("-e"),
                  QStringLiteral("none"),
                  QStringLiteral("-o"),
                  QStringLiteral("BatchMode=yes"),
                  QStringLiteral("-o"),
                  QStringLiteral("ConnectTimeout=15"),
                  QStringLiteral("-o"),
                  QStringLiteral("ServerAliveInterval=15"),
                  QStringLiteral("-o"),
                  QStringLiteral("ServerAliveCountMax=4")};
    const QString config = qEnvironmentVariable("KPG_SSH_CONFIG");
    if (!config.isEmpty()) {
        c << QStringLiteral("-F") << config;
    }
    if (t.port > 0) {
        c << QStringLiteral("-p") << QString::number(t.port);
    }
    if (!t.user.isEmpty()) {
        c << QStringLiteral("-l") << t.user;
    }
    c << QStringLiteral("--") << t.host << remoteCommand;
    return c;
}

QStringList srunArguments(const Target &t)
{
    QStringList a{QStringLiteral("--ntasks=1"), QStringLiteral("--nodes=1"), QStringLiteral("--unbuffered"),
                  QStringLiteral("--job-name=kpg-worker"),
                  QStringLiteral("--immediate=%1").arg(qMax(1, t.allocationWaitSeconds))};
    if (!t.partition.isEmpty()) {
        a << QStringLiteral("--partition=") + t.partition;
    }
    if (t.gpus > 0) {
        a << QStringLiteral("--gres=gpu:%1").arg(t.gpus);
    }
    if (!t.timeLimit.isEmpty()) {
        a << QStringLiteral("--time=") + t.timeLimit;
    }
    if (!t.account.isEmpty()) {
        a << QStringLiteral("--account=") + t.account;
    }
    return a;
}

QString lastLine(const QString &text)
{
    const QStringList lines = text.trimmed().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    return lines.isEmpty() ? QString() : lines.last().trimmed();
}

} // namespace

Result<Target> Target::parse(const QString &specIn)
{
    const QString spec = specIn.trimmed();
    if (spec.isEmpty() || spec == QLatin1String("local")) {
        Target t;
        t.spec = QStringLiteral("local");
        return t;
    }
    if (hasControl(spec)) {
        return targetError(spec, QStringLiteral("contains a control character"));
    }
    if (spec.startsWith(QLatin1String("ssh://"))) {
        return parseSsh(spec);
    }
    if (spec.startsWith(QLatin1String("slurm:"))) {
        return parseSlurm(spec);
    }
    return targetError(spec, QStringLiteral("expected 'local', ssh://[user@]host[:port][/path/to/kpg-worker] or "
                                            "slurm:[partition=P,gpus=N,time=T,account=A,wait=S,worker=PATH,via=ssh://"
                                            "login]"));
}

Result<Target> Target::fromEnvironment()
{
    Result<Target> t = parse(qEnvironmentVariable("KPG_TARGET"));
    if (!t) {
        Error e = t.error();
        e.message = QStringLiteral("KPG_TARGET: ") + e.message;
        return e;
    }
    return t;
}

QStringList Target::command() const
{
    if (kind == Kind::Ssh) {
        return sshCommand(*this, QStringLiteral("exec %1 --stdio").arg(shellWord(workerPath)));
    }
    if (kind == Kind::Slurm) {
        if (viaSsh) {
            QStringList words{QStringLiteral("exec"), QStringLiteral("srun")};
            for (const QString &a : srunArguments(*this)) {
                words << shellWord(a);
            }
            words << shellWord(workerPath) << QStringLiteral("--stdio");
            return sshCommand(*this, words.join(QLatin1Char(' ')));
        }
        return QStringList{qEnvironmentVariable("KPG_SRUN", QStringLiteral("srun"))} + srunArguments(*this) +
               QStringList{workerPath, QStringLiteral("--stdio")};
    }
    return {};
}

QStringList Target::compilerCommand() const
{
    // A Slurm target compiles on its login node (via=ssh://...), never on an allocated node.
    if (kind != Kind::Ssh && !(kind == Kind::Slurm && viaSsh)) {
        return {};
    }
    const qsizetype slash = workerPath.lastIndexOf(QLatin1Char('/'));
    const QString compiler =
        slash < 0 ? QStringLiteral("kpg-compiler") : workerPath.left(slash + 1) + QStringLiteral("kpg-compiler");
    // A private temporary folder for NVRTC there, removed when kpg-compiler ends: nothing stays on the
    // server. POSIX sh runs it whatever the login shell is; the path arrives as $1, quoted once.
    const QString script = QStringLiteral(
        "d=$(mktemp -d \"${TMPDIR:-/tmp}/kpg-compiler-XXXXXX\") || exit 1; TMPDIR=$d \"$1\" --serve --remote; "
        "s=$?; rm -rf \"$d\"; exit $s");
    return sshCommand(*this,
                      QStringLiteral("exec sh -c %1 kpg-compiler %2").arg(shellWord(script), shellWord(compiler)));
}

QString Target::explainFailure(const QString &stderrText, int exitCode, bool handshakeDone) const
{
    const QString name = displayName();
    const QString last = lastLine(stderrText);
    const bool throughSsh = kind == Kind::Ssh || viaSsh;
    const QString sshHost = host + (port > 0 ? QStringLiteral(":%1").arg(port) : QString());
    const auto has = [&stderrText](const char *s) {
        return stderrText.contains(QLatin1String(s), Qt::CaseInsensitive);
    };

    if (throughSsh) {
        if (has("Could not resolve hostname")) {
            return QStringLiteral("%1: host unreachable: the name '%2' is unknown (%3)").arg(name, host, last);
        }
        if (has("Connection refused") || has("No route to host") || has("Network is unreachable") ||
            has("Connection timed out") || has("Operation timed out")) {
            return QStringLiteral("%1: host unreachable: %2").arg(name, last);
        }
        if (has("Permission denied (")) {
            return QStringLiteral("%1: authentication refused by %2 (ssh runs with BatchMode, so it needs a key the "
                                  "server accepts, from the agent or ~/.ssh/config): %3")
                .arg(name, sshHost, last);
        }
        if (has("Host key verification failed") || has("REMOTE HOST IDENTIFICATION HAS CHANGED")) {
            return QStringLiteral("%1: the host key of %2 is not trusted (not in known_hosts, or changed); connect "
                                  "once with ssh to check and accept it: %3")
                .arg(name, sshHost, last);
        }
    }
    if (kind == Kind::Slurm) {
        if (has("Unable to allocate resources")) {
            if (has("busy") || has("immediate") || has("timeout") || has("timed out")) {
                return QStringLiteral("%1: the Slurm allocation did not start within %2 s: %3")
                    .arg(name)
                    .arg(allocationWaitSeconds)
                    .arg(last);
            }
            const qsizetype at = stderrText.indexOf(QLatin1String("Unable to allocate resources"));
            return QStringLiteral("%1: Slurm refused the allocation: %2")
                .arg(name, lastLine(stderrText.mid(at).section(QLatin1Char('\n'), 0, 0)));
        }
        if (has("DUE TO TIME LIMIT") || has("CANCELLED") || has("has been revoked") || has("Force Terminated")) {
            return QStringLiteral("%1: the Slurm allocation ended: %2").arg(name, last);
        }
        if (has("execve()") && (has("No such file") || has("Permission denied"))) {
            // slurmstepd's own line says why; srun's last line only gives the exit code.
            const qsizetype at = stderrText.indexOf(QLatin1String("execve()"));
            const qsizetype from = stderrText.lastIndexOf(QLatin1Char('\n'), at) + 1;
            return QStringLiteral("%1: kpg-worker was not found on the allocated node at '%2' (set worker=PATH): %3")
                .arg(name, workerPath, stderrText.mid(from).section(QLatin1Char('\n'), 0, 0).trimmed());
        }
        if (exitCode == 127 && viaSsh) {
            return QStringLiteral("%1: srun was not found on the login node %2: %3").arg(name, sshHost, last);
        }
    }
    if (kind == Kind::Ssh && !handshakeDone && (exitCode == 127 || exitCode == 126)) {
        return QStringLiteral("%1: the remote kpg-worker %2 at '%3' (install the bundle or the .deb there, and give "
                              "its path as ssh://host/path/to/kpg-worker): %4")
            .arg(name, exitCode == 127 ? QStringLiteral("is missing") : QStringLiteral("cannot be executed"),
                 workerPath, last);
    }
    if (throughSsh && exitCode == 255) {
        if (has("closed by remote host") || has("Broken pipe") || has("Connection reset") || has("not responding") ||
            has("Connection closed")) {
            return QStringLiteral("%1: the connection dropped (%2)").arg(name, last);
        }
        if (handshakeDone) {
            // ssh exits 255 without a word when the remote command was killed by a signal.
            return QStringLiteral("%1: kpg-worker crashed (killed by a signal)%2")
                .arg(name, last.isEmpty() ? QString() : QStringLiteral("; ssh said: ") + last);
        }
        return QStringLiteral("%1: ssh failed: %2").arg(name, last.isEmpty() ? QStringLiteral("exit code 255") : last);
    }
    return {};
}

} // namespace Kp
