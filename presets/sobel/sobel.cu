// Sobel edge detection on a gray float image.
//
// Two 3 x 3 filters estimate the horizontal and vertical derivatives:
//   gx = [-1 0 1; -2 0 2; -1 0 1]   (brightness rising to the right)
//   gy = [-1 -2 -1; 0 0 0; 1 2 1]   (brightness rising downwards)
// and the edge strength is their length sqrt(gx^2 + gy^2). One thread per
// pixel; coordinates are clamped at the border.

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
    const float gy = (bl + 2.0f * b + br) - (tl + 2.0f * t + tr);
    out[y * width + x] = sqrtf(gx * gx + gy * gy);
}
