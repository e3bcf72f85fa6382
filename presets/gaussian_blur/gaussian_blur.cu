// Gaussian blur: a 5 x 5 convolution of a gray float image.
//
// One thread per output pixel adds the 25 pixels around it, each times its
// weight. The weights are the binomial 1 4 6 4 1 (a close cousin of a
// Gaussian with sigma 1) divided by 16, in each direction; they live in
// __constant__ memory, initialised here in the source, which every thread of
// a warp reads at the same address in one broadcast. At the edges the
// coordinates are clamped (the border pixel repeats).

__constant__ float weights[5] = {1.0f / 16, 4.0f / 16, 6.0f / 16, 4.0f / 16, 1.0f / 16};

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
