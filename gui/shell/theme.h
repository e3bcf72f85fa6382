#pragma once

#include <QString>
#include <QStringList>

namespace Kp {

/**
 * The application's colour theme: "system" (the platform's palette), "light"
 * or "dark" (Fusion with a fixed palette, so it looks the same on every
 * desktop). Widgets that colour code (the editor, the PTX views) follow the
 * palette change. GUI thread only.
 */
void applyTheme(const QString &theme);
QString currentTheme();
QStringList themeNames();

} // namespace Kp
