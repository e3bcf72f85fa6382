// Histogram of bytes with per-block counts in shared memory.
//
// Each block keeps its own 256 bins in shared memory: zero them, wait, count
// its share of the data with shared-memory atomics (fast, and contended only
// within the block), wait, then add its 256 counts to the global histogram
// with one atomicAdd per bin. A grid-stride loop lets a fixed number of blocks
// cover any n, so the final merge costs 256 atomics per block, not per byte.

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

    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        if (local[b] != 0) {
            atomicAdd(&hist[b], local[b]);
        }
    }
}
