#include "run/sanitizer.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QStandardPaths>
#include <QXmlStreamReader>

namespace Kp::Sanitizer {

namespace {

Error sanitizerError(Error::Code code, const QString &message)
{
    return Error{QStringLiteral("compute-sanitizer"), code, {}, message};
}

bool isExecutable(const QString &path)
{
    const QFileInfo fi(path);
    return fi.isFile() && fi.isExecutable();
}

/** The element text of every child of the current element, by path ("where/line"); nested maps flattened. */
using Fields = QHash<QString, QString>;

/**
 * Reads the rest of the current element (a <record>) into "a/b/c" keys with
 * each leaf's text; the host stack is skipped. Returns at its end tag.
 */
void readRecord(QXmlStreamReader &x, Fields &out)
{
    QStringList path;
    QString text;
    while (!x.atEnd()) {
        const auto t = x.readNext();
        if (t == QXmlStreamReader::StartElement) {
            if (x.name() == QLatin1String("hostStack")) {
                x.skipCurrentElement();
                continue;
            }
            path << x.name().toString();
            text.clear();
        } else if (t == QXmlStreamReader::Characters) {
            text += x.text();
        } else if (t == QXmlStreamReader::EndElement) {
            if (path.isEmpty()) {
                return; // </record>
            }
            const QString key = path.join(QLatin1Char('/'));
            if (!out.contains(key)) {
                out.insert(key, text.trimmed());
            }
            path.removeLast();
            text.clear();
        }
    }
}

quint64 number(const QString &s)
{
    bool ok = false;
    const quint64 v = s.startsWith(QLatin1String("0x")) ? s.mid(2).toULongLong(&ok, 16) : s.toULongLong(&ok, 10);
    return ok ? v : 0;
}

Coord coord(const Fields &f, const QString &prefix)
{
    return Coord{qint64(number(f.value(prefix + QStringLiteral("/x")))),
                 qint64(number(f.value(prefix + QStringLiteral("/y")))),
                 qint64(number(f.value(prefix + QStringLiteral("/z"))))};
}

Place place(const Fields &f, const QString &prefix)
{
    return Place{f.value(prefix + QStringLiteral("/func")), f.value(prefix + QStringLiteral("/path")),
                 int(number(f.value(prefix + QStringLiteral("/line")))),
                 number(f.value(prefix + QStringLiteral("/pc")))};
}

QJsonObject placeJson(const Place &p)
{
    return QJsonObject{{QStringLiteral("function"), p.function},
                       {QStringLiteral("path"), p.path},
                       {QStringLiteral("file"), QFileInfo(p.path).fileName()},
                       {QStringLiteral("line"), p.line}};
}

QJsonArray coordJson(const Coord &c)
{
    return QJsonArray{c.x, c.y, c.z};
}

Finding findingFrom(const QString &kind, const Fields &f)
{
    Finding d;
    d.text = f.value(QStringLiteral("what/text"));
    d.level = f.value(QStringLiteral("level"));
    if (f.contains(QStringLiteral("who/threadIdx/x"))) {
        d.hasThread = true;
        d.thread = coord(f, QStringLiteral("who/threadIdx"));
        d.block = coord(f, QStringLiteral("who/blockIdx"));
    }
    d.where = place(f, QStringLiteral("where"));
    d.address = number(f.value(QStringLiteral("what/address")));
    d.size = int(number(f.value(QStringLiteral("what/size"))));
    d.space = f.value(QStringLiteral("what/space"));
    d.direction = f.value(QStringLiteral("what/direction")).toLower();
    d.error = f.value(QStringLiteral("what/error"));
    if (kind == QLatin1String("Precise") || kind == QLatin1String("Imprecise")) {
        d.kind = Finding::Kind::InvalidAccess;
        if (d.error.contains(QLatin1String("misaligned")) || d.text.contains(QLatin1String("isaligned"))) {
            d.error = QStringLiteral("misaligned");
        }
    } else if (kind == QLatin1String("Initcheck")) {
        d.kind = Finding::Kind::Uninitialized;
        d.direction = QStringLiteral("read");
        if (d.space.isEmpty() && d.text.contains(QLatin1String("__global__"))) {
            d.space = QStringLiteral("__global__");
        }
    } else if (kind == QLatin1String("Analysis")) {
        d.kind = Finding::Kind::Race;
        d.where = place(f, QStringLiteral("what/source/where"));
        d.ownDirection = f.value(QStringLiteral("what/source/direction")).toLower();
        d.other = place(f, QStringLiteral("what/destination/where"));
        d.otherDirection = f.value(QStringLiteral("what/destination/direction")).toLower();
        d.count = qint64(number(f.value(QStringLiteral("what/destination/count"))));
    } else if (kind == QLatin1String("Hazard")) {
        d.kind = Finding::Kind::Hazard;
        d.hazardType = f.value(QStringLiteral("what/common/type"));
        d.address = number(f.value(QStringLiteral("what/common/address")));
        d.space = QStringLiteral("__shared__");
        d.hasThread = true;
        d.block = coord(f, QStringLiteral("what/common/blockIdx"));
        d.thread = coord(f, QStringLiteral("what/thread0/threadIdx"));
        d.ownDirection = f.value(QStringLiteral("what/thread0/access")).toLower();
        d.where = place(f, QStringLiteral("what/thread0/where"));
        d.otherThread = coord(f, QStringLiteral("what/thread1/threadIdx"));
        d.otherDirection = f.value(QStringLiteral("what/thread1/access")).toLower();
        d.other = place(f, QStringLiteral("what/thread1/where"));
    } else if (kind == QLatin1String("Api")) {
        d.kind = Finding::Kind::Api;
        d.api = f.value(QStringLiteral("what/api"));
        d.error = f.value(QStringLiteral("what/error"));
    } else if (kind.contains(QLatin1String("ync")) || d.text.contains(QLatin1String("arrier"))) {
        d.kind = Finding::Kind::Sync;
    }
    return d;
}

} // namespace

QString toolName(Tool tool)
{
    switch (tool) {
    case Tool::Memcheck: return QStringLiteral("memcheck");
    case Tool::Racecheck: return QStringLiteral("racecheck");
    case Tool::Initcheck: return QStringLiteral("initcheck");
    case Tool::Synccheck: return QStringLiteral("synccheck");
    }
    return {};
}

Result<Tool> parseTool(const QString &name)
{
    for (Tool t : {Tool::Memcheck, Tool::Racecheck, Tool::Initcheck, Tool::Synccheck}) {
        if (name == toolName(t)) {
            return t;
        }
    }
    return sanitizerError(
        Error::Code::Usage,
        QStringLiteral("--sanitize takes memcheck, racecheck, initcheck or synccheck, not '%1'").arg(name));
}

Result<QString> findProgram()
{
    const QString exe = QStringLiteral("compute-sanitizer");
    QStringList looked;
    const QString forced = qEnvironmentVariable("KPG_COMPUTE_SANITIZER");
    if (!forced.isEmpty()) {
        if (isExecutable(forced)) {
            return forced;
        }
        return sanitizerError(
            Error::Code::NoDriver,
            QStringLiteral("KPG_COMPUTE_SANITIZER names %1, which is not an executable file").arg(forced));
    }
    QStringList dirs{QStringLiteral("/usr/local/cuda/bin")};
    for (const char *var : {"CUDA_HOME", "CUDA_PATH"}) {
        const QString root = qEnvironmentVariable(var);
        if (!root.isEmpty()) {
            dirs << QDir(root).filePath(QStringLiteral("bin"));
        }
    }
#ifdef KPG_CUDA_ROOT
    dirs << QStringLiteral(KPG_CUDA_ROOT "/bin");
#endif
    const QString nvcc = QStandardPaths::findExecutable(QStringLiteral("nvcc"));
    if (!nvcc.isEmpty()) {
        dirs << QFileInfo(nvcc).canonicalPath();
    }
    for (const QString &d : dirs) {
        const QString p = QDir(d).filePath(exe);
        looked << d;
        if (isExecutable(p)) {
            return p;
        }
        // Some toolkits keep it in compute-sanitizer/ beside bin/.
        const QString alt = QDir(d).filePath(QStringLiteral("../compute-sanitizer/") + exe);
        if (isExecutable(alt)) {
            return QFileInfo(alt).canonicalFilePath();
        }
    }
    const QString onPath = QStandardPaths::findExecutable(exe);
    if (!onPath.isEmpty()) {
        return onPath;
    }
    looked << QStringLiteral("PATH");
    looked.removeDuplicates();
    return sanitizerError(Error::Code::NoDriver,
                          QStringLiteral("compute-sanitizer was not found (looked in %1); it comes with the CUDA "
                                         "toolkit: install it, or set CUDA_HOME or KPG_COMPUTE_SANITIZER")
                              .arg(looked.join(QStringLiteral(", "))));
}

QStringList launchPrefix(const QString &program, Tool tool, const QString &xmlPath, int printLimit, bool hazards)
{
    QStringList args{program, QStringLiteral("--tool"), toolName(tool), QStringLiteral("--xml"),
                     QStringLiteral("--save"), xmlPath, QStringLiteral("--print-limit"), QString::number(printLimit),
                     // The worker's probing of parameter layouts ends with an
                     // INVALID_VALUE by design; the parser drops it too.
                     QStringLiteral("--report-api-errors"), QStringLiteral("no")};
    if (tool == Tool::Racecheck && hazards) {
        args << QStringLiteral("--racecheck-report") << QStringLiteral("hazard");
    }
    return args;
}

QString Coord::text() const
{
    return QStringLiteral("(%1,%2,%3)").arg(x).arg(y).arg(z);
}

QString kindName(Finding::Kind kind)
{
    switch (kind) {
    case Finding::Kind::InvalidAccess: return QStringLiteral("invalid-access");
    case Finding::Kind::Race: return QStringLiteral("race");
    case Finding::Kind::Hazard: return QStringLiteral("hazard");
    case Finding::Kind::Uninitialized: return QStringLiteral("uninitialized");
    case Finding::Kind::Sync: return QStringLiteral("sync");
    case Finding::Kind::Api: return QStringLiteral("api");
    case Finding::Kind::Other: return QStringLiteral("other");
    }
    return {};
}

QString Finding::summary() const
{
    const QString who =
        hasThread ? QStringLiteral(" by thread %1 block %2").arg(thread.text(), block.text()) : QString();
    QString inBuffer;
    if (!buffer.isEmpty()) {
        inBuffer =
            bytesPast > 0
                ? QStringLiteral(", %1 bytes past the end of `%2` (element %3)").arg(bytesPast).arg(buffer).arg(element)
            : bytesPast == 0 ? QStringLiteral(", just past the end of `%1` (element %2)").arg(buffer).arg(element)
                             : QStringLiteral(", element %1 of `%2`").arg(element).arg(buffer);
    }
    switch (kind) {
    case Kind::InvalidAccess:
        return QStringLiteral("%1invalid %2 of %3 bytes%4%5")
            .arg(error == QLatin1String("misaligned") ? QStringLiteral("misaligned, ") : QString(), direction)
            .arg(size)
            .arg(who, inBuffer);
    case Kind::Uninitialized: return QStringLiteral("read of %1 uninitialised bytes%2%3").arg(size).arg(who, inBuffer);
    case Kind::Race:
        return QStringLiteral("race: %1 at line %2 and %3 at line %4 (%5 hazards)")
            .arg(ownDirection)
            .arg(where.line)
            .arg(otherDirection)
            .arg(other.line)
            .arg(count);
    case Kind::Hazard:
        return QStringLiteral("%1 hazard on shared memory offset %2: thread %3 %4 (line %5), thread %6 %7 (line %8), "
                              "block %9")
            .arg(hazardType)
            .arg(sharedByte())
            .arg(thread.text(), ownDirection)
            .arg(where.line)
            .arg(otherThread.text(), otherDirection)
            .arg(other.line)
            .arg(block.text());
    case Kind::Api: return QStringLiteral("%1 failed: %2").arg(api, error);
    case Kind::Sync:
    case Kind::Other: break;
    }
    return text + who;
}

QJsonObject Finding::toJson() const
{
    QJsonObject o{{QStringLiteral("kind"), kindName(kind)},
                  {QStringLiteral("text"), text},
                  {QStringLiteral("message"), summary()},
                  {QStringLiteral("where"), placeJson(where)}};
    if (hasThread) {
        o.insert(QStringLiteral("thread"), coordJson(thread));
        o.insert(QStringLiteral("block"), coordJson(block));
    }
    if (kind == Kind::InvalidAccess || kind == Kind::Uninitialized) {
        o.insert(QStringLiteral("space"), space);
        o.insert(QStringLiteral("access"), direction);
        o.insert(QStringLiteral("size"), size);
        o.insert(QStringLiteral("address"), QStringLiteral("0x%1").arg(address, 0, 16));
        if (!error.isEmpty()) {
            o.insert(QStringLiteral("error"), error);
        }
    }
    if (!buffer.isEmpty()) {
        o.insert(QStringLiteral("buffer"), buffer);
        o.insert(QStringLiteral("element"), element);
        o.insert(QStringLiteral("bytesPastEnd"), bytesPast >= 0 ? QJsonValue(bytesPast) : QJsonValue());
    }
    if (kind == Kind::Race || kind == Kind::Hazard) {
        o.insert(QStringLiteral("access"), ownDirection);
        o.insert(QStringLiteral("other"), placeJson(other));
        o.insert(QStringLiteral("otherAccess"), otherDirection);
    }
    if (kind == Kind::Race) {
        o.insert(QStringLiteral("count"), count);
    }
    if (kind == Kind::Hazard) {
        o.insert(QStringLiteral("type"), hazardType);
        o.insert(QStringLiteral("sharedOffset"), sharedByte());
        o.insert(QStringLiteral("sharedAddress"), QStringLiteral("0x%1").arg(address, 0, 16));
        o.insert(QStringLiteral("otherThread"), coordJson(otherThread));
    }
    if (kind == Kind::Api) {
        o.insert(QStringLiteral("api"), api);
        o.insert(QStringLiteral("error"), error);
    }
    return o;
}

QHash<QString, int> Report::counts() const
{
    QHash<QString, int> c;
    for (const Finding &f : findings) {
        ++c[kindName(f.kind)];
    }
    return c;
}

QJsonObject Report::toJson(Tool tool, int firstN) const
{
    QJsonObject counts_;
    const QHash<QString, int> c = counts();
    for (auto it = c.cbegin(); it != c.cend(); ++it) {
        counts_.insert(it.key(), it.value());
    }
    QJsonArray list;
    QHash<QString, int> shown;
    for (const Finding &f : findings) {
        if (firstN >= 0 && shown[kindName(f.kind)]++ >= firstN) {
            continue;
        }
        list.append(f.toJson());
    }
    return QJsonObject{{QStringLiteral("tool"), toolName(tool)},
                       {QStringLiteral("clean"), findings.isEmpty()},
                       {QStringLiteral("total"), qint64(findings.size())},
                       {QStringLiteral("counts"), counts_},
                       {QStringLiteral("findings"), list}};
}

Result<Report> parseXml(const QByteArray &xml)
{
    if (xml.trimmed().isEmpty()) {
        return sanitizerError(Error::Code::BadInput,
                              QStringLiteral("the compute-sanitizer report is empty (the sanitizer wrote nothing; it "
                                             "may have been stopped before it finished)"));
    }
    QXmlStreamReader x(xml);
    Report report;
    if (!x.readNextStartElement() || x.name() != QLatin1String("ComputeSanitizerOutput")) {
        const QString why =
            x.hasError()
                ? x.errorString()
                : QStringLiteral("the root element is <%1>, not <ComputeSanitizerOutput>").arg(x.name().toString());
        return sanitizerError(Error::Code::BadInput, QStringLiteral("the compute-sanitizer report is not one "
                                                                    "(line %1, column %2): %3")
                                                         .arg(x.lineNumber())
                                                         .arg(x.columnNumber())
                                                         .arg(why));
    }
    while (x.readNextStartElement()) {
        if (x.name() != QLatin1String("record")) {
            x.skipCurrentElement();
            continue;
        }
        Fields f;
        readRecord(x, f);
        if (x.hasError()) {
            break;
        }
        const QString kind = f.value(QStringLiteral("kind"));
        Finding d = findingFrom(kind, f);
        if (d.kind == Finding::Kind::Api && d.api == QLatin1String("cuFuncGetParamInfo") &&
            d.error == QLatin1String("CUDA_ERROR_INVALID_VALUE")) {
            ++report.apiFiltered; // the worker probes parameters until the driver says there are no more
            continue;
        }
        report.findings << d;
    }
    if (x.hasError()) {
        const bool truncated = x.error() == QXmlStreamReader::PrematureEndOfDocumentError;
        return sanitizerError(
            Error::Code::BadInput,
            QStringLiteral("the compute-sanitizer report %1 (line %2, column %3): %4")
                .arg(truncated ? QStringLiteral("ends in the middle") : QStringLiteral("is not well-formed XML"))
                .arg(x.lineNumber())
                .arg(x.columnNumber())
                .arg(x.errorString()));
    }
    return report;
}

void mapAddresses(Report &report, const QList<DeviceAllocation> &allocations, const QHash<QString, int> &elementBytes,
                  int reservedShared)
{
    for (Finding &f : report.findings) {
        if (f.kind == Finding::Kind::Hazard) {
            f.sharedOffset =
                f.address >= quint64(reservedShared) ? qint64(f.address) - reservedShared : qint64(f.address);
            continue;
        }
        if (f.address == 0 || f.kind == Finding::Kind::Race ||
            (!f.space.isEmpty() && f.space != QLatin1String("__global__"))) {
            continue;
        }
        // Inside a buffer first: allocations may lie back to back (the
        // sanitizer's runs have no guard zones), so "within a guard's width
        // past the end of a" is only the answer when no buffer holds it.
        const DeviceAllocation *inside = nullptr;
        const DeviceAllocation *past = nullptr;
        for (const DeviceAllocation &a : allocations) {
            const quint64 end = a.address + quint64(a.bytes);
            if (f.address >= a.address && f.address < end) {
                inside = &a;
                break;
            }
            // Within a guard's width past the end, where off-by-N writes land: the nearest end wins.
            if (f.address >= end && f.address < end + quint64(Guard::kGuardBytes) &&
                (!past || end > past->address + quint64(past->bytes))) {
                past = &a;
            }
        }
        const DeviceAllocation *a = inside ? inside : past;
        if (!a) {
            continue;
        }
        const quint64 end = a->address + quint64(a->bytes);
        const int eb = qMax(1, elementBytes.value(a->buffer, 1));
        f.buffer = a->buffer;
        f.element = qint64((f.address - a->address) / quint64(eb));
        f.bytesPast = f.address >= end ? qint64(f.address - end) : -1;
    }
}

} // namespace Kp::Sanitizer
