// kpg-expect: fail "c = a + b" first 16384
// Bug: an `if` where the loop should be, so each thread handles one element
// and only the first gridDim.x * blockDim.x = 64 * 256 = 16384 are written.

__global__ void add_grid_stride(const float *__restrict__ a,
                                const float *__restrict__ b,
                                float *__restrict__ c,
                                int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
