// kpg-render-icon: renders the application icon's SVG to the PNG sizes the
// freedesktop icon theme and the bundle install, at build time, so the PNGs
// never drift from the one committed drawing.
//
//   kpg-render-icon ICON.svg OUTDIR SIZE...   writes OUTDIR/SIZExSIZE/NAME.png

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>

#include <cstdio>

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv); // raster painting of paths needs no window system
    const QStringList args = QCoreApplication::arguments();
    if (args.size() < 4) {
        std::fprintf(stderr, "usage: kpg-render-icon ICON.svg OUTDIR SIZE...\n");
        return 64;
    }
    QSvgRenderer svg(args.at(1));
    if (!svg.isValid()) {
        std::fprintf(stderr, "kpg-render-icon: %s is not a valid SVG\n", qPrintable(args.at(1)));
        return 65;
    }
    const QString name = QFileInfo(args.at(1)).completeBaseName();
    for (qsizetype i = 3; i < args.size(); ++i) {
        bool ok = false;
        const int size = args.at(i).toInt(&ok);
        if (!ok || size < 8 || size > 4096) {
            std::fprintf(stderr, "kpg-render-icon: size '%s' is not a number from 8 to 4096\n", qPrintable(args.at(i)));
            return 64;
        }
        const QString dir = QStringLiteral("%1/%2x%2").arg(args.at(2)).arg(size);
        QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::transparent);
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        svg.render(&painter);
        painter.end();
        const QString out = dir + QLatin1Char('/') + name + QStringLiteral(".png");
        if (!QDir().mkpath(dir) || !image.save(out, "PNG")) {
            std::fprintf(stderr, "kpg-render-icon: cannot write %s\n", qPrintable(out));
            return 74;
        }
    }
    return 0;
}
