# cmake -DIN=file -DOUT=file.cpp -DNAME=symbol -DHEADER=include -P EmbedText.cmake
#
# Writes OUT, a C++ file defining `extern const char NAME[]` (in namespace
# Kp) as the whole text of IN, so a text that is better kept as its own file
# (PTX the worker loads) is edited and checked as that file and still built
# into the program. OUT is rewritten only when its text changes.
file(READ "${IN}" text)
set(delim "kpg_embed")
string(FIND "${text}" ")${delim}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains )${delim}\", which would end the raw string literal")
endif()
get_filename_component(from "${IN}" NAME)
file(WRITE "${OUT}.tmp" "// Generated from ${from} by cmake/EmbedText.cmake: edit that file, not this one.\n"
  "#include \"${HEADER}\"\n\nnamespace Kp {\n\nextern const char ${NAME}[] = R\"${delim}(${text})${delim}\";\n\n} // namespace Kp\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
