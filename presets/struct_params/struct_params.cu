// A struct of parameters passed by value: the kernel gets one argument
// instead of five, as image and physics codes usually write it.

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
        out[i] = make_float2(fminf(p.x * t.scale + t.offset.x, t.limit), fminf(p.y * t.scale + t.offset.y, t.limit));
    }
}
