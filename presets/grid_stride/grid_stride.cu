// Vector add with a grid-stride loop: a small, fixed grid covers any n.
//
// Each thread starts at its global index and steps by the total number of
// threads in the grid (gridDim.x * blockDim.x) until it passes n. The launch
// size no longer depends on n: a few blocks per SM are enough to fill the GPU,
// and consecutive threads still touch consecutive elements (coalesced).

__global__ void add_grid_stride(const float *__restrict__ a,
                                const float *__restrict__ b,
                                float *__restrict__ c,
                                int n)
{
    const int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}
