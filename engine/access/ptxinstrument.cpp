#include "access/ptxinstrument.h"

#include <QHash>
#include <QRegularExpression>

namespace Kp {

namespace {

using namespace AccessTraceLayout;

Error accessError(const QString &message)
{
    return Error{QStringLiteral("memory-access map"), Error::Code::BadInput, QString(), message};
}

/** Bytes of one PTX scalar type, 0 when the token is not a type. */
int typeBytes(QStringView t)
{
    static const QHash<QString, int> sizes{
        {QStringLiteral("b8"), 1},    {QStringLiteral("u8"), 1},     {QStringLiteral("s8"), 1},
        {QStringLiteral("b16"), 2},   {QStringLiteral("u16"), 2},    {QStringLiteral("s16"), 2},
        {QStringLiteral("f16"), 2},   {QStringLiteral("bf16"), 2},   {QStringLiteral("b32"), 4},
        {QStringLiteral("u32"), 4},   {QStringLiteral("s32"), 4},    {QStringLiteral("f32"), 4},
        {QStringLiteral("f16x2"), 4}, {QStringLiteral("bf16x2"), 4}, {QStringLiteral("b64"), 8},
        {QStringLiteral("u64"), 8},   {QStringLiteral("s64"), 8},    {QStringLiteral("f64"), 8},
        {QStringLiteral("b128"), 16},
    };
    return sizes.value(t.toString(), 0);
}

/** The C name of what a lane accesses, from the PTX type and vector width. */
QString typeNameOf(const QString &type, int vector)
{
    static const QHash<QString, QString> names{
        {QStringLiteral("f32"), QStringLiteral("float")},    {QStringLiteral("f64"), QStringLiteral("double")},
        {QStringLiteral("f16"), QStringLiteral("half")},     {QStringLiteral("bf16"), QStringLiteral("bfloat16")},
        {QStringLiteral("s32"), QStringLiteral("int")},      {QStringLiteral("u32"), QStringLiteral("uint")},
        {QStringLiteral("s64"), QStringLiteral("longlong")}, {QStringLiteral("u64"), QStringLiteral("ulonglong")},
        {QStringLiteral("s8"), QStringLiteral("char")},      {QStringLiteral("u8"), QStringLiteral("uchar")},
        {QStringLiteral("s16"), QStringLiteral("short")},    {QStringLiteral("u16"), QStringLiteral("ushort")},
        {QStringLiteral("f16x2"), QStringLiteral("half2")},  {QStringLiteral("bf16x2"), QStringLiteral("bfloat162")},
    };
    const QString name = names.value(type);
    if (!name.isEmpty() && vector == 1) {
        return name;
    }
    if (!name.isEmpty() && !name.endsWith(QLatin1Char('2')) && name != QLatin1String("half") &&
        name != QLatin1String("bfloat16")) {
        return name + QString::number(vector); // float4, int2, double2
    }
    return QStringLiteral("%1-byte word").arg(typeBytes(type) * vector);
}

struct Address
{
    enum class Base { Register, Symbol, Immediate } base = Base::Register;
    QString name; ///< register or symbol
    qint64 offset = 0;
};

/** A PTX integer: decimal or 0x hexadecimal. */
bool parseInteger(const QString &text, qint64 *out)
{
    bool ok = false;
    *out = text.startsWith(QLatin1String("0x"), Qt::CaseInsensitive) ? text.mid(2).toLongLong(&ok, 16)
                                                                     : text.toLongLong(&ok, 10);
    return ok;
}

/** Reads "[%rd4+8]", "[%rd3+-4]", "[tile+16]", "[1024]"; false when the form is not one of those. */
bool parseAddress(QString text, Address *out)
{
    text = text.trimmed();
    if (text.isEmpty()) {
        return false;
    }
    // The base ends at the first '+' or '-' after its first character.
    qsizetype split = -1;
    for (qsizetype i = 1; i < text.size(); ++i) {
        if (text[i] == QLatin1Char('+') || text[i] == QLatin1Char('-')) {
            split = i;
            break;
        }
    }
    QString base = (split < 0 ? text : text.left(split)).trimmed();
    if (split >= 0) {
        QString off = text.mid(split).remove(QLatin1Char(' '));
        bool negative = false;
        while (!off.isEmpty() && (off[0] == QLatin1Char('+') || off[0] == QLatin1Char('-'))) {
            negative = negative != (off[0] == QLatin1Char('-'));
            off.remove(0, 1);
        }
        qint64 v = 0;
        if (!parseInteger(off, &v)) {
            return false;
        }
        out->offset = negative ? -v : v;
    }
    static const QRegularExpression reg(QStringLiteral("^%[A-Za-z_$][\\w$]*$"));
    static const QRegularExpression sym(QStringLiteral("^[A-Za-z_$][\\w$]*$"));
    if (reg.match(base).hasMatch()) {
        out->base = Address::Base::Register;
    } else if (sym.match(base).hasMatch()) {
        out->base = Address::Base::Symbol;
    } else {
        qint64 v = 0;
        if (!parseInteger(base, &v)) {
            return false;
        }
        out->base = Address::Base::Immediate;
        out->offset += v;
        base.clear();
    }
    out->name = base;
    return true;
}

/** The register's width in bits from the function's .reg declarations ("%rd" of ".reg .b64 %rd<32>"); 0 unknown. */
int registerBits(const QHash<QString, int> &declared, const QString &reg)
{
    if (const auto it = declared.constFind(reg); it != declared.cend()) {
        return *it;
    }
    // "%rd13" belongs to the "%rd<N>" family: strip the trailing digits.
    qsizetype end = reg.size();
    while (end > 1 && reg[end - 1].isDigit()) {
        --end;
    }
    return declared.value(reg.left(end), 0);
}

/** The instrumentation before one access (see the record layout in ptxinstrument.h). */
QString recordBlock(const AccessSite &site, const Address &a, int addressBits, const QString &guard,
                    const QString &indent)
{
    QStringList l;
    l << QStringLiteral("{ // memory-access trace, site %1").arg(site.id);
    l << QStringLiteral(".reg .b32 %kpa<10>;") << QStringLiteral(".reg .b64 %kpd<7>;")
      << QStringLiteral(".reg .pred %kpp<5>;");
    // The lane's address, as a 64-bit number.
    switch (a.base) {
    case Address::Base::Register:
        l << (addressBits == 32 ? QStringLiteral("cvt.u64.u32 %kpd0, %1;").arg(a.name)
                                : QStringLiteral("mov.u64 %kpd0, %1;").arg(a.name));
        break;
    case Address::Base::Symbol: l << QStringLiteral("mov.u64 %kpd0, %1;").arg(a.name); break;
    case Address::Base::Immediate: l << QStringLiteral("mov.u64 %kpd0, 0;"); break;
    }
    if (a.offset != 0) {
        l << QStringLiteral("add.s64 %kpd0, %kpd0, %1;").arg(a.offset);
    }
    if (site.space == AccessSpace::Shared) {
        l << QStringLiteral("or.b64 %kpd0, %kpd0, 0x%1;").arg(kSharedTag, 16, 16, QLatin1Char('0'));
    } else if (site.space == AccessSpace::Generic) {
        // A generic pointer may point into shared memory or the stack: the
        // record says which, so bank conflicts are computed on the shared ones.
        l << QStringLiteral("isspacep.shared %kpp3, %kpd0;") << QStringLiteral("isspacep.local %kpp4, %kpd0;")
          << QStringLiteral("@%kpp3 cvta.to.shared.u64 %kpd0, %kpd0;")
          << QStringLiteral("@%kpp3 or.b64 %kpd0, %kpd0, 0x%1;").arg(kSharedTag, 16, 16, QLatin1Char('0'))
          << QStringLiteral("@%kpp4 or.b64 %kpd0, %kpd0, 0x%1;").arg(kLocalTag, 16, 16, QLatin1Char('0'));
    }
    // Which lanes make the access: all active ones, or those whose guard holds.
    l << QStringLiteral("activemask.b32 %kpa0;");
    l << (guard.isEmpty() ? QStringLiteral("mov.b32 %kpa1, %kpa0;")
                          : QStringLiteral("vote.sync.ballot.b32 %kpa1, %1, %kpa0;").arg(guard));
    // The lowest of them reserves the warp's record and shares its index.
    l << QStringLiteral("brev.b32 %kpa2, %kpa1;") << QStringLiteral("bfind.shiftamt.u32 %kpa2, %kpa2;")
      << QStringLiteral("mov.u32 %kpa3, %laneid;") << QStringLiteral("setp.eq.u32 %kpp1, %kpa3, %kpa2;")
      << QStringLiteral("mov.u64 %kpd2, 0;")
      << QStringLiteral("@%kpp1 atom.global.add.u64 %kpd2, [%1], 1;").arg(QLatin1String(kCountSymbol))
      << QStringLiteral("mov.b64 {%kpa4, %kpa5}, %kpd2;")
      << QStringLiteral("shfl.sync.idx.b32 %kpa4, %kpa4, %kpa2, 31, %kpa0;")
      << QStringLiteral("shfl.sync.idx.b32 %kpa5, %kpa5, %kpa2, 31, %kpa0;")
      << QStringLiteral("mov.b64 %kpd2, {%kpa4, %kpa5};");
    // Records past the capacity are counted, not written.
    l << QStringLiteral("ld.global.u64 %kpd3, [%1];").arg(QLatin1String(kCapacitySymbol));
    l << (guard.isEmpty() ? QStringLiteral("setp.lt.u64 %kpp2, %kpd2, %kpd3;")
                          : QStringLiteral("setp.lt.and.u64 %kpp2, %kpd2, %kpd3, %1;").arg(guard));
    l << QStringLiteral("ld.global.u64 %kpd4, [%1];").arg(QLatin1String(kBufferSymbol))
      << QStringLiteral("mad.lo.u64 %kpd5, %kpd2, %1, %kpd4;").arg(kRecordBytes)
      << QStringLiteral("mul.wide.u32 %kpd6, %kpa3, 8;") << QStringLiteral("add.s64 %kpd6, %kpd6, %kpd5;")
      << QStringLiteral("@%kpp2 st.global.u64 [%kpd6+%1], %kpd0;").arg(kLaneOffset);
    // The leader writes the header: site, lanes, block, warp of the block.
    l << QStringLiteral("and.pred %kpp1, %kpp1, %kpp2;") << QStringLiteral("mov.u32 %kpa6, %1;").arg(site.id)
      << QStringLiteral("@%kpp1 st.global.u32 [%kpd5], %kpa6;")
      << QStringLiteral("@%kpp1 st.global.u32 [%kpd5+4], %kpa1;");
    const char *axes[] = {"x", "y", "z"};
    for (int i = 0; i < 3; ++i) {
        l << QStringLiteral("mov.u32 %kpa6, %ctaid.%1;").arg(QLatin1String(axes[i]))
          << QStringLiteral("@%kpp1 st.global.u32 [%kpd5+%1], %kpa6;").arg(8 + 4 * i);
    }
    l << QStringLiteral("mov.u32 %kpa7, %tid.z;") << QStringLiteral("mov.u32 %kpa8, %ntid.y;")
      << QStringLiteral("mov.u32 %kpa9, %tid.y;") << QStringLiteral("mad.lo.u32 %kpa7, %kpa7, %kpa8, %kpa9;")
      << QStringLiteral("mov.u32 %kpa8, %ntid.x;") << QStringLiteral("mov.u32 %kpa9, %tid.x;")
      << QStringLiteral("mad.lo.u32 %kpa7, %kpa7, %kpa8, %kpa9;") << QStringLiteral("shr.u32 %kpa7, %kpa7, 5;")
      << QStringLiteral("@%kpp1 st.global.u32 [%kpd5+20], %kpa7;");
    l << QStringLiteral("}");
    QString out;
    for (const QString &s : l) {
        out += indent + s + QLatin1Char('\n');
    }
    return out;
}

} // namespace

Result<PtxInstrumented> instrumentPtx(const QByteArray &ptxBytes)
{
    const QString ptx = QString::fromUtf8(ptxBytes);
    const QStringList lines = ptx.split(QLatin1Char('\n'));
    static const QRegularExpression fileRe(QStringLiteral("^\\s*\\.file\\s+(\\d+)\\s+\"([^\"]*)\""));
    static const QRegularExpression locRe(QStringLiteral("^\\s*\\.loc\\s+(\\d+)\\s+(\\d+)"));
    static const QRegularExpression funcRe(
        QStringLiteral("\\.(?:entry|func)\\s+(?:\\([^)]*\\)\\s*)?([A-Za-z_$][\\w$]*)"));
    static const QRegularExpression regDeclRe(QStringLiteral("^\\s*\\.reg\\s+\\.(\\w+)\\s+([^;]+);"));
    static const QRegularExpression guardRe(QStringLiteral("^@(!?%[\\w$]+)\\s+"));
    static const QRegularExpression addressRe(QStringLiteral("\\[([^\\]]*)\\]"));
    static const QRegularExpression versionRe(QStringLiteral("^\\s*\\.version\\s+(\\d+)\\.(\\d+)"));

    QHash<int, QString> files;
    bool address64 = false;
    int version = 0;
    for (const QString &line : lines) {
        if (const auto m = fileRe.match(line); m.hasMatch()) {
            files.insert(m.captured(1).toInt(), m.captured(2));
        } else if (line.trimmed().startsWith(QLatin1String(".address_size"))) {
            address64 = line.contains(QLatin1String("64"));
        } else if (const auto v = versionRe.match(line); v.hasMatch()) {
            version = v.captured(1).toInt() * 10 + v.captured(2).toInt();
        }
    }
    if (!address64) {
        return accessError(QStringLiteral("the memory-access map needs 64-bit PTX (.address_size 64); this module "
                                          "has none"));
    }
    if (version < 62) {
        return accessError(QStringLiteral("the memory-access map needs PTX 6.2 or newer (activemask); this module is "
                                          "PTX %1.%2")
                               .arg(version / 10)
                               .arg(version % 10));
    }

    PtxInstrumented out;
    QString text;
    text.reserve(ptx.size() * 3);
    int depth = 0;
    QString function;
    QHash<QString, int> regBits;
    int locFile = 0;
    int locLine = 0;
    bool declared = false;
    for (qsizetype n = 0; n < lines.size(); ++n) {
        const QString &line = lines[n];
        const QString code = line.left(line.indexOf(QLatin1String("//"))).trimmed();
        const auto emitLine = [&] {
            text += line;
            if (n + 1 < lines.size()) {
                text += QLatin1Char('\n');
            }
        };
        if (!declared && code.startsWith(QLatin1String(".address_size"))) {
            emitLine();
            text +=
                QStringLiteral("\n// The memory-access trace's state (Kernel Playground, docs/memory-access.md).\n");
            for (const char *s : {kBufferSymbol, kCapacitySymbol, kCountSymbol}) {
                text += QStringLiteral(".visible .global .align 8 .u64 %1;\n").arg(QLatin1String(s));
            }
            declared = true;
            continue;
        }
        if (code == QLatin1String("{")) {
            ++depth;
            emitLine();
            continue;
        }
        if (code == QLatin1String("}")) {
            depth = qMax(0, depth - 1);
            emitLine();
            continue;
        }
        if (depth == 0) {
            if (const auto m = funcRe.match(code); m.hasMatch()) {
                function = m.captured(1);
                regBits.clear();
                locFile = 0;
                locLine = 0;
            }
            emitLine();
            continue;
        }
        if (const auto m = locRe.match(code); m.hasMatch()) {
            locFile = m.captured(1).toInt();
            locLine = m.captured(2).toInt();
            emitLine();
            continue;
        }
        if (const auto m = regDeclRe.match(code); m.hasMatch()) {
            const int bits = typeBytes(m.captured(1)) * 8;
            for (QString name : m.captured(2).split(QLatin1Char(','))) {
                name = name.trimmed();
                if (const qsizetype lt = name.indexOf(QLatin1Char('<')); lt >= 0) {
                    name.truncate(lt);
                }
                regBits.insert(name, bits);
            }
            emitLine();
            continue;
        }
        // An instruction: [@guard] opcode operands;
        QString rest = code;
        QString guard;
        if (const auto g = guardRe.match(rest); g.hasMatch()) {
            guard = g.captured(1);
            rest = rest.mid(g.capturedLength());
        }
        const qsizetype space = rest.indexOf(QRegularExpression(QStringLiteral("\\s")));
        const QString opcode = space < 0 ? rest : rest.left(space);
        const QStringList parts = opcode.split(QLatin1Char('.'));
        const QString base = parts.value(0);
        if (base != QLatin1String("ld") && base != QLatin1String("ldu") && base != QLatin1String("st") &&
            base != QLatin1String("atom") && base != QLatin1String("red")) {
            emitLine();
            continue;
        }
        AccessSite site;
        site.kind = base == QLatin1String("st")                                       ? AccessKind::Store
                    : (base == QLatin1String("atom") || base == QLatin1String("red")) ? AccessKind::Atomic
                                                                                      : AccessKind::Load;
        site.space = AccessSpace::Generic;
        bool skip = false;
        int width = 0;
        int vector = 1;
        QString type;
        for (qsizetype i = 1; i < parts.size(); ++i) {
            const QString &p = parts[i];
            if (p == QLatin1String("param") || p == QLatin1String("local") || p == QLatin1String("const") ||
                p == QLatin1String("async") || p.startsWith(QLatin1String("shared::cluster")) ||
                p == QLatin1String("tex")) {
                skip = true;
            } else if (p == QLatin1String("global")) {
                site.space = AccessSpace::Global;
            } else if (p == QLatin1String("shared") || p.startsWith(QLatin1String("shared::cta"))) {
                site.space = AccessSpace::Shared;
            } else if (p == QLatin1String("v2") || p == QLatin1String("v4") || p == QLatin1String("v8")) {
                vector = p.mid(1).toInt();
            } else if (const int b = typeBytes(p); b > 0) {
                width = b;
                type = p;
            }
        }
        if (skip) {
            // Parameters are not memory a user reads; locals, constants and
            // async copies are left out of the map (see ptxinstrument.h).
            if (!opcode.contains(QLatin1String("param"))) {
                ++out.skipped;
            }
            emitLine();
            continue;
        }
        const auto am = addressRe.match(rest);
        Address address;
        if (width == 0 || !am.hasMatch() || !parseAddress(am.captured(1), &address)) {
            return accessError(
                QStringLiteral("the memory-access map cannot read PTX line %1: %2").arg(n + 1).arg(code));
        }
        int bits = 64;
        if (address.base == Address::Base::Register) {
            bits = registerBits(regBits, address.name);
            if (bits != 32 && bits != 64) {
                return accessError(QStringLiteral("the memory-access map cannot tell the width of register %1 on PTX "
                                                  "line %2")
                                       .arg(address.name)
                                       .arg(n + 1));
            }
        }
        site.id = int(out.sites.size());
        site.function = function;
        site.sourceFile = locFile;
        site.sourcePath = files.value(locFile);
        site.sourceLine = locLine;
        site.ptxLine = int(n + 1);
        site.width = width * vector;
        site.typeName = typeNameOf(type, vector);
        site.instruction = code;
        const qsizetype firstNonSpace = line.indexOf(QRegularExpression(QStringLiteral("\\S")));
        text += recordBlock(site, address, bits, guard, line.left(qMax<qsizetype>(0, firstNonSpace)));
        emitLine();
        out.sites << site;
    }
    if (!declared) {
        return accessError(QStringLiteral("the memory-access map found no .address_size line to declare its state "
                                          "after"));
    }
    out.ptx = text.toUtf8();
    return out;
}

} // namespace Kp
