// Trusted reference for sobel: the same clamped 3 x 3 filters as explicit
// weight tables, in double.

__global__ void sobel_reference(const float *img, float *out, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    const double kx[3][3] = {{-1, 0, 1}, {-2, 0, 2}, {-1, 0, 1}};
    const double ky[3][3] = {{-1, -2, -1}, {0, 0, 0}, {1, 2, 1}};
    double gx = 0.0, gy = 0.0;
    for (int dy = -1; dy <= 1; ++dy) {
        const int yy = min(max(y + dy, 0), height - 1);
        for (int dx = -1; dx <= 1; ++dx) {
            const int xx = min(max(x + dx, 0), width - 1);
            const double p = img[yy * width + xx];
            gx += kx[dy + 1][dx + 1] * p;
            gy += ky[dy + 1][dx + 1] * p;
        }
    }
    out[y * width + x] = float(sqrt(gx * gx + gy * gy));
}
