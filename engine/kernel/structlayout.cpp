#include "structlayout.h"

#include <QRegularExpression>

#include <cstring>
#include <functional>

namespace Kp {

namespace {

Error layoutError(const QString &message, const QString &path = QString())
{
    Error e{QStringLiteral("layout"), Error::Code::BadInput, {}, message};
    e.path = path;
    return e;
}

// Comments, string and character literals and preprocessor lines become
// spaces, so braces and semicolons inside them do not count.
QString blanked(const QString &src)
{
    QString out = src;
    const qsizetype n = src.size();
    bool lineStart = true;
    for (qsizetype i = 0; i < n;) {
        const QChar c = src[i];
        if (lineStart && c == QLatin1Char('#')) {
            // A directive, with its backslash continuations.
            while (i < n && src[i] != QLatin1Char('\n')) {
                if (src[i] == QLatin1Char('\\') && i + 1 < n && src[i + 1] == QLatin1Char('\n')) {
                    out[i] = QLatin1Char(' ');
                    i += 2;
                    continue;
                }
                out[i++] = QLatin1Char(' ');
            }
            continue;
        }
        if (c == QLatin1Char('/') && i + 1 < n && src[i + 1] == QLatin1Char('/')) {
            while (i < n && src[i] != QLatin1Char('\n')) {
                out[i++] = QLatin1Char(' ');
            }
            continue;
        }
        if (c == QLatin1Char('/') && i + 1 < n && src[i + 1] == QLatin1Char('*')) {
            out[i++] = QLatin1Char(' ');
            out[i++] = QLatin1Char(' ');
            while (i < n && !(src[i] == QLatin1Char('*') && i + 1 < n && src[i + 1] == QLatin1Char('/'))) {
                if (src[i] != QLatin1Char('\n')) {
                    out[i] = QLatin1Char(' ');
                }
                ++i;
            }
            for (int k = 0; k < 2 && i < n; ++k) {
                out[i++] = QLatin1Char(' ');
            }
            continue;
        }
        if (c == QLatin1Char('"') || c == QLatin1Char('\'')) {
            out[i++] = QLatin1Char(' ');
            while (i < n && src[i] != c && src[i] != QLatin1Char('\n')) {
                if (src[i] == QLatin1Char('\\') && i + 1 < n) {
                    out[i++] = QLatin1Char(' ');
                }
                out[i++] = QLatin1Char(' ');
            }
            if (i < n && src[i] == c) {
                out[i++] = QLatin1Char(' ');
            }
            continue;
        }
        if (c == QLatin1Char('\n')) {
            lineStart = true;
        } else if (!c.isSpace()) {
            lineStart = false;
        }
        ++i;
    }
    return out;
}

// The position after the brace that closes the one at open, or -1.
qsizetype matchBrace(const QString &s, qsizetype open)
{
    int depth = 0;
    for (qsizetype i = open; i < s.size(); ++i) {
        if (s[i] == QLatin1Char('{')) {
            ++depth;
        } else if (s[i] == QLatin1Char('}') && --depth == 0) {
            return i + 1;
        }
    }
    return -1;
}

// Splits at top-level (not inside (), [], {}, <>) occurrences of sep.
QStringList splitTop(const QString &s, QChar sep)
{
    QStringList parts;
    int depth = 0;
    qsizetype start = 0;
    for (qsizetype i = 0; i < s.size(); ++i) {
        const QChar c = s[i];
        if (c == QLatin1Char('(') || c == QLatin1Char('[') || c == QLatin1Char('{') || c == QLatin1Char('<')) {
            ++depth;
        } else if (c == QLatin1Char(')') || c == QLatin1Char(']') || c == QLatin1Char('}') || c == QLatin1Char('>')) {
            --depth;
        } else if (c == sep && depth == 0) {
            parts << s.mid(start, i - start);
            start = i + 1;
        }
    }
    parts << s.mid(start);
    return parts;
}

// Members of a struct body: data members only (functions, types, static
// members and access labels are skipped).
void parseBody(const QString &body, StructDecl *d)
{
    static const QRegularExpression label(QStringLiteral("^\\s*(public|private|protected)\\s*:(?!:)"));
    static const QRegularExpression declarator(
        QStringLiteral("^\\s*([*&\\s]*)\\s*([A-Za-z_][A-Za-z0-9_]*)\\s*((?:\\[[^\\]]*\\]\\s*)*)$"));
    static const QRegularExpression alignSpec(
        QStringLiteral("\\b(__align__|alignas|__builtin_align__)\\s*\\([^)]*\\)"));
    // Nested struct or union definitions are cut out first: a named one is a
    // type only; an anonymous one holds members we cannot name.
    QString flat;
    for (qsizetype i = 0; i < body.size(); ++i) {
        if (body[i] == QLatin1Char('{')) {
            const qsizetype end = matchBrace(body, i);
            if (end < 0) {
                break;
            }
            const QString before = flat.section(QLatin1Char(';'), -1).trimmed();
            static const QRegularExpression anon(QStringLiteral("^(union|struct)\\s*$"));
            if (anon.match(before).hasMatch()) {
                d->unsupported = QStringLiteral("it has an anonymous %1").arg(before);
            }
            flat += QStringLiteral(" {} ");
            i = end - 1;
            continue;
        }
        flat += body[i];
    }
    for (QString decl : splitTop(flat, QLatin1Char(';'))) {
        QRegularExpressionMatch lm;
        while ((lm = label.match(decl)).hasMatch()) {
            decl = decl.mid(lm.capturedEnd());
        }
        decl.remove(alignSpec);
        decl = decl.simplified();
        if (decl.isEmpty()) {
            continue;
        }
        static const QRegularExpression skipped(QStringLiteral(
            "^(static|typedef|using|friend|template|enum|struct\\s+\\w+\\s*\\{|union\\s+\\w+\\s*\\{)\\b"));
        if (skipped.match(decl).hasMatch() || decl.contains(QLatin1Char('('))) {
            continue; // not a data member (or a member function)
        }
        if (decl.contains(QLatin1String("{}"))) {
            continue; // a nested type definition; anonymous ones are flagged above
        }
        // A default member initializer does not move the member.
        QStringList declarators = splitTop(decl, QLatin1Char(','));
        QString type;
        for (qsizetype k = 0; k < declarators.size(); ++k) {
            QString part = declarators[k];
            const qsizetype eq = part.indexOf(QLatin1Char('='));
            if (eq >= 0) {
                part = part.left(eq);
            }
            const qsizetype brace = part.indexOf(QLatin1Char('{'));
            if (brace >= 0) {
                part = part.left(brace);
            }
            part = part.trimmed();
            // A bit-field's width: offsetof cannot name it, so the struct cannot be written.
            static const QRegularExpression bitField(QStringLiteral("(?<!:):(?!:)\\s*[^:]*$"));
            if (const QRegularExpressionMatch bm = bitField.match(part); bm.hasMatch()) {
                part = part.left(bm.capturedStart()).trimmed();
                static const QRegularExpression lastName(QStringLiteral("([A-Za-z_][A-Za-z0-9_]*)\\s*$"));
                if (d->unsupported.isEmpty()) {
                    d->unsupported = QStringLiteral("member '%1' is a bit-field").arg(lastName.match(part).captured(1));
                }
            }
            if (k == 0) {
                // "const float *x[4]": the name is the last identifier before any [.
                static const QRegularExpression first(
                    QStringLiteral("^(.*?)([*&\\s]*)\\b([A-Za-z_][A-Za-z0-9_]*)\\s*((?:\\[[^\\]]*\\]\\s*)*)$"));
                const QRegularExpressionMatch m = first.match(part);
                if (!m.hasMatch() || m.captured(1).trimmed().isEmpty()) {
                    continue;
                }
                type = m.captured(1).simplified();
                type.remove(QRegularExpression(QStringLiteral("\\b(const|volatile|mutable|__restrict__)\\b")));
                type = type.simplified();
                QString stars = m.captured(2);
                stars.remove(QLatin1Char(' '));
                d->members << StructDecl::Member{stars.isEmpty() ? type : type + QLatin1Char(' ') + stars,
                                                 m.captured(3), !m.captured(4).isEmpty()};
                continue;
            }
            const QRegularExpressionMatch m = declarator.match(part);
            if (!m.hasMatch() || type.isEmpty()) {
                continue;
            }
            QString stars = m.captured(1);
            stars.remove(QLatin1Char(' '));
            d->members << StructDecl::Member{stars.isEmpty() ? type : type + QLatin1Char(' ') + stars, m.captured(2),
                                             !m.captured(3).isEmpty()};
        }
    }
}

QString unqualified(const QString &type)
{
    QString t = type.simplified();
    t.remove(QRegularExpression(QStringLiteral("\\b(const|volatile|struct|class)\\b")));
    t = t.simplified();
    const qsizetype colons = t.lastIndexOf(QLatin1String("::"));
    return colons >= 0 ? t.mid(colons + 2) : t;
}

const StructDecl *findDecl(const QList<StructDecl> &decls, const QString &type)
{
    const QString name = unqualified(type);
    for (const StructDecl &d : decls) {
        if (d.name == name) {
            return &d;
        }
    }
    return nullptr;
}

} // namespace

QList<StructDecl> findStructs(const QString &source)
{
    const QString s = blanked(source);
    QList<StructDecl> out;
    // "struct [attributes] Name [: bases] {" and "typedef struct [Tag] { ... } Name;".
    static const QRegularExpression head(QStringLiteral("\\b(typedef\\s+)?(struct|class)\\s+((?:(?:__align__|alignas|__"
                                                        "builtin_align__|__device_builtin__)\\s*(?:\\([^)]*\\))?\\s*)*)"
                                                        "([A-Za-z_][A-Za-z0-9_]*)?\\s*(?::[^{;]*)?\\{"));
    for (auto it = head.globalMatch(s); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        const qsizetype open = m.capturedEnd() - 1;
        const qsizetype end = matchBrace(s, open);
        if (end < 0) {
            continue;
        }
        StructDecl d;
        d.name = m.captured(4);
        if (!m.captured(1).isEmpty()) {
            static const QRegularExpression alias(QStringLiteral("^\\s*([A-Za-z_][A-Za-z0-9_]*)\\s*;"));
            const QRegularExpressionMatch a = alias.match(s.mid(end, 200));
            if (a.hasMatch()) {
                d.name = a.captured(1);
            }
        }
        if (d.name.isEmpty()) {
            continue;
        }
        parseBody(s.mid(open + 1, end - open - 2), &d);
        out << d;
    }
    return out;
}

QVariantMap StructLayout::toVariant() const
{
    QVariantList fs;
    for (const StructField &f : fields) {
        fs << QVariantMap{{QStringLiteral("name"), f.name},
                          {QStringLiteral("type"), f.type},
                          {QStringLiteral("offset"), f.offset},
                          {QStringLiteral("bytes"), f.bytes},
                          {QStringLiteral("count"), f.count}};
    }
    return {{QStringLiteral("type"), type},
            {QStringLiteral("size"), size},
            {QStringLiteral("align"), align},
            {QStringLiteral("fields"), fs},
            {QStringLiteral("unsupported"), unsupported}};
}

StructLayout StructLayout::fromVariant(const QVariantMap &m)
{
    StructLayout l;
    l.type = m.value(QStringLiteral("type")).toString();
    l.size = m.value(QStringLiteral("size")).toLongLong();
    l.align = m.value(QStringLiteral("align")).toLongLong();
    l.unsupported = m.value(QStringLiteral("unsupported")).toString();
    for (const QVariant &v : m.value(QStringLiteral("fields")).toList()) {
        const QVariantMap f = v.toMap();
        l.fields << StructField{f.value(QStringLiteral("name")).toString(), f.value(QStringLiteral("type")).toString(),
                                f.value(QStringLiteral("offset")).toLongLong(),
                                f.value(QStringLiteral("bytes")).toLongLong(),
                                f.value(QStringLiteral("count")).toLongLong()};
    }
    return l;
}

QString layoutProbeSource(const QString &source, const QStringList &types, QVariantMap *plan)
{
    const QList<StructDecl> decls = findStructs(source);
    // Every struct reachable from the parameter types, each once, nested ones too.
    QStringList queue = types;
    QStringList probed;
    QVariantList entries;
    QStringList values;
    for (qsizetype q = 0; q < queue.size(); ++q) {
        const QString type = queue[q].simplified();
        if (probed.contains(type)) {
            continue;
        }
        const StructDecl *d = findDecl(decls, type);
        if (!d) {
            continue;
        }
        probed << type;
        QVariantList members;
        values << QStringLiteral("sizeof(%1)").arg(type) << QStringLiteral("alignof(%1)").arg(type);
        // A struct that cannot be written gets only its size: offsetof of a
        // bit-field would fail the whole probe, and with it every other struct.
        const QList<StructDecl::Member> none;
        for (const StructDecl::Member &m : d->unsupported.isEmpty() ? d->members : none) {
            // offsetof spelled out: NVRTC has no __builtin_offsetof and no <cstddef> of its own.
            const QString member = QStringLiteral("(((%1 *)0)->%2)").arg(type, m.name);
            values << QStringLiteral("(unsigned long long)((char *)&%1 - (char *)0)").arg(member)
                   << QStringLiteral("sizeof(%1)").arg(member)
                   << (m.isArray ? QStringLiteral("sizeof(%1) / sizeof(*(%2 *)0)")
                                       .arg(member, QString(m.type).remove(QLatin1Char('&')))
                                 : QStringLiteral("1"));
            members << QVariantMap{{QStringLiteral("name"), m.name}, {QStringLiteral("type"), m.type}};
            if (!m.type.contains(QLatin1Char('*')) && findDecl(decls, m.type)) {
                queue << m.type;
            }
        }
        entries << QVariantMap{{QStringLiteral("type"), type},
                               {QStringLiteral("members"), members},
                               {QStringLiteral("unsupported"), d->unsupported}};
    }
    plan->insert(QStringLiteral("entries"), entries);
    if (probed.isEmpty()) {
        return QString();
    }
    values << QStringLiteral("0x6b70676c61796f75ull"); // an end marker: the array must not be cut short
    return source + QStringLiteral("\n#line 1 \"<layout probe>\"\nextern \"C\" __device__ const unsigned long long "
                                   "%1[] = {\n    %2};\n")
                        .arg(QLatin1String(kLayoutProbeSymbol), values.join(QStringLiteral(",\n    ")));
}

Result<QHash<QString, StructLayout>> readLayoutProbe(const QByteArray &ptx, const QVariantMap &plan)
{
    // NVRTC writes the array as bytes (".b8 name[N] = {b0, b1, ...}") or as
    // 64-bit words (".u64 name[N] = {...}"); zeros at the end may be left out.
    const QRegularExpression re(QStringLiteral("\\.(b8|u64|b64)\\s+%1\\[(\\d+)\\]\\s*=\\s*\\{([^}]*)\\}")
                                    .arg(QRegularExpression::escape(QLatin1String(kLayoutProbeSymbol))));
    const QRegularExpressionMatch m = re.match(QString::fromLatin1(ptx));
    if (!m.hasMatch()) {
        return layoutError(QStringLiteral("the layout probe's array is not in the PTX"));
    }
    const bool bytes = m.captured(1) == QLatin1String("b8");
    const qint64 declared = m.captured(2).toLongLong();
    QList<quint64> items;
    for (const QString &t : m.captured(3).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const quint64 v = t.trimmed().toULongLong(&ok, 0);
        if (!ok) {
            return layoutError(QStringLiteral("the layout probe's array holds '%1'").arg(t.trimmed()));
        }
        items << v;
    }
    while (items.size() < declared) {
        items << 0;
    }
    QList<quint64> words;
    if (bytes) {
        for (qsizetype i = 0; i + 8 <= items.size(); i += 8) {
            quint64 w = 0;
            for (int b = 7; b >= 0; --b) {
                w = (w << 8) | (items[i + b] & 0xff);
            }
            words << w;
        }
    } else {
        words = items;
    }
    if (words.isEmpty() || words.back() != 0x6b70676c61796f75ull) {
        return layoutError(QStringLiteral("the layout probe's array lacks its end marker"));
    }
    QHash<QString, StructLayout> out;
    qsizetype at = 0;
    const auto next = [&]() -> qint64 { return at < words.size() - 1 ? qint64(words[at++]) : -1; };
    for (const QVariant &ev : plan.value(QStringLiteral("entries")).toList()) {
        const QVariantMap e = ev.toMap();
        StructLayout l;
        l.type = e.value(QStringLiteral("type")).toString();
        l.unsupported = e.value(QStringLiteral("unsupported")).toString();
        l.size = next();
        l.align = next();
        for (const QVariant &mv : e.value(QStringLiteral("members")).toList()) {
            const QVariantMap mm = mv.toMap();
            StructField f;
            f.name = mm.value(QStringLiteral("name")).toString();
            f.type = mm.value(QStringLiteral("type")).toString();
            f.offset = next();
            f.bytes = next();
            f.count = next();
            if (f.count < 1 || f.offset < 0 || f.bytes < 0) {
                return layoutError(QStringLiteral("the layout probe's array is shorter than its plan"));
            }
            l.fields << f;
        }
        if (l.size < 0 || l.align < 0) {
            return layoutError(QStringLiteral("the layout probe's array is shorter than its plan"));
        }
        out.insert(l.type, l);
    }
    return out;
}

Result<QList<StructLeaf>> structLeaves(const QString &type, const QHash<QString, StructLayout> &layouts)
{
    const auto findLayout = [&](const QString &t) -> const StructLayout * {
        const auto it = layouts.constFind(t.simplified());
        if (it != layouts.constEnd()) {
            return &*it;
        }
        const QString u = unqualified(t);
        for (const StructLayout &l : layouts) {
            if (unqualified(l.type) == u) {
                return &l;
            }
        }
        return nullptr;
    };
    QList<StructLeaf> out;
    // Depth-first in declaration order; a depth limit guards a self-referring scan.
    std::function<Status(const QString &, qint64, const QString &, int)> walk;
    walk = [&](const QString &t, qint64 base, const QString &prefix, int depth) -> Status {
        if (depth > 16) {
            return layoutError(QStringLiteral("%1 nests structs more than 16 deep").arg(type));
        }
        const StructLayout *l = findLayout(t);
        if (!l) {
            return layoutError(QStringLiteral("the layout of %1 is not known").arg(t));
        }
        if (!l->unsupported.isEmpty()) {
            return layoutError(QStringLiteral("%1 cannot be written as a value: %2").arg(t, l->unsupported));
        }
        for (const StructField &f : l->fields) {
            const qint64 each = f.count > 0 ? f.bytes / f.count : f.bytes;
            for (qint64 i = 0; i < f.count; ++i) {
                const QString name = prefix + f.name + (f.count > 1 ? QStringLiteral("[%1]").arg(i) : QString());
                const qint64 off = base + f.offset + i * each;
                if (f.type.contains(QLatin1Char('*'))) {
                    out << StructLeaf{name, off, DType::UInt64, false, true};
                } else if (f.type == QLatin1String("bool")) {
                    out << StructLeaf{name, off, DType::UInt8, true, false};
                } else if (const auto d = dtypeForCudaType(f.type)) {
                    const DTypeInfo &di = dtypeInfo(*d);
                    static const char *comp[] = {"x", "y", "z", "w"};
                    for (int c = 0; c < di.components; ++c) {
                        out << StructLeaf{di.components > 1 ? name + QLatin1Char('.') + QLatin1String(comp[c]) : name,
                                          off + qint64(c) * di.componentBytes, di.component, false, false};
                    }
                } else if (findLayout(f.type)) {
                    if (Status s = walk(f.type, off, name + QLatin1Char('.'), depth + 1); !s) {
                        return s;
                    }
                } else {
                    return layoutError(QStringLiteral("member %1 of %2 has type %3, which a value cannot be written "
                                                      "to (a number, a CUDA vector, bool, a pointer or a struct of "
                                                      "them)")
                                           .arg(prefix + f.name, t, f.type));
                }
            }
        }
        return Unit{};
    };
    if (Status s = walk(type, 0, QString(), 0); !s) {
        return s.error();
    }
    return out;
}

QByteArray packStruct(const StructLayout &layout, const QList<StructLeaf> &leaves, const QList<double> &values)
{
    QByteArray bytes(layout.size, '\0');
    for (qsizetype i = 0; i < leaves.size() && i < values.size(); ++i) {
        const StructLeaf &leaf = leaves[i];
        const int width = dtypeInfo(leaf.component).componentBytes;
        if (leaf.offset < 0 || leaf.offset + width > bytes.size()) {
            continue; // cannot happen with a layout from the compiler; never write past the value
        }
        storeComponent(leaf.component, leaf.isBool ? (values[i] != 0 ? 1 : 0) : values[i], bytes.data() + leaf.offset);
    }
    return bytes;
}

Result<QList<double>> parseBracedValues(const QString &text, const QString &expectedType, const QString &path)
{
    QString s = text.trimmed();
    const qsizetype brace = s.indexOf(QLatin1Char('{'));
    if (brace < 0 || !s.endsWith(QLatin1Char('}'))) {
        return layoutError(QStringLiteral("%1: expected a braced value such as \"%2 {1, 2}\", got '%3'")
                               .arg(path, expectedType.isEmpty() ? QStringLiteral("float2") : expectedType, text),
                           path);
    }
    const QString typeName = s.left(brace).trimmed();
    if (!typeName.isEmpty() && !expectedType.isEmpty() && typeName.simplified() != expectedType.simplified() &&
        unqualified(typeName) != unqualified(expectedType)) {
        // float2 and the dtype spellings of the same type ("half2" for "__half2") agree too.
        const auto a = dtypeForCudaType(typeName);
        const auto b = dtypeForCudaType(expectedType);
        if (!a || !b || *a != *b) {
            return layoutError(QStringLiteral("%1: the value is written as %2 but the parameter is %3")
                                   .arg(path, typeName, expectedType),
                               path);
        }
    }
    QList<double> out;
    int depth = 0;
    QString token;
    const auto flush = [&]() -> Status {
        const QString t = token.trimmed();
        token.clear();
        if (t.isEmpty()) {
            return Unit{};
        }
        if (t == QLatin1String("true")) {
            out << 1;
        } else if (t == QLatin1String("false") || t == QLatin1String("NULL") || t == QLatin1String("nullptr")) {
            out << 0;
        } else {
            QString num = t;
            // C suffixes: 1.5f, 10u, 3ull.
            static const QRegularExpression suffix(QStringLiteral("(?<=[0-9.])([fF]|[uU]?[lL]{0,2}|[lL]{1,2}[uU]?)$"));
            num.remove(suffix);
            bool ok = false;
            const double v = num.startsWith(QLatin1String("0x"), Qt::CaseInsensitive)
                                 ? double(num.mid(2).toULongLong(&ok, 16))
                                 : num.toDouble(&ok);
            if (!ok) {
                return layoutError(QStringLiteral("%1: '%2' is not a number").arg(path, t), path);
            }
            out << v;
        }
        return Unit{};
    };
    for (qsizetype i = brace; i < s.size(); ++i) {
        const QChar c = s[i];
        if (c == QLatin1Char('{')) {
            if (!token.trimmed().isEmpty()) {
                return layoutError(QStringLiteral("%1: '%2' before '{'").arg(path, token.trimmed()), path);
            }
            ++depth;
        } else if (c == QLatin1Char('}')) {
            if (Status st = flush(); !st) {
                return st.error();
            }
            if (--depth < 0) {
                return layoutError(QStringLiteral("%1: unbalanced '}' in '%2'").arg(path, text), path);
            }
            if (depth == 0 && i != s.size() - 1) {
                return layoutError(QStringLiteral("%1: text after the closing '}' in '%2'").arg(path, text), path);
            }
        } else if (c == QLatin1Char(',')) {
            if (Status st = flush(); !st) {
                return st.error();
            }
        } else {
            token += c;
        }
    }
    if (depth != 0) {
        return layoutError(QStringLiteral("%1: unbalanced '{' in '%2'").arg(path, text), path);
    }
    return out;
}

} // namespace Kp
