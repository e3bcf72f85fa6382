#include "run/runrequest.h"

#include <QJsonObject>
#include <QVariantList>

namespace Kp {

namespace {

// The wire keys, once. Renaming one changes the protocol (Protocol::kVersion).
const QString kDevice = QStringLiteral("device");
const QString kImage = QStringLiteral("image");
const QString kBuffers = QStringLiteral("buffers");
const QString kSteps = QStringLiteral("steps");
const QString kRepeat = QStringLiteral("repeat");
const QString kCount = QStringLiteral("count");
const QString kSwaps = QStringLiteral("swaps");
const QString kKillTimeoutMs = QStringLiteral("killTimeoutMs");
const QString kTiming = QStringLiteral("timing");
const QString kDownload = QStringLiteral("download");
const QString kTestSleepMs = QStringLiteral("testSleepMs");
const QString kGuards = QStringLiteral("guards");
const QString kSentinelBuffers = QStringLiteral("sentinelBuffers");
const QString kAccessRecords = QStringLiteral("accessRecords");
const QString kAccessStep = QStringLiteral("accessStep");
const QString kElementBytes = QStringLiteral("elem");
const QString kNoUpload = QStringLiteral("noUpload");
const QString kSymbol = QStringLiteral("symbol");
const QString kName = QStringLiteral("name");
const QString kPath = QStringLiteral("path");
const QString kId = QStringLiteral("id");
const QString kBytes = QStringLiteral("bytes");
const QString kKernel = QStringLiteral("kernel");
const QString kFunction = QStringLiteral("function");
const QString kGrid = QStringLiteral("grid");
const QString kBlock = QStringLiteral("block");
const QString kShared = QStringLiteral("shared");
const QString kArgs = QStringLiteral("args");
const QString kBuffer = QStringLiteral("buffer");
const QString kOffset = QStringLiteral("offset");
const QString kValue = QStringLiteral("value");
const QString kEnabled = QStringLiteral("enabled");
const QString kMode = QStringLiteral("mode");
const QString kWarmup = QStringLiteral("warmup");
const QString kMinSamples = QStringLiteral("minSamples");
const QString kMaxSamples = QStringLiteral("maxSamples");
const QString kMinSeconds = QStringLiteral("minSeconds");
const QString kMaxNoise = QStringLiteral("maxNoise");
const QString kTimeoutSeconds = QStringLiteral("timeoutSeconds");
const QString kBatch = QStringLiteral("batch");
const QString kCooperative = QStringLiteral("cooperative");
const QString kResetBuffers = QStringLiteral("resetBuffers");
const QString kKind = QStringLiteral("kind");
const QString kStream = QStringLiteral("stream");
const QString kWaits = QStringLiteral("waits");
const QString kEvent = QStringLiteral("event");
const QString kLabel = QStringLiteral("label");
const QString kStreams = QStringLiteral("streams");
const QString kEvents = QStringLiteral("events");
const QString kPriority = QStringLiteral("priority");
const QString kLegacy = QStringLiteral("legacy");
const QString kTimeline = QStringLiteral("timeline");
const QString kGraph = QStringLiteral("graph");
const QString kTextures = QStringLiteral("textures");
const QString kTexture = QStringLiteral("texture");
const QString kSpec = QStringLiteral("spec");
const QString kDType = QStringLiteral("dtype");
const QString kShape = QStringLiteral("shape");
const QString kField = QStringLiteral("field");

QVariantList dimVariant(const Dim3 &d)
{
    return QVariantList{d[0], d[1], d[2]};
}

Dim3 dimFromVariant(const QVariant &v)
{
    const QVariantList l = v.toList();
    Dim3 d{1, 1, 1};
    for (int k = 0; k < 3; ++k) {
        d[size_t(k)] = k < l.size() ? l[k].toLongLong() : 1;
    }
    return d;
}

QVariantList buffersVariant(const QList<RunBuffer> &buffers)
{
    QVariantList list;
    for (const RunBuffer &b : buffers) {
        QVariantMap m{{kName, b.name}, {kPath, b.path}, {kId, b.id}, {kBytes, b.bytes}};
        if (b.elementBytes != 1) {
            m.insert(kElementBytes, b.elementBytes);
        }
        if (!b.upload) {
            m.insert(kNoUpload, true);
        }
        if (!b.symbol.isEmpty()) {
            m.insert(kSymbol, b.symbol);
        }
        list << m;
    }
    return list;
}

} // namespace

QVariantMap RunRequest::toVariant() const
{
    QVariantList stepList;
    for (const RunStep &s : steps) {
        QVariantList argList;
        for (const RunArg &a : s.args) {
            if (a.isBuffer()) {
                argList << QVariantMap{{kBuffer, a.buffer}, {kOffset, a.offset}};
            } else if (a.isTexture()) {
                argList << QVariantMap{{kTexture, a.texture}};
            } else {
                argList << QVariantMap{{kValue, a.value}};
            }
        }
        QVariantMap sm{{kKernel, s.kernel},           {kFunction, s.loweredName}, {kGrid, dimVariant(s.grid)},
                       {kBlock, dimVariant(s.block)}, {kShared, s.sharedBytes},   {kArgs, argList}};
        if (s.cooperative) {
            sm.insert(kCooperative, true);
        }
        // Stream keys only where used: a kernel step's body is what it always was.
        if (s.kind != RunStep::Kind::Kernel) {
            sm.insert(kKind, int(s.kind));
            sm.insert(kEvent, s.event);
            sm.insert(kBuffer, s.buffer);
            sm.insert(kOffset, s.offset);
            sm.insert(kBytes, s.bytes);
            sm.insert(kValue, s.memsetValue);
        }
        if (s.stream != 0) {
            sm.insert(kStream, s.stream);
        }
        if (!s.waits.isEmpty()) {
            QVariantList w;
            for (int e : s.waits) {
                w << e;
            }
            sm.insert(kWaits, w);
        }
        if (!s.label.isEmpty()) {
            sm.insert(kLabel, s.label);
        }
        stepList << sm;
    }
    QVariantList swapList;
    for (const auto &[a, b] : swaps) {
        swapList << QVariant(QVariantList{a, b});
    }
    QVariantMap m{
        {kDevice, device},
        {kImage, image},
        {kBuffers, buffersVariant(buffers)},
        {kSteps, stepList},
        {kRepeat, QVariantMap{{kCount, repeat}, {kSwaps, swapList}}},
        {kKillTimeoutMs, killTimeoutMs},
        {kTiming,
         QVariantMap{{kEnabled, timing.enabled},
                     {kMode, timing.mode == RunTiming::Mode::Hot ? QStringLiteral("hot") : QStringLiteral("cold")},
                     {kWarmup, timing.warmup},
                     {kMinSamples, timing.minSamples},
                     {kMaxSamples, timing.maxSamples},
                     {kMinSeconds, timing.minSeconds},
                     {kMaxNoise, timing.maxNoise},
                     {kTimeoutSeconds, timing.timeoutSeconds},
                     {kBatch, timing.batch}}},
    };
    // Left out when they have their defaults, so an ordinary run's body is
    // what it always was.
    if (!download) {
        m.insert(kDownload, false);
    }
    if (testSleepMs > 0) {
        m.insert(kTestSleepMs, testSleepMs);
    }
    if (!guards) {
        m.insert(kGuards, false);
    }
    if (accessRecords > 0) {
        m.insert(kAccessRecords, accessRecords);
        m.insert(kAccessStep, accessStep);
    }
    if (!sentinelBuffers.isEmpty()) {
        QVariantList l;
        for (int b : sentinelBuffers) {
            l << b;
        }
        m.insert(kSentinelBuffers, l);
    }
    if (!timing.resetBuffers.isEmpty()) {
        QVariantList reset;
        for (int b : timing.resetBuffers) {
            reset << b;
        }
        QVariantMap t = m.value(kTiming).toMap();
        t.insert(kResetBuffers, reset);
        m.insert(kTiming, t);
    }
    if (!streams.isEmpty()) {
        QVariantList sl;
        for (const RunStream &st : streams) {
            sl << QVariantMap{{kName, st.name}, {kPriority, st.priority}, {kLegacy, st.legacy}};
        }
        m.insert(kStreams, sl);
    }
    if (!events.isEmpty()) {
        m.insert(kEvents, events);
    }
    if (timeline) {
        m.insert(kTimeline, true);
    }
    if (graph) {
        m.insert(kGraph, true);
    }
    if (!textures.isEmpty()) {
        QVariantList tl;
        for (const RunTexture &t : textures) {
            QVariantList shape;
            for (qint64 e : t.shape) {
                shape << e;
            }
            tl << QVariantMap{{kSpec, t.spec.toJson().toVariantMap()},
                              {kBuffer, t.buffer},
                              {kDType, dtypeName(t.dtype)},
                              {kShape, shape},
                              {kField, t.field}};
        }
        m.insert(kTextures, tl);
    }
    return m;
}

QVariantMap RunRequest::toPrepareVariant() const
{
    return QVariantMap{{kDevice, device}, {kBuffers, buffersVariant(buffers)}};
}

RunRequest RunRequest::fromVariant(const QVariantMap &m)
{
    RunRequest r;
    r.device = m.value(kDevice).toInt();
    r.image = m.value(kImage).toByteArray();
    for (const QVariant &v : m.value(kBuffers).toList()) {
        const QVariantMap b = v.toMap();
        r.buffers << RunBuffer{b.value(kName).toString(),
                               b.value(kPath).toString(),
                               b.value(kId).toULongLong(),
                               b.value(kBytes).toLongLong(),
                               qMax(1, b.value(kElementBytes, 1).toInt()),
                               !b.value(kNoUpload, false).toBool(),
                               b.value(kSymbol).toString()};
    }
    for (const QVariant &v : m.value(kSteps).toList()) {
        const QVariantMap sm = v.toMap();
        RunStep s;
        s.kernel = sm.value(kKernel).toString();
        s.loweredName = sm.value(kFunction).toString();
        s.grid = dimFromVariant(sm.value(kGrid));
        s.block = dimFromVariant(sm.value(kBlock));
        s.sharedBytes = sm.value(kShared).toLongLong();
        s.cooperative = sm.value(kCooperative, false).toBool();
        for (const QVariant &av : sm.value(kArgs).toList()) {
            const QVariantMap am = av.toMap();
            RunArg a;
            if (am.contains(kBuffer)) {
                a.buffer = am.value(kBuffer).toInt();
                a.offset = am.value(kOffset).toLongLong();
            } else if (am.contains(kTexture)) {
                a.texture = am.value(kTexture).toInt();
            } else {
                a.value = am.value(kValue).toByteArray();
            }
            s.args << a;
        }
        if (sm.contains(kKind)) {
            const int kind = sm.value(kKind).toInt();
            s.kind = kind >= 0 && kind <= int(RunStep::Kind::Wait) ? RunStep::Kind(kind) : RunStep::Kind::Wait;
            s.event = sm.value(kEvent, -1).toInt();
            s.buffer = sm.value(kBuffer, -1).toInt();
            s.offset = sm.value(kOffset).toLongLong();
            s.bytes = sm.value(kBytes).toLongLong();
            s.memsetValue = sm.value(kValue).toInt();
        }
        s.stream = sm.value(kStream, 0).toInt();
        for (const QVariant &w : sm.value(kWaits).toList()) {
            s.waits << w.toInt();
        }
        s.label = sm.value(kLabel).toString();
        r.steps << s;
    }
    const QVariantMap repeat = m.value(kRepeat).toMap();
    r.repeat = repeat.value(kCount, 1).toInt();
    for (const QVariant &sv : repeat.value(kSwaps).toList()) {
        const QVariantList pair = sv.toList();
        if (pair.size() == 2) {
            r.swaps.append({pair[0].toInt(), pair[1].toInt()});
        }
    }
    r.killTimeoutMs = m.value(kKillTimeoutMs, 10000).toInt();
    const QVariantMap t = m.value(kTiming).toMap();
    r.timing.enabled = t.value(kEnabled, true).toBool();
    r.timing.mode = t.value(kMode).toString() == QStringLiteral("hot") ? RunTiming::Mode::Hot : RunTiming::Mode::Cold;
    r.timing.warmup = t.value(kWarmup, 1).toInt();
    r.timing.minSamples = t.value(kMinSamples, 10).toInt();
    r.timing.maxSamples = t.value(kMaxSamples, 10000).toInt();
    r.timing.minSeconds = t.value(kMinSeconds, 0.5).toDouble();
    r.timing.maxNoise = t.value(kMaxNoise, 0.005).toDouble();
    r.timing.timeoutSeconds = t.value(kTimeoutSeconds, 15.0).toDouble();
    r.timing.batch = t.value(kBatch, 0).toInt();
    for (const QVariant &b : t.value(kResetBuffers).toList()) {
        r.timing.resetBuffers << b.toInt();
    }
    r.download = m.value(kDownload, true).toBool();
    r.testSleepMs = m.value(kTestSleepMs, 0).toInt();
    r.guards = m.value(kGuards, true).toBool();
    for (const QVariant &v : m.value(kSentinelBuffers).toList()) {
        r.sentinelBuffers << v.toInt();
    }
    r.accessRecords = m.value(kAccessRecords, 0).toLongLong();
    r.accessStep = m.value(kAccessStep, -1).toInt();
    for (const QVariant &v : m.value(kStreams).toList()) {
        const QVariantMap sm = v.toMap();
        r.streams << RunStream{sm.value(kName).toString(), sm.value(kPriority).toInt(), sm.value(kLegacy).toBool()};
    }
    r.events = m.value(kEvents).toStringList();
    r.timeline = m.value(kTimeline, false).toBool();
    r.graph = m.value(kGraph, false).toBool();
    for (const QVariant &v : m.value(kTextures).toList()) {
        const QVariantMap tm = v.toMap();
        RunTexture t;
        // A spec that does not read back stays the default: the worker's
        // descriptor check then reports the texture by its field.
        if (Result<TextureSpec> spec = TextureSpec::fromJson(QJsonObject::fromVariantMap(tm.value(kSpec).toMap()),
                                                             tm.value(kField).toString());
            spec) {
            t.spec = *spec;
        }
        t.buffer = tm.value(kBuffer, -1).toInt();
        t.dtype = dtypeFromName(tm.value(kDType).toString()).value_or(DType::Float32);
        for (const QVariant &e : tm.value(kShape).toList()) {
            t.shape << e.toLongLong();
        }
        t.field = tm.value(kField).toString();
        r.textures << t;
    }
    return r;
}

bool RunRequest::usesStreams() const
{
    if (streams.size() > 1 || !events.isEmpty()) {
        return true;
    }
    for (const RunStep &s : steps) {
        if (s.kind != RunStep::Kind::Kernel || s.stream != 0 || !s.waits.isEmpty()) {
            return true;
        }
    }
    return false;
}

} // namespace Kp
