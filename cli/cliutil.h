#pragma once

#include "core/printable.h"
#include "exitcodes.h"

#include <QString>
#include <QTextStream>

namespace Kp::Cli {

inline QTextStream &out()
{
    static QTextStream s(stdout);
    return s;
}

inline QTextStream &err()
{
    static QTextStream s(stderr);
    return s;
}

/** Prints "kpg: message" (control characters of user data replaced) and the help hint; returns the usage exit code. */
inline int usageError(const QString &message)
{
    err() << "kpg: " << printable(message) << "\n"
          << "Run 'kpg --help' for usage.\n";
    err().flush();
    return Exit::Usage;
}

/** kpg run PROJECT.kpg ... (cli/run.cpp). */
int runCommand(const QStringList &args);

/** kpg check PROJECT.kpg ... (cli/check.cpp). */
int checkCommand(const QStringList &args);

/** kpg compare A.json B.json ... (cli/compare.cpp). */
int compareCommand(const QStringList &args);

/** kpg sweep PROJECT.kpg --axis ... (cli/sweep.cpp). */
int sweepCommand(const QStringList &args);

/** kpg grade LAB --submissions DIR ... (cli/grade.cpp). */
int gradeCommand(const QStringList &args);

/** kpg lab export-starter LAB OUTDIR: the students' copy of a lab (cli/grade.cpp). */
int labCommand(const QStringList &args);
/** kpg export PROJECT.kpg --to TARGET ... (cli/export.cpp). */
int exportCommand(const QStringList &args);

/** kpg access PROJECT.kpg [--step N] ...: the memory-access map of one launch (cli/access.cpp). */
int accessCommand(const QStringList &args);

} // namespace Kp::Cli
