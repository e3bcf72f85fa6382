// Reduction, step 2: sequential addressing.
//
// The same tree as reduce_interleaved, folded the other way: in each round
// the first half of the active threads adds the second half,
// sdata[tid] += sdata[tid + s] for tid < s, with s = blockDim.x / 2, / 4, ...
// The active threads are contiguous, so whole warps are either busy or done
// (no divergence inside a warp until s < 32), there is no %, and consecutive
// threads read consecutive words of shared memory (no bank conflicts).

__global__ void reduce_sequential(const float *in, float *partial, int n)
{
    extern __shared__ float sdata[];
    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
    }
}
