# The engine's parsers and the data types they build: everything that reads
# a file, a kernel signature, an expression or a compile log, and nothing that
# compiles, launches or starts a process. kpg_engine_parse is built from this
# list in the normal build (kpg_engine links it), and the fuzz build compiles
# the same list again with sanitizers (tests/fuzz). Because the list is a
# library of its own, a parser that starts to need a file outside it fails to
# link in the normal build (tests/fuzz's replay programs link only this
# library), not first in CI's fuzz build.
set(KPG_ENGINE_PARSE_SOURCES
  core/result.cpp
  core/expression.cpp
  core/fastexpr.cpp
  core/safefile.cpp
  core/format.cpp
  core/printable.cpp
  buffers/dtype.cpp
  buffers/bufferspec.cpp
  buffers/npy.cpp
  buffers/bufferinit.cpp
  kernel/cxxtokens.cpp
  kernel/signature.cpp
  kernel/starter.cpp
  kernel/structlayout.cpp
  compile/compiletypes.cpp
  compile/logparse.cpp
  project/orderedjson.cpp
  project/fieldreader.cpp
  project/bufferjson.cpp
  project/projectreader.cpp
  project/projectwriter.cpp
  project/stepgraph.cpp
  project/project.cpp
  project/pathpolicy.cpp
  run/texturedesc.cpp
  check/checkspec.cpp
  check/checkjson.cpp
  sweep/sweep.cpp
  compare/verdict.cpp
  compare/runfile.cpp
)
