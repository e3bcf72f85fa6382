#include "projectdocument.h"

#include "compile/compiler.h"
#include "core/expression.h"
#include "core/safefile.h"
#include "project/bufferjson.h"
#include "project/projectio.h"
#include "run/projectcompile.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>
#include <QSettings>
#include <QUndoCommand>

namespace Kp {

namespace {
/**
 * New Project's kernel: a stub that compiles, so the Kernels panel and the
 * launch panel's first step work at once; the comment says where the
 * complete examples are (a preset brings its buffers, launch and checks).
 */
const QString kNewKernel = QStringLiteral("// A new kernel: write it here. Once it compiles, choose it in\n"
                                          "// the Launch panel; \"Create and bind\" adds its buffers.\n"
                                          "// Templates with buffers, steps and checks: File > New from Preset.\n"
                                          "__global__ void kernel(float *out, int n)\n"
                                          "{\n"
                                          "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                          "    if (i < n) {\n"
                                          "        out[i] = 0.0f;\n"
                                          "    }\n"
                                          "}\n");
constexpr int kMaxRecent = 10;
/** Sources larger than this are refused on open, as the compiler refuses them. */
constexpr qint64 kMaxSourceBytes = Compiler::kMaxSourceBytes;

bool isResource(const QString &path)
{
    return path.startsWith(QLatin1Char(':'));
}

Error openError(const QString &message)
{
    return Error{QStringLiteral("editor"), Error::Code::BadInput, {}, message};
}
} // namespace

/**
 * One accepted edit: the project before and after it. Undo and redo swap the
 * whole value (a project is a few kilobytes), so an undo is exactly the state
 * the edit was made in, whatever the edit touched. The kernel source is not
 * part of it: the editor owns the source's own history.
 */
class ProjectDocument::EditCommand : public QUndoCommand
{
public:
    EditCommand(ProjectDocument *doc, const QString &text, Project before, Project after)
        : QUndoCommand(text)
        , m_doc(doc)
        , m_before(std::move(before))
        , m_after(std::move(after))
    {
    }
    void undo() override { m_doc->setProjectState(m_before); }
    void redo() override { m_doc->setProjectState(m_after); }

private:
    ProjectDocument *m_doc;
    Project m_before;
    Project m_after;
};

ProjectDocument::ProjectDocument(QObject *parent)
    : QObject(parent)
{
    connect(&m_undo, &QUndoStack::cleanChanged, this, &ProjectDocument::modifiedChanged);
}

ProjectDocument::~ProjectDocument()
{
    // The commands point back at the document: drop them before its members go.
    m_undo.clear();
}

bool ProjectDocument::confinePaths()
{
    return QSettings().value(QStringLiteral("security/confineProjectPaths"), false).toBool();
}

void ProjectDocument::setConfinePaths(bool on)
{
    QSettings().setValue(QStringLiteral("security/confineProjectPaths"), on);
}

Status ProjectDocument::open(const QString &path)
{
    return path.endsWith(QLatin1String(".kpg")) ? openProject(path) : openSource(path);
}

Status ProjectDocument::openProject(const QString &path)
{
    // The program's own presets are trusted; a user's project is held to
    // its folder when the setting asks for it.
    Result<Project> loaded =
        loadProject(path, confinePaths() && !isResource(path) ? PathScope::ProjectFolder : PathScope::Anywhere);
    if (!loaded) {
        return loaded.error();
    }
    Project p = std::move(loaded).value();
    const QString sourcePath = p.sourceFile.isEmpty() ? QString() : QDir(p.dir()).filePath(p.sourceFile);
    // A preset is saved elsewhere: it has no .kpg of its own.
    const QString kpg = isResource(path) ? QString() : p.path;
    m_presetName = isResource(path) ? QFileInfo(path).completeBaseName() : QString(); // before loaded(): the title
    setLoaded(std::move(p), kpg, sourcePath);
    if (!kpg.isEmpty()) {
        addRecent(kpg);
    }
    return Unit{};
}

Status ProjectDocument::openSource(const QString &path)
{
    const QFileInfo fi(path);
    // Only regular files of a sane size: a device node or a FIFO named by a
    // hostile path must neither block nor fill memory (core/safefile).
    const Result<QByteArray> bytes = readRegularFile(path, kMaxSourceBytes, tr("a kernel source"));
    if (!bytes) {
        return openError(bytes.error().message);
    }
    Project p;
    p.sourceFile = fi.fileName();
    p.sourceText = QString::fromUtf8(*bytes);
    m_presetName.clear();
    setLoaded(std::move(p), {}, path);
    return Unit{};
}

Status ProjectDocument::newProject()
{
    // Empty, not a preset in disguise: no title, description, throughput,
    // buffers, steps or checks of another project end up in the user's own.
    Project p;
    p.sourceFile = QStringLiteral("kernel.cu"); // Save As writes NAME.cu beside NAME.kpg
    p.sourceText = kNewKernel;
    m_presetName.clear();
    setLoaded(std::move(p), {}, {});
    return Unit{};
}

void ProjectDocument::setLoaded(Project project, const QString &kpgPath, const QString &sourcePath)
{
    m_project = std::move(project);
    m_open = true;
    m_path = kpgPath;
    m_sourcePath = sourcePath;
    m_sourceModified = false;
    m_compiled = CompileResult{};
    m_compileKnown = false;
    m_validation = Validation{};
    m_undo.clear();
    m_host = HostBuffers();
    // Shapes now (what the launch is checked against), contents at their first use.
    const Status shaped = m_host.materialize(m_project, true, HostBuffers::Fill::ShapesOnly);
    Q_EMIT loaded();
    Q_EMIT projectChanged();
    Q_EMIT buffersChanged();
    m_bufferMessage = shaped ? QString() : shaped.error().message;
    Q_EMIT bufferMessage(m_bufferMessage);
    Q_EMIT modifiedChanged();
}

HostBuffers &ProjectDocument::hostBuffers()
{
    fillBuffers();
    return m_host;
}

QString ProjectDocument::bufferMessageText()
{
    fillBuffers();
    return m_bufferMessage;
}

void ProjectDocument::fillBuffers()
{
    if (m_filling || m_host.allFilled()) {
        return;
    }
    // Only the contents change, not the buffers or their shapes: no
    // buffersChanged(). A panel that shows contents asked for them here.
    m_filling = true;
    const Status filled = m_host.materialize(m_project, false);
    m_filling = false;
    if (const QString message = filled ? QString() : filled.error().message; message != m_bufferMessage) {
        m_bufferMessage = message;
        Q_EMIT bufferMessage(m_bufferMessage);
    }
}

QString ProjectDocument::sourceFileName() const
{
    return m_sourcePath.isEmpty() ? compileRequestFor(m_project).fileName : QFileInfo(m_sourcePath).fileName();
}

QString ProjectDocument::sourceDir() const
{
    if (!m_sourcePath.isEmpty()) {
        return isResource(m_sourcePath) ? QString() : QFileInfo(m_sourcePath).absolutePath();
    }
    return m_path.isEmpty() ? QString() : QFileInfo(m_path).absolutePath();
}

CompileRequest ProjectDocument::compileRequest(int ccMajor, int ccMinor) const
{
    CompileRequest req = compileRequestFor(m_project, ccMajor, ccMinor);
    if (req.projectDir.isEmpty()) {
        req.projectDir = sourceDir(); // a bare .cu includes from its own folder
    }
    if (req.sourcePath.isEmpty() && !m_sourcePath.isEmpty() && !isResource(m_sourcePath)) {
        req.sourcePath = QFileInfo(m_sourcePath).absoluteFilePath();
    }
    return req;
}

QString ProjectDocument::displayName() const
{
    // A project is named by its .kpg, a preset's unsaved copy too (it is a
    // project, not its .cu), a bare kernel by its source file.
    return !m_path.isEmpty()         ? QFileInfo(m_path).fileName()
           : !m_presetName.isEmpty() ? tr("%1.kpg (preset)").arg(m_presetName)
           : m_sourcePath.isEmpty()  ? tr("untitled")
                                     : QFileInfo(m_sourcePath).fileName();
}

QString ProjectDocument::suggestedBaseName() const
{
    return !m_path.isEmpty()         ? QFileInfo(m_path).completeBaseName()
           : !m_presetName.isEmpty() ? m_presetName
           : m_sourcePath.isEmpty()  ? QStringLiteral("untitled")
                                     : QFileInfo(m_sourcePath).completeBaseName();
}

void ProjectDocument::setSourceText(const QString &text)
{
    m_project.sourceText = text;
}

void ProjectDocument::setSourceModified(bool modified)
{
    if (modified != m_sourceModified) {
        m_sourceModified = modified;
        Q_EMIT modifiedChanged();
    }
}

bool ProjectDocument::isModified() const
{
    return m_sourceModified || !m_undo.isClean();
}

namespace {
/** Where Save As writes the kernel: beside the .kpg, under its name. Empty for an inline source. */
QString sourceFileFor(const Project &p, const QString &sourcePath, const QString &kpgPath, bool sameFile)
{
    if (p.sourceFile.isEmpty() && sourcePath.isEmpty()) {
        return {}; // inline
    }
    if (sameFile && !p.sourceFile.isEmpty()) {
        return p.sourceFile; // Save keeps the project's own .cu
    }
    return QFileInfo(kpgPath).completeBaseName() + QStringLiteral(".cu");
}

bool samePath(const QString &a, const QString &b)
{
    return !a.isEmpty() && !b.isEmpty() && QFileInfo(a).absoluteFilePath() == QFileInfo(b).absoluteFilePath();
}
} // namespace

QString ProjectDocument::sourceConflict(const QString &kpgPath) const
{
    const QString file = sourceFileFor(m_project, m_sourcePath, kpgPath, samePath(kpgPath, m_path));
    if (file.isEmpty()) {
        return {};
    }
    const QString target = QDir(QFileInfo(kpgPath).absolutePath()).absoluteFilePath(file);
    const QFileInfo fi(target);
    if (!fi.exists() || samePath(target, m_sourcePath)) {
        return {};
    }
    const Result<QByteArray> existing = readRegularFile(target, kMaxSourceBytes, tr("a kernel source"));
    if (existing && QString::fromUtf8(*existing) == m_project.sourceText) {
        return {}; // the same text: writing it loses nothing
    }
    return target;
}

Status ProjectDocument::saveTo(const QString &kpgPath)
{
    const bool sameFile = samePath(kpgPath, m_path);
    Project p = m_project;
    p.sourceFile = sourceFileFor(m_project, m_sourcePath, kpgPath, sameFile);
    // Files the buffers read stay where they were: make them absolute when
    // the project moves to another folder, or the saved project loses them.
    const QDir oldDir(m_project.dir());
    const QString newDir = QFileInfo(kpgPath).absolutePath();
    bool movedFiles = false;
    if (oldDir.absolutePath() != newDir) {
        for (BufferSpec &b : p.buffers) {
            if (!b.init.file.isEmpty() && QFileInfo(b.init.file).isRelative()) {
                b.init.file = QDir::cleanPath(oldDir.absoluteFilePath(b.init.file));
                movedFiles = true;
            }
        }
    }
    if (Status s = saveProjectSource(p, kpgPath); !s) {
        return s;
    }
    if (Status s = saveProject(p, kpgPath); !s) {
        return s;
    }
    p.path = QFileInfo(kpgPath).absoluteFilePath();
    m_project = p;
    m_presetName.clear(); // saved: a project of its own now
    m_path = p.path;
    m_sourcePath = p.sourceFile.isEmpty() ? QString() : QDir(m_project.dir()).filePath(m_project.sourceFile);
    m_sourceModified = false;
    m_undo.setClean();
    addRecent(m_path);
    if (movedFiles) {
        Q_EMIT projectChanged();
    }
    Q_EMIT saved(m_path);
    Q_EMIT modifiedChanged();
    return Unit{};
}

Status ProjectDocument::edit(const QString &text, const std::function<void(QJsonObject &)> &change)
{
    QJsonObject o = QJsonDocument::fromJson(serializeProject(m_project)).object();
    change(o);
    Result<Project> parsed = parseProject(QJsonDocument(o));
    if (!parsed) {
        return parsed.error();
    }
    Project next = std::move(parsed).value();
    next.sourceText = m_project.sourceText;
    next.path = m_project.path;
    if (serializeProject(next) == serializeProject(m_project)) {
        return Unit{}; // nothing changed: no step to undo
    }
    if (Status s = checkChangedContents(next); !s) {
        return s;
    }
    m_undo.push(new EditCommand(this, text, m_project, std::move(next)));
    return Unit{};
}

Status ProjectDocument::editLaunch(int step, const QString &key, const QJsonValue &value)
{
    return edit(tr("Set %1 of step %2").arg(key).arg(step + 1), [&](QJsonObject &o) {
        QJsonArray launches = o.value(QStringLiteral("launches")).toArray();
        if (step < 0 || step >= launches.size()) {
            return;
        }
        QJsonObject l = launches[step].toObject();
        l.insert(key, value);
        launches[step] = l;
        o.insert(QStringLiteral("launches"), launches);
    });
}

Status ProjectDocument::editTiming(const QString &key, const QJsonValue &value)
{
    return edit(tr("Set timing %1").arg(key), [&](QJsonObject &o) {
        QJsonObject t = o.value(QStringLiteral("timing")).toObject();
        t.insert(key, value);
        o.insert(QStringLiteral("timing"), t);
    });
}

Status ProjectDocument::editListItem(const QString &list, int index, const QString &field, const QJsonValue &value)
{
    const QString what = list == QLatin1String("scalars") ? tr("scalar") : tr("buffer");
    return edit(tr("Set %1 of %2 %3").arg(field, what).arg(index + 1), [&](QJsonObject &o) {
        QJsonArray items = o.value(list).toArray();
        if (index < 0 || index >= items.size()) {
            return;
        }
        QJsonObject item = items[index].toObject();
        item.insert(field, value);
        items[index] = item;
        o.insert(list, items);
    });
}

Status ProjectDocument::appendListItem(const QString &list, const QJsonObject &item)
{
    const QString what = list == QLatin1String("scalars") ? tr("scalar") : tr("buffer");
    return edit(tr("Add %1 %2").arg(what, item.value(QStringLiteral("name")).toString()), [&](QJsonObject &o) {
        QJsonArray items = o.value(list).toArray();
        items.append(item);
        o.insert(list, items);
    });
}

Status ProjectDocument::checkChangedContents(const Project &next) const
{
    // An init that only filling can judge (an expression's variables, a
    // file's contents) is tried now, on that buffer alone, so a bad one is
    // refused where it was typed rather than found by the next run.
    for (qsizetype i = 0; i < next.buffers.size(); ++i) {
        const BufferSpec &b = next.buffers[i];
        if (b.init.kind != BufferInit::Kind::Expression && b.init.kind != BufferInit::Kind::Npy &&
            b.init.kind != BufferInit::Kind::Image) {
            continue;
        }
        const BufferSpec *old = m_project.buffer(b.name);
        const auto same = [](const BufferSpec &x, const BufferSpec &y) {
            return x.dtype == y.dtype && x.shape == y.shape && bufferInitToJson(x.init) == bufferInitToJson(y.init);
        };
        bool scalarsSame = m_project.scalars.size() == next.scalars.size();
        for (qsizetype k = 0; scalarsSame && k < next.scalars.size(); ++k) {
            scalarsSame = m_project.scalars[k].name == next.scalars[k].name &&
                          m_project.scalars[k].value == next.scalars[k].value;
        }
        if (old && same(*old, b) && scalarsSame) {
            continue;
        }
        Project trial = next;
        trial.buffers = {b};
        HostBuffers host;
        if (Status s = host.materialize(trial); !s) {
            Error e = s.error();
            const QString field = QStringLiteral("buffers[%1]").arg(i);
            e.message.replace(QStringLiteral("buffers[0]"), field);
            // The filler names the buffer in words; the panel words the path itself.
            e.message.replace(QStringLiteral("buffers '%1' init expression").arg(b.name),
                              field + QStringLiteral(".init.expr"));
            e.path = e.path.isEmpty() ? field + QStringLiteral(".init")
                                      : e.path.replace(QStringLiteral("buffers[0]"), field);
            if (!e.message.startsWith(field)) {
                e.message = field + QStringLiteral(".init: ") + e.message;
                e.path = field + QStringLiteral(".init");
            }
            return e;
        }
    }
    return Unit{};
}

QStringList ProjectDocument::usesOf(const QString &name, bool buffer) const
{
    QStringList uses;
    const QList<LaunchStep> &launches = m_project.launches;
    for (qsizetype s = 0; s < launches.size(); ++s) {
        const KernelInfo *kernel = findKernel(m_compiled.kernels, launches[s].kernel);
        for (qsizetype a = 0; a < launches[s].args.size(); ++a) {
            const ArgBinding &b = launches[s].args[a];
            const bool match =
                b.name == name && (buffer ? b.kind == ArgBinding::Kind::Buffer : b.kind == ArgBinding::Kind::Scalar);
            if (!match) {
                continue;
            }
            const QString param = !b.param.isEmpty()                    ? b.param
                                  : kernel && a < kernel->params.size() ? kernel->params[a].name
                                                                        : QString();
            uses << (param.isEmpty() ? tr("step %1, argument %2").arg(s + 1).arg(a + 1)
                                     : tr("step %1, parameter %2").arg(s + 1).arg(param));
        }
    }
    if (buffer) {
        for (const auto &pair : m_project.repeat.swaps) {
            if (pair.first == name || pair.second == name) {
                uses << tr("the repeat swap %1 ↔ %2").arg(pair.first, pair.second);
            }
        }
    }
    return uses;
}

QStringList ProjectDocument::checksUsing(const QString &buffer) const
{
    QStringList out;
    for (qsizetype i = 0; i < m_project.checks.size(); ++i) {
        const CheckSpec &c = m_project.checks[i];
        if (c.buffer == buffer || (c.kind == CheckSpec::Kind::Reference && c.reference == buffer) ||
            (c.isCollection() && c.other == buffer)) {
            out << QStringLiteral("checks[%1] (%2)").arg(i).arg(c.displayName());
        }
    }
    return out;
}

Status ProjectDocument::removeListItem(const QString &list, int index)
{
    const bool buffers = list == QLatin1String("buffers");
    const QString name = buffers ? m_project.buffers.value(index).name : m_project.scalars.value(index).name;
    // Refused before anything changes, in words that say so: deleting what a
    // step still uses would leave a project that cannot run.
    // A check that names the buffer is the reason, in the check's own words:
    // the reader's "checks[0].buffer: unknown buffer 'c'" would not say so.
    if (const QStringList checks = buffers ? checksUsing(name) : QStringList(); !checks.isEmpty()) {
        Error e{QStringLiteral("project"),
                Error::Code::BadInput,
                {},
                tr("%1 %2 buffer %3: remove or edit %4 first.")
                    .arg(checks.join(QStringLiteral(", ")), checks.size() == 1 ? tr("uses") : tr("use"), name,
                         checks.size() == 1 ? tr("that check") : tr("those checks"))};
        e.path = QStringLiteral("%1[%2]").arg(list).arg(index);
        return e;
    }
    if (const QStringList uses = usesOf(name, buffers); !uses.isEmpty()) {
        const QString field = QStringLiteral("%1[%2]").arg(list).arg(index);
        Error e{QStringLiteral("project"),
                Error::Code::BadInput,
                {},
                tr("%1: not deleted: %2 is still used by %3. Bind %4 to something else first.")
                    .arg(field, name, uses.join(QStringLiteral("; ")), uses.size() == 1 ? tr("that") : tr("those"))};
        e.path = field;
        return e;
    }
    const QString what = list == QLatin1String("scalars") ? tr("scalar") : tr("buffer");
    return edit(tr("Delete %1 %2").arg(what).arg(index + 1), [&](QJsonObject &o) {
        QJsonArray items = o.value(list).toArray();
        if (index >= 0 && index < items.size()) {
            items.removeAt(index);
        }
        o.insert(list, items);
    });
}

void ProjectDocument::setProjectState(const Project &project)
{
    const QString source = m_project.sourceText;
    m_project = project;
    m_project.sourceText = source;
    const Status filled = m_host.materialize(m_project, false);
    Q_EMIT projectChanged();
    Q_EMIT buffersChanged();
    m_bufferMessage = filled ? QString() : filled.error().message;
    Q_EMIT bufferMessage(m_bufferMessage);
    Q_EMIT modifiedChanged();
}

void ProjectDocument::setCompiled(const CompileResult &result)
{
    m_compiled = result;
    m_compileKnown = true;
    revalidate();
}

void ProjectDocument::revalidate()
{
    if (m_busy) {
        return;
    }
    Validation v;
    const auto done = [&] {
        m_validation = v;
        Q_EMIT validationChanged();
    };
    if (m_project.launches.isEmpty()) {
        v.error = Error{QStringLiteral("project"),
                        Error::Code::BadInput,
                        {},
                        tr("No launch step yet: choose the kernel to launch in the Kernel box above "
                           "(or press +); a step with a default grid and block appears, and a button "
                           "creates the buffers and scalars its parameters need.")};
        v.error->path = QStringLiteral("launches");
        return done();
    }
    // The shapes are all a launch is checked against; contents are filled at their first use.
    if (Status s = m_host.materialize(m_project, false, HostBuffers::Fill::ShapesOnly); !s) {
        v.error = s.error();
        return done();
    }
    const auto resolvedText = [](const qint64 grid[3], const qint64 block[3]) {
        const qint64 threads = grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2];
        return tr("grid (%1, %2, %3) × block (%4, %5, %6) = %7 threads")
            .arg(grid[0])
            .arg(grid[1])
            .arg(grid[2])
            .arg(block[0])
            .arg(block[1])
            .arg(block[2])
            .arg(QLocale().toString(threads));
    };
    // What the grid and block give, evaluated on their own: shown while the
    // bindings cannot be checked (no compile yet) or something else is wrong.
    const auto resolveShapesOnly = [&] {
        const QMap<QString, double> vars = expressionVariables(m_project, m_host);
        for (const LaunchStep &st : m_project.launches) {
            Expression e;
            for (auto it = vars.begin(); it != vars.end(); ++it) {
                e.set(it.key(), it.value());
            }
            qint64 block[3] = {1, 1, 1};
            qint64 grid[3] = {1, 1, 1};
            bool ok = true;
            for (int a = 0; a < 3 && ok; ++a) {
                const auto b = a < st.block.size() ? e.evaluate(st.block[a], QString()) : Result<double>(1.0);
                ok = bool(b);
                block[a] = ok ? qint64(*b) : 1;
            }
            e.set(QStringLiteral("block.x"), double(block[0]));
            e.set(QStringLiteral("block.y"), double(block[1]));
            e.set(QStringLiteral("block.z"), double(block[2]));
            for (int a = 0; a < 3 && ok; ++a) {
                const auto g = a < st.grid.size() ? e.evaluate(st.grid[a], QString()) : Result<double>(1.0);
                ok = bool(g);
                grid[a] = ok ? qint64(*g) : 1;
            }
            v.resolved << (ok ? resolvedText(grid, block) : QString());
        }
    };
    // Before the first compile of this text lands there is no signature to
    // check the bindings against: that is not a failed compile (a run
    // compiles first anyway), so say it is pending and show the shapes.
    if (!m_compileKnown) {
        v.pending = tr("The arguments are checked against the kernel once it has compiled (compiling…).");
        resolveShapesOnly();
        return done();
    }
    const Result<PreparedRun> r = prepareRun(m_project, m_compiled, m_host, 0);
    if (!r) {
        v.error = r.error();
        resolveShapesOnly();
        return done();
    }
    v.warnings = r->warnings;
    for (qsizetype i = 0; i < r->request.steps.size(); ++i) {
        const RunStep &st = r->request.steps[i];
        const qint64 grid[3] = {st.grid[0], st.grid[1], st.grid[2]};
        const qint64 block[3] = {st.block[0], st.block[1], st.block[2]};
        const qint64 perBlock = block[0] * block[1] * block[2];
        v.resolved << resolvedText(grid, block);
        v.steps.append({st.kernel, int(perBlock), st.sharedBytes});
        // Known without a GPU: the limits every CUDA GPU shares (the engine's
        // default LaunchLimits), so say so here rather than after a failed launch.
        if (!v.error) {
            v.error = launchLimitError(int(i), grid, block);
        }
    }
    done();
}

std::optional<Error> ProjectDocument::launchLimitError(int step, const qint64 grid[3], const qint64 block[3])
{
    static const LaunchLimits
        every; // what all CUDA GPUs allow; a device may allow more shared memory, never more threads
    static const char *axis[3] = {"x", "y", "z"};
    const auto fail = [step](const QString &path, const QString &message) {
        Error e{QStringLiteral("project"), Error::Code::BadInput, {}, message};
        e.path = QStringLiteral("launches[%1].%2").arg(step).arg(path);
        return e;
    };
    // The total first: block x and y allow as many threads as a whole block.
    const qint64 perBlock = block[0] * block[1] * block[2];
    if (perBlock > every.maxThreadsPerBlock) {
        return fail(QStringLiteral("block"), tr("launches[%1].block: %2 × %3 × %4 = %5 threads per block; CUDA GPUs "
                                                "run at most %6 threads per block")
                                                 .arg(step)
                                                 .arg(block[0])
                                                 .arg(block[1])
                                                 .arg(block[2])
                                                 .arg(perBlock)
                                                 .arg(every.maxThreadsPerBlock));
    }
    for (int a = 0; a < 3; ++a) {
        if (grid[a] > every.maxGrid[a]) {
            return fail(QStringLiteral("grid[%1]").arg(a),
                        tr("launches[%1].grid[%2]: %4 blocks; CUDA GPUs allow at most %5 blocks in %3")
                            .arg(step)
                            .arg(a)
                            .arg(QLatin1String(axis[a]))
                            .arg(grid[a])
                            .arg(every.maxGrid[a]));
        }
        if (block[a] > every.maxBlock[a]) {
            return fail(QStringLiteral("block[%1]").arg(a),
                        tr("launches[%1].block[%2]: %4 threads; CUDA GPUs allow at most %5 threads in %3")
                            .arg(step)
                            .arg(a)
                            .arg(QLatin1String(axis[a]))
                            .arg(block[a])
                            .arg(every.maxBlock[a]));
        }
    }
    return std::nullopt;
}

QStringList ProjectDocument::recentProjects()
{
    return QSettings().value(QStringLiteral("recentProjects")).toStringList();
}

void ProjectDocument::addRecent(const QString &path)
{
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recentProjects")).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecent) {
        recent.removeLast();
    }
    settings.setValue(QStringLiteral("recentProjects"), recent);
    settings.setValue(QStringLiteral("lastProject"), path);
}

} // namespace Kp
