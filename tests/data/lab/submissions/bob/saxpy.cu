// bob: forgot a semicolon
__global__ void saxpy(int n, float alpha, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x
    if (i < n) y[i] = alpha * x[i] + y[i];
}
