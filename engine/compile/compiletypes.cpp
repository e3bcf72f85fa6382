#include "compiletypes.h"

#include "core/printable.h"

#include <QVariantList>

namespace Kp {

namespace {
template<typename T> QVariantList toList(const QList<T> &items)
{
    QVariantList l;
    for (const T &i : items) {
        l.append(i.toVariant());
    }
    return l;
}
template<typename T> QList<T> fromList(const QVariant &v)
{
    QList<T> out;
    for (const QVariant &i : v.toList()) {
        out.append(T::fromVariant(i.toMap()));
    }
    return out;
}
} // namespace

QVariantMap CompileOptions::toVariant() const
{
    return {{QStringLiteral("arch"), arch},
            {QStringLiteral("optLevel"), optLevel},
            {QStringLiteral("fastMath"), fastMath},
            {QStringLiteral("lineInfo"), lineInfo},
            {QStringLiteral("debug"), debug},
            {QStringLiteral("defines"), defines},
            {QStringLiteral("includeDirs"), includeDirs},
            {QStringLiteral("std"), std},
            {QStringLiteral("extra"), extra},
            {QStringLiteral("nameExpressions"), nameExpressions},
            {QStringLiteral("useCache"), useCache},
            {QStringLiteral("pch"), pch}};
}

CompileOptions CompileOptions::fromVariant(const QVariantMap &m)
{
    CompileOptions o;
    o.arch = m.value(QStringLiteral("arch"), o.arch).toString();
    o.optLevel = m.value(QStringLiteral("optLevel"), o.optLevel).toInt();
    o.fastMath = m.value(QStringLiteral("fastMath"), o.fastMath).toBool();
    o.lineInfo = m.value(QStringLiteral("lineInfo"), o.lineInfo).toBool();
    o.debug = m.value(QStringLiteral("debug"), o.debug).toBool();
    o.defines = m.value(QStringLiteral("defines")).toStringList();
    o.includeDirs = m.value(QStringLiteral("includeDirs")).toStringList();
    o.std = m.value(QStringLiteral("std"), o.std).toString();
    o.extra = m.value(QStringLiteral("extra")).toStringList();
    o.nameExpressions = m.value(QStringLiteral("nameExpressions")).toStringList();
    o.useCache = m.value(QStringLiteral("useCache"), o.useCache).toBool();
    o.pch = m.value(QStringLiteral("pch"), o.pch).toBool();
    return o;
}

QString Diagnostic::severityName(Severity s)
{
    switch (s) {
    case Severity::Error: return QStringLiteral("error");
    case Severity::Warning: return QStringLiteral("warning");
    case Severity::Note: return QStringLiteral("note");
    case Severity::Remark: return QStringLiteral("remark");
    }
    return QStringLiteral("error");
}

QVariantMap Diagnostic::toVariant() const
{
    return {{QStringLiteral("file"), file},       {QStringLiteral("line"), line},
            {QStringLiteral("column"), column},   {QStringLiteral("severity"), severityName(severity)},
            {QStringLiteral("message"), message}, {QStringLiteral("number"), number}};
}

Diagnostic Diagnostic::fromVariant(const QVariantMap &m)
{
    Diagnostic d;
    d.file = m.value(QStringLiteral("file")).toString();
    d.line = m.value(QStringLiteral("line")).toInt();
    d.column = m.value(QStringLiteral("column")).toInt();
    const QString s = m.value(QStringLiteral("severity")).toString();
    for (Severity k : {Severity::Error, Severity::Warning, Severity::Note, Severity::Remark}) {
        if (severityName(k) == s) {
            d.severity = k;
        }
    }
    d.message = m.value(QStringLiteral("message")).toString();
    d.number = m.value(QStringLiteral("number"), -1).toInt();
    return d;
}

QVariantMap KernelResources::toVariant() const
{
    return {{QStringLiteral("known"), known},
            {QStringLiteral("registers"), registers},
            {QStringLiteral("spillStores"), spillStores},
            {QStringLiteral("spillLoads"), spillLoads},
            {QStringLiteral("stackBytes"), stackBytes},
            {QStringLiteral("sharedBytes"), sharedBytes},
            {QStringLiteral("constBytes"), constBytes},
            {QStringLiteral("barriers"), barriers}};
}

KernelResources KernelResources::fromVariant(const QVariantMap &m)
{
    KernelResources r;
    r.known = m.value(QStringLiteral("known")).toBool();
    r.registers = m.value(QStringLiteral("registers")).toInt();
    r.spillStores = m.value(QStringLiteral("spillStores")).toInt();
    r.spillLoads = m.value(QStringLiteral("spillLoads")).toInt();
    r.stackBytes = m.value(QStringLiteral("stackBytes")).toInt();
    r.sharedBytes = m.value(QStringLiteral("sharedBytes")).toInt();
    r.constBytes = m.value(QStringLiteral("constBytes")).toInt();
    r.barriers = m.value(QStringLiteral("barriers")).toInt();
    return r;
}

QVariantMap KernelInfo::toVariant() const
{
    QVariantList tps;
    for (const TemplateParam &tp : templateParams) {
        tps.append(QVariantMap{{QStringLiteral("kind"), tp.kind},
                               {QStringLiteral("name"), tp.name},
                               {QStringLiteral("default"), tp.defaultValue}});
    }
    return {{QStringLiteral("name"), name},
            {QStringLiteral("loweredName"), loweredName},
            {QStringLiteral("line"), line},
            {QStringLiteral("externC"), externC},
            {QStringLiteral("isTemplate"), isTemplate},
            {QStringLiteral("templateParams"), tps},
            {QStringLiteral("params"), toList(params)},
            {QStringLiteral("resources"), resources.toVariant()}};
}

KernelInfo KernelInfo::fromVariant(const QVariantMap &m)
{
    KernelInfo k;
    k.name = m.value(QStringLiteral("name")).toString();
    k.loweredName = m.value(QStringLiteral("loweredName")).toString();
    k.line = m.value(QStringLiteral("line")).toInt();
    k.externC = m.value(QStringLiteral("externC")).toBool();
    k.isTemplate = m.value(QStringLiteral("isTemplate")).toBool();
    for (const QVariant &v : m.value(QStringLiteral("templateParams")).toList()) {
        const QVariantMap t = v.toMap();
        k.templateParams.append({t.value(QStringLiteral("kind")).toString(), t.value(QStringLiteral("name")).toString(),
                                 t.value(QStringLiteral("default")).toString()});
    }
    k.params = fromList<KernelParam>(m.value(QStringLiteral("params")));
    k.resources = KernelResources::fromVariant(m.value(QStringLiteral("resources")).toMap());
    return k;
}

int CompileResult::errorCount() const
{
    int n = 0;
    for (const Diagnostic &d : diagnostics) {
        n += d.severity == Diagnostic::Severity::Error;
    }
    return n;
}

int CompileResult::warningCount() const
{
    int n = 0;
    for (const Diagnostic &d : diagnostics) {
        n += d.severity == Diagnostic::Severity::Warning;
    }
    return n;
}

QVariantMap CompileResult::toVariant() const
{
    QVariantList layoutList;
    for (const StructLayout &l : layouts) {
        layoutList << l.toVariant();
    }
    return {{QStringLiteral("ok"), ok},
            {QStringLiteral("log"), log},
            {QStringLiteral("diagnostics"), toList(diagnostics)},
            {QStringLiteral("ptx"), ptx},
            {QStringLiteral("cubin"), cubin},
            {QStringLiteral("kernels"), toList(kernels)},
            {QStringLiteral("arch"), arch},
            {QStringLiteral("nvrtcVersion"), nvrtcVersion},
            {QStringLiteral("nvrtcOptions"), nvrtcOptions},
            {QStringLiteral("compileMs"), compileMs},
            {QStringLiteral("cached"), cached},
            {QStringLiteral("note"), note},
            {QStringLiteral("layouts"), layoutList},
            {QStringLiteral("layoutError"), layoutError}};
}

CompileResult CompileResult::fromVariant(const QVariantMap &m)
{
    CompileResult r;
    r.ok = m.value(QStringLiteral("ok")).toBool();
    r.log = m.value(QStringLiteral("log")).toString();
    r.diagnostics = fromList<Diagnostic>(m.value(QStringLiteral("diagnostics")));
    r.ptx = m.value(QStringLiteral("ptx")).toByteArray();
    r.cubin = m.value(QStringLiteral("cubin")).toByteArray();
    r.kernels = fromList<KernelInfo>(m.value(QStringLiteral("kernels")));
    r.arch = m.value(QStringLiteral("arch")).toString();
    r.nvrtcVersion = m.value(QStringLiteral("nvrtcVersion")).toString();
    r.nvrtcOptions = m.value(QStringLiteral("nvrtcOptions")).toStringList();
    r.compileMs = m.value(QStringLiteral("compileMs")).toDouble();
    r.cached = m.value(QStringLiteral("cached")).toBool();
    r.note = m.value(QStringLiteral("note")).toString();
    for (const QVariant &v : m.value(QStringLiteral("layouts")).toList()) {
        const StructLayout l = StructLayout::fromVariant(v.toMap());
        r.layouts.insert(l.type, l);
    }
    r.layoutError = m.value(QStringLiteral("layoutError")).toString();
    return r;
}

QString Diagnostic::text() const
{
    QString where = file.isEmpty() ? QStringLiteral("kpg") : file;
    if (line > 0) {
        where += QStringLiteral(":%1").arg(line);
        if (column > 0) {
            where += QStringLiteral(":%1").arg(column);
        }
    }
    return printable(where + QStringLiteral(": ") + severityName(severity) + QStringLiteral(": ") + message);
}

} // namespace Kp
