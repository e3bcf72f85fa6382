// kpg-expect: fail "out matches the reference" first any
// Samples at (u, v) instead of (u + 0.5, v + 0.5): the image turns about its
// corner, not its centre, so with wrap addressing it comes out shifted by half.

__global__ void rotateImage(float *out, int width, int height, float angle, cudaTextureObject_t image)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    const float px = (float)x - (float)width / 2;
    const float py = (float)y - (float)height / 2;
    const float c = cosf(angle);
    const float s = sinf(angle);
    const float u = (px * c - py * s) / (float)width;
    const float v = (py * c + px * s) / (float)height;
    out[y * width + x] = tex2D<float>(image, u, v);
}
