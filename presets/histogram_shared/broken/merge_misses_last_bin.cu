// kpg-expect: fail "hist matches the reference" first 255
// Bug: the merge loop stops one bin early (b < NUM_BINS - 1), so bin 255
// (the saturated upper tail) is never added to the global histogram.

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
    __syncthreads();

    for (int b = threadIdx.x; b < NUM_BINS - 1; b += blockDim.x) {
        if (local[b] != 0) {
            atomicAdd(&hist[b], local[b]);
        }
    }
}
