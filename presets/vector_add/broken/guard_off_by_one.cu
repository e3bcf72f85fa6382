// kpg-expect: fail "c = a + b" first 1048575
// Bug: the guard is off by one (i < n - 1), so the last element is never
// written and keeps its initial zero.

extern "C" __global__ void vectorAdd(const float *__restrict__ a,
                                     const float *__restrict__ b,
                                     float *__restrict__ c,
                                     int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - 1) {
        c[i] = a[i] + b[i];
    }
}
