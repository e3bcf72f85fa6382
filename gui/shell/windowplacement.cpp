#include "windowplacement.h"

#include <QGuiApplication>
#include <QScreen>
#include <QWidget>

#include <algorithm>

namespace Kp::WindowPlacement {

QSize initialSize(const QRect &available)
{
    return {qMin(1600, available.width() * 9 / 10), qMin(960, available.height() * 9 / 10)};
}

QRect movedInside(QRect g, const QRect &available)
{
    g.moveLeft(std::max(available.left(), std::min(g.left(), available.right() + 1 - g.width())));
    g.moveTop(std::max(available.top(), std::min(g.top(), available.bottom() + 1 - g.height())));
    return g;
}

QRect initialGeometry(const QRect &available, const QSize &minimum)
{
    QRect g(QPoint(), initialSize(available).expandedTo(minimum));
    g.moveCenter(available.center());
    return movedInside(g, available);
}

QRect keptOnScreen(const QRect &g, const QRect &available, const QSize &minimum)
{
    if (available.contains(g)) {
        return g;
    }
    // Not below what the docks need (a screen narrower than that gets the
    // top-left corner on screen, the rest as the window manager allows).
    QRect out = g;
    out.setSize(g.size().boundedTo(initialSize(available)).expandedTo(minimum));
    return movedInside(out, available);
}

std::optional<QRect> availableFor(const QWidget *w)
{
    const QScreen *s = w && w->screen() ? w->screen() : QGuiApplication::primaryScreen();
    return s ? std::optional<QRect>(s->availableGeometry()) : std::nullopt;
}

} // namespace Kp::WindowPlacement
