// Reduction, step 1: interleaved addressing (a tree in shared memory).
//
// Each block sums blockDim.x elements of in into partial[blockIdx.x]. Every
// thread loads one element into shared memory; then, for stride 1, 2, 4, ...,
// the threads whose index is a multiple of 2 * stride add the element stride
// places to their right. After log2(blockDim.x) rounds sdata[0] holds the sum.
//
// It is correct but slow: the test `tid % (2 * stride) == 0` leaves most
// threads of every warp idle (divergence), and % is expensive.
// reduce_sequential fixes both. blockDim.x must be a power of two; the shared
// memory (sharedBytes) is one float per thread.

__global__ void reduce_interleaved(const float *in, float *partial, int n)
{
    extern __shared__ float sdata[];
    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();

    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        if (tid % (2 * stride) == 0) {
            sdata[tid] += sdata[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
    }
}
