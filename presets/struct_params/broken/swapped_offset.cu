// kpg-expect: fail "out = min(P * scale + offset, limit)" first 0
// Bug: the offset's components are swapped (x gets offset.y), wrong from the first element on.

struct Transform
{
    float scale;
    float2 offset; // 8-byte aligned: the compiler puts 4 bytes of padding before it
    float limit;
};

__global__ void transformPoints(Transform t, const float2 *in, float2 *out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float2 p = in[i];
        out[i] = make_float2(fminf(p.x * t.scale + t.offset.y, t.limit), fminf(p.y * t.scale + t.offset.x, t.limit));
    }
}
