// The window's menus, keyboard shortcuts, About and Documentation: MainWindow's,
// kept apart from the window's construction (mainwindow.cpp).

#include "mainwindow.h"

#include "cuda/nvrtcapi.h"
#include "devicestatus.h"
#include "docks.h"
#include "editor/codeeditor.h"
#include "editor/findbar.h"
#include "exportdialog.h"
#include "statusbar.h"
#include "theme.h"
#include "workbench/devices.h"
#include "workbench/projectdocument.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QDesktopServices>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QHeaderView>
#include <QInputDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QTableWidget>
#include <QUndoStack>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>
#include <tuple>

namespace Kp {

void MainWindow::buildMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&New Project"), this, &MainWindow::newProject)->setShortcut(QKeySequence::New);
    file->addAction(tr("New from &Preset…"), this, &MainWindow::newFromPreset);
    file->addAction(tr("&Open…"), this, &MainWindow::openFileDialog)->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    file->addAction(tr("&Save"), this, &MainWindow::saveProject)->setShortcut(QKeySequence::Save);
    file->addAction(tr("Save &As…"), this, &MainWindow::saveProjectAs)->setShortcut(QKeySequence::SaveAs);
    QAction *exportAction = file->addAction(tr("&Export as Host Program…"), this, [this] {
        ExportDialog dialog(*m_wb, this);
        dialog.exec();
    });
    exportAction->setObjectName(QStringLiteral("exportAction"));
    exportAction->setStatusTip(tr("Write the project as the PyCUDA, CuPy, cuda-python or CUDA C++ program a user "
                                  "would write, with its inputs and checks"));
    file->addSeparator();
    file->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows)->setShortcut(QKeySequence::Quit);

    // Undo and Redo act on the editor's text while it has the focus, and on
    // the project's edits (launch, buffers, scalars, timing) elsewhere: each
    // keeps its own history, as in any IDE with text and property panels.
    QMenu *edit = menuBar()->addMenu(tr("&Edit"));
    QUndoStack *stack = document()->undoStack();
    QAction *undo = edit->addAction(tr("&Undo"));
    undo->setObjectName(QStringLiteral("undoAction"));
    undo->setShortcut(QKeySequence::Undo);
    QAction *redo = edit->addAction(tr("&Redo"));
    redo->setObjectName(QStringLiteral("redoAction"));
    // Ctrl+Y and Ctrl+Shift+Z both redo, whatever the platform's convention.
    redo->setShortcuts({QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)});
    const auto editorActive = [this] { return m_editor->hasFocus(); };
    connect(undo, &QAction::triggered, this, [this, stack, editorActive] {
        if (editorActive()) {
            m_editor->undo();
        } else {
            stack->undo();
        }
    });
    connect(redo, &QAction::triggered, this, [this, stack, editorActive] {
        if (editorActive()) {
            m_editor->redo();
        } else {
            stack->redo();
        }
    });
    // The menu says what it would undo before it opens.
    connect(edit, &QMenu::aboutToShow, this, [this, stack, undo, redo, editorActive] {
        const bool inEditor = editorActive();
        undo->setText(inEditor ? tr("&Undo Typing")
                               : (stack->canUndo() ? tr("&Undo %1").arg(stack->undoText()) : tr("&Undo")));
        redo->setText(inEditor ? tr("&Redo Typing")
                               : (stack->canRedo() ? tr("&Redo %1").arg(stack->redoText()) : tr("&Redo")));
        undo->setEnabled(inEditor ? m_editor->isUndoAvailable() : stack->canUndo());
        redo->setEnabled(inEditor ? m_editor->isRedoAvailable() : stack->canRedo());
    });
    // Shortcuts work with the menu closed: enable both, the handler decides.
    connect(edit, &QMenu::aboutToHide, this, [undo, redo] {
        undo->setEnabled(true);
        redo->setEnabled(true);
    });
    // Cut, Copy and Paste go to the widget with the focus: the editor or a panel's field.
    edit->addSeparator();
    const auto clipboardAction = [this, edit](const QString &text, QKeySequence::StandardKey key, const char *slot) {
        QAction *a = edit->addAction(text, this, [this, slot] {
            QWidget *w = QApplication::focusWidget();
            if (w) {
                QMetaObject::invokeMethod(w, slot);
            }
        });
        a->setShortcut(key);
        // The focused widget handles its own keys; the menu entry is for the mouse.
        a->setShortcutContext(Qt::WidgetShortcut);
        return a;
    };
    clipboardAction(tr("Cu&t"), QKeySequence::Cut, "cut");
    clipboardAction(tr("&Copy"), QKeySequence::Copy, "copy");
    clipboardAction(tr("&Paste"), QKeySequence::Paste, "paste");
    edit->addSeparator();
    QAction *find = edit->addAction(tr("&Find…"), this, [this] { findBar()->open(false); });
    find->setObjectName(QStringLiteral("findAction"));
    find->setShortcut(QKeySequence::Find);
    QAction *findNext = edit->addAction(tr("Find &Next"), this, [this] { findBar()->findNext(); });
    findNext->setShortcut(QKeySequence::FindNext);
    QAction *findPrevious = edit->addAction(tr("Find Pre&vious"), this, [this] { findBar()->findNext(true); });
    findPrevious->setShortcut(QKeySequence::FindPrevious);
    QAction *replace = edit->addAction(tr("R&eplace…"), this, [this] { findBar()->open(true); });
    replace->setObjectName(QStringLiteral("replaceAction"));
    replace->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_H));
    QAction *gotoLine = edit->addAction(tr("&Go to Line…"), this, &MainWindow::goToLine);
    gotoLine->setObjectName(QStringLiteral("goToLineAction"));
    gotoLine->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
    // The menus' shortcuts win over the editor's typing.
    m_editor->addOverridingActions({redo, find, findNext, findPrevious, replace, gotoLine});

    QMenu *build = menuBar()->addMenu(tr("&Build"));
    build->addAction(tr("&Compile Now"), this, &MainWindow::compileNow)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    QAction *runAction = build->addAction(tr("&Run"), this, &MainWindow::runNow);
    runAction->setObjectName(QStringLiteral("runAction"));
    // Compile-only mode: the menu entry is off like the button, and says why.
    connect(&m_wb->devices(), &Devices::changed, runAction, [this, runAction] {
        runAction->setEnabled(m_wb->devices().canRun());
        runAction->setStatusTip(m_wb->devices().whyNoRun());
    });
    runAction->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Return), QKeySequence(Qt::CTRL | Qt::Key_Enter)});
    runAction->setShortcutContext(Qt::ApplicationShortcut);
    QMenu *memory = build->addMenu(tr("Check &Memory"));
    memory->setObjectName(QStringLiteral("checkMemoryMenu"));
    memory->setStatusTip(tr("Run the project once under compute-sanitizer and mark what it finds"));
    for (const auto &[label, tool, hazards] :
         {std::tuple{tr("&memcheck: out-of-bounds accesses"), Sanitizer::Tool::Memcheck, false},
          std::tuple{tr("&racecheck: shared-memory races"), Sanitizer::Tool::Racecheck, false},
          std::tuple{tr("racecheck, every &hazard"), Sanitizer::Tool::Racecheck, true},
          std::tuple{tr("&initcheck: uninitialised reads"), Sanitizer::Tool::Initcheck, false},
          std::tuple{tr("&synccheck: barrier errors"), Sanitizer::Tool::Synccheck, false}}) {
        memory->addAction(label, this, [this, tool = tool, hazards = hazards] { checkMemory(tool, hazards); });
    }
    QAction *accessAction = build->addAction(tr("Analyze Memory &Access…"), this, [this] {
        m_wb->requestAttention(PanelId::MemoryAccess, Attention::UserAsked);
    });
    accessAction->setObjectName(QStringLiteral("accessAction"));
    accessAction->setStatusTip(tr("Record one launch and show coalescing and bank conflicts per source line"));
    QAction *sweepAction =
        build->addAction(tr("S&weep…"), this, [this] { m_wb->requestAttention(PanelId::Sweep, Attention::UserAsked); });
    sweepAction->setObjectName(QStringLiteral("sweepAction"));
    QAction *abortAction = build->addAction(tr("&Abort"), this, &MainWindow::abortRun);
    abortAction->setShortcut(QKeySequence(Qt::Key_Escape));
    abortAction->setShortcutContext(Qt::ApplicationShortcut);

    QMenu *view = menuBar()->addMenu(tr("&View"));
    view->setObjectName(QStringLiteral("viewMenu"));
    // By name, so a panel is found where one looks for it; the Timeline is
    // a tab of Results, listed under its own name (docs/streams.md).
    QList<QAction *> panels;
    for (QDockWidget *d : m_docks->all()) {
        panels << d->toggleViewAction();
    }
    QAction *timeline = new QAction(tr("Timeline"), view);
    timeline->setObjectName(QStringLiteral("timelineAction"));
    connect(timeline, &QAction::triggered, this, [this] {
        // By name: the panel is in the chart module (chartpanels.h).
        QMetaObject::invokeMethod(m_docks->panel(PanelId::Results), "showTimeline");
        m_wb->requestAttention(PanelId::Results, Attention::UserAsked);
    });
    panels << timeline;
    std::sort(panels.begin(), panels.end(), [](const QAction *a, const QAction *b) {
        return QString::localeAwareCompare(a->text().remove(QLatin1Char('&')), b->text().remove(QLatin1Char('&'))) < 0;
    });
    view->addActions(panels);
    view->addSeparator();
    // The editor's text size: the standard keys, and the keypad's (which QScintilla knows itself).
    // One sequence per key press: Ctrl+Shift+= also reads as Ctrl++ and Ctrl+Shift++,
    // and two of those on the action made the press ambiguous, so Ctrl++ did nothing.
    QAction *zoomIn = view->addAction(tr("Zoom &In"), this, [this] { m_editor->zoomIn(); });
    zoomIn->setObjectName(QStringLiteral("zoomInAction"));
    zoomIn->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Equal), QKeySequence(Qt::CTRL | Qt::Key_Plus)});
    QAction *zoomOut = view->addAction(tr("Zoom &Out"), this, [this] { m_editor->zoomOut(); });
    zoomOut->setObjectName(QStringLiteral("zoomOutAction"));
    zoomOut->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Minus), QKeySequence(Qt::CTRL | Qt::Key_Underscore)});
    QAction *zoomReset = view->addAction(tr("&Reset Zoom"), this, [this] { m_editor->zoomTo(0); });
    zoomReset->setObjectName(QStringLiteral("zoomResetAction"));
    zoomReset->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    m_editor->addOverridingActions({zoomIn, zoomOut, zoomReset});
    view->addSeparator();
    QMenu *themes = view->addMenu(tr("&Theme"));
    auto *themeGroup = new QActionGroup(this);
    for (const QString &name : themeNames()) {
        QAction *a = themes->addAction(name == QLatin1String("system")  ? tr("System")
                                       : name == QLatin1String("light") ? tr("Light")
                                                                        : tr("Dark"));
        a->setCheckable(true);
        a->setChecked(name == currentTheme());
        themeGroup->addAction(a);
        connect(a, &QAction::triggered, this, [name] {
            applyTheme(name);
            QSettings().setValue(QStringLiteral("theme"), name);
        });
    }

    QMenu *settings = menuBar()->addMenu(tr("&Settings"));
    QAction *confine = settings->addAction(tr("&Confine Projects to Their Folder"));
    confine->setObjectName(QStringLiteral("confineAction"));
    confine->setCheckable(true);
    confine->setChecked(ProjectDocument::confinePaths());
    confine->setStatusTip(tr("Refuse a project that names a source, include folder or input file outside its own "
                             "folder (applies to projects opened from now on)"));
    connect(confine, &QAction::toggled, this, [](bool on) { ProjectDocument::setConfinePaths(on); });
    settings->addAction(tr("&Target…"), this, [this] { m_status->device()->showTargetDialog(); })
        ->setObjectName(QStringLiteral("targetAction"));

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    QAction *keys = help->addAction(tr("&Keyboard Shortcuts"), this, &MainWindow::showShortcuts);
    keys->setObjectName(QStringLiteral("shortcutsAction"));
    keys->setShortcut(QKeySequence::HelpContents);
    help->addAction(tr("&Documentation"), this, [this] {
        const QString docs = documentationPath();
        if (docs.isEmpty() || !QDesktopServices::openUrl(QUrl::fromLocalFile(docs))) {
            QMessageBox::information(this, tr("Documentation"),
                                     docs.isEmpty() ? documentationMissingText()
                                                    : tr("Could not open %1: no program is set to open it.").arg(docs));
        }
    });
    help->addAction(tr("&About Kernel Playground"), this,
                    [this] { QMessageBox::about(this, tr("About Kernel Playground"), aboutText()); });
    for (QMenu *m : {file, edit, build, view, help}) {
        for (QAction *a : m->actions()) {
            if (!a->shortcuts().isEmpty() && !a->toolTip().isEmpty()) {
                // Menus show the keys; tooltips of the same actions elsewhere say them too.
                a->setToolTip(QStringLiteral("%1 (%2)").arg(a->text().remove(QLatin1Char('&')),
                                                            a->shortcut().toString(QKeySequence::NativeText)));
            }
        }
    }
    rebuildRecentMenu();
}

QString MainWindow::aboutText() const
{
    const Result<const NvrtcApi *> nvrtc = NvrtcApi::instance();
    return tr("<b>Kernel Playground %1</b><p>Write CUDA C kernels and run them visually.</p>"
              "<table><tr><td>Qt</td><td>%2 (built with %3)</td></tr>"
              "<tr><td>NVRTC</td><td>%4</td></tr>"
              "<tr><td>CUDA driver</td><td>%5</td></tr>"
              "<tr><td>Licence</td><td>MIT</td></tr></table>")
        .arg(QStringLiteral(KPG_VERSION), QString::fromLatin1(qVersion()), QStringLiteral(QT_VERSION_STR),
             nvrtc ? (*nvrtc)->versionString() : tr("not found"),
             m_wb->devices().known() ? m_wb->devices().driverVersion() : tr("not asked yet"));
}

QStringList MainWindow::documentationCandidates()
{
    // Installed: <prefix>/bin/kernel-playground and <prefix>/share/doc/kernel-playground/README.md.
    // A build: bin/ inside the build folder, which is usually inside the
    // source tree but need not be; the source tree it was built from comes last.
    const QDir bin(QCoreApplication::applicationDirPath());
    QStringList out;
    for (const QString &rel : {QStringLiteral("../share/doc/kernel-playground/README.md"),
                               QStringLiteral("../../README.md"), QStringLiteral("../../../README.md")}) {
        out << QDir::cleanPath(bin.absoluteFilePath(rel));
    }
#ifdef KPG_DOCS_SOURCE_DIR
    out << QDir::cleanPath(QStringLiteral(KPG_DOCS_SOURCE_DIR "/README.md"));
#endif
    out.removeDuplicates();
    return out;
}

QString MainWindow::documentationPath()
{
    for (const QString &path : documentationCandidates()) {
        if (QFileInfo(path).isFile()) {
            return path;
        }
    }
    return {};
}

QString MainWindow::documentationMissingText()
{
    return tr("The documentation (README.md and docs/) is installed with the program in share/doc/kernel-playground "
              "and is part of the source tree. No copy was found; looked for:\n%1")
        .arg(documentationCandidates().join(QLatin1Char('\n')));
}

QList<QPair<QString, QString>> MainWindow::shortcutList() const
{
    QList<QPair<QString, QString>> out;
    for (QAction *menu : menuBar()->actions()) {
        if (!menu->menu()) {
            continue;
        }
        for (QAction *a : menu->menu()->actions()) {
            if (a->shortcuts().isEmpty()) {
                continue;
            }
            QStringList keys;
            for (const QKeySequence &k : a->shortcuts()) {
                keys << k.toString(QKeySequence::NativeText);
            }
            out.append(
                {a->text().remove(QLatin1Char('&')).remove(QStringLiteral("…")), keys.join(QStringLiteral(", "))});
        }
    }
    // The editor's own keys.
    out.append({tr("Complete the word"), QStringLiteral("Ctrl+Space")});
    out.append({tr("Zoom the editor (keypad)"), QStringLiteral("Ctrl+Keypad +, Ctrl+Keypad -")});
    out.append({tr("Go to a problem"), tr("click it in Problems")});
    return out;
}

void MainWindow::showShortcuts()
{
    QDialog dialog(this);
    dialog.setObjectName(QStringLiteral("shortcutsDialog"));
    dialog.setWindowTitle(tr("Keyboard Shortcuts"));
    auto *layout = new QVBoxLayout(&dialog);
    const auto list = shortcutList();
    auto *table = new QTableWidget(int(list.size()), 2, &dialog);
    table->setObjectName(QStringLiteral("shortcutsTable"));
    table->setHorizontalHeaderLabels({tr("Action"), tr("Keys")});
    table->verticalHeader()->hide();
    table->horizontalHeader()->setStretchLastSection(true);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    for (int r = 0; r < list.size(); ++r) {
        table->setItem(r, 0, new QTableWidgetItem(list[r].first));
        table->setItem(r, 1, new QTableWidgetItem(list[r].second));
    }
    table->resizeColumnToContents(0);
    layout->addWidget(table);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, &dialog);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    layout->addWidget(buttons);
    dialog.resize(520, 560);
    m_shortcutsDialog = &dialog;
    dialog.exec();
    m_shortcutsDialog = nullptr;
}

void MainWindow::goToLine()
{
    int line = 0, index = 0;
    m_editor->getCursorPosition(&line, &index);
    bool ok = false;
    const int lines = m_editor->lines();
    const int target =
        QInputDialog::getInt(this, tr("Go to Line"), tr("Line (1 to %1):").arg(lines), line + 1, 1, lines, 1, &ok);
    if (ok) {
        m_editor->setCursorPosition(target - 1, 0);
        m_editor->ensureLineVisible(target - 1);
        m_editor->setFocus();
    }
}

} // namespace Kp
