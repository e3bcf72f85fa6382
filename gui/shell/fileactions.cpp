// File > New, Open, Save, Save As and the recent projects: MainWindow's,
// kept apart from the window's construction (mainwindow.cpp).

#include "mainwindow.h"

#include "editor/codeeditor.h"
#include "panels/start/presetgallery.h"
#include "workbench/projectdocument.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QStandardPaths>

namespace Kp {

void MainWindow::newFromPreset()
{
    // The same question as New, Open and Quit: Save, Discard or Cancel.
    if (!maybeSave(tr("New from Preset"))) {
        return;
    }
    PresetDialog dialog(this);
    if (dialog.exec() != QDialog::Accepted || dialog.chosenPath().isEmpty()) {
        return;
    }
    if (Status s = openProject(dialog.chosenPath()); !s) {
        QMessageBox::warning(this, tr("New from Preset"), s.error().message);
    }
}

Status MainWindow::openSource(const QString &path)
{
    return path.endsWith(QLatin1String(".kpg")) ? openProject(path) : document()->openSource(path);
}

Status MainWindow::openProject(const QString &path)
{
    const Status s = document()->openProject(path);
    if (s) {
        rebuildRecentMenu();
        const Project &p = document()->project();
        // A preset by its name: ":/presets/..." is the program's resource path, no file of the user's.
        const QString what =
            path.startsWith(QLatin1String(":/presets/")) ? tr("preset %1").arg(QFileInfo(path).dir().dirName()) : path;
        m_wb->log(tr("Opened %1%2").arg(what, p.title.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(p.title)));
    }
    return s;
}

Status MainWindow::saveProjectTo(const QString &path)
{
    document()->setSourceText(m_editor->text());
    return document()->saveTo(path);
}

void MainWindow::openFileDialog()
{
    // Opening another project replaces this one: its unsaved edits are asked about first.
    if (!maybeSave(tr("Open"))) {
        return;
    }
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open"), openDialogFolder(),
        tr("Projects and kernels (*.kpg *.cu *.cuh);;Projects (*.kpg);;CUDA sources (*.cu *.cuh);;All files (*)"));
    if (path.isEmpty()) {
        return;
    }
    if (const Status s = openSource(path); !s) {
        QMessageBox::warning(this, tr("Open"), s.error().message);
    } else {
        QSettings().setValue(QStringLiteral("lastOpenDir"), QFileInfo(path).absolutePath());
    }
}

QString MainWindow::openDialogFolder() const
{
    // Where the user works: this project's folder, else the folder last opened
    // from or saved to, else the documents folder; never the working directory.
    if (!document()->sourceDir().isEmpty()) {
        return document()->sourceDir();
    }
    const QSettings settings;
    for (const char *key : {"lastOpenDir", "lastSaveDir"}) {
        const QString dir = settings.value(QLatin1String(key)).toString();
        if (!dir.isEmpty() && QFileInfo(dir).isDir()) {
            return dir;
        }
    }
    return QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
}

bool MainWindow::confirmSourceOverwrite(const QString &kpgPath)
{
    const QString conflict = document()->sourceConflict(kpgPath);
    return conflict.isEmpty() ||
           QMessageBox::question(this, tr("Save As"),
                                 tr("%1 already exists and holds another kernel (it may belong to another "
                                    "project). Replace it with this project's kernel?")
                                     .arg(conflict),
                                 QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel) == QMessageBox::Yes;
}

void MainWindow::saveProject()
{
    if (document()->path().isEmpty()) {
        saveProjectAs();
        return;
    }
    if (Status s = saveProjectTo(document()->path()); !s) {
        QMessageBox::warning(this, tr("Save"), s.error().message);
    }
}

void MainWindow::saveProjectAs()
{
    // A new project goes where projects were last saved (else the user's
    // documents), a bare kernel's beside its .cu; never the working directory.
    QString suggested = document()->path();
    if (suggested.isEmpty()) {
        const QString dir = !document()->sourceDir().isEmpty()
                                ? document()->sourceDir()
                                : QSettings()
                                      .value(QStringLiteral("lastSaveDir"),
                                             QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation))
                                      .toString();
        suggested = QDir(dir).filePath(document()->suggestedBaseName() + QStringLiteral(".kpg"));
    }
    QString path = QFileDialog::getSaveFileName(this, tr("Save Project As"), suggested, tr("Projects (*.kpg)"));
    if (path.isEmpty()) {
        return;
    }
    if (!path.endsWith(QLatin1String(".kpg"))) {
        path += QStringLiteral(".kpg");
    }
    document()->setSourceText(m_editor->text());
    if (!confirmSourceOverwrite(path)) {
        return;
    }
    if (Status s = document()->saveTo(path); !s) {
        QMessageBox::warning(this, tr("Save As"), s.error().message);
    } else {
        QSettings().setValue(QStringLiteral("lastSaveDir"), QFileInfo(path).absolutePath());
    }
}

bool MainWindow::maybeSave(const QString &title)
{
    if (!isProjectModified()) {
        return true;
    }
    const auto answer = QMessageBox::question(
        this, title,
        tr("Save the changes to %1 first?").arg(document()->path().isEmpty() ? tr("this project") : document()->path()),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Cancel) {
        return false;
    }
    if (answer == QMessageBox::Save) {
        saveProject();
        return !isProjectModified(); // saving failed or was cancelled: stay
    }
    return true;
}

void MainWindow::newProject()
{
    if (!maybeSave(tr("New Project"))) {
        return;
    }
    if (Status s = document()->newProject(); !s) {
        QMessageBox::warning(this, tr("New Project"), s.error().message);
        return;
    }
    m_wb->log(tr("New project: one kernel, no buffers, steps or checks yet. Templates with all of those set up "
                 "are in File > New from Preset."));
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = ProjectDocument::recentProjects();
    for (const QString &path : recent) {
        m_recentMenu->addAction(path, this, [this, path] {
            if (!maybeSave(tr("Open Recent"))) {
                return;
            }
            if (Status s = openProject(path); !s) {
                QMessageBox::warning(this, tr("Open Recent"), s.error().message);
            }
        });
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
}

} // namespace Kp
