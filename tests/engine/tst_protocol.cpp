// The wire format between the engine and kpg-worker: frames, CBOR, limits.

#include "run/runrequest.h"
#include "worker/protocol.h"

#include <QCborMap>
#include <QCborValue>
#include <QRandomGenerator>
#include <QtEndian>
#include <QtTest>

using namespace Kp;
using namespace Kp::Protocol;

class TestProtocol : public QObject
{
    Q_OBJECT

private:
    static QByteArray frame(const QByteArray &payload)
    {
        QByteArray f(4, Qt::Uninitialized);
        qToBigEndian<quint32>(static_cast<quint32>(payload.size()), f.data());
        return f + payload;
    }

private Q_SLOTS:
    void roundTrip_data()
    {
        QTest::addColumn<QString>("type");
        QTest::addColumn<quint64>("id");
        QTest::addColumn<QVariantMap>("body");
        QTest::newRow("empty body") << "ping" << quint64(1) << QVariantMap{};
        QTest::newRow("nested") << "listDevices" << quint64(42)
                                << QVariantMap{{"devices", QVariantList{QVariantMap{{"name", "GPU"}, {"ccMajor", 9}}}},
                                               {"driverVersion", 13000}};
        QTest::newRow("large id and int64")
            << "reply" << (quint64(1) << 40) << QVariantMap{{"bytes", qint64(150) * 1024 * 1024 * 1024}};
        QTest::newRow("unicode and bytes")
            << "hello" << quint64(7)
            << QVariantMap{{"text", QString::fromUtf8("Grüße ∑")}, {"raw", QByteArray("\x00\x01\xff", 3)}};
        QTest::newRow("double and bool") << "x" << quint64(3) << QVariantMap{{"d", 1.5}, {"b", true}};
    }
    void roundTrip()
    {
        QFETCH(QString, type);
        QFETCH(quint64, id);
        QFETCH(QVariantMap, body);
        const QByteArray bytes = encode(Message{kVersion, type, id, body});
        QCOMPARE(qFromBigEndian<quint32>(bytes.constData()), quint32(bytes.size() - 4));
        FrameDecoder d;
        d.feed(bytes);
        auto m = d.next();
        QVERIFY(m.has_value());
        KP_VERIFY_RESULT(*m);
        QCOMPARE(m->value().version, kVersion);
        QCOMPARE(m->value().type, type);
        QCOMPARE(m->value().id, id);
        QCOMPARE(m->value().body, body);
        QVERIFY(!d.next().has_value());
        QCOMPARE(d.pendingBytes(), 0);
    }

    void byteByByte()
    {
        // A socket may hand over a frame in any number of pieces.
        const QByteArray bytes = encode(Message{kVersion, "ping", 9, {{"k", "v"}}});
        FrameDecoder d;
        for (qsizetype i = 0; i < bytes.size() - 1; ++i) {
            d.feed(bytes.mid(i, 1));
            QVERIFY2(!d.next().has_value(), qPrintable(QString("complete after %1 bytes").arg(i + 1)));
        }
        d.feed(bytes.right(1));
        auto m = d.next();
        QVERIFY(m && m->ok());
        QCOMPARE(m->value().id, quint64(9));
    }

    // A stream of frames of mixed sizes (buffer chunks of a MiB and more
    // among small replies) cut at random places, as pipe reads cut it: every
    // frame comes out whole and in order, and nothing is left over.
    void streamCutAnywhere()
    {
        QRandomGenerator rng(11);
        QByteArray stream;
        QList<QByteArray> payloads;
        for (int i = 0; i < 40; ++i) {
            const qsizetype size = i % 7 == 3 ? 3 * 1024 * 1024 + i : rng.bounded(1, 5000);
            QByteArray data(size, Qt::Uninitialized);
            for (qsizetype j = 0; j < size; j += 997) {
                data[j] = char(rng.generate());
            }
            payloads << data;
            stream += encode(Message{kVersion, Type::BufferData, quint64(i + 1), {{"data", data}}});
        }
        FrameDecoder d;
        int got = 0;
        for (qsizetype at = 0; at < stream.size();) {
            const qsizetype n = qMin(stream.size() - at, qsizetype(rng.bounded(1, 3 * 1024 * 1024)));
            d.feed(QByteArrayView(stream.constData() + at, n));
            at += n;
            while (auto m = d.next()) {
                KP_VERIFY_RESULT(*m);
                QCOMPARE(m->value().id, quint64(got + 1));
                QCOMPARE(m->value().body.value("data").toByteArray(), payloads.at(got));
                ++got;
            }
        }
        QCOMPARE(got, payloads.size());
        QCOMPARE(d.pendingBytes(), 0);
    }

    void severalFramesInOneChunk()
    {
        QByteArray bytes;
        for (quint64 i = 1; i <= 5; ++i) {
            bytes += encode(Message{kVersion, "ping", i, {}});
        }
        bytes += encode(Message{kVersion, "ping", 6, {}}).left(3); // a partial seventh
        FrameDecoder d;
        d.feed(bytes);
        for (quint64 i = 1; i <= 5; ++i) {
            auto m = d.next();
            QVERIFY(m && m->ok());
            QCOMPARE(m->value().id, i);
        }
        QVERIFY(!d.next().has_value());
        QCOMPARE(d.pendingBytes(), 3);
    }

    void oversizedFrameIsRefused()
    {
        FrameDecoder d(1024);
        QByteArray header(4, Qt::Uninitialized);
        qToBigEndian<quint32>(0xFFFFFFF0u, header.data());
        d.feed(header);
        auto m = d.next();
        QVERIFY(m.has_value());
        QVERIFY(!m->ok());
        QCOMPARE(m->error().code, Error::Code::Protocol);
        QVERIFY2(m->error().message.contains("exceeds the limit"), qPrintable(m->error().message));
        // The stream cannot be resynchronised: the decoder stays failed.
        d.feed(encode(Message{kVersion, "ping", 1, {}}));
        auto again = d.next();
        QVERIFY(again && !again->ok());
    }

    void malformedPayloads_data()
    {
        QTest::addColumn<QByteArray>("payload");
        QTest::addColumn<QString>("expected");
        QTest::newRow("not cbor") << QByteArray("\xff\xff\xff", 3) << "malformed CBOR";
        QTest::newRow("truncated cbor") << QCborValue(QCborMap{{"v", 1}, {"type", "pingpong"}}).toCbor().left(8)
                                        << "malformed CBOR";
        QTest::newRow("array not map") << QCborValue(QCborArray{1, 2}).toCbor() << "not a CBOR map";
        QTest::newRow("no version") << QCborValue(QCborMap{{"type", "ping"}, {"id", 1}}).toCbor() << "'v'";
        QTest::newRow("no type") << QCborValue(QCborMap{{"v", 1}, {"id", 1}}).toCbor() << "'type'";
        QTest::newRow("empty type") << QCborValue(QCborMap{{"v", 1}, {"type", ""}, {"id", 1}}).toCbor() << "'type'";
        QTest::newRow("negative id") << QCborValue(QCborMap{{"v", 1}, {"type", "p"}, {"id", -1}}).toCbor() << "'id'";
        QTest::newRow("body not map") << QCborValue(QCborMap{{"v", 1}, {"type", "p"}, {"id", 1}, {"body", 3}}).toCbor()
                                      << "'body'";
    }
    void malformedPayloads()
    {
        QFETCH(QByteArray, payload);
        QFETCH(QString, expected);
        FrameDecoder d;
        d.feed(frame(payload));
        auto m = d.next();
        QVERIFY(m.has_value());
        QVERIFY(!m->ok());
        QCOMPARE(m->error().code, Error::Code::Protocol);
        QVERIFY2(m->error().message.contains(expected), qPrintable(m->error().message));
    }

    void otherVersionDecodes()
    {
        // A newer peer's message still decodes, so the receiver can answer
        // "version mismatch" instead of dropping the connection.
        Message m{kVersion + 1, "hello", 1, {}};
        FrameDecoder d;
        d.feed(encode(m));
        auto r = d.next();
        QVERIFY(r && r->ok());
        QCOMPARE(r->value().version, kVersion + 1);
    }

    void replies()
    {
        const Message req{kVersion, "listDevices", 17, {}};
        const Message ok = reply(req, {{"a", 1}});
        QCOMPARE(ok.type, Type::Reply);
        QCOMPARE(ok.id, quint64(17));
        const Error e{"kpg-worker", Error::Code::NoDriver, "dlopen", "No NVIDIA driver found"};
        const Message bad = errorReply(req, e);
        QCOMPARE(bad.type, Type::ErrorReply);
        QCOMPARE(bad.id, quint64(17));
        const Error back = Error::fromVariant(bad.body);
        QCOMPARE(back.code, Error::Code::NoDriver);
        QCOMPARE(back.where, e.where);
        QCOMPARE(back.apiCall, e.apiCall);
        QCOMPARE(back.message, e.message);
    }

    void runRequestRoundTrip()
    {
        RunRequest r;
        r.device = 1;
        r.image = QByteArray("\x7f"
                             "ELF\x00\x01",
                             6);
        r.buffers << RunBuffer{"a", "/proc/1/fd/7", 11, 4000} << RunBuffer{"b", "/proc/1/fd/8", 12, 0};
        RunStep s;
        s.kernel = "tiled<16>";
        s.loweredName = "_Z5tiledILi16EEvPf";
        s.grid = {4096, 2, 1};
        s.block = {256, 1, 1};
        s.sharedBytes = 49152;
        RunArg ptr;
        ptr.buffer = 1;
        ptr.offset = 16;
        RunArg value;
        value.value = QByteArray("\xe8\x03\x00\x00", 4);
        s.args << ptr << value;
        r.steps << s << RunStep{};
        r.repeat = 3;
        r.swaps.append({0, 1});
        r.killTimeoutMs = 2500;
        r.timing.enabled = false;
        r.timing.mode = RunTiming::Mode::Hot;
        r.timing.warmup = 4;
        r.timing.minSamples = 20;
        r.timing.maxSamples = 500;
        r.timing.minSeconds = 0.25;
        r.timing.maxNoise = 0.01;
        r.timing.timeoutSeconds = 7.5;
        r.timing.batch = 8;
        r.download = false;
        r.testSleepMs = 20;

        // Through a real frame, as the worker receives it.
        FrameDecoder decoder;
        decoder.feed(encode(Message{kVersion, Type::Run, 5, r.toVariant()}));
        const auto m = decoder.next();
        QVERIFY(m && m->ok());
        const RunRequest back = RunRequest::fromVariant(m->value().body);
        QCOMPARE(back.steps, r.steps);
        QCOMPARE(back.buffers, r.buffers);
        QCOMPARE(back.timing, r.timing);
        QVERIFY(back == r);
    }

    void runRequestWireForm()
    {
        // The keys the worker has always read; an ordinary run leaves out the
        // optional ones.
        RunRequest r;
        RunStep s;
        s.loweredName = "k";
        s.sharedBytes = 64;
        r.steps << s;
        const QVariantMap body = r.toVariant();
        QCOMPARE(body.keys(),
                 QStringList({"buffers", "device", "image", "killTimeoutMs", "repeat", "steps", "timing"}));
        const QVariantMap step = body.value("steps").toList().first().toMap();
        QCOMPARE(step.value("function").toString(), QString("k"));
        QCOMPARE(step.value("shared").toLongLong(), qint64(64));
        QCOMPARE(body.value("timing").toMap().value("mode").toString(), QString("cold"));
        QCOMPARE(r.toPrepareVariant().keys(), QStringList({"buffers", "device"}));
    }

    void runRequestMissingKeysTakeDefaults()
    {
        QVERIFY(RunRequest::fromVariant({}) == RunRequest{});
        const RunRequest r = RunRequest::fromVariant({{"device", 2}, {"testSleepMs", 100}});
        QCOMPARE(r.device, 2);
        QCOMPARE(r.testSleepMs, 100);
        QVERIFY(r.download);
        QVERIFY(r.timing.enabled);
        QCOMPARE(r.killTimeoutMs, 10000);
    }

    void errorCodeNamesRoundTrip()
    {
        for (int c = 0; c <= static_cast<int>(Error::Code::Cancelled); ++c) {
            const auto code = static_cast<Error::Code>(c);
            QCOMPARE(Error::codeFromName(Error::codeName(code)).value_or(Error::Code::Internal), code);
        }
        QVERIFY(!Error::codeFromName("no-such-code").has_value());
    }
};

QTEST_GUILESS_MAIN(TestProtocol)
#include "tst_protocol.moc"
