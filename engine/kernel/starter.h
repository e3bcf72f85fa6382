#pragma once

#include <QString>

namespace Kp {

/** An exercise's starter made from the instructor's solution (starterSource). */
struct Starter
{
    QString source;  ///< the solution with every kernel's body emptied
    int kernels = 0; ///< how many __global__ bodies were emptied
};

/**
 * The students' starter of an exercise whose source is the instructor's
 * solution: every __global__ function keeps its template line, signature and
 * braces, and its body becomes one comment asking for the code. Everything
 * else (includes, defines, device helpers, structs, comments) stays as
 * written: what a kernel may call is part of the exercise. The scan is the
 * signature scanner's (comments, strings and preprocessor lines skipped), so
 * a brace in a comment or string does not end a body.
 */
Starter starterSource(const QString &solution);

} // namespace Kp
