// Trusted reference for gaussian_blur: the same clamped 5 x 5 binomial
// filter, weights written out and the sum taken in double.

__global__ void blur_reference(const float *img, float *out, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    const double w[5] = {1, 4, 6, 4, 1};
    double sum = 0.0;
    for (int dy = -2; dy <= 2; ++dy) {
        const int yy = min(max(y + dy, 0), height - 1);
        for (int dx = -2; dx <= 2; ++dx) {
            const int xx = min(max(x + dx, 0), width - 1);
            sum += w[dy + 2] * w[dx + 2] * img[yy * width + xx];
        }
    }
    out[y * width + x] = float(sum / 256.0);
}
