#include "checkeval.h"

#include "buffers/bufferinit.h"
#include "buffers/npy.h"
#include "check/checkjson.h"
#include "core/expression.h"
#include "core/fastexpr.h"
#include "core/parallel.h"
#include "core/safefile.h"
#include "project/fieldreader.h"
#include "project/project.h"

#include <QLocale>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

namespace Kp {

namespace {

/** loadComponent, with the common types inline: it runs once or twice for every value a check compares. */
inline double loadValue(DType c, const char *p)
{
    switch (c) {
    case DType::Float32: {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    case DType::Float64: {
        double d;
        std::memcpy(&d, p, 8);
        return d;
    }
    case DType::Int32: {
        qint32 v;
        std::memcpy(&v, p, 4);
        return v;
    }
    default: return loadComponent(c, p);
    }
}

Error checkError(const QString &message, const QString &path, Error::Code code = Error::Code::BadInput)
{
    Error e{QStringLiteral("check"), code, {}, message};
    e.path = path;
    return e;
}

bool isIntegral(DType component)
{
    const ScalarKind k = dtypeInfo(component).kind;
    return k == ScalarKind::SignedInt || k == ScalarKind::UnsignedInt;
}

/** Sign-magnitude bits as a monotonic integer: neighbouring floats differ by 1, +0 and -0 are equal. */
qint64 orderedBits(quint64 bits, int width)
{
    const quint64 sign = quint64(1) << (width - 1);
    return (bits & sign) ? -qint64(bits & ~sign) : qint64(bits);
}

quint64 floatBits(DType component, double v)
{
    switch (component) {
    case DType::Float16: return floatToHalf(float(v));
    case DType::BFloat16: return floatToBFloat16(float(v));
    case DType::Float32: {
        const float f = float(v);
        std::uint32_t u;
        std::memcpy(&u, &f, 4);
        return u;
    }
    default: {
        std::uint64_t u;
        std::memcpy(&u, &v, 8);
        return u;
    }
    }
}

/** Units in the last place between a and b in the component type (both finite); saturates. */
quint64 ulpDistance(DType component, double a, double b)
{
    const int width = dtypeInfo(component).componentBytes * 8;
    const qint64 oa = orderedBits(floatBits(component, a), width);
    const qint64 ob = orderedBits(floatBits(component, b), width);
    if ((oa < 0) != (ob < 0)) {
        // Opposite signs: |oa| + |ob| cannot overflow an unsigned 64-bit sum of two 63-bit magnitudes.
        return quint64(oa < 0 ? -oa : oa) + quint64(ob < 0 ? -ob : ob);
    }
    return oa > ob ? quint64(oa - ob) : quint64(ob - oa);
}

const char *kAxisNames[] = {"x", "y", "z"};

QString coordsText(const CheckMismatch &m, int axes, int components)
{
    QStringList parts;
    for (int a = 0; a < std::max(axes, 1); ++a) {
        parts << QStringLiteral("%1=%2").arg(QLatin1String(kAxisNames[a])).arg(m.coords[a]);
    }
    if (components > 1) {
        parts << QStringLiteral("c=%1").arg(m.component);
    }
    return QStringLiteral("[%1] (%2)").arg(m.index).arg(parts.join(QStringLiteral(", ")));
}

QJsonValue numberJson(double v)
{
    return std::isfinite(v) ? QJsonValue(v) : QJsonValue(checkNumberText(v));
}

struct NpyValues
{
    DType dtype = DType::Float32;
    QByteArray data;
    qint64 count = 0;
};

Result<NpyValues> readNpyValues(const QString &file, const QString &shown, const QString &path)
{
    Result<std::unique_ptr<QFile>> f = openRegularFile(file, kMaxNpyFileBytes, QStringLiteral("a .npy file"));
    if (!f) {
        return checkError(QStringLiteral("%1: cannot read '%2': %3").arg(path, shown, f.error().message), path);
    }
    Result<NpyHeader> h = readNpyHeader(**f, shown);
    if (!h) {
        return checkError(QStringLiteral("%1: %2").arg(path, h.error().message), path);
    }
    NpyValues v;
    v.dtype = h->dtype;
    v.count = h->elementCount() * std::max(1, h->fields);
    v.data.resize(h->dataBytes);
    if (Status s = readNpyData(**f, *h, v.data.data(), h->dataBytes, shown); !s) {
        return checkError(QStringLiteral("%1: %2").arg(path, s.error().message), path);
    }
    return v;
}

/** The box a check covers, per coordinate axis (x, y, z), and how many elements are in it. */
struct Box
{
    qint64 ext[3] = {1, 1, 1};
    qint64 begin[3] = {0, 0, 0};
    qint64 end[3] = {1, 1, 1};

    qint64 count() const { return (end[0] - begin[0]) * (end[1] - begin[1]) * (end[2] - begin[2]); }
};

Result<Box> boxFor(const CheckSpec &check, const QList<qint64> &shape, const QString &path)
{
    Box b;
    const int axes = int(shape.size());
    for (int a = 0; a < axes && a < 3; ++a) {
        b.ext[a] = shape[axes - 1 - a];
        b.end[a] = b.ext[a];
    }
    if (check.region) {
        if (Status s = checkRegionInside(*check.region, shape, jsonKeyPath(path, QStringLiteral("region"))); !s) {
            return s.error();
        }
        for (int a = 0; a < axes; ++a) {
            b.begin[a] = check.region->begin[a];
            b.end[a] = check.region->end[a];
        }
    }
    return b;
}

QString regionText(const CheckSpec &check)
{
    if (!check.region) {
        return QString();
    }
    QStringList parts;
    for (int a = 0; a < check.region->begin.size(); ++a) {
        parts << QStringLiteral("%1 %2..%3")
                     .arg(QLatin1String(kAxisNames[a]))
                     .arg(check.region->begin[a])
                     .arg(check.region->end[a]);
    }
    return QStringLiteral(" in the region %1").arg(parts.join(QStringLiteral(", ")));
}

/** Coordinates of flat element e in a buffer of this shape (x the last axis). */
std::array<qint64, 3> coordsOf(qint64 e, const QList<qint64> &shape)
{
    std::array<qint64, 3> c{};
    const int axes = int(shape.size());
    for (int a = 0; a < axes && a < 3; ++a) {
        const qint64 extent = std::max<qint64>(1, shape[axes - 1 - a]);
        c[a] = e % extent;
        e /= extent;
    }
    return c;
}

QString trimmedEnd(const QString &s)
{
    qsizetype n = s.size();
    while (n > 0 && s[n - 1].isSpace()) {
        --n;
    }
    return s.left(n);
}

CheckResult evaluatePrinted(const CheckSpec &check, const CheckData &data, CheckResult r)
{
    r.exact = true;
    r.compared = 1;
    bool pass = false;
    if (check.printedIsPattern) {
        // Searched anywhere, ^ and $ at line ends: printf output is lines.
        const QRegularExpression re(check.printed, QRegularExpression::MultilineOption);
        pass = re.match(data.printed).hasMatch();
    } else {
        // printf lines end in '\n'; trailing whitespace of either side is not worth a failure.
        pass = trimmedEnd(data.printed) == trimmedEnd(check.printed);
    }
    r.passed = pass;
    r.mismatches = pass ? 0 : 1;
    if (!pass) {
        constexpr qsizetype kShown = 400;
        r.detail = data.printed.isEmpty() ? QStringLiteral("the kernels printed nothing")
                                          : QStringLiteral("the kernels printed (%1 characters): %2%3")
                                                .arg(data.printed.size())
                                                .arg(data.printed.left(kShown),
                                                     data.printed.size() > kShown ? QStringLiteral("...") : QString());
        if (data.printedTruncated) {
            r.detail += QStringLiteral(" (the output was cut off at the device printf buffer's size)");
        }
    }
    return r;
}

struct Valued
{
    double value;
    qint64 index; ///< flat value index (element * components + component)
};

bool valueLess(double a, double b)
{
    // NaN sorts last and equals NaN, so NaN results still pair up.
    if (std::isnan(a) || std::isnan(b)) {
        return !std::isnan(a) && std::isnan(b);
    }
    return a < b;
}

bool valueSame(double a, double b)
{
    return (std::isnan(a) && std::isnan(b)) || a == b;
}

std::vector<Valued> sortedValues(const BufferView &b)
{
    const DTypeInfo &info = dtypeInfo(b.dtype);
    const qint64 n = b.elementCount() * info.components;
    std::vector<Valued> v;
    v.reserve(size_t(n));
    const char *p = static_cast<const char *>(b.data);
    for (qint64 k = 0; k < n; ++k) {
        v.push_back({loadComponent(info.component, p + k * info.componentBytes), k});
    }
    std::stable_sort(v.begin(), v.end(), [](const Valued &a, const Valued &c) { return valueLess(a.value, c.value); });
    return v;
}

void dedupe(std::vector<Valued> &v)
{
    v.erase(
        std::unique(v.begin(), v.end(), [](const Valued &a, const Valued &b) { return valueSame(a.value, b.value); }),
        v.end());
}

// Permutation and Set: both sides sorted, then one merge walk. A value only in
// the checked buffer is "got v, expected nan"; one only in the other buffer is
// "got nan, expected v" at index -1 (it has no place in the checked buffer).
Result<CheckResult> evaluateCollection(const CheckSpec &check, const CheckData &data, CheckResult r,
                                       const BufferView &got, const QString &path)
{
    const QString key = CheckSpec::kindName(check.kind);
    const QHash<QString, BufferView> &source = check.otherFromReference ? data.reference : data.initial;
    const auto it = source.find(check.other);
    if (it == source.end() || !it->data) {
        return checkError(QStringLiteral("%1.%2: buffer '%3' has no contents %4")
                              .arg(path, key, check.other,
                                   check.otherFromReference ? QStringLiteral("after the reference run")
                                                            : QStringLiteral("from before the run")),
                          jsonKeyPath(path, key), Error::Code::Internal);
    }
    const DTypeInfo &info = dtypeInfo(got.dtype);
    r.exact = true;
    std::vector<Valued> a = sortedValues(got);
    std::vector<Valued> b = sortedValues(*it);
    r.compared = qint64(a.size());
    if (check.kind == CheckSpec::Kind::Set) {
        dedupe(a);
        dedupe(b);
    }
    const auto mismatch = [&](double g, double e, qint64 k) {
        ++r.mismatches;
        CheckMismatch m;
        m.index = k < 0 ? -1 : k / info.components;
        m.component = k < 0 ? 0 : int(k % info.components);
        m.coords = k < 0 ? std::array<qint64, 3>{} : coordsOf(m.index, got.shape);
        m.got = g;
        m.expected = e;
        if (r.first.size() < kMaxReportedMismatches) {
            r.first << m;
        }
        if (!r.worst) {
            r.worst = m;
        }
    };
    const double nan = std::numeric_limits<double>::quiet_NaN();
    size_t i = 0;
    size_t j = 0;
    while (i < a.size() || j < b.size()) {
        if (i < a.size() && j < b.size() && valueSame(a[i].value, b[j].value)) {
            ++i;
            ++j;
        } else if (j == b.size() || (i < a.size() && valueLess(a[i].value, b[j].value))) {
            mismatch(a[i].value, nan, a[i].index);
            ++i;
        } else {
            mismatch(nan, b[j].value, -1);
            ++j;
        }
    }
    r.passed = r.mismatches == 0;
    return r;
}

/**
 * Where an element check's expected values come from (docs/checks.md): an
 * expression over coordinates, variables and buffers, a reference run's
 * buffer, or an .npy file; a range check has none. Set up in place by
 * prepareExpected(): the expression's variables are pointers into it.
 */
struct ExpectedValues
{
    const char *refBytes = nullptr;
    DType refComp = DType::Float32;
    int refCompBytes = 0;
    bool rawCompare = false; // 64-bit integers against the same dtype: compared as bits, not as doubles
    NpyValues npy;
    Expression ex;
    double *vi = nullptr;
    double *vx = nullptr;
    double *vy = nullptr;
    double *vz = nullptr;
    double *vc = nullptr;
    struct BufferVar
    {
        double *slot;
        const char *bytes;
        DType comp;
        int compBytes;
        int comps;
    };
    QList<BufferVar> bufferVars;
    double scratch = 0; // where a coordinate hidden by a variable or buffer of its name goes

    /** Points the expression's coordinates and buffers at element e (x, y, z), component c, value k. */
    void setElement(qint64 e, qint64 x, qint64 y, qint64 z, int c, qint64 k)
    {
        *vi = double(e);
        *vx = double(x);
        *vy = double(y);
        *vz = double(z);
        *vc = double(c);
        for (const BufferVar &b : bufferVars) {
            const qint64 bk = b.comps == 1 ? e : k;
            *b.slot = loadValue(b.comp, b.bytes + bk * b.compBytes);
        }
    }
};

/** Sets `out` up for the check's kind, against `got` (values: how many the check compares). */
Status prepareExpected(const CheckSpec &check, const CheckData &data, const BufferView &got, bool exact, qint64 values,
                       const QString &path, ExpectedValues &out)
{
    const DTypeInfo &info = dtypeInfo(got.dtype);
    const DType comp = info.component;
    const int comps = info.components;
    out.refComp = comp;
    out.refCompBytes = info.componentBytes;
    switch (check.kind) {
    case CheckSpec::Kind::Expected: {
        // Precedence (docs/checks.md): coordinates, then the project's
        // variables, then buffers: "alpha*x + y" with buffers x and y means the buffers.
        QHash<QString, int> source; // 0 built-in, 1 variable, 2 buffer
        for (const char *n : {"i", "x", "y", "z", "c"}) {
            source.insert(QString::fromLatin1(n), 0);
        }
        for (auto it = data.variables.begin(); it != data.variables.end(); ++it) {
            source.insert(it.key(), 1);
        }
        for (auto it = data.initial.begin(); it != data.initial.end(); ++it) {
            const int bc = dtypeInfo(it->dtype).components;
            if (it->data && it->elementCount() == got.elementCount() && (bc == 1 || bc == comps)) {
                source.insert(it.key(), 2);
            }
        }
        for (auto it = source.begin(); it != source.end(); ++it) {
            double *slot = out.ex.variable(it.key());
            if (it.value() == 0) {
                (it.key() == QLatin1String("i")   ? out.vi
                 : it.key() == QLatin1String("x") ? out.vx
                 : it.key() == QLatin1String("y") ? out.vy
                 : it.key() == QLatin1String("z") ? out.vz
                                                  : out.vc) = slot;
            } else if (it.value() == 1) {
                *slot = data.variables.value(it.key());
            } else {
                const BufferView &b = data.initial[it.key()];
                const DTypeInfo &bi = dtypeInfo(b.dtype);
                out.bufferVars << ExpectedValues::BufferVar{slot, static_cast<const char *>(b.data), bi.component,
                                                            bi.componentBytes, bi.components};
            }
        }
        for (double **p : {&out.vi, &out.vx, &out.vy, &out.vz, &out.vc}) {
            if (!*p) {
                *p = &out.scratch;
            }
        }
        if (Status s = out.ex.parse(check.expected, jsonKeyPath(path, QStringLiteral("expected"))); !s) {
            Error e = s.error();
            e.where = QStringLiteral("check");
            e.path = jsonKeyPath(path, QStringLiteral("expected"));
            return e;
        }
        break;
    }
    case CheckSpec::Kind::Reference: {
        const auto refIt = data.reference.find(check.reference);
        if (refIt == data.reference.end() || !refIt->data) {
            return checkError(QStringLiteral("%1.reference: buffer '%2' has no contents after the reference run")
                                  .arg(path, check.reference),
                              jsonKeyPath(path, QStringLiteral("reference")), Error::Code::Internal);
        }
        const DTypeInfo &ri = dtypeInfo(refIt->dtype);
        if (refIt->elementCount() * ri.components != got.elementCount() * comps) {
            return checkError(
                QStringLiteral("%1.reference: buffer '%2' has %3 values, '%4' has %5; they must have as many")
                    .arg(path, check.reference)
                    .arg(refIt->elementCount() * ri.components)
                    .arg(check.buffer)
                    .arg(got.elementCount() * comps),
                jsonKeyPath(path, QStringLiteral("reference")));
        }
        out.refBytes = static_cast<const char *>(refIt->data);
        out.refComp = ri.component;
        out.refCompBytes = ri.componentBytes;
        out.rawCompare = exact && out.refComp == comp && info.componentBytes == 8;
        break;
    }
    case CheckSpec::Kind::Npy: {
        const QString file = resolveInitFile(check.npy, data.projectDir);
        Result<NpyValues> n = readNpyValues(file, check.npy, jsonKeyPath(path, QStringLiteral("npy")));
        if (!n) {
            return n.error();
        }
        out.npy = std::move(n).value();
        if (out.npy.count != values) {
            return checkError(QStringLiteral("%1.npy: '%2' holds %3 values; the check compares %4 (buffer '%5', %6 "
                                             "%7%8)")
                                  .arg(path, check.npy)
                                  .arg(out.npy.count)
                                  .arg(values)
                                  .arg(check.buffer, dtypeName(got.dtype), shapeToString(got.shape), regionText(check)),
                              jsonKeyPath(path, QStringLiteral("npy")));
        }
        out.refBytes = out.npy.data.constData();
        out.refComp = out.npy.dtype;
        out.refCompBytes = dtypeInfo(out.npy.dtype).componentBytes;
        out.rawCompare = exact && out.refComp == comp && info.componentBytes == 8;
        break;
    }
    case CheckSpec::Kind::Range:
    case CheckSpec::Kind::Permutation:
    case CheckSpec::Kind::Set:
    case CheckSpec::Kind::Printed: break; // Range is judged value by value; the others never come here
    }
    return Unit{};
}

/**
 * What a stretch of values came to; stretches judged on several threads are
 * added in order, so the report is the same however it was split.
 */
struct Tally
{
    double sumAbs = 0;
    qint64 finitePairs = 0;
    double worstError = -1;
    double maxAbs = 0;
    double maxRel = 0;
    qint64 compared = 0;
    qint64 mismatches = 0;
    QList<CheckMismatch> first;
    std::optional<CheckMismatch> worst;

    void add(const Tally &t)
    {
        sumAbs += t.sumAbs;
        finitePairs += t.finitePairs;
        maxAbs = std::max(maxAbs, t.maxAbs);
        maxRel = std::max(maxRel, t.maxRel);
        compared += t.compared;
        mismatches += t.mismatches;
        for (const CheckMismatch &m : t.first) {
            if (first.size() < kMaxReportedMismatches) {
                first << m;
            }
        }
        if (t.worst && t.worstError > worstError) { // the earliest of equal errors, as in one pass
            worstError = t.worstError;
            worst = t.worst;
        }
    }
};

/** How one value of the checked buffer is judged against what was expected of it. */
struct Judge
{
    const char *gotBytes = nullptr;
    DType comp = DType::Float32;
    int compBytes = 4;
    bool range = false;
    double lo = 0;
    double hi = 0;
    bool exact = false;
    bool rawCompare = false;
    CheckTolerance tol;
    bool nanPasses = false;
    char *mask = nullptr; ///< the failed elements' mask, when asked for

    /**
     * Value k of the buffer (element e at x, y, z of the box, component c)
     * against expv (rp: the reference's bytes, for an exact comparison of
     * 64-bit values), into t.
     */
    void operator()(Tally &t, qint64 e, qint64 x, qint64 y, qint64 z, int c, qint64 k, double expv,
                    const char *rp) const
    {
        const char *gp = gotBytes + k * compBytes;
        const double g = loadValue(comp, gp);
        if (range) {
            // The bound it broke is what it was "expected" to be within.
            expv = g < lo ? lo : g > hi ? hi : g;
        }
        bool pass;
        const bool finite = std::isfinite(g) && std::isfinite(expv);
        if (range) {
            pass = g >= lo && g <= hi; // NaN is within no bounds
        } else if (exact) {
            pass = rawCompare && rp ? std::memcmp(gp, rp, 8) == 0 : g == expv;
        } else if (std::isnan(g) || std::isnan(expv)) {
            pass = nanPasses && std::isnan(g) && std::isnan(expv);
        } else if (!finite) {
            pass = g == expv;
        } else {
            const double d = std::fabs(g - expv);
            pass = d <= tol.abs + tol.rel * std::fabs(expv) ||
                   (!isIntegral(comp) && ulpDistance(comp, g, expv) <= quint64(tol.ulp));
        }
        double err = std::numeric_limits<double>::infinity();
        if (finite) {
            err = std::fabs(g - expv);
            ++t.finitePairs;
            t.sumAbs += err;
            t.maxAbs = std::max(t.maxAbs, err);
            if (expv != 0) {
                t.maxRel = std::max(t.maxRel, err / std::fabs(expv));
            }
        }
        ++t.compared;
        if (!pass) {
            ++t.mismatches;
            if (mask) {
                mask[e] = 1;
            }
            CheckMismatch m;
            m.index = e;
            m.component = c;
            m.coords = {x, y, z};
            m.got = g;
            m.expected = expv;
            if (t.first.size() < kMaxReportedMismatches) {
                t.first << m;
            }
            if (err > t.worstError) {
                t.worstError = err;
                t.worst = m;
            }
        }
    }
};

/**
 * An expected expression in blocks: FastExpression gives the same values,
 * bit for bit, as muparser one element at a time, and large buffers are
 * split over a few threads (core/parallel; a 1M-element "a + b" took 24-34
 * ms a seed run; kpg run of a preset with three seed runs paid it three
 * times). A failed evaluation is returned as it is.
 */
Status judgeInBlocks(const FastExpression &fast, const Box &box, int comps, const ExpectedValues &ev,
                     const Judge &judge, Tally &total)
{
    const qint64 w = box.end[0] - box.begin[0];
    const qint64 h = box.end[1] - box.begin[1];
    const qint64 elements = box.count();
    // Elements [from, to) of the box, in its x-fastest order.
    const auto stretch = [&](qint64 from, qint64 to, Tally &t) -> Status {
        constexpr int kB = FastExpression::kBlock;
        const size_t inputCount = 5 + size_t(ev.bufferVars.size());
        std::vector<std::vector<double>> columns(inputCount, std::vector<double>(kB));
        std::vector<const double *> inputs(inputCount);
        for (size_t v = 0; v < inputCount; ++v) {
            inputs[v] = fast.uses(int(v)) ? columns[v].data() : nullptr;
        }
        struct Place
        {
            qint64 e, x, y, z, k;
            int c;
        };
        std::vector<Place> places(kB);
        std::vector<double> expected(kB);
        FastExpression::Scratch scratchSpace;
        int filled = 0;
        const auto flush = [&]() -> Status {
            if (filled > 0) {
                if (Status st = fast.evaluate(inputs.data(), filled, expected.data(), scratchSpace); !st) {
                    return st;
                }
                for (int j = 0; j < filled; ++j) {
                    const Place &pl = places[size_t(j)];
                    judge(t, pl.e, pl.x, pl.y, pl.z, pl.c, pl.k, expected[size_t(j)], nullptr);
                }
                filled = 0;
            }
            return Unit{};
        };
        qint64 x = box.begin[0] + from % w;
        qint64 y = box.begin[1] + (from / w) % h;
        qint64 z = box.begin[2] + from / (w * h);
        for (qint64 n = from; n < to; ++n) {
            const qint64 e = (z * box.ext[1] + y) * box.ext[0] + x;
            for (int c = 0; c < comps; ++c) {
                const qint64 k = e * comps + c;
                places[size_t(filled)] = Place{e, x, y, z, k, c};
                const double coords[5] = {double(e), double(x), double(y), double(z), double(c)};
                for (size_t v = 0; v < 5; ++v) {
                    if (inputs[v]) {
                        columns[v][size_t(filled)] = coords[v];
                    }
                }
                for (qsizetype bi = 0; bi < ev.bufferVars.size(); ++bi) {
                    if (inputs[size_t(5 + bi)]) {
                        const ExpectedValues::BufferVar &b = ev.bufferVars[bi];
                        const qint64 bk = b.comps == 1 ? e : k;
                        columns[size_t(5 + bi)][size_t(filled)] = loadValue(b.comp, b.bytes + bk * b.compBytes);
                    }
                }
                if (++filled == kB) {
                    if (Status st = flush(); !st) {
                        return st;
                    }
                }
            }
            if (++x == box.end[0]) {
                x = box.begin[0];
                if (++y == box.end[1]) {
                    y = box.begin[1];
                    ++z;
                }
            }
        }
        return flush();
    };
    const int threads = threadsFor(elements * comps);
    std::vector<Tally> tallies{size_t(threads)};
    std::vector<Status> statuses(size_t(threads), Status(Unit{}));
    parallelChunks(elements, threads, [&](int chunk, qint64 from, qint64 to) {
        statuses[size_t(chunk)] = stretch(from, to, tallies[size_t(chunk)]);
    });
    for (int ti = 0; ti < threads; ++ti) {
        if (!statuses[size_t(ti)]) {
            return statuses[size_t(ti)];
        }
        total.add(tallies[size_t(ti)]);
    }
    return Unit{};
}

/**
 * Value by value, on this thread: an expression FastExpression cannot
 * translate (evaluated by muparser), a reference, an .npy file or a range.
 * A failed evaluation is returned as it is.
 */
Status judgeEach(CheckSpec::Kind kind, const Box &box, int comps, ExpectedValues &ev, const Judge &judge, Tally &total)
{
    Tally t;
    qint64 seq = 0; // position in the region, for npy
    for (qint64 z = box.begin[2]; z < box.end[2]; ++z) {
        for (qint64 y = box.begin[1]; y < box.end[1]; ++y) {
            for (qint64 x = box.begin[0]; x < box.end[0]; ++x) {
                const qint64 e = (z * box.ext[1] + y) * box.ext[0] + x;
                for (int c = 0; c < comps; ++c, ++seq) {
                    const qint64 k = e * comps + c;
                    double expv = 0;
                    const char *rp = nullptr;
                    if (kind == CheckSpec::Kind::Expected) {
                        ev.setElement(e, x, y, z, c, k);
                        const Result<double> v = ev.ex.evaluate();
                        if (!v) {
                            return v.error();
                        }
                        expv = *v;
                    } else if (!judge.range) {
                        rp = ev.refBytes + (kind == CheckSpec::Kind::Npy ? seq : k) * ev.refCompBytes;
                        expv = loadValue(ev.refComp, rp);
                    }
                    judge(t, e, x, y, z, c, k, expv, rp);
                }
            }
        }
    }
    total.add(t);
    return Unit{};
}

} // namespace

qint64 BufferView::elementCount() const
{
    return shapeElementCount(shape);
}

CheckTolerance defaultTolerance(DType dtype)
{
    switch (dtypeInfo(dtype).component) {
    case DType::Float32: return {1e-6, 1e-5, 0};
    case DType::Float64: return {1e-12, 1e-12, 0};
    case DType::Float16:
    case DType::BFloat16: return {1e-3, 1e-2, 0};
    default: return {0, 0, 0};
    }
}

QString checkNumberText(double v)
{
    if (std::isnan(v)) {
        return QStringLiteral("nan");
    }
    if (std::isinf(v)) {
        return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    }
    return QString::number(v, 'g', QLocale::FloatingPointShortest);
}

QStringList checkVariableNames(const QMap<QString, double> &variables, const QHash<QString, BufferView> &buffers,
                               const BufferView &checked)
{
    QStringList names{QStringLiteral("i"), QStringLiteral("x"), QStringLiteral("y"), QStringLiteral("z"),
                      QStringLiteral("c")};
    for (auto it = variables.begin(); it != variables.end(); ++it) {
        if (!names.contains(it.key())) {
            names << it.key();
        }
    }
    const int comps = dtypeInfo(checked.dtype).components;
    for (auto it = buffers.begin(); it != buffers.end(); ++it) {
        const int bc = dtypeInfo(it->dtype).components;
        if (it->elementCount() == checked.elementCount() && (bc == 1 || bc == comps) && !names.contains(it.key())) {
            names << it.key();
        }
    }
    return names;
}

CheckResult checkResultHead(const CheckSpec &check, int seedRun)
{
    CheckResult r;
    r.name = check.displayName();
    r.buffer = check.buffer;
    r.kind = check.kind;
    r.target = check.target();
    r.seedRuns = check.seeds;
    r.seedRun = seedRun;
    return r;
}

Result<CheckResult> evaluateCheck(const CheckSpec &check, const CheckData &data, int seedRun, const QString &path)
{
    CheckResult r = checkResultHead(check, seedRun);
    if (check.kind == CheckSpec::Kind::Printed) {
        return evaluatePrinted(check, data, r);
    }

    const auto gotIt = data.after.find(check.buffer);
    if (gotIt == data.after.end() || !gotIt->data) {
        return checkError(
            QStringLiteral("%1.buffer: buffer '%2' has no contents after the run").arg(path, check.buffer),
            jsonKeyPath(path, QStringLiteral("buffer")), Error::Code::Internal);
    }
    const BufferView &got = *gotIt;
    const DTypeInfo &info = dtypeInfo(got.dtype);
    const DType comp = info.component;
    const int comps = info.components;
    r.axes = int(got.shape.size());
    r.components = comps;
    // An integer check is exact unless it names a tolerance (docs/checks.md).
    r.exact = isIntegral(comp) && !check.tolerance;
    r.tolerance = r.exact ? CheckTolerance{} : check.tolerance.value_or(defaultTolerance(got.dtype));
    if (got.bytes < got.elementCount() * info.elementBytes()) {
        return checkError(QStringLiteral("%1: buffer '%2' holds %3 bytes, less than its shape needs")
                              .arg(path, check.buffer)
                              .arg(got.bytes),
                          path, Error::Code::Internal);
    }
    if (check.isCollection()) {
        return evaluateCollection(check, data, r, got, path);
    }
    if (check.kind == CheckSpec::Kind::Range) {
        r.exact = true;
    }

    Result<Box> boxResult = boxFor(check, got.shape, path);
    if (!boxResult) {
        return boxResult.error();
    }
    const Box box = *boxResult;
    ExpectedValues ev;
    if (Status s = prepareExpected(check, data, got, r.exact, box.count() * comps, path, ev); !s) {
        return s.error();
    }

    Judge judge;
    judge.gotBytes = static_cast<const char *>(got.data);
    judge.comp = comp;
    judge.compBytes = info.componentBytes;
    judge.range = check.kind == CheckSpec::Kind::Range;
    judge.lo = check.rangeMin.value_or(-std::numeric_limits<double>::infinity());
    judge.hi = check.rangeMax.value_or(std::numeric_limits<double>::infinity());
    judge.exact = r.exact;
    judge.rawCompare = ev.rawCompare;
    judge.tol = r.tolerance;
    judge.nanPasses = check.nan;
    if (data.failedMask) {
        data.failedMask->fill(0, qsizetype(got.elementCount()));
        judge.mask = data.failedMask->data();
    }

    // An expected expression goes in blocks where FastExpression translates
    // it; what it cannot translate goes through muparser value by value.
    std::shared_ptr<const FastExpression> fast;
    if (check.kind == CheckSpec::Kind::Expected) {
        std::vector<const double *> varying{ev.vi, ev.vx, ev.vy, ev.vz, ev.vc};
        for (const ExpectedValues::BufferVar &b : ev.bufferVars) {
            varying.push_back(b.slot);
        }
        if (Result<std::shared_ptr<const FastExpression>> f = FastExpression::compile(ev.ex, varying)) {
            fast = *f;
        }
    }
    Tally total;
    if (Status judged = fast ? judgeInBlocks(*fast, box, comps, ev, judge, total)
                             : judgeEach(check.kind, box, comps, ev, judge, total);
        !judged) {
        // An evaluation that failed (a callback threw), said of the check's expected field.
        Error err = judged.error();
        err.where = QStringLiteral("check");
        err.path = jsonKeyPath(path, QStringLiteral("expected"));
        return err;
    }
    r.compared = total.compared;
    r.mismatches = total.mismatches;
    r.maxAbsError = std::max(r.maxAbsError, total.maxAbs);
    r.maxRelError = std::max(r.maxRelError, total.maxRel);
    r.first << total.first;
    while (r.first.size() > kMaxReportedMismatches) {
        r.first.removeLast();
    }
    if (total.worst) {
        r.worst = total.worst;
    }
    r.meanAbsError = total.finitePairs ? total.sumAbs / double(total.finitePairs) : 0;
    r.passed = r.mismatches == 0;
    return r;
}

Result<QStringList> validateChecks(const Project &project, const QHash<QString, BufferView> &buffers,
                                   const QMap<QString, double> &variables)
{
    QStringList warnings;
    bool anyRandom = false;
    for (const BufferSpec &b : project.buffers) {
        anyRandom = anyRandom || b.init.kind == BufferInit::Kind::Random;
    }
    for (qsizetype i = 0; i < project.checks.size(); ++i) {
        const CheckSpec &c = project.checks[i];
        const QString path = jsonIndexPath(QStringLiteral("checks"), i);
        if (c.kind == CheckSpec::Kind::Printed) {
            continue; // nothing of it depends on the buffers
        }
        const auto bufIt = buffers.find(c.buffer);
        if (bufIt == buffers.end()) {
            return checkError(QStringLiteral("%1.buffer: unknown buffer '%2'").arg(path, c.buffer),
                              jsonKeyPath(path, QStringLiteral("buffer")));
        }
        const BufferView &b = *bufIt;
        Result<Box> box = boxFor(c, b.shape, path);
        if (!box) {
            return box.error();
        }
        const qint64 values = box->count() * dtypeInfo(b.dtype).components;
        switch (c.kind) {
        case CheckSpec::Kind::Expected: {
            Expression ex;
            for (const QString &n : checkVariableNames(variables, buffers, b)) {
                ex.variable(n);
            }
            if (Status s = ex.parse(c.expected, jsonKeyPath(path, QStringLiteral("expected"))); !s) {
                Error e = s.error();
                e.where = QStringLiteral("check");
                e.path = jsonKeyPath(path, QStringLiteral("expected"));
                return e;
            }
            break;
        }
        case CheckSpec::Kind::Reference: {
            const auto refIt = buffers.find(c.reference);
            if (refIt == buffers.end()) {
                return checkError(QStringLiteral("%1.reference: unknown buffer '%2'").arg(path, c.reference),
                                  jsonKeyPath(path, QStringLiteral("reference")));
            }
            const qint64 n = refIt->elementCount() * dtypeInfo(refIt->dtype).components;
            const qint64 m = b.elementCount() * dtypeInfo(b.dtype).components;
            if (n != m) {
                return checkError(
                    QStringLiteral("%1.reference: buffer '%2' has %3 values, '%4' has %5; they must have as many")
                        .arg(path, c.reference)
                        .arg(n)
                        .arg(c.buffer)
                        .arg(m),
                    jsonKeyPath(path, QStringLiteral("reference")));
            }
            break;
        }
        case CheckSpec::Kind::Npy: {
            const QString npyPath = jsonKeyPath(path, QStringLiteral("npy"));
            const QString file = resolveInitFile(c.npy, project.dir());
            Result<std::unique_ptr<QFile>> f = openRegularFile(file, kMaxNpyFileBytes, QStringLiteral("a .npy file"));
            if (!f) {
                return checkError(QStringLiteral("%1: cannot read '%2': %3").arg(npyPath, c.npy, f.error().message),
                                  npyPath);
            }
            Result<NpyHeader> h = readNpyHeader(**f, c.npy);
            if (!h) {
                return checkError(QStringLiteral("%1: %2").arg(npyPath, h.error().message), npyPath);
            }
            if (h->elementCount() * std::max(1, h->fields) != values) {
                return checkError(QStringLiteral("%1: '%2' holds %3 values (shape %4); the check compares %5 (buffer "
                                                 "'%6', %7 %8%9)")
                                      .arg(npyPath, c.npy)
                                      .arg(h->elementCount() * std::max(1, h->fields))
                                      .arg(shapeToString(h->componentShape()))
                                      .arg(values)
                                      .arg(c.buffer, dtypeName(b.dtype), shapeToString(b.shape), regionText(c)),
                                  npyPath);
            }
            break;
        }
        case CheckSpec::Kind::Permutation:
        case CheckSpec::Kind::Set: {
            const QString otherPath = jsonKeyPath(path, CheckSpec::kindName(c.kind));
            const auto otherIt = buffers.find(c.other);
            if (otherIt == buffers.end()) {
                return checkError(QStringLiteral("%1: unknown buffer '%2'").arg(otherPath, c.other), otherPath);
            }
            const qint64 n = otherIt->elementCount() * dtypeInfo(otherIt->dtype).components;
            if (c.kind == CheckSpec::Kind::Permutation && n != values) {
                return checkError(QStringLiteral("%1: buffer '%2' has %3 values, '%4' has %5; a permutation needs as "
                                                 "many")
                                      .arg(otherPath, c.other)
                                      .arg(n)
                                      .arg(c.buffer)
                                      .arg(values),
                                  otherPath);
            }
            break;
        }
        case CheckSpec::Kind::Range:
        case CheckSpec::Kind::Printed: break;
        }
        for (auto it = c.unknown.begin(); it != c.unknown.end(); ++it) {
            warnings << QStringLiteral("%1.%2: unknown key, ignored (known: name, buffer, expected, reference, npy, "
                                       "permutation, set, range, printed, tolerance, region, seeds, nan)")
                            .arg(path, it.key());
        }
        if (c.seeds > 1 && !anyRandom) {
            warnings << QStringLiteral("%1.seeds: %2 runs, but no buffer has a random init, so every run sees the "
                                       "same inputs")
                            .arg(path)
                            .arg(c.seeds);
        }
    }
    return warnings;
}

void mergeSeedRun(CheckResult &sofar, const CheckResult &next)
{
    if (!sofar.passed || sofar.error) {
        return; // the first failing run is the one reported
    }
    const int runs = sofar.seedRuns;
    sofar = next;
    sofar.seedRuns = runs;
}

QJsonObject checkResultToJson(const CheckResult &r)
{
    const auto mismatchJson = [&](const CheckMismatch &m) {
        QJsonObject o{{QStringLiteral("index"), m.index},
                      {QStringLiteral("coords"), QJsonArray{m.coords[0], m.coords[1], m.coords[2]}},
                      {QStringLiteral("got"), numberJson(m.got)},
                      {QStringLiteral("expected"), numberJson(m.expected)}};
        if (r.components > 1) {
            o.insert(QStringLiteral("component"), m.component);
        }
        return o;
    };
    QJsonArray first;
    for (const CheckMismatch &m : r.first) {
        first.append(mismatchJson(m));
    }
    QJsonObject o{{QStringLiteral("name"), r.name},
                  {QStringLiteral("buffer"), r.buffer},
                  {QStringLiteral("kind"), CheckSpec::kindName(r.kind)},
                  {QStringLiteral("target"), r.target},
                  {QStringLiteral("passed"), r.passed},
                  {QStringLiteral("compared"), r.compared},
                  {QStringLiteral("mismatches"), r.mismatches},
                  {QStringLiteral("mismatchFraction"), r.mismatchFraction()},
                  {QStringLiteral("maxAbsError"), numberJson(r.maxAbsError)},
                  {QStringLiteral("meanAbsError"), numberJson(r.meanAbsError)},
                  {QStringLiteral("maxRelError"), numberJson(r.maxRelError)},
                  {QStringLiteral("seedRun"), r.seedRun},
                  {QStringLiteral("seedRuns"), r.seedRuns},
                  {QStringLiteral("firstMismatches"), first}};
    o.insert(QStringLiteral("tolerance"), r.exact ? QJsonValue(QStringLiteral("exact"))
                                                  : QJsonValue(QJsonObject{{QStringLiteral("abs"), r.tolerance.abs},
                                                                           {QStringLiteral("rel"), r.tolerance.rel},
                                                                           {QStringLiteral("ulp"), r.tolerance.ulp}}));
    if (!r.detail.isEmpty()) {
        o.insert(QStringLiteral("detail"), r.detail);
    }
    o.insert(QStringLiteral("worst"), r.worst ? QJsonValue(mismatchJson(*r.worst)) : QJsonValue(QJsonValue::Null));
    o.insert(QStringLiteral("error"),
             r.error ? QJsonValue(QJsonObject::fromVariantMap(r.error->toVariant())) : QJsonValue(QJsonValue::Null));
    return o;
}

QJsonArray checkResultsToJson(const QList<CheckResult> &results)
{
    QJsonArray a;
    for (const CheckResult &r : results) {
        a.append(checkResultToJson(r));
    }
    return a;
}

QString checkResultText(const CheckResult &r)
{
    const QString unit = r.components > 1 ? QStringLiteral("values") : QStringLiteral("elements");
    const QString runs =
        r.seedRuns > 1 ? QStringLiteral(", seed run %1 of %2").arg(r.seedRun).arg(r.seedRuns) : QString();
    if (r.error) {
        return QStringLiteral("FAIL %1: not evaluated: %2\n").arg(r.name, r.error->message);
    }
    if (r.kind == CheckSpec::Kind::Printed) {
        return r.passed ? QStringLiteral("PASS %1\n").arg(r.name)
                        : QStringLiteral("FAIL %1: %2%3\n").arg(r.name, r.detail, runs);
    }
    if (r.passed) {
        return QStringLiteral("PASS %1 (%2 %3%4)\n")
            .arg(r.name)
            .arg(r.compared)
            .arg(unit, r.seedRuns > 1 ? QStringLiteral(", %1 seed runs").arg(r.seedRuns) : QString());
    }
    if (r.kind == CheckSpec::Kind::Permutation || r.kind == CheckSpec::Kind::Set) {
        QString s = QStringLiteral("FAIL %1: %2 value%3 unmatched among %4 %5%6\n")
                        .arg(r.name)
                        .arg(r.mismatches)
                        .arg(r.mismatches == 1 ? "" : "s")
                        .arg(r.compared)
                        .arg(unit, runs);
        s += QStringLiteral("     first unmatched values (in value order):\n");
        for (const CheckMismatch &m : r.first) {
            s += m.index < 0 ? QStringLiteral("       %1 is in %2 but not in %3\n")
                                   .arg(checkNumberText(m.expected), r.target, r.buffer)
                             : QStringLiteral("       %1 at %2 is not in %3\n")
                                   .arg(checkNumberText(m.got), coordsText(m, r.axes, r.components), r.target);
        }
        return s;
    }
    if (r.kind == CheckSpec::Kind::Range) {
        QString s = QStringLiteral("FAIL %1: %2 of %3 %4 outside %5 (%6 %)%7\n")
                        .arg(r.name)
                        .arg(r.mismatches)
                        .arg(r.compared)
                        .arg(unit, r.target, QString::number(r.mismatchFraction() * 100, 'g', 2), runs);
        s += QStringLiteral("     first values outside:\n");
        for (const CheckMismatch &m : r.first) {
            s += QStringLiteral("       %1: %2\n").arg(coordsText(m, r.axes, r.components), checkNumberText(m.got));
        }
        return s;
    }
    QString s = QStringLiteral("FAIL %1: %2 of %3 %4 differ (%5 %)")
                    .arg(r.name)
                    .arg(r.mismatches)
                    .arg(r.compared)
                    .arg(unit, QString::number(r.mismatchFraction() * 100, 'g', 2));
    if (r.worst) {
        s += QStringLiteral(", max abs err %1 at %2: got %3, expected %4")
                 .arg(checkNumberText(std::isfinite(r.worst->got) && std::isfinite(r.worst->expected)
                                          ? std::fabs(r.worst->got - r.worst->expected)
                                          : std::numeric_limits<double>::infinity()),
                      coordsText(*r.worst, r.axes, r.components), checkNumberText(r.worst->got),
                      checkNumberText(r.worst->expected));
    }
    s += runs + QLatin1Char('\n');
    s += QStringLiteral("     first mismatches:\n");
    for (const CheckMismatch &m : r.first) {
        s += QStringLiteral("       %1: got %2, expected %3\n")
                 .arg(coordsText(m, r.axes, r.components), checkNumberText(m.got), checkNumberText(m.expected));
    }
    return s;
}

} // namespace Kp
