// kpg-expect: fail "c = sqrt(a)" first 1048576
// The chunk's offset is left out: every chunk computes the first chunk again.
extern "C" __global__ void newtonSqrt(const float *a, float *c, int offset, int count, int iters)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) {
        return;
    }
    const float x = a[i];
    float y = x;
    for (int k = 0; k < iters; ++k) {
        y = 0.5f * (y + x / y);
    }
    c[i] = y;
}
