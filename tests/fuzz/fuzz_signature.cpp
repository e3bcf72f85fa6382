// libFuzzer target: the kernel-signature scanner (engine/kernel/signature.h).
// The input is CUDA source. When its first line is "// name: EXPR", EXPR is
// also used as a name expression to instantiate each template kernel with,
// so template substitution is fuzzed along with the scan. The exercise
// starter made from the source (engine/kernel/starter.h) is fuzzed too: made
// again from itself it must not change (its emptied bodies stay emptied, the
// rest stays as written).

#include "kernel/signature.h"
#include "kernel/starter.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QString source = QString::fromUtf8(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const QList<Kp::KernelSignature> kernels = Kp::findKernels(source);

    QString nameExpression;
    static const QString kPrefix = QStringLiteral("// name: ");
    if (source.startsWith(kPrefix)) {
        nameExpression = source.mid(kPrefix.size(), source.indexOf(QLatin1Char('\n')) - kPrefix.size());
    }
    (void)Kp::nameExpressionBase(nameExpression);

    for (const Kp::KernelSignature &k : kernels) {
        if (k.line < 1 || k.name.isEmpty()) {
            std::fprintf(stderr, "fuzz_signature: kernel '%s' at line %d\n", qPrintable(k.name), k.line);
            std::abort();
        }
        for (const Kp::KernelParam &p : k.params) {
            (void)Kp::KernelParam::fromVariant(p.toVariant());
        }
        if (k.isTemplate()) {
            Kp::KernelSignature instance;
            QString why;
            const QString expr = nameExpression.isEmpty() ? k.name + QStringLiteral("<16, float>") : nameExpression;
            (void)Kp::instantiate(k, expr, &instance, &why);
        }
    }
    const Kp::Starter starter = Kp::starterSource(source);
    const Kp::Starter again = Kp::starterSource(starter.source);
    if (again.source != starter.source || again.kernels != starter.kernels) {
        qsizetype at = 0;
        while (at < starter.source.size() && at < again.source.size() && starter.source[at] == again.source[at]) {
            ++at;
        }
        std::fprintf(stderr,
                     "fuzz_signature: the starter changed when made again (%d then %d kernels), from offset %lld:\n"
                     "first: %s\nagain: %s\n",
                     starter.kernels, again.kernels, static_cast<long long>(at),
                     qPrintable(starter.source.mid(at > 40 ? at - 40 : 0, 120)),
                     qPrintable(again.source.mid(at > 40 ? at - 40 : 0, 120)));
        std::abort();
    }
    return 0;
}
