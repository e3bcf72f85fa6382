#pragma once

#include "compile/compiletypes.h"
#include "core/result.h"
#include "project/project.h"
#include "run/runner.h"

#include <QJsonObject>
#include <QObject>
#include <QStringList>
#include <QUndoStack>

#include <functional>
#include <optional>

namespace Kp {

/** What checking the launch without running it found. */
struct Validation
{
    /** Why the project cannot run as it is; its path names the field. Empty when it can. */
    std::optional<Error> error;
    QStringList warnings; ///< allowed but suspicious bindings
    /** Not an error: why the bindings are not checked yet (no compile of this project has landed). */
    QString pending;
    /** Per launch step, what grid and block resolve to: "grid (4096, 1, 1) × block (256, 1, 1) = ... threads". */
    QStringList resolved;
    /** Per launch step: the kernel's name, threads per block and dynamic shared bytes, for occupancy estimates. */
    struct Step
    {
        QString kernel;
        int threadsPerBlock = 0;
        qint64 sharedBytes = 0;
    };
    QList<Step> steps;
};

/**
 * The open project as a document, with no widgets: the Project, the .kpg it
 * lives in, the host copies of its buffers, the last compile's verdict on it
 * and an undo stack of every edit. Panels take the document and follow its
 * signals (as RenderDoc's panels take the capture context); nothing pushes
 * state into them by hand.
 *
 * The kernel source is edited in the editor, which keeps its own undo
 * history; the editor tells the document the text (setSourceText) and
 * whether it differs from the saved file (setSourceModified). Every other
 * edit goes through edit() and becomes one QUndoCommand.
 *
 * GUI thread only. The host buffers are filled off the GUI thread during a
 * run (RunController), never while an edit is applied.
 */
class ProjectDocument : public QObject
{
    Q_OBJECT
public:
    explicit ProjectDocument(QObject *parent = nullptr);
    ~ProjectDocument() override;

    /** Opens a .kpg project (a file or a ":/presets/..." resource) or a bare .cu kernel. */
    Status open(const QString &path);
    /** Opens a .kpg project. A preset is opened as an unsaved copy: saving asks for a place. */
    Status openProject(const QString &path);
    /** Opens a bare kernel source: a project around it with no buffers and no launch steps yet. */
    Status openSource(const QString &path);
    /**
     * Starts an empty project: a kernel stub (written as NAME.cu by Save As), no
     * buffers, launch steps or checks. Templates are the presets.
     */
    Status newProject();

    /**
     * The file Save As would write the kernel source to, when it exists, is not
     * this project's own source and holds other text: saving there would
     * overwrite another project's kernel, so the caller asks first. Empty
     * when saving to kpgPath overwrites nothing that belongs to anyone else.
     */
    QString sourceConflict(const QString &kpgPath) const;
    /**
     * Saves the project to kpgPath. Saving to the project's own file keeps
     * its source file; saving elsewhere (Save As) writes the source beside the
     * new .kpg under its name (q.kpg gets q.cu), so two projects never share
     * a kernel file. An inline source stays inline.
     */
    Status saveTo(const QString &kpgPath);

    const Project &project() const { return m_project; }
    /** The .kpg the project lives in; empty for an unsaved project or a preset. */
    QString path() const { return m_path; }
    /** The kernel's file name as diagnostics name it ("vector_add.cu"; "p.cu" inline in p.kpg; else "kernel.cu"). */
    QString sourceFileName() const;
    /** The folder that holds the source, when it is a real folder (include paths); else empty. */
    QString sourceDir() const;
    /**
     * The compile for the source as it is now (compileRequestFor), with the
     * include folder of a bare kernel's file: the editor and Run both send
     * this, so their results share one cache entry.
     */
    CompileRequest compileRequest(int ccMajor, int ccMinor) const;
    /** "vector_add.kpg", "heat.kpg (preset)", "kernel.cu", "untitled": what the title bar shows. */
    QString displayName() const;
    /** The name Save As proposes, without folder or extension: "heat", "kernel", "untitled". */
    QString suggestedBaseName() const;

    /** The editor's text, kept here so compiles, runs and saves read one place. Not an undoable edit. */
    void setSourceText(const QString &text);
    /** Whether the editor's text differs from the last load or save. */
    void setSourceModified(bool modified);
    /** Unsaved changes: an edit since the last load or save (undo back to it counts as none), or source edits. */
    bool isModified() const;

    /**
     * Applies an edit to the project's JSON as one undoable step, described
     * by text ("Set grid", "Add buffer"). The project's own validation
     * decides: a refused edit changes nothing and returns the error, whose
     * path names the field.
     */
    Status edit(const QString &text, const std::function<void(QJsonObject &)> &change);
    /** Sets `key` of launch step `step`. */
    Status editLaunch(int step, const QString &key, const QJsonValue &value);
    /** Sets `key` of the "timing" object. */
    Status editTiming(const QString &key, const QJsonValue &value);
    /** Sets `field` of item `index` of the "buffers" or "scalars" list. */
    Status editListItem(const QString &list, int index, const QString &field, const QJsonValue &value);
    Status appendListItem(const QString &list, const QJsonObject &item);
    /**
     * Removes item index of "buffers" or "scalars"; refused while a check, a
     * launch step or a swap still uses it (the message names the check).
     */
    Status removeListItem(const QString &list, int index);
    /** Where the project uses buffer (or scalar) name: "step 2, parameter t_next", "the repeat swap t ↔ t_next". */
    QStringList usesOf(const QString &name, bool buffer) const;

    /** The checks that read buffer: "checks[0] (c = a + b)". */
    QStringList checksUsing(const QString &buffer) const;

    QUndoStack *undoStack() { return &m_undo; }

    /** True once a project is open (the start page shows none). */
    bool isOpen() const { return m_open; }
    /** What the last fill of the buffers said (bufferMessage()): empty when every buffer filled. */
    QString bufferMessageText();

    /**
     * The host buffers, every one holding its init (or what a run left).
     * Opening a project resolves their shapes and creates them, but fills
     * them here, at the first use: the window paints before seconds of
     * expression or file fills (a failed fill is told through
     * bufferMessage() then).
     */
    HostBuffers &hostBuffers();
    /** The host buffers for their names and shapes only: the contents may not be filled yet. */
    const HostBuffers &bufferShapes() const { return m_host; }
    /** The host buffers as they are, for a caller that fills them itself (a run, off the GUI thread). */
    HostBuffers &buffersToFill() { return m_host; }

    /** The compile of the current source that validation judges bindings against. */
    void setCompiled(const CompileResult &result);
    const CompileResult &compiled() const { return m_compiled; }
    /** Checks the launch without running it; validationChanged() tells the verdict. */
    void revalidate();
    const Validation &validation() const { return m_validation; }
    /**
     * While a run fills or uses the host buffers, validation waits (it reads
     * them); the run's outcome says what is wrong.
     */
    void setBusy(bool busy) { m_busy = busy; }

    /** The recently opened or saved projects, newest first. */
    static QStringList recentProjects();
    /**
     * Settings > Confine Projects to Their Folder (docs/security.md): opened
     * projects may name only files inside their own folder. Off by default.
     */
    static bool confinePaths();
    static void setConfinePaths(bool on);

    /** The most threads per block any CUDA GPU runs (compute capability 2.0 and later). */
    static constexpr qint64 kMaxThreadsPerBlock = 1024;
    /**
     * Grid or block sizes no CUDA GPU launches (the engine's default
     * LaunchLimits: grid x 2^31-1, y and z 65535; block x, y 1024, z 64; 1024
     * threads a block), with the field's path; nothing when within them.
     */
    static std::optional<Error> launchLimitError(int step, const qint64 grid[3], const qint64 block[3]);

Q_SIGNALS:
    /** Another project or source was loaded: everything is new, the editor takes sourceText. */
    void loaded();
    /** The project changed through an edit, an undo or a redo. */
    void projectChanged();
    /** The host buffers were created, refilled or dropped. */
    void buffersChanged();
    /** A buffer could not be filled from its definition (empty when all are). */
    void bufferMessage(const QString &message);
    void validationChanged();
    /** isModified() or the title may have changed. */
    void modifiedChanged();
    /** Saved to path; the editor's text is now the saved one. */
    void saved(const QString &path);

private:
    class EditCommand;
    void setProjectState(const Project &project);
    void setLoaded(Project project, const QString &kpgPath, const QString &sourcePath);
    void addRecent(const QString &path);
    /** Fills the buffers Fill::ShapesOnly left (hostBuffers()); tells a failure through bufferMessage(). */
    void fillBuffers();
    /** Fills, on their own, the buffers whose contents an edit changed and only filling can judge. */
    Status checkChangedContents(const Project &next) const;

    Project m_project;
    QString m_path;       ///< the .kpg, or empty
    QString m_sourcePath; ///< the kernel's file (or resource), or empty for an inline source
    QString m_presetName; ///< "heat" while an unsaved copy of a preset is open
    HostBuffers m_host;
    QString m_bufferMessage; ///< bufferMessage()'s last text, for a panel built after it
    bool m_open = false;
    QUndoStack m_undo;
    CompileResult m_compiled;
    bool m_compileKnown = false; ///< m_compiled is a compile of this project, not the empty one of a fresh load
    Validation m_validation;
    bool m_sourceModified = false;
    bool m_busy = false;
    bool m_filling = false; ///< fillBuffers() is on the stack (a signal it sends must not start another)
};

} // namespace Kp
