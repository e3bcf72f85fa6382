// libFuzzer target: the kernel-signature scanner (engine/kernel/signature.h).
// The input is CUDA source. When its first line is "// name: EXPR", EXPR is
// also used as a name expression to instantiate each template kernel with,
// so template substitution is fuzzed along with the scan.

#include "kernel/signature.h"

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
    return 0;
}
