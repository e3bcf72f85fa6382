// kpg-expect: fail "out is in transposed" first 1
// Bug: the roles of width and height are swapped in both indices. Every
// index stays inside the buffers and each element of out is written once,
// but with the wrong element of in: out[1] gets in[600] where in[1000]
// (row 1, column 0) belongs.

__global__ void transpose_naive(const float *in, float *out, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        out[y * width + x] = in[x * height + y];
    }
}
