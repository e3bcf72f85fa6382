// kpg-expect: fail "c = a + b" first 256
// Bug: the index is threadIdx.x alone, without the block's offset, so every
// block writes elements 0 to 255 and the rest stay zero.

extern "C" __global__ void vectorAdd(const float *__restrict__ a,
                                     const float *__restrict__ b,
                                     float *__restrict__ c,
                                     int n)
{
    const int i = threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
