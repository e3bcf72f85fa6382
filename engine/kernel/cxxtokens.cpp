#include "cxxtokens.h"

namespace Kp::Cxx {

QList<Token> tokenize(const QString &s)
{
    QList<Token> out;
    const qsizetype n = s.size();
    int line = 1;
    bool lineStart = true;
    for (qsizetype i = 0; i < n;) {
        const QChar c = s[i];
        if (c == QLatin1Char('\n')) {
            ++line;
            lineStart = true;
            ++i;
            continue;
        }
        if (c.isSpace()) {
            ++i;
            continue;
        }
        if (lineStart && c == QLatin1Char('#')) {
            // Preprocessor line, with backslash continuations.
            while (i < n && s[i] != QLatin1Char('\n')) {
                if (s[i] == QLatin1Char('\\') && i + 1 < n && s[i + 1] == QLatin1Char('\n')) {
                    ++line;
                    i += 2;
                    continue;
                }
                ++i;
            }
            continue;
        }
        lineStart = false;
        if (c == QLatin1Char('/') && i + 1 < n && s[i + 1] == QLatin1Char('/')) {
            while (i < n && s[i] != QLatin1Char('\n')) {
                ++i;
            }
            continue;
        }
        if (c == QLatin1Char('/') && i + 1 < n && s[i + 1] == QLatin1Char('*')) {
            i += 2;
            while (i + 1 < n && !(s[i] == QLatin1Char('*') && s[i + 1] == QLatin1Char('/'))) {
                if (s[i] == QLatin1Char('\n')) {
                    ++line;
                }
                ++i;
            }
            i += 2;
            continue;
        }
        if (c == QLatin1Char('"') || c == QLatin1Char('\'')) {
            const int startLine = line;
            const qsizetype start = i++;
            while (i < n && s[i] != c) {
                if (s[i] == QLatin1Char('\\')) {
                    ++i;
                }
                if (i < n && s[i] == QLatin1Char('\n')) {
                    ++line;
                }
                ++i;
            }
            ++i;
            out.append({Token::String, s.mid(start, i - start), startLine, start});
            continue;
        }
        if (c.isLetter() || c == QLatin1Char('_')) {
            const qsizetype start = i;
            while (i < n && (s[i].isLetterOrNumber() || s[i] == QLatin1Char('_'))) {
                ++i;
            }
            out.append({Token::Ident, s.mid(start, i - start), line, start});
            continue;
        }
        if (c.isDigit()) {
            const qsizetype start = i;
            while (i < n && (s[i].isLetterOrNumber() || s[i] == QLatin1Char('.') || s[i] == QLatin1Char('\''))) {
                ++i;
            }
            out.append({Token::Number, s.mid(start, i - start), line, start});
            continue;
        }
        if (c == QLatin1Char(':') && i + 1 < n && s[i + 1] == QLatin1Char(':')) {
            out.append({Token::Punct, QStringLiteral("::"), line, i});
            i += 2;
            continue;
        }
        out.append({Token::Punct, QString(c), line, i});
        ++i;
    }
    return out;
}

bool isPunct(const Token &t, char c)
{
    return t.kind == Token::Punct && t.text.size() == 1 && t.text[0] == QLatin1Char(c);
}

qsizetype matchClose(const QList<Token> &t, qsizetype open)
{
    const QString o = t[open].text;
    const QString c = o == QLatin1String("(")   ? QStringLiteral(")")
                      : o == QLatin1String("<") ? QStringLiteral(">")
                      : o == QLatin1String("[") ? QStringLiteral("]")
                                                : QStringLiteral("}");
    int depth = 0;
    int parens = 0; // inside a <...> group, '>' within parentheses does not close it
    for (qsizetype i = open; i < t.size(); ++i) {
        if (t[i].kind != Token::Punct) {
            continue;
        }
        if (o == QLatin1String("<") && t[i].text == QLatin1String("(")) {
            ++parens;
        } else if (o == QLatin1String("<") && t[i].text == QLatin1String(")")) {
            --parens;
        }
        if (parens > 0) {
            continue;
        }
        if (t[i].text == o) {
            ++depth;
        } else if (t[i].text == c && --depth == 0) {
            return i;
        }
    }
    return -1;
}

} // namespace Kp::Cxx
