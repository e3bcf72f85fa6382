// kpg-expect: fail "out = n" first 0
// Bug: no grid.sync(), so thread 0 adds the partial sums while other blocks are still writing them.

#include <cooperative_groups.h>
#include <cstdio>

namespace cg = cooperative_groups;

__global__ void reduceGrid(const float *in, float *partial, float *out, int n)
{
    cg::grid_group grid = cg::this_grid();
    extern __shared__ float s[];
    float sum = 0.0f;
    for (int i = grid.thread_rank(); i < n; i += grid.size()) {
        sum += in[i];
    }
    s[threadIdx.x] = sum;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) {
            s[threadIdx.x] += s[threadIdx.x + k];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s[0];
    }
    if (grid.thread_rank() == 0) {
        float total = 0.0f;
        for (int b = 0; b < gridDim.x; ++b) {
            total += partial[b];
        }
        out[0] = total;
        printf("sum = %.0f\n", total);
    }
}
