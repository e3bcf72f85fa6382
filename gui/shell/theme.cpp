#include "theme.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

namespace Kp {

namespace {
QString g_theme = QStringLiteral("system");
QPalette g_systemPalette;
bool g_haveSystemPalette = false;
QString g_systemStyle;

QPalette darkPalette()
{
    QPalette p;
    const QColor window(0x2b2d31), base(0x1e1f22), text(0xdfe1e5), disabled(0x7f848e), highlight(0x2f65ca);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, base);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xff6b6b));
    p.setColor(QPalette::Highlight, highlight);
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x58a6ff));
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText}) {
        p.setColor(QPalette::Disabled, role, disabled);
    }
    return p;
}
} // namespace

QStringList themeNames()
{
    return {QStringLiteral("system"), QStringLiteral("light"), QStringLiteral("dark")};
}

QString currentTheme()
{
    return g_theme;
}

void applyTheme(const QString &theme)
{
    if (!g_haveSystemPalette) {
        g_systemPalette = QApplication::palette();
        g_systemStyle = QApplication::style()->name();
        g_haveSystemPalette = true;
    }
    g_theme = themeNames().contains(theme) ? theme : QStringLiteral("system");
    if (g_theme == QLatin1String("system")) {
        QApplication::setStyle(QStyleFactory::create(g_systemStyle));
        QApplication::setPalette(g_systemPalette);
        return;
    }
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QApplication::setPalette(g_theme == QLatin1String("dark") ? darkPalette()
                                                              : QApplication::style()->standardPalette());
}

} // namespace Kp
