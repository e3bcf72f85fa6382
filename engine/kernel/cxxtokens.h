#pragma once

#include <QList>
#include <QString>

/**
 * The light C++ tokenizer behind the kernel-signature scanner
 * (kernel/signature) and the exercise starter (kernel/starter): enough of C++
 * to find kernels, their parameters and their bodies without NVRTC, so both
 * work while the source does not compile.
 */
namespace Kp::Cxx {

struct Token
{
    enum Kind { Ident, Number, String, Punct } kind;
    QString text;
    int line;      ///< 1-based line of the token's start
    qsizetype pos; ///< offset of its first character in the source; -1 for a token made from text
};

/** Tokens of C++ for the scanners' purposes: comments and preprocessor lines vanish, literals become single tokens,
 * "::" is one token. */
QList<Token> tokenize(const QString &s);

bool isPunct(const Token &t, char c);

/** Index of the token closing the group opened at `open` ( '(' '<' '[' '{' ), or -1. */
qsizetype matchClose(const QList<Token> &t, qsizetype open);

} // namespace Kp::Cxx
