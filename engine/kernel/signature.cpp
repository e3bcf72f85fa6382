#include "signature.h"

#include "kernel/cxxtokens.h"

#include <QRegularExpression>
#include <QSet>

namespace Kp {

namespace {

using Cxx::isPunct;
using Cxx::matchClose;
using Cxx::Token;
using Cxx::tokenize;

// Splits tokens [from, to) at top-level commas.
QList<QList<Token>> splitTopLevel(const QList<Token> &t, qsizetype from, qsizetype to)
{
    QList<QList<Token>> parts;
    QList<Token> cur;
    int depth = 0;
    for (qsizetype i = from; i < to; ++i) {
        const Token &k = t[i];
        if (k.kind == Token::Punct) {
            if (k.text == QLatin1String("(") || k.text == QLatin1String("<") || k.text == QLatin1String("[") ||
                k.text == QLatin1String("{")) {
                ++depth;
            } else if (k.text == QLatin1String(")") || k.text == QLatin1String(">") || k.text == QLatin1String("]") ||
                       k.text == QLatin1String("}")) {
                --depth;
            } else if (k.text == QLatin1String(",") && depth == 0) {
                parts.append(cur);
                cur.clear();
                continue;
            }
        }
        cur.append(k);
    }
    if (!cur.isEmpty()) {
        parts.append(cur);
    }
    return parts;
}

const QSet<QString> &typeWords()
{
    static const QSet<QString> words{
        QStringLiteral("const"),        QStringLiteral("volatile"),   QStringLiteral("unsigned"),
        QStringLiteral("signed"),       QStringLiteral("int"),        QStringLiteral("long"),
        QStringLiteral("short"),        QStringLiteral("char"),       QStringLiteral("float"),
        QStringLiteral("double"),       QStringLiteral("bool"),       QStringLiteral("void"),
        QStringLiteral("__restrict__"), QStringLiteral("__restrict"), QStringLiteral("struct"),
        QStringLiteral("class"),        QStringLiteral("typename"),   QStringLiteral("__grid_constant__")};
    return words;
}

// "const float *__restrict__", "Vec<float, 4>", "unsigned long long".
QString joinType(const QList<Token> &tokens)
{
    QString s;
    QString prev;
    for (const Token &t : tokens) {
        const QString &x = t.text;
        const bool attachLeft = x == QLatin1String(">") || x == QLatin1String(",") || x == QLatin1String("::") ||
                                x == QLatin1String("]") || x == QLatin1String("[") || x == QLatin1String(")");
        const bool prevAttachRight = prev == QLatin1String("<") || prev == QLatin1String("::") ||
                                     prev == QLatin1String("*") || prev == QLatin1String("&") ||
                                     prev == QLatin1String("(") || prev == QLatin1String("[");
        const bool pointer = x == QLatin1String("*") || x == QLatin1String("&");
        const bool pointerRun = pointer && (prev == QLatin1String("*") || prev == QLatin1String("&"));
        if (!s.isEmpty() && !attachLeft && !(prevAttachRight && !pointer) && !pointerRun && x != QLatin1String("<")) {
            s += QLatin1Char(' ');
        }
        s += x;
        if (x == QLatin1String(",")) {
            s += QLatin1Char(' ');
            prev = QStringLiteral("<"); // no second space after ", "
            continue;
        }
        prev = x;
    }
    return s.trimmed();
}

KernelParam::Category categorize(const QString &base, int pointerDepth)
{
    if (pointerDepth > 0) {
        return KernelParam::Category::Pointer;
    }
    static const QSet<QString> scalars{QStringLiteral("bool"),
                                       QStringLiteral("char"),
                                       QStringLiteral("signed char"),
                                       QStringLiteral("unsigned char"),
                                       QStringLiteral("short"),
                                       QStringLiteral("unsigned short"),
                                       QStringLiteral("short int"),
                                       QStringLiteral("int"),
                                       QStringLiteral("unsigned"),
                                       QStringLiteral("unsigned int"),
                                       QStringLiteral("signed"),
                                       QStringLiteral("signed int"),
                                       QStringLiteral("long"),
                                       QStringLiteral("unsigned long"),
                                       QStringLiteral("long long"),
                                       QStringLiteral("unsigned long long"),
                                       QStringLiteral("long int"),
                                       QStringLiteral("long long int"),
                                       QStringLiteral("unsigned long long int"),
                                       QStringLiteral("float"),
                                       QStringLiteral("double"),
                                       QStringLiteral("size_t"),
                                       QStringLiteral("ptrdiff_t"),
                                       QStringLiteral("int8_t"),
                                       QStringLiteral("int16_t"),
                                       QStringLiteral("int32_t"),
                                       QStringLiteral("int64_t"),
                                       QStringLiteral("uint8_t"),
                                       QStringLiteral("uint16_t"),
                                       QStringLiteral("uint32_t"),
                                       QStringLiteral("uint64_t"),
                                       QStringLiteral("std::size_t"),
                                       QStringLiteral("std::int32_t"),
                                       QStringLiteral("std::uint32_t"),
                                       QStringLiteral("std::int64_t"),
                                       QStringLiteral("std::uint64_t")};
    static const QRegularExpression vector(
        QStringLiteral("^(u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]$"));
    static const QSet<QString> halves{QStringLiteral("half"),          QStringLiteral("__half"),
                                      QStringLiteral("half2"),         QStringLiteral("__half2"),
                                      QStringLiteral("__nv_bfloat16"), QStringLiteral("__nv_bfloat162"),
                                      QStringLiteral("nv_bfloat16"),   QStringLiteral("nv_bfloat162")};
    if (scalars.contains(base)) {
        return KernelParam::Category::Scalar;
    }
    if (vector.match(base).hasMatch()) {
        return KernelParam::Category::Vector;
    }
    if (halves.contains(base)) {
        return KernelParam::Category::Half;
    }
    return KernelParam::Category::Struct;
}

KernelParam makeParam(QList<Token> tokens)
{
    // A default argument is kept as text: the run uses it for an unbound parameter.
    QString defaultValue;
    for (qsizetype i = 0; i < tokens.size(); ++i) {
        if (isPunct(tokens[i], '=')) {
            // Spaces only where two words would merge: "-1", "1.0f", "float2{0,0}", "unsigned(4)".
            for (qsizetype j = i + 1; j < tokens.size(); ++j) {
                const bool word = tokens[j].kind == Token::Ident || tokens[j].kind == Token::Number;
                const bool prevWord =
                    j > i + 1 && (tokens[j - 1].kind == Token::Ident || tokens[j - 1].kind == Token::Number);
                if (word && prevWord) {
                    defaultValue += QLatin1Char(' ');
                }
                defaultValue += tokens[j].text;
            }
            tokens = tokens.mid(0, i);
            break;
        }
    }
    KernelParam p;
    p.defaultValue = defaultValue;
    // An array parameter "float a[16]" is a pointer.
    int arrayDims = 0;
    while (tokens.size() >= 2 && isPunct(tokens.last(), ']')) {
        qsizetype open = tokens.size() - 1;
        while (open > 0 && !isPunct(tokens[open], '[')) {
            --open;
        }
        tokens = tokens.mid(0, open);
        ++arrayDims;
    }
    if (tokens.size() >= 2 && tokens.last().kind == Token::Ident && !typeWords().contains(tokens.last().text) &&
        !isPunct(tokens[tokens.size() - 2], ':')) {
        const Token &prev = tokens[tokens.size() - 2];
        // "unsigned n" names n; "unsigned int" names nothing; "T n" names n.
        if (prev.kind != Token::Punct || prev.text != QLatin1String("::")) {
            p.name = tokens.last().text;
            tokens.removeLast();
        }
    }
    QList<Token> baseTokens;
    bool seenPointer = false;
    for (const Token &t : tokens) {
        if (isPunct(t, '*')) {
            ++p.pointerDepth;
            seenPointer = true;
        } else if (t.text == QLatin1String("const")) {
            if (!seenPointer) {
                p.isConst = true;
            }
        } else if (t.text == QLatin1String("__restrict__") || t.text == QLatin1String("__restrict")) {
            p.isRestrict = true;
        } else if (t.text != QLatin1String("volatile") && t.text != QLatin1String("struct") &&
                   t.text != QLatin1String("__grid_constant__") && !isPunct(t, '&')) {
            baseTokens.append(t);
        }
    }
    p.pointerDepth += arrayDims;
    p.type = joinType(tokens);
    for (int i = 0; i < arrayDims; ++i) {
        p.type += QStringLiteral(" *");
    }
    p.baseType = joinType(baseTokens);
    p.category = categorize(p.baseType, p.pointerDepth);
    return p;
}

QStringList tokenTexts(const QList<Token> &tokens)
{
    QStringList l;
    for (const Token &t : tokens) {
        l << t.text;
    }
    return l;
}

QList<Token> retokenize(const QStringList &texts)
{
    QList<Token> out;
    for (const QString &x : texts) {
        const QChar c = x.isEmpty() ? QChar() : x[0];
        const Token::Kind kind = (c.isLetter() || c == QLatin1Char('_')) ? Token::Ident
                                 : c.isDigit()                           ? Token::Number
                                 : (c == QLatin1Char('"'))               ? Token::String
                                                                         : Token::Punct;
        out.append({kind, x, 0, -1});
    }
    return out;
}

} // namespace

QString KernelParam::categoryName(Category c)
{
    switch (c) {
    case Category::Pointer: return QStringLiteral("pointer");
    case Category::Scalar: return QStringLiteral("scalar");
    case Category::Vector: return QStringLiteral("vector");
    case Category::Half: return QStringLiteral("half");
    case Category::Struct: return QStringLiteral("struct");
    }
    return QStringLiteral("struct");
}

QVariantMap KernelParam::toVariant() const
{
    return {{QStringLiteral("type"), type},
            {QStringLiteral("name"), name},
            {QStringLiteral("baseType"), baseType},
            {QStringLiteral("pointerDepth"), pointerDepth},
            {QStringLiteral("const"), isConst},
            {QStringLiteral("restrict"), isRestrict},
            {QStringLiteral("category"), categoryName(category)},
            {QStringLiteral("default"), defaultValue}};
}

KernelParam KernelParam::fromVariant(const QVariantMap &m)
{
    KernelParam p;
    p.type = m.value(QStringLiteral("type")).toString();
    p.name = m.value(QStringLiteral("name")).toString();
    p.baseType = m.value(QStringLiteral("baseType")).toString();
    p.pointerDepth = m.value(QStringLiteral("pointerDepth")).toInt();
    p.isConst = m.value(QStringLiteral("const")).toBool();
    p.isRestrict = m.value(QStringLiteral("restrict")).toBool();
    p.defaultValue = m.value(QStringLiteral("default")).toString();
    const QString c = m.value(QStringLiteral("category")).toString();
    for (Category k : {Category::Pointer, Category::Scalar, Category::Vector, Category::Half, Category::Struct}) {
        if (categoryName(k) == c) {
            p.category = k;
        }
    }
    return p;
}

QList<KernelSignature> findKernels(const QString &source)
{
    const QList<Token> t = tokenize(source);
    QList<KernelSignature> kernels;

    // What each open brace belongs to, for namespaces and extern "C" blocks.
    struct Scope
    {
        enum Kind { Other, Namespace, ExternC } kind;
        QString name;
    };
    QList<Scope> scopes;
    qsizetype templateEnd = -1; // index just past the latest "template<...>"
    QList<TemplateParam> templateParams;

    static const QSet<QString> specifiers{QStringLiteral("extern"),       QStringLiteral("static"),
                                          QStringLiteral("inline"),       QStringLiteral("__forceinline__"),
                                          QStringLiteral("__noinline__"), QStringLiteral("__inline__")};

    for (qsizetype i = 0; i < t.size(); ++i) {
        const Token &k = t[i];
        if (isPunct(k, '{')) {
            Scope s{Scope::Other, {}};
            if (i >= 2 && t[i - 2].text == QLatin1String("extern") && t[i - 1].kind == Token::String) {
                s.kind = Scope::ExternC;
            } else if (i >= 2 && t[i - 2].text == QLatin1String("namespace") && t[i - 1].kind == Token::Ident) {
                s = {Scope::Namespace, t[i - 1].text};
            } else if (i >= 1 && t[i - 1].text == QLatin1String("namespace")) {
                s = {Scope::Namespace, {}}; // anonymous
            }
            scopes.append(s);
            continue;
        }
        if (isPunct(k, '}')) {
            if (!scopes.isEmpty()) {
                scopes.removeLast();
            }
            continue;
        }
        if (k.text == QLatin1String("template") && i + 1 < t.size() && isPunct(t[i + 1], '<')) {
            const qsizetype close = matchClose(t, i + 1);
            if (close < 0) {
                break;
            }
            templateParams.clear();
            for (QList<Token> part : splitTopLevel(t, i + 2, close)) {
                TemplateParam tp;
                for (qsizetype j = 0; j < part.size(); ++j) {
                    if (isPunct(part[j], '=')) {
                        QList<Token> def = part.mid(j + 1);
                        tp.defaultValue = joinType(def);
                        part = part.mid(0, j);
                        break;
                    }
                }
                if (part.isEmpty()) {
                    continue;
                }
                if (part.size() >= 2 && part.last().kind == Token::Ident) {
                    tp.name = part.last().text;
                    part.removeLast();
                }
                tp.kind = joinType(part);
                if (tp.kind == QLatin1String("class")) {
                    tp.kind = QStringLiteral("typename");
                }
                templateParams.append(tp);
            }
            templateEnd = close + 1;
            i = close;
            continue;
        }
        if (k.text != QLatin1String("__global__")) {
            continue;
        }
        // Walk back over specifiers to see whether a template clause or
        // extern "C" introduces this declaration.
        bool externC = false;
        qsizetype back = i - 1;
        while (back >= 0 && (specifiers.contains(t[back].text) || t[back].kind == Token::String)) {
            if (t[back].text == QLatin1String("extern") && back + 1 < i && t[back + 1].kind == Token::String) {
                externC = true;
            }
            --back;
        }
        const bool isTemplate = templateEnd >= 0 && back + 1 == templateEnd;
        for (const Scope &s : scopes) {
            if (s.kind == Scope::ExternC) {
                externC = true;
            }
        }
        // Forward: the name is the first identifier followed by '(' that is
        // not an attribute such as __launch_bounds__(256).
        qsizetype j = i + 1;
        qsizetype nameAt = -1;
        for (; j + 1 < t.size(); ++j) {
            if (isPunct(t[j], ';') || isPunct(t[j], '{')) {
                break;
            }
            if (t[j].kind == Token::Ident && isPunct(t[j + 1], '(')) {
                if (t[j].text.startsWith(QLatin1String("__")) && t[j].text.endsWith(QLatin1String("__"))) {
                    j = matchClose(t, j + 1);
                    if (j < 0) {
                        break;
                    }
                    continue;
                }
                nameAt = j;
                break;
            }
        }
        if (nameAt < 0) {
            continue;
        }
        const qsizetype close = matchClose(t, nameAt + 1);
        if (close < 0) {
            break;
        }
        // A definition has a body; skip trailing attributes/qualifiers.
        qsizetype after = close + 1;
        while (after < t.size() && !isPunct(t[after], '{') && !isPunct(t[after], ';')) {
            ++after;
        }
        if (after >= t.size() || !isPunct(t[after], '{')) {
            i = close;
            continue; // a declaration
        }
        KernelSignature sig;
        sig.name = t[nameAt].text;
        QStringList ns;
        for (const Scope &s : scopes) {
            if (s.kind == Scope::Namespace && !s.name.isEmpty()) {
                ns << s.name;
            }
        }
        sig.qualifiedName =
            (ns.isEmpty() ? QString() : ns.join(QStringLiteral("::")) + QStringLiteral("::")) + sig.name;
        sig.line = t[nameAt].line;
        sig.externC = externC;
        if (isTemplate) {
            sig.templateParams = templateParams;
        }
        const QList<QList<Token>> parts = splitTopLevel(t, nameAt + 2, close);
        for (const QList<Token> &part : parts) {
            if (parts.size() == 1 && part.size() == 1 && part[0].text == QLatin1String("void")) {
                break; // k(void)
            }
            sig.params.append(makeParam(part));
            sig.paramTokens.append(tokenTexts(part).join(QLatin1Char('\x1f')));
        }
        kernels.append(sig);
        i = close;
    }
    return kernels;
}

QString nameExpressionBase(const QString &nameExpression)
{
    QString e = nameExpression.trimmed();
    if (e.startsWith(QLatin1Char('&'))) {
        e = e.mid(1).trimmed();
    }
    const qsizetype lt = e.indexOf(QLatin1Char('<'));
    return (lt < 0 ? e : e.left(lt)).trimmed();
}

bool instantiate(const KernelSignature &kernel, const QString &nameExpression, KernelSignature *out, QString *why)
{
    const QString base = nameExpressionBase(nameExpression);
    if (base != kernel.name && base != kernel.qualifiedName) {
        *why = QStringLiteral("'%1' does not name kernel '%2'").arg(nameExpression, kernel.qualifiedName);
        return false;
    }
    QList<Token> exprTokens = tokenize(nameExpression.trimmed());
    QStringList args;
    const qsizetype lt = [&] {
        for (qsizetype i = 0; i < exprTokens.size(); ++i) {
            if (isPunct(exprTokens[i], '<')) {
                return i;
            }
        }
        return qsizetype(-1);
    }();
    if (lt >= 0) {
        const qsizetype gt = matchClose(exprTokens, lt);
        if (gt < 0) {
            *why = QStringLiteral("'%1' has an unclosed template argument list").arg(nameExpression);
            return false;
        }
        for (const QList<Token> &a : splitTopLevel(exprTokens, lt + 1, gt)) {
            args << joinType(a);
        }
    }
    if (!kernel.isTemplate()) {
        if (!args.isEmpty()) {
            *why = QStringLiteral("'%1' gives template arguments, but kernel '%2' is not a template")
                       .arg(nameExpression, kernel.qualifiedName);
            return false;
        }
        *out = kernel;
        return true;
    }
    if (args.size() > kernel.templateParams.size()) {
        *why = QStringLiteral("'%1' gives %2 template arguments; '%3' takes %4")
                   .arg(nameExpression)
                   .arg(args.size())
                   .arg(kernel.qualifiedName)
                   .arg(kernel.templateParams.size());
        return false;
    }
    QHash<QString, QString> subst;
    for (qsizetype i = 0; i < kernel.templateParams.size(); ++i) {
        const TemplateParam &tp = kernel.templateParams[i];
        const QString value = i < args.size() ? args[i] : tp.defaultValue;
        if (value.isEmpty()) {
            *why = QStringLiteral("'%1' leaves template parameter '%2' of '%3' without a value")
                       .arg(nameExpression, tp.name, kernel.qualifiedName);
            return false;
        }
        subst.insert(tp.name, value);
    }
    KernelSignature inst = kernel;
    inst.params.clear();
    for (const QString &joined : kernel.paramTokens) {
        QStringList texts;
        for (const QString &x : joined.split(QLatin1Char('\x1f'))) {
            if (subst.contains(x)) {
                for (const Token &st : tokenize(subst.value(x))) {
                    texts << st.text;
                }
            } else {
                texts << x;
            }
        }
        inst.params.append(makeParam(retokenize(texts)));
    }
    *out = inst;
    return true;
}

} // namespace Kp
