#pragma once

#include <QString>

namespace Kp {

/**
 * Text from user data (a project's title, a comparison's device names, a
 * student's folder, a kernel's name, a diagnostic) made safe to print on a
 * terminal: every control and format character (ESC, CR, BEL, U+202E and the
 * like) becomes '?', so a file cannot move the cursor, recolour the terminal
 * or hide text. multiLine keeps line feeds (and tabs are kept either way).
 * Pure function; any thread.
 */
QString printable(const QString &text, bool multiLine = false);

} // namespace Kp
