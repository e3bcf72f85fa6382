// kpg-expect: fail "partial sums match the reference" first 0
// Bug: the stride starts at 2 instead of 1, so the first level of the tree
// is skipped and every element at an odd index is left out of every sum.

__global__ void reduce_interleaved(const float *in, float *partial, int n)
{
    extern __shared__ float sdata[];
    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();

    for (unsigned int stride = 2; stride < blockDim.x; stride *= 2) {
        if (tid % (2 * stride) == 0) {
            sdata[tid] += sdata[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
    }
}
