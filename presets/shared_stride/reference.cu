// Trusted reference for shared_stride: each thread sums one row of 32
// floats, in the same order as the kernels (so the sums agree exactly).

__global__ void row_sums_reference(const float *in, float *sums, int rows)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int k = 0; k < 32; ++k) {
            s += in[r * 32 + k];
        }
        sums[r] = s;
    }
}
