#pragma once

#include "compile/sandbox.h"

#include <QString>
#include <QVariantMap>

namespace Kp {

class NvrtcApi;

/**
 * The remote side of remote compiling (docs/remote.md): `kpg-compiler --serve
 * --remote`, started over ssh by client/remotecompile for a machine without
 * NVRTC. No parent on that machine knows its folders, so it sandboxes itself
 * and says in its hello what the engine's options and cache key need.
 */
namespace RemoteNvrtc {

/**
 * What NVRTC needs on this machine and nothing more: the toolkit's include
 * folders (read), NVRTC's and the system's library folders (execute),
 * /etc/ld.so.cache and tempDir (write). The same rights a local
 * kpg-compiler gets, less the project's folders, which are not here.
 */
Sandbox::FsPolicy ownPolicy(const NvrtcApi &nv, const QString &tempDir);

/** For the hello: nvrtcVersion ("13.0"), nvrtcLibrary, archs (supported, as numbers) and includeDirs. */
QVariantMap describe(const NvrtcApi &nv);

} // namespace RemoteNvrtc
} // namespace Kp
