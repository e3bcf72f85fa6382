// bob: off by one in the bounds guard, the last element is never written
__global__ void vectorAdd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - 1) c[i] = a[i] + b[i];
}
