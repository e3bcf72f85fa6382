// Memory safety 2: a shared-memory reduction and its barriers.
//
// Each block of 256 threads sums 256 floats into partial[blockIdx.x]. Between
// the rounds of the tree every thread waits at __syncthreads(): without it a
// thread may read sdata[tid + s] before the thread that owns it has written
// it (broken/no_sync.cu). compute-sanitizer's racecheck finds that race and
// names the two accesses.

__global__ void reduce_racy(const float *in, float *partial, int n)
{
    extern __shared__ float sdata[];
    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s]; // the racing line without the barrier below
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
    }
}
