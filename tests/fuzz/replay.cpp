// The main of the fuzz targets' replay programs (tests/CMakeLists.txt): runs
// LLVMFuzzerTestOneInput once on every file named or found in a named folder,
// the way libFuzzer replays a corpus, but without libFuzzer or sanitizers. The
// normal build runs every committed corpus through the parsers this way, so a
// parser change that crashes or hangs on an input found earlier fails ctest,
// and a parser that needs a file outside engine/parsesources.cmake fails to
// link here rather than first in CI's fuzz build.
#include <QCoreApplication>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>

#include <cstdint>
#include <cstdio>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

bool replay(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        std::fprintf(stderr, "replay: cannot read %s: %s\n", qPrintable(path), qPrintable(file.errorString()));
        return false;
    }
    const QByteArray bytes = file.readAll();
    // Named before it runs, so a crash or a hang in ctest's log names its input.
    std::printf("%s\n", qPrintable(path));
    std::fflush(stdout);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.constData()), size_t(bytes.size()));
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments().mid(1);
    if (args.isEmpty()) {
        std::fprintf(stderr, "usage: %s FILE-OR-FOLDER...\n", argv[0]);
        return 2;
    }
    int inputs = 0;
    for (const QString &arg : args) {
        if (QFileInfo(arg).isDir()) {
            QDirIterator it(arg, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
            QStringList files;
            while (it.hasNext())
                files << it.next();
            files.sort(); // the same order on every machine, so a failure names the same input
            for (const QString &f : files) {
                if (!replay(f))
                    return 1;
                ++inputs;
            }
        } else {
            if (!replay(arg))
                return 1;
            ++inputs;
        }
    }
    if (inputs == 0) {
        std::fprintf(stderr, "replay: no inputs in %s\n", qPrintable(args.join(QLatin1Char(' '))));
        return 1;
    }
    std::printf("replayed %d inputs\n", inputs);
    return 0;
}
