// One of many small steps: adds one to every element.
extern "C" __global__ void addOne(int *x, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
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
