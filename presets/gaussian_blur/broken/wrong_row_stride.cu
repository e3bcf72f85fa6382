// kpg-expect: fail "out matches the reference" first 0
// Bug: the rows below are addressed with height as the row length instead of
// width. Every index stays inside the image (height < width), but row 1 of
// the neighbourhood is read from the middle of row 0, from the first pixel on.

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
            sum += weights[dy + 2] * weights[dx + 2] * img[yy * height + xx];
        }
    }
    out[y * width + x] = sum;
}
