// kpg-expect: fail "v = a + steps" first 4095
// The bounds guard is off by one: the last element is never updated.
extern "C" __global__ void addOne(int *x, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - 1) {
        x[i] += 1;
    }
}

extern "C" __global__ void copyIn(const int *a, int *x, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = a[i];
    }
}
