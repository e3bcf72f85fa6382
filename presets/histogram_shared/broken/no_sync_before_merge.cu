// kpg-expect: fail "hist matches the reference" first any
// Bug: no __syncthreads() between counting and merging. A thread merges bin b
// while other warps of its block are still counting into it, and those late
// counts never reach the global histogram: a race, so which bins come out
// short changes from run to run.

#define NUM_BINS 256

__global__ void histogram_shared(const unsigned char *data, unsigned int *hist, int n)
{
    __shared__ unsigned int local[NUM_BINS];
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        local[b] = 0;
    }
    __syncthreads();

    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&local[data[i]], 1u);
    }

    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        if (local[b] != 0) {
            atomicAdd(&hist[b], local[b]);
        }
    }
}
