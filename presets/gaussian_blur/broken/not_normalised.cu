// kpg-expect: fail "out matches the reference" first 0
// Bug: the weights are not divided by 16, so they add up to 256 instead of 1
// and every output pixel is 256 times too bright.

__constant__ float weights[5] = {1.0f, 4.0f, 6.0f, 4.0f, 1.0f};

__global__ void gaussian_blur(const float *img, float *out, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    float sum = 0.0f;
    for (int dy = -2; dy <= 2; ++dy) {
        const int yy = min(max(y + dy, 0), height - 1);
        for (int dx = -2; dx <= 2; ++dx) {
            const int xx = min(max(x + dx, 0), width - 1);
            sum += weights[dy + 2] * weights[dx + 2] * img[yy * width + xx];
        }
    }
    out[y * width + x] = sum;
}
