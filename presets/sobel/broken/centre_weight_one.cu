// kpg-expect: fail "out matches the reference" first 0
// Bug: gx weighs the centre row 1 instead of 2 (a box filter, not Sobel), so
// horizontal gradients come out 3/4 of their size, from the first pixel on.

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

    const float gx = (tr + r + br) - (tl + l + bl);
    const float gy = (bl + 2.0f * b + br) - (tl + 2.0f * t + tr);
    out[y * width + x] = sqrtf(gx * gx + gy * gy);
}
