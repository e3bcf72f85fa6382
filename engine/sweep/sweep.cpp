#include "sweep.h"

#include <QRegularExpression>
#include <QSet>

#include <cmath>
#include <limits>

namespace Kp {

namespace {

Error axisError(const QString &message)
{
    return Error{QStringLiteral("sweep"), Error::Code::Usage, {}, message};
}

/** Splits at commas outside (), [] and <>: "ceil_div(n, 256),1024" is two values. */
QStringList splitTopLevel(const QString &text)
{
    QStringList parts;
    int depth = 0;
    QString current;
    for (const QChar ch : text) {
        if (ch == QLatin1Char('(') || ch == QLatin1Char('[') || ch == QLatin1Char('<')) {
            ++depth;
        } else if ((ch == QLatin1Char(')') || ch == QLatin1Char(']') || ch == QLatin1Char('>')) && depth > 0) {
            --depth;
        } else if (ch == QLatin1Char(',') && depth == 0) {
            parts << current.trimmed();
            current.clear();
            continue;
        }
        current += ch;
    }
    parts << current.trimmed();
    return parts;
}

/** The template arguments of "name<a, b>", or nothing when it is not a template instance. */
bool templateArgs(const QString &kernel, QString *head, QStringList *args)
{
    const qsizetype open = kernel.indexOf(QLatin1Char('<'));
    const qsizetype close = kernel.lastIndexOf(QLatin1Char('>'));
    if (open <= 0 || close < open) {
        return false;
    }
    *head = kernel.left(open);
    *args = splitTopLevel(kernel.mid(open + 1, close - open - 1));
    return true;
}

} // namespace

Result<SweepAxis> parseSweepAxis(const QString &spec)
{
    const qsizetype eq = spec.indexOf(QLatin1Char('='));
    if (eq <= 0) {
        return axisError(QStringLiteral("--axis '%1': write NAME=V1,V2,... or NAME=A:B[:STEP|:pow2]").arg(spec));
    }
    SweepAxis a;
    a.name = spec.left(eq).trimmed();
    const QString valueText = spec.mid(eq + 1).trimmed();
    const QString &n = a.name;
    static const QRegularExpression dim(QStringLiteral("^(block|grid)\\.([a-z]+)$"));
    static const QRegularExpression ident(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
    if (const auto m = dim.match(n); m.hasMatch()) {
        a.kind = m.captured(1) == QLatin1String("block") ? SweepAxis::Kind::Block : SweepAxis::Kind::Grid;
        const QString c = m.captured(2);
        a.component = c == QLatin1String("x") ? 0 : c == QLatin1String("y") ? 1 : c == QLatin1String("z") ? 2 : -1;
        if (a.component < 0) {
            return axisError(QStringLiteral("--axis %1: the %2 has x, y and z, not '%3'").arg(n, m.captured(1), c));
        }
    } else if (n.startsWith(QLatin1String("define."))) {
        a.kind = SweepAxis::Kind::Define;
        a.key = n.mid(7);
        if (!ident.match(a.key).hasMatch()) {
            return axisError(
                QStringLiteral("--axis %1: '%2' is not a macro name (letters, digits and _)").arg(n, a.key));
        }
    } else if (n.startsWith(QLatin1String("template."))) {
        a.kind = SweepAxis::Kind::Template;
        bool ok = false;
        a.component = n.mid(9).toInt(&ok);
        if (!ok || a.component < 0) {
            return axisError(
                QStringLiteral("--axis %1: template.I takes the argument's index from 0, not '%2'").arg(n, n.mid(9)));
        }
    } else {
        a.kind = SweepAxis::Kind::Scalar;
        a.key = n.startsWith(QLatin1String("scalar.")) ? n.mid(7) : n;
        if (!ident.match(a.key).hasMatch()) {
            return axisError(QStringLiteral("--axis %1: not an axis; use block.x|y|z, grid.x|y|z, define.NAME, "
                                            "template.I or a scalar's name")
                                 .arg(n));
        }
    }
    if (valueText.isEmpty()) {
        return axisError(QStringLiteral("--axis %1: no values after '='").arg(n));
    }

    static const QRegularExpression range(QStringLiteral("^(-?\\d+)\\s*:\\s*(-?\\d+)(?:\\s*:\\s*(pow2|\\d+))?$"));
    if (const auto m = range.match(valueText); m.hasMatch()) {
        // Every number is read whole or refused: toLongLong gives 0 past the
        // 64-bit range, which once swept n = 0 for 99999999999999999999.
        qint64 bounds[3] = {0, 0, 1};
        const QString names[3] = {QStringLiteral("start"), QStringLiteral("end"), QStringLiteral("step")};
        for (int k = 0; k < 3; ++k) {
            if (k == 2 && (m.captured(3).isEmpty() || m.captured(3) == QLatin1String("pow2"))) {
                break;
            }
            bool ok = false;
            bounds[k] = m.captured(k + 1).toLongLong(&ok);
            if (!ok) {
                return axisError(QStringLiteral("--axis %1: the %2 of the range %3, %4, is outside the 64-bit range "
                                                "(%5 to %6)")
                                     .arg(n, names[k], valueText, m.captured(k + 1))
                                     .arg(std::numeric_limits<qint64>::min())
                                     .arg(std::numeric_limits<qint64>::max()));
            }
        }
        const qint64 from = bounds[0];
        const qint64 to = bounds[1];
        if (from > to) {
            return axisError(
                QStringLiteral("--axis %1: the range %2 runs backwards (%3 > %4)").arg(n, valueText).arg(from).arg(to));
        }
        if (m.captured(3) == QLatin1String("pow2")) {
            // At most 63 powers of two fit in a qint64: walk the exponents, never a
            // doubling value that could pass INT64_MAX.
            for (int e = 0; e < 63; ++e) {
                const qint64 v = qint64(1) << e;
                if (v >= from && v <= to) {
                    a.values << QString::number(v);
                }
            }
            if (a.values.isEmpty()) {
                return axisError(QStringLiteral("--axis %1: %2 holds no power of two").arg(n, valueText));
            }
        } else {
            const qint64 step = bounds[2];
            if (step <= 0) {
                return axisError(QStringLiteral("--axis %1: the step of %2 must be at least 1").arg(n, valueText));
            }
            // The count first, in unsigned arithmetic (to - from of -2^63:2^63-1 fits
            // in 64 unsigned bits), so nothing is added before it is known to fit.
            const quint64 steps = (quint64(to) - quint64(from)) / quint64(step);
            if (steps >= quint64(kMaxSweepAxisValues)) {
                return axisError(QStringLiteral("--axis %1: %2 has more than %3 values (the most an axis may have)")
                                     .arg(n, valueText)
                                     .arg(kMaxSweepAxisValues));
            }
            const quint64 count = steps + 1;
            a.values.reserve(qsizetype(count));
            for (quint64 i = 0; i < count; ++i) {
                a.values << QString::number(qint64(quint64(from) + i * quint64(step)));
            }
        }
    } else {
        a.values = splitTopLevel(valueText);
        if (a.values.size() > kMaxSweepAxisValues) {
            return axisError(QStringLiteral("--axis %1: %2 values; an axis has at most %3")
                                 .arg(n)
                                 .arg(a.values.size())
                                 .arg(kMaxSweepAxisValues));
        }
    }
    QSet<QString> seen;
    for (const QString &v : a.values) {
        if (v.isEmpty()) {
            return axisError(QStringLiteral("--axis %1: an empty value in '%2'").arg(n, valueText));
        }
        if (seen.contains(v)) {
            return axisError(QStringLiteral("--axis %1: the value '%2' is given twice").arg(n, v));
        }
        seen.insert(v);
        bool ok = false;
        if (a.kind == SweepAxis::Kind::Block) {
            const qint64 x = v.toLongLong(&ok);
            if (!ok || x < 1 || x > kMaxLaunchDim) {
                return axisError(QStringLiteral("--axis %1: '%2' is not a block extent (a whole number from 1 to %3)")
                                     .arg(n, v)
                                     .arg(kMaxLaunchDim));
            }
        } else if (a.kind == SweepAxis::Kind::Scalar) {
            const double x = v.toDouble(&ok);
            if (!ok || !std::isfinite(x)) {
                return axisError(QStringLiteral("--axis %1: '%2' is not a number").arg(n, v));
            }
        } else if ((a.kind == SweepAxis::Kind::Define || a.kind == SweepAxis::Kind::Template) &&
                   v.contains(QRegularExpression(QStringLiteral("\\s")))) {
            return axisError(QStringLiteral("--axis %1: '%2' contains white space").arg(n, v));
        }
    }
    return a;
}

Status checkSweepAxis(const SweepAxis &axis, const Project &project)
{
    if (axis.kind == SweepAxis::Kind::Scalar && !project.scalar(axis.key)) {
        QStringList names;
        for (const ScalarSpec &s : project.scalars) {
            names << s.name;
        }
        return axisError(
            QStringLiteral("--axis %1: the project has no scalar '%2' (its scalars: %3)")
                .arg(axis.name, axis.key, names.isEmpty() ? QStringLiteral("none") : names.join(QStringLiteral(", "))));
    }
    if (axis.kind == SweepAxis::Kind::Template) {
        int templated = 0;
        for (const LaunchStep &s : project.launches) {
            QString head;
            QStringList args;
            if (templateArgs(s.kernel, &head, &args)) {
                ++templated;
                if (axis.component >= args.size()) {
                    return axisError(QStringLiteral("--axis %1: kernel '%2' has %3 template argument%4 (template.0 to "
                                                    "template.%5)")
                                         .arg(axis.name, s.kernel)
                                         .arg(args.size())
                                         .arg(args.size() == 1 ? "" : "s")
                                         .arg(args.size() - 1));
                }
            }
        }
        if (templated == 0) {
            return axisError(QStringLiteral("--axis %1: no launch step runs a template instance (a kernel written "
                                            "like 'matmul<16>')")
                                 .arg(axis.name));
        }
    }
    return Unit{};
}

Result<QList<SweepPoint>> expandSweep(const QList<SweepAxis> &axes, bool zip, int maxPoints)
{
    if (axes.size() > kMaxSweepAxes) {
        return axisError(QStringLiteral("the sweep has %1 axes; at most %2").arg(axes.size()).arg(kMaxSweepAxes));
    }
    QSet<QString> names;
    for (const SweepAxis &a : axes) {
        if (names.contains(a.name)) {
            return axisError(QStringLiteral("--axis %1 is given twice; give all its values in one --axis").arg(a.name));
        }
        names.insert(a.name);
    }
    QList<SweepPoint> points;
    if (axes.isEmpty()) {
        points << SweepPoint{};
        return points;
    }
    if (zip) {
        const qsizetype n = axes.first().values.size();
        for (const SweepAxis &a : axes) {
            if (a.values.size() != n) {
                return axisError(QStringLiteral("--zip needs axes of equal length: %1 has %2 values, %3 has %4")
                                     .arg(axes.first().name)
                                     .arg(n)
                                     .arg(a.name)
                                     .arg(a.values.size()));
            }
        }
        if (n > maxPoints) {
            return axisError(QStringLiteral("the sweep has %1 points; at most %2").arg(n).arg(maxPoints));
        }
        for (qsizetype i = 0; i < n; ++i) {
            SweepPoint p;
            for (const SweepAxis &a : axes) {
                p.values << a.values[i];
            }
            points << p;
        }
        return points;
    }
    double total = 1;
    for (const SweepAxis &a : axes) {
        total *= double(a.values.size());
    }
    if (total > maxPoints) {
        return axisError(
            QStringLiteral("the sweep has %1 points (the product of the axes' lengths); at most %2; use fewer values "
                           "or --zip")
                .arg(total, 0, 'f', 0)
                .arg(maxPoints));
    }
    std::vector<qsizetype> index(size_t(axes.size()), 0);
    for (;;) {
        SweepPoint p;
        for (qsizetype i = 0; i < axes.size(); ++i) {
            p.values << axes[i].values[index[size_t(i)]];
        }
        points << p;
        qsizetype k = axes.size() - 1;
        while (k >= 0 && ++index[size_t(k)] == axes[k].values.size()) {
            index[size_t(k)] = 0;
            --k;
        }
        if (k < 0) {
            break;
        }
    }
    return points;
}

Result<Project> applySweepPoint(const Project &project, const QList<SweepAxis> &axes, const SweepPoint &point)
{
    if (point.values.size() != axes.size()) {
        return Error{
            QStringLiteral("sweep"), Error::Code::Internal, {}, QStringLiteral("a point without a value per axis")};
    }
    Project p = project;
    for (qsizetype i = 0; i < axes.size(); ++i) {
        const SweepAxis &a = axes[i];
        const QString &v = point.values[i];
        switch (a.kind) {
        case SweepAxis::Kind::Block:
        case SweepAxis::Kind::Grid:
            for (LaunchStep &s : p.launches) {
                QStringList &dims = a.kind == SweepAxis::Kind::Block ? s.block : s.grid;
                while (dims.size() <= a.component) {
                    dims << QStringLiteral("1");
                }
                dims[a.component] = v;
            }
            break;
        case SweepAxis::Kind::Define: {
            QStringList defines;
            for (const QString &d : p.compile.defines) {
                if (d != a.key && !d.startsWith(a.key + QLatin1Char('='))) {
                    defines << d;
                }
            }
            defines << a.key + QLatin1Char('=') + v;
            p.compile.defines = defines;
            break;
        }
        case SweepAxis::Kind::Template:
            for (LaunchStep &s : p.launches) {
                QString head;
                QStringList args;
                if (!templateArgs(s.kernel, &head, &args) || a.component >= args.size()) {
                    continue;
                }
                args[a.component] = v;
                const QString instance = head + QLatin1Char('<') + args.join(QStringLiteral(", ")) + QLatin1Char('>');
                for (QString &e : p.compile.nameExpressions) {
                    if (e == s.kernel) {
                        e = instance;
                    }
                }
                s.kernel = instance;
            }
            break;
        case SweepAxis::Kind::Scalar:
            for (ScalarSpec &s : p.scalars) {
                if (s.name == a.key) {
                    s.value = v.toDouble();
                }
            }
            break;
        }
    }
    return p;
}

QString sweepCompileKey(const QList<SweepAxis> &axes, const SweepPoint &point)
{
    QStringList parts;
    for (qsizetype i = 0; i < axes.size() && i < point.values.size(); ++i) {
        if (axes[i].recompiles()) {
            parts << axes[i].name + QLatin1Char('=') + point.values[i];
        }
    }
    return parts.join(QLatin1Char(' '));
}

QString sweepPointLabel(const QList<SweepAxis> &axes, const SweepPoint &point)
{
    QStringList parts;
    for (qsizetype i = 0; i < axes.size() && i < point.values.size(); ++i) {
        parts << axes[i].name + QLatin1Char('=') + point.values[i];
    }
    return parts.join(QLatin1Char(' '));
}

bool sweepErrorIsSkip(const Error &error)
{
    // Launch validation (the host's expressions and the worker's limits for
    // this kernel) reports BadInput before anything reaches the GPU; faults,
    // time-outs and compile errors are results of running.
    return error.code == Error::Code::BadInput;
}

} // namespace Kp
