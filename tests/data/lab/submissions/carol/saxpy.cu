// carol: the loop never advances, so the kernel never ends
__global__ void saxpy(int n, float alpha, const float *x, float *y)
{
    volatile float *vy = y;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 0) {
        vy[i] = alpha * x[i] + vy[i];
    }
}
