// The trusted convolution: one thread per pixel, straight from the
// definition, zero outside the image. It reads the same __constant__ filter
// (the buffer "taps" fills c_Kernel in this module too).
#define KERNEL_RADIUS 8

__constant__ float c_Kernel[2 * KERNEL_RADIUS + 1];

__global__ void rowsReference(float *dst, const float *src, int w, int h)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) {
        return;
    }
    float sum = 0;
    for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++) {
        const int k = x + j;
        sum += c_Kernel[KERNEL_RADIUS - j] * (k >= 0 && k < w ? src[y * w + k] : 0.0f);
    }
    dst[y * w + x] = sum;
}

__global__ void columnsReference(float *dst, const float *src, int w, int h)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) {
        return;
    }
    float sum = 0;
    for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++) {
        const int k = y + j;
        sum += c_Kernel[KERNEL_RADIUS - j] * (k >= 0 && k < h ? src[k * w + x] : 0.0f);
    }
    dst[y * w + x] = sum;
}
