// kpg-expect: fail "out matches the reference" first 0
// Bug: gy is computed with gx's filter (a copy-paste slip), so the magnitude
// is sqrt(2) |gx|. At pixel 0 the gradient is horizontal (gy = 0), so it is
// already sqrt(2) times too large there.

__device__ float pixel(const float *img, int x, int y, int width, int height)
{
    x = min(max(x, 0), width - 1);
    y = min(max(y, 0), height - 1);
    return img[y * width + x];
}

__global__ void sobel(const float *img, float *out, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    const float tl = pixel(img, x - 1, y - 1, width, height);
    const float t = pixel(img, x, y - 1, width, height);
    const float tr = pixel(img, x + 1, y - 1, width, height);
    const float l = pixel(img, x - 1, y, width, height);
    const float r = pixel(img, x + 1, y, width, height);
    const float bl = pixel(img, x - 1, y + 1, width, height);
    const float b = pixel(img, x, y + 1, width, height);
    const float br = pixel(img, x + 1, y + 1, width, height);

    const float gx = (tr + 2.0f * r + br) - (tl + 2.0f * l + bl);
    const float gy = (tr + 2.0f * r + br) - (tl + 2.0f * l + bl);
    out[y * width + x] = sqrtf(gx * gx + gy * gy);
}
