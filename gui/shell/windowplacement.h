#pragma once

#include <QRect>
#include <QSize>

#include <optional>

class QWidget;

namespace Kp {

/**
 * Where the main window goes on a screen: pure geometry, so the rules are
 * tested on made-up screens (tst_window, tst_mainwindow) and the window
 * only applies them.
 */
namespace WindowPlacement {

/** The first window's size on a screen with this available geometry: at most 90 % of it, at most 1600 x 960. */
QSize initialSize(const QRect &available);

/**
 * Where the first window goes: initialSize() grown to what the docks
 * need (minimum), centred, and moved so that it stays inside available
 * where it fits (a window raised to its minimum width after being
 * centred at 90 % ran off the right edge of a 1024-pixel screen);
 * where it does not fit, its top-left corner stays on screen.
 */
QRect initialGeometry(const QRect &available, const QSize &minimum);

/** g moved inside available where it fits; where it does not, its top-left corner on it. */
QRect movedInside(QRect g, const QRect &available);

/**
 * A restored geometry brought onto this screen: one saved on a larger
 * screen (an external monitor, then the laptop alone) would put the
 * status bar and the right docks off this one. Shrunk to initialSize()
 * but not below minimum, then moved inside; unchanged when it fits.
 */
QRect keptOnScreen(const QRect &g, const QRect &available, const QSize &minimum);

/** The available geometry of the screen w is on (the primary one before it is shown); none without a screen. */
std::optional<QRect> availableFor(const QWidget *w);

} // namespace WindowPlacement
} // namespace Kp
