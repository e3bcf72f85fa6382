#pragma once

namespace Kp {

/**
 * For bench_startup: "PROGRAM: startup: WORD" on stderr as a stage of a
 * program's start is reached, when KPG_STARTUP_TRACE is set (the parent
 * times the lines' arrival, so the stages need no clock of their own).
 * program: the program's name as it prints it ("kpg"); nothing when unset.
 */
void startupMark(const char *program, const char *word);

} // namespace Kp
