#pragma once

#include "compile/compiletypes.h"
#include "core/result.h"

#include <QObject>

#include <QVariantMap>
#include <functional>

class QTimer;

namespace Kp {

class CompileService;
class ProjectDocument;

/**
 * Compile as you type: 250 ms after the last keystroke the editor's text is
 * compiled on the compile service's thread; a newer edit replaces a compile
 * still waiting, and a result for text that has changed since is dropped.
 * A result lands in the document (which revalidates the launch against it)
 * and in compiled(). Edits of the project that change compile options
 * (defines, a new template instance) recompile; others only revalidate.
 * GUI thread only.
 */
class CompileController : public QObject
{
    Q_OBJECT
public:
    /** document is not owned and must outlive the controller. */
    explicit CompileController(ProjectDocument *document, QObject *parent = nullptr);

    /**
     * Where the text being edited comes from (the shell's editor): read when
     * a compile starts and by syncSource(). Without one, the document's own
     * text is compiled.
     */
    void setTextSource(std::function<QString()> text);
    /** The text changed (a keystroke): what is in flight is stale; compiles after a pause. */
    void textEdited();

    /** Pause after the last keystroke before compiling. */
    static constexpr int kDelayMs = 250;

    /** Compiles the editor's text now. */
    void compileNow();
    /** Gives the document the editor's text without compiling (a run compiles it itself). */
    void syncSource();
    /** The result for the editor's current text, once it has arrived. */
    const CompileResult &last() const { return m_last; }
    /** True once compiled() was emitted: last() is an answer (a panel built later shows it). */
    bool hasAnswer() const { return m_answered; }
    /**
     * Calls show with every compile's result from now on (compiled(), for as
     * long as context lives), and at once with the last one when a compile
     * has landed already: a view made after the compile shows it too.
     */
    void follow(QObject *context, const std::function<void(const CompileResult &)> &show);
    /** True while a compile waits for the typing pause or is in flight. */
    bool isPending() const;
    /** A counter that changes with every edit of the text: work for an older value is stale. */
    quint64 revision() const { return m_revision; }

    /** The GPU's compute capability, for arch "auto"; a change recompiles. */
    void setDevice(int ccMajor, int ccMinor);
    int ccMajor() const { return m_ccMajor; }
    int ccMinor() const { return m_ccMinor; }

    /**
     * While inactive (the start page stands in for the editor) nothing is
     * compiled: an empty untitled document would only fill Problems with "is
     * empty". Becoming active compiles what was skipped.
     */
    void setActive(bool active);

    /** The compile service, shared with Run (tag "run"), so both reuse one cache. */
    CompileService *service() const { return m_service; }

Q_SIGNALS:
    /** A compile of the current text finished; the document has it already. */
    void compiled(const CompileResult &result);
    /** After compiled(): the document has revalidated the launch against the result. */
    void settled();
    /** What the status bar says about compiling; tooltip has the options used. */
    void statusChanged(const QString &text, const QString &tooltip);

private:
    void show(const CompileResult &result);

    ProjectDocument *m_doc;
    std::function<QString()> m_text;
    CompileService *m_service = nullptr;
    QTimer *m_timer = nullptr;
    CompileResult m_last;
    quint64 m_revision = 0;
    quint64 m_sent = 0;      ///< compiles sent so far
    bool m_inFlight = false; ///< the newest compile sent has not answered
    QVariantMap m_options;   ///< the compile options of the last compile, to tell when an edit needs a new one
    int m_ccMajor = 0;
    int m_ccMinor = 0;
    bool m_active = true;
    bool m_answered = false; ///< compiled() was emitted at least once
    bool m_skipped = false;  ///< a compile was asked for while inactive
};

} // namespace Kp
