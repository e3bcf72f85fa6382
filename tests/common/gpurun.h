#pragma once

// What the GPU tests of the run pipeline share (tst_gpu_run, tst_gpu_globals,
// tst_gpu_texture): a worker, a runner, an in-process compiler and the first
// device, and one call that parses, compiles, fills, prepares and runs a
// project. Header-only, like the rest of tests/common.

#include "client/engineclient.h"
#include "compile/compiler.h"
#include "cuda/deviceinfo.h"
#include "project/projectio.h"
#include "run/projectcompile.h"
#include "run/runner.h"
#include "worker/protocol.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <memory>
#include <optional>

namespace KpTest {

/** Why the GUI's GPU tests cannot run here ("no GPU: ..."), or nothing when the worker lists a device. */
inline std::optional<QString> noGpu()
{
    Kp::EngineClient client;
    const Kp::Result<Kp::DeviceList> r = client.listDevicesSync();
    if (!r) {
        return QStringLiteral("no GPU: %1").arg(r.error().message);
    }
    return std::nullopt;
}

class GpuRun
{
public:
    /** Why the tests cannot run here. */
    struct Unavailable
    {
        bool skip = false; ///< no driver or no device: the tests skip with the message; else they fail with it
        QString message;
    };

    /** Starts the worker and asks for its devices; the first is the one tests run on. */
    std::optional<Unavailable> start()
    {
        client = std::make_unique<Kp::EngineClient>();
        const Kp::Reply r = client->requestSync(Kp::Protocol::Type::ListDevices);
        if (!r) {
            const bool noGpu =
                r.error().code == Kp::Error::Code::NoDriver || r.error().code == Kp::Error::Code::NoDevice;
            return Unavailable{noGpu,
                               noGpu ? QStringLiteral("no GPU: %1").arg(r.error().message) : r.error().toString()};
        }
        device = Kp::DeviceList::fromVariant(r.value()).devices.first();
        runner = std::make_unique<Kp::Runner>(client.get());
        compiler = std::make_unique<Kp::Compiler>(Kp::Compiler::Config{QStringLiteral("-"), 0});
        return std::nullopt;
    }

    struct Ran
    {
        Kp::Project project;
        Kp::CompileResult compiled;
        Kp::RunResult result; ///< its error says where the way stopped (parse, compile, fill, prepare or run)
    };

    /**
     * Parses json, compiles it for the device, fills buffers from the
     * project's initial contents (reinit) or keeps them, prepares and runs.
     * warningsFail: a warning of prepareRun is an error of the test (a
     * project written to be exact must not be suspicious).
     */
    Ran run(const QJsonObject &json, Kp::HostBuffers &buffers, bool reinit = true, bool warningsFail = false)
    {
        Ran r;
        const Kp::Result<Kp::Project> p = Kp::parseProject(QJsonDocument(json));
        if (!p) {
            r.result.error = p.error();
            return r;
        }
        r.project = *p;
        const Kp::Result<Kp::CompileResult> c =
            compiler->compile(Kp::compileRequestFor(r.project, device.ccMajor, device.ccMinor));
        if (!c || !c->ok) {
            r.result.error = c ? Kp::Error{"test", Kp::Error::Code::CompileError, {}, c->log} : c.error();
            return r;
        }
        r.compiled = *c;
        if (Kp::Status s = buffers.materialize(r.project, reinit); !s) {
            r.result.error = s.error();
            return r;
        }
        const Kp::Result<Kp::PreparedRun> prepared = Kp::prepareRun(r.project, r.compiled, buffers, 0);
        if (!prepared) {
            r.result.error = prepared.error();
            return r;
        }
        if (warningsFail && !prepared->warnings.isEmpty()) {
            r.result.error = Kp::Error{"test", Kp::Error::Code::Internal, {}, prepared->warnings.join('\n')};
            return r;
        }
        r.result = runner->runSync(*prepared, &buffers);
        return r;
    }

    std::unique_ptr<Kp::EngineClient> client;
    std::unique_ptr<Kp::Runner> runner;
    std::unique_ptr<Kp::Compiler> compiler;
    Kp::DeviceInfo device;
};

} // namespace KpTest
