// Trusted reference for the transpose presets: out (width x height) is in
// (height x width) transposed, one thread per element of in.

__global__ void transpose_reference(const float *in, float *out, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        out[x * height + y] = in[y * width + x];
    }
}
