// kpg-expect: fail "c = a + b" first 256
// Bug: the loop starts at threadIdx.x instead of the global index, so every
// block does the same elements and blocks 1.. skip their own. Strided by the
// whole grid from threadIdx.x, only the first 256 elements of each
// gridDim.x * blockDim.x stretch are written; element 256 is the first missed.

__global__ void add_grid_stride(const float *__restrict__ a,
                                const float *__restrict__ b,
                                float *__restrict__ c,
                                int n)
{
    const int stride = gridDim.x * blockDim.x;
    for (int i = threadIdx.x; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}
