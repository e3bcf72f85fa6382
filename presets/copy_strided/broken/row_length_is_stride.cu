// kpg-expect: fail "strided copy is a copy" first 33760
// Bug: the row length is written as stride instead of n / stride. With
// n = 2^20 and stride = 32 the threads' indices j = 32 (i % 32) + i / 32 pile
// up on the first 33,760 elements (many twice) and the rest of out is never
// written: the first element left out is 31 * 32 + 32767 + 1 = 33760.

__global__ void copy_coalesced(const float *in, float *out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i];
    }
}

__global__ void copy_strided(const float *in, float *out, int n, int stride)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const int j = (i % stride) * stride + i / stride;
        out[j] = in[j];
    }
}
