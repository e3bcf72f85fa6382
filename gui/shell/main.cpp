// kernel-playground: the GUI.

#include "client/engineclient.h"
#include "client/remotecompile.h"
#include "core/startuptrace.h"
#include "docks.h"
#include "editor/codeeditor.h"
#include "exitcodes.h"
#include "mainwindow.h"
#include "panels/sweep/sweeppanel.h"
#include "sweep/sweep.h"
#include "theme.h"
#include "workbench/selection.h"
#include "workbench/workbench.h"

#include <QApplication>
#include <QBuffer>
#include <QCommandLineParser>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QIcon>
#include <QImageReader>
#include <QMessageBox>
#include <QRegularExpression>
#include <QSettings>
#include <QThreadPool>
#include <QTimer>

#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>

using namespace Kp;

namespace {
const QStringList kViews = {QStringLiteral("grid"), QStringLiteral("image"), QStringLiteral("diff")};

int usageError(const QString &message)
{
    std::fprintf(stderr, "kernel-playground: %s\n", qPrintable(message));
    return Exit::Usage;
}

QStringList presetNames()
{
    return QDir(QStringLiteral(":/presets")).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
}

/** For bench_startup: "kernel-playground: startup: WORD" (core/startuptrace.h). */
void startupMark(const char *word)
{
    Kp::startupMark("kernel-playground", word);
}

/**
 * Marks "painted" at target's first paint, "diagnostics" after the first
 * compile and "panels" when the last panel is built; with quit, exits after
 * the last of the three.
 */
void traceStartup(QWidget *target, MainWindow *window, bool quit)
{
    struct FirstPaint : QObject
    {
        using QObject::QObject;
        bool eventFilter(QObject *watched, QEvent *event) override
        {
            if (event->type() == QEvent::Paint) {
                startupMark("painted");
                watched->removeEventFilter(this);
            }
            return false;
        }
    };
    target->installEventFilter(new FirstPaint(target));
    auto left = std::make_shared<int>(2); // the diagnostics and the panels
    const auto reached = [left, quit](const char *word) {
        startupMark(word);
        if (--*left == 0 && quit) {
            QCoreApplication::exit(0);
        }
    };
    auto compiled = std::make_shared<bool>(false);
    QObject::connect(window, &MainWindow::compileFinished, window, [compiled, reached] {
        if (!*compiled) {
            *compiled = true;
            reached("diagnostics");
        }
    });
    if (window->docks().allBuiltNow()) {
        reached("panels"); // a scripted start built them before the window showed
    } else {
        QObject::connect(
            &window->docks(), &Docks::allBuilt, window, [reached] { reached("panels"); }, Qt::SingleShotConnection);
    }
}

} // namespace

int main(int argc, char **argv)
{
    // --version answers without a display, as the other programs' do: QApplication
    // would first need one (or QT_QPA_PLATFORM=offscreen).
    for (int i = 1; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
        if (std::strcmp(argv[i], "--version") == 0 || std::strcmp(argv[i], "-v") == 0) {
            std::printf("kernel-playground %s\n", KPG_VERSION);
            return 0;
        }
    }
    startupMark("main");
    QApplication app(argc, argv);
    startupMark("application");
    QApplication::setApplicationName(QStringLiteral("kernel-playground"));
    QApplication::setApplicationDisplayName(QStringLiteral("Kernel Playground"));
    QApplication::setOrganizationName(QStringLiteral("KernelPlayground"));
    QApplication::setApplicationVersion(QStringLiteral(KPG_VERSION));
    // The desktop entry and icon installed from resources/ (Wayland matches the window by this name).
    QGuiApplication::setDesktopFileName(QStringLiteral(KPG_APP_ID));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Write CUDA C kernels and run them visually."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                        QStringLiteral("Render the window once it has settled, save it as a PNG "
                                                       "and exit."),
                                        QStringLiteral("file.png"));
    const QCommandLineOption preset(QStringLiteral("preset"),
                                    QStringLiteral("Open a preset: %1 (default: the last project, else the start page "
                                                   "with the presets gallery).")
                                        .arg(presetNames().join(QStringLiteral(", "))),
                                    QStringLiteral("name"), QStringLiteral("vector_add"));
    const QCommandLineOption runOnce(QStringLiteral("run"),
                                     QStringLiteral("Run the project once it has compiled (a screenshot then waits "
                                                    "for the run)."));
    const QCommandLineOption echoLog(QStringLiteral("echo-log"),
                                     QStringLiteral("Also write every line of the Log panel to standard error, "
                                                    "as it is logged (for scripted runs and bug reports)."));
    parser.addOption(echoLog);
    const QCommandLineOption inspect(QStringLiteral("inspect"),
                                     QStringLiteral("Show this buffer in the inspector: NAME, NAME:image or "
                                                    "NAME:diff (against its contents before the run)."),
                                     QStringLiteral("buffer[:view]"));
    const QCommandLineOption hover(QStringLiteral("hover"),
                                   QStringLiteral("Hover pixel X,Y of the image view (with --inspect NAME:image)."),
                                   QStringLiteral("x,y"));
    parser.addOption(hover);
    const QCommandLineOption theme(QStringLiteral("theme"),
                                   QStringLiteral("Colour theme: %1.").arg(themeNames().join(QStringLiteral(", "))),
                                   QStringLiteral("name"));
    parser.addOption(theme);
    parser.addOption(runOnce);
    const QCommandLineOption checkMemoryOnce(
        QStringLiteral("check-memory"),
        QStringLiteral("Check the project's memory once it has compiled, as Build > Check Memory does: memcheck, "
                       "racecheck, racecheck:hazards, initcheck or synccheck (a screenshot then waits for the check)."),
        QStringLiteral("tool"));
    parser.addOption(checkMemoryOnce);
    const QCommandLineOption analyzeAccessOnce(
        QStringLiteral("analyze-access"),
        QStringLiteral("Record the selected step's memory accesses once the project has compiled, as Build > Analyze "
                       "Memory Access does (a screenshot then waits for the report)."));
    parser.addOption(analyzeAccessOnce);
    parser.addOption(inspect);
    const QCommandLineOption selectLines(QStringLiteral("select-lines"),
                                         QStringLiteral("Select source lines FIRST[-LAST] (shows their PTX)."),
                                         QStringLiteral("range"));
    const QCommandLineOption showDock(
        QStringLiteral("show"),
        QStringLiteral("Bring a panel to the front: %1.").arg(Docks::names().join(QStringLiteral(", "))),
        QStringLiteral("panel"));
    parser.addOption(showDock);
    const QCommandLineOption sweepAxis(QStringLiteral("sweep"),
                                       QStringLiteral("Run a sweep in the Sweep panel once the project has compiled, "
                                                      "over this axis (repeatable; as kpg sweep --axis). A screenshot "
                                                      "then waits for the sweep."),
                                       QStringLiteral("axis"));
    const QCommandLineOption sweepPlot(QStringLiteral("sweep-plot"),
                                       QStringLiteral("The Sweep panel's plot: time, throughput, heatmap or roofline."),
                                       QStringLiteral("kind"));
    parser.addOption(sweepAxis);
    parser.addOption(sweepPlot);
    parser.addOption(selectLines);
    parser.addOption(screenshot);
    parser.addOption(preset);
    parser.addPositionalArgument(QStringLiteral("file"),
                                 QStringLiteral("A project (.kpg) or a CUDA kernel source (.cu, .cuh) to open."),
                                 QStringLiteral("[file]"));
    parser.process(app); // prints usage and exits 1 on unknown options (Qt's convention for GUIs)
    // Qt loads every image-format plugin (each a library, with its own
    // libraries) at the first image it reads by its suffix: the menu bar's
    // and the docks' standard icons, before the first paint. A pool thread
    // loads them meanwhile (QImageReader is thread-safe; the GUI thread waits
    // only for what is left when it gets there). After the command line:
    // --help and a bad option end the process with exit(), which must not
    // find this thread loading a library (tst_window caught a crash).
    QThreadPool::globalInstance()->start([] {
        QBuffer nothing;
        QImageReader probe(&nothing, "png");
        (void)probe.canRead();
    });

    // Every value is checked before a window opens: a typo is an error that
    // lists what is allowed, never an option silently ignored.
    if (parser.positionalArguments().size() > 1) {
        return usageError(QStringLiteral("one file at a time; got %1").arg(parser.positionalArguments().size()));
    }
    if (parser.isSet(theme) && !themeNames().contains(parser.value(theme))) {
        return usageError(QStringLiteral("--theme: unknown theme '%1'; allowed: %2")
                              .arg(parser.value(theme), themeNames().join(QStringLiteral(", "))));
    }
    Sanitizer::Tool checkTool = Sanitizer::Tool::Memcheck;
    bool checkHazards = false;
    if (parser.isSet(checkMemoryOnce)) {
        QString name = parser.value(checkMemoryOnce);
        if (name == QLatin1String("racecheck:hazards")) {
            name = QStringLiteral("racecheck");
            checkHazards = true;
        }
        const Result<Sanitizer::Tool> tool = Sanitizer::parseTool(name);
        if (!tool) {
            return usageError(QStringLiteral("--check-memory: %1 (or racecheck:hazards for the thread pairs)")
                                  .arg(tool.error().message));
        }
        checkTool = *tool;
    }
    if (parser.isSet(showDock) && !Docks::names().contains(parser.value(showDock))) {
        return usageError(QStringLiteral("--show: no panel '%1'; panels: %2")
                              .arg(parser.value(showDock), Docks::names().join(QStringLiteral(", "))));
    }
    const QStringList plotKinds{QStringLiteral("time"), QStringLiteral("throughput"), QStringLiteral("heatmap"),
                                QStringLiteral("roofline")};
    if (parser.isSet(sweepPlot) && !plotKinds.contains(parser.value(sweepPlot))) {
        return usageError(QStringLiteral("--sweep-plot: unknown plot '%1'; plots: %2")
                              .arg(parser.value(sweepPlot), plotKinds.join(QStringLiteral(", "))));
    }
    for (const QString &axis : parser.values(sweepAxis)) {
        if (const Result<SweepAxis> a = parseSweepAxis(axis); !a) {
            return usageError(QStringLiteral("--sweep: ") + a.error().message);
        }
    }
    if (parser.isSet(preset) && !presetNames().contains(parser.value(preset))) {
        return usageError(QStringLiteral("--preset: no preset '%1'; presets: %2")
                              .arg(parser.value(preset), presetNames().join(QStringLiteral(", "))));
    }
    if (parser.isSet(preset) && !parser.positionalArguments().isEmpty()) {
        return usageError(QStringLiteral("--preset and a file both name what to open; give one"));
    }
    if (parser.isSet(inspect) && !kViews.contains(parser.value(inspect).section(QLatin1Char(':'), 1, 1).isEmpty()
                                                      ? QStringLiteral("grid")
                                                      : parser.value(inspect).section(QLatin1Char(':'), 1))) {
        return usageError(
            QStringLiteral("--inspect: unknown view '%1'; views: %2")
                .arg(parser.value(inspect).section(QLatin1Char(':'), 1), kViews.join(QStringLiteral(", "))));
    }
    if (parser.isSet(hover) &&
        !QRegularExpression(QStringLiteral(R"(^\d+,\d+$)")).match(parser.value(hover)).hasMatch()) {
        return usageError(
            QStringLiteral("--hover: expected X,Y (two non-negative integers), got '%1'").arg(parser.value(hover)));
    }
    if (parser.isSet(selectLines) &&
        !QRegularExpression(QStringLiteral(R"(^[1-9]\d*(-[1-9]\d*)?$)")).match(parser.value(selectLines)).hasMatch()) {
        return usageError(QStringLiteral("--select-lines: expected FIRST or FIRST-LAST (line numbers from 1), got '%1'")
                              .arg(parser.value(selectLines)));
    }

    applyTheme(parser.isSet(theme) ? parser.value(theme) : QSettings().value(QStringLiteral("theme")).toString());
    RemoteCompiler::install(); // without NVRTC here, an ssh target compiles (docs/remote.md)
    EngineClient engine;
    MainWindow window(&engine);
    // A scripted start (a screenshot, a run, a panel or buffer asked for)
    // has every panel from the start; an interactive one builds those behind
    // other tabs after its first paint (shell/docks.h).
    for (const QCommandLineOption *o : {&screenshot, &runOnce, &checkMemoryOnce, &analyzeAccessOnce, &inspect, &hover,
                                        &selectLines, &showDock, &sweepAxis, &sweepPlot}) {
        if (parser.isSet(*o)) {
            window.docks().buildAll();
            break;
        }
    }
    startupMark("window");
    if (parser.isSet(echoLog)) {
        // What the Log already holds (a panel built with the window may have said something), then what comes.
        for (const Workbench::LogLine &line : window.workbench().logBacklog()) {
            std::fprintf(stderr, "%s\n", qPrintable(line.text));
        }
        QObject::connect(&window.workbench(), &Workbench::message, &window, [](const QString &line) {
            std::fprintf(stderr, "%s\n", qPrintable(line));
            std::fflush(stderr);
        });
    }
    const QString name = parser.value(preset);
    QString source = parser.positionalArguments().value(0);
    if (!source.isEmpty()) {
        // Relative to the current folder; kept absolute, so the recent list
        // and the next start's "last project" find it from anywhere.
        source = QFileInfo(source).absoluteFilePath();
    }
    if (source.isEmpty()) {
        // The last project, unless a preset is asked for or it is gone; else the start page.
        const QString last = QSettings().value(QStringLiteral("lastProject")).toString();
        source = !parser.isSet(preset) && !last.isEmpty() && QFileInfo::exists(last) ? last
                 : parser.isSet(preset) ? QStringLiteral(":/presets/%1/%1.kpg").arg(name)
                                        : QString();
    }
    if (const Status s = source.isEmpty() ? Status(Unit{}) : window.openSource(source); !s) {
        std::fprintf(stderr, "kernel-playground: %s\n", qPrintable(s.error().message));
        // Opened from a file manager (a double-click on a .kpg), nobody reads
        // stderr: say it in a window too, unless there is no screen to show one.
        const QString platform = QGuiApplication::platformName();
        if (!parser.isSet(screenshot) && platform != QLatin1String("offscreen") &&
            platform != QLatin1String("minimal")) {
            QMessageBox::critical(nullptr, QStringLiteral("Kernel Playground"), s.error().message);
        }
        return Exit::BadInput;
    }
    startupMark("opened");
    if (parser.isSet(inspect)) {
        const QString buffer = parser.value(inspect).section(QLatin1Char(':'), 0, 0);
        if (!window.project().buffer(buffer)) {
            QStringList names;
            for (const BufferSpec &b : window.project().buffers) {
                names << b.name;
            }
            return usageError(QStringLiteral("--inspect: no buffer '%1' in %2; buffers: %3")
                                  .arg(buffer, QFileInfo(source).fileName(),
                                       names.isEmpty() ? QStringLiteral("none") : names.join(QStringLiteral(", "))));
        }
    }
    // The GPU is looked for once the window has painted: its worker process
    // would compete with the first paint for the processor.
    QObject::connect(&window, &MainWindow::firstPainted, &window, &MainWindow::refreshDeviceStatus);
    // The icon after the first paint too: an SVG icon loads the SVG icon
    // engine plugin. Desktops show it from the installed desktop entry meanwhile.
    QObject::connect(&window, &MainWindow::firstPainted, &window,
                     [] { QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/kernel-playground.svg"))); });
    window.show();
    startupMark("shown");
    if (const QByteArray trace = qgetenv("KPG_STARTUP_TRACE"); !trace.isEmpty()) {
        // For bench_startup: one line on stderr when the editor first paints
        // and when the first compile's diagnostics are shown (the parent
        // times the lines' arrival); "quit" ends the program after the second.
        traceStartup(window.editor()->viewport(), &window, trace == "quit");
    }
    if (parser.isSet(selectLines)) {
        const QStringList r = parser.value(selectLines).split(QLatin1Char('-'));
        const int first = r.value(0).toInt();
        const int last = r.value(1, r.value(0)).toInt();
        QObject::connect(&window, &MainWindow::compileFinished, &window,
                         [&window, first, last] { window.editor()->setSelection(first - 1, 0, last, 0); });
    }

    const bool waitForSass = parser.value(showDock) == QLatin1String("sass");
    const bool waitForSweep = parser.isSet(sweepAxis);
    if (parser.isSet(sweepPlot)) {
        window.sweepPanel()->setPlotKind(parser.value(sweepPlot));
    }
    // --sweep, --run and --check-memory act once, after the first compile with the GPU known.
    const auto onceReady = [&window](std::function<void()> action) {
        auto started = std::make_shared<bool>(false);
        auto maybe = [&window, started, action] {
            if (!*started && window.deviceStatusKnown() && window.lastCompile().ok) {
                *started = true;
                action();
            }
        };
        QObject::connect(&window, &MainWindow::compileFinished, &window, maybe);
        QObject::connect(&window, &MainWindow::deviceStatusChanged, &window, maybe);
    };
    if (waitForSweep) {
        window.sweepPanel()->setAxes(parser.values(sweepAxis), false);
        onceReady([&window] {
            if (const Status s = window.sweepPanel()->start(); !s) {
                std::fprintf(stderr, "kernel-playground: --sweep: %s\n", qPrintable(s.error().message));
            }
        });
    }
    const bool waitForRun = parser.isSet(runOnce);
    if (waitForRun) {
        onceReady([&window] { window.runNow(); });
    }
    const bool waitForCheck = parser.isSet(checkMemoryOnce);
    if (waitForCheck) {
        onceReady([&window, checkTool, checkHazards] { window.checkMemory(checkTool, checkHazards); });
    }
    const bool waitForAccess = parser.isSet(analyzeAccessOnce);
    if (waitForAccess) {
        onceReady([&window] {
            if (!window.workbench().analyzeAccess(window.workbench().selection().step())) {
                std::fprintf(stderr, "kernel-playground: --analyze-access: the analysis could not start\n");
            }
        });
    }
    if (parser.isSet(inspect)) {
        const QStringList parts = parser.value(inspect).split(QLatin1Char(':'));
        const QStringList at = parser.value(hover).split(QLatin1Char(','));
        const bool hovering = at.size() == 2;
        QObject::connect(&window, &MainWindow::runFinished, &window, [&window, parts, at, hovering] {
            window.inspectBuffer(parts.value(0), parts.value(1, QStringLiteral("grid")));
            if (hovering) {
                // After the layout has given the view its size.
                QTimer::singleShot(100, &window, [&window, at] { window.hoverPixel(at[0].toInt(), at[1].toInt()); });
            }
        });
        window.inspectBuffer(parts.value(0), parts.value(1, QStringLiteral("grid")));
    }
    if (parser.value(showDock) == QLatin1String("timeline")) {
        // The Results panel's Timeline tab (docs/streams.md).
        QMetaObject::invokeMethod(window.docks().panel(PanelId::Results), "showTimeline");
    }
    if (parser.isSet(showDock)) {
        const QString want =
            (parser.value(showDock) == QLatin1String("timeline") ? QStringLiteral("results") : parser.value(showDock)) +
            QStringLiteral("Dock");
        QDockWidget *dock = window.findChild<QDockWidget *>(want);
        if (!dock) {
            return usageError(QStringLiteral("--show: no panel '%1'").arg(parser.value(showDock)));
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
                // The panel asked for stays in front: a run's failed checks raise theirs meanwhile.
                if (parser.isSet(showDock) && parser.value(showDock) != QLatin1String("timeline")) {
                    if (auto *dock = window.findChild<QDockWidget *>(parser.value(showDock) + QStringLiteral("Dock"))) {
                        dock->raise();
                    }
                }
                if (!window.grab().save(path)) {
                    std::fprintf(stderr, "kernel-playground: cannot write screenshot %s\n", qPrintable(path));
                    rc = Exit::CannotWrite;
                }
                app.exit(rc);
            });
        };
        // Settled: the device status is known and the first compile is shown.
        bool compiled = source.isEmpty(); // the start page has nothing to compile
        bool shot = false;
        auto maybeShoot = [&] {
            if (!shot && compiled && window.deviceStatusKnown()) {
                shot = true;
                shoot();
            }
        };
        QObject::connect(&window, &MainWindow::deviceStatusChanged, &window, maybeShoot);
        // With the SASS panel in front, wait for the disassembler as well.
        // After a run, once its checks are judged (or it has none, or it failed).
        if (waitForSweep) {
            QObject::connect(window.sweepPanel(), &SweepPanel::sweepFinished, &window, [&] {
                compiled = true;
                maybeShoot();
            });
        }
        if (waitForAccess) {
            QObject::connect(&window.workbench(), &Workbench::accessFinished, &window, [&] {
                compiled = true;
                maybeShoot();
            });
        }
        QObject::connect(&window,
                         waitForSweep || waitForAccess ? &MainWindow::compileFinished // then the sweep or access, above
                         : waitForCheck                ? &MainWindow::memoryCheckFinished
                         : waitForRun                  ? &MainWindow::checksSettled
                         : waitForSass                 ? &MainWindow::sassFinished
                                                       : &MainWindow::compileFinished,
                         &window, [&] {
                             if (!waitForSweep && !waitForAccess) {
                                 compiled = true;
                                 maybeShoot();
                             }
                         });
        // A worker that never answers must not keep a screenshot run alive.
        QTimer::singleShot(waitForSweep                    ? 540000
                           : waitForCheck || waitForAccess ? 300000
                           : waitForRun                    ? 120000
                                                           : 30000,
                           &window, [&] {
                               if (!shot) {
                                   shot = true;
                                   shoot();
                               }
                           });
        return app.exec();
    }
    return app.exec();
}
