// carol: writes far past the end of c
__global__ void vectorAdd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i + (1 << 30)] = a[i] + b[i];
}
