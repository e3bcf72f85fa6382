// kpg-expect: fail "hist matches the reference" first any
// Bug: a plain ++ instead of atomicAdd. Two threads that read the same bin at
// the same time both write back count + 1 and one increment is lost: a race,
// so which bins come out short changes from run to run.

__global__ void histogram_global(const unsigned char *data, unsigned int *hist, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        hist[data[i]]++;
    }
}
