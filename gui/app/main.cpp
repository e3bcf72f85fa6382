// kernel-playground: the GUI.

#include "client/engineclient.h"
#include "editor/codeeditor.h"
#include "mainwindow.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDockWidget>
#include <QTimer>

#include <cstdio>

using namespace Kp;

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("kernel-playground"));
    QApplication::setApplicationDisplayName(QStringLiteral("Kernel Playground"));
    QApplication::setOrganizationName(QStringLiteral("KernelPlayground"));
    QApplication::setApplicationVersion(QStringLiteral(KPG_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Write CUDA C kernels and run them visually."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                        QStringLiteral("Render the window once it has settled, save it as a PNG "
                                                       "and exit."),
                                        QStringLiteral("file.png"));
    const QCommandLineOption preset(QStringLiteral("preset"), QStringLiteral("Open a preset (default vector_add)."),
                                    QStringLiteral("name"), QStringLiteral("vector_add"));
    const QCommandLineOption selectLines(QStringLiteral("select-lines"),
                                         QStringLiteral("Select source lines FIRST[-LAST] (shows their PTX)."),
                                         QStringLiteral("range"));
    const QCommandLineOption showDock(QStringLiteral("show"),
                                      QStringLiteral("Bring a panel to the front: problems, kernels, ptx or sass."),
                                      QStringLiteral("panel"));
    parser.addOption(showDock);
    parser.addOption(selectLines);
    parser.addOption(screenshot);
    parser.addOption(preset);
    parser.addPositionalArgument(QStringLiteral("file"), QStringLiteral("A CUDA source to open."),
                                 QStringLiteral("[file]"));
    parser.process(app); // prints usage and exits 1 on unknown options (Qt's convention for GUIs)

    EngineClient engine;
    MainWindow window(&engine);
    const QString name = parser.value(preset);
    const QString source = parser.positionalArguments().value(0, QStringLiteral(":/presets/%1/%1.cu").arg(name));
    if (const Status s = window.openSource(source); !s) {
        std::fprintf(stderr, "kernel-playground: %s\n", qPrintable(s.error().message));
        return 65;
    }
    window.show();
    window.refreshDeviceStatus();
    if (parser.isSet(selectLines)) {
        const QStringList r = parser.value(selectLines).split(QLatin1Char('-'));
        const int first = r.value(0).toInt();
        const int last = r.value(1, r.value(0)).toInt();
        QObject::connect(&window, &MainWindow::compileFinished, &window,
                         [&window, first, last] { window.editor()->setSelection(first - 1, 0, last, 0); });
    }

    const bool waitForSass = parser.value(showDock) == QLatin1String("sass");
    if (parser.isSet(showDock)) {
        const QString want = parser.value(showDock) + QStringLiteral("Dock");
        QDockWidget *dock = window.findChild<QDockWidget *>(want);
        if (!dock) {
            std::fprintf(stderr, "kernel-playground: --show: no panel '%s' (problems, kernels, ptx, sass)\n",
                         qPrintable(parser.value(showDock)));
            return 64;
        }
        dock->show();
        dock->raise();
    }

    if (parser.isSet(screenshot)) {
        const QString path = parser.value(screenshot);
        int rc = 0;
        auto shoot = [&] {
            // Let layout and the lexer's styling finish before grabbing.
            QTimer::singleShot(300, &window, [&] {
                if (!window.grab().save(path)) {
                    std::fprintf(stderr, "kernel-playground: cannot write screenshot %s\n", qPrintable(path));
                    rc = 73;
                }
                app.exit(rc);
            });
        };
        // Settled: the device status is known and the first compile is shown.
        bool compiled = false;
        bool shot = false;
        auto maybeShoot = [&] {
            if (!shot && compiled && window.deviceStatusKnown()) {
                shot = true;
                shoot();
            }
        };
        QObject::connect(&window, &MainWindow::deviceStatusChanged, &window, maybeShoot);
        // With the SASS panel in front, wait for the disassembler as well.
        QObject::connect(&window, waitForSass ? &MainWindow::sassFinished : &MainWindow::compileFinished, &window, [&] {
            compiled = true;
            maybeShoot();
        });
        // A worker that never answers must not keep a screenshot run alive.
        QTimer::singleShot(30000, &window, [&] {
            if (!shot) {
                shot = true;
                shoot();
            }
        });
        return app.exec();
    }
    return app.exec();
}
