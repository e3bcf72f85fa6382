#include "nvrtcjob.h"

#include "cuda/nvrtcapi.h"

#include <QElapsedTimer>

#include <vector>

namespace Kp {

QVariantMap NvrtcJob::toVariant() const
{
    QVariantList hs;
    for (const auto &[name, text] : headers) {
        hs << QVariant(QVariantList{name, text});
    }
    return {{QStringLiteral("source"), source},
            {QStringLiteral("programName"), programName},
            {QStringLiteral("options"), options},
            {QStringLiteral("nameExpressions"), nameExpressions},
            {QStringLiteral("headers"), hs}};
}

NvrtcJob NvrtcJob::fromVariant(const QVariantMap &map)
{
    NvrtcJob j;
    j.source = map.value(QStringLiteral("source")).toByteArray();
    j.programName = map.value(QStringLiteral("programName")).toByteArray();
    j.options = map.value(QStringLiteral("options")).toStringList();
    j.nameExpressions = map.value(QStringLiteral("nameExpressions")).toStringList();
    for (const QVariant &h : map.value(QStringLiteral("headers")).toList()) {
        const QVariantList pair = h.toList();
        if (pair.size() == 2) {
            j.headers.append({pair.at(0).toByteArray(), pair.at(1).toByteArray()});
        }
    }
    return j;
}

QVariantMap NvrtcOutput::toVariant() const
{
    QVariantMap lowered;
    for (auto it = loweredNames.cbegin(); it != loweredNames.cend(); ++it) {
        lowered.insert(it.key(), it.value());
    }
    return {{QStringLiteral("status"), status},
            {QStringLiteral("statusText"), statusText},
            {QStringLiteral("log"), log},
            {QStringLiteral("ptx"), ptx},
            {QStringLiteral("cubin"), cubin},
            {QStringLiteral("compileMs"), compileMs},
            {QStringLiteral("pchStatus"), pchStatus},
            {QStringLiteral("loweredNames"), lowered}};
}

NvrtcOutput NvrtcOutput::fromVariant(const QVariantMap &map)
{
    NvrtcOutput o;
    o.status = map.value(QStringLiteral("status")).toInt();
    o.statusText = map.value(QStringLiteral("statusText")).toString();
    o.log = map.value(QStringLiteral("log")).toString();
    o.ptx = map.value(QStringLiteral("ptx")).toByteArray();
    o.cubin = map.value(QStringLiteral("cubin")).toByteArray();
    o.compileMs = map.value(QStringLiteral("compileMs")).toDouble();
    o.pchStatus = map.value(QStringLiteral("pchStatus"), -1).toInt();
    const QVariantMap lowered = map.value(QStringLiteral("loweredNames")).toMap();
    for (auto it = lowered.cbegin(); it != lowered.cend(); ++it) {
        o.loweredNames.insert(it.key(), it.value().toString());
    }
    return o;
}

namespace {

/** Whether s holds the two characters a, b at i (no copy: this runs for every character of a source's start). */
bool pairAt(const QByteArray &s, qsizetype i, char a, char b)
{
    return i + 1 < s.size() && s.at(i) == a && s.at(i + 1) == b;
}

/**
 * Past a comment starting at i: a line comment ends before its newline.
 * -1 for a block comment that never ends; i itself when none starts there.
 */
qsizetype skipComment(const QByteArray &s, qsizetype i)
{
    if (pairAt(s, i, '/', '/')) {
        const qsizetype eol = s.indexOf('\n', i);
        return eol < 0 ? s.size() : eol;
    }
    if (pairAt(s, i, '/', '*')) {
        const qsizetype end = s.indexOf("*/", i + 2);
        return end < 0 ? -1 : end + 2;
    }
    return i;
}

/** Past a "..." or '...' literal starting at i (it ends at its quote or the line's end). */
qsizetype skipLiteral(const QByteArray &s, qsizetype i)
{
    const char quote = s.at(i++);
    while (i < s.size() && s.at(i) != quote && s.at(i) != '\n') {
        i += s.at(i) == '\\' ? 2 : 1;
    }
    return i < s.size() && s.at(i) == quote ? i + 1 : i;
}

} // namespace

NvrtcJob NvrtcJob::headerPrefix() const
{
    // A scanner of the source's start, as the preprocessor sees it: blanks,
    // comments and directive lines (with their continuations) until the
    // first token of code. Where that start has no #include, a precompiled
    // header would hold nothing worth keeping.
    // (A '#' after blanks or comments on its line starts a directive too, so
    // no note of line starts is needed.)
    const QByteArray &s = source;
    qsizetype i = s.startsWith("\xEF\xBB\xBF") ? 3 : 0; // a UTF-8 byte order mark
    bool includes = false;
    while (i < s.size()) {
        const char c = s.at(i);
        const qsizetype past = skipComment(s, i);
        if (past < 0) {
            return {}; // an unterminated comment: no code follows
        }
        if (past > i) {
            i = past;
        } else if (c == '\n' || c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            ++i;
        } else if (c == '#') {
            // One directive: to the end of its line, past escaped newlines,
            // comments (a block comment may span lines) and literals.
            qsizetype j = i + 1;
            while (j < s.size() && (s.at(j) == ' ' || s.at(j) == '\t')) {
                ++j;
            }
            includes = includes || QByteArrayView(s).sliced(j).startsWith("include");
            while (j < s.size() && s.at(j) != '\n') {
                const qsizetype pastComment = skipComment(s, j);
                if (pastComment < 0) {
                    return {};
                }
                if (pastComment > j) {
                    j = pastComment;
                } else if (s.at(j) == '\\' && j + 1 < s.size() && (s.at(j + 1) == '\n' || s.at(j + 1) == '\r')) {
                    const qsizetype eol = s.indexOf('\n', j + 1);
                    j = eol < 0 ? s.size() : eol + 1;
                } else if (s.at(j) == '"' || s.at(j) == '\'') {
                    j = skipLiteral(s, j);
                } else {
                    ++j;
                }
            }
            i = j;
        } else {
            break; // the first token of code
        }
    }
    if (!includes || i >= s.size()) {
        return {};
    }
    NvrtcJob prefix;
    prefix.source = s.left(i);
    prefix.programName = programName;
    prefix.options = options;
    prefix.headers = headers;
    return prefix;
}

Result<NvrtcOutput> runNvrtcJob(const NvrtcApi &nv, const NvrtcJob &job)
{
    std::vector<const char *> headerNames;
    std::vector<const char *> headerSources;
    for (const auto &[name, text] : job.headers) {
        headerNames.push_back(name.constData());
        headerSources.push_back(text.constData());
    }
    nvrtcProgram prog = nullptr;
    if (const nvrtcResult r = nv.nvrtcCreateProgram(&prog, job.source.constData(), job.programName.constData(),
                                                    int(headerNames.size()), headerSources.data(), headerNames.data());
        r != NVRTC_SUCCESS) {
        return nv.error(r, "nvrtcCreateProgram");
    }
    // Destroyed on every path.
    struct ProgramGuard
    {
        const NvrtcApi &nv;
        nvrtcProgram &p;
        ~ProgramGuard() { nv.nvrtcDestroyProgram(&p); }
    } guard{nv, prog};

    QList<QByteArray> exprBytes;
    for (const QString &e : job.nameExpressions) {
        exprBytes << e.toUtf8();
        nv.nvrtcAddNameExpression(prog, exprBytes.last().constData());
    }
    QList<QByteArray> optBytes;
    std::vector<const char *> optPtrs;
    for (const QString &s : job.options) {
        optBytes << s.toUtf8();
    }
    for (const QByteArray &b : optBytes) {
        optPtrs.push_back(b.constData());
    }

    NvrtcOutput out;
    QElapsedTimer timer;
    timer.start();
    const nvrtcResult cr = nv.nvrtcCompileProgram(prog, int(optPtrs.size()), optPtrs.data());
    out.compileMs = double(timer.nsecsElapsed()) / 1e6;
    out.status = int(cr);
    if (nv.nvrtcGetPCHCreateStatus && job.options.contains(QStringLiteral("-pch"))) {
        out.pchStatus = int(nv.nvrtcGetPCHCreateStatus(prog));
    }
    if (cr != NVRTC_SUCCESS) {
        out.statusText = nv.error(cr, "nvrtcCompileProgram").message;
    }

    size_t logSize = 0;
    nv.nvrtcGetProgramLogSize(prog, &logSize);
    QByteArray log(qsizetype(logSize), '\0');
    if (logSize > 0) {
        nv.nvrtcGetProgramLog(prog, log.data());
        log.chop(1); // trailing NUL
    }
    out.log = QString::fromUtf8(log);

    if (cr == NVRTC_SUCCESS) {
        size_t ptxSize = 0;
        nv.nvrtcGetPTXSize(prog, &ptxSize);
        out.ptx.resize(qsizetype(ptxSize));
        nv.nvrtcGetPTX(prog, out.ptx.data());
        if (!out.ptx.isEmpty() && out.ptx.endsWith('\0')) {
            out.ptx.chop(1);
        }
        // A virtual arch (compute_XX) has no cubin; NVRTC then reports an error here, which is fine.
        size_t cubinSize = 0;
        if (nv.nvrtcGetCUBINSize(prog, &cubinSize) == NVRTC_SUCCESS && cubinSize > 0) {
            out.cubin.resize(qsizetype(cubinSize));
            nv.nvrtcGetCUBIN(prog, out.cubin.data());
        }
        for (qsizetype i = 0; i < job.nameExpressions.size(); ++i) {
            const char *name = nullptr;
            if (nv.nvrtcGetLoweredName(prog, exprBytes.at(i).constData(), &name) == NVRTC_SUCCESS && name) {
                out.loweredNames.insert(job.nameExpressions.at(i), QString::fromLatin1(name));
            }
        }
    }
    return out;
}

} // namespace Kp
