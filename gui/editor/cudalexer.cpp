#include "cudalexer.h"

#include "codeeditor.h"

#include <QFontDatabase>
#include <QPalette>

namespace Kp {

namespace {
// Set 1: C++ keywords and CUDA qualifiers.
const char *kKeywords =
    "alignas alignof asm auto bool break case catch char char16_t char32_t char8_t class const "
    "consteval constexpr constinit const_cast continue decltype default delete do double "
    "dynamic_cast else enum explicit export extern false float for friend goto if inline int long "
    "mutable namespace new noexcept nullptr operator private protected public register "
    "reinterpret_cast return short signed sizeof static static_assert static_cast struct switch "
    "template this thread_local throw true try typedef typeid typename union unsigned using virtual "
    "void volatile wchar_t while "
    "__global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__ __noinline__ "
    "__forceinline__ __inline__ __launch_bounds__ __cluster_dims__ __grid_constant__ __align__ "
    "__builtin_assume __builtin_expect";

// Set 2: built-in variables, vector and fixed-width types, common intrinsics.
const char *kBuiltins = "threadIdx blockIdx blockDim gridDim warpSize clusterDim clusterIdx "
                        "size_t ptrdiff_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t "
                        "half half2 __half __half2 __nv_bfloat16 __nv_bfloat162 dim3 "
                        "char1 char2 char3 char4 uchar1 uchar2 uchar3 uchar4 short1 short2 short3 short4 "
                        "ushort1 ushort2 ushort3 ushort4 int1 int2 int3 int4 uint1 uint2 uint3 uint4 "
                        "long1 long2 long3 long4 ulong1 ulong2 ulong3 ulong4 longlong1 longlong2 longlong4 "
                        "float1 float2 float3 float4 double1 double2 double3 double4 "
                        "__syncthreads __syncthreads_count __syncthreads_and __syncthreads_or __syncwarp "
                        "__threadfence __threadfence_block __threadfence_system "
                        "__shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync __ballot_sync __any_sync "
                        "__all_sync __activemask __match_any_sync __reduce_add_sync __popc __popcll __clz __ffs "
                        "__brev __fmaf_rn __fdividef __expf __logf __sinf __cosf __powf __saturatef __ldg __ldcg "
                        "__stcg __restrict atomicAdd atomicSub atomicExch atomicMin atomicMax atomicInc atomicDec "
                        "atomicCAS atomicAnd atomicOr atomicXor clock clock64 printf assert "
                        "make_int2 make_int3 make_int4 make_uint2 make_uint3 make_uint4 make_float2 make_float3 "
                        "make_float4 make_double2 fmaf fminf fmaxf sqrtf rsqrtf expf logf sinf cosf tanhf fabsf";
} // namespace

CudaLexer::CudaLexer(QObject *parent)
    : QsciLexerCPP(parent)
{
    setFoldComments(true);
    setFoldCompact(false);
    const QFont mono = monospaceFont();
    setDefaultFont(mono);
    setFont(mono);
}

const char *CudaLexer::blockStartKeyword(int *style) const
{
    if (style) {
        *style = Keyword;
    }
    return "case default private protected public";
}

const char *CudaLexer::keywords(int set) const
{
    switch (set) {
    case 1: return kKeywords;
    case 2: return kBuiltins;
    default: return QsciLexerCPP::keywords(set);
    }
}

void CudaLexer::applyPalette(const QPalette &palette)
{
    const bool dark = palette.color(QPalette::Base).lightness() < 128;
    const QColor paper = palette.color(QPalette::Base);
    const QColor text = palette.color(QPalette::Text);
    setDefaultPaper(paper);
    setDefaultColor(text);
    setPaper(paper);
    setColor(text);
    struct StyleColour
    {
        int style;
        QColor light;
        QColor dark;
    };
    const StyleColour colours[] = {
        {Comment, QColor(0x6a737d), QColor(0x8b949e)},
        {CommentLine, QColor(0x6a737d), QColor(0x8b949e)},
        {CommentDoc, QColor(0x6a737d), QColor(0x8b949e)},
        {CommentLineDoc, QColor(0x6a737d), QColor(0x8b949e)},
        {Keyword, QColor(0x0033b3), QColor(0xff7b72)},
        {KeywordSet2, QColor(0x00627a), QColor(0xd2a8ff)},
        {Number, QColor(0x1750eb), QColor(0x79c0ff)},
        {DoubleQuotedString, QColor(0x067d17), QColor(0xa5d6ff)},
        {SingleQuotedString, QColor(0x067d17), QColor(0xa5d6ff)},
        {PreProcessor, QColor(0x9e880d), QColor(0xffa657)},
        {Operator, text, text},
        {Identifier, text, text},
    };
    for (const StyleColour &c : colours) {
        setColor(dark ? c.dark : c.light, c.style);
    }
    QFont bold = font(Keyword);
    bold.setBold(true);
    setFont(bold, Keyword);
}

} // namespace Kp
