// One chunk of the work: sqrt(a) by Newton's iteration, `iters` divisions per
// element, so the kernel takes about as long as copying its chunk.
extern "C" __global__ void newtonSqrt(const float *a, float *c, int offset, int count, int iters)
{
    const int i = offset + blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= offset + count) {
        return;
    }
    const float x = a[i];
    float y = x;
    for (int k = 0; k < iters; ++k) {
        y = 0.5f * (y + x / y);
    }
    c[i] = y;
}
